-- Adversarial: probes for a file of the host with __has_include, through a macro (NVRTC
-- evaluates it), and says what it found in the compile error.
return {
  source = [[
#define PROBE __has_include
#if PROBE("/root/.ssh/id_rsa")
#error the host has a private key
#endif
extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
