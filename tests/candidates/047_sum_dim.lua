-- A correct candidate for KernelBench level-1 problem 47 (torch.sum over dim 1, keepdim). x is
-- viewed as [outer, R, inner] around the reduced dimension (found from the output's shape, so
-- reduce_dim = 0, 1 or 2 all work). A block of 32 x 8 threads owns 32 consecutive output
-- columns: threadIdx.x runs along the contiguous inner dimension (coalesced loads), threadIdx.y
-- splits the reduced dimension, and the 8 partial sums are added in shared memory in a fixed
-- order (deterministic). Column tiles are grid-strided, so any size fits the grid.
return {
  name = "sum_dim_coalesced",
  source = [[
#define TX 32
#define TY 8

extern "C" __global__ void __launch_bounds__(TX * TY)
sum_mid(const float *__restrict__ x, float *__restrict__ y, long long outer, long long R, long long inner) {
  __shared__ float part[TY][TX + 1];
  const long long tiles_per_outer = (inner + TX - 1) / TX;
  const long long tiles = outer * tiles_per_outer;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long o = t / tiles_per_outer;
    const long long j = (t % tiles_per_outer) * TX + threadIdx.x;
    float acc = 0.f;
    if (j < inner) {
      const float *p = x + o * R * inner + j;
      for (long long r = threadIdx.y; r < R; r += TY) acc += p[r * inner];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && j < inner) {
      float s = 0.f;
      #pragma unroll
      for (int q = 0; q < TY; ++q) s += part[q][threadIdx.x];
      y[o * inner + j] = s;
    }
    __syncthreads();  // part is reused by the next tile
  }
}
]],
  forward = function(k, x, y)
    -- the reduced dimension: the first one the keepdim output has as 1 and x does not; none
    -- (x is 1 there too) makes the sum a copy, R = 1
    local d = 0
    for i = 1, x:dim() do
      if y:size(i) ~= x:size(i) then d = i; break end
    end
    local outer, R, inner = 1, 1, 1
    if d == 0 then
      inner = x:numel()
    else
      for i = 1, d - 1 do outer = outer * x:size(i) end
      R = x:size(d)
      for i = d + 1, x:dim() do inner = inner * x:size(i) end
    end
    local tiles = outer * ((inner + 31) // 32)
    if tiles == 0 then return end
    k.sum_mid{ grid = math.min(tiles, 0x7fffffff), block = { 32, 8, 1 } }(x, y, outer, R, inner)
  end,
}
