/* kr_inject.c: libkreach_inject.so, a CUPTI injection library (docs/profiling-inject.md). The CUDA
 * driver loads it through CUDA_INJECTION64_PATH and NVTX through NVTX_INJECTION64_PATH; it traces
 * kernels, memcpys, memsets and NVTX ranges to a JSON Lines file. Runtime layer, no Lua.
 * It lives inside someone else's process: it never exits, raises or crashes on failure, it prints
 * one line to stderr and stops tracing, and only the two entry points below are exported (and,
 * for its guard mode in kreach's Python worker, kr_guard.c's calls). */
#define _GNU_SOURCE
#include "kr_inject_fmt.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KR_INJECT_EXPORT __attribute__((visibility("default")))

/* kr_inject_copy_kind indexes its names by these values */
_Static_assert(CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN == 0 && CUPTI_ACTIVITY_MEMCPY_KIND_HTOD == 1 &&
               CUPTI_ACTIVITY_MEMCPY_KIND_DTOH == 2 && CUPTI_ACTIVITY_MEMCPY_KIND_HTOA == 3 &&
               CUPTI_ACTIVITY_MEMCPY_KIND_ATOH == 4 && CUPTI_ACTIVITY_MEMCPY_KIND_ATOA == 5 &&
               CUPTI_ACTIVITY_MEMCPY_KIND_ATOD == 6 && CUPTI_ACTIVITY_MEMCPY_KIND_DTOA == 7 &&
               CUPTI_ACTIVITY_MEMCPY_KIND_DTOD == 8 && CUPTI_ACTIVITY_MEMCPY_KIND_HTOH == 9 &&
               CUPTI_ACTIVITY_MEMCPY_KIND_PTOP == 10,
               "CUpti_ActivityMemcpyKind changed: update kr_inject_copy_kind");
/* The record structs of this CUPTI (13.x); a new major version renames them and fails here. */
_Static_assert(CUPTI_API_VERSION >= 130000 && CUPTI_API_VERSION < 140000,
               "written for CUPTI 13: check the activity record versions");

#define DEFAULT_BUFFER_MB 8
#define OUT_FLUSH_BYTES (1u << 20) /* write(2) once this much text is waiting */
#define RANGE_BUCKETS 1024

enum { ST_OFF, ST_RUNNING, ST_DONE };
enum { HAVE_START = 1, HAVE_END = 2 };

typedef struct name_slot {
    const char *key;   /* CUPTI's pointer; one per kernel function */
    char *mangled;     /* a copy, to notice a pointer reused for another name */
    char *json;        /* "name":"...","mangled":"..." */
    size_t json_len;
} name_slot;

typedef struct range_node {
    struct range_node *next;
    uint32_t id;
    int have;
    char *name, *domain;
    uint64_t start, end;
} range_node;

static struct {
    pthread_mutex_t mu; /* everything below, except what is set once at start-up */
    int state;
    pid_t pid;
    int verbose;
    int fd;
    char *path;
    size_t buffer_bytes;
    kr_jbuf out;
    int write_failed;
    kr_inject_totals n;
    uint64_t refused;  /* buffers we could not give CUPTI */
    name_slot *names;
    size_t names_cap, names_used;
    kr_jbuf scratch;
    range_node *ranges[RANGE_BUCKETS];
    int reported_iter;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* KREACH_TRACE_ALTERNATE=NAME, a measuring aid: the kinds other than marker are traced only from
 * the 1st, 3rd, 5th... push of an NVTX range called NAME to the next push, so that a program's
 * steps alternate traced and untraced within one process and their times can be compared pair by
 * pair (experiments/profiler_check.lua --alternate). The switching runs in the program's thread,
 * inside NVTX's call; its own lock, since g.mu can be held for a whole buffer. */
static struct {
    pthread_mutex_t mu;
    char *name;       /* NULL: not alternating */
    unsigned kinds;   /* the CUPTI kinds switched: what was enabled, less marker */
    int on;           /* whether they are enabled now */
    uint64_t ranges;  /* pushes of NAME seen */
    uint64_t switches[2], switch_ns[2]; /* [0] off, [1] on */
    int failed;
} alt = {.mu = PTHREAD_MUTEX_INITIALIZER, .on = 1};

static atomic_int init_phase; /* 0 not started, 1 in progress, 2 done */
static atomic_int finished;

/* ---- messages ---- */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "kreach_inject: %s\n", line);
}

