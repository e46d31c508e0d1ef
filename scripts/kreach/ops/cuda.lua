-- kreach.ops.cuda: the CUDA prelude every operator family's source starts with: the
-- accumulator type of each storage type, conversions in and out of it, math overloads,
-- 16-byte packs for vectorised access, and warp/block reductions.
return [==[
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef long long i64;
typedef unsigned long long u64;

/* Storage type T computes in Acc<T>::type: fp32 for float and the 16-bit floats, fp64 for
 * double (the oracle). */
template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

template <typename T> __device__ __forceinline__ typename Acc<T>::type ld(T x) {
  return (typename Acc<T>::type)x;
}
template <> __device__ __forceinline__ float ld<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float ld<__nv_bfloat16>(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <typename T> __device__ __forceinline__ T st(typename Acc<T>::type v) { return (T)v; }
template <> __device__ __forceinline__ __half st<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 st<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/* Math on the accumulator types: accurate library functions, never the fast intrinsics. */
__device__ __forceinline__ float kexp(float x) { return expf(x); }
__device__ __forceinline__ double kexp(double x) { return exp(x); }
__device__ __forceinline__ float klog(float x) { return logf(x); }
__device__ __forceinline__ double klog(double x) { return log(x); }
__device__ __forceinline__ float klog1p(float x) { return log1pf(x); }
__device__ __forceinline__ double klog1p(double x) { return log1p(x); }
__device__ __forceinline__ float kexpm1(float x) { return expm1f(x); }
__device__ __forceinline__ double kexpm1(double x) { return expm1(x); }
__device__ __forceinline__ float ktanh(float x) { return tanhf(x); }
__device__ __forceinline__ double ktanh(double x) { return tanh(x); }
__device__ __forceinline__ float kerf(float x) { return erff(x); }
__device__ __forceinline__ double kerf(double x) { return erf(x); }
__device__ __forceinline__ float ksqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double ksqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float kabs(float x) { return fabsf(x); }
__device__ __forceinline__ double kabs(double x) { return fabs(x); }
__device__ __forceinline__ float kmax(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double kmax(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float kmin(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double kmin(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ float kpow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double kpow(double a, double b) { return pow(a, b); }

template <typename A> __device__ __forceinline__ A kinf();
template <> __device__ __forceinline__ float kinf<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double kinf<double>() {
  return __longlong_as_double(0x7ff0000000000000ll);
}

/* 16 bytes of T, for one vectorised load or store. */
template <typename T> struct alignas(16) Pack {
  static const int N = 16 / sizeof(T);
  T v[N];
};

/* Reductions over a warp and over a block (blockDim.x a multiple of 32, at most 1024). Every
 * thread gets the result. `scratch` holds at least 32 values. */
template <typename A> __device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <typename A> __device__ __forceinline__ A warp_max(A v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = kmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <typename A> __device__ __forceinline__ A warp_min(A v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = kmin(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <typename A> __device__ A block_sum(A v, A *scratch) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[w] = v;
  __syncthreads();
  v = lane < nw ? scratch[lane] : (A)0;
  return warp_sum(v);
}
template <typename A> __device__ A block_max(A v, A *scratch) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[w] = v;
  __syncthreads();
  v = lane < nw ? scratch[lane] : -kinf<A>();
  return warp_max(v);
}
]==]
