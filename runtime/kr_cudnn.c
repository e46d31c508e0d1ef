/* kr_cudnn.c: cuDNN 9 loaded by dlopen from the path the caller gives, the context's handle, and
 * forward and transposed convolutions through cuDNN's legacy API with plans cached per
 * descriptor. Runtime layer (no Lua). Every argument is checked on the host before the device
 * is touched, so a shape mistake reads as such and not as CUDNN_STATUS_BAD_PARAM. */
#define _GNU_SOURCE /* dladdr, dlinfo */
#include "kr_cudnn.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<cudnn.h>)
#define KR_HAVE_CUDNN_H 1
#endif
#endif

#ifndef KR_HAVE_CUDNN_H
/* Built where cuDNN's headers are missing (they come with cuDNN, not with every CUDA toolkit):
 * everything says so, and the convolutions' callers use their own kernels. */
static const char no_headers[] = "kreach was built without cuDNN's headers (cudnn.h), so it "
                                 "cannot use cuDNN";
kr_status kr_cudnn_load(kr_context *ctx, const char *path) {
    (void)path;
    return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s", no_headers);
}
int kr_cudnn_version(void) { return 0; }
int kr_cudnn_path(char *out, size_t n) { (void)out; (void)n; return -1; }
kr_status kr_cudnn_preload(kr_context *ctx) {
    return KR_ERROR(ctx, KR_ERR_ARG, "%s", no_headers);
}
kr_status kr_cudnn_conv(kr_context *ctx, const kr_cudnn_conv_desc *d, const kr_tensor *x,
                        const kr_tensor *w, kr_tensor *y, const kr_tensor *bias,
                        kr_cudnn_conv_info *info) {
    (void)d; (void)x; (void)w; (void)y; (void)bias; (void)info;
    return KR_ERROR(ctx, KR_ERR_ARG, "%s", no_headers);
}
void kr_cudnn_get_stats(kr_context *ctx, kr_cudnn_stats *out) {
    (void)ctx;
    memset(out, 0, sizeof *out);
}
#else

#include <cudnn.h>

/* ---- cuDNN, loaded from the path given ----
 * Like cuBLAS (kr_cublas.c), cuDNN is not linked: it is large, most runs never convolve, and
 * where it lives differs by machine (the toolkit's lib64 here, only PyTorch's pip package on the
 * GPU machine), which is policy (scripts/kreach/cudnn.lua). The functions used are called
 * through this table; the names below resolve to it. Only entry points that every cuDNN 9 has. */
#define KR_CUDNN_FUNCTIONS(X)                                                                   \
    X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnGetLastErrorString) X(cudnnCreate)         \
    X(cudnnDestroy) X(cudnnSetStream) X(cudnnCreateTensorDescriptor)                            \
    X(cudnnDestroyTensorDescriptor) X(cudnnSetTensorNdDescriptor)                               \
    X(cudnnCreateFilterDescriptor) X(cudnnDestroyFilterDescriptor) X(cudnnSetFilterNdDescriptor) \
    X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyConvolutionDescriptor)                    \
    X(cudnnSetConvolutionNdDescriptor) X(cudnnSetConvolutionGroupCount)                         \
    X(cudnnSetConvolutionMathType) X(cudnnGetConvolutionForwardAlgorithmMaxCount)               \
    X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnGetConvolutionForwardWorkspaceSize)        \
    X(cudnnConvolutionForward) X(cudnnGetConvolutionBackwardDataAlgorithmMaxCount)              \
    X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                                              \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize) X(cudnnConvolutionBackwardData)             \
    X(cudnnAddTensor)

#define KR_CUDNN_MEMBER(name) __typeof__(&name) name;
static struct {
    KR_CUDNN_FUNCTIONS(KR_CUDNN_MEMBER)
} api;
#undef KR_CUDNN_MEMBER
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
static void *api_handle;       /* the loaded libcudnn.so.9; NULL while none is */
static char api_path[PATH_MAX]; /* its real path */

#define KR_STR_(x) #x
#define KR_STR(x) KR_STR_(x)
#define SONAME "libcudnn.so." KR_STR(CUDNN_MAJOR)

/* The path the loader used for the loaded library (not resolved: cuDNN finds its sub-libraries
 * beside it under the same name), or NULL. */
static const char *loaded_name(void) {
    Dl_info info;
    if (!api_handle || !dladdr((void *)api.cudnnGetVersion, &info) || !info.dli_fname) return NULL;
    return info.dli_fname;
}

kr_status kr_cudnn_load(kr_context *ctx, const char *path) {
    const char *shown = path ? path : SONAME;
    char real[PATH_MAX];
    pthread_mutex_lock(&api_lock);
    if (api_handle) {
        int same = !path || (realpath(path, real) && strcmp(real, api_path) == 0);
        pthread_mutex_unlock(&api_lock);
        if (same) return KR_OK;
        return KR_ERROR(ctx, KR_ERR_ARG,
                        "cuDNN is already loaded from %s; a process loads one cuDNN, not also %s",
                        api_path, path);
    }
    dlerror();
    void *h = dlopen(shown, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        pthread_mutex_unlock(&api_lock);
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "cannot load cuDNN (%s): %s", shown, e ? e : "?");
    }
    char missing[128] = "";
