/* kr_kernels.cu: the runtime's own device kernels: pattern fills, dtype conversion, random
 * fills through cuRAND's Philox generator, and counting a bit pattern. Runtime layer (no Lua),
 * built by nvcc into kreach_runtime. Grid-stride loops over 64-bit indices. */
#include "kr_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>
#include <stdint.h>

/* Must match kr_dtype in kr_dtype.h; kr_tensor.c checks the count at compile time. */
enum { F64 = 0, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL, NDT };

namespace {

const int THREADS = 256;

int blocks_for(int64_t work) {
    int64_t b = (work + THREADS - 1) / THREADS;
    if (b < 1) b = 1;
    /* enough blocks to fill the GPU several times over; the loops stride over the rest */
    return (int)(b > 65536 ? 65536 : b);
}

template <int SIZE> struct Word;
template <> struct Word<1> { typedef uint8_t T; };
template <> struct Word<2> { typedef uint16_t T; };
template <> struct Word<4> { typedef uint32_t T; };
template <> struct Word<8> { typedef unsigned long long T; };

template <int SIZE>
__global__ void fill_pattern(typename Word<SIZE>::T *dst, int64_t n, typename Word<SIZE>::T pat,
                             uint4 pat16, int64_t n16) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint4 *d16 = reinterpret_cast<uint4 *>(dst);
    for (int64_t i = tid; i < n16; i += stride) d16[i] = pat16;
    const int64_t per = 16 / SIZE;
    for (int64_t i = n16 * per + tid; i < n; i += stride) dst[i] = pat;
}

template <int SIZE>
__global__ void count_pattern(const typename Word<SIZE>::T *src, int64_t n,
                              typename Word<SIZE>::T pat, unsigned long long *count) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    unsigned long long c = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        c += src[i] == pat;
    for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(count, c);
}

/* ---- element access: floats are read exactly as double, integers exactly as int64 ---- */

template <typename T> struct Elem;
template <> struct Elem<double> {
    static const bool is_float = true;
    __device__ static double get(double v) { return v; }
    __device__ static double from_f(double d) { return d; }
    __device__ static double from_i(long long i) { return (double)i; }
};
template <> struct Elem<float> {
    static const bool is_float = true;
    __device__ static double get(float v) { return v; }
    __device__ static float from_f(double d) { return (float)d; }
    __device__ static float from_i(long long i) { return __ll2float_rn(i); }
};
template <> struct Elem<__half> {
    static const bool is_float = true;
    __device__ static double get(__half v) { return (double)__half2float(v); }
    __device__ static __half from_f(double d) { return __double2half(d); }
    __device__ static __half from_i(long long i) { return __ll2half_rn(i); }
};
template <> struct Elem<__nv_bfloat16> {
    static const bool is_float = true;
    __device__ static double get(__nv_bfloat16 v) { return (double)__bfloat162float(v); }
    __device__ static __nv_bfloat16 from_f(double d) { return __double2bfloat16(d); }
    __device__ static __nv_bfloat16 from_i(long long i) { return __ll2bfloat16_rn(i); }
};

template <typename T> struct Lim;
template <> struct Lim<long long> { static constexpr long long lo = -0x7fffffffffffffffll - 1, hi = 0x7fffffffffffffffll; };
template <> struct Lim<int> { static constexpr int lo = -0x7fffffff - 1, hi = 0x7fffffff; };
template <> struct Lim<short> { static constexpr short lo = -32768, hi = 32767; };
template <> struct Lim<signed char> { static constexpr signed char lo = -128, hi = 127; };
template <> struct Lim<unsigned char> { static constexpr unsigned char lo = 0, hi = 255; };

template <typename T> struct IntElem {
    static const bool is_float = false;
    __device__ static long long get(T v) { return (long long)v; }
    __device__ static T from_f(double d) {
        /* truncate toward zero, saturating, NaN to 0: never undefined behaviour */
        if (d != d) return (T)0;
        if (d <= (double)Lim<T>::lo) return Lim<T>::lo;
        if (d >= (double)Lim<T>::hi) return Lim<T>::hi;
        return (T)(long long)d;
    }
    __device__ static T from_i(long long i) { return (T)i; }
};
template <> struct Elem<long long> : IntElem<long long> {};
template <> struct Elem<int> : IntElem<int> {};
template <> struct Elem<short> : IntElem<short> {};
template <> struct Elem<signed char> : IntElem<signed char> {};
template <> struct Elem<unsigned char> : IntElem<unsigned char> {};

