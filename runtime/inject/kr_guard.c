/* kr_guard.c: the guard mode of libkreach_inject.so (docs/candidates.md, "Trust"). Loaded by the
 * CUDA driver into kreach's Python worker (torch_worker.py) when KREACH_GUARD_TOKEN is set, it
 * takes what a KernelBench-format candidate must not be able to rewrite, in C:
 *   - the time of a call: CUDA events recorded here on the caller's stream, and the span of every
 *     kernel, memcpy and memset the call started on any stream of the device (CUPTI's activity
 *     records), from the first start to the last end;
 *   - the threads it left running (/proc/self/task, opened before the worker's seal) and the
 *     processes (the worker is the child subreaper of what it starts, so a double fork still
 *     leaves a child here).
 * Each report is one JSON line written straight to the protocol descriptor, carrying the token
 * that kreach put in the environment and the worker removed from it before any candidate ran:
 * Python code that writes to that descriptor cannot make a line kreach accepts. Native code in
 * the same process can read this library's memory; that limit is documented, not hidden.
 *
 * The calls (exported; torch_worker.py reaches them through ctypes):
 *   kr_guard_attach(fd)            the protocol descriptor; 0, or -1 when the guard is not running
 *   kr_guard_begin(stream, timed)  opens a window: the threads and children now, and (timed) the
 *                                  CUPTI time from which records count
 *   kr_guard_mark(stream)          (timed) the first event, after the worker queued its gate
 *   kr_guard_end(stream, timed)    the second event, the checks, and (timed) the span; writes the
 *                                  report line; 0, or -1 when no line could be written
 * Runtime layer, no Lua. It never exits or raises: a failure is a field of the report. */
#define _GNU_SOURCE
#include "kr_guard_os.h"
#include "kr_inject_fmt.h"

#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define KR_GUARD_EXPORT __attribute__((visibility("default")))
#define GUARD_BUFFER_BYTES ((size_t)4 << 20)
#define TOKEN_MAX 64
/* torch.cuda._sleep's kernel, the worker's gate: the first record of a timed window is left out
 * of the span only when it has this name (a candidate kernel of the same name that ran first
 * would leave the gate in, which only lengthens the span) */
#define GATE_NAME "spin_kernel"

/* The driver's calls, found in the driver the process has loaded (this library does not link
 * libcuda, so that it loads, and its tests run, where there is no driver). */
static struct {
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_synchronize)(CUevent);
    CUresult (*event_elapsed)(float *, CUevent, CUevent);
    CUresult (*ctx_synchronize)(void);
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*error_name)(CUresult, const char **);
} D;

static int find_driver(char *why, size_t n) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
        snprintf(why, n, "the CUDA driver (libcuda.so.1) is not loaded in this process");
        return -1;
    }
    static const struct { const char *name; size_t off; } syms[] = {
        {"cuEventCreate", offsetof(__typeof__(D), event_create)},
        {"cuEventRecord", offsetof(__typeof__(D), event_record)},
        {"cuEventSynchronize", offsetof(__typeof__(D), event_synchronize)},
        {"cuEventElapsedTime_v2", offsetof(__typeof__(D), event_elapsed)},
        {"cuCtxSynchronize", offsetof(__typeof__(D), ctx_synchronize)},
        {"cuCtxGetCurrent", offsetof(__typeof__(D), ctx_get_current)},
        {"cuGetErrorName", offsetof(__typeof__(D), error_name)},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *f = dlsym(h, syms[i].name);
        if (!f) {
            snprintf(why, n, "the CUDA driver has no %s", syms[i].name);
            return -1;
        }
        memcpy((char *)&D + syms[i].off, &f, sizeof f);
    }
    return 0;
}

typedef struct rec {
    uint64_t start, end;
    uint32_t stream;
    int gate_named;
} rec;

static struct {
    pthread_mutex_t mu; /* the window's records; everything else is used by the worker's thread */
    int running;        /* CUPTI set up */
    char why[200];      /* when not running: why */
    char token[TOKEN_MAX + 1];
    int fd, task_fd;
    uint64_t seq;
    /* the window */
    int open, timed;
    uint64_t t_open;
    CUevent ev_a, ev_b;
    int have_events, marked;
    struct timespec host_a;
    kr_tids tids, now; /* the threads at the window's start, and at its end */
    rec *recs;
    size_t nrecs, cap_recs;
    uint64_t lost; /* records of the window that could not be kept (memory) */
    uint64_t dropped;
} G = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .task_fd = -1};