#define KR_CUDNN_LOAD(name)                                                                     \
    if (!missing[0]) {                                                                           \
        *(void **)&api.name = dlsym(h, #name);                                                   \
        if (!api.name) snprintf(missing, sizeof missing, "%s", #name);                           \
    }
    KR_CUDNN_FUNCTIONS(KR_CUDNN_LOAD)
#undef KR_CUDNN_LOAD
    kr_status s = KR_OK;
    if (missing[0]) {
        s = KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s is not cuDNN %d: it has no %s", shown, CUDNN_MAJOR,
                     missing);
    } else {
        size_t v = api.cudnnGetVersion();
        if (v / 10000 != CUDNN_MAJOR)
            s = KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s is cuDNN %zu.%zu.%zu; kreach uses cuDNN %d",
                         shown, v / 10000, v / 100 % 100, v % 100, CUDNN_MAJOR);
    }
    if (s == KR_OK) {
        api_handle = h;
        const char *name = loaded_name();
        if (!name || !realpath(name, api_path)) snprintf(api_path, sizeof api_path, "%s", shown);
    } else {
        memset(&api, 0, sizeof api);
        dlclose(h);
    }
    pthread_mutex_unlock(&api_lock);
    return s;
}

int kr_cudnn_version(void) {
    pthread_mutex_lock(&api_lock);
    int v = api_handle ? (int)api.cudnnGetVersion() : 0;
    pthread_mutex_unlock(&api_lock);
    return v;
}

int kr_cudnn_path(char *out, size_t n) {
    pthread_mutex_lock(&api_lock);
    int r = api_handle && snprintf(out, n, "%s", api_path) < (int)n ? 0 : -1;
    pthread_mutex_unlock(&api_lock);
    return r;
}

/* NULL when cuDNN is loaded (the table may be used), else why not */
static const char *not_loaded(void) {
    pthread_mutex_lock(&api_lock);
    void *h = api_handle;
    pthread_mutex_unlock(&api_lock);
    return h ? NULL : "cuDNN is not loaded (kreach.core.cudnn.load, or kreach.cudnn.available, first)";
}

#define cudnnGetVersion (api.cudnnGetVersion)
#define cudnnGetErrorString (api.cudnnGetErrorString)
#define cudnnGetLastErrorString (api.cudnnGetLastErrorString)
#define cudnnCreate (api.cudnnCreate)
#define cudnnDestroy (api.cudnnDestroy)
#define cudnnSetStream (api.cudnnSetStream)
#define cudnnCreateTensorDescriptor (api.cudnnCreateTensorDescriptor)
#define cudnnDestroyTensorDescriptor (api.cudnnDestroyTensorDescriptor)
#define cudnnSetTensorNdDescriptor (api.cudnnSetTensorNdDescriptor)
#define cudnnCreateFilterDescriptor (api.cudnnCreateFilterDescriptor)
#define cudnnDestroyFilterDescriptor (api.cudnnDestroyFilterDescriptor)
#define cudnnSetFilterNdDescriptor (api.cudnnSetFilterNdDescriptor)
#define cudnnCreateConvolutionDescriptor (api.cudnnCreateConvolutionDescriptor)
#define cudnnDestroyConvolutionDescriptor (api.cudnnDestroyConvolutionDescriptor)
#define cudnnSetConvolutionNdDescriptor (api.cudnnSetConvolutionNdDescriptor)
#define cudnnSetConvolutionGroupCount (api.cudnnSetConvolutionGroupCount)
#define cudnnSetConvolutionMathType (api.cudnnSetConvolutionMathType)
#define cudnnGetConvolutionForwardAlgorithmMaxCount (api.cudnnGetConvolutionForwardAlgorithmMaxCount)
#define cudnnGetConvolutionForwardAlgorithm_v7 (api.cudnnGetConvolutionForwardAlgorithm_v7)
#define cudnnGetConvolutionForwardWorkspaceSize (api.cudnnGetConvolutionForwardWorkspaceSize)
#define cudnnConvolutionForward (api.cudnnConvolutionForward)
#define cudnnGetConvolutionBackwardDataAlgorithmMaxCount                                        \
    (api.cudnnGetConvolutionBackwardDataAlgorithmMaxCount)
#define cudnnGetConvolutionBackwardDataAlgorithm_v7 (api.cudnnGetConvolutionBackwardDataAlgorithm_v7)
#define cudnnGetConvolutionBackwardDataWorkspaceSize                                            \
    (api.cudnnGetConvolutionBackwardDataWorkspaceSize)
#define cudnnConvolutionBackwardData (api.cudnnConvolutionBackwardData)
#define cudnnAddTensor (api.cudnnAddTensor)

/* ---- the context's state (slot KR_EXT_CUDNN): handle, plans, workspace ---- */

/* Everything a plan depends on; zeroed before it is filled, so memcmp compares it. */
typedef struct {
    int transposed, nsp, dtype, groups, has_bias;
    int64_t x[5], w[5], y[5];
    int stride[3], pad[3], dil[3], opad[3];
} plan_key;