struct Bool { uint8_t v; };
template <> struct Elem<Bool> {
    static const bool is_float = false;
    __device__ static long long get(Bool b) { return b.v != 0; }
    __device__ static Bool from_f(double d) { Bool b; b.v = d != 0; return b; }
    __device__ static Bool from_i(long long i) { Bool b; b.v = i != 0; return b; }
};

template <typename D, typename S, bool SF> struct Conv;
template <typename D, typename S> struct Conv<D, S, true> {
    __device__ static D go(S s) { return Elem<D>::from_f(Elem<S>::get(s)); }
};
template <typename D, typename S> struct Conv<D, S, false> {
    __device__ static D go(S s) { return Elem<D>::from_i(Elem<S>::get(s)); }
};

template <typename D, typename S>
__global__ void convert(D *dst, const S *src, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = Conv<D, S, Elem<S>::is_float>::go(src[i]);
}

template <typename D, typename S>
int launch_convert(void *dst, const void *src, int64_t n, cudaStream_t st) {
    if (n <= 0) return cudaSuccess;
    convert<D, S><<<blocks_for(n), THREADS, 0, st>>>((D *)dst, (const S *)src, n);
    return (int)cudaGetLastError();
}

template <typename S>
int convert_from(void *dst, int dt, const void *src, int64_t n, cudaStream_t st) {
    switch (dt) {
    case F64: return launch_convert<double, S>(dst, src, n, st);
    case F32: return launch_convert<float, S>(dst, src, n, st);
    case F16: return launch_convert<__half, S>(dst, src, n, st);
    case BF16: return launch_convert<__nv_bfloat16, S>(dst, src, n, st);
    case I64: return launch_convert<long long, S>(dst, src, n, st);
    case I32: return launch_convert<int, S>(dst, src, n, st);
    case I16: return launch_convert<short, S>(dst, src, n, st);
    case I8: return launch_convert<signed char, S>(dst, src, n, st);
    case U8: return launch_convert<unsigned char, S>(dst, src, n, st);
    case BOOL: return launch_convert<Bool, S>(dst, src, n, st);
    }
    return (int)cudaErrorInvalidValue;
}

/* ---- random fills: element i is drawn from Philox subsequence i/4, so it depends only on
 * the seed and i ---- */

__device__ inline float unit24(unsigned r) { return (float)(r >> 8) * (1.0f / 16777216.0f); }
__device__ inline double unit53(unsigned a, unsigned b) {
    unsigned long long v = ((unsigned long long)a << 21) ^ (unsigned long long)(b >> 11);
    return (double)(v & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
}

template <typename D>
__global__ void random_float(D *dst, int64_t n, int kind, double a, double b,
                             unsigned long long seed) {
    int64_t groups = (n + 3) / 4;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += stride) {
        curandStatePhilox4_32_10_t st;
        curand_init(seed, (unsigned long long)g, 0, &st);
        double v[4];
        if (sizeof(D) == 8) {
            if (kind == 0) {
                uint4 r1 = curand4(&st), r2 = curand4(&st);
                double u[4] = {unit53(r1.x, r1.y), unit53(r1.z, r1.w), unit53(r2.x, r2.y),
                               unit53(r2.z, r2.w)};
                for (int k = 0; k < 4; k++) {
                    v[k] = a + (b - a) * u[k];
                    if (v[k] >= b) v[k] = nextafter(b, a); /* keep the interval half-open */
                }
            } else {
                double2 n1 = curand_normal2_double(&st), n2 = curand_normal2_double(&st);
                v[0] = a + b * n1.x; v[1] = a + b * n1.y; v[2] = a + b * n2.x; v[3] = a + b * n2.y;
            }
        } else {
            /* f32 and the 16-bit floats draw the same f32 values; the 16-bit ones are the f32
             * draws rounded to nearest even */
            float f[4];
            if (kind == 0) {
                uint4 r = curand4(&st);
                float u[4] = {unit24(r.x), unit24(r.y), unit24(r.z), unit24(r.w)};
                float fb = (float)b;
                for (int k = 0; k < 4; k++) {
                    f[k] = (float)(a + (b - a) * (double)u[k]);
                    if (f[k] >= fb) f[k] = nextafterf(fb, (float)a);
                }
            } else {
                float4 z = curand_normal4(&st);
                float fa = (float)a, fs = (float)b;
                f[0] = fa + fs * z.x; f[1] = fa + fs * z.y; f[2] = fa + fs * z.z; f[3] = fa + fs * z.w;
            }
            for (int k = 0; k < 4; k++) v[k] = f[k];
        }
        int64_t base = g * 4;
        for (int k = 0; k < 4 && base + k < n; k++) dst[base + k] = Elem<D>::from_f(v[k]);
    }
}

