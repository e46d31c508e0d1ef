/* kr_cublas.c: the context's cuBLAS handle and row-major GEMM on top of column-major cuBLAS.
 * Runtime layer (no Lua). Every argument is checked on the host before the device is touched,
 * so a shape or dtype mistake reads as such and not as CUBLAS_STATUS_INVALID_VALUE. */
#define _GNU_SOURCE /* dladdr */
#include "kr_cublas.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <limits.h>
#include <nvrtc.h>
#include "kr_nvrtc_api.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cuBLAS, loaded on first use ----
 * Linking libcublas costs every kreach process, each worker included, about 0.4 s and 220 MB
 * of resident memory at start-up (its static initialisers; measured on the CPU machine with an
 * empty program linked against it), whether it multiplies a matrix or not. So the library is
 * opened with dlopen the first time a handle or its version is asked for: by the soname the
 * headers were built for, through the executable's run path, else beside libnvrtc (the same
 * toolkit). The functions used are called through this table; the names below resolve to it. */
#define KR_CUBLAS_FUNCTIONS(X)                                                                  \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetMathMode)          \
    X(cublasSetPointerMode_v2) X(cublasSetAtomicsMode) X(cublasGetStatusName)                  \
    X(cublasGetStatusString) X(cublasGemmEx) X(cublasGemmStridedBatchedEx) X(cublasGetProperty)

#define KR_CUBLAS_MEMBER(name) __typeof__(&name) name;
static struct {
    KR_CUBLAS_FUNCTIONS(KR_CUBLAS_MEMBER)
} api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static char api_error[512];

#define KR_STR_(x) #x
#define KR_STR(x) KR_STR_(x)

static void *open_cublas(void) {
    const char *soname = "libcublas.so." KR_STR(CUBLAS_VER_MAJOR);
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    char first[256];
    snprintf(first, sizeof first, "%s", dlerror());
    char dir[PATH_MAX], path[PATH_MAX + 64];
    if (kr_nvrtc_dir(dir, sizeof dir) == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, soname);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    snprintf(api_error, sizeof api_error, "cannot load cuBLAS (%s): %s", soname, first);
    return NULL;
}

static void load_api(void) {
    void *h = open_cublas();
    if (!h) return;
#define KR_CUBLAS_LOAD(name)                                                                    \
    if (!api_error[0]) {                                                                         \
        *(void **)&api.name = dlsym(h, #name);                                                   \
        if (!api.name)                                                                           \
            snprintf(api_error, sizeof api_error, "cuBLAS has no %s: %s", #name, dlerror());     \
    }
    KR_CUBLAS_FUNCTIONS(KR_CUBLAS_LOAD)
#undef KR_CUBLAS_LOAD
}

/* NULL once cuBLAS is loaded, else why it is not */
static const char *cublas_loaded(void) {
    pthread_once(&api_once, load_api);
    return api_error[0] ? api_error : NULL;
}

#define cublasCreate_v2 (api.cublasCreate_v2)
#define cublasDestroy_v2 (api.cublasDestroy_v2)
#define cublasSetStream_v2 (api.cublasSetStream_v2)
#define cublasSetMathMode (api.cublasSetMathMode)
#define cublasSetPointerMode_v2 (api.cublasSetPointerMode_v2)
#define cublasSetAtomicsMode (api.cublasSetAtomicsMode)
#define cublasGetStatusName (api.cublasGetStatusName)
#define cublasGetStatusString (api.cublasGetStatusString)
#define cublasGemmEx (api.cublasGemmEx)
#define cublasGemmStridedBatchedEx (api.cublasGemmStridedBatchedEx)
#define cublasGetProperty (api.cublasGetProperty)

int kr_cublas_version(void) {
    if (cublas_loaded()) return 0;
    int ma = 0, mi = 0, pa = 0;
    if (cublasGetProperty(MAJOR_VERSION, &ma) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &mi) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &pa) == CUBLAS_STATUS_SUCCESS)
        return ma * 10000 + mi * 100 + pa;
    return 0;
}