typedef struct plan {
    struct plan *next;
    plan_key key;
    cudnnTensorDescriptor_t xd, yd, bd; /* transposed: xd is dy's, yd dx's (backward data) */
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    int algo;
    cudnnMathType_t math;
    size_t ws;
} plan;

/* Plans held per context; the least recently used goes beyond this (its descriptors only:
 * the workspace is shared). A problem sweep uses a few dozen shapes. */
#define MAX_PLANS 64

typedef struct {
    kr_context *ctx; /* not retained: it owns this and runs the destructor before it is freed */
    cudnnHandle_t h;
    plan *plans; /* most recently used first */
    int nplans;
    void *ws;
    size_t ws_bytes;
    unsigned long queries, hits;
} state;

static void plan_free(plan *p) {
    if (p->xd) cudnnDestroyTensorDescriptor(p->xd);
    if (p->yd) cudnnDestroyTensorDescriptor(p->yd);
    if (p->bd) cudnnDestroyTensorDescriptor(p->bd);
    if (p->wd) cudnnDestroyFilterDescriptor(p->wd);
    if (p->cd) cudnnDestroyConvolutionDescriptor(p->cd);
    free(p);
}

static void state_free(void *v) {
    state *st = v;
    for (plan *p = st->plans, *next; p; p = next) {
        next = p->next;
        plan_free(p); /* host objects: freed even after a sticky error */
    }
    /* after a sticky error every call fails (or worse); the resources go with the process */
    if (!kr_context_broken(st->ctx)) {
        if (st->h) cudnnDestroy(st->h);
        if (st->ws) cudaFree(st->ws);
    }
    free(st);
}

static state *get_state(kr_context *ctx) {
    state *st = kr_context_ext(ctx, KR_EXT_CUDNN);
    if (st) return st;
    st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->ctx = ctx;
    kr_context_set_ext(ctx, KR_EXT_CUDNN, st, state_free);
    return st;
}

void kr_cudnn_get_stats(kr_context *ctx, kr_cudnn_stats *out) {
    memset(out, 0, sizeof *out);
    state *st = kr_context_ext(ctx, KR_EXT_CUDNN);
    if (!st) return;
    out->heuristic_queries = st->queries;
    out->plan_hits = st->hits;
    out->plans = st->nplans;
    out->workspace_bytes = st->ws_bytes;
}

/* A failed cuDNN call, with cuDNN's status and its last message. A CUDA error underneath (a
 * fault in an earlier kernel, not yet seen by a sync) is reported as such: a sticky one marks
 * the context broken. */
static kr_status cudnn_fail(kr_context *ctx, cudnnStatus_t st, const char *call, int line) {
    char last[512] = "";
    cudnnGetLastErrorString(last, sizeof last);
    size_t n = strlen(last);
    while (n && (last[n - 1] == '\n' || last[n - 1] == ' ')) last[--n] = 0;
    cudaError_t e = cudaPeekAtLastError();
    if (e != cudaSuccess) {
        kr_status s = kr_cuda_check(ctx, (int)e, call, __FILE__, line);
        if (s == KR_ERR_BROKEN) return s;
        (void)cudaGetLastError(); /* not sticky: clear it so that later calls do not see it */
        return kr_set_error(ctx, KR_ERR_CUDNN, __FILE__, line, "%s: %s%s%s (CUDA: %s)", call,
                            cudnnGetErrorString(st), last[0] ? ": " : "", last,
                            cudaGetErrorName(e));
    }
    return kr_set_error(ctx, KR_ERR_CUDNN, __FILE__, line, "%s: %s%s%s", call,
                        cudnnGetErrorString(st), last[0] ? ": " : "", last);
}