#define VERBOSE(...) do { if (g.verbose) say(__VA_ARGS__); } while (0)

static const char *cupti_string(CUptiResult r) {
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
        return "unknown CUPTI error";
    return s;
}

/* 1 when r is CUPTI_SUCCESS; otherwise says which call failed and why, and returns 0. */
static int ok(CUptiResult r, const char *what) {
    if (r == CUPTI_SUCCESS)
        return 1;
    say("%s failed: %s", what, cupti_string(r));
    return 0;
}

/* ---- output: our own buffer over a raw descriptor, so that a forked child's exit() cannot
 * flush a copy of the parent's pending text into the parent's file ---- */

static void write_out(void) {
    size_t off = 0;
    while (!g.write_failed && off < g.out.len) {
        ssize_t w = write(g.fd, g.out.p + off, g.out.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            say("cannot write %s: %s; the trace stops here", g.path, strerror(errno));
            g.write_failed = 1;
        } else {
            off += (size_t)w;
        }
    }
    g.out.len = 0;
    if (g.out.failed) {
        say("out of memory formatting records; the trace is incomplete");
        g.write_failed = 1;
    }
}

/* ---- kernel names: demangled and escaped once per function, looked up by CUPTI's pointer ---- */

static size_t ptr_hash(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static void names_grow(void) {
    size_t cap = g.names_cap ? g.names_cap * 2 : 256;
    name_slot *t = calloc(cap, sizeof *t);
    if (!t)
        return;
    for (size_t i = 0; i < g.names_cap; i++) {
        name_slot *s = &g.names[i];
        if (!s->key)
            continue;
        size_t j = ptr_hash(s->key) & (cap - 1);
        while (t[j].key)
            j = (j + 1) & (cap - 1);
        t[j] = *s;
    }
    free(g.names);
    g.names = t;
    g.names_cap = cap;
}

/* The `"name":...,"mangled":...` text for a kernel name; *len is its length. */
static const char *kernel_names(const char *name, size_t *len) {
    if (!name)
        name = "";
    if (g.names_used * 2 >= g.names_cap)
        names_grow();
    if (g.names_cap) {
        size_t j = ptr_hash(name) & (g.names_cap - 1);
        while (g.names[j].key && g.names[j].key != name)
            j = (j + 1) & (g.names_cap - 1);
        name_slot *s = &g.names[j];
        if (s->key && strcmp(s->mangled, name) == 0) {
            *len = s->json_len;
            return s->json;
        }
        kr_jbuf j2 = {0};
        kr_inject_names_json(&j2, name);
        char *m = strdup(name);
        if (!j2.failed && m && g.names_used * 2 < g.names_cap) {
            if (!s->key)
                g.names_used++;
            free(s->mangled);
            free(s->json);
            s->key = name;
            s->mangled = m;
            s->json = j2.p;
            s->json_len = j2.len;
            *len = s->json_len;
            return s->json;
        }
        free(m);
        kr_jbuf_free(&j2);
    }
    /* out of memory for the cache: format it each time */
    g.scratch.len = 0;
    kr_inject_names_json(&g.scratch, name);
    *len = g.scratch.len;
    return g.scratch.p ? g.scratch.p : "";
}

/* ---- NVTX ranges: a start and an end marker share an id; they can arrive in either order,
 * since CUPTI keeps a buffer per thread and a start/end range may cross threads ---- */

static range_node **range_find(uint32_t id) {
    range_node **pp = &g.ranges[id % RANGE_BUCKETS];
    while (*pp && (*pp)->id != id)
        pp = &(*pp)->next;
    return pp;
}

static void range_emit_and_drop(range_node **pp) {
    range_node *r = *pp;
    if (r->end >= r->start) {
        kr_inject_line_range(&g.out, r->name, r->domain, r->start, r->end);
        g.n.ranges++;
    }
    *pp = r->next;
    free(r->name);
    free(r->domain);
    free(r);
}

static void on_marker(const CUpti_ActivityMarker2 *m) {
    int is_start = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0;
    int is_end = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0;
    if (!is_start && !is_end)
        return; /* instantaneous marks and synchronisation markers are not ranges */
    range_node **pp = range_find(m->id);
    range_node *r = *pp;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return;
        r->id = m->id;
        *pp = r;
    }
    if (is_start) {
        free(r->name);
        free(r->domain);
        r->name = strdup(m->name ? m->name : "");
        r->domain = m->domain ? strdup(m->domain) : NULL;
        r->start = m->timestamp;
        r->have |= HAVE_START;
    } else {
        r->end = m->timestamp;
        r->have |= HAVE_END;
    }
    if (r->have == (HAVE_START | HAVE_END))
        range_emit_and_drop(pp);
}

