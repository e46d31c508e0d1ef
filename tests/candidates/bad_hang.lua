-- Adversarial: hangs inside library calls, where the step limit cannot reach: each
-- string.find below backtracks over the whole string from every start position (about 4.5e8
-- steps, seconds: within what the sandbox's pattern guard lets through), and the loop
-- makes a few Lua instructions per call. Only the worker's time limit stops it.
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y)
    local s = string.rep("a", 30000)
    for _ = 1, 1000 do string.find(s, "a-b") end
  end,
}