/* The one message the guard prints itself (the worker also reports G.why to kreach). */
static void no_guard(void) { fprintf(stderr, "kreach_guard: %s; no guard\n", G.why); }

/* ---- CUPTI's buffers ---- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    void *p = mmap(NULL, GUARD_BUFFER_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *max_records = 0;
    if (p == MAP_FAILED) {
        *buffer = NULL;
        *size = 0;
        return;
    }
    *buffer = p;
    *size = GUARD_BUFFER_BYTES;
}

static void keep(uint64_t start, uint64_t end, uint32_t stream, int gate_named) {
    if (start < G.t_open)
        return; /* started before the window: an earlier call's, or the flush before the gate */
    if (G.nrecs == G.cap_recs) {
        size_t cap = G.cap_recs ? G.cap_recs * 2 : 1024;
        rec *r = realloc(G.recs, cap * sizeof *r);
        if (!r) {
            G.lost++;
            return;
        }
        G.recs = r;
        G.cap_recs = cap;
    }
    G.recs[G.nrecs++] = (rec){.start = start, .end = end, .stream = stream, .gate_named = gate_named};
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    pthread_mutex_lock(&G.mu);
    if (G.open && G.timed) {
        G.dropped += dropped;
        CUpti_Activity *r = NULL;
        while (buffer && cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
            if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
                const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
                keep(k->start, k->end, k->streamId, k->name && strstr(k->name, GATE_NAME) != NULL);
            } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
                const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *)r;
                keep(c->start, c->end, c->streamId, 0);
            } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
                const CUpti_ActivityMemset4 *s = (const CUpti_ActivityMemset4 *)r;
                keep(s->start, s->end, s->streamId, 0);
            }
        }
    }
    pthread_mutex_unlock(&G.mu);
    if (buffer)
        munmap(buffer, size ? size : GUARD_BUFFER_BYTES);
}

/* ---- start-up, from the driver's cuInit (InitializeInjection) ---- */

static int token_ok(const char *t) {
    size_t n = strlen(t);
    if (n < 32 || n > TOKEN_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f')))
            return 0;
    return 1;
}

static void fail_start(const char *what, CUptiResult r) {
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
        s = "unknown CUPTI error";
    snprintf(G.why, sizeof G.why, "%s failed: %s", what, s);
    no_guard();
}

/* Called by kr_inject.c's start() when KREACH_GUARD_TOKEN is set. */
void kr_guard_start(const char *token) {
    if (!token_ok(token)) {
        snprintf(G.why, sizeof G.why, "KREACH_GUARD_TOKEN is not 32 to 64 lower-case hex digits");
        no_guard();
        return;
    }
    memcpy(G.token, token, strlen(token) + 1);
    if (find_driver(G.why, sizeof G.why)) {
        no_guard();
        return;
    }
    /* the threads, read again at every window; opened now, before the worker's seal shuts /proc */
    G.task_fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (G.task_fd < 0) {
        snprintf(G.why, sizeof G.why, "cannot open /proc/self/task: %s", strerror(errno));
        no_guard();
        return;
    }
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        fail_start("cuptiActivityRegisterCallbacks", r);
        return;
    }
    /* KERNEL, not CONCURRENT_KERNEL: for the concurrent record CUPTI instruments every kernel's
     * code (its documentation), the likely cause of what the guard cost a kernel of many short
     * blocks on an H200 with that record: a load_inline ReLU, one thread an element, 262,144
     * blocks, 0.2233 ms against 0.2049 ms with no guard, same run, 2026-12-06 (PyTorch's and
     * Triton's ReLUs moved under 0.5%). The serialized record takes
     * its times without instrumenting, and runs one kernel at a time on the device: a
     * candidate's streams do not overlap while it is timed, so work on a side stream can neither
     * hide under the gate nor beside the caller's kernels. That it costs the load_inline ReLU
     * under 1% is not yet measured (docs/candidates.md). */
    static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_KERNEL,
                                               CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        r = cuptiActivityEnable(kinds[i]);
        if (r != CUPTI_SUCCESS) {
            fail_start("cuptiActivityEnable", r);
            return;
        }
    }
    G.running = 1;
}

/* ---- the calls ---- */

KR_GUARD_EXPORT int kr_guard_attach(int fd) {
    if (!G.running)
        return -1;
    G.fd = fd;
    /* a process the candidate starts, and whatever that one leaves, stays a child of this one */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    return 0;
}

