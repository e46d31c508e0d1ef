-- kreach.emulate itself, on known answers: a block's threads as fibers meeting at __syncthreads
-- and at the warp shuffles (x86-64's register switch, and the ucontext path other machines take,
-- forced with EMU_UCONTEXT), threads that return before a barrier, the sequential mode of a source
-- without barriers, and the aborts: threads waiting at barriers that cannot complete, and a
-- barrier in a kernel run sequentially.
local emu = require "kreach.emulate"

local KERNELS = [[
/* per block: the sum of tid over the block through shared memory and a tree of barriers, and
   each warp's sum of its lanes through __shfl_xor_sync; thread t writes both at t */
__global__ void sums(long long *block_sum, long long *warp_sum) {
  __shared__ long long s[1024];
  const unsigned t = threadIdx.x, n = blockDim.x;
  s[t] = t + 1000 * blockIdx.x;
  __syncthreads();
  for (unsigned h = 1; h < n; h *= 2) {
    long long v = (t % (2 * h) == 0 && t + h < n) ? s[t + h] : 0;
    __syncthreads();
    s[t] += v;
    __syncthreads();
  }
  double w = (double)(t % 32);
  for (int m = 16; m > 0; m /= 2) w += __shfl_xor_sync(0xffffffffu, w, m);
  block_sum[blockIdx.x * n + t] = s[0];
  warp_sum[blockIdx.x * n + t] = (long long)w;
}
/* threads 0..k-1 meet at two barriers; the others have returned */
__global__ void early(int *out, unsigned k) {
  __shared__ int c;
  const unsigned t = threadIdx.x;
  if (t >= k) return;
  if (t == 0) c = 0;
  __syncthreads();
  atomicAdd(&c, 1);
  __syncthreads();
  out[t] = c;
}
/* lane 0 waits at a shuffle, the others at a block barrier: neither can complete */
__global__ void stuck(int *out) {
  if (threadIdx.x == 0) out[0] = (int)__shfl_xor_sync(0xffffffffu, 1.0, 1);
  else __syncthreads();
}
]]

local MAIN = [[
int main() {
  const unsigned nb = 3, nt = 96; /* 3 warps, the last block's sum crossing blocks' offsets */
  std::vector<long long> bs(nb * nt), ws(nb * nt);
  emu_launch({nb, 1, 1}, {nt, 1, 1}, [&] { sums(bs.data(), ws.data()); });
  for (unsigned b = 0; b < nb; b++) printf("block %u sum %lld warp %lld %lld\n", b, bs[b * nt + 5], ws[b * nt + 3], ws[b * nt + 70]);
  std::vector<int> e(64, -1);
  emu_launch({1, 1, 1}, {64, 1, 1}, [&] { early(e.data(), 40); });
  printf("early %d %d %d\n", e[0], e[39], e[40]);
  return 0;
}
]]

local function run(prefix)
  return emu.run({ prefix or "", emu.HEADER, KERNELS, emu.LAUNCH, MAIN })
end

describe("kreach.emulate", function()
  -- each block: sum of (t + 1000 b) for t < 96 = 4560 + 96000 b; each warp: 0 + ... + 31 = 496
  local want = "block 0 sum 4560 warp 496 496\nblock 1 sum 100560 warp 496 496\nblock 2 sum 196560 warp 496 496\nearly 40 40 -1\n"

  it("runs a block's threads as fibers through barriers, shuffles and early returns", function()
    local out, ok = run()
    assert.is_true(ok, out)
    assert.equals(want, out)
  end)

  it("gives the same on the ucontext path (machines other than x86-64)", function()
    local out, ok = run("#define EMU_UCONTEXT 1")
    assert.is_true(ok, out)
    assert.equals(want, out)
  end)

  it("aborts, naming the block, where threads wait at barriers that cannot complete", function()
    local out, ok = emu.run({ emu.HEADER, KERNELS, emu.LAUNCH,
      "int main() { std::vector<int> o(1); emu_launch({1, 1, 1}, {64, 1, 1}, [&] { stuck(o.data()); }); return 0; }" })
    assert.is_false(ok)
    assert.matches("kreach.emulate: block %(0, 0, 0%): 64 of its threads wait at barriers that cannot complete", out)
  end)

  it("runs a source without barriers one thread after another, and aborts at a barrier there", function()
    local src = [[
__global__ void iota2(int *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 2 * (blockIdx.x * blockDim.x + threadIdx.x); }
]]
    assert.equals("#define EMU_SEQUENTIAL 1", emu.sequential(src))
    assert.equals("", emu.sequential(KERNELS))
    local out, ok = emu.run({ emu.HEADER, emu.sequential(src), emu.LAUNCH, src, [[
int main() { std::vector<int> x(300); emu_launch({3, 1, 1}, {100, 1, 1}, [&] { iota2(x.data()); });
  long long s = 0; for (int v : x) s += v; printf("%lld %d\n", s, x[299]); return 0; }
]] })
    assert.is_true(ok, out)
    assert.equals("89700 598\n", out)
    out, ok = emu.run({ emu.HEADER, "#define EMU_SEQUENTIAL 1", emu.LAUNCH, KERNELS, [[
int main() { std::vector<int> e(64); emu_launch({1, 1, 1}, {64, 1, 1}, [&] { early(e.data(), 40); }); return 0; }
]] })
    assert.is_false(ok)
    assert.matches("kreach.emulate: __syncthreads in a kernel the emulation runs one thread at a time", out)
  end)
end)
