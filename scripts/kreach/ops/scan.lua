-- kreach.ops.scan: prefix sums and products along the last dimension (every leading dimension
-- is a row): cumsum, cumprod, the reversed cumsum (cumsum of the flipped row, flipped back),
-- the exclusive cumsum and the masked cumsum (cumsum of x * mask).
--
-- One block scans one row in tiles of 4 packs (16 bytes each) per thread. A thread's pack is a
-- contiguous chunk, scanned serially; the 32 pack totals of a warp are scanned with shuffles;
-- the 4 x 8 warp-segment totals of a tile are then one more warp scan, read from shared memory
-- by every warp; a carry links the tiles of a row. Each element is read and written once with
-- 16-byte accesses, and the accumulation depth is the pack size plus two 5-level trees plus the
-- number of tiles (8 for a 32768-element fp32 row), not the row length, so fp32 error stays
-- small where a serial running sum's grows with the row. (Products gain nothing from the
-- order: every multiplication's rounding reaches the result, so cumprod's error grows like
-- sqrt(n) whatever the order, as PyTorch's does.) One block a row suits many long rows (the
-- suites' 32768 x 32768); a few rows would leave SMs idle. Loading the next tile while scanning
-- the current one measured 2% faster in f32 and 15% slower in bf16 on the H200, so it is not done.
local tensor = require "kreach.core.tensor"

