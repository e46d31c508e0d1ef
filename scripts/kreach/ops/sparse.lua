-- kreach.ops.sparse: the preprocessing of a recommender's sparse features, as a keyed jagged
-- tensor (torchrec's KeyedJaggedTensor, feature-major) arrives from the data loader:
--   lengths_to_offsets: the exclusive cumulative sum of the bags' lengths, with the total last
--                       (CSR offsets), in 64-bit integers;
--   linearize_ids:      each raw id taken modulo its feature's table rows, plus the table's first
--                       row in the one buffer that holds every table (table-batched embeddings).
--
-- lengths_to_offsets is one block of 1024 threads: each thread sums a contiguous chunk, the
-- chunk totals are scanned in shared memory, and each thread writes its chunk's offsets. Integer
-- sums are exact in any order. linearize_ids finds an id's feature by a binary search of the
-- features' first offsets (the offsets of bag t * B) and takes its table's rows and first row
-- from the kernel's arguments (at most 28 features).
local SRC = [==[
#define SP_SCAN_THREADS 1024
#define SP_THREADS 256
#define SP_MAXF 28

/* offsets[0] = 0, offsets[i + 1] = lengths[0] + ... + lengths[i], for i < n */
template <typename T>
__global__ void __launch_bounds__(SP_SCAN_THREADS)
lengths_to_offsets(const i64 *__restrict__ lengths, i64 *__restrict__ offsets, i64 n) {
  __shared__ i64 tot[SP_SCAN_THREADS];
  const i64 chunk = (n + SP_SCAN_THREADS - 1) / SP_SCAN_THREADS;
  const i64 lo = (i64)threadIdx.x * chunk, hi = lo + chunk < n ? lo + chunk : n;
  i64 s = 0;
  for (i64 i = lo; i < hi; i++) s += lengths[i];
  tot[threadIdx.x] = s;
  __syncthreads();
  /* inclusive scan of the chunk totals (Hillis-Steele over shared memory) */
  for (int o = 1; o < SP_SCAN_THREADS; o <<= 1) {
    const i64 v = threadIdx.x >= (unsigned)o ? tot[threadIdx.x - o] : 0;
    __syncthreads();
    tot[threadIdx.x] += v;
    __syncthreads();
  }
  i64 run = threadIdx.x == 0 ? 0 : tot[threadIdx.x - 1];
  if (threadIdx.x == 0) offsets[0] = 0;
  for (i64 i = lo; i < hi; i++) {
    run += lengths[i];
    offsets[i + 1] = run;
  }
}

struct SpTables { i64 rows[SP_MAXF], first[SP_MAXF]; };

/* out[j] = ids[j] mod rows[t] + first[t] for the feature t whose bags hold position j: feature t's
 * positions are [offsets[t * B], offsets[(t + 1) * B]). */
template <typename T>
__global__ void __launch_bounds__(SP_THREADS)
linearize_ids(const i64 *__restrict__ ids, const i64 *__restrict__ offsets, i64 *__restrict__ out, i64 n,
              int F, i64 B, SP_ARGS) {
  __shared__ SpTables tb;
  __shared__ i64 start[SP_MAXF + 1];
  if (threadIdx.x == 0) {
    SP_FILL
  }
  for (int t = threadIdx.x; t <= F; t += SP_THREADS) start[t] = offsets[(i64)t * B];
  __syncthreads();
  for (i64 j = (i64)blockIdx.x * SP_THREADS + threadIdx.x; j < n; j += (i64)gridDim.x * SP_THREADS) {
    int lo = 0, hi = F - 1; /* the last t with start[t] <= j */
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (start[mid] <= j) lo = mid; else hi = mid - 1;
    }
    const i64 v = ids[j], r = tb.rows[lo];
    i64 m = v % r;
    if (m < 0) m += r;
    out[j] = m + tb.first[lo];
  }
}
]==]