template <typename D>
__global__ void randint(D *dst, int64_t n, long long lo, unsigned long long range,
                        unsigned long long seed) {
    int64_t groups = (n + 3) / 4;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += stride) {
        curandStatePhilox4_32_10_t st;
        curand_init(seed, (unsigned long long)g, 0, &st);
        uint4 r1 = curand4(&st), r2 = curand4(&st);
        unsigned long long w[4] = {((unsigned long long)r1.x << 32) | r1.y,
                                   ((unsigned long long)r1.z << 32) | r1.w,
                                   ((unsigned long long)r2.x << 32) | r2.y,
                                   ((unsigned long long)r2.z << 32) | r2.w};
        int64_t base = g * 4;
        for (int k = 0; k < 4 && base + k < n; k++) {
            /* multiply-high maps 64 random bits onto [0, range) with bias below 2^-32 for any
             * range under 2^32 */
            long long v = lo + (long long)__umul64hi(w[k], range);
            dst[base + k] = Elem<D>::from_i(v);
        }
    }
}

template <typename D>
int launch_random(void *dst, int64_t n, int kind, double a, double b, uint64_t seed,
                  cudaStream_t st) {
    if (n <= 0) return cudaSuccess;
    random_float<D><<<blocks_for((n + 3) / 4), THREADS, 0, st>>>((D *)dst, n, kind, a, b, seed);
    return (int)cudaGetLastError();
}

template <typename D>
int launch_randint(void *dst, int64_t n, long long lo, unsigned long long range, uint64_t seed,
                   cudaStream_t st) {
    if (n <= 0) return cudaSuccess;
    randint<D><<<blocks_for((n + 3) / 4), THREADS, 0, st>>>((D *)dst, n, lo, range, seed);
    return (int)cudaGetLastError();
}

template <int SIZE>
int launch_fill(void *dst, int64_t n, const void *pattern, cudaStream_t st) {
    typedef typename Word<SIZE>::T W;
    W pat;
    memcpy(&pat, pattern, SIZE);
    uint4 p16;
    unsigned char *pb = reinterpret_cast<unsigned char *>(&p16);
    for (int i = 0; i < 16; i++) pb[i] = ((const unsigned char *)pattern)[i % SIZE];
    int64_t n16 = ((uintptr_t)dst % 16 == 0) ? n / (16 / SIZE) : 0;
    if (n <= 0) return cudaSuccess;
    fill_pattern<SIZE><<<blocks_for(n16 ? n16 : n), THREADS, 0, st>>>((W *)dst, n, pat, p16, n16);
    return (int)cudaGetLastError();
}

template <int SIZE>
int launch_count(const void *src, int64_t n, const void *pattern, unsigned long long *count,
                 cudaStream_t st) {
    typedef typename Word<SIZE>::T W;
    W pat;
    memcpy(&pat, pattern, SIZE);
    if (n <= 0) return cudaSuccess;
    count_pattern<SIZE><<<blocks_for(n), THREADS, 0, st>>>((const W *)src, n, pat, count);
    return (int)cudaGetLastError();
}

// Reads n 16-byte words; the store never happens for the values the flush writes, but the
// compiler cannot know that, so every load is kept.
__global__ void read_words(const uint4 *__restrict__ src, int64_t n, unsigned *sink) {
    unsigned acc = 0;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint4 v = src[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9E3779B9u) *sink = acc;
}

} // namespace

/* The gate: one thread spins until the host has released sequence number `want` through
 * mapped host memory, or until timeout_ns have passed on the GPU's clock (it then counts the
 * timeout in state[1]). */
__global__ void gate(volatile unsigned *state, unsigned want, unsigned long long timeout_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while ((int)(state[0] - want) < 0) {
        __nanosleep(200);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) {
            state[1] = state[1] + 1;
            __threadfence_system();
            return;
        }
    }
}

extern "C" int krk_gate(unsigned *state, unsigned want, unsigned long long timeout_ns,
                        void *stream) {
    gate<<<1, 1, 0, (cudaStream_t)stream>>>(state, want, timeout_ns);
    return (int)cudaGetLastError();
}