#define CUDNN_TRY(ctx, call)                                                                    \
    do {                                                                                         \
        cudnnStatus_t st_ = (call);                                                              \
        if (st_ != CUDNN_STATUS_SUCCESS) return cudnn_fail((ctx), st_, #call, __LINE__);         \
    } while (0)

/* The context's handle, made on first use and bound to the harness stream. */
static kr_status get_handle(kr_context *ctx, state **out) {
    *out = NULL;
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    const char *why = not_loaded();
    if (why) return KR_ERROR(ctx, KR_ERR_ARG, "%s", why);
    state *st = get_state(ctx);
    if (!st) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    if (!st->h) {
        cudnnHandle_t h;
        CUDNN_TRY(ctx, cudnnCreate(&h));
        cudnnStatus_t e = cudnnSetStream(h, (cudaStream_t)kr_context_stream(ctx));
        if (e != CUDNN_STATUS_SUCCESS) {
            s = cudnn_fail(ctx, e, "cudnnSetStream", __LINE__);
            cudnnDestroy(h);
            return s;
        }
        st->h = h;
    }
    *out = st;
    return KR_OK;
}

/* ---- preloading, for the seal ---- */

/* cuDNN's precompiled engines open cuBLASLt on first use (and abort the process when they
 * cannot). Loaded now, it is found by its soname later. Searched as the engines' own dlopen
 * would search it (their run path, which names PyTorch's nvidia/cu13/lib and nvidia/cublas/lib
 * beside nvidia/cudnn/lib, then LD_LIBRARY_PATH and the system's directories: RTLD_DI_SERINFO),
 * then by its soname from here (kreach's run path, the loader's cache). */
static kr_status load_cublaslt(kr_context *ctx, void *engines) {
    char soname[64];
    snprintf(soname, sizeof soname, "libcublasLt.so.%d", CUDART_VERSION / 1000);
    if (dlopen(soname, RTLD_NOW | RTLD_NOLOAD)) return KR_OK; /* kreach's cuBLAS loaded it */
    Dl_serinfo size;
    if (dlinfo(engines, RTLD_DI_SERINFOSIZE, &size) == 0) {
        Dl_serinfo *si = malloc(size.dls_size);
        if (si && dlinfo(engines, RTLD_DI_SERINFOSIZE, si) == 0 &&
            dlinfo(engines, RTLD_DI_SERINFO, si) == 0) {
            for (unsigned i = 0; i < si->dls_cnt; i++) {
                char path[PATH_MAX + 64];
                snprintf(path, sizeof path, "%s/%s", si->dls_serpath[i].dls_name, soname);
                if (access(path, F_OK) == 0 && dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
                    free(si);
                    return KR_OK;
                }
            }
        }
        free(si);
    }
    dlerror();
    if (dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return KR_OK;
    const char *e = dlerror();
    return KR_ERROR(ctx, KR_ERR_NOTFOUND, "cannot load %s, which cuDNN's engines open on first "
                    "use: %s", soname, e ? e : "?");
}

kr_status kr_cudnn_preload(kr_context *ctx) {
    static const char *const subs[] = {"graph", "ops", "cnn", "engines_precompiled",
                                       "engines_runtime_compiled", "heuristic"};
    const char *why = not_loaded();
    if (why) return KR_ERROR(ctx, KR_ERR_ARG, "%s", why);
    pthread_mutex_lock(&api_lock);
    const char *name = loaded_name();
    char dir[PATH_MAX];
    int ok = name && snprintf(dir, sizeof dir, "%s", name) < (int)sizeof dir;
    pthread_mutex_unlock(&api_lock);
    char *slash = ok ? strrchr(dir, '/') : NULL;
    if (!slash)
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "cannot tell which directory cuDNN was loaded from");
    *slash = 0;
    void *engines = NULL;
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/libcudnn_%s.so.%d", dir, subs[i], CUDNN_MAJOR);
        if (access(path, F_OK) != 0) continue; /* not in every cuDNN 9 */
        dlerror();
        /* kept loaded for the process's life: cuDNN's own dlopen then finds it loaded */
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            return KR_ERROR(ctx, KR_ERR_NOTFOUND, "cannot load %s: %s", path, e ? e : "?");
        }
        if (strcmp(subs[i], "engines_precompiled") == 0) engines = h;
    }
    if (engines) {
        kr_status s = load_cublaslt(ctx, engines);
        if (s != KR_OK) return s;
    }
    if (kr_context_state(ctx) == 1) {
        state *st;
        kr_status s = get_handle(ctx, &st);
        if (s != KR_OK) return s;
    }
    return KR_OK;
}

/* ---- argument checks ---- */

static const char *dims(char *buf, size_t n, int ndim, const int64_t *shape) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < ndim && used < n; i++) {
        int w = snprintf(buf + used, n - used, i ? "x%lld" : "%lld", (long long)shape[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    return buf;
}

static kr_status check_tensor(kr_context *ctx, const char *op, const kr_tensor *t,
                              const char *name) {
    if (!kr_tensor_live(t)) return KR_ERROR(ctx, KR_ERR_ARG, "%s: %s has been freed", op, name);
    if (kr_tensor_context(t) != ctx)
        return KR_ERROR(ctx, KR_ERR_ARG, "%s: %s belongs to another context", op, name);
    if (kr_tensor_numel(t) > INT_MAX)
        return KR_ERROR(ctx, KR_ERR_ARG,
                        "%s: %s has %lld elements, beyond the %d that cuDNN's descriptors hold",
                        op, name, (long long)kr_tensor_numel(t), INT_MAX);
    return KR_OK;
}

static int overlap(const kr_tensor *a, const kr_tensor *b) {
    uintptr_t pa = (uintptr_t)kr_tensor_data(a), pb = (uintptr_t)kr_tensor_data(b);
    size_t na = kr_tensor_nbytes(a), nb = kr_tensor_nbytes(b);
    return na && nb && pa < pb + nb && pb < pa + na;
}

static const char *fwd_algo_name(int a) {
    switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
        return "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "CUDNN_CONVOLUTION_FWD_ALGO_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "CUDNN_CONVOLUTION_FWD_ALGO_DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "CUDNN_CONVOLUTION_FWD_ALGO_FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
        return "CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED";
    default: return "CUDNN_CONVOLUTION_FWD_ALGO_?";
    }
}

static const char *bwd_algo_name(int a) {
    switch (a) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "CUDNN_CONVOLUTION_BWD_DATA_ALGO_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "CUDNN_CONVOLUTION_BWD_DATA_ALGO_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING:
        return "CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED:
        return "CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED";
    default: return "CUDNN_CONVOLUTION_BWD_DATA_ALGO_?";
    }
}