static size_t ranges_open(void) {
    size_t n = 0;
    for (size_t i = 0; i < RANGE_BUCKETS; i++)
        for (range_node *r = g.ranges[i]; r; r = r->next)
            n++;
    return n;
}

/* ---- records ---- */

static void on_record(const CUpti_Activity *rec) {
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        kr_inject_kernel o = {
            .start = k->start, .end = k->end, .device = k->deviceId, .context = k->contextId,
            .stream = k->streamId, .correlation = k->correlationId,
            .grid = {k->gridX, k->gridY, k->gridZ}, .block = {k->blockX, k->blockY, k->blockZ},
            .registers = k->registersPerThread, .static_shared = k->staticSharedMemory,
            .dynamic_shared = k->dynamicSharedMemory};
        size_t len = 0;
        const char *names = kernel_names(k->name, &len);
        kr_inject_line_kernel(&g.out, &o, names, len);
        g.n.kernels++;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *)rec;
        kr_inject_line_memcpy(&g.out, c->start, c->end, c->bytes, c->copyKind, c->deviceId,
                              c->streamId, c->correlationId);
        g.n.memcpys++;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *s = (const CUpti_ActivityMemset4 *)rec;
        kr_inject_line_memset(&g.out, s->start, s->end, s->bytes, s->deviceId, s->streamId);
        g.n.memsets++;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
        on_marker((const CUpti_ActivityMarker2 *)rec);
        break;
    default:
        break;
    }
}

/* ---- CUPTI's buffers: mmap'd, so they arrive zeroed (CUPTI is told so and need not clear them
 * in the application's thread) and go back to the system whole ---- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    void *p = mmap(NULL, g.buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *max_records = 0;
    if (p == MAP_FAILED) {
        /* CUPTI counts what it then drops; we report it in the footer */
        *buffer = NULL;
        *size = 0;
        pthread_mutex_lock(&g.mu);
        g.refused++;
        pthread_mutex_unlock(&g.mu);
        return;
    }
    *buffer = p;
    *size = g.buffer_bytes;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
    size_t dropped = 0;
    CUptiResult dr = cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped);
    pthread_mutex_lock(&g.mu);
    if (g.state == ST_RUNNING && getpid() == g.pid) {
        g.n.buffers++;
        if (dr == CUPTI_SUCCESS)
            g.n.dropped += dropped;
        CUpti_Activity *rec = NULL;
        for (;;) {
            CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &rec);
            if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
                break;
            if (r != CUPTI_SUCCESS) {
                if (!g.reported_iter++)
                    say("cuptiActivityGetNextRecord failed: %s; the rest of a buffer is lost",
                        cupti_string(r));
                break;
            }
            on_record(rec);
            if (g.out.len >= OUT_FLUSH_BYTES)
                write_out();
        }
        write_out(); /* each buffer reaches the file, so a crash keeps what came before */
    }
    pthread_mutex_unlock(&g.mu);
    if (buffer)
        munmap(buffer, size ? size : g.buffer_bytes);
}

/* ---- the end: flush CUPTI, write the footer ---- */

static int running(void) {
    pthread_mutex_lock(&g.mu);
    int r = g.state == ST_RUNNING;
    pthread_mutex_unlock(&g.mu);
    return r;
}

