-- kreach.ops.conv: convolutions with PyTorch's semantics: conv(x, w, y, opts) is
-- nn.ConvNd's forward, conv_transpose(x, w, y, opts) nn.ConvTransposeNd's, in 1, 2 or 3
-- spatial dimensions, with stride, padding, dilation, groups, bias and output_padding.
--
-- f64 is the oracle: a direct convolution (conv_direct; the transposed one gathers: each
-- output sums the taps whose input position is whole), accumulating in fp64.
-- f32, bf16 and f16 are the baseline, an implicit GEMM per (group, phase) accumulating in fp32
-- (no TF32, no fast math): rows are output positions, columns output channels, and the
-- reduction runs over (kernel tap, input channel) pairs, gathered from x into shared memory
-- (zero where the window leaves the input). f32 multiplies with SIMT FMA (conv_gemm); bf16 and
-- f16 with tensor-core mma.sync m16n8k16 (conv_mma: products exact, sums in fp32).
-- A transposed convolution is computed as the gradient of the input, without atomics: the
-- outputs o = ph + q*s of one phase ph (per dimension) meet the kernel taps kk with
-- kk*dil = ph + p (mod s), an arithmetic progression, at input q + c0 - j*dstep, so each phase
-- is an ordinary strided-by-one convolution over its taps (phases without taps write the bias).
-- The weights are repacked per call into the GEMM's (group, phase, k, co) order (conv_pack).
-- Convolutions with at most 4 output channels per group (depthwise ones) run the direct kernel
-- at every dtype: the GEMM's column tile would be mostly idle, and they are memory-bound.
--
-- Which implementation runs is decided in one place, choose_backend(dtype): cuDNN where
-- kreach.cudnn finds it (the baseline PyTorch itself runs), else the kernels here, planned by
-- plan() below it; lib.conv_last says which ran.
local cudnn = require "kreach.cudnn"
local kinds = require "kreach.kinds"
local pool = require "kreach.ops.pool"