static const char *math_name(cudnnMathType_t m) {
    switch (m) {
    case CUDNN_DEFAULT_MATH: return "CUDNN_DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "CUDNN_TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "CUDNN_FMA_MATH";
    default: return "?";
    }
}

/* Whether a math type the heuristics propose is one the dtype allows: at f32 no tensor cores
 * (TF32), at f16 and bf16 anything but converting the inputs to another type. */
static int math_allowed(cudnnDataType_t dt, cudnnMathType_t m) {
    if (dt == CUDNN_DATA_FLOAT) return m == CUDNN_FMA_MATH || m == CUDNN_DEFAULT_MATH;
    return m != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

/* Checks the arguments and fills the plan's key; y's expected shape goes in the message. */
static kr_status check_conv(kr_context *ctx, const kr_cudnn_conv_desc *d, const kr_tensor *x,
                            const kr_tensor *w, const kr_tensor *y, const kr_tensor *bias,
                            plan_key *k) {
    const char *op = d->transposed ? "conv_transpose" : "conv";
    kr_status s;
    if ((s = check_tensor(ctx, op, x, "x")) != KR_OK || (s = check_tensor(ctx, op, w, "w")) != KR_OK ||
        (s = check_tensor(ctx, op, y, "y")) != KR_OK ||
        (bias && (s = check_tensor(ctx, op, bias, "bias")) != KR_OK))
        return s;
    char sx[96], sw[96], sy[96], sb[96];
    dims(sx, sizeof sx, x->ndim, x->shape);
    dims(sw, sizeof sw, w->ndim, w->shape);
    dims(sy, sizeof sy, y->ndim, y->shape);
    if (x->ndim < 3 || x->ndim > 5)
        return KR_ERROR(ctx, KR_ERR_ARG,
                        "%s: x is %d-D (%s); expected 3-D [N, C, L], 4-D [N, C, H, W] or 5-D "
                        "[N, C, D, H, W]", op, x->ndim, sx);
    if (w->ndim != x->ndim || y->ndim != x->ndim)
        return KR_ERROR(ctx, KR_ERR_ARG, "%s: x is %s, w is %s and y is %s: all three must have "
                        "%d dimensions", op, sx, sw, sy, x->ndim);
    if (x->dtype != w->dtype || x->dtype != y->dtype || (bias && bias->dtype != x->dtype))
        return KR_ERROR(ctx, KR_ERR_ARG, "%s: x, w, y%s must have one dtype; x is %s, w is %s, "
                        "y is %s%s%s", op, bias ? " and bias" : "", kr_dtype_name(x->dtype),
                        kr_dtype_name(w->dtype), kr_dtype_name(y->dtype),
                        bias ? ", bias is " : "", bias ? kr_dtype_name(bias->dtype) : "");
    if (x->dtype != KR_F32 && x->dtype != KR_F16 && x->dtype != KR_BF16)
        return KR_ERROR(ctx, KR_ERR_ARG, "%s: dtype %s is not supported (f32, f16, bf16)", op,
                        kr_dtype_name(x->dtype));
    int nsp = x->ndim - 2;
    int g = d->groups;
    if (g < 1) return KR_ERROR(ctx, KR_ERR_ARG, "%s: groups is %d; expected at least 1", op, g);
    for (int i = 0; i < nsp; i++) {
        if (d->stride[i] < 1 || d->dilation[i] < 1 || d->padding[i] < 0 || d->output_padding[i] < 0)
            return KR_ERROR(ctx, KR_ERR_ARG,
                            "%s: spatial dimension %d has stride %d, padding %d, dilation %d, "
                            "output padding %d; expected stride >= 1, padding >= 0, dilation >= 1, "
                            "output padding >= 0", op, i + 1, d->stride[i], d->padding[i],
                            d->dilation[i], d->output_padding[i]);
        if (!d->transposed && d->output_padding[i] != 0)
            return KR_ERROR(ctx, KR_ERR_ARG, "%s: output padding applies to transposed "
                            "convolutions only (dimension %d has %d)", op, i + 1,
                            d->output_padding[i]);
        if (d->transposed && d->output_padding[i] >= d->stride[i] &&
            d->output_padding[i] >= d->dilation[i])
            return KR_ERROR(ctx, KR_ERR_ARG, "%s: output padding %d of dimension %d must be "
                            "smaller than its stride (%d) or its dilation (%d)", op,
                            d->output_padding[i], i + 1, d->stride[i], d->dilation[i]);
    }
    int64_t n = x->shape[0], cin = x->shape[1], cout;
    if (!d->transposed) {
        cout = w->shape[0];
        if (cin % g || cout % g || w->shape[1] * g != cin)
            return KR_ERROR(ctx, KR_ERR_ARG,
                            "%s: x is %s and w is %s with %d group%s: w must be [C_out, C_in/groups, "
                            "k...] with C_in (%lld) and C_out divisible by groups", op, sx, sw, g,
                            g == 1 ? "" : "s", (long long)cin);
    } else {
        cout = w->shape[1] * g;
        if (cin % g || w->shape[0] != cin)
            return KR_ERROR(ctx, KR_ERR_ARG,
                            "%s: x is %s and w is %s with %d group%s: w must be [C_in, "
                            "C_out/groups, k...] with C_in (%lld) divisible by groups", op, sx, sw,
                            g, g == 1 ? "" : "s", (long long)cin);
    }
    int64_t want[5] = {n, cout, 0, 0, 0};
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->shape[2 + i], kk = w->shape[2 + i];
        int64_t s_ = d->stride[i], p = d->padding[i], dl = d->dilation[i];
        int64_t span = dl * (kk - 1) + 1;
        if (!d->transposed) {
            if (in + 2 * p < span)
                return KR_ERROR(ctx, KR_ERR_ARG, "%s: spatial dimension %d: the input (%lld, "
                                "padded %lld) is smaller than the dilated kernel (%lld)", op, i + 1,
                                (long long)in, (long long)(in + 2 * p), (long long)span);
            want[2 + i] = (in + 2 * p - span) / s_ + 1;
        } else {
            want[2 + i] = (in - 1) * s_ - 2 * p + span + d->output_padding[i];
            if (want[2 + i] < 1)
                return KR_ERROR(ctx, KR_ERR_ARG, "%s: spatial dimension %d: the output size "
                                "would be %lld", op, i + 1, (long long)want[2 + i]);
        }
    }
    for (int i = 0; i < x->ndim; i++)
        if (y->shape[i] != want[i])
            return KR_ERROR(ctx, KR_ERR_ARG, "%s: y is %s but x %s and w %s give %s", op, sy, sx,
                            sw, dims(sb, sizeof sb, x->ndim, want));
    if (bias && (bias->ndim != 1 || bias->shape[0] != cout))
        return KR_ERROR(ctx, KR_ERR_ARG, "%s: bias is %s; expected 1-D [%lld] (C_out)", op,
                        dims(sb, sizeof sb, bias->ndim, bias->shape), (long long)cout);
    if (overlap(y, x) || overlap(y, w) || (bias && overlap(y, bias)))
        return KR_ERROR(ctx, KR_ERR_ARG, "%s: y overlaps %s in memory; cuDNN needs a separate "
                        "output", op, overlap(y, x) ? "x" : overlap(y, w) ? "w" : "bias");
    memset(k, 0, sizeof *k);
    k->transposed = d->transposed ? 1 : 0;
    k->nsp = nsp;
    k->dtype = (int)x->dtype;
    k->groups = g;
    k->has_bias = bias != NULL;
    for (int i = 0; i < x->ndim; i++) {
        k->x[i] = x->shape[i];
        k->w[i] = w->shape[i];
        k->y[i] = y->shape[i];
    }
    for (int i = 0; i < nsp; i++) {
        k->stride[i] = d->stride[i];
        k->pad[i] = d->padding[i];
        k->dil[i] = d->dilation[i];
        k->opad[i] = d->transposed ? d->output_padding[i] : 0;
    }
    return KR_OK;
}

