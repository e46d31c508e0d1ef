/* kr_cudnn_int.h: what kr_cudnn.c (loading, the context's handle and state, preloading) and
 * kr_cudnn_conv.c (argument checks, plans, convolutions) share: the table of cuDNN's entry
 * points, the per-context state with its plans, and the error path. Private to those two
 * files: runtime layer, not part of the public API (kr_cudnn.h). */
#ifndef KR_CUDNN_INT_H
#define KR_CUDNN_INT_H

#include "kr_cudnn.h"

#if defined(__has_include)
#if __has_include(<cudnn.h>)
#define KR_HAVE_CUDNN_H 1
#endif
#endif

#ifdef KR_HAVE_CUDNN_H

#include <cudnn.h>

/* ---- cuDNN, loaded from the path given ----
 * Like cuBLAS (kr_cublas.c), cuDNN is not linked: it is large, most runs never convolve, and
 * where it lives differs by machine (the toolkit's lib64 here, only PyTorch's pip package on the
 * GPU machine), which is policy (scripts/kreach/cudnn.lua). The functions used are called
 * through this table; the names below resolve to it. Only entry points that every cuDNN 9 has. */
#define KR_CUDNN_FUNCTIONS(X)                                                                   \
    X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnGetLastErrorString) X(cudnnCreate)         \
    X(cudnnDestroy) X(cudnnSetStream) X(cudnnCreateTensorDescriptor)                            \
    X(cudnnDestroyTensorDescriptor) X(cudnnSetTensorNdDescriptor) X(cudnnAddTensor)             \
    X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor)                            \
    X(cudnnBackendSetAttribute) X(cudnnBackendGetAttribute) X(cudnnBackendFinalize)             \
    X(cudnnBackendExecute)

#define KR_CUDNN_MEMBER(name) __typeof__(&name) name;
typedef struct {
    KR_CUDNN_FUNCTIONS(KR_CUDNN_MEMBER)
} kr_cudnn_api_table;
#undef KR_CUDNN_MEMBER
/* Defined in kr_cudnn.c, filled by kr_cudnn_load. Declared before the names below resolve to
 * it, so that the struct's members keep cuDNN's names. */
extern kr_cudnn_api_table kr_cudnn_api;

#define cudnnGetVersion (kr_cudnn_api.cudnnGetVersion)
#define cudnnGetErrorString (kr_cudnn_api.cudnnGetErrorString)
#define cudnnGetLastErrorString (kr_cudnn_api.cudnnGetLastErrorString)
#define cudnnCreate (kr_cudnn_api.cudnnCreate)
#define cudnnDestroy (kr_cudnn_api.cudnnDestroy)
#define cudnnSetStream (kr_cudnn_api.cudnnSetStream)
#define cudnnCreateTensorDescriptor (kr_cudnn_api.cudnnCreateTensorDescriptor)
#define cudnnDestroyTensorDescriptor (kr_cudnn_api.cudnnDestroyTensorDescriptor)
#define cudnnSetTensorNdDescriptor (kr_cudnn_api.cudnnSetTensorNdDescriptor)
#define cudnnBackendCreateDescriptor (kr_cudnn_api.cudnnBackendCreateDescriptor)
#define cudnnBackendDestroyDescriptor (kr_cudnn_api.cudnnBackendDestroyDescriptor)
#define cudnnBackendSetAttribute (kr_cudnn_api.cudnnBackendSetAttribute)
#define cudnnBackendGetAttribute (kr_cudnn_api.cudnnBackendGetAttribute)
#define cudnnBackendFinalize (kr_cudnn_api.cudnnBackendFinalize)
#define cudnnBackendExecute (kr_cudnn_api.cudnnBackendExecute)
#define cudnnAddTensor (kr_cudnn_api.cudnnAddTensor)

/* ---- the context's state (slot KR_EXT_CUDNN): handle, plans, workspace ---- */

/* Everything a plan depends on; zeroed before it is filled, so memcmp compares it. */
typedef struct {
    int transposed, nsp, dtype, groups, has_bias;
    int64_t x[5], w[5], y[5];
    int stride[3], pad[3], dil[3], opad[3];
    int align; /* the byte alignment all of x, w and y have (16 at most) */
    int select; /* KR_CUDNN_SELECT_* */
} plan_key;

/* The backend descriptors a plan holds, destroyed in reverse order. */
enum { BD_X, BD_W, BD_Y, BD_CONV, BD_OP, BD_GRAPH, BD_ENG, BD_CFG, BD_PLAN, BD_COUNT };

typedef struct plan {
    struct plan *next;
    plan_key key;
    cudnnTensorDescriptor_t yd, bd; /* for the bias (cudnnAddTensor) */
    cudnnBackendDescriptor_t b[BD_COUNT];
    int64_t engine;   /* the engine's global index */
    int tensor_cores; /* its numerical notes */
    char name[96];
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

void kr_cudnn_plan_free(plan *p);

/* NULL when cuDNN is loaded (the table may be used), else why not */
const char *kr_cudnn_not_loaded(void);

/* A failed cuDNN call, with cuDNN's status and its last message. A CUDA error underneath (a
 * fault in an earlier kernel, not yet seen by a sync) is reported as such: a sticky one marks
 * the context broken. */
kr_status kr_cudnn_fail(kr_context *ctx, cudnnStatus_t st, const char *call, const char *file,
                        int line);

#define CUDNN_TRY(ctx, call)                                                                    \
    do {                                                                                         \
        cudnnStatus_t st_ = (call);                                                              \
        if (st_ != CUDNN_STATUS_SUCCESS)                                                         \
            return kr_cudnn_fail((ctx), st_, #call, __FILE__, __LINE__);                         \
    } while (0)

/* The context's handle, made on first use and bound to the harness stream; *out is the
 * context's state (NULL on failure, the context holding the reason). */
kr_status kr_cudnn_get_handle(kr_context *ctx, state **out);

#endif /* KR_HAVE_CUDNN_H */
#endif /* KR_CUDNN_INT_H */