/* The handle with the context it belongs to, so that the destructor can tell whether the
 * device is still usable. The context is not retained: it owns this, and runs the destructor
 * before it is freed. */
typedef struct {
    cublasHandle_t h;
    kr_context *ctx;
} handle_ext;

static void handle_dtor(void *p) {
    handle_ext *e = p;
    /* after a sticky error every call fails (or worse); the resources go with the process */
    if (!kr_context_broken(e->ctx)) cublasDestroy(e->h);
    free(e);
}

/* A failed cuBLAS call. cuBLAS says EXECUTION_FAILED when the CUDA context has already died
 * (a fault in an earlier kernel, not yet seen by a sync); that is reported as the CUDA error,
 * which marks the context broken. */
static kr_status cublas_fail(kr_context *ctx, cublasStatus_t st, const char *call, int line) {
    cudaError_t e = cudaPeekAtLastError();
    if (e != cudaSuccess) {
        kr_status s = kr_cuda_check(ctx, (int)e, call, __FILE__, line);
        if (s == KR_ERR_BROKEN) return s;
        (void)cudaGetLastError(); /* not sticky: clear it so that later calls do not see it */
        return kr_set_error(ctx, KR_ERR_CUBLAS, __FILE__, line, "%s: %s (%s; CUDA: %s)", call,
                            cublasGetStatusName(st), cublasGetStatusString(st),
                            cudaGetErrorName(e));
    }
    return kr_set_error(ctx, KR_ERR_CUBLAS, __FILE__, line, "%s: %s (%s)", call,
                        cublasGetStatusName(st), cublasGetStatusString(st));
}