/* ---- plans ---- */

static cudnnDataType_t data_type(int dtype) {
    switch ((kr_dtype)dtype) {
    case KR_F16: return CUDNN_DATA_HALF;
    case KR_BF16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
    }
}

/* A shape of the key as cuDNN's: 1-D becomes 2-D with a unit height. */
static int as_nd(const plan_key *k, const int64_t *shape, int *out) {
    out[0] = (int)shape[0];
    out[1] = (int)shape[1];
    if (k->nsp == 1) {
        out[2] = 1;
        out[3] = (int)shape[2];
        return 4;
    }
    for (int i = 0; i < k->nsp; i++) out[2 + i] = (int)shape[2 + i];
    return 2 + k->nsp;
}

static cudnnStatus_t set_tensor(cudnnTensorDescriptor_t t, cudnnDataType_t dt, int nd,
                                const int *dim) {
    int stride[5];
    stride[nd - 1] = 1;
    for (int i = nd - 2; i >= 0; i--) stride[i] = stride[i + 1] * dim[i + 1];
    return cudnnSetTensorNdDescriptor(t, dt, nd, dim, stride);
}

/* Makes the descriptors of a plan and asks the heuristics for its algorithm. */
static kr_status make_plan(kr_context *ctx, state *st, const plan_key *k, plan **out) {
    *out = NULL;
    plan *p = calloc(1, sizeof *p);
    if (!p) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    p->key = *k;
    cudnnDataType_t dt = data_type(k->dtype);
    int xd[5], wd[5], yd[5], bd[5];
    int nd = as_nd(k, k->x, xd);
    as_nd(k, k->w, wd);
    as_nd(k, k->y, yd);
    for (int i = 0; i < nd; i++) bd[i] = i == 1 ? yd[1] : 1;
    int pad[3], stride[3], dil[3], nsp = nd - 2;
    for (int i = 0, j = k->nsp == 1 ? -1 : 0; i < nsp; i++, j++) {
        pad[i] = j < 0 ? 0 : k->pad[j];
        stride[i] = j < 0 ? 1 : k->stride[j];
        dil[i] = j < 0 ? 1 : k->dil[j];
    }
    cudnnMathType_t want = dt == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
    kr_status s = KR_OK;
#define STEP(call)                                                                              \
    if (s == KR_OK) {                                                                            \
        cudnnStatus_t e_ = (call);                                                               \
        if (e_ != CUDNN_STATUS_SUCCESS) s = cudnn_fail(ctx, e_, #call, __LINE__);                \
    }
    STEP(cudnnCreateTensorDescriptor(&p->xd));
    STEP(cudnnCreateTensorDescriptor(&p->yd));
    STEP(cudnnCreateFilterDescriptor(&p->wd));
    STEP(cudnnCreateConvolutionDescriptor(&p->cd));
    STEP(set_tensor(p->xd, dt, nd, xd));
    STEP(set_tensor(p->yd, dt, nd, yd));
    STEP(cudnnSetFilterNdDescriptor(p->wd, dt, CUDNN_TENSOR_NCHW, nd, wd));
    /* fp32 accumulation at every dtype (f16 and bf16: "pseudo-half") */
    STEP(cudnnSetConvolutionNdDescriptor(p->cd, nsp, pad, stride, dil, CUDNN_CROSS_CORRELATION,
                                         CUDNN_DATA_FLOAT));
    STEP(cudnnSetConvolutionGroupCount(p->cd, k->groups));
    STEP(cudnnSetConvolutionMathType(p->cd, want));
    if (k->has_bias) {
        STEP(cudnnCreateTensorDescriptor(&p->bd));
        STEP(set_tensor(p->bd, dt, nd, bd));
    }
    if (s != KR_OK) {
        plan_free(p);
        return s;
    }
    /* the heuristics, fastest first: the first deterministic one that succeeds at an allowed
     * math type (a baseline that differs from call to call would blur the comparisons it is
     * used for), else the first that succeeds at all */
    int max = 0, got = 0, chosen = -1;
    cudnnMathType_t math = want;
    size_t ws = 0;
    st->queries++;
    if (!k->transposed) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT * 4];
        STEP(cudnnGetConvolutionForwardAlgorithmMaxCount(st->h, &max));
        if (max > (int)(sizeof perf / sizeof *perf)) max = (int)(sizeof perf / sizeof *perf);
        STEP(cudnnGetConvolutionForwardAlgorithm_v7(st->h, p->xd, p->wd, p->cd, p->yd, max, &got,
                                                    perf));
        for (int pass = 0; pass < 2 && chosen < 0; pass++)
            for (int i = 0; s == KR_OK && i < got && chosen < 0; i++)
                if (perf[i].status == CUDNN_STATUS_SUCCESS && math_allowed(dt, perf[i].mathType) &&
                    (pass == 1 || perf[i].determinism == CUDNN_DETERMINISTIC)) {
                    chosen = (int)perf[i].algo;
                    math = dt == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH : perf[i].mathType;
                    ws = perf[i].memory;
                }
    } else {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT * 4];
        STEP(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(st->h, &max));
        if (max > (int)(sizeof perf / sizeof *perf)) max = (int)(sizeof perf / sizeof *perf);
        STEP(cudnnGetConvolutionBackwardDataAlgorithm_v7(st->h, p->wd, p->xd, p->cd, p->yd, max,
                                                         &got, perf));
        for (int pass = 0; pass < 2 && chosen < 0; pass++)
            for (int i = 0; s == KR_OK && i < got && chosen < 0; i++)
                if (perf[i].status == CUDNN_STATUS_SUCCESS && math_allowed(dt, perf[i].mathType) &&
                    (pass == 1 || perf[i].determinism == CUDNN_DETERMINISTIC)) {
                    chosen = (int)perf[i].algo;
                    math = dt == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH : perf[i].mathType;
                    ws = perf[i].memory;
                }
    }
    if (s == KR_OK && chosen < 0) {
        char sx[96], sw[96];
        s = KR_ERROR(ctx, KR_ERR_CUDNN, "%s: cuDNN's heuristics list no algorithm for x %s, w %s "
                     "(%s) at %s (%d listed)", k->transposed ? "conv_transpose" : "conv",
                     dims(sx, sizeof sx, 2 + k->nsp, k->x), dims(sw, sizeof sw, 2 + k->nsp, k->w),
                     kr_dtype_name((kr_dtype)k->dtype), math_name(want), got);
    }
    p->algo = chosen;
    p->math = math;
    /* the algorithm runs at the math type chosen (at f32 always FMA: no TF32) */
    STEP(cudnnSetConvolutionMathType(p->cd, math));
    size_t need = 0;
    if (!k->transposed) {
        STEP(cudnnGetConvolutionForwardWorkspaceSize(st->h, p->xd, p->wd, p->cd, p->yd,
                                                     (cudnnConvolutionFwdAlgo_t)chosen, &need));
    } else {
        STEP(cudnnGetConvolutionBackwardDataWorkspaceSize(st->h, p->wd, p->xd, p->cd, p->yd,
                                                          (cudnnConvolutionBwdDataAlgo_t)chosen,
                                                          &need));
    }