static void finish(void) {
    /* the pid first: a forked child may hold a copy of a locked mutex, and writes nothing */
    if (getpid() != g.pid || !running())
        return;
    if (atomic_exchange(&finished, 1))
        return;
    ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
    size_t dropped = 0;
    CUptiResult dr = cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
    uint64_t end_ns = 0;
    if (cuptiGetTimestamp(&end_ns) != CUPTI_SUCCESS)
        end_ns = 0;
    pthread_mutex_lock(&g.mu);
    if (dr == CUPTI_SUCCESS)
        g.n.dropped += dropped;
    g.n.end_ns = end_ns;
    if (alt.name) {
        pthread_mutex_lock(&alt.mu);
        g.n.alternate = 1;
        g.n.alternate_ranges = alt.ranges;
        g.n.switches_on = alt.switches[1];
        g.n.switches_off = alt.switches[0];
        g.n.switch_on_ns = alt.switch_ns[1];
        g.n.switch_off_ns = alt.switch_ns[0];
        pthread_mutex_unlock(&alt.mu);
    }
    size_t open_ranges = ranges_open();
    kr_inject_line_footer(&g.out, &g.n);
    write_out();
    if (close(g.fd) != 0 && !g.write_failed)
        say("cannot write %s: %s", g.path, strerror(errno));
    g.fd = -1;
    g.state = ST_DONE;
    kr_inject_totals n = g.n;
    uint64_t refused = g.refused;
    pthread_mutex_unlock(&g.mu);
    if (n.dropped)
        say("CUPTI dropped %llu records (%llu buffers refused); raise KREACH_INJECT_BUFFER_MB",
            (unsigned long long)n.dropped, (unsigned long long)refused);
    VERBOSE("wrote %s: %llu kernels, %llu memcpys, %llu memsets, %llu ranges (%zu left open), "
            "%llu buffers", g.path, (unsigned long long)n.kernels, (unsigned long long)n.memcpys,
            (unsigned long long)n.memsets, (unsigned long long)n.ranges, open_ranges,
            (unsigned long long)n.buffers);
}

/* Also run when the library is unloaded, and (no-op by then) after exit's atexit handlers. */
__attribute__((destructor)) static void on_unload(void) { finish(); }

/* ---- start-up ---- */

