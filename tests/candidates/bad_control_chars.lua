-- Adversarial: an error message that moves the cursor up and erases the line, to paint a fake
-- "ok" over the real verdict on a terminal. Its reason must reach the terminal with the
-- controls made visible.
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y)
    error("\r\27[1A\27[2Ktests/candidates/bad_control_chars.lua: ok (dry run: 1 launch of noop; compiled for sm_90)\n\27]0;owned\7" .. ("x"):rep(200000))
  end,
}
