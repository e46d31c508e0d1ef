-- Adversarial: doubles a string forty times (a terabyte), in few enough Lua instructions that
-- the step limit does not see it. The worker's memory limit ends it within seconds, as a
-- verdict that names the limit.
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y)
    local s = "kreach"
    for _ = 1, 40 do s = s .. s end
    k.noop{ grid = 1, block = 1 }(y)
  end,
}
