/* kr_tensor.c: device storage, tensor views, host transfers, fills and conversion.
 * Runtime layer (no Lua). Device work goes on the context's harness stream; transfers to and
 * from the host wait for it, so that a fault is reported at the transfer that would see it.
 * On the host device (KREACH_DEVICE=host) the storage is host memory and the same operations
 * are CPU loops (kr_host.c), finished when they return. */
#include "kr_tensor.h"
#include "kr_host.h"
#include "kr_kernels.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(KR_NDTYPES == 10, "kr_kernels.cu lists the dtypes in kr_dtype order");

struct kr_storage {
    int refs;
    kr_context *ctx;
    void *ptr;
    size_t bytes;
    int ipc; /* ptr is another process's memory, mapped by kr_tensor_open_ipc */
    int host; /* ptr is host memory (kr_host_alloc): the host device's storage */
};

int64_t kr_shape_numel(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return -1;
        if (shape[i] != 0 && n > INT64_MAX / shape[i]) return -1;
        n *= shape[i];
    }
    return n;
}

const char *kr_shape_str(char *buf, size_t n, int ndim, const int64_t *shape) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < ndim && used < n; i++) {
        int w = snprintf(buf + used, n - used, i ? "x%lld" : "%lld", (long long)shape[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    return buf;
}

static kr_status check_shape(kr_context *ctx, int ndim, const int64_t *shape) {
    if (ndim < 0 || ndim > KR_MAX_DIMS)
        return KR_ERROR(ctx, KR_ERR_ARG, "a tensor has 0 to %d dimensions, not %d", KR_MAX_DIMS,
                        ndim);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return KR_ERROR(ctx, KR_ERR_ARG, "size %lld of dimension %d is negative",
                            (long long)shape[i], i + 1);
    if (kr_shape_numel(ndim, shape) < 0)
        return KR_ERROR(ctx, KR_ERR_ARG, "the number of elements overflows 64 bits");
    return KR_OK;
}

kr_status kr_tensor_check_alloc(kr_context *ctx, kr_dtype dtype, int ndim, const int64_t *shape,
                                size_t *bytes) {
    if ((unsigned)dtype >= KR_NDTYPES) return KR_ERROR(ctx, KR_ERR_ARG, "unknown dtype %d", (int)dtype);
    kr_status s = check_shape(ctx, ndim, shape);
    if (s != KR_OK) return s;
    int64_t n = kr_shape_numel(ndim, shape);
    size_t es = kr_dtype_size(dtype);
    if ((uint64_t)n > SIZE_MAX / es)
        return KR_ERROR(ctx, KR_ERR_ARG, "%lld elements of %zu bytes overflow the address space",
                        (long long)n, es);
    if (bytes) *bytes = (size_t)n * es;
    return KR_OK;
}

/* The host device's tensors: the bytes they hold now (one process, one thread of Lua). */
static size_t host_live;
#define HOST_CHECK_BYTES ((size_t)64 << 20)

/* Whether `bytes` more of host-device tensors fit: their total within 90% of the system's
 * memory, and a large one (64 MiB or more) within what the system can still give less 10% of
 * its memory; else KR_ERR_NOMEM saying so. The host device is for small sizes. */
static kr_status host_room(kr_context *ctx, size_t bytes) {
    static size_t total; /* the machine's memory: read once, not at every allocation */
    if (total == 0) total = kr_host_mem_total();
    if (total == 0) return KR_OK;
    size_t cap = total / 10 * 9, avail = bytes >= HOST_CHECK_BYTES ? kr_host_mem_available() : 0;
    size_t keep = total / 10;
    if (host_live + bytes > cap || (bytes >= HOST_CHECK_BYTES && avail > 0 && bytes + keep > avail))
        return KR_ERROR(ctx, KR_ERR_NOMEM,
                        "out of host memory: a tensor of %.3g GB on the host device, beside "
                        "%.3g GB of its tensors, with %.3g GB available of %.3g GB (the host "
                        "device runs kreach's CUDA at small sizes: kreach oracle --small, or "
                        "--size)", bytes / 1e9, host_live / 1e9, avail / 1e9, total / 1e9);
    return KR_OK;
}

kr_status kr_tensor_alloc(kr_context *ctx, kr_tensor *t, kr_dtype dtype, int ndim,
                          const int64_t *shape) {
    memset(t, 0, sizeof *t);
    kr_status s = kr_tensor_check_alloc(ctx, dtype, ndim, shape, NULL);
    if (s != KR_OK) return s;
    int64_t n = kr_shape_numel(ndim, shape);
    size_t es = kr_dtype_size(dtype);
    if ((s = kr_context_require(ctx)) != KR_OK) return s;
    kr_storage *st = calloc(1, sizeof *st);
    if (!st) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    st->bytes = (size_t)n * es;
    if (kr_context_is_host(ctx)) {
        if ((s = host_room(ctx, st->bytes)) != KR_OK) {
            free(st);
            return s;
        }
        st->ptr = kr_host_alloc(st->bytes);
        if (!st->ptr) {
            free(st);
            return KR_ERROR(ctx, KR_ERR_NOMEM,
                            "out of host memory: %zu bytes asked for (the host device)",
                            (size_t)n * es);
        }
        st->host = 1;
        host_live += st->bytes;
    } else {
        /* a zero-sized tensor still gets a distinct, valid address */
        cudaError_t e = cudaMalloc(&st->ptr, st->bytes ? st->bytes : 16);
        if (e != cudaSuccess) {
            free(st);
            size_t fr = 0, tot = 0;
            cudaGetLastError(); /* an allocation failure is not sticky: clear it */
            cudaMemGetInfo(&fr, &tot);
            if (e == cudaErrorMemoryAllocation)
                return KR_ERROR(ctx, KR_ERR_NOMEM,
                                "out of device memory: %zu bytes asked for, %zu free of %zu",
                                (size_t)n * es, fr, tot);
            return KR_CUDA(ctx, e);
        }
    }
    st->refs = 1;
    st->ctx = kr_context_retain(ctx);
    t->storage = st;
    t->offset = 0;
    t->dtype = dtype;
    t->ndim = ndim;
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
    return KR_OK;
}

void kr_tensor_release(kr_tensor *t) {
    kr_storage *st = t->storage;
    t->storage = NULL;
    if (!st || --st->refs > 0) return;
    /* After a sticky error cudaFree fails too; the memory goes with the process. */
    if (st->host) {
        kr_host_free(st->ptr);
        host_live -= st->bytes;
    } else if (!kr_context_broken(st->ctx)) {
        if (st->ipc) cudaIpcCloseMemHandle(st->ptr);
        else cudaFree(st->ptr);
    }
    kr_context_release(st->ctx);
    free(st);
}

int kr_tensor_live(const kr_tensor *t) { return t->storage != NULL; }
int64_t kr_tensor_numel(const kr_tensor *t) { return kr_shape_numel(t->ndim, t->shape); }
size_t kr_tensor_nbytes(const kr_tensor *t) {
    return (size_t)kr_tensor_numel(t) * kr_dtype_size(t->dtype);
}
void *kr_tensor_data(const kr_tensor *t) {
    return t->storage ? (char *)t->storage->ptr + t->offset : NULL;
}
kr_context *kr_tensor_context(const kr_tensor *t) { return t->storage ? t->storage->ctx : NULL; }

static kr_status live(kr_context *ctx, const kr_tensor *t) {
    if (!t->storage) return KR_ERROR(ctx, KR_ERR_ARG, "the tensor has been freed");
    if (kr_context_broken(ctx)) return kr_context_require(ctx);
    return KR_OK;
}

kr_status kr_tensor_ipc_handle(kr_context *ctx, const kr_tensor *t, unsigned char handle[64],
                               size_t *offset) {
    kr_status s = live(ctx, t);
    if (s != KR_OK) return s;
    if (t->storage->host) return kr_context_not_on_host(ctx, "CUDA IPC (ipc_handle)");
    cudaIpcMemHandle_t h;
    if ((s = KR_CUDA(ctx, cudaIpcGetMemHandle(&h, t->storage->ptr))) != KR_OK) return s;
    _Static_assert(sizeof h == 64, "a CUDA IPC handle is 64 bytes");
    memcpy(handle, &h, 64);
    *offset = t->offset;
    return KR_OK;
}

kr_status kr_tensor_open_ipc(kr_context *ctx, kr_tensor *t, const unsigned char handle[64],
                             size_t offset, kr_dtype dtype, int ndim, const int64_t *shape) {
    memset(t, 0, sizeof *t);
    size_t bytes = 0;
    kr_status s = kr_tensor_check_alloc(ctx, dtype, ndim, shape, &bytes);
    if (s != KR_OK) return s;
    if ((s = kr_context_require(ctx)) != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "CUDA IPC (open_ipc)");
    cudaIpcMemHandle_t h;
    memcpy(&h, handle, sizeof h);
    void *p = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* not sticky */
        return KR_ERROR(ctx, KR_ERR_CUDA, "cannot map another process's memory (cudaIpcOpenMemHandle): %s",
                        cudaGetErrorString(e));
    }
    kr_storage *st = calloc(1, sizeof *st);
    if (!st) {
        cudaIpcCloseMemHandle(p);
        return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    st->ptr = p;
    st->bytes = offset + bytes;
    st->ipc = 1;
    st->refs = 1;
    st->ctx = kr_context_retain(ctx);
    t->storage = st;
    t->offset = offset;
    t->dtype = dtype;
    t->ndim = ndim;
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
    return KR_OK;
}

kr_status kr_tensor_view(kr_context *ctx, const kr_tensor *src, kr_tensor *dst, int ndim,
                         const int64_t *shape) {
    kr_status s = live(ctx, src);
    if (s != KR_OK) return s;
    if (ndim < 0 || ndim > KR_MAX_DIMS)
        return KR_ERROR(ctx, KR_ERR_ARG, "a tensor has 0 to %d dimensions, not %d", KR_MAX_DIMS,
                        ndim);
    int64_t sh[KR_MAX_DIMS];
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < ndim; i++) {
        sh[i] = shape[i];
        if (sh[i] == -1) {
            if (infer >= 0)
                return KR_ERROR(ctx, KR_ERR_ARG, "only one size of a view may be -1");
            infer = i;
        } else if (sh[i] < 0) {
            return KR_ERROR(ctx, KR_ERR_ARG, "size %lld of dimension %d is negative",
                            (long long)sh[i], i + 1);
        } else {
            if (sh[i] && known > INT64_MAX / sh[i])
                return KR_ERROR(ctx, KR_ERR_ARG, "the view's sizes overflow 64 bits");
            known *= sh[i];
        }
    }
    int64_t n = kr_tensor_numel(src);
    if (infer >= 0) {
        if (known == 0 || n % known != 0)
            return KR_ERROR(ctx, KR_ERR_ARG,
                            "cannot infer size %d: %lld elements do not divide into %lld", infer + 1,
                            (long long)n, (long long)known);
        sh[infer] = n / known;
        known = n;
    }
    if (known != n)
        return KR_ERROR(ctx, KR_ERR_ARG, "a view of %lld elements cannot have %lld",
                        (long long)n, (long long)known);
    *dst = *src;
    dst->ndim = ndim;
    memcpy(dst->shape, sh, sizeof(int64_t) * (size_t)ndim);
    src->storage->refs++;
    return KR_OK;
}

kr_status kr_tensor_narrow(kr_context *ctx, const kr_tensor *src, kr_tensor *dst, int dim,
                           int64_t start, int64_t len) {
    kr_status s = live(ctx, src);
    if (s != KR_OK) return s;
    if (dim < 0 || dim >= src->ndim)
        return KR_ERROR(ctx, KR_ERR_ARG, "dimension %d out of range (the tensor has %d)",
                        dim + 1, src->ndim);
    for (int i = 0; i < dim; i++)
        if (src->shape[i] != 1)
            return KR_ERROR(ctx, KR_ERR_ARG,
                            "narrowing dimension %d would not be contiguous: dimension %d has "
                            "size %lld (only leading dimensions of size 1 may come before it)",
                            dim + 1, i + 1, (long long)src->shape[i]);
    if (start < 0 || len < 0 || start > src->shape[dim] || len > src->shape[dim] - start)
        return KR_ERROR(ctx, KR_ERR_ARG,
                        "elements %lld to %lld are out of range for dimension %d of size %lld",
                        (long long)start + 1, (long long)(start + len), dim + 1,
                        (long long)src->shape[dim]);
    int64_t inner = 1;
    for (int i = dim + 1; i < src->ndim; i++) inner *= src->shape[i];
    *dst = *src;
    dst->shape[dim] = len;
    dst->offset = src->offset + (size_t)(start * inner) * kr_dtype_size(src->dtype);
    src->storage->refs++;
    return KR_OK;
}

static kr_status range_ok(kr_context *ctx, const kr_tensor *t, size_t offset, size_t n) {
    kr_status s = live(ctx, t);
    if (s != KR_OK) return s;
    size_t nb = kr_tensor_nbytes(t);
    if (offset > nb || n > nb - offset)
        return KR_ERROR(ctx, KR_ERR_ARG, "bytes %zu to %zu are outside the tensor's %zu bytes",
                        offset, offset + n, nb);
    return KR_OK;
}

kr_status kr_tensor_to_host(kr_context *ctx, const kr_tensor *t, size_t offset, void *host,
                            size_t n) {
    kr_status s = range_ok(ctx, t, offset, n);
    if (s != KR_OK || n == 0) return s;
    if (t->storage->host) {
        memcpy(host, (char *)kr_tensor_data(t) + offset, n);
        return KR_OK;
    }
    cudaStream_t st = (cudaStream_t)kr_context_stream(ctx);
    s = KR_CUDA(ctx, cudaMemcpyAsync(host, (char *)kr_tensor_data(t) + offset, n,
                                     cudaMemcpyDeviceToHost, st));
    return s != KR_OK ? s : kr_context_sync(ctx);
}

kr_status kr_tensor_from_host(kr_context *ctx, kr_tensor *t, size_t offset, const void *host,
                              size_t n) {
    kr_status s = range_ok(ctx, t, offset, n);
    if (s != KR_OK || n == 0) return s;
    if (t->storage->host) {
        memcpy((char *)kr_tensor_data(t) + offset, host, n);
        return KR_OK;
    }
    cudaStream_t st = (cudaStream_t)kr_context_stream(ctx);
    s = KR_CUDA(ctx, cudaMemcpyAsync((char *)kr_tensor_data(t) + offset, host, n,
                                     cudaMemcpyHostToDevice, st));
    /* pageable host memory: wait so the caller may free or reuse its buffer at once */
    return s != KR_OK ? s : kr_context_sync(ctx);
}

kr_status kr_tensor_copy(kr_context *ctx, kr_tensor *dst, const kr_tensor *src) {
    kr_status s = live(ctx, dst);
    if (s == KR_OK) s = live(ctx, src);
    if (s != KR_OK) return s;
    int64_t n = kr_tensor_numel(dst);
    if (n != kr_tensor_numel(src))
        return KR_ERROR(ctx, KR_ERR_ARG, "copy of %lld elements into a tensor of %lld",
                        (long long)kr_tensor_numel(src), (long long)n);
    if (dst->storage->host || src->storage->host) {
        if (!dst->storage->host || !src->storage->host)
            return KR_ERROR(ctx, KR_ERR_ARG, "copy between host-device and GPU tensors");
        if (dst->dtype == src->dtype) {
            if (kr_tensor_data(dst) != kr_tensor_data(src))
                memmove(kr_tensor_data(dst), kr_tensor_data(src), kr_tensor_nbytes(dst));
            return KR_OK;
        }
        if (kr_tensor_data(dst) == kr_tensor_data(src))
            return KR_ERROR(ctx, KR_ERR_ARG, "an in-place conversion needs a separate destination");
        krh_convert(kr_tensor_data(dst), dst->dtype, kr_tensor_data(src), src->dtype, n);
        return KR_OK;
    }
    void *st = kr_context_stream(ctx);
    if (dst->dtype == src->dtype) {
        if (kr_tensor_data(dst) == kr_tensor_data(src)) return KR_OK;
        return KR_CUDA(ctx, cudaMemcpyAsync(kr_tensor_data(dst), kr_tensor_data(src),
                                            kr_tensor_nbytes(dst), cudaMemcpyDeviceToDevice,
                                            (cudaStream_t)st));
    }
    if (kr_tensor_data(dst) == kr_tensor_data(src))
        return KR_ERROR(ctx, KR_ERR_ARG, "an in-place conversion needs a separate destination");
    kr_context_note_launch(ctx, "kreach convert");
    return KR_CUDA(ctx, krk_convert(kr_tensor_data(dst), dst->dtype, kr_tensor_data(src),
                                    src->dtype, n, st));
}

static kr_status host_fill(kr_tensor *t, const unsigned char *pat) {
    krh_fill_pattern(kr_tensor_data(t), kr_tensor_numel(t), (int)kr_dtype_size(t->dtype), pat);
    return KR_OK;
}

kr_status kr_tensor_fill(kr_context *ctx, kr_tensor *t, double value) {
    kr_status s = live(ctx, t);
    if (s != KR_OK) return s;
    unsigned char pat[8];
    kr_host_set(pat, t->dtype, 0, value);
    if (t->storage->host) return host_fill(t, pat);
    kr_context_note_launch(ctx, "kreach fill");
    return KR_CUDA(ctx, krk_fill_pattern(kr_tensor_data(t), kr_tensor_numel(t),
                                         (int)kr_dtype_size(t->dtype), pat,
                                         kr_context_stream(ctx)));
}

kr_status kr_tensor_fill_i64(kr_context *ctx, kr_tensor *t, int64_t value) {
    kr_status s = live(ctx, t);
    if (s != KR_OK) return s;
    unsigned char pat[8];
    kr_host_set_i64(pat, t->dtype, 0, value);
    if (t->storage->host) return host_fill(t, pat);
    kr_context_note_launch(ctx, "kreach fill");
    return KR_CUDA(ctx, krk_fill_pattern(kr_tensor_data(t), kr_tensor_numel(t),
                                         (int)kr_dtype_size(t->dtype), pat,
                                         kr_context_stream(ctx)));
}

kr_status kr_tensor_poison(kr_context *ctx, kr_tensor *t) {
    kr_status s = live(ctx, t);
    if (s != KR_OK) return s;
    unsigned char pat[8];
    kr_dtype_poison_bits(t->dtype, pat);
    if (t->storage->host) return host_fill(t, pat);
    kr_context_note_launch(ctx, "kreach fill");
    return KR_CUDA(ctx, krk_fill_pattern(kr_tensor_data(t), kr_tensor_numel(t),
                                         (int)kr_dtype_size(t->dtype), pat,
                                         kr_context_stream(ctx)));
}

kr_status kr_tensor_count_poisoned(kr_context *ctx, const kr_tensor *t, int64_t *count) {
    kr_status s = live(ctx, t);
    if (s != KR_OK) return s;
    unsigned char pat[8];
    kr_dtype_poison_bits(t->dtype, pat);
    if (t->storage->host) {
        unsigned long long c = 0;
        krh_count_pattern(kr_tensor_data(t), kr_tensor_numel(t), (int)kr_dtype_size(t->dtype),
                          pat, &c);
        *count = (int64_t)c;
        return KR_OK;
    }
    unsigned long long *dcount = NULL, h = 0;
    cudaStream_t st = (cudaStream_t)kr_context_stream(ctx);
    if ((s = KR_CUDA(ctx, cudaMallocAsync((void **)&dcount, sizeof h, st))) != KR_OK) return s;
    s = KR_CUDA(ctx, cudaMemsetAsync(dcount, 0, sizeof h, st));
    if (s == KR_OK)
        s = KR_CUDA(ctx, krk_count_pattern(kr_tensor_data(t), kr_tensor_numel(t),
                                           (int)kr_dtype_size(t->dtype), pat, dcount, st));
    if (s == KR_OK) s = KR_CUDA(ctx, cudaMemcpyAsync(&h, dcount, sizeof h,
                                                     cudaMemcpyDeviceToHost, st));
    if (s == KR_OK || s == KR_ERR_CUDA) cudaFreeAsync(dcount, st);
    if (s == KR_OK) s = kr_context_sync(ctx);
    *count = (int64_t)h;
    return s;
}

kr_status kr_tensor_uniform(kr_context *ctx, kr_tensor *t, double lo, double hi, uint64_t seed) {
    kr_status s = live(ctx, t);
    if (s != KR_OK) return s;
    if (!kr_dtype_is_float(t->dtype))
        return KR_ERROR(ctx, KR_ERR_ARG, "uniform fills floating tensors, not %s (use randint)",
                        kr_dtype_name(t->dtype));
    if (!(lo < hi))
        return KR_ERROR(ctx, KR_ERR_ARG, "uniform needs lo < hi, got [%g, %g)", lo, hi);
    if (t->storage->host) {
        krh_random_float(kr_tensor_data(t), t->dtype, kr_tensor_numel(t), 0, lo, hi, seed);
        return KR_OK;
    }
    kr_context_note_launch(ctx, "kreach uniform");
    return KR_CUDA(ctx, krk_random_float(kr_tensor_data(t), t->dtype, kr_tensor_numel(t), 0,
                                         lo, hi, seed, kr_context_stream(ctx)));
}

kr_status kr_tensor_normal(kr_context *ctx, kr_tensor *t, double mean, double std,
                           uint64_t seed) {
    kr_status s = live(ctx, t);
    if (s != KR_OK) return s;
    if (!kr_dtype_is_float(t->dtype))
        return KR_ERROR(ctx, KR_ERR_ARG, "normal fills floating tensors, not %s",
                        kr_dtype_name(t->dtype));
    if (!(std >= 0))
        return KR_ERROR(ctx, KR_ERR_ARG, "normal needs std >= 0, got %g", std);
    if (t->storage->host) {
        krh_random_float(kr_tensor_data(t), t->dtype, kr_tensor_numel(t), 1, mean, std, seed);
        return KR_OK;
    }
    kr_context_note_launch(ctx, "kreach normal");
    return KR_CUDA(ctx, krk_random_float(kr_tensor_data(t), t->dtype, kr_tensor_numel(t), 1,
                                         mean, std, seed, kr_context_stream(ctx)));
}

kr_status kr_tensor_randint(kr_context *ctx, kr_tensor *t, int64_t lo, int64_t hi,
                            uint64_t seed) {
    kr_status s = live(ctx, t);
    if (s != KR_OK) return s;
    if (!(lo < hi))
        return KR_ERROR(ctx, KR_ERR_ARG, "randint needs lo < hi, got [%lld, %lld)",
                        (long long)lo, (long long)hi);
    int64_t mn, mx;
    if (kr_dtype_int_range(t->dtype, &mn, &mx) == 0 && (lo < mn || hi - 1 > mx))
        return KR_ERROR(ctx, KR_ERR_ARG, "randint [%lld, %lld) does not fit in %s ([%lld, %lld])",
                        (long long)lo, (long long)hi, kr_dtype_name(t->dtype), (long long)mn,
                        (long long)mx);
    if (t->storage->host) {
        krh_randint(kr_tensor_data(t), t->dtype, kr_tensor_numel(t), lo, hi, seed);
        return KR_OK;
    }
    kr_context_note_launch(ctx, "kreach randint");
    return KR_CUDA(ctx, krk_randint(kr_tensor_data(t), t->dtype, kr_tensor_numel(t), lo, hi,
                                    seed, kr_context_stream(ctx)));
}
