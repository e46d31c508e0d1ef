-- Adversarial: a forward that never returns (and tries to hide the step limit).
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y)
    local n = 0
    while true do
      n = n + 1
    end
  end,
}
