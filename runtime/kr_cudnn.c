/* kr_cudnn.c: cuDNN 9 loaded by dlopen from the path the caller gives, the context's handle and
 * state (slot KR_EXT_CUDNN), and preloading cuDNN's sub-libraries for the seal. Runtime layer
 * (no Lua). The convolutions, with their argument checks and plans, are in kr_cudnn_conv.c;
 * what the two share is in kr_cudnn_int.h. */
#define _GNU_SOURCE /* dladdr, dlinfo */
#include "kr_cudnn_int.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What loading cuDNN says on the host device (KREACH_DEVICE=host): kreach.cudnn.available()
 * reports it, and the convolutions take kreach's own kernels. */
static const char host_no_cudnn[] = "the host device has no cuDNN";

#ifndef KR_HAVE_CUDNN_H
/* Built where cuDNN's headers are missing (they come with cuDNN, not with every CUDA toolkit):
 * everything says so, and the convolutions' callers use their own kernels. */
static const char no_headers[] = "kreach was built without cuDNN's headers (cudnn.h), so it "
                                 "cannot use cuDNN";
kr_status kr_cudnn_load(kr_context *ctx, const char *path) {
    (void)path;
    if (kr_context_is_host(ctx)) return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s", host_no_cudnn);
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

kr_cudnn_api_table kr_cudnn_api;
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
    if (!api_handle || !dladdr((void *)cudnnGetVersion, &info) || !info.dli_fname) return NULL;
    return info.dli_fname;
}

kr_status kr_cudnn_load(kr_context *ctx, const char *path) {
    if (kr_context_is_host(ctx)) return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s", host_no_cudnn);
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
/* `name` expands to the table's member (kr_cudnn_int.h); #name stays cuDNN's symbol. */
#define KR_CUDNN_LOAD(name)                                                                     \
    if (!missing[0]) {                                                                           \
        *(void **)&name = dlsym(h, #name);                                                       \
        if (!name) snprintf(missing, sizeof missing, "%s", #name);                               \
    }
    KR_CUDNN_FUNCTIONS(KR_CUDNN_LOAD)
#undef KR_CUDNN_LOAD
    kr_status s = KR_OK;
    if (missing[0]) {
        s = KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s is not cuDNN %d: it has no %s", shown, CUDNN_MAJOR,
                     missing);
    } else {
        size_t v = cudnnGetVersion();
        if (v / 10000 != CUDNN_MAJOR)
            s = KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s is cuDNN %zu.%zu.%zu; kreach uses cuDNN %d",
                         shown, v / 10000, v / 100 % 100, v % 100, CUDNN_MAJOR);
    }
    if (s == KR_OK) {
        api_handle = h;
        const char *name = loaded_name();
        if (!name || !realpath(name, api_path)) snprintf(api_path, sizeof api_path, "%s", shown);
    } else {
        memset(&kr_cudnn_api, 0, sizeof kr_cudnn_api);
        dlclose(h);
    }
    pthread_mutex_unlock(&api_lock);
    return s;
}

int kr_cudnn_version(void) {
    pthread_mutex_lock(&api_lock);
    int v = api_handle ? (int)cudnnGetVersion() : 0;
    pthread_mutex_unlock(&api_lock);
    return v;
}

int kr_cudnn_path(char *out, size_t n) {
    pthread_mutex_lock(&api_lock);
    int r = api_handle && snprintf(out, n, "%s", api_path) < (int)n ? 0 : -1;
    pthread_mutex_unlock(&api_lock);
    return r;
}

const char *kr_cudnn_not_loaded(void) {
    pthread_mutex_lock(&api_lock);
    void *h = api_handle;
    pthread_mutex_unlock(&api_lock);
    return h ? NULL : "cuDNN is not loaded (kreach.core.cudnn.load, or kreach.cudnn.available, first)";
}

/* ---- the context's state (slot KR_EXT_CUDNN): handle, plans, workspace ---- */

void kr_cudnn_plan_free(plan *p) {
    if (p->yd) cudnnDestroyTensorDescriptor(p->yd);
    if (p->bd) cudnnDestroyTensorDescriptor(p->bd);
    for (int i = BD_COUNT - 1; i >= 0; i--)
        if (p->b[i]) cudnnBackendDestroyDescriptor(p->b[i]);
    free(p);
}

static void state_free(void *v) {
    state *st = v;
    for (plan *p = st->plans, *next; p; p = next) {
        next = p->next;
        kr_cudnn_plan_free(p); /* host objects: freed even after a sticky error */
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

kr_status kr_cudnn_fail(kr_context *ctx, cudnnStatus_t st, const char *call, const char *file,
                        int line) {
    char last[512] = "";
    cudnnGetLastErrorString(last, sizeof last);
    size_t n = strlen(last);
    while (n && (last[n - 1] == '\n' || last[n - 1] == ' ')) last[--n] = 0;
    cudaError_t e = cudaPeekAtLastError();
    if (e != cudaSuccess) {
        kr_status s = kr_cuda_check(ctx, (int)e, call, file, line);
        if (s == KR_ERR_BROKEN) return s;
        (void)cudaGetLastError(); /* not sticky: clear it so that later calls do not see it */
        return kr_set_error(ctx, KR_ERR_CUDNN, file, line, "%s: %s%s%s (CUDA: %s)", call,
                            cudnnGetErrorString(st), last[0] ? ": " : "", last,
                            cudaGetErrorName(e));
    }
    return kr_set_error(ctx, KR_ERR_CUDNN, file, line, "%s: %s%s%s", call,
                        cudnnGetErrorString(st), last[0] ? ": " : "", last);
}

kr_status kr_cudnn_get_handle(kr_context *ctx, state **out) {
    *out = NULL;
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    const char *why = kr_cudnn_not_loaded();
    if (why) return KR_ERROR(ctx, KR_ERR_ARG, "%s", why);
    state *st = get_state(ctx);
    if (!st) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    if (!st->h) {
        cudnnHandle_t h;
        CUDNN_TRY(ctx, cudnnCreate(&h));
        cudnnStatus_t e = cudnnSetStream(h, (cudaStream_t)kr_context_stream(ctx));
        if (e != CUDNN_STATUS_SUCCESS) {
            s = kr_cudnn_fail(ctx, e, "cudnnSetStream", __FILE__, __LINE__);
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
    const char *why = kr_cudnn_not_loaded();
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
        kr_status s = kr_cudnn_get_handle(ctx, &st);
        if (s != KR_OK) return s;
    }
    return KR_OK;
}

#endif /* KR_HAVE_CUDNN_H */