local SRC = [==[
enum { SCAN_SUM, SCAN_PROD };
#define SCAN_THREADS 256
#define SCAN_PACKS 4 /* packs a thread holds per tile; SCAN_PACKS * warps == 32 segments */

template <int OP, typename A> __device__ __forceinline__ A scan_id() {
  return OP == SCAN_SUM ? (A)0 : (A)1;
}
template <int OP, typename A> __device__ __forceinline__ A scan_op(A a, A b) {
  return OP == SCAN_SUM ? a + b : a * b;
}
/* inclusive scan over the lanes of a warp (Hillis-Steele, 5 levels) */
template <int OP, typename A> __device__ __forceinline__ A warp_scan(A v, int lane) {
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    A u = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v = scan_op<OP>(u, v);
  }
  return v;
}

template <int N> struct alignas(N) Bytes { unsigned char v[N]; };

/* y[r, :] = scan of x[r, :] (times mask[r, :] when MASKED; bool, one byte each) over rows x
 * cols. REVERSE scans from the end of the row; EXCLUSIVE writes the scan of the elements
 * before each one. VEC: cols is a multiple of the pack size and the rows are 16-byte aligned. */
template <typename T, int OP, bool REVERSE, bool EXCLUSIVE, bool MASKED, bool VEC>
__global__ void __launch_bounds__(SCAN_THREADS)
scan_rows(const T *__restrict__ x, const void *__restrict__ mask_v, T *__restrict__ y, i64 rows,
          i64 cols) {
  typedef typename Acc<T>::type A;
  const int N = VEC ? Pack<T>::N : 1;
  const int P = SCAN_PACKS, WARPS = SCAN_THREADS / 32;
  __shared__ A seg_total[2][SCAN_PACKS * (SCAN_THREADS / 32)];
  const unsigned char *mask = (const unsigned char *)mask_v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const i64 npk = cols / N;
  const A id = scan_id<OP, A>();
  int buf = 0;
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
    const unsigned char *mr = mask + (MASKED ? row * cols : 0);
    A carry = id;
    for (i64 t0 = 0; t0 < npk; t0 += (i64)P * SCAN_THREADS) {
      A v[P][N], ex_lane[P];
      /* load: pack q of the tile in scan order is physical pack p of the row */
#pragma unroll
      for (int k = 0; k < P; k++) {
        const i64 q = t0 + k * SCAN_THREADS + threadIdx.x;
        const i64 p = REVERSE ? npk - 1 - q : q;
        T raw[N];
        unsigned char mk[N];
        if (q < npk) {
          if (VEC) {
            Pack<T> pk = *reinterpret_cast<const Pack<T> *>(xr + p * N);
#pragma unroll
            for (int e = 0; e < N; e++) raw[e] = pk.v[e];
            if (MASKED) {
              Bytes<N> b = *reinterpret_cast<const Bytes<N> *>(mr + p * N);
#pragma unroll
              for (int e = 0; e < N; e++) mk[e] = b.v[e];
            }
          } else {
            raw[0] = xr[p];
            if (MASKED) mk[0] = mr[p];
          }
#pragma unroll
          for (int e = 0; e < N; e++) {
            const int src = REVERSE ? N - 1 - e : e;
            A a = ld(raw[src]);
            /* x * mask as PyTorch computes it: a masked NaN or inf still gives NaN */
            if (MASKED) a = a * (mk[src] ? (A)1 : (A)0);
            v[k][e] = a;
          }
        } else {
#pragma unroll
          for (int e = 0; e < N; e++) v[k][e] = id;
        }
      }
      /* each pack serially, then the packs of a warp */
#pragma unroll
      for (int k = 0; k < P; k++) {
        A run = id;
#pragma unroll
        for (int e = 0; e < N; e++) {
          const A next = scan_op<OP>(run, v[k][e]);
          v[k][e] = EXCLUSIVE ? run : next;
          run = next;
        }
        const A inc = warp_scan<OP>(run, lane);
        const A ex = __shfl_up_sync(0xffffffffu, inc, 1);
        ex_lane[k] = lane == 0 ? id : ex;
        if (lane == 31) seg_total[buf][k * WARPS + warp] = inc;
      }
      __syncthreads();
      /* the 32 segment totals of the tile, in scan order (segment k * WARPS + warp); the other
       * buffer is written next, so one barrier a tile suffices */
      const A seg = warp_scan<OP>(seg_total[buf][lane], lane);
      const A tile_total = __shfl_sync(0xffffffffu, seg, 31);
#pragma unroll
      for (int k = 0; k < P; k++) {
        const int s = k * WARPS + warp;
        const A before = __shfl_sync(0xffffffffu, seg, (s + 31) & 31);
        const A pre = scan_op<OP>(carry, scan_op<OP>(s == 0 ? id : before, ex_lane[k]));
#pragma unroll
        for (int e = 0; e < N; e++) v[k][e] = scan_op<OP>(pre, v[k][e]);
      }
      carry = scan_op<OP>(carry, tile_total);
      buf ^= 1;
#pragma unroll
      for (int k = 0; k < P; k++) {
        const i64 q = t0 + k * SCAN_THREADS + threadIdx.x;
        if (q >= npk) continue;
        const i64 p = REVERSE ? npk - 1 - q : q;
        if (VEC) {
          Pack<T> pk;
#pragma unroll
          for (int e = 0; e < N; e++) pk.v[REVERSE ? N - 1 - e : e] = st<T>(v[k][e]);
          *reinterpret_cast<Pack<T> *>(yr + p * N) = pk;
        } else {
          yr[p] = st<T>(v[k][0]);
        }
      }
    }
  }
}
]==]

local THREADS = 256
local SUM, PROD = 0, 1
-- the caps a test may lower (kreach.ops.with_limits): blocks of one launch
local LIMITS = { grid_max = 0x7fffffff }

-- the operators' kernels: op code, reverse, exclusive, masked
local KINDS = {
  cumsum = { SUM, false, false, false },
  cumprod = { PROD, false, false, false },
  cumsum_reverse = { SUM, true, false, false },
  cumsum_exclusive = { SUM, false, true, false },
  masked_cumsum = { SUM, false, false, true },
}
local ORDER = { "cumsum", "cumprod", "cumsum_reverse", "cumsum_exclusive", "masked_cumsum" }

local function b(v) return v and "true" or "false" end

local function kernel_name(T, var, vec)
  return ("scan_rows<%s, %d, %s, %s, %s, %s>"):format(T, var[1], b(var[2]), b(var[3]), b(var[4]),
    b(vec))
