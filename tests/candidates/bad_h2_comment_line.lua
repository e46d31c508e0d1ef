-- Adversarial (issue 33, H2): an #include after a block comment that spans lines. The C
-- standard reads the comment as one space, so `int zz; */ #include ...` holds no directive,
-- but NVRTC 13.0 starts a new line after such a comment and obeys the #include. Refused by the
-- source check, which reads such a source as NVRTC does too.
return {
  source = [[
int zz; /*
*/ #include "/etc/passwd"
extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
