-- kreach.ops.conv.gemm: the CUDA of the implicit GEMM (the baseline at f32, bf16 and f16):
-- the tensor-core products (MMA, in their own string so that a CPU emulation, experiments/conv,
-- can put its own definition in their place), the geometry of a (group, phase) as the kernels
-- see it (COMMON), the repacking of the weights into GEMM order (PACK), the SIMT GEMM (SIMT) and
-- the tensor-core one (TENSOR). kreach.ops.conv puts them together with the direct kernel.
local M = {}

-- tensor-core products
M.MMA = [==[
template <typename T> struct Mma;
template <> struct Mma<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float *c, const unsigned *a, const unsigned *b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <> struct Mma<__half> {
  static __device__ __forceinline__ void run(float *c, const unsigned *a, const unsigned *b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
]==]


M.COMMON = [==[
/* Every rank runs as 3-D: unit leading sizes, kernels and strides for missing dimensions.
 * One spatial dimension of one phase, as the GEMM kernels see it: GEMM row q (0 <= q < Q) is
 * output o = ph + q*os; its tap j (0 <= j < nt) reads input i = q*a + b + j*c and weight tap
 * kk = kk0 + j*kstep. Forward: one phase, a = s, b = -p, c = dil, os = 1. Transposed: s
 * phases; output o meets the taps kk with (o + p - kk*dil) a multiple of s, at input
 * i = (o + p - kk*dil) / s; for o = ph + q*s they are kk = kk0 + j*kstep (kstep = s/gcd(s,
 * dil)), at i = q + c0 - j*(dil/gcd). */
struct CDim { int a, b, c, nt, kk0, kstep, os, ph; };

__device__ __forceinline__ int conv_gcd(int a, int b) {
  while (b) { const int t = a % b; a = b; b = t; }
  return a;
}

__device__ __forceinline__ CDim conv_dim(bool trans, int ph, int k, int s, int p, int dil) {
  CDim d;
  if (!trans) {
    d.a = s; d.b = -p; d.c = dil; d.nt = k; d.kk0 = 0; d.kstep = 1; d.os = 1; d.ph = 0;
    return d;
  }
  const int g = conv_gcd(s, dil);
  d.a = 1; d.os = s; d.ph = ph; d.kstep = s / g;
  const int r = (ph + p) % s;
  int kk0 = -1;
  for (int kk = 0; kk < d.kstep && kk < k; kk++)
    if ((int)(((i64)kk * dil) % s) == r) { kk0 = kk; break; }
  if (kk0 < 0) {
    d.nt = 0; d.kk0 = 0; d.b = 0; d.c = 0;
  } else {
    d.kk0 = kk0;
    d.nt = (k - 1 - kk0) / d.kstep + 1;
    d.b = (int)(((i64)ph + p - (i64)kk0 * dil) / s);   /* exact */
    d.c = -(dil / g);
  }
  return d;
}

/* the GEMM rows of a phase along one dimension */
__device__ __forceinline__ int conv_q(bool trans, int ph, int O, int s) {
  return !trans ? O : (ph < O ? (O - ph + s - 1) / s : 0);
}

/* What a block needs of its (group, phase) z = g * nph + phase. */
struct ConvZ {
  CDim d1, d2, d3;
  int Q1, Q2, Q3, g, Kp;
  i64 Mp;
};

__device__ __forceinline__ ConvZ conv_z(int z, int nph, bool trans, int Nb, int Cin_g, int OD,
                                        int OH, int OW, int k1, int k2, int k3, int s1, int s2,
                                        int s3, int p1, int p2, int p3, int e1, int e2, int e3) {
  ConvZ t;
  const int phase = z % nph;
  t.g = z / nph;
  const int ph3 = phase % s3, ph2 = (phase / s3) % s2, ph1 = phase / (s3 * s2);
  t.d1 = conv_dim(trans, ph1, k1, s1, p1, e1);
  t.d2 = conv_dim(trans, ph2, k2, s2, p2, e2);
  t.d3 = conv_dim(trans, ph3, k3, s3, p3, e3);
  t.Q1 = conv_q(trans, ph1, OD, s1);
  t.Q2 = conv_q(trans, ph2, OH, s2);
  t.Q3 = conv_q(trans, ph3, OW, s3);
  t.Mp = (i64)Nb * t.Q1 * t.Q2 * t.Q3;
  t.Kp = Cin_g * t.d1.nt * t.d2.nt * t.d3.nt;
  return t;
}

/* GEMM row m -> (n, q1, q2, q3); 32-bit division when the rows fit (narrow) */
__device__ __forceinline__ void conv_row(i64 m, bool narrow, const ConvZ &t, i64 &n, int &q1,
                                         int &q2, int &q3) {
  if (narrow) {
    unsigned r = (unsigned)m;
    q3 = (int)(r % (unsigned)t.Q3); r /= (unsigned)t.Q3;
    q2 = (int)(r % (unsigned)t.Q2); r /= (unsigned)t.Q2;
    q1 = (int)(r % (unsigned)t.Q1); n = (i64)(r / (unsigned)t.Q1);
  } else {
    u64 r = (u64)m;
    q3 = (int)(r % (u64)t.Q3); r /= (u64)t.Q3;
    q2 = (int)(r % (u64)t.Q2); r /= (u64)t.Q2;
    q1 = (int)(r % (u64)t.Q1); n = (i64)(r / (u64)t.Q1);
  }
}

/* the offset in y of GEMM row m, less the channel's */
__device__ __forceinline__ i64 conv_yrow(i64 m, bool narrow, const ConvZ &t, int Co, int OH,
                                         int OW, i64 Otot) {
  i64 n;
  int q1, q2, q3;
  conv_row(m, narrow, t, n, q1, q2, q3);
  const int o1 = t.d1.ph + q1 * t.d1.os, o2 = t.d2.ph + q2 * t.d2.os, o3 = t.d3.ph + q3 * t.d3.os;
  return n * Co * Otot + ((i64)o1 * OH + o2) * OW + o3;
}

/* One GEMM reduction index k = tap * Cin_g + ci: the tap's input offsets t1..t3 and the offset
 * of (ci, tap) from a row's origin in x; ok = 0 past the phase's last k (reads as zero). */
struct KInfo { i64 off; int t1, t2, t3, ok; };

__device__ __forceinline__ void conv_kinfo(KInfo &f, int k, const ConvZ &t, int Cin_g, i64 DHW,
                                           int H, int W) {
  if (k >= t.Kp) {
    f.off = 0; f.t1 = 0; f.t2 = 0; f.t3 = 0; f.ok = 0;
    return;
  }
  const int tap = k / Cin_g, ci = k - tap * Cin_g;
  const int j3 = tap % t.d3.nt, r = tap / t.d3.nt;
  const int j2 = r % t.d2.nt, j1 = r / t.d2.nt;
  f.t1 = j1 * t.d1.c; f.t2 = j2 * t.d2.c; f.t3 = j3 * t.d3.c;
  f.off = (i64)ci * DHW + ((i64)f.t1 * H + f.t2) * W + f.t3;
  f.ok = 1;
}

]==]

M.PACK = [==[
/* Weights in GEMM order: for z = (group, phase), k < Kmax (zero past the phase's Kp) and
 * co < Cout_g, wp[(z*Kmax + k)*Cout_g + co] (KMAJOR, for conv_gemm) or
 * wp[(z*Cout_g + co)*Kmax + k] (for conv_mma). w is (Co, Cin_g, k1, k2, k3), or
 * (C, Cout_g, k1, k2, k3) when transposed. */
template <typename T, bool KMAJOR>
__global__ void conv_pack(const T *__restrict__ w, T *__restrict__ wp, i64 total, int Cin_g,
                          int Cout_g, int Kmax, int nph, bool trans, int k1, int k2, int k3,
                          int s1, int s2, int s3, int p1, int p2, int p3, int e1, int e2, int e3) {
  const i64 KK = (i64)k1 * k2 * k3;
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (i64)gridDim.x * blockDim.x) {
    int co, k;
    i64 z;
    if (KMAJOR) {
      co = (int)(e % Cout_g);
      const i64 r = e / Cout_g;
      k = (int)(r % Kmax);
      z = r / Kmax;
    } else {
      k = (int)(e % Kmax);
      const i64 r = e / Kmax;
      co = (int)(r % Cout_g);
      z = r / Cout_g;
    }
    const int phase = (int)(z % nph);
    const i64 g = z / nph;
    const int ph3 = phase % s3, ph2 = (phase / s3) % s2, ph1 = phase / (s3 * s2);
    const CDim d1 = conv_dim(trans, ph1, k1, s1, p1, e1);
    const CDim d2 = conv_dim(trans, ph2, k2, s2, p2, e2);
    const CDim d3 = conv_dim(trans, ph3, k3, s3, p3, e3);
    const int ntap = d1.nt * d2.nt * d3.nt;
    const int tap = k / Cin_g, ci = k - tap * Cin_g;
    T v = st<T>(0.0f);
    if (tap < ntap) {
      const int j3 = tap % d3.nt, r = tap / d3.nt;
      const int j2 = r % d2.nt, j1 = r / d2.nt;
      const int kk1 = d1.kk0 + j1 * d1.kstep, kk2 = d2.kk0 + j2 * d2.kstep,
                kk3 = d3.kk0 + j3 * d3.kstep;
      const i64 kl = ((i64)kk1 * k2 + kk2) * k3 + kk3;
      const i64 src = trans ? ((g * Cin_g + ci) * Cout_g + co) * KK + kl
                            : ((g * Cout_g + co) * Cin_g + ci) * KK + kl;
      v = w[src];
    }
    wp[e] = v;
  }
}

]==]

M.SIMT = [==[
/* The SIMT implicit GEMM (fp32 FMA): a block computes BM output positions x BN output
 * channels of one (group, phase) z, (BM/8) x (BN/TN) threads of 8 x TN each, over k tiles of 8
 * staged in shared memory (double-buffered, the next tile's loads in flight during the
 * products). The decoding of the next tiles' k (tap, channel) sits in shared memory, made by 8
 * threads. MINB: the blocks a multiprocessor should hold (register budget). */
template <typename T, int BM, int BN, int TN, int MINB>
__global__ void __launch_bounds__((BM / 8) * (BN / TN), MINB)
conv_gemm(const T *__restrict__ x, const T *__restrict__ wp, const T *__restrict__ bias,
          T *__restrict__ y, int Nb, int C, int D, int H, int W, int Co, int OD, int OH, int OW,
          int Cin_g, int Cout_g, int Kmax, int nph, int nz, bool trans, bool has_bias,
          int k1, int k2, int k3, int s1, int s2, int s3, int p1, int p2, int p3,
          int e1, int e2, int e3) {
  constexpr int BK = 8, TM = 8, MG = BM / TM, NT = MG * (BN / TN);
  static_assert(NT % BM == 0 && NT % BN == 0 && NT >= 64, "the loads' thread mapping");
  constexpr int AR = BK * BM / NT;               /* A elements a thread loads a tile */
  constexpr int BR = (BK * BN + NT - 1) / NT;    /* B elements a thread loads a tile */
  __shared__ __align__(16) float As[2][BK][BM];
  __shared__ __align__(16) float Bs[2][BK][BN];
  __shared__ KInfo info[2][BK];
  const int tid = threadIdx.x;
  const i64 DHW = (i64)D * H * W, Otot = (i64)OD * OH * OW;
  for (int z = blockIdx.z; z < nz; z += gridDim.z) {
    const ConvZ t = conv_z(z, nph, trans, Nb, Cin_g, OD, OH, OW, k1, k2, k3, s1, s2, s3,
                           p1, p2, p3, e1, e2, e3);
    const i64 m0 = (i64)blockIdx.x * BM;
    if (m0 >= t.Mp) continue; /* the whole block */
    const bool narrow = t.Mp <= 0xffffffffll;
    const int n0 = blockIdx.y * BN;
    const int ktiles = (t.Kp + BK - 1) / BK;

    /* the output position whose A column this thread loads */
    const int am = tid % BM, ar = tid / BM;
    bool mok;
    i64 xm;
    int ib1, ib2, ib3;
    {
      const i64 m = m0 + am;
      mok = m < t.Mp;
      i64 n;
      int q1, q2, q3;
      conv_row(mok ? m : 0, narrow, t, n, q1, q2, q3);
      ib1 = q1 * t.d1.a + t.d1.b; ib2 = q2 * t.d2.a + t.d2.b; ib3 = q3 * t.d3.a + t.d3.b;
      xm = (n * C + (i64)t.g * Cin_g) * DHW + ((i64)ib1 * H + ib2) * W + ib3;
    }
    const int bn = tid % BN, br = tid / BN;
    const bool bok = n0 + bn < Cout_g;
    const T *wz = wp + (i64)z * Kmax * Cout_g + n0 + bn;
    float ra[AR], rb[BR];

    auto gload = [&](int kt, const KInfo *inf) {
#pragma unroll
      for (int j = 0; j < AR; j++) {
        const KInfo &f = inf[ar + j * (NT / BM)];
        const int i1 = ib1 + f.t1, i2 = ib2 + f.t2, i3 = ib3 + f.t3;
        const bool ok = mok && f.ok && (unsigned)i1 < (unsigned)D && (unsigned)i2 < (unsigned)H &&
                        (unsigned)i3 < (unsigned)W;
        ra[j] = ok ? (float)ld(x[xm + f.off]) : 0.0f;
      }
#pragma unroll
      for (int j = 0; j < BR; j++) {
        const int r = br + j * (NT / BN);
        rb[j] = (r < BK && bok) ? (float)ld(wz[(i64)(kt * BK + r) * Cout_g]) : 0.0f;
      }
    };
    auto sstore = [&](int buf) {
#pragma unroll
      for (int j = 0; j < AR; j++) As[buf][ar + j * (NT / BM)][am] = ra[j];
#pragma unroll
      for (int j = 0; j < BR; j++) {
        const int r = br + j * (NT / BN);
        if (r < BK) Bs[buf][r][bn] = rb[j];
      }
    };

    if (tid < BK) conv_kinfo(info[0][tid], tid, t, Cin_g, DHW, H, W);
    __syncthreads();
    if (ktiles > 0) {
      gload(0, info[0]);
      sstore(0);
    }
    if (tid < BK) conv_kinfo(info[1][tid], BK + tid, t, Cin_g, DHW, H, W);
    __syncthreads();

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
      for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    const int tm = tid % MG, tn = tid / MG;
    for (int kt = 0; kt < ktiles; kt++) {
      const int cur = kt & 1;
      const bool more = kt + 1 < ktiles;
      if (more) gload(kt + 1, info[cur ^ 1]);
      if (tid < BK) conv_kinfo(info[cur][tid], (kt + 2) * BK + tid, t, Cin_g, DHW, H, W);
#pragma unroll
      for (int kk = 0; kk < BK; kk++) {
        float a[TM], b[TN];
        const float4 a0 = *reinterpret_cast<const float4 *>(&As[cur][kk][tm * 4]);
        const float4 a1 = *reinterpret_cast<const float4 *>(&As[cur][kk][BM / 2 + tm * 4]);
        a[0] = a0.x; a[1] = a0.y; a[2] = a0.z; a[3] = a0.w;
        a[4] = a1.x; a[5] = a1.y; a[6] = a1.z; a[7] = a1.w;
        if constexpr (TN == 8) {
          const float4 b0 = *reinterpret_cast<const float4 *>(&Bs[cur][kk][tn * 4]);
          const float4 b1 = *reinterpret_cast<const float4 *>(&Bs[cur][kk][BN / 2 + tn * 4]);
          b[0] = b0.x; b[1] = b0.y; b[2] = b0.z; b[3] = b0.w;
          b[4] = b1.x; b[5] = b1.y; b[6] = b1.z; b[7] = b1.w;
        } else if constexpr (TN == 4) {
          const float4 b0 = *reinterpret_cast<const float4 *>(&Bs[cur][kk][tn * 4]);
          b[0] = b0.x; b[1] = b0.y; b[2] = b0.z; b[3] = b0.w;
        } else {
          static_assert(TN == 2, "TN is 8, 4 or 2");
          const float2 b0 = *reinterpret_cast<const float2 *>(&Bs[cur][kk][tn * 2]);
          b[0] = b0.x; b[1] = b0.y;
        }
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
          for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
      if (more) sstore(cur ^ 1);
      __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; i++) {
      const i64 m = m0 + (i < 4 ? tm * 4 + i : BM / 2 + tm * 4 + i - 4);
      if (m >= t.Mp) continue;
      const i64 yo = conv_yrow(m, narrow, t, Co, OH, OW, Otot);
#pragma unroll
      for (int j = 0; j < TN; j++) {
        const int co = n0 + (TN == 8 ? (j < 4 ? tn * 4 + j : BN / 2 + tn * 4 + j - 4) : tn * TN + j);
        if (co >= Cout_g) continue;
        const int c = t.g * Cout_g + co;
        float v = acc[i][j];
        if (has_bias) v += (float)ld(bias[c]);
        y[yo + (i64)c * Otot] = st<T>(v);
      }
    }
  }
}

]==]

M.TENSOR = [==[
/* The tensor-core implicit GEMM for f16 and bf16: a block computes BM output positions x BN
 * output channels of one (group, phase), warps of WM x WN (2 threads a row of the tile: BM/16
 * warps), mma.sync m16n8k16 with fp32 accumulators, k tiles of 32 in shared memory (rows
 * padded by 8 elements: conflict-free fragment loads), double-buffered. The results go out
 * through shared memory, so that the stores run along output positions. */
template <typename T, int BM, int BN, int WM, int WN, int MINB>
__global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN), MINB)
conv_mma(const T *__restrict__ x, const T *__restrict__ wp, const T *__restrict__ bias,
         T *__restrict__ y, int Nb, int C, int D, int H, int W, int Co, int OD, int OH, int OW,
         int Cin_g, int Cout_g, int Kmax, int nph, int nz, bool trans, bool has_bias,
         int k1, int k2, int k3, int s1, int s2, int s3, int p1, int p2, int p3,
         int e1, int e2, int e3) {
  constexpr int BK = 32, PITCH = BK + 8, CP = BM + 8;
  constexpr int WGM = BM / WM, NT = 32 * WGM * (BN / WN);
  static_assert(NT == 2 * BM, "two threads load a row of A");
  constexpr int MT = WM / 16, NTL = WN / 8;
  constexpr int A_BYTES = 2 * BM * PITCH * 2, B_BYTES = 2 * BN * PITCH * 2;
  constexpr int C_BYTES = BN * CP * 2;
  constexpr int SMEM = A_BYTES + B_BYTES > C_BYTES ? A_BYTES + B_BYTES : C_BYTES;
  constexpr int BCH = (BN * (BK / 8) + NT - 1) / NT;  /* 16-byte chunks of B a thread loads */
  __shared__ __align__(16) unsigned char smem[SMEM];
  __shared__ KInfo info[2][BK];
  T (*As)[BM][PITCH] = reinterpret_cast<T (*)[BM][PITCH]>(smem);
  T (*Bs)[BN][PITCH] = reinterpret_cast<T (*)[BN][PITCH]>(smem + A_BYTES);
  T (*Cs)[CP] = reinterpret_cast<T (*)[CP]>(smem);
  const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
  const int gid = lane >> 2, tig = lane & 3;
  const int wm0 = (wid % WGM) * WM, wn0 = (wid / WGM) * WN;
  const i64 DHW = (i64)D * H * W, Otot = (i64)OD * OH * OW;
  for (int z = blockIdx.z; z < nz; z += gridDim.z) {
    const ConvZ t = conv_z(z, nph, trans, Nb, Cin_g, OD, OH, OW, k1, k2, k3, s1, s2, s3,
                           p1, p2, p3, e1, e2, e3);
    const i64 m0 = (i64)blockIdx.x * BM;
    if (m0 >= t.Mp) continue; /* the whole block */
    const bool narrow = t.Mp <= 0xffffffffll;
    const int n0 = blockIdx.y * BN;
    const int ktiles = (t.Kp + BK - 1) / BK;

    const int am = tid % BM, ah = tid / BM;  /* A: column am, k rows ah*16 .. ah*16 + 15 */
    bool mok;
    i64 xm;
    int ib1, ib2, ib3;
    {
      const i64 m = m0 + am;
      mok = m < t.Mp;
      i64 n;
      int q1, q2, q3;
      conv_row(mok ? m : 0, narrow, t, n, q1, q2, q3);
      ib1 = q1 * t.d1.a + t.d1.b; ib2 = q2 * t.d2.a + t.d2.b; ib3 = q3 * t.d3.a + t.d3.b;
      xm = (n * C + (i64)t.g * Cin_g) * DHW + ((i64)ib1 * H + ib2) * W + ib3;
    }
    const T *wz = wp + (i64)z * Cout_g * Kmax;
    const unsigned short *xb = reinterpret_cast<const unsigned short *>(x);
    unsigned ra[8];
    uint4 rb[BCH];

    auto gload = [&](int kt, const KInfo *inf) {
#pragma unroll
      for (int j = 0; j < 8; j++) ra[j] = 0u;
#pragma unroll
      for (int j = 0; j < 16; j++) {
        const KInfo &f = inf[ah * 16 + j];
        const int i1 = ib1 + f.t1, i2 = ib2 + f.t2, i3 = ib3 + f.t3;
        const bool ok = mok && f.ok && (unsigned)i1 < (unsigned)D && (unsigned)i2 < (unsigned)H &&
                        (unsigned)i3 < (unsigned)W;
        if (ok) ra[j >> 1] |= (unsigned)xb[xm + f.off] << (16 * (j & 1));
      }
#pragma unroll
      for (int j = 0; j < BCH; j++) {
        const int c = tid + j * NT, n = c >> 2, kq = c & 3;
        if (n < BN && n0 + n < Cout_g)
          rb[j] = *reinterpret_cast<const uint4 *>(wz + (i64)(n0 + n) * Kmax + kt * BK + kq * 8);
        else
          rb[j] = make_uint4(0u, 0u, 0u, 0u);
      }
    };
    auto sstore = [&](int buf) {
      *reinterpret_cast<uint4 *>(&As[buf][am][ah * 16]) = make_uint4(ra[0], ra[1], ra[2], ra[3]);
      *reinterpret_cast<uint4 *>(&As[buf][am][ah * 16 + 8]) = make_uint4(ra[4], ra[5], ra[6], ra[7]);
#pragma unroll
      for (int j = 0; j < BCH; j++) {
        const int c = tid + j * NT, n = c >> 2, kq = c & 3;
        if (n < BN) *reinterpret_cast<uint4 *>(&Bs[buf][n][kq * 8]) = rb[j];
      }
    };

    if (tid < BK) conv_kinfo(info[0][tid], tid, t, Cin_g, DHW, H, W);
    __syncthreads();
    if (ktiles > 0) {
      gload(0, info[0]);
      sstore(0);
    }
    if (tid < BK) conv_kinfo(info[1][tid], BK + tid, t, Cin_g, DHW, H, W);
    __syncthreads();

    float acc[MT][NTL][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int j = 0; j < NTL; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
    for (int kt = 0; kt < ktiles; kt++) {
      const int cur = kt & 1;
      const bool more = kt + 1 < ktiles;
      if (more) gload(kt + 1, info[cur ^ 1]);
      if (tid < BK) conv_kinfo(info[cur][tid], (kt + 2) * BK + tid, t, Cin_g, DHW, H, W);
#pragma unroll
      for (int ks = 0; ks < BK; ks += 16) {
        unsigned af[MT][4], bf[NTL][2];
#pragma unroll
        for (int i = 0; i < MT; i++) {
          const int r = wm0 + i * 16 + gid, c = ks + tig * 2;
          af[i][0] = *reinterpret_cast<const unsigned *>(&As[cur][r][c]);
          af[i][1] = *reinterpret_cast<const unsigned *>(&As[cur][r + 8][c]);
          af[i][2] = *reinterpret_cast<const unsigned *>(&As[cur][r][c + 8]);
          af[i][3] = *reinterpret_cast<const unsigned *>(&As[cur][r + 8][c + 8]);
        }
#pragma unroll
        for (int j = 0; j < NTL; j++) {
          const int n = wn0 + j * 8 + gid, c = ks + tig * 2;
          bf[j][0] = *reinterpret_cast<const unsigned *>(&Bs[cur][n][c]);
          bf[j][1] = *reinterpret_cast<const unsigned *>(&Bs[cur][n][c + 8]);
        }
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
          for (int j = 0; j < NTL; j++) Mma<T>::run(acc[i][j], af[i], bf[j]);
      }
      if (more) sstore(cur ^ 1);
      __syncthreads();
    }

    /* the tile, as T, through shared memory (free since the last barrier) */
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int j = 0; j < NTL; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
          const int ml = wm0 + i * 16 + gid + (e >= 2 ? 8 : 0);
          const int nl = wn0 + j * 8 + tig * 2 + (e & 1);
          float v = acc[i][j][e];
          if (has_bias && n0 + nl < Cout_g) v += (float)ld(bias[t.g * Cout_g + n0 + nl]);
          Cs[nl][ml] = st<T>(v);
        }
    __syncthreads();
    {
      const i64 m = m0 + am;
      if (m < t.Mp) {
        const i64 yo = conv_yrow(m, narrow, t, Co, OH, OW, Otot);
        for (int r = ah; r < BN; r += NT / BM) {
          const int co = n0 + r;
          if (co < Cout_g) y[yo + (i64)(t.g * Cout_g + co) * Otot] = Cs[r][am];
        }
      }
    }
    __syncthreads(); /* before the next z writes shared memory */
  }
}

]==]

return M