/* Why the guard is not running ("" when it is). */
KR_GUARD_EXPORT const char *kr_guard_why(void) { return G.running ? "" : (G.why[0] ? G.why : "the CUDA driver did not load the guard (CUDA_INJECTION64_PATH)"); }

KR_GUARD_EXPORT int kr_guard_begin(unsigned long long stream, int timed) {
    (void)stream;
    if (!G.running || G.fd < 0)
        return -1;
    if (kr_guard_tids(G.task_fd, &G.tids) < 0)
        G.tids.n = 0;
    G.marked = 0;
    if (timed && !G.have_events) {
        if (D.event_create(&G.ev_a, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
            D.event_create(&G.ev_b, CU_EVENT_DEFAULT) == CUDA_SUCCESS)
            G.have_events = 1;
    }
    /* No flush of CUPTI's buffers here: records of earlier work that arrive during the window
     * started before it and are left out (start < t_open). A forced flush here put CUPTI's own
     * work next to the window (measured on an H100, 2026-12-06: Python-side calls ran 30-50 us
     * longer with this flush and a shorter gate; which of the two it was, the next GPU run tells). */
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    pthread_mutex_lock(&G.mu);
    G.open = 1;
    G.timed = timed != 0;
    G.t_open = t;
    G.nrecs = 0;
    G.lost = 0;
    G.dropped = 0;
    pthread_mutex_unlock(&G.mu);
    return 0;
}

KR_GUARD_EXPORT int kr_guard_mark(unsigned long long stream) {
    if (!G.running || !G.open || !G.timed || !G.have_events)
        return -1;
    if (D.event_record(G.ev_a, (CUstream)(uintptr_t)stream) != CUDA_SUCCESS)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &G.host_a);
    G.marked = 1;
    return 0;
}