local MAXF = 28 -- with the 6 other arguments, under the launcher's 64
-- the rows and first rows of up to MAXF tables, as scalar arguments (a launch takes tensors and
-- numbers), gathered into shared memory by the block's first thread
local args, fill = {}, {}
for t = 0, MAXF - 1 do args[#args + 1] = ("i64 r%d"):format(t) end
for t = 0, MAXF - 1 do args[#args + 1] = ("i64 f%d"):format(t) end
for t = 0, MAXF - 1 do fill[#fill + 1] = ("tb.rows[%d] = r%d; tb.first[%d] = f%d;"):format(t, t, t, t) end
SRC = SRC:gsub("SP_ARGS", table.concat(args, ", ")):gsub("SP_FILL", table.concat(fill, " "))

local M = {}
M.SOURCE = SRC
M.MAXF = MAXF
-- the caps a test may lower (kreach.ops.with_limits): blocks of linearize_ids' launch
M.limits = { grid_max = 1 << 20 }
-- the size-selected paths (kreach.ops' header)
M.variants = {
  { name = "offsets", when = "lengths_to_offsets over at most 1024 lengths: one a thread" },
  { name = "offsets.chunks", when = "lengths_to_offsets over more than 1024 lengths: a chunk of several a thread" },
  { name = "linearize", when = "linearize_ids: a thread an id" },
  { name = "linearize.grid_loop", when = "linearize_ids over more ids than one launch's blocks (limit grid_max)" },
}

local function instantiate(T)
  return { ("lengths_to_offsets<%s>"):format(T), ("linearize_ids<%s>"):format(T) }
end

local function install(lib, K)
  -- lengths_to_offsets(lengths, offsets): offsets (i64, numel + 1) = 0 and the running sums of
  -- lengths (i64, any shape, read in order).
  function lib.lengths_to_offsets(lengths, offsets)
    local op = "lengths_to_offsets"
    K.check_tensor(op, lengths, "lengths")
    K.check_dtype(op, lengths, "i64", "lengths")
    K.check_tensor(op, offsets, "offsets")
    K.check_dtype(op, offsets, "i64", "offsets")
    local n = lengths:numel()
    K.check_shape(op, offsets, { n + 1 }, "offsets")
    if not K.writes(offsets) then return offsets end
    local k = K.program("sparse", SRC, "f64", instantiate)["lengths_to_offsets<double>"]
    K.variant("sparse", "i64", n > 1024 and "offsets.chunks" or "offsets")
    k{ grid = 1, block = 1024 }(lengths, offsets, n)
    return offsets
  end

  -- linearize_ids(ids, offsets, rows, first, out): out[j] = ids[j] mod rows[t] + first[t] (a
  -- non-negative remainder) for the feature t holding position j, when offsets (i64, F * B + 1)
  -- are the CSR offsets of F features of B bags each, feature-major. rows and first: Lua lists
  -- of F integers (F <= 28), the tables' rows and their first rows in one buffer.
  function lib.linearize_ids(ids, offsets, rows, first, out)
    local op = "linearize_ids"
    for _, c in ipairs({ { ids, "ids" }, { offsets, "offsets" }, { out, "out" } }) do
      K.check_tensor(op, c[1], c[2])
      K.check_dtype(op, c[1], "i64", c[2])
    end
    if type(rows) ~= "table" or type(first) ~= "table" or #rows ~= #first or #rows < 1 or #rows > MAXF then
      K.fail(op, "rows and first are lists of 1 to %d integers, one per feature", MAXF)
    end
    for t = 1, #rows do
      if math.type(rows[t]) ~= "integer" or rows[t] < 1 or math.type(first[t]) ~= "integer" then
        K.fail(op, "feature %d: rows %s and first %s, whole numbers with rows >= 1", t, tostring(rows[t]), tostring(first[t]))
      end
    end
    local F, n = #rows, ids:numel()
    local nb = offsets:numel() - 1
    if nb < 0 or nb % F ~= 0 then K.fail(op, "offsets has %d entries, not F * B + 1 for %d features", nb + 1, F) end
    K.check_shape(op, out, ids.shape, "out")
    if not K.writes(out) then return out end
    if n == 0 then return out end
    local a = { ids, offsets, out, n, F, nb // F }
    for t = 1, MAXF do a[#a + 1] = rows[t] or 1 end
    for t = 1, MAXF do a[#a + 1] = first[t] or 0 end
    local k = K.program("sparse", SRC, "f64", instantiate)["linearize_ids<double>"]
    local want = K.blocks(n, 256, 1)
    K.variant("sparse", "i64", "linearize")
    if want > M.limits.grid_max then K.variant("sparse", "i64", "linearize.grid_loop") end
    k{ grid = math.min(want, M.limits.grid_max), block = 256 }(table.unpack(a))
    return out
  end
end

M.install = install
M.sources = { { name = "sparse", source = SRC, instantiate = instantiate } }
return M