extern "C" int krk_read_words(const void *src, int64_t n16, unsigned *sink, int sms, void *stream) {
    if (n16 <= 0) return 0;
    int blocks = sms > 0 ? sms * 8 : 1024;
    read_words<<<blocks, 256, 0, (cudaStream_t)stream>>>((const uint4 *)src, n16, sink);
    return (int)cudaGetLastError();
}

extern "C" int krk_fill_pattern(void *dst, int64_t n, int elem_size, const void *pattern,
                                void *stream) {
    cudaStream_t st = (cudaStream_t)stream;
    switch (elem_size) {
    case 1: return launch_fill<1>(dst, n, pattern, st);
    case 2: return launch_fill<2>(dst, n, pattern, st);
    case 4: return launch_fill<4>(dst, n, pattern, st);
    case 8: return launch_fill<8>(dst, n, pattern, st);
    }
    return (int)cudaErrorInvalidValue;
}

extern "C" int krk_count_pattern(const void *src, int64_t n, int elem_size, const void *pattern,
                                 unsigned long long *count, void *stream) {
    cudaStream_t st = (cudaStream_t)stream;
    switch (elem_size) {
    case 1: return launch_count<1>(src, n, pattern, count, st);
    case 2: return launch_count<2>(src, n, pattern, count, st);
    case 4: return launch_count<4>(src, n, pattern, count, st);
    case 8: return launch_count<8>(src, n, pattern, count, st);
    }
    return (int)cudaErrorInvalidValue;
}

extern "C" int krk_convert(void *dst, int dt, const void *src, int sdt, int64_t n, void *stream) {
    cudaStream_t st = (cudaStream_t)stream;
    switch (sdt) {
    case F64: return convert_from<double>(dst, dt, src, n, st);
    case F32: return convert_from<float>(dst, dt, src, n, st);
    case F16: return convert_from<__half>(dst, dt, src, n, st);
    case BF16: return convert_from<__nv_bfloat16>(dst, dt, src, n, st);
    case I64: return convert_from<long long>(dst, dt, src, n, st);
    case I32: return convert_from<int>(dst, dt, src, n, st);
    case I16: return convert_from<short>(dst, dt, src, n, st);
    case I8: return convert_from<signed char>(dst, dt, src, n, st);
    case U8: return convert_from<unsigned char>(dst, dt, src, n, st);
    case BOOL: return convert_from<Bool>(dst, dt, src, n, st);
    }
    return (int)cudaErrorInvalidValue;
}

extern "C" int krk_random_float(void *dst, int dt, int64_t n, int kind, double a, double b,
                                uint64_t seed, void *stream) {
    cudaStream_t st = (cudaStream_t)stream;
    switch (dt) {
    case F64: return launch_random<double>(dst, n, kind, a, b, seed, st);
    case F32: return launch_random<float>(dst, n, kind, a, b, seed, st);
    case F16: return launch_random<__half>(dst, n, kind, a, b, seed, st);
    case BF16: return launch_random<__nv_bfloat16>(dst, n, kind, a, b, seed, st);
    }
    return (int)cudaErrorInvalidValue;
}

extern "C" int krk_randint(void *dst, int dt, int64_t n, int64_t lo, int64_t hi, uint64_t seed,
                           void *stream) {
    cudaStream_t st = (cudaStream_t)stream;
    unsigned long long range = (unsigned long long)hi - (unsigned long long)lo;
    switch (dt) {
    case F64: return launch_randint<double>(dst, n, lo, range, seed, st);
    case F32: return launch_randint<float>(dst, n, lo, range, seed, st);
    case F16: return launch_randint<__half>(dst, n, lo, range, seed, st);
    case BF16: return launch_randint<__nv_bfloat16>(dst, n, lo, range, seed, st);
    case I64: return launch_randint<long long>(dst, n, lo, range, seed, st);
    case I32: return launch_randint<int>(dst, n, lo, range, seed, st);
    case I16: return launch_randint<short>(dst, n, lo, range, seed, st);
    case I8: return launch_randint<signed char>(dst, n, lo, range, seed, st);
    case U8: return launch_randint<unsigned char>(dst, n, lo, range, seed, st);
    case BOOL: return launch_randint<Bool>(dst, n, lo, range, seed, st);
    }
    return (int)cudaErrorInvalidValue;
}
