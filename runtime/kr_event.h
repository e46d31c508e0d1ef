/* kr_event.h: CUDA events on the harness stream, for timing and synchronisation.
 * Runtime layer (no Lua). */
#ifndef KR_EVENT_H
#define KR_EVENT_H

#include "kr_context.h"

typedef struct kr_event kr_event;

/* Creates a timing event (needs the device). The caller owns *out. */
kr_status kr_event_new(kr_context *ctx, kr_event **out);
void kr_event_free(kr_event *e);
/* Records the event on the harness stream; during a graph capture, as a record node of the
 * graph (cudaEventRecordExternal), so that every replay records it. */
kr_status kr_event_record(kr_context *ctx, kr_event *e);
/* Waits until the event has completed; a fault before it is reported here. */
kr_status kr_event_sync(kr_context *ctx, kr_event *e);
/* Milliseconds from `start` to `end`; both recorded; waits for `end`. */
kr_status kr_event_elapsed_ms(kr_context *ctx, kr_event *start, kr_event *end, float *ms);
/* 1 once the event has completed, 0 while pending. */
kr_status kr_event_query(kr_context *ctx, kr_event *e, int *done);

#endif
