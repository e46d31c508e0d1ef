-- Adversarial: tries to reach the file system from forward (io is not in the sandbox).
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y)
    local f = io.open("/etc/passwd")
    k.noop{ grid = 1, block = 1 }(y)
  end,
}