kr_status kr_cublas_handle(kr_context *ctx, void **handle) {
    *handle = NULL;
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "cuBLAS's handle");
    handle_ext *e = kr_context_ext(ctx, KR_EXT_CUBLAS);
    if (e) {
        *handle = e->h;
        return KR_OK;
    }
    const char *why = cublas_loaded();
    if (why) return KR_ERROR(ctx, KR_ERR_CUBLAS, "%s", why);
    e = calloc(1, sizeof *e);
    if (!e) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    e->ctx = ctx;
    cublasStatus_t st = cublasCreate(&e->h);
    if (st != CUBLAS_STATUS_SUCCESS) {
        free(e);
        return cublas_fail(ctx, st, "cublasCreate", __LINE__);
    }
    const char *call = "cublasSetStream";
    st = cublasSetStream(e->h, (cudaStream_t)kr_context_stream(ctx));
    /* Set explicitly rather than trusting the defaults, which environment variables and
     * future cuBLAS versions may change: default math (no TF32, no BF16x9 or fixed-point
     * emulation) and f16/bf16 split-K partial sums kept in fp32, not rounded to the output
     * type in between. */
    if (st == CUBLAS_STATUS_SUCCESS) {
        call = "cublasSetMathMode";
        st = cublasSetMathMode(e->h, (cublasMath_t)(CUBLAS_DEFAULT_MATH |
                                                    CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
    }
    if (st == CUBLAS_STATUS_SUCCESS) {
        call = "cublasSetPointerMode";
        st = cublasSetPointerMode(e->h, CUBLAS_POINTER_MODE_HOST);
    }
    if (st == CUBLAS_STATUS_SUCCESS) {
        call = "cublasSetAtomicsMode"; /* atomics would make results differ run to run */
        st = cublasSetAtomicsMode(e->h, CUBLAS_ATOMICS_NOT_ALLOWED);
    }
    if (st != CUBLAS_STATUS_SUCCESS) {
        s = cublas_fail(ctx, st, call, __LINE__);
        cublasDestroy(e->h);
        free(e);
        return s;
    }
    kr_context_set_ext(ctx, KR_EXT_CUBLAS, e, handle_dtor);
    *handle = e->h;
    return KR_OK;
}

/* ---- argument checks ---- */

/* "A is 4x5", or "A^T is 5x4 (A is 4x5)" */
static const char *describe(char *buf, size_t n, const char *name, const kr_tensor *t,
                            int trans) {
    char st[96], op[96];
    kr_shape_str(st, sizeof st, t->ndim, t->shape);
    if (!trans) {
        snprintf(buf, n, "%s is %s", name, st);
        return buf;
    }
    int64_t sh[KR_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) sh[i] = t->shape[i];
    sh[t->ndim - 2] = t->shape[t->ndim - 1];
    sh[t->ndim - 1] = t->shape[t->ndim - 2];
    kr_shape_str(op, sizeof op, t->ndim, sh);
    snprintf(buf, n, "%s^T is %s (%s is %s)", name, op, name, st);
    return buf;
}

static kr_status check_tensor(kr_context *ctx, const kr_tensor *t, const char *name) {
    if (!kr_tensor_live(t)) return KR_ERROR(ctx, KR_ERR_ARG, "gemm: %s has been freed", name);
    if (kr_tensor_context(t) != ctx)
        return KR_ERROR(ctx, KR_ERR_ARG, "gemm: %s belongs to another context", name);
    if (t->ndim != 2 && t->ndim != 3) {
        char st[96];
        return KR_ERROR(ctx, KR_ERR_ARG,
                        "gemm: %s is %d-D (shape [%s]); gemm takes 2-D matrices or 3-D batches "
                        "[batch, rows, cols]", name, t->ndim, kr_shape_str(st, sizeof st, t->ndim, t->shape));
    }
    return KR_OK;
}

static kr_status fits_int(kr_context *ctx, int64_t v, const char *what) {
    if (v > INT_MAX)
        return KR_ERROR(ctx, KR_ERR_ARG,
                        "gemm: %s is %lld, beyond the %d that cuBLAS's int arguments hold", what,
                        (long long)v, INT_MAX);
    return KR_OK;
}

static int overlap(const kr_tensor *x, const kr_tensor *y) {
    uintptr_t px = (uintptr_t)kr_tensor_data(x), py = (uintptr_t)kr_tensor_data(y);
    size_t nx = kr_tensor_nbytes(x), ny = kr_tensor_nbytes(y);
    return nx && ny && px < py + ny && py < px + nx;
}

static const char *compute_name(cublasComputeType_t c) {
    switch (c) {
    case CUBLAS_COMPUTE_64F: return "CUBLAS_COMPUTE_64F";
    case CUBLAS_COMPUTE_32F: return "CUBLAS_COMPUTE_32F";
    case CUBLAS_COMPUTE_32F_PEDANTIC: return "CUBLAS_COMPUTE_32F_PEDANTIC";
    case CUBLAS_COMPUTE_32F_FAST_TF32: return "CUBLAS_COMPUTE_32F_FAST_TF32";
    default: return "?";
    }
}

/* ---- gemm on the host device ---- */

/* op(X)'s elements of one matrix as doubles, row-major [rows, cols] into out; X is stored
 * [rows, cols], or [cols, rows] when trans. */
static void load_op(double *out, const void *x, kr_dtype dt, size_t base, int64_t rows,
                    int64_t cols, int trans) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            size_t at = base + (size_t)(trans ? c * rows + r : r * cols + c);
            out[r * cols + c] = kr_host_get(x, dt, at);
        }
}

/* C = alpha * op(A) @ op(B) + beta * C on the CPU: products summed in double in increasing k,
 * then alpha and beta (as float below f64, as cuBLAS takes them) applied in double and the
 * result rounded once to C's dtype (nearest even). As in BLAS, C is not read when beta is 0, and
 * A and B are not read when alpha is 0. TF32 is ignored: an f32 product with tf32 is the same
 * as without. */
