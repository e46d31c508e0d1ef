-- kreach.ops.conv.direct: the CUDA of the direct convolution (the oracle at f64, and the
-- baseline of convolutions with at most 4 output channels a group), forward and transposed.
local M = {}

M.SOURCE = [==[
/* The direct convolution, the oracle at f64 and the baseline of convolutions with few output
 * channels a group. rows = N * Co/CO * OD * OH rows of OW outputs, each of CO channels of one
 * group (cob blocks of CO a group); blockIdx.x = row group * w_tiles + column tile; a thread
 * computes V outputs of a row, TX apart, for its CO channels. A transposed convolution gathers:
 * output o sums the taps kk whose (o + p - kk*dil) / s is a whole input position. */
template <typename T, bool TRANS, int V, int CO>
__global__ void conv_direct(const T *__restrict__ x, const T *__restrict__ w,
                            const T *__restrict__ bias, T *__restrict__ y, i64 rows, int w_tiles,
                            int C, int D, int H, int W, int Co, int OD, int OH, int OW,
                            int Cin_g, int Cout_g, int cob, bool has_bias,
                            int k1, int k2, int k3, int s1, int s2, int s3,
                            int p1, int p2, int p3, int e1, int e2, int e3) {
  typedef typename Acc<T>::type A;
  const int TX = blockDim.x;
  const unsigned wt = blockIdx.x % (unsigned)w_tiles, rg = blockIdx.x / (unsigned)w_tiles;
  const i64 r = (i64)rg * blockDim.y + threadIdx.y;
  if (r >= rows) return;
  const int G = Co / Cout_g;
  u64 q = (u64)r;
  const int oh = (int)(q % (u64)OH); q /= (u64)OH;
  const int od = (int)(q % (u64)OD); q /= (u64)OD;
  const int cb = (int)(q % (u64)(G * cob));
  const i64 n = (i64)(q / (u64)(G * cob));
  const int g = cb / cob, co0 = (cb % cob) * CO;
  const i64 DHW = (i64)D * H * W;
  const i64 KK = (i64)k1 * k2 * k3;
  const T *xg = x + (n * C + (i64)g * Cin_g) * DHW;
  const int ow0 = (int)wt * TX * V + threadIdx.x;
  A acc[CO][V];
#pragma unroll
  for (int u = 0; u < CO; u++)
#pragma unroll
    for (int v = 0; v < V; v++) acc[u][v] = (A)0;
  for (int ci = 0; ci < Cin_g; ci++) {
    const T *xc = xg + (i64)ci * DHW;
    for (int a = 0; a < k1; a++) {
      int id;
      if (TRANS) {
        const int t = od + p1 - a * e1;
        if (t < 0 || t % s1) continue;
        id = t / s1;
      } else {
        id = od * s1 - p1 + a * e1;
      }
      if ((unsigned)id >= (unsigned)D) continue;
      for (int b = 0; b < k2; b++) {
        int ih;
        if (TRANS) {
          const int t = oh + p2 - b * e2;
          if (t < 0 || t % s2) continue;
          ih = t / s2;
        } else {
          ih = oh * s2 - p2 + b * e2;
        }
        if ((unsigned)ih >= (unsigned)H) continue;
        const T *xr = xc + ((i64)id * H + ih) * W;
        for (int c = 0; c < k3; c++) {
          const i64 tap = ((i64)a * k2 + b) * k3 + c;
          A wv[CO];
#pragma unroll
          for (int u = 0; u < CO; u++) {
            const int co = co0 + u;
            const i64 wi = TRANS ? (((i64)g * Cin_g + ci) * Cout_g + co) * KK + tap
                                 : (((i64)g * Cout_g + co) * Cin_g + ci) * KK + tap;
            wv[u] = co < Cout_g ? ld(w[wi]) : (A)0;
          }
#pragma unroll
          for (int v = 0; v < V; v++) {
            const int ow = ow0 + v * TX;
            int iw;
            bool ok;
            if (TRANS) {
              const int t = ow + p3 - c * e3;
              ok = ow < OW && t >= 0 && t % s3 == 0;
              iw = t / s3;
              ok = ok && iw < W;
            } else {
              iw = ow * s3 - p3 + c * e3;
              ok = ow < OW && (unsigned)iw < (unsigned)W;
            }
            if (ok) {
              const A xv = ld(xr[iw]);
#pragma unroll
              for (int u = 0; u < CO; u++) acc[u][v] += xv * wv[u];
            }
          }
        }
      }
    }
  }
#pragma unroll
  for (int u = 0; u < CO; u++) {
    const int co = co0 + u;
    if (co >= Cout_g) continue;
    const int cg = g * Cout_g + co;
    const A bv = has_bias ? ld(bias[cg]) : (A)0;
    T *yr = y + (((n * Co + cg) * OD + od) * (i64)OH + oh) * OW;
#pragma unroll
    for (int v = 0; v < V; v++) {
      const int ow = ow0 + v * TX;
      if (ow < OW) yr[ow] = st<T>(acc[u][v] + bv);
    }
  }
}
]==]

return M