/* The activity kinds behind the KR_TRACE_* bits, marker last. */
static const struct {
    unsigned bit;
    CUpti_ActivityKind kind;
    const char *name;
} kind_table[] = {
    {KR_TRACE_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {KR_TRACE_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {KR_TRACE_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {KR_TRACE_MARKER, CUPTI_ACTIVITY_KIND_MARKER, "MARKER"},
};
#define N_KINDS (sizeof kind_table / sizeof kind_table[0])

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The ASCII message of a pushed range, or NULL. */
static const char *pushed_name(CUpti_CallbackId cbid, const CUpti_NvtxData *d) {
    const nvtxEventAttributes_t *ea = NULL;
    if (!d || !d->functionParams)
        return NULL;
    switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
        return ((const nvtxRangePushA_params *)d->functionParams)->message;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
        ea = ((const nvtxRangePushEx_params *)d->functionParams)->eventAttrib;
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
        ea = ((const nvtxDomainRangePushEx_params *)d->functionParams)->core.eventAttrib;
        break;
    default:
        return NULL;
    }
    return ea && ea->messageType == NVTX_MESSAGE_TYPE_ASCII ? ea->message.ascii : NULL;
}

/* A push of a range called alt.name: the odd ones (1st, 3rd...) turn the switched kinds on, the
 * even ones off. */
static void alternate_on_push(const char *name) {
    if (!name || strcmp(name, alt.name) != 0)
        return;
    pthread_mutex_lock(&alt.mu);
    uint64_t t0 = mono_ns();
    alt.ranges++;
    int want = (alt.ranges & 1) != 0;
    if (want != alt.on && !alt.failed) {
        for (size_t i = 0; i < N_KINDS; i++) {
            if (!(alt.kinds & kind_table[i].bit))
                continue;
            CUptiResult r = want ? cuptiActivityEnable(kind_table[i].kind)
                                 : cuptiActivityDisable(kind_table[i].kind);
            if (r != CUPTI_SUCCESS && !alt.failed) {
                alt.failed = 1;
                say("KREACH_TRACE_ALTERNATE: cuptiActivity%s(%s) failed: %s; the kinds stay as "
                    "they are from here on", want ? "Enable" : "Disable", kind_table[i].name,
                    cupti_string(r));
            }
        }
        alt.on = want;
        alt.switches[want]++;
        alt.switch_ns[want] += mono_ns() - t0;
    }
    pthread_mutex_unlock(&alt.mu);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data) {
    (void)userdata;
    if (domain == CUPTI_CB_DOMAIN_NVTX) {
        if (alt.name)
            alternate_on_push(pushed_name(cbid, data));
        return;
    }
    if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
        return;
    const CUpti_ResourceData *rd = data;
    uint32_t ctx_id = 0, dev_id = 0;
    cuptiGetContextId(rd->context, &ctx_id);
    cuptiGetDeviceId(rd->context, &dev_id);
    VERBOSE("context %u created on device %u", ctx_id, dev_id);
}

static size_t buffer_bytes_from_env(void) {
    const char *v = getenv("KREACH_INJECT_BUFFER_MB");
    if (!v || !*v)
        return (size_t)DEFAULT_BUFFER_MB << 20;
    char *end = NULL;
    errno = 0;
    long mb = strtol(v, &end, 10);
    if (errno || *end || mb < 1 || mb > 1024) {
        say("KREACH_INJECT_BUFFER_MB=%s is not a whole number of MiB from 1 to 1024; using %d",
            v, DEFAULT_BUFFER_MB);
        return (size_t)DEFAULT_BUFFER_MB << 20;
    }
    return (size_t)mb << 20;
}

/* KREACH_TRACE_FILE with each "%p" replaced by the process id; malloc'd. */
static char *expand_path(const char *tmpl, pid_t pid) {
    kr_jbuf b = {0};
    for (const char *s = tmpl; *s; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            kr_jbuf_i64(&b, pid);
            s++;
        } else {
            kr_jbuf_raw(&b, s, 1);
        }
    }
    kr_jbuf_text(&b);
    if (b.failed) {
        kr_jbuf_free(&b);
        return NULL;
    }
    return b.p;
}

/* Creates the trace file, never over an existing one: a program whose child processes also use
 * CUDA inherits the same environment, and each process then keeps its own trace. */
static int open_trace(const char *tmpl) {
    g.path = expand_path(tmpl, g.pid);
    if (!g.path)
        return -1;
    g.fd = open(g.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (g.fd < 0 && errno == EEXIST) {
        char *other = malloc(strlen(g.path) + 24);
        if (other) {
            sprintf(other, "%s.%ld", g.path, (long)g.pid);
            g.fd = open(other, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (g.fd >= 0)
                say("%s exists; this process (pid %ld) writes its trace to %s", g.path,
                    (long)g.pid, other);
            free(g.path);
            g.path = other;
        }
    }
    if (g.fd < 0) {
        say("cannot create the trace file %s: %s; not tracing", g.path, strerror(errno));
        return -1;
    }
    return 0;
}

static void give_up(CUpti_SubscriberHandle sub) {
    if (sub)
        cuptiUnsubscribe(sub);
    close(g.fd);
    unlink(g.path);
    g.fd = -1;
    say("not tracing");
}

void kr_guard_start(const char *token); /* kr_guard.c */

static void start(void) {
    /* kreach's Python worker: the guard mode instead of a trace (kr_guard.c) */
    const char *guard = getenv("KREACH_GUARD_TOKEN");
    if (guard && *guard) {
        kr_guard_start(guard);
        return;
    }
    const char *v = getenv("KREACH_INJECT_VERBOSE");
    g.verbose = v && strcmp(v, "1") == 0;
    g.pid = getpid();
    const char *tmpl = getenv("KREACH_TRACE_FILE");
    if (!tmpl || !*tmpl) {
        say("KREACH_TRACE_FILE is not set; not tracing");
        return;
    }
    g.buffer_bytes = buffer_bytes_from_env();
    unsigned kinds = 0;
    char bad[64];
    if (kr_inject_parse_kinds(getenv("KREACH_TRACE_KINDS"), &kinds, bad, sizeof bad)) {
        char why[96];
        if (*bad)
            snprintf(why, sizeof why, "unknown kind '%s'", bad);
        else
            snprintf(why, sizeof why, "an empty kind name");
        say("KREACH_TRACE_KINDS=%s: %s (kinds: kernel, memcpy, memset, marker, all); not tracing",
            getenv("KREACH_TRACE_KINDS"), why);
        return;
    }
    if (open_trace(tmpl))
        return;

    CUpti_SubscriberHandle sub = NULL;
    if (!ok(cuptiSubscribe(&sub, on_callback, NULL), "cuptiSubscribe")) {
        sub = NULL;
        give_up(sub);
        return;
    }
    if (g.verbose)
        ok(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE), "cuptiEnableDomain(RESOURCE)");
    uint8_t zeroed = 1;
    size_t zeroed_size = sizeof zeroed;
    ok(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size,
                                 &zeroed), "cuptiActivitySetAttribute(ZEROED_OUT_ACTIVITY_BUFFER)");
    if (!ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
            "cuptiActivityRegisterCallbacks")) {
        give_up(sub);
        return;
    }
    unsigned enabled = 0;
    for (size_t i = 0; i < N_KINDS; i++) {
        char what[64];
        snprintf(what, sizeof what, "cuptiActivityEnable(%s)", kind_table[i].name);
        if ((kinds & kind_table[i].bit) && ok(cuptiActivityEnable(kind_table[i].kind), what))
            enabled |= kind_table[i].bit;
    }
    if (!enabled) {
        give_up(sub);
        return;
    }
    const char *alternate = getenv("KREACH_TRACE_ALTERNATE");
    if (alternate && *alternate) {
        static const CUpti_CallbackId pushes[] = {CUPTI_CBID_NVTX_nvtxRangePushA,
                                                  CUPTI_CBID_NVTX_nvtxRangePushEx,
                                                  CUPTI_CBID_NVTX_nvtxDomainRangePushEx};
        /* the name and kinds first: a callback may come as soon as one is enabled */
        alt.kinds = enabled & ~(unsigned)KR_TRACE_MARKER;
        alt.name = strdup(alternate);
        int subscribed = alt.name != NULL && alt.kinds != 0;
        for (size_t i = 0; subscribed && i < sizeof pushes / sizeof pushes[0]; i++)
            subscribed = ok(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_NVTX, pushes[i]),
                            "cuptiEnableCallback(NVTX range push)");
        if (!subscribed) {
            say("KREACH_TRACE_ALTERNATE=%s: %s; not tracing", alternate,
                !alt.kinds ? "nothing to alternate (only marker is traced)" : "cannot follow NVTX's ranges");
            give_up(sub); /* unsubscribing stops the callbacks before the name goes */
            free(alt.name);
            alt.name = NULL;
            return;
        }
    }

    uint32_t version = 0;
    uint64_t start_ns = 0;
    ok(cuptiGetVersion(&version), "cuptiGetVersion");
    ok(cuptiGetTimestamp(&start_ns), "cuptiGetTimestamp");
    pthread_mutex_lock(&g.mu);
    kr_jbuf_reserve(&g.out, OUT_FLUSH_BYTES + 4096);
    kr_inject_line_header(&g.out, (long)g.pid, version, start_ns, enabled, alt.name);
    write_out();
    g.state = ST_RUNNING;
    pthread_mutex_unlock(&g.mu);
    if (atexit(finish) != 0 || at_quick_exit(finish) != 0)
        say("cannot register the exit handler; the trace may end without a footer");
    VERBOSE("tracing to %s (CUPTI %u, buffers of %zu MiB)%s", g.path, version,
            g.buffer_bytes >> 20,
            getenv("NVTX_INJECTION64_PATH") ? "" : "; NVTX_INJECTION64_PATH is unset, so no ranges");
}

