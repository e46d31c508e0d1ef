-- Adversarial: includes a file whose name a macro computes, and spells the directive with a
-- digraph and a line splice so that a scan for "#include" does not see it.
return {
  source = [[
#define INC "/etc/pass" "wd"
#define STR(x) #x
%:inc\
lude INC
extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
