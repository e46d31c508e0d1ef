-- An example candidate for DLRM-Bench problem 7 (dot interaction, f32): one block a sample,
-- the 27 x 128 features staged in shared memory as float4, one warp a dot product (each lane
-- four float4 products, then a shuffle reduction), x copied through as float4.
return {
  name = "dot_interaction_warp",
  source = [[
#define F 27
#define D4 32 /* float4s in a row of 128 */
#define PAIRS (F * (F - 1) / 2)
extern "C" __global__ void __launch_bounds__(256) dot_warp(const float4 *__restrict__ x,
    const float4 *__restrict__ emb, float *__restrict__ out, long long batch) {
  __shared__ float4 t[F][D4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long ldo = 4 * D4 + PAIRS;
  for (long long b = blockIdx.x; b < batch; b += gridDim.x) {
    __syncthreads();
    for (int e = threadIdx.x; e < F * D4; e += blockDim.x) {
      const int f = e / D4, q = e % D4;
      const float4 v = f == 0 ? x[b * D4 + q] : emb[(b * (F - 1) + f - 1) * D4 + q];
      t[f][q] = v;
      if (f == 0) {
        float *o = out + b * ldo + 4 * q;
        o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
      }
    }
    __syncthreads();
    for (int p = warp; p < PAIRS; p += blockDim.x / 32) {
      int i = 1;
      while ((i + 1) * i / 2 <= p) i++;
      const int j = p - i * (i - 1) / 2;
      const float4 a = t[i][lane], c = t[j][lane];
      float s = a.x * c.x + a.y * c.y + a.z * c.z + a.w * c.w;
      for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
      if (lane == 0) out[b * ldo + 4 * D4 + p] = s;
    }
  }
}
]],
  forward = function(k, x, emb, out)
    local batch = x:size(1)
    assert(x:size(2) == 128 and emb:size(2) == 26, "this example is for 27 features of 128")
    k.dot_warp{ grid = math.min(batch, 132 * 8), block = 256 }(x, emb, out, batch)
  end,
}