/* Runs start() once. The driver's caller never waits (it may hold the driver's start-up lock,
 * which CUPTI calls in another thread's start() can need); NVTX's caller waits for a start()
 * under way in another thread, so that ranges are not lost to the race. */
static void start_once(int may_wait) {
    int expect = 0;
    if (atomic_compare_exchange_strong(&init_phase, &expect, 1)) {
        start();
        atomic_store(&init_phase, 2);
        return;
    }
    while (may_wait && atomic_load(&init_phase) == 1)
        sched_yield();
}

/* ---- the entry points ---- */

/* Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this library. */
KR_INJECT_EXPORT int InitializeInjection(void) {
    start_once(0);
    return 1;
}

typedef const void *(*kr_nvtx_export_table_fn)(uint32_t export_table_id);
typedef int (*kr_nvtx_init_fn)(kr_nvtx_export_table_fn get_export_table);

/* Called by NVTX (v2 and v3) at its first call when NVTX_INJECTION64_PATH names this library:
 * starts tracing if CUDA has not yet, then hands NVTX to CUPTI, which turns its calls into
 * marker records. Returns 0, and NVTX stays a no-op, when not tracing. */
KR_INJECT_EXPORT int InitializeInjectionNvtx2(kr_nvtx_export_table_fn get_export_table) {
    start_once(1);
    if (!running())
        return 0;
    Dl_info info;
    void *lib = NULL;
    if (dladdr((void *)cuptiGetVersion, &info) && info.dli_fname)
        lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    kr_nvtx_init_fn init = lib ? (kr_nvtx_init_fn)dlsym(lib, "InitializeInjectionNvtx2") : NULL;
    if (!init) {
        say("CUPTI's InitializeInjectionNvtx2 not found (%s); NVTX ranges are not recorded",
            lib ? "no such symbol" : "libcupti not found");
        return 0;
    }
    int r = init(get_export_table);
    if (!r)
        say("CUPTI's InitializeInjectionNvtx2 failed; NVTX ranges are not recorded");
    else
        VERBOSE("NVTX handed to CUPTI (%s)", info.dli_fname);
    return r;
}
