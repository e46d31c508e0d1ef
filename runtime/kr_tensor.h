/* kr_tensor.h: contiguous device tensors over reference-counted device storage.
 * Runtime layer (no Lua). A kr_tensor is a small value (shape, dtype, offset) over a shared
 * kr_storage; views share the storage and the memory is freed with the last reference.
 * Sizes are 64-bit throughout: tensors over 4 GiB and over 2^31 elements are ordinary.
 * On the host device (KREACH_DEVICE=host, kr_context.h) storage is host memory aligned to 256
 * bytes, every operation below is done by the CPU before it returns (kr_host.c: same bits as
 * the GPU's kernels, except the random fills, which draw from another generator), kr_tensor_data
 * is a host pointer, and CUDA IPC is KR_ERR_ARG. */
#ifndef KR_TENSOR_H
#define KR_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include "kr_context.h"
#include "kr_dtype.h"

#define KR_MAX_DIMS 8

typedef struct kr_storage kr_storage;

typedef struct {
    kr_storage *storage;   /* NULL once released */
    size_t offset;         /* in bytes, into the storage */
    kr_dtype dtype;
    int ndim;              /* 0 to KR_MAX_DIMS; 0 is a scalar of one element */
    int64_t shape[KR_MAX_DIMS];
} kr_tensor;

/* Number of elements of a shape, or -1 when a size is negative or the product overflows. */
int64_t kr_shape_numel(int ndim, const int64_t *shape);

/* A shape as text in buf (n bytes): "4x5", "3x4x5" ("" for none), cut where buf ends. Returns buf. */
const char *kr_shape_str(char *buf, size_t n, int ndim, const int64_t *shape);

/* The checks an allocation makes before it touches the device: the dtype, 0 to KR_MAX_DIMS
 * non-negative sizes, and a size in bytes that fits the address space (*bytes, when not
 * NULL). KR_OK or KR_ERR_ARG with the reason. Needs no GPU. */
kr_status kr_tensor_check_alloc(kr_context *ctx, kr_dtype dtype, int ndim, const int64_t *shape,
                                size_t *bytes);

/* Allocates uninitialised device memory for a tensor. On failure `t` is left released and the
 * context holds the reason (out of memory says how much was asked for and how much is free). */
kr_status kr_tensor_alloc(kr_context *ctx, kr_tensor *t, kr_dtype dtype, int ndim,
                          const int64_t *shape);
/* Drops this tensor's reference to its storage; safe to call twice. */
void kr_tensor_release(kr_tensor *t);
int kr_tensor_live(const kr_tensor *t);

int64_t kr_tensor_numel(const kr_tensor *t);
size_t kr_tensor_nbytes(const kr_tensor *t);
/* Device address of the first element; NULL for a released tensor. */
void *kr_tensor_data(const kr_tensor *t);
/* The CUDA IPC handle of the allocation under t (64 bytes into handle) and t's byte offset in
 * it, so that another process on the same device can map the same memory
 * (cudaIpcOpenMemHandle) and read and write it in place. */
/* A tensor over memory another process exported (its CUDA IPC handle, 64 bytes), at offset
 * bytes into that allocation; releasing the last reference unmaps it. */
kr_status kr_tensor_open_ipc(kr_context *ctx, kr_tensor *t, const unsigned char handle[64],
                             size_t offset, kr_dtype dtype, int ndim, const int64_t *shape);
kr_status kr_tensor_ipc_handle(kr_context *ctx, const kr_tensor *t, unsigned char handle[64],
                               size_t *offset);
/* The context the storage belongs to. */
kr_context *kr_tensor_context(const kr_tensor *t);

/* A view with another shape and the same number of elements (one size may be -1, inferred).
 * `dst` gets a new reference; `src` is unchanged. */
kr_status kr_tensor_view(kr_context *ctx, const kr_tensor *src, kr_tensor *dst, int ndim,
                         const int64_t *shape);
/* A view of elements [start, start+len) along dimension `dim` (0-based). It must stay
 * contiguous: every dimension before `dim` has size 1. */
kr_status kr_tensor_narrow(kr_context *ctx, const kr_tensor *src, kr_tensor *dst, int dim,
                           int64_t start, int64_t len);

/* Copies between host memory and bytes [offset, offset+n) of the tensor; waits for completion. */
kr_status kr_tensor_to_host(kr_context *ctx, const kr_tensor *t, size_t offset, void *host,
                            size_t n);
kr_status kr_tensor_from_host(kr_context *ctx, kr_tensor *t, size_t offset, const void *host,
                              size_t n);

/* dst = src with dtype conversion (floats round to nearest even; float to integer truncates
 * toward zero, NaN to 0; to bool is x != 0). Same number of elements; may be the same tensor. */
kr_status kr_tensor_copy(kr_context *ctx, kr_tensor *dst, const kr_tensor *src);

/* Fills on the device, on the harness stream (asynchronous). */
kr_status kr_tensor_fill(kr_context *ctx, kr_tensor *t, double value);
kr_status kr_tensor_fill_i64(kr_context *ctx, kr_tensor *t, int64_t value);
/* Random fills through cuRAND's Philox4x32-10: element i depends only on (seed, i), so the
 * same seed gives the same bits whatever the launch shape, and a bf16 tensor holds the f32
 * draws rounded to nearest even. uniform draws from [lo, hi) (24 random bits for f32 and the
 * 16-bit floats, 53 for f64); normal uses Box-Muller (cuRAND's curand_normal); randint draws
 * integers from [lo, hi) for any dtype. */
kr_status kr_tensor_uniform(kr_context *ctx, kr_tensor *t, double lo, double hi, uint64_t seed);
kr_status kr_tensor_normal(kr_context *ctx, kr_tensor *t, double mean, double std,
                           uint64_t seed);
kr_status kr_tensor_randint(kr_context *ctx, kr_tensor *t, int64_t lo, int64_t hi,
                            uint64_t seed);
/* Writes kr_dtype_poison_bits into every element. */
kr_status kr_tensor_poison(kr_context *ctx, kr_tensor *t);
/* Counts elements whose bits equal the poison pattern (synchronises). */
kr_status kr_tensor_count_poisoned(kr_context *ctx, const kr_tensor *t, int64_t *count);

#endif