-- tensor-core products, in their own string so that a CPU emulation (experiments/conv) can
-- put its own definition in their place
local MMA = [==[
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

local BODY = [==[
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

local SRC = MMA .. BODY

local M = {}

-- ---- options and shapes ----

local NAMES = { "stride", "padding", "dilation", "groups", "bias", "output_padding", "algo" }
local KNOWN = {}
for _, k in ipairs(NAMES) do KNOWN[k] = true end
local ALGOS = { auto = true, gemm = true, mma = true, direct = true }
local LIMIT = 0x7fffffff

local function shape_str(s) return "{" .. table.concat(s, ", ") .. "}" end

local function show(v)
  if type(v) == "table" then
    local t = {}
    for i, e in ipairs(v) do t[i] = tostring(e) end
    return "{" .. table.concat(t, ", ") .. "}"
  end
  return type(v) == "string" and ("'" .. v .. "'") or tostring(v)
end

local function int_of(v)
  if math.type(v) == "integer" then return v end
  if math.type(v) == "float" then return math.tointeger(v) end
  return nil
end

-- an integer for every spatial dimension or a list of n; nil and a message otherwise
local function per_dim(v, n, what)
  local i = int_of(v)
  if i then
    local r = {}
    for d = 1, n do r[d] = i end
    return r
  end
  if type(v) ~= "table" or #v ~= n then
    return nil, ("%s is %s, expected an integer or a list of %d integers"):format(what, show(v), n)
  end
  local r = {}
  for d = 1, n do
    r[d] = int_of(v[d])
    if not r[d] then
      return nil, ("%s[%d] is %s, not an integer"):format(what, d, show(v[d]))
    end
  end
  return r
end

local function is_shape(s)
  if type(s) ~= "table" then return false end
  for i = 1, #s do if math.type(s[i]) ~= "integer" then return false end end
  return true
end

-- The geometry of a convolution of x (shape xs) by w (shape ws), checked as PyTorch checks it;
-- nil and a message (without the operator's name) when something is wrong. opts.bias is only
-- looked at for its presence here.
function M.resolve(xs, ws, opts, transposed)
  opts = opts or {}
  if type(opts) ~= "table" then return nil, ("options are %s, not a table"):format(type(opts)) end
  for k in pairs(opts) do
    if not KNOWN[k] then
      return nil, ("unknown option '%s' (known: %s)"):format(tostring(k), table.concat(NAMES, ", "))
    end
  end
  if not is_shape(xs) or not is_shape(ws) then return nil, "x and w need shapes (lists of integers)" end
  if #ws < 3 or #ws > 5 then
    return nil, ("w is %s: expected (%s, k1[, k2[, k3]]), 1 to 3 kernel dimensions"):format(
      shape_str(ws), transposed and "in_channels, out_channels/groups" or "out_channels, in_channels/groups")
  end
  local n = #ws - 2
  local batched
  if #xs == n + 2 then batched = true
  elseif #xs == n + 1 then batched = false
  else
    return nil, ("x is %s: expected %d (unbatched) or %d (batched) dimensions for the %d-D weight %s"):format(
      shape_str(xs), n + 1, n + 2, n, shape_str(ws))
  end
  local N = batched and xs[1] or 1
  local C = xs[batched and 2 or 1]
  local sp = {}
  for d = 1, n do sp[d] = xs[#xs - n + d] end
  if N < 0 then return nil, ("x is %s: a negative size"):format(shape_str(xs)) end
  if C < 1 then return nil, ("x is %s: no input channels"):format(shape_str(xs)) end
  for d = 1, n do
    if sp[d] < 1 then
      return nil, ("x is %s: expected a non-zero size along spatial dimension %d"):format(shape_str(xs), d)
    end
  end
  for i = 1, #ws do
    if ws[i] < 1 then return nil, ("w is %s: every size must be positive"):format(shape_str(ws)) end
  end
  local groups = int_of(opts.groups == nil and 1 or opts.groups)
  if not groups or groups < 1 then
    return nil, ("groups is %s, expected a positive integer"):format(show(opts.groups))
  end
  local Co, Cin_g, Cout_g
  if not transposed then
    Co, Cin_g = ws[1], ws[2]
    if Co % groups ~= 0 then
      return nil, ("w is %s: out_channels (%d) must be divisible by groups (%d)"):format(shape_str(ws), Co, groups)
    end
    if C ~= Cin_g * groups then
      return nil, ("Given groups=%d, weight of size %s, expected input %s to have %d channels, but got %d channels instead"):format(
        groups, shape_str(ws), shape_str(xs), Cin_g * groups, C)
    end
    Cout_g = Co // groups
  else
    if ws[1] ~= C then
      return nil, ("Given transposed=1, weight of size %s, expected input %s to have %d channels, but got %d channels instead"):format(
        shape_str(ws), shape_str(xs), ws[1], C)
    end
    if C % groups ~= 0 then
      return nil, ("x is %s: in_channels (%d) must be divisible by groups (%d)"):format(shape_str(xs), C, groups)
    end
    Cin_g, Cout_g = C // groups, ws[2]
    Co = Cout_g * groups
  end
  local k = {}
  for d = 1, n do k[d] = ws[2 + d] end

  local err
  local s, dil, pl, pr, op
  s, err = per_dim(opts.stride == nil and 1 or opts.stride, n, "stride")
  if not s then return nil, err end
  dil, err = per_dim(opts.dilation == nil and 1 or opts.dilation, n, "dilation")
  if not dil then return nil, err end
  for d = 1, n do
    if s[d] < 1 then return nil, ("stride should be greater than zero, got %s"):format(show(s)) end
    if dil[d] < 1 then return nil, ("dilation should be greater than zero, got %s"):format(show(dil)) end
  end
  local pad = opts.padding == nil and 0 or opts.padding
  if type(pad) == "string" then
    if transposed then
      return nil, ("padding is '%s': a transposed convolution takes integers"):format(pad)
    end
    pl, pr = {}, {}
    if pad == "valid" then
      for d = 1, n do pl[d], pr[d] = 0, 0 end
    elseif pad == "same" then
      for d = 1, n do
        if s[d] ~= 1 then return nil, "padding='same' is not supported for strided convolutions" end
        local total = dil[d] * (k[d] - 1)
        pl[d] = total // 2
        pr[d] = total - pl[d]
      end
    else
      return nil, ("padding is '%s', expected 'valid', 'same', an integer or a list of %d integers"):format(pad, n)
    end
  else
    pl, err = per_dim(pad, n, "padding")
    if not pl then return nil, err end
    for d = 1, n do
      if pl[d] < 0 then return nil, ("negative padding is not supported, got %s"):format(show(pl)) end
    end
    pr = pl
  end
  if transposed then
    op, err = per_dim(opts.output_padding == nil and 0 or opts.output_padding, n, "output_padding")
    if not op then return nil, err end
    for d = 1, n do
      if op[d] < 0 then return nil, ("negative output_padding is not supported, got %s"):format(show(op)) end
      if op[d] >= s[d] and op[d] >= dil[d] then
        return nil, ("output padding must be smaller than either stride or dilation, but got output_padding %d, stride %d, dilation %d along spatial dimension %d"):format(
          op[d], s[d], dil[d], d)
      end
    end
  elseif opts.output_padding ~= nil then
    return nil, "output_padding is an option of conv_transpose, not of conv"
  end
  local algo = opts.algo == nil and "auto" or opts.algo
  if not ALGOS[algo] then
    return nil, ("algo is %s, expected 'auto', 'gemm', 'mma' or 'direct'"):format(show(opts.algo))
  end

  local out = {}
  for d = 1, n do
    local span = dil[d] * (k[d] - 1) + 1
    if not transposed then
      if sp[d] + pl[d] + pr[d] < span then
        return nil, ("x is %s: along spatial dimension %d the padded input (%d) is smaller than the dilated kernel (%d)"):format(
          shape_str(xs), d, sp[d] + pl[d] + pr[d], span)
      end
      out[d] = M.out_len(sp[d], k[d], s[d], pl[d], dil[d], pr[d])
    else
      out[d] = M.transposed_out_len(sp[d], k[d], s[d], pl[d], dil[d], op[d])
      if out[d] < 1 then
        return nil, ("x is %s: the output size along spatial dimension %d would be %d (too small)"):format(
          shape_str(xs), d, out[d])
      end
    end
    -- the kernels index along a dimension with 32-bit integers (and a block's width past it)
    local reach = math.max(sp[d] + pl[d] + pr[d], out[d] + pl[d] + span) + 4096
    if reach > LIMIT then
      return nil, ("x is %s: sizes along spatial dimension %d near 2^31 are not supported"):format(shape_str(xs), d)
    end
  end
  if N > LIMIT or C > LIMIT or Co > LIMIT then
    return nil, ("x is %s: batch and channel counts beyond 2^31 are not supported"):format(shape_str(xs))
  end
  local yshape = batched and { N, Co } or { Co }
  for d = 1, n do yshape[#yshape + 1] = out[d] end
  return { n = n, batched = batched, N = N, C = C, Co = Co, groups = groups, Cin_g = Cin_g,
           Cout_g = Cout_g, spatial = sp, out = out, k = k, stride = s, pad = pl, pad_right = pr, dilation = dil,
           output_padding = op, transposed = transposed and true or false, algo = algo,
           yshape = yshape, xshape = xs, wshape = ws }
end

-- PyTorch's output extent along one dimension of extent d, for a kernel of extent k: of a
-- convolution, floor((d + pad + pad_right - dilation (k - 1) - 1) / stride) + 1 (pad_right:
-- pad unless given); of a transposed one, (d - 1) stride - 2 pad + dilation (k - 1) +
-- output_padding + 1. Problem files size their outputs with these (kreach.conv_out_len).
function M.out_len(d, k, stride, pad, dilation, pad_right)
  return (d + pad + (pad_right or pad) - dilation * (k - 1) - 1) // stride + 1
end
function M.transposed_out_len(d, k, stride, pad, dilation, output_padding)
  return (d - 1) * stride - 2 * pad + dilation * (k - 1) + output_padding + 1
end

-- The shape of y for x and w of these shapes (PyTorch's output shape); raises on what PyTorch
-- refuses. transposed: for conv_transpose.
function M.output_shape(xshape, wshape, opts, transposed)
  local g, err = M.resolve(xshape, wshape, opts, transposed)
  if not g then error((transposed and "conv_transpose: " or "conv: ") .. err, 2) end
  return g.yshape
end

-- The one place that says which implementation computes the baseline at a dtype: cuDNN where
-- kreach.cudnn finds it (f32 with TF32 off, bf16 and f16 with fp32 accumulation; the fastest
-- algorithm by cuDNN's heuristics), else the NVRTC kernels here. f64 is the oracle, always these
-- kernels. KREACH_CONV_BACKEND=nvrtc keeps the NVRTC kernels where cuDNN is there.
local CUDNN_DTYPES = kinds.set(kinds.DTYPES) -- every dtype a problem runs at
function M.choose_backend(dtype)
  if not CUDNN_DTYPES[dtype] or os.getenv("KREACH_CONV_BACKEND") == "nvrtc" then return "nvrtc" end
  return cudnn.available() and "cudnn" or "nvrtc"
end

local INT32_MAX = 2147483647

-- cuDNN's version as text, asked once (conv_last carries it on every call, timed ones too)
local version_text
local function cudnn_version()
  if not version_text then version_text = cudnn.info().version end
  return version_text
end

-- Runs one call through cuDNN: true and its algorithm, or false and why cuDNN does not take it
-- (then the NVRTC kernels do, and lib.conv_last says so). cuDNN's descriptors count elements
-- in 32 bits: a call whose x or y is larger runs as slices of the batch (as PyTorch's own cuDNN
-- path does), and one whose single sample or weight is larger goes to the NVRTC kernels. A shape
-- cuDNN refuses (its BAD_PARAM or NOT_SUPPORTED, before any work) does too; any other failure
-- is raised.
local function cudnn_run(g, transposed, x, w, y, bias)
  local per_x, per_y = x:numel() // g.N, y:numel() // g.N
  if w:numel() > INT32_MAX or per_x > INT32_MAX or per_y > INT32_MAX then
    return false, "a sample or the weight has more than 2^31 - 1 elements"
  end
  local chunk = math.min(g.N, math.max(1, INT32_MAX // math.max(per_x, per_y)))
  local o = { transposed = transposed, stride = g.stride, padding = g.pad, dilation = g.dilation,
              groups = g.groups, bias = bias, output_padding = transposed and g.output_padding or nil,
              select = M.cudnn_select(g, transposed, x.dtype) }
  local algo
  for s = 1, g.N, chunk do
    local n = math.min(chunk, g.N - s + 1)
    local xs, ys = x, y
    if n < g.N then xs, ys = x:narrow(1, s, n), y:narrow(1, s, n) end
    local ok, r = pcall(cudnn.conv, xs, w, ys, o)
    if not ok then
      local msg = tostring(r)
      if s == 1 and (msg:find("CUDNN_STATUS_BAD_PARAM", 1, true) or msg:find("CUDNN_STATUS_NOT_SUPPORTED", 1, true)) then
        return false, msg
      end
      error(r, 0)
    end
    algo = r
  end
  return true, algo
end

-- PyTorch eager does not call cuDNN for a depthwise convolution (not transposed, 1-D to 3-D, a
-- 1-D one viewed as 2-D; groups = input channels > 1, output channels a multiple of them) at f32 or bf16: aten's
-- _select_conv_backend sends it to its own CudaDepthwise2d/3d kernels (cuDNN takes depthwise
-- convolutions there only at f16, under conditions on the shape). There is then no engine of
-- PyTorch's to copy, and the first in cuDNN's heuristics' order can be far from PyTorch's
-- kernel (problem 83 at f32 on the H200: 4.4 times slower): the fastest engine, timed, runs.
function M.pytorch_depthwise_native(g, transposed, dtype)
  return not transposed and g.groups > 1 and g.groups == g.C
    and g.Co % g.C == 0 and dtype ~= "f16"
end

-- The engine selection for one cuDNN call: kreach.cudnn.selection() ("pytorch" unless
-- KREACH_CUDNN_SELECT says otherwise), except "fastest" where PyTorch runs its own kernel.
function M.cudnn_select(g, transposed, dtype)
  local sel = cudnn.selection()
  if sel == "pytorch" and M.pytorch_depthwise_native(g, transposed, dtype) then return "fastest" end
  return sel
end

-- Whether cuDNN can take this call as PyTorch states it (else the NVRTC kernels do): batched,
-- padding the same on both sides, no kernel forced by opts.algo.
local function cudnn_takes(g)
  if not g.batched or (g.algo and g.algo ~= "auto") then return false end
  for d = 1, g.n do if g.pad[d] ~= g.pad_right[d] then return false end end
  return true
end

-- ---- plans: the launches of one call ----

local THREADS = 256
-- The GEMMs' tile configurations that are compiled: conv_gemm { BM, BN, TN, MINB } (threads
-- (BM/8) x (BN/TN)), conv_mma { BM, BN, WM, WN, MINB } (threads 2 BM).
M.CONFIGS = {
  gemm = { { 256, 64, 8, 2 }, { 128, 32, 4, 1 }, { 128, 16, 2, 1 }, { 128, 128, 8, 1 } },
  mma = { { 128, 128, 64, 32, 2 }, { 64, 64, 32, 32, 1 }, { 64, 32, 32, 16, 1 },
          { 128, 16, 16, 16, 1 }, { 128, 128, 64, 32, 1 } },
}
-- Which configuration runs, by output channels a group: the first row whose minimum is at most
-- Cout_g. A table, so that experiments can try others (experiments/conv/time.lua --sweep).
-- Chosen on the H200 (2026-12-04) from a sweep of 10 SIMT and 8 tensor-core configurations
-- over problems 55, 63, 87 (128 output channels), 62 (64) and 71 (32): two blocks a
-- multiprocessor (a register budget of 128, a few spilled bytes) beat one block of larger
-- tiles, 256 x 64 by 1.1 to 1.3 times at f32 and 128 x 128 by 1.5 to 1.7 times at bf16.
M.TILES = {
  gemm = { { 33, { 256, 64, 8, 2 } }, { 17, { 128, 32, 4, 1 } }, { 1, { 128, 16, 2, 1 } } },
  mma = { { 65, { 128, 128, 64, 32, 2 } }, { 33, { 64, 64, 32, 32, 1 } },
          { 17, { 64, 32, 32, 16, 1 } }, { 1, { 128, 16, 16, 16, 1 } } },
}
local function kernel_name(algo, T, cfg)
  local fmt = algo == "gemm" and "conv_gemm<%s, %d, %d, %d, %d>" or "conv_mma<%s, %d, %d, %d, %d, %d>"
  return fmt:format(T, table.unpack(cfg))
end
local function threads_of(algo, cfg)
  if algo == "gemm" then return (cfg[1] // 8) * (cfg[2] // cfg[3]) end
  return 32 * (cfg[1] // cfg[3]) * (cfg[2] // cfg[4])
end
-- the caps a test may lower (kreach.ops.with_limits): conv_pack's blocks, and the grid's z
-- (a block loops over the (group, phase) pairs beyond it)
local LIMITS = { pack_grid_max = 8192, z_max = 65535 }
M.limits = LIMITS
local DIRECT_MAX_COUT = 4   -- output channels a group up to which the direct kernel runs
local VS, COS = { 1, 2, 4 }, { 1, 2, 4 }
local MMA_DTYPES = { f16 = true, bf16 = true }

-- Every kernel instantiation at a dtype (the C type T): f64 has the direct kernel only (the
-- oracle), f16 and bf16 also the tensor-core GEMM.
local function instantiate(T, dtype)
  local inst = {}
  for _, tr in ipairs({ "false", "true" }) do
    for _, v in ipairs(VS) do
      for _, co in ipairs(COS) do inst[#inst + 1] = ("conv_direct<%s, %s, %d, %d>"):format(T, tr, v, co) end
    end
  end
  if dtype == "f64" then return inst end
  inst[#inst + 1] = ("conv_pack<%s, true>"):format(T)
  for _, c in ipairs(M.CONFIGS.gemm) do inst[#inst + 1] = kernel_name("gemm", T, c) end
  if MMA_DTYPES[dtype] then
    inst[#inst + 1] = ("conv_pack<%s, false>"):format(T)
    for _, c in ipairs(M.CONFIGS.mma) do inst[#inst + 1] = kernel_name("mma", T, c) end
  end
  return inst
end
M.instantiate = instantiate
M.DTYPE_CTYPE = { f64 = "double", f32 = "float", f16 = "__half", bf16 = "__nv_bfloat16" }

-- The direct kernel's block width TX and outputs per thread V for rows of OW: as
-- kreach.ops.pool tiles its rows.
local direct_tile = pool.direct_tile

local function pad3(t, fill, n)
  local r = {}
  for i = 1, 3 - n do r[i] = fill end
  for i = 1, n do r[#r + 1] = t[i] end
  return r
end

-- Which kernel computes a call: "direct", "gemm" or "mma"; nil and a message when the asked-for
-- one cannot.
function M.algorithm(g, dtype)
  local a = g.algo
  if dtype == "f64" then
    if a ~= "auto" and a ~= "direct" then
      return nil, ("algo '%s' has no f64 kernel: f64 is the oracle, a direct convolution"):format(a)
    end
    return "direct"
  end
  if a == "mma" and not MMA_DTYPES[dtype] then
    return nil, ("algo 'mma' (tensor cores) is for f16 and bf16, not %s"):format(dtype)
  end
  if a ~= "auto" then return a end
  if g.Cout_g <= DIRECT_MAX_COUT then return "direct" end
  return MMA_DTYPES[dtype] and "mma" or "gemm"
end

-- The launches of one call: { algo =, scratch = elements of repacked weights or nil,
-- launches = { { kernel =, grid =, block =, args = {...} } } }. A string among the args names a
-- tensor: "x", "w", "bias", "y", "wp" (the scratch). Raises nothing; returns nil and a message
-- when a launch would exceed a grid.
function M.plan(g, dtype, has_bias)
  local algo, err = M.algorithm(g, dtype)
  if not algo then return nil, err end
  local T = M.DTYPE_CTYPE[dtype]
  local n = g.n
  local I, O = pad3(g.spatial, 1, n), pad3(g.out, 1, n)
  local k3, s3, p3, d3 = pad3(g.k, 1, n), pad3(g.stride, 1, n), pad3(g.pad, 0, n), pad3(g.dilation, 1, n)
  local geo = { k3[1], k3[2], k3[3], s3[1], s3[2], s3[3], p3[1], p3[2], p3[3], d3[1], d3[2], d3[3] }
  local bias_arg = has_bias and "bias" or "y"
  local launches = {}
  -- variants: the paths the launches take (M.variants; run() names them)
  local variants = {}
  local plan = { algo = algo, launches = launches, variants = variants }
  if algo == "direct" then
    local CO = g.Cout_g >= 4 and 4 or (g.Cout_g >= 2 and 2 or 1)
    local cob = (g.Cout_g + CO - 1) // CO
    local tx, v = direct_tile(O[3])
    variants[1] = "direct.co" .. CO
    variants[2] = (g.transposed and "direct.transposed.v" or "direct.v") .. v
    if g.Cout_g % CO ~= 0 then variants[3] = "direct.co_partial" end
    local ty = THREADS // tx
    local rows = g.N * g.groups * cob * O[1] * O[2]
    local w_tiles = (O[3] + tx * v - 1) // (tx * v)
    local grid = w_tiles * ((rows + ty - 1) // ty)
    if grid > LIMIT then
      return nil, ("y is %s: %d blocks are more than one launch takes"):format(shape_str(g.yshape), grid)
    end
    local args = { "x", "w", bias_arg, "y", rows, w_tiles, g.C, I[1], I[2], I[3], g.Co, O[1], O[2],
                   O[3], g.Cin_g, g.Cout_g, cob, has_bias }
    for _, a in ipairs(geo) do args[#args + 1] = a end
    launches[1] = { kernel = ("conv_direct<%s, %s, %d, %d>"):format(T, g.transposed and "true" or "false", v, CO),
                    grid = grid, block = { tx, ty, 1 }, args = args }
    return plan
  end
  -- the GEMM: phases, the padded reduction length, and the repacked weights
  local nph, ntmax, qmax = 1, 1, 1
  for d = 1, 3 do
    if g.transposed then
      local a, b = s3[d], d3[d]
      while b ~= 0 do a, b = b, a % b end
      local kstep = s3[d] // a
      nph = nph * s3[d]
      ntmax = ntmax * ((k3[d] + kstep - 1) // kstep)
      qmax = qmax * ((O[d] + s3[d] - 1) // s3[d])
    else
      ntmax = ntmax * k3[d]
      qmax = qmax * O[d]
    end
  end
  local Kmax = (g.Cin_g * ntmax + 31) // 32 * 32
  local nz = g.groups * nph
  local total = nz * Kmax * g.Cout_g
  plan.scratch = total
  local pk = { "w", "wp", total, g.Cin_g, g.Cout_g, Kmax, nph, g.transposed }
  for _, a in ipairs(geo) do pk[#pk + 1] = a end
  local pgrid = math.max(1, math.min((total + THREADS - 1) // THREADS, LIMITS.pack_grid_max))
  if pgrid * THREADS < total then variants[#variants + 1] = "pack.loop" end
  launches[1] = { kernel = ("conv_pack<%s, %s>"):format(T, algo == "gemm" and "true" or "false"),
                  grid = pgrid, block = THREADS, args = pk }
  local cfg
  for _, row in ipairs(M.TILES[algo]) do
    if g.Cout_g >= row[1] then cfg = row[2]; break end
  end
  local name = cfg and kernel_name(algo, T, cfg)
  local known = false
  for _, c in ipairs(M.CONFIGS[algo]) do
    if cfg and kernel_name(algo, T, c) == name then known = true end
  end
  if not known then
    return nil, ("no compiled %s tile configuration for %d output channels a group"):format(algo, g.Cout_g)
  end
  local BM, BN = cfg[1], cfg[2]
  local mt = (g.N * qmax + BM - 1) // BM
  local nt = (g.Cout_g + BN - 1) // BN
  if mt > LIMIT or nt > 65535 then
    return nil, ("y is %s: %d x %d blocks are more than one launch takes"):format(shape_str(g.yshape), mt, nt)
  end
  if mt == 0 then return plan end
  local args = { "x", "wp", bias_arg, "y", g.N, g.C, I[1], I[2], I[3], g.Co, O[1], O[2], O[3],
                 g.Cin_g, g.Cout_g, Kmax, nph, nz, g.transposed, has_bias }
  for _, a in ipairs(geo) do args[#args + 1] = a end
  variants[#variants + 1] = algo .. "." .. table.concat(cfg, "x")
  if g.transposed then variants[#variants + 1] = algo .. ".transposed" end
  if mt > 1 then variants[#variants + 1] = algo .. ".mtiles" end
  if nt > 1 then variants[#variants + 1] = algo .. ".ntiles" end
  if nz > LIMITS.z_max then variants[#variants + 1] = algo .. ".z_loop" end
  if g.N * qmax > 0xffffffff then variants[#variants + 1] = algo .. ".wide" end -- the kernel's t.Mp
  launches[2] = { kernel = name, grid = { mt, nt, math.min(nz, LIMITS.z_max) }, block = threads_of(algo, cfg),
                  args = args }
  return plan
end

-- ---- the operators ----

local function install(lib, K)
  local function run(op, transposed, x, w, y, opts)
    K.check_float(op, x, "x")
    K.check_tensor(op, w, "w")
    K.check_tensor(op, y, "y")
    K.check_dtype(op, w, x.dtype, "w")
    K.check_dtype(op, y, x.dtype, "y")
    if opts ~= nil and type(opts) ~= "table" then
      K.fail(op, "options are %s, not a table", type(opts))
    end
    opts = opts or {}
    local bias = opts.bias
    if bias == false then bias = nil end
    local g, err = M.resolve(x.shape, w.shape, opts, transposed)
    if not g then K.fail(op, "%s", err) end
    if bias ~= nil then
      K.check_tensor(op, bias, "bias")
      K.check_dtype(op, bias, x.dtype, "bias")
      if bias:dim() ~= 1 or bias:size(1) ~= g.Co then
        K.fail(op, "bias is %s, expected {%d} (out_channels)", shape_str(bias.shape), g.Co)
      end
    end
    if not K.same_shape(y.shape, g.yshape) then
      K.fail(op, "y is %s but PyTorch's output for x %s and w %s is %s", shape_str(y.shape),
        shape_str(x.shape), shape_str(w.shape), shape_str(g.yshape))
    end
    local dtype = x.dtype
    local plan
    plan, err = M.plan(g, dtype, bias ~= nil)
    if not plan then K.fail(op, "%s", err) end
    if not K.writes(y) then return y end
    if y:numel() == 0 then return y end
    local backend = dtype == "f64" and "oracle" or M.choose_backend(dtype)
    local why_not
    if backend == "cudnn" and cudnn_takes(g) then
      local ok, r = cudnn_run(g, transposed, x, w, y, bias)
      if ok then
        lib.conv_last = { backend = "cudnn", algo = r, version = cudnn_version() }
        return y
      end
      why_not = r
    end
    if backend == "cudnn" then backend = "nvrtc" end
    lib.conv_last = { backend = backend, why_not_cudnn = why_not }
    K.variant("conv", dtype, table.unpack(plan.variants))
    local tensors = { x = x, w = w, y = y, bias = bias }
    if plan.scratch then tensors.wp = K.empty({ plan.scratch }, dtype) end
    for _, l in ipairs(plan.launches) do
      local prog = K.program("conv", SRC, dtype, function() return { l.kernel } end, l.kernel)
      local args = {}
      for i, a in ipairs(l.args) do
        if type(a) == "string" then args[i] = tensors[a] else args[i] = a end
      end
      prog[l.kernel]{ grid = l.grid, block = l.block }(table.unpack(args, 1, #l.args))
    end
    return y
  end

  -- y = convNd(x, w) (nn.ConvNd's forward): x (N, C, d1..dk) or (C, d1..dk), w (Co, C/groups,
  -- k1..kk), y PyTorch's output shape. opts: stride, padding (integers, lists, 'valid' or
  -- 'same'), dilation, groups, bias (a tensor of Co), algo ('auto', 'gemm', 'mma', 'direct').
  function lib.conv(x, w, y, opts) return run("conv", false, x, w, y, opts) end
  -- y = conv_transposeNd(x, w) (nn.ConvTransposeNd's forward): w (C, Co/groups, k1..kk); opts
  -- as conv's (no string padding) and output_padding.
  function lib.conv_transpose(x, w, y, opts) return run("conv_transpose", true, x, w, y, opts) end
  -- which implementation computes a call at this dtype: "oracle" (f64) or the baseline's backend
  -- ("cudnn" or "nvrtc"); lib.conv_last says what the last call ran ({backend =, algo =, version =})
  function lib.conv_backend(dtype)
    if dtype == "f64" or dtype == "float64" then return "oracle" end
    return M.choose_backend(dtype)
  end
end

-- the size-selected paths (kreach.ops' header), the GEMMs' from their compiled configurations
-- (a configuration that M.TILES does not pick is reached only by experiments that change it)
local function tile_variants(algo, what)
  local out = {}
  for _, c in ipairs(M.CONFIGS[algo]) do
    local lo, hi
    for i, row in ipairs(M.TILES[algo]) do
      if row[2] == c or table.concat(row[2], "x") == table.concat(c, "x") then
        lo = math.max(row[1], DIRECT_MAX_COUT + 1)
        hi = i > 1 and M.TILES[algo][i - 1][1] - 1 or nil
      end
    end
    local name = algo .. "." .. table.concat(c, "x")
    if lo then
      out[#out + 1] = { name = name, when = ("%s with %s output channels a group: tiles of %d x %d"):format(
        what, hi and ("%d to %d"):format(lo, hi) or ("%d or more"):format(lo), c[1], c[2]) }
    else
      out[#out + 1] = { name = name, when = ("%s with tiles of %d x %d"):format(what, c[1], c[2]),
                        unreachable = "no size selects it (conv.TILES does not list it): only experiments that change conv.TILES" }
    end
  end
  return out
end
local VARIANTS = {
  { name = "direct.co1", when = "the direct kernel (f64, the oracle, and at most 4 output channels a group) with 1 output channel a group" },
  { name = "direct.co2", when = "the direct kernel with 2 or 3 output channels a group: 2 a thread" },
  { name = "direct.co4", when = "the direct kernel with 4 or more output channels a group: 4 a thread" },
  { name = "direct.co_partial", when = "the direct kernel with output channels a group not a multiple of its 2 or 4 a thread" },
  { name = "direct.v1", when = "the direct kernel, one output a thread (short output rows)" },
  { name = "direct.v2", when = "the direct kernel, two outputs a thread (as an output row of 64)" },
  { name = "direct.v4", when = "the direct kernel, four outputs a thread (as an output row of 128)" },
  { name = "direct.transposed.v1", when = "the transposed direct kernel (gathering), one output a thread" },
  { name = "direct.transposed.v2", when = "the transposed direct kernel, two outputs a thread" },
  { name = "direct.transposed.v4", when = "the transposed direct kernel, four outputs a thread" },
  { name = "pack.loop", when = "more repacked weights than conv_pack's blocks cover (limit pack_grid_max): several a thread" },
}
for _, v in ipairs(tile_variants("gemm", "conv_gemm (f32)")) do VARIANTS[#VARIANTS + 1] = v end
for _, v in ipairs(tile_variants("mma", "conv_mma (bf16, f16)")) do VARIANTS[#VARIANTS + 1] = v end
for _, algo in ipairs({ "gemm", "mma" }) do
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".transposed", when = algo .. " over the phases of a transposed convolution" }
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".mtiles", when = algo .. " with more output positions than one tile's rows" }
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".ntiles", when = algo .. " with more output channels a group than one tile's columns" }
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".z_loop", when = algo .. " with more (group, phase) pairs than the grid's z (limit z_max)" }
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".wide", when = algo .. " with 2^32 GEMM rows or more: 64-bit row decoding",
    unreachable = "decided inside the kernel (t.Mp > 0xffffffff), which no limit lowers, at sizes far beyond the host device" }
end

M.variants = VARIANTS
M.install = install
M.sources = { { name = "conv", source = SRC, instantiate = instantiate } }
-- for the CPU emulation of the kernels (experiments/conv): the source without the
-- tensor-core instructions, and those
M.body_source = BODY
M.mma_source = MMA

return M
