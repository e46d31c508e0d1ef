-- An example candidate for DLRM-Bench problem 12 (keyed jagged sparse features): a block per
-- feature instead of one block for all. The first launch sums each feature's lengths; the
-- second gives each feature's block its base (the sum of the earlier features' totals), lets it
-- scan its own lengths into the offsets and turn its own ids into rows of the table-batched
-- buffer, knowing its table without a search. The tables' rows and first rows are the kernel's
-- arguments (26 of each). Integer arithmetic: exact.
local F = 26
local targs, tfill = {}, {}
for t = 0, F - 1 do
  targs[#targs + 1] = ("long long r%d"):format(t)
  tfill[#tfill + 1] = ("R[%d] = r%d;"):format(t, t)
end
for t = 0, F - 1 do
  targs[#targs + 1] = ("long long f%d"):format(t)
  tfill[#tfill + 1] = ("FIRST[%d] = f%d;"):format(t, t)
end

-- the tables, as the problem defines them (dlrm.py's MLPerf cardinalities capped at 10M)
local FULL = { 39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346, 10, 2208,
               11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36 }
local ROWS, FIRST = {}, {}
local acc = 0
for t, n in ipairs(FULL) do
  ROWS[t] = math.min(n, 10000000)
  FIRST[t] = acc
  acc = acc + ROWS[t]
end

return {
  name = "preprocess_per_feature",
  source = ([[
#define F %d
#define T 1024
extern "C" __global__ void __launch_bounds__(T) feature_totals(const long long *__restrict__ lengths,
    long long *__restrict__ totals, long long B) {
  __shared__ long long part[T / 32];
  const long long *l = lengths + (long long)blockIdx.x * B;
  long long s = 0;
  for (long long i = threadIdx.x; i < B; i += T) s += l[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = part[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) totals[blockIdx.x] = s;
  }
}
extern "C" __global__ void __launch_bounds__(T) feature_pass(const long long *__restrict__ lengths,
    const long long *__restrict__ ids, const long long *__restrict__ totals, long long *__restrict__ offsets,
    long long *__restrict__ linear, long long B, %s) {
  __shared__ long long R[F], FIRST[F], chunk_tot[T];
  __shared__ long long base_s;
  const int t = blockIdx.x;
  if (threadIdx.x == 0) {
    %s
    long long b = 0;
    for (int k = 0; k < t; k++) b += totals[k];
    base_s = b;
    if (t == 0) offsets[0] = 0;
  }
  __syncthreads();
  const long long base = base_s;
  /* this feature's B lengths: a chunk a thread, the chunk totals scanned in shared memory */
  const long long *l = lengths + (long long)t * B;
  const long long chunk = (B + T - 1) / T, lo = (long long)threadIdx.x * chunk, hi = lo + chunk < B ? lo + chunk : B;
  long long s = 0;
  for (long long i = lo; i < hi; i++) s += l[i];
  chunk_tot[threadIdx.x] = s;
  __syncthreads();
  for (int o = 1; o < T; o <<= 1) {
    const long long v = threadIdx.x >= (unsigned)o ? chunk_tot[threadIdx.x - o] : 0;
    __syncthreads();
    chunk_tot[threadIdx.x] += v;
    __syncthreads();
  }
  long long run = base + (threadIdx.x == 0 ? 0 : chunk_tot[threadIdx.x - 1]);
  for (long long i = lo; i < hi; i++) {
    run += l[i];
    offsets[(long long)t * B + i + 1] = run;
  }
  /* this feature's ids: [base, base + total) */
  const long long r = R[t], f = FIRST[t], end = base + totals[t];
  for (long long j = base + threadIdx.x; j < end; j += T) {
    long long m = ids[j] %% r;
    if (m < 0) m += r;
    linear[j] = m + f;
  }
}
]]):format(F, table.concat(targs, ", "), table.concat(tfill, " ")),
  forward = function(k, lengths, ids, linear, offsets)
    local B = lengths:size(2)
    assert(lengths:size(1) == F, "this example is for 26 features")
    local totals = k:scratch({ F }, "i64")
    k.feature_totals{ grid = F, block = 1024 }(lengths, totals, B)
    local a = { lengths, ids, totals, offsets, linear, B }
    for t = 1, F do a[#a + 1] = ROWS[t] end
    for t = 1, F do a[#a + 1] = FIRST[t] end
    k.feature_pass{ grid = F, block = 1024 }(table.unpack(a))
  end,
}
