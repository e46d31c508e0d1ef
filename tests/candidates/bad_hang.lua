-- Adversarial: hangs inside a library call, where the step limit cannot reach (a Lua pattern
-- that backtracks for ever over a long string). Only the worker's time limit stops it.
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y)
    local s = string.rep("a", 100000)
    string.find(s, ".-.-.-.-.-.-.-.-.-.-b")
  end,
}
