/* kr_event.c: CUDA events on the harness stream.
 * Runtime layer (no Lua). An event must have been recorded before it is waited on or timed:
 * CUDA would otherwise report success for a never-recorded event, which hides bugs. */
#include "kr_event.h"

#include <cuda_runtime.h>
#include <stdlib.h>

struct kr_event {
    cudaEvent_t ev;
    int recorded;
};

kr_status kr_event_new(kr_context *ctx, kr_event **out) {
    *out = NULL;
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "a CUDA event");
    kr_event *e = calloc(1, sizeof *e);
    if (!e) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    s = KR_CUDA(ctx, cudaEventCreate(&e->ev));
    if (s != KR_OK) {
        free(e);
        return s;
    }
    *out = e;
    return KR_OK;
}

void kr_event_free(kr_event *e) {
    if (!e) return;
    cudaEventDestroy(e->ev);
    free(e);
}

kr_status kr_event_record(kr_context *ctx, kr_event *e) {
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "a CUDA event");
    cudaStream_t st = (cudaStream_t)kr_context_stream(ctx);
    /* Inside a graph capture an event becomes a record node of its own ("external"), so that
     * each replay records it and times between such events measure parts of the replay; a
     * plain record would only order work inside the graph. */
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    s = KR_CUDA(ctx, cudaStreamIsCapturing(st, &cs));
    if (s != KR_OK) return s;
    unsigned flags = cs == cudaStreamCaptureStatusActive ? cudaEventRecordExternal : cudaEventRecordDefault;
    s = KR_CUDA(ctx, cudaEventRecordWithFlags(e->ev, st, flags));
    if (s == KR_OK) e->recorded = 1;
    return s;
}

static kr_status recorded(kr_context *ctx, kr_event *e) {
    if (!e->recorded) return KR_ERROR(ctx, KR_ERR_ARG, "the event has not been recorded");
    kr_status s = kr_context_require(ctx);
    if (s == KR_OK && kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "a CUDA event");
    return s;
}

kr_status kr_event_sync(kr_context *ctx, kr_event *e) {
    kr_status s = recorded(ctx, e);
    return s != KR_OK ? s : KR_CUDA(ctx, cudaEventSynchronize(e->ev));
}

kr_status kr_event_elapsed_ms(kr_context *ctx, kr_event *start, kr_event *end, float *ms) {
    kr_status s = recorded(ctx, start);
    if (s == KR_OK) s = recorded(ctx, end);
    if (s == KR_OK) s = KR_CUDA(ctx, cudaEventSynchronize(end->ev));
    if (s == KR_OK) s = KR_CUDA(ctx, cudaEventElapsedTime(ms, start->ev, end->ev));
    return s;
}

kr_status kr_event_query(kr_context *ctx, kr_event *e, int *done) {
    kr_status s = recorded(ctx, e);
    if (s != KR_OK) return s;
    cudaError_t r = cudaEventQuery(e->ev);
    if (r == cudaErrorNotReady) {
        cudaGetLastError();
        *done = 0;
        return KR_OK;
    }
    *done = 1;
    return KR_CUDA(ctx, r);
}