static kr_status host_gemm(kr_context *ctx, kr_tensor *c, const kr_tensor *a, const kr_tensor *b,
                           const kr_gemm_opts *o, int64_t m, int64_t n, int64_t k,
                           int64_t batch, int64_t ba, int64_t bb) {
    kr_dtype dt = a->dtype;
    double alpha = dt == KR_F64 ? o->alpha : (double)(float)o->alpha;
    double beta = dt == KR_F64 ? o->beta : (double)(float)o->beta;
    double *ad = NULL, *bd = NULL, *acc = malloc(sizeof(double) * (size_t)n);
    if (alpha != 0 && k > 0) {
        ad = malloc(sizeof(double) * (size_t)(m * k));
        bd = malloc(sizeof(double) * (size_t)(k * n));
    }
    if (!acc || (alpha != 0 && k > 0 && (!ad || !bd))) {
        free(ad);
        free(bd);
        free(acc);
        return KR_ERROR(ctx, KR_ERR_NOMEM, "gemm: out of host memory for a %lldx%lldx%lld "
                        "product on the host device", (long long)m, (long long)n, (long long)k);
    }
    const void *pa = kr_tensor_data(a), *pb = kr_tensor_data(b);
    void *pc = kr_tensor_data(c);
    int64_t loaded_a = -1, loaded_b = -1;
    for (int64_t z = 0; z < batch; z++) {
        int64_t za = ba == 1 ? 0 : z, zb = bb == 1 ? 0 : z;
        if (ad && za != loaded_a) {
            load_op(ad, pa, dt, (size_t)(za * m * k), m, k, o->trans_a);
            loaded_a = za;
        }
        if (bd && zb != loaded_b) {
            load_op(bd, pb, dt, (size_t)(zb * k * n), k, n, o->trans_b);
            loaded_b = zb;
        }
        size_t cbase = (size_t)(z * m * n);
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) acc[j] = 0;
            if (ad)
                for (int64_t p = 0; p < k; p++) {
                    double x = ad[i * k + p];
                    const double *row = bd + p * n;
                    for (int64_t j = 0; j < n; j++) acc[j] += x * row[j];
                }
            for (int64_t j = 0; j < n; j++) {
                size_t at = cbase + (size_t)(i * n + j);
                double v = alpha * acc[j];
                if (beta != 0) v += beta * kr_host_get(pc, dt, at);
                kr_host_set(pc, dt, at, v);
            }
        }
    }
    free(ad);
    free(bd);
    free(acc);
    kr_context_note_launch(ctx, "host gemm");
    return KR_OK;
}

/* ---- gemm ---- */

/* The cuBLAS data and compute types of a gemm at `dtype` (o->tf32: f32's tensor-core mode). */
static kr_status gemm_types(kr_context *ctx, kr_dtype dtype, const kr_gemm_opts *o,
                            cudaDataType *dt, cublasComputeType_t *ct) {
    switch (dtype) {
    case KR_F64: *dt = CUDA_R_64F; *ct = CUBLAS_COMPUTE_64F; break;
    /* pedantic rather than plain 32F: standard fp32 arithmetic whatever the math mode says */
    case KR_F32: *dt = CUDA_R_32F; *ct = o->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                 : CUBLAS_COMPUTE_32F_PEDANTIC; break;
    case KR_F16: *dt = CUDA_R_16F; *ct = CUBLAS_COMPUTE_32F; break;
    case KR_BF16: *dt = CUDA_R_16BF; *ct = CUBLAS_COMPUTE_32F; break;
    default:
        return KR_ERROR(ctx, KR_ERR_ARG, "gemm: dtype %s is not supported (f64, f32, f16, bf16)",
                        kr_dtype_name(dtype));
    }
    if (o->tf32 && dtype != KR_F32)
        return KR_ERROR(ctx, KR_ERR_ARG, "gemm: tf32 applies to f32 only, and the tensors are %s",
                        kr_dtype_name(dtype));
    return KR_OK;
}

/* The checked gemm on the device: one cuBLAS call (a batch: strided, a batch of 1 in A or B
 * used for every matrix of C), its failure described with the call's arguments. */
