/* kr_timing.c: the L2 flush and CUDA-graph capture under the timing engine.
 * Runtime layer (no Lua). The flush buffer lives with the context (slot KR_EXT_TIMING) so that
 * it is allocated once, outside any timed region, and freed with the context. */
#include "kr_timing.h"
#include "kr_kernels.h"

#include <cuda_runtime.h>
#include <stdlib.h>

typedef struct {
    void *buf;
    size_t bytes;
    unsigned flips; /* the value written alternates, so no flush writes what is already there */
} flush_state;

static void flush_free(void *p) {
    flush_state *f = p;
    if (f->buf) cudaFree(f->buf);
    free(f);
}

kr_status kr_timing_flush(kr_context *ctx, double factor, size_t *bytes_out) {
    if (bytes_out) *bytes_out = 0;
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "the L2 flush");
    if (!(factor > 0) || factor > 64)
        return KR_ERROR(ctx, KR_ERR_ARG, "flush factor %g: expected a number in (0, 64]", factor);
    kr_device_info d;
    kr_context_device(ctx, &d);
    size_t l2 = d.l2_bytes ? d.l2_bytes : (size_t)50 << 20; /* the attribute is 0 on no GPU we know */
    size_t want = (size_t)(factor * (double)l2);
    want = (want + 255) & ~(size_t)255;
    flush_state *f = kr_context_ext(ctx, KR_EXT_TIMING);
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
        kr_context_set_ext(ctx, KR_EXT_TIMING, f, flush_free);
    }
    if (f->bytes < want) {
        if (f->buf) {
            cudaStream_t st = (cudaStream_t)kr_context_stream(ctx);
            cudaStreamSynchronize(st);
            cudaFree(f->buf);
            f->buf = NULL;
            f->bytes = 0;
        }
        cudaError_t e = cudaMalloc(&f->buf, want);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return KR_ERROR(ctx, KR_ERR_NOMEM, "cannot allocate the %zu-byte L2 flush buffer: %s",
                            want, cudaGetErrorString(e));
        }
        f->bytes = want;
    }
    /* Lines made persisting by anything earlier would survive the writes below. */
    s = KR_CUDA(ctx, cudaCtxResetPersistingL2Cache());
    if (s != KR_OK) return s;
    f->flips++;
    cudaStream_t st = (cudaStream_t)kr_context_stream(ctx);
    s = KR_CUDA(ctx, cudaMemsetAsync(f->buf, (f->flips & 1) ? 0xA5 : 0x5A, want, st));
    if (s != KR_OK) return s;
    /* The writes leave the L2 full of dirty lines, whose write-back would fall inside the timed
     * call (a 256 MiB copy measured 5% slower than Nsight Compute's flushed time). Reading the
     * buffer back, with the write-backs happening here, leaves it full of clean lines. */
    s = KR_CUDA(ctx, krk_read_words(f->buf, (int64_t)(want / 16), (unsigned *)f->buf, d.sm_count, st));
    if (s != KR_OK) return s;
    kr_context_note_launch(ctx, "L2 flush (memset, then a read)");
    if (bytes_out) *bytes_out = want;
    return KR_OK;
}

kr_status kr_timing_persisting_l2(kr_context *ctx, size_t *bytes) {
    *bytes = 0;
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "the persisting-L2 limit");
    return KR_CUDA(ctx, cudaDeviceGetLimit(bytes, cudaLimitPersistingL2CacheSize));
}

/* ---- graphs ---- */

struct kr_graph {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

kr_status kr_graph_begin(kr_context *ctx) {
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "CUDA graph capture");
    cudaStream_t st = (cudaStream_t)kr_context_stream(ctx);
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    s = KR_CUDA(ctx, cudaStreamIsCapturing(st, &cs));
    if (s != KR_OK) return s;
    if (cs != cudaStreamCaptureStatusNone)
        return KR_ERROR(ctx, KR_ERR_ARG, "a graph capture is already open on the harness stream");
    return KR_CUDA(ctx, cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed));
}

void kr_graph_abort(kr_context *ctx) {
    if (kr_context_state(ctx) != 1 || kr_context_is_host(ctx)) return;
    cudaStream_t st = (cudaStream_t)kr_context_stream(ctx);
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(st, &cs) != cudaSuccess || cs == cudaStreamCaptureStatusNone) {
        cudaGetLastError();
        return;
    }
    cudaGraph_t g = NULL;
    cudaStreamEndCapture(st, &g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
}