#undef STEP
    if (s != KR_OK) {
        plan_free(p);
        return s;
    }
    p->ws = need > ws ? need : ws;
    *out = p;
    return KR_OK;
}

/* The context's workspace, at least `bytes`. Grown only when a new plan needs more: the
 * stream is synchronised first, since queued work may still use the old one. */
static kr_status reserve(kr_context *ctx, state *st, size_t bytes) {
    if (bytes <= st->ws_bytes) return KR_OK;
    kr_status s;
    if (st->ws) {
        if ((s = KR_CUDA(ctx, cudaStreamSynchronize((cudaStream_t)kr_context_stream(ctx)))) != KR_OK)
            return s;
        cudaFree(st->ws);
        st->ws = NULL;
        st->ws_bytes = 0;
    }
    cudaError_t e = cudaMalloc(&st->ws, bytes);
    if (e != cudaSuccess) {
        st->ws = NULL;
        size_t fr = 0, tot = 0;
        (void)cudaGetLastError(); /* an allocation failure is not sticky: clear it */
        cudaMemGetInfo(&fr, &tot);
        if (e == cudaErrorMemoryAllocation)
            return KR_ERROR(ctx, KR_ERR_NOMEM, "out of device memory for cuDNN's workspace: %zu "
                            "bytes asked for, %zu free of %zu", bytes, fr, tot);
        return KR_CUDA(ctx, e);
    }
    st->ws_bytes = bytes;
    return KR_OK;
}