static double ms_since(const struct timespec *a) {
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

static void field_f(kr_jbuf *b, const char *key, double v) {
    char t[64];
    snprintf(t, sizeof t, ",\"%s\":%.9g", key, v);
    kr_jbuf_cstr(b, t);
}

static void field_i(kr_jbuf *b, const char *key, long long v) {
    kr_jbuf_cstr(b, ",\"");
    kr_jbuf_cstr(b, key);
    kr_jbuf_cstr(b, "\":");
    kr_jbuf_i64(b, v);
}

static const char *cu_err(CUresult r) {
    const char *s = NULL;
    if (D.error_name(r, &s) != CUDA_SUCCESS || !s)
        return "unknown CUDA error";
    return s;
}

/* After a timed window whose closing event was recorded: the events' time in ms (-1, and why
 * in err, where they fail), then everything the call queued finished and CUPTI's records
 * flushed (a failure of those in err, unless one is there already). */
static double wait_window(char *err, size_t errlen) {
    double event_ms = -1;
    float ms = 0;
    CUresult r = D.event_synchronize(G.ev_b);
    if (r == CUDA_SUCCESS)
        r = D.event_elapsed(&ms, G.ev_a, G.ev_b);
    if (r == CUDA_SUCCESS)
        event_ms = ms;
    else
        snprintf(err, errlen, "the events: %s", cu_err(r));
    /* what the call queued on any stream, finished: then every record of it can be had */
    r = D.ctx_synchronize();
    if (r != CUDA_SUCCESS && !err[0])
        snprintf(err, errlen, "cuCtxSynchronize: %s", cu_err(r));
    CUptiResult cr = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (cr != CUPTI_SUCCESS && !err[0])
        snprintf(err, errlen, "cuptiActivityFlushAll failed");
    return event_ms;
}

/* The window's records (G.recs; the caller holds G.mu): the span in ms from the first start
 * to the last end, *kernels the records in it, *other the streams besides the caller's that
 * they ran on (up to 64), *gate whether the first record was torch's gate (left out). The
 * caller's stream: the gate's, else CUPTI's id of the stream handle s. */
static double read_span(CUstream s, uint64_t *kernels, uint64_t *other, int *gate) {
    uint32_t caller = 0;
    int have_caller = 0;
    /* the gate: the window's first record, when it is torch's sleep kernel (the worker
     * launches it first thing in the window, on the caller's stream, whose id it then is).
     * Anything that ran before it leaves it in the span, which only lengthens the span. */
    size_t first = (size_t)-1;
    for (size_t i = 0; i < G.nrecs; i++)
        if (first == (size_t)-1 || G.recs[i].start < G.recs[first].start)
            first = i;
    if (first != (size_t)-1 && G.recs[first].gate_named) {
        *gate = 1;
        caller = G.recs[first].stream;
        have_caller = 1;
    } else { /* no gate seen: CUPTI's id of the stream handle */
        CUcontext ctx = NULL;
        have_caller = D.ctx_get_current(&ctx) == CUDA_SUCCESS && ctx &&
                      cuptiGetStreamIdEx(ctx, s, 0, &caller) == CUPTI_SUCCESS;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    uint32_t seen[64];
    size_t nseen = 0;
    for (size_t i = 0; i < G.nrecs; i++) {
        if (*gate && i == first)
            continue;
        rec *x = &G.recs[i];
        (*kernels)++;
        if (x->start < lo)
            lo = x->start;
        if (x->end > hi)
            hi = x->end;
        if (!have_caller || x->stream != caller) {
            size_t j = 0;
            while (j < nseen && seen[j] != x->stream)
                j++;
            if (j == nseen && nseen < 64)
                seen[nseen++] = x->stream;
        }
    }
    *other = nseen;
    return *kernels ? (double)(hi - lo) / 1e6 : 0;
}

/* The report's line, written whole to G.fd (a write cut short is continued): 0, or -1. */
static int write_line(const kr_jbuf *b) {
    size_t off = 0;
    while (off < b->len) {
        ssize_t w = write(G.fd, b->p + off, b->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

KR_GUARD_EXPORT int kr_guard_end(unsigned long long stream, int timed) {
    if (!G.running || G.fd < 0 || !G.open)
        return -1;
    CUstream s = (CUstream)(uintptr_t)stream;
    kr_jbuf b = {0};
    char err[160] = "";
    double host_ms = -1, event_ms = -1;
    int ended = 0;
    if (timed && G.marked) {
        CUresult r = D.event_record(G.ev_b, s);
        host_ms = ms_since(&G.host_a);
        if (r != CUDA_SUCCESS)
            snprintf(err, sizeof err, "cuEventRecord: %s", cu_err(r));
        ended = r == CUDA_SUCCESS;
    } else if (timed) {
        snprintf(err, sizeof err, "the window's first event was not recorded");
    }
    /* the checks first, before any wait: a thread the call started and left is alive now */
    long threads = -1, fresh = -1;
    if (kr_guard_tids(G.task_fd, &G.now) == 0 && G.tids.n > 0) {
        threads = (long)G.now.n;
        fresh = (long)kr_guard_new_tids(&G.tids, &G.now);
    }
    int child = kr_guard_has_child();
    uint64_t kernels = 0, other = 0;
    double span_ms = -1;
    int gate = 0;
    if (timed && ended)
        event_ms = wait_window(err, sizeof err);
    pthread_mutex_lock(&G.mu);
    G.open = 0;
    if (timed && ended)
        span_ms = read_span(s, &kernels, &other, &gate);
    uint64_t lost = G.lost, dropped = G.dropped;
    pthread_mutex_unlock(&G.mu);

    G.seq++;
    kr_jbuf_cstr(&b, "{\"guard\":\"");
    kr_jbuf_cstr(&b, G.token);
    kr_jbuf_cstr(&b, "\"");
    field_i(&b, "seq", (long long)G.seq);
    kr_jbuf_cstr(&b, timed ? ",\"timed\":true" : ",\"timed\":false");
    field_i(&b, "threads", threads);
    field_i(&b, "threads_new", fresh);
    field_i(&b, "children", child);
    if (timed) {
        if (event_ms >= 0)
            field_f(&b, "event_ms", event_ms);
        if (span_ms >= 0)
            field_f(&b, "span_ms", span_ms);
        if (host_ms >= 0)
            field_f(&b, "host_ms", host_ms);
        field_i(&b, "records", (long long)kernels);
        field_i(&b, "other_streams", (long long)other);
        kr_jbuf_cstr(&b, gate ? ",\"gate\":true" : ",\"gate\":false");
        field_i(&b, "dropped", (long long)(dropped + lost));
    }
    if (err[0]) {
        kr_jbuf_cstr(&b, ",\"error\":");
        kr_jbuf_json_string(&b, err);
    }
    kr_jbuf_cstr(&b, "}\n");
    int rc = b.failed ? -1 : write_line(&b);
    kr_jbuf_free(&b);
    return rc;
}