end

local function instantiate(T)
  local inst = {}
  for _, name in ipairs(ORDER) do
    for _, vec in ipairs({ true, false }) do inst[#inst + 1] = kernel_name(T, KINDS[name], vec) end
  end
  return inst
end

local function install(lib, K)
  local function scan(op, x, mask, y)
    K.check_float(op, x, "x")
    if x:dim() < 1 then K.fail(op, "x is a scalar, at least one dimension is needed") end
    K.check_same(op, x, y, "x", "y")
    if mask ~= nil then
      K.check_tensor(op, mask, "mask")
      K.check_shape(op, mask, x.shape, "mask")
      K.check_dtype(op, mask, "bool", "mask")
    end
    if not K.writes(y) then return y end
    local cols = x:size(-1)
    if cols == 0 or x:numel() == 0 then return y end
    local rows = x:numel() // cols
    local per = 16 // tensor.dtype_size(x.dtype)
    local vec = cols % per == 0 and K.aligned(x, 16) and K.aligned(y, 16)
      and (mask == nil or K.aligned(mask, 16))
    local T = K.ctype[x.dtype]
    local k = K.program("scan", SRC, x.dtype, instantiate)[kernel_name(T, KINDS[op], vec)]
    -- one block a row; rows beyond the grid are looped over
    local grid = math.min(rows, LIMITS.grid_max)
    K.variant("scan", x.dtype, op .. (vec and ".packs" or ".scalar"))
    -- a tile is SCAN_PACKS packs (elements without VEC) of each of the THREADS threads
    if cols // (vec and per or 1) > 4 * THREADS then K.variant("scan", x.dtype, op .. ".tiles") end
    if grid < rows then K.variant("scan", x.dtype, "rows_loop") end
    k{ grid = grid, block = THREADS }(x, mask or x, y, rows, cols)
    return y
  end

  -- y = torch.cumsum(x, -1); y may be x
  function lib.cumsum(x, y) return scan("cumsum", x, nil, y) end
  -- y = torch.cumprod(x, -1); y may be x
  function lib.cumprod(x, y) return scan("cumprod", x, nil, y) end
  -- y = torch.cumsum(x.flip(-1), -1).flip(-1): y[j] is the sum of x[j:]; y may be x
  function lib.cumsum_reverse(x, y) return scan("cumsum_reverse", x, nil, y) end
  -- y[j] = sum of x[:j] (y[0] = 0); the same shape as x; y may be x
  function lib.cumsum_exclusive(x, y) return scan("cumsum_exclusive", x, nil, y) end
  -- y = torch.cumsum(x * mask, -1) for a bool mask of x's shape; y may be x
  function lib.masked_cumsum(x, mask, y)
    if mask == nil then K.fail("masked_cumsum", "mask is nil, a bool tensor is needed") end
    return scan("masked_cumsum", x, mask, y)
  end
end

-- the size-selected paths (kreach.ops' header): each operator's kernel (a template of its own)
-- with 16-byte packs, element by element, and over more than one tile of a row
local VARIANTS = {}
for _, name in ipairs(ORDER) do
  VARIANTS[#VARIANTS + 1] = { name = name .. ".packs", when = name .. " with rows that are whole packs (16 bytes)" }
  VARIANTS[#VARIANTS + 1] = { name = name .. ".scalar", when = name .. " with rows that are not a multiple of the pack: element by element" }
  VARIANTS[#VARIANTS + 1] = { name = name .. ".tiles", when = name .. " with a row longer than a tile (4 * 256 packs or elements): a carry across tiles" }
end
VARIANTS[#VARIANTS + 1] = { name = "rows_loop", when = "more rows than one launch's blocks (limit grid_max): a block scans several rows" }

return { install = install, variants = VARIANTS, limits = LIMITS,
         sources = { { name = "scan", source = SRC, instantiate = instantiate } } }
