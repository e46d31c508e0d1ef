/* kr_host.h: the host device (KREACH_DEVICE=host): the CPU versions of the runtime's own
 * kernels (kr_kernels.h), host storage, and the entry point that runs kernels compiled for the
 * CPU under kreach's CUDA emulation (scripts/kreach/emulate.lua builds them into a shared
 * library with generated trampolines). Runtime layer (no Lua). Everything here runs on the
 * calling thread and is finished when the call returns.
 *
 * Agreement with the GPU:
 * - fills, poison, counting and dtype conversion give the same bits as kr_kernels.cu (floats
 *   round to nearest even in one step, NaN stays NaN (its payload may differ), float to integer
 *   truncates toward zero saturating with NaN to 0, to bool is x != 0, integer to integer wraps);
 * - random fills have the same distributions and the same property that element i depends
 *   only on (seed, i), but they draw from splitmix64, not cuRAND's Philox: the host device's
 *   random tensors are NOT the GPU's for the same seed. uniform: 24 random bits for f32 and
 *   the 16-bit floats (an f32 draw, then rounded), 53 for f64, kept below hi; normal:
 *   Box-Muller (in float for f32 and the 16-bit floats, as curand_normal4, and in double for
 *   f64); randint: multiply-high of 64 random bits onto [lo, hi). */
#ifndef KR_HOST_H
#define KR_HOST_H

#include <stddef.h>
#include <stdint.h>
#include "kr_context.h"

/* ---- the runtime's kernels on the CPU, mirroring kr_kernels.h; 0, or -1 for a bad dtype or
 * element size ---- */
int krh_fill_pattern(void *dst, int64_t n, int elem_size, const void *pattern);
int krh_convert(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t n);
/* kind 0: uniform [a, b); kind 1: normal(a, b) */
int krh_random_float(void *dst, int dtype, int64_t n, int kind, double a, double b,
                     uint64_t seed);
int krh_randint(void *dst, int dtype, int64_t n, int64_t lo, int64_t hi, uint64_t seed);
/* Adds to *count the number of elements equal to the pattern. */
int krh_count_pattern(const void *src, int64_t n, int elem_size, const void *pattern,
                      unsigned long long *count);

/* Host storage for tensors: `bytes` (0: a distinct 16-byte block) aligned to 256 bytes, as
 * cudaMalloc's are; NULL when out of memory. Freed with kr_host_free. */
void *kr_host_alloc(size_t bytes);
void kr_host_free(void *p);
/* The bytes the system could still give (MemAvailable of /proc/meminfo), and its total memory
 * (MemTotal); 0 when unknown. The host device checks a tensor against them before allocating
 * it: Linux grants an allocation it cannot back, and the out-of-memory killer then ends a
 * process when the pages are first written (kreach's, or another's). */
size_t kr_host_mem_available(void);
size_t kr_host_mem_total(void);

/* ---- kernels compiled for the CPU ---- */

/* One kernel argument as the trampolines receive it. */
typedef struct {
    int kind;   /* 0 pointer (p), 1 integer (i), 2 floating (d), 3 boolean (i: 0 or 1) */
    int64_t i;
    double d;
    void *p;
    const char *dtype; /* a pointer's tensor dtype (kr_dtype_name), so that the trampoline
                          checks it against the parameter's element type; NULL: any */
} kr_harg;

enum { KR_HARG_POINTER = 0, KR_HARG_INTEGER = 1, KR_HARG_FLOAT = 2, KR_HARG_BOOLEAN = 3 };

/* The type of an entry point in such a library: runs the kernel over the grid, returns 0, or
 * nonzero with a message (NUL-terminated, at most errlen bytes) in err. */
typedef int (*kr_host_entry)(const unsigned *grid, const unsigned *block, size_t shared,
                             const kr_harg *args, int nargs, char *err, size_t errlen);

/* Opens a shared library of entry points (dlopen, RTLD_NOW | RTLD_LOCAL). On failure *lib is
 * NULL and the status is KR_ERR_NOTFOUND with dlerror's words. Works in any mode; the library
 * is the caller's, closed with kr_host_close (NULL is ignored). */
kr_status kr_host_open(kr_context *ctx, const char *path, void **lib);
void kr_host_close(void *lib);

/* Runs entry point `symbol` of `lib` with a launch configuration and arguments, on this thread,
 * launch-noted under `name` (the kernel's name in every message; NULL: the symbol). Needs the host device (else KR_ERR_ARG). The
 * configuration is checked first as the GPU would check it, against the host device's limits
 * (kr_context_device): no dimension 0, at most 1024 threads per block, block within
 * {1024, 1024, 64}, grid within {2^31-1, 65535, 65535}, dynamic shared memory at most
 * 232448 bytes: else KR_ERR_LAUNCH saying which. nargs >= 0, and args may be NULL only when it
 * is 0 (else KR_ERR_ARG). A symbol the library lacks is KR_ERR_NOTFOUND; an entry that returns
 * nonzero gives KR_ERR_LAUNCH whose message is the entry's err text exactly (or "'<symbol>'
 * failed (returned N)" when the entry left it empty). */
kr_status kr_host_call(kr_context *ctx, void *lib, const char *symbol, const char *name,
                       const unsigned grid[3], const unsigned block[3], size_t shared,
                       const kr_harg *args, int nargs);

#endif