kr_status kr_graph_end(kr_context *ctx, kr_graph **out, size_t *nodes) {
    *out = NULL;
    if (nodes) *nodes = 0;
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "CUDA graph capture");
    cudaStream_t st = (cudaStream_t)kr_context_stream(ctx);
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(st, &g);
    if (e != cudaSuccess) {
        if (g) cudaGraphDestroy(g);
        cudaGetLastError();
        return KR_ERROR(ctx, KR_ERR_CUDA,
                        "the call could not be captured in a CUDA graph: %s (%s); a call that "
                        "synchronises or allocates with a free in between cannot be replayed",
                        cudaGetErrorString(e), cudaGetErrorName(e));
    }
    size_t n = 0;
    cudaGraphGetNodes(g, NULL, &n);
    if (n == 0) {
        cudaGraphDestroy(g);
        return KR_ERROR(ctx, KR_ERR_ARG, "the captured call queued no work on the harness stream");
    }
    kr_graph *kg = calloc(1, sizeof *kg);
    if (!kg) {
        cudaGraphDestroy(g);
        return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    kg->graph = g;
    e = cudaGraphInstantiate(&kg->exec, g, 0);
    if (e != cudaSuccess) {
        cudaGraphDestroy(g);
        free(kg);
        cudaGetLastError();
        return KR_ERROR(ctx, KR_ERR_CUDA, "cudaGraphInstantiate failed: %s (%s)",
                        cudaGetErrorString(e), cudaGetErrorName(e));
    }
    if (nodes) *nodes = n;
    *out = kg;
    return KR_OK;
}

kr_status kr_graph_launch(kr_context *ctx, kr_graph *g) {
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "CUDA graph replay");
    s = KR_CUDA(ctx, cudaGraphLaunch(g->exec, (cudaStream_t)kr_context_stream(ctx)));
    if (s == KR_OK) kr_context_note_launch(ctx, "graph replay");
    return s;
}

void kr_graph_free(kr_graph *g) {
    if (!g) return;
    if (g->exec) cudaGraphExecDestroy(g->exec);
    if (g->graph) cudaGraphDestroy(g->graph);
    free(g);
}

/* ---- the gate ---- */

struct kr_gate {
    unsigned *host; /* mapped: [0] the sequence number released, [1] timeouts */
    unsigned *dev;
    unsigned seq;
};

kr_status kr_gate_new(kr_context *ctx, kr_gate **out) {
    *out = NULL;
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "the timing gate");
    kr_gate *g = calloc(1, sizeof *g);
    if (!g) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    s = KR_CUDA(ctx, cudaHostAlloc((void **)&g->host, 2 * sizeof(unsigned), cudaHostAllocMapped));
    if (s != KR_OK) {
        free(g);
        return s;
    }
    g->host[0] = g->host[1] = 0;
    s = KR_CUDA(ctx, cudaHostGetDevicePointer((void **)&g->dev, g->host, 0));
    if (s != KR_OK) {
        cudaFreeHost(g->host);
        free(g);
        return s;
    }
    *out = g;
    return KR_OK;
}

kr_status kr_gate_hold(kr_context *ctx, kr_gate *g, double timeout_ms) {
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "the timing gate");
    if (!(timeout_ms > 0) || timeout_ms > 60000)
        return KR_ERROR(ctx, KR_ERR_ARG, "gate timeout %g ms: expected a number in (0, 60000]",
                        timeout_ms);
    g->seq++;
    s = KR_CUDA(ctx, krk_gate(g->dev, g->seq, (unsigned long long)(timeout_ms * 1e6),
                              kr_context_stream(ctx)));
    if (s == KR_OK) kr_context_note_launch(ctx, "timing gate");
    return s;
}

void kr_gate_release(kr_gate *g) { __atomic_store_n(&g->host[0], g->seq, __ATOMIC_RELEASE); }

unsigned kr_gate_timeouts(const kr_gate *g) { return __atomic_load_n(&g->host[1], __ATOMIC_ACQUIRE); }

void kr_gate_free(kr_gate *g) {
    if (!g) return;
    /* a hold still queued must not read freed memory: open it, then let the stream drain */
    kr_gate_release(g);
    if (g->host) cudaFreeHost(g->host);
    free(g);
}