static kr_status gemm_call(kr_context *ctx, void *hp, kr_tensor *c, const kr_tensor *a,
                           const kr_tensor *b, const kr_gemm_opts *o, cudaDataType dt,
                           cublasComputeType_t ct, int64_t m, int64_t n, int64_t k, int64_t lda,
                           int64_t ldb, int64_t ldc, int64_t batch, int64_t ba, int64_t bb) {
    cublasHandle_t h = hp;
    int d = a->ndim - 2;
    /* Row-major X is column-major X^T, so C^T = op(B)^T op(A)^T is a column-major GEMM with the
     * operands swapped: B first (n x k), then A (k x m), no layout change at all. */
    cublasOperation_t opb = o->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opa = o->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    double alpha64 = o->alpha, beta64 = o->beta;
    float alpha32 = (float)o->alpha, beta32 = (float)o->beta;
    const void *alpha = a->dtype == KR_F64 ? (const void *)&alpha64 : (const void *)&alpha32;
    const void *beta = a->dtype == KR_F64 ? (const void *)&beta64 : (const void *)&beta32;
    cublasStatus_t st;
    const char *fn;
    if (!d) {
        fn = "cublasGemmEx";
        st = cublasGemmEx(h, opb, opa, (int)n, (int)m, (int)k, alpha, kr_tensor_data(b), dt,
                          (int)ldb, kr_tensor_data(a), dt, (int)lda, beta, kr_tensor_data(c), dt,
                          (int)ldc, ct, CUBLAS_GEMM_DEFAULT);
    } else {
        fn = "cublasGemmStridedBatchedEx";
        long long sa = ba == 1 ? 0 : (long long)(a->shape[1] * a->shape[2]);
        long long sb = bb == 1 ? 0 : (long long)(b->shape[1] * b->shape[2]);
        long long sc = (long long)(m * n);
        st = cublasGemmStridedBatchedEx(h, opb, opa, (int)n, (int)m, (int)k, alpha,
                                        kr_tensor_data(b), dt, (int)ldb, sb, kr_tensor_data(a),
                                        dt, (int)lda, sa, beta, kr_tensor_data(c), dt, (int)ldc,
                                        sc, (int)batch, ct, CUBLAS_GEMM_DEFAULT);
    }
    if (st != CUBLAS_STATUS_SUCCESS) {
        char call[512];
        snprintf(call, sizeof call,
                 "%s(%c, %c, n=%lld, m=%lld, k=%lld, ldb=%lld, lda=%lld, ldc=%lld, batch=%lld, "
                 "%s, %s) for C[%lld,%lld] = %s @ %s",
                 fn, o->trans_b ? 'T' : 'N', o->trans_a ? 'T' : 'N', (long long)n, (long long)m,
                 (long long)k, (long long)ldb, (long long)lda, (long long)ldc, (long long)batch,
                 kr_dtype_name(a->dtype), compute_name(ct), (long long)m, (long long)n,
                 o->trans_a ? "A^T" : "A", o->trans_b ? "B^T" : "B");
        return cublas_fail(ctx, st, call, __LINE__);
    }
    return KR_OK;
}