/* The plan of a key: from the cache (moved to the front), else made and put there. */
static kr_status get_plan(kr_context *ctx, state *st, const plan_key *k, plan **out, int *cached) {
    plan **link = &st->plans;
    for (plan *p = st->plans; p; link = &p->next, p = p->next)
        if (memcmp(&p->key, k, sizeof *k) == 0) {
            *link = p->next;
            p->next = st->plans;
            st->plans = p;
            st->hits++;
            *out = p;
            *cached = 1;
            return KR_OK;
        }
    plan *p;
    kr_status s = make_plan(ctx, st, k, &p);
    if (s != KR_OK) return s;
    if ((s = reserve(ctx, st, p->ws)) != KR_OK) {
        plan_free(p);
        return s;
    }
    p->next = st->plans;
    st->plans = p;
    if (++st->nplans > MAX_PLANS) {
        plan **last = &st->plans;
        while ((*last)->next) last = &(*last)->next;
        plan_free(*last);
        *last = NULL;
        st->nplans--;
    }
    *out = p;
    *cached = 0;
    return KR_OK;
}

/* ---- convolution ---- */

kr_status kr_cudnn_conv(kr_context *ctx, const kr_cudnn_conv_desc *d, const kr_tensor *x,
                        const kr_tensor *w, kr_tensor *y, const kr_tensor *bias,
                        kr_cudnn_conv_info *info) {
    static const kr_cudnn_conv_desc defaults = KR_CUDNN_CONV_DESC_DEFAULT;
    if (!d) d = &defaults;
    if (info) memset(info, 0, sizeof *info);
    plan_key k;
    kr_status s = check_conv(ctx, d, x, w, y, bias, &k);
    if (s != KR_OK) return s;
    const char *op = d->transposed ? "conv_transpose" : "conv";
    const char *why = not_loaded();
    if (why) return KR_ERROR(ctx, KR_ERR_ARG, "%s: %s", op, why);
    if (kr_tensor_numel(y) == 0) return KR_OK; /* nothing to write */
    if (kr_tensor_numel(x) == 0 || kr_tensor_numel(w) == 0)
        return KR_ERROR(ctx, KR_ERR_ARG, "%s: x or w is empty but y is not; cuDNN takes no "
                        "empty tensors", op);
    state *st;
    if ((s = get_handle(ctx, &st)) != KR_OK) return s;
    plan *p;
    int cached = 0;
    if ((s = get_plan(ctx, st, &k, &p, &cached)) != KR_OK) return s;
    const float one = 1.0f, zero = 0.0f; /* float scaling at every dtype: the compute type */
    if (!k.transposed)
        CUDNN_TRY(ctx, cudnnConvolutionForward(st->h, &one, p->xd, kr_tensor_data(x), p->wd,
                                               kr_tensor_data(w), p->cd,
                                               (cudnnConvolutionFwdAlgo_t)p->algo, st->ws, p->ws,
                                               &zero, p->yd, kr_tensor_data(y)));
    else
        CUDNN_TRY(ctx, cudnnConvolutionBackwardData(st->h, &one, p->wd, kr_tensor_data(w), p->xd,
                                                    kr_tensor_data(x), p->cd,
                                                    (cudnnConvolutionBwdDataAlgo_t)p->algo, st->ws,
                                                    p->ws, &zero, p->yd, kr_tensor_data(y)));
    if (bias)
        CUDNN_TRY(ctx, cudnnAddTensor(st->h, &one, p->bd, kr_tensor_data(bias), &one, p->yd,
                                      kr_tensor_data(y)));
    kr_context_note_launch(ctx, "cudnn conv");
    if (info) {
        info->algo = p->algo;
        info->algo_name = k.transposed ? bwd_algo_name(p->algo) : fwd_algo_name(p->algo);
        info->math_name = math_name(p->math);
        info->workspace_bytes = p->ws;
        info->cached = cached;
    }
    return KR_OK;
}

#endif /* KR_HAVE_CUDNN_H */
