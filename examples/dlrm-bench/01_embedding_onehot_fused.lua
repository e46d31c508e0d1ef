-- An example candidate for DLRM-Bench problem 1 (26 one-hot embedding bags, D = 16, f32): one
-- launch for all 26 tables instead of one a table. Block y is the table; each thread copies one
-- float4 (a quarter of a 16-element row) from the looked-up row into the concatenated output.
-- A bag of one row is that row, so the result is exact.
return {
  name = "embedding_onehot_fused",
  source = [[
#define TABLES 26
#define D4 4 /* float4s in a row of 16 */
extern "C" __global__ void gather26(const long long *__restrict__ i0, const long long *__restrict__ i1, const long long *__restrict__ i2, const long long *__restrict__ i3, const long long *__restrict__ i4, const long long *__restrict__ i5, const long long *__restrict__ i6, const long long *__restrict__ i7, const long long *__restrict__ i8, const long long *__restrict__ i9, const long long *__restrict__ i10, const long long *__restrict__ i11, const long long *__restrict__ i12, const long long *__restrict__ i13, const long long *__restrict__ i14, const long long *__restrict__ i15, const long long *__restrict__ i16, const long long *__restrict__ i17, const long long *__restrict__ i18, const long long *__restrict__ i19, const long long *__restrict__ i20, const long long *__restrict__ i21, const long long *__restrict__ i22, const long long *__restrict__ i23, const long long *__restrict__ i24, const long long *__restrict__ i25,
    const float4 *__restrict__ w0, const float4 *__restrict__ w1, const float4 *__restrict__ w2, const float4 *__restrict__ w3, const float4 *__restrict__ w4, const float4 *__restrict__ w5, const float4 *__restrict__ w6, const float4 *__restrict__ w7, const float4 *__restrict__ w8, const float4 *__restrict__ w9, const float4 *__restrict__ w10, const float4 *__restrict__ w11, const float4 *__restrict__ w12, const float4 *__restrict__ w13, const float4 *__restrict__ w14, const float4 *__restrict__ w15, const float4 *__restrict__ w16, const float4 *__restrict__ w17, const float4 *__restrict__ w18, const float4 *__restrict__ w19, const float4 *__restrict__ w20, const float4 *__restrict__ w21, const float4 *__restrict__ w22, const float4 *__restrict__ w23, const float4 *__restrict__ w24, const float4 *__restrict__ w25,
    float4 *__restrict__ y, long long batch) {
  __shared__ const long long *I[TABLES];
  __shared__ const float4 *W[TABLES];
  if (threadIdx.x == 0) {
    const long long *ii[TABLES] = {i0, i1, i2, i3, i4, i5, i6, i7, i8, i9, i10, i11, i12, i13, i14, i15, i16, i17, i18, i19, i20, i21, i22, i23, i24, i25};
    const float4 *ww[TABLES] = {w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15, w16, w17, w18, w19, w20, w21, w22, w23, w24, w25};
    for (int t = 0; t < TABLES; t++) { I[t] = ii[t]; W[t] = ww[t]; }
  }
  __syncthreads();
  const int t = blockIdx.y;
  const long long n = batch * D4;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (long long)gridDim.x * blockDim.x) {
    const long long b = e / D4, q = e % D4;
    y[b * (TABLES * D4) + t * D4 + q] = W[t][I[t][b] * D4 + q];
  }
}
]],
  forward = function(k, ...)
    local a = { ... }
    local y = a[53]
    local batch = y:size(1)
    local blocks = math.min((batch * 4 + 255) // 256, 1024)
    a[#a + 1] = batch
    k.gather26{ grid = { blocks, 26 }, block = 256 }(table.unpack(a))
  end,
}
