/* kr_timing.h: the mechanism under kreach's timing engine: the L2 flush that makes a sample
 * cold, CUDA-graph capture and replay of a call, and a batch of events for back-to-back calls.
 * Runtime layer (no Lua). The policy (modes, warm-up, stopping rule, interleaving) is in Lua
 * (scripts/kreach/judge/timing.lua). Everything runs on the context's harness stream. */
#ifndef KR_TIMING_H
#define KR_TIMING_H

#include <stddef.h>
#include "kr_context.h"

/* Makes the next work on the harness stream start from a cold L2: resets every persisting L2
 * line to normal (cudaCtxResetPersistingL2Cache), writes a device buffer of `factor` times
 * the L2 size (factor >= 2 is what the timing policy asks for) with a value that alternates
 * from one flush to the next, then reads it back, so that the L2 holds only clean lines of
 * that buffer (no write-back of dirty lines falls inside the timed call). The buffer is allocated on the first call and kept with the
 * context (grown if a later call asks for more). Asynchronous: queued on the harness stream.
 * *bytes_out (may be NULL) receives the bytes written. */
kr_status kr_timing_flush(kr_context *ctx, double factor, size_t *bytes_out);

/* The persisting-L2 limit in force (cudaLimitPersistingL2CacheSize), in bytes. */
kr_status kr_timing_persisting_l2(kr_context *ctx, size_t *bytes);

/* ---- CUDA graphs: capture the work a call queues on the harness stream, replay it ---- */

typedef struct kr_graph kr_graph;

/* Starts capturing the harness stream (relaxed mode, so that device memory may be allocated
 * during the capture; the allocations must outlive the graph). Fails if a capture is open. */
kr_status kr_graph_begin(kr_context *ctx);
/* Ends the capture and instantiates the graph. A capture that was invalidated (a call that
 * synchronised, or used another stream) fails with the driver's words. The caller owns *out.
 * *nodes (may be NULL) receives the number of nodes captured. */
kr_status kr_graph_end(kr_context *ctx, kr_graph **out, size_t *nodes);
/* Abandons an open capture, if any (after an error in the captured call). */
void kr_graph_abort(kr_context *ctx);
/* Queues one replay on the harness stream. */
kr_status kr_graph_launch(kr_context *ctx, kr_graph *g);
void kr_graph_free(kr_graph *g);

/* ---- the gate: the work of a sample queued before the GPU starts it ---- */

/* A timed call is bracketed by events; when the GPU is idle, the first event runs as soon as
 * it is queued and the call's launches arrive microseconds later, so the interval would count
 * the host's launch time. A gate holds the harness stream (one thread spinning on a flag in
 * mapped host memory) while the host queues the events and the call, and opens when released:
 * the call then runs right after the first event, as it would behind other work. */
typedef struct kr_gate kr_gate;

kr_status kr_gate_new(kr_context *ctx, kr_gate **out);
/* Queues the gate on the harness stream: it holds until the next kr_gate_release, or until
 * timeout_ms pass on the GPU (a call that waits for the GPU from the host would otherwise
 * wait for ever); a timeout is counted (kr_gate_timeouts). */
kr_status kr_gate_hold(kr_context *ctx, kr_gate *g, double timeout_ms);
/* Opens the gate last held. */
void kr_gate_release(kr_gate *g);
/* How many holds ended by their timeout instead of a release, so far. */
unsigned kr_gate_timeouts(const kr_gate *g);
void kr_gate_free(kr_gate *g);

#endif
