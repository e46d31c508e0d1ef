/* kr_kernels.h: the runtime's own device kernels (fills, conversion, poison), built by nvcc.
 * Runtime layer (no Lua), internal: only kr_tensor.c and kr_timing.c call these. Each enqueues work on
 * `stream` and returns the cudaError_t of the launch as an int. Element counts are 64-bit. */
#ifndef KR_KERNELS_H
#define KR_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `elem_size` bytes of `pattern` into each of n elements. */
int krk_fill_pattern(void *dst, int64_t n, int elem_size, const void *pattern, void *stream);
/* dst[i] = convert(src[i]); dtypes are kr_dtype values. */
int krk_convert(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t n,
                void *stream);
/* kind 0: uniform [a, b); kind 1: normal(a, b) */
int krk_random_float(void *dst, int dtype, int64_t n, int kind, double a, double b,
                     uint64_t seed, void *stream);
int krk_randint(void *dst, int dtype, int64_t n, int64_t lo, int64_t hi, uint64_t seed,
                void *stream);
/* Adds to *count (device memory, u64) the number of elements equal to the pattern. */
int krk_count_pattern(const void *src, int64_t n, int elem_size, const void *pattern,
                      unsigned long long *count, void *stream);

/* Reads n16 16-byte words of src (16-byte aligned) into L2; writes *sink only for a value
 * the flush never leaves (so the loads are kept). */
int krk_read_words(const void *src, int64_t n16, unsigned *sink, int sms, void *stream);

/* One thread that waits until state[0] (mapped host memory) reaches `want` (compared as a
 * sequence number), or timeout_ns on the GPU's clock pass, counting a timeout in state[1]. */
int krk_gate(unsigned *state, unsigned want, unsigned long long timeout_ns, void *stream);

#ifdef __cplusplus
}
#endif

#endif