kr_status kr_cublas_gemm(kr_context *ctx, kr_tensor *c, const kr_tensor *a, const kr_tensor *b,
                         const kr_gemm_opts *o) {
    static const kr_gemm_opts defaults = KR_GEMM_OPTS_DEFAULT;
    if (!o) o = &defaults;
    kr_status s;
    if ((s = check_tensor(ctx, a, "A")) != KR_OK || (s = check_tensor(ctx, b, "B")) != KR_OK ||
        (s = check_tensor(ctx, c, "C")) != KR_OK)
        return s;
    if (a->ndim != b->ndim || a->ndim != c->ndim)
        return KR_ERROR(ctx, KR_ERR_ARG,
                        "gemm: A, B and C must all be 2-D or all be 3-D; A is %d-D, B is %d-D, "
                        "C is %d-D", a->ndim, b->ndim, c->ndim);
    if (a->dtype != b->dtype || a->dtype != c->dtype)
        return KR_ERROR(ctx, KR_ERR_ARG,
                        "gemm: A, B and C must have the same dtype; A is %s, B is %s, C is %s",
                        kr_dtype_name(a->dtype), kr_dtype_name(b->dtype),
                        kr_dtype_name(c->dtype));
    cudaDataType dt = CUDA_R_32F; /* set by gemm_types (initialised for the compiler's sake) */
    cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
    if ((s = gemm_types(ctx, a->dtype, o, &dt, &ct)) != KR_OK) return s;

    /* op(A) is m x k, op(B) is k x n; the last two dimensions are the matrix */
    int d = a->ndim - 2;
    int64_t m = o->trans_a ? a->shape[d + 1] : a->shape[d];
    int64_t ka = o->trans_a ? a->shape[d] : a->shape[d + 1];
    int64_t kb = o->trans_b ? b->shape[d + 1] : b->shape[d];
    int64_t n = o->trans_b ? b->shape[d] : b->shape[d + 1];
    char da[256], db[256], dc[96], dp[96];
    if (ka != kb)
        return KR_ERROR(ctx, KR_ERR_ARG, "gemm: %s but %s: inner sizes %lld and %lld differ",
                        describe(da, sizeof da, "A", a, o->trans_a),
                        describe(db, sizeof db, "B", b, o->trans_b), (long long)ka,
                        (long long)kb);
    int64_t k = ka;
    int64_t batch = d ? c->shape[0] : 1, ba = d ? a->shape[0] : 1, bb = d ? b->shape[0] : 1;
    if (d && ((ba != batch && ba != 1) || (bb != batch && bb != 1) ||
              batch != (ba > bb ? ba : bb)))
        return KR_ERROR(ctx, KR_ERR_ARG,
                        "gemm: batch sizes differ: A is %s, B is %s, C is %s (C's batch is the "
                        "larger of A's and B's; the other may be 1, to be used for every matrix "
                        "of C)",
                        kr_shape_str(da, sizeof da, a->ndim, a->shape),
                        kr_shape_str(db, sizeof db, b->ndim, b->shape),
                        kr_shape_str(dc, sizeof dc, c->ndim, c->shape));
    if (c->shape[d] != m || c->shape[d + 1] != n) {
        int64_t want[3] = {batch, m, n};
        return KR_ERROR(ctx, KR_ERR_ARG, "gemm: C is %s but %s @ %s is %s",
                        kr_shape_str(dc, sizeof dc, c->ndim, c->shape), o->trans_a ? "A^T" : "A",
                        o->trans_b ? "B^T" : "B", kr_shape_str(dp, sizeof dp, c->ndim, want + (1 - d)));
    }
    /* Row-major leading dimensions are the stored row lengths. cuBLAS wants at least 1 even
     * for an empty matrix. */
    int64_t lda = a->shape[d + 1] > 1 ? a->shape[d + 1] : 1;
    int64_t ldb = b->shape[d + 1] > 1 ? b->shape[d + 1] : 1;
    int64_t ldc = n > 1 ? n : 1;
    if ((s = fits_int(ctx, m, "m (rows of C)")) != KR_OK ||
        (s = fits_int(ctx, n, "n (columns of C)")) != KR_OK ||
        (s = fits_int(ctx, k, "k (the inner size)")) != KR_OK ||
        (s = fits_int(ctx, lda, "the row length of A")) != KR_OK ||
        (s = fits_int(ctx, ldb, "the row length of B")) != KR_OK ||
        (s = fits_int(ctx, batch, "the batch size")) != KR_OK)
        return s;
    if (overlap(c, a) || overlap(c, b))
        return KR_ERROR(ctx, KR_ERR_ARG, "gemm: C overlaps %s in memory; cuBLAS needs a separate "
                        "output", overlap(c, a) ? "A" : "B");

    if ((s = kr_context_require(ctx)) != KR_OK) return s;
    if (m == 0 || n == 0 || batch == 0) return KR_OK; /* nothing to write */
    if (kr_context_is_host(ctx)) return host_gemm(ctx, c, a, b, o, m, n, k, batch, ba, bb);
    void *hp;
    if ((s = kr_cublas_handle(ctx, &hp)) != KR_OK) return s;

    if ((s = gemm_call(ctx, hp, c, a, b, o, dt, ct, m, n, k, lda, ldb, ldc, batch, ba, bb)) != KR_OK)
        return s;
    kr_context_note_launch(ctx, "cublas gemm");
    return KR_OK;
}
