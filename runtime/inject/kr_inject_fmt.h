/* kr_inject_fmt.h: the text side of libkreach_inject (runtime/inject): a growable byte buffer,
 * JSON string escaping, C++ demangling and the trace's JSON Lines records. Runtime layer; no
 * CUPTI calls and no CUPTI types, so tests/c/test_inject.c compiles kr_inject_fmt.c directly.
 * Nothing here is exported from the shared library (it is built with hidden visibility). */
#ifndef KR_INJECT_FMT_H
#define KR_INJECT_FMT_H

#include <stddef.h>
#include <stdint.h>

/* ---- a growable byte buffer; `failed` is set (and the text stops growing) when memory runs out */
typedef struct kr_jbuf {
    char *p;
    size_t len, cap;
    int failed;
} kr_jbuf;

void kr_jbuf_free(kr_jbuf *b);
/* Makes room for n more bytes; 0 on success, -1 (and b->failed) when memory ran out. */
int kr_jbuf_reserve(kr_jbuf *b, size_t n);
void kr_jbuf_raw(kr_jbuf *b, const char *s, size_t n);
void kr_jbuf_cstr(kr_jbuf *b, const char *s);
void kr_jbuf_u64(kr_jbuf *b, uint64_t v);
void kr_jbuf_i64(kr_jbuf *b, int64_t v);
/* Appends s as a JSON string, quotes included: `"`, `\` and control characters are escaped, bytes
 * that are not well-formed UTF-8 become U+FFFD, so every line is valid JSON. NULL is "". */
void kr_jbuf_json_string(kr_jbuf *b, const char *s);
/* The NUL-terminated text (empty when nothing was written or memory ran out). */
const char *kr_jbuf_text(kr_jbuf *b);

/* ---- names ---- */
/* The demangled form of a mangled C++ name ("_Z..."), malloc'd (the caller frees it); NULL when
 * `name` is not a mangled C++ name or the demangler cannot read it. */
char *kr_inject_demangle(const char *name);
/* Appends `"name":"<demangled>","mangled":"<name>"`; a name that does not demangle is used for both. */
void kr_inject_names_json(kr_jbuf *b, const char *mangled);
/* "HtoD", "DtoH", ... for CUPTI's CUpti_ActivityMemcpyKind values; "unknown" otherwise. */
const char *kr_inject_copy_kind(unsigned kind);

/* ---- what is traced: KREACH_TRACE_KINDS ---- */
enum {
    KR_TRACE_KERNEL = 1u << 0,
    KR_TRACE_MEMCPY = 1u << 1,
    KR_TRACE_MEMSET = 1u << 2,
    KR_TRACE_MARKER = 1u << 3,
    KR_TRACE_ALL = (1u << 4) - 1,
};
/* Reads a comma-separated list of kinds ("kernel", "memcpy", "memset", "marker", or "all";
 * spaces around a name are allowed) into *mask. NULL or an empty string is every kind. Returns
 * 0, or -1 with the offending name (up to badlen - 1 bytes) in `bad` when a name is unknown or
 * the list names no kind. */
int kr_inject_parse_kinds(const char *spec, unsigned *mask, char *bad, size_t badlen);

/* ---- the records: each appends one line, newline included ---- */
typedef struct kr_inject_kernel {
    uint64_t start, end;
    uint32_t device, context, stream, correlation;
    int32_t grid[3], block[3];
    uint32_t registers;
    int32_t static_shared, dynamic_shared;
} kr_inject_kernel;

typedef struct kr_inject_totals {
    uint64_t kernels, memcpys, memsets, ranges, dropped, buffers, end_ns;
    /* KREACH_TRACE_ALTERNATE: whether it was set; the ranges of its name seen; how often the
     * traced kinds were switched on and off, and the time that took in the program's threads */
    int alternate;
    uint64_t alternate_ranges, switches_on, switches_off, switch_on_ns, switch_off_ns;
} kr_inject_totals;

/* kinds: the KR_TRACE_* mask being traced, written as a "kinds" array of names. alternate: the
 * range name of KREACH_TRACE_ALTERNATE, written as "alternate", or NULL (no key). */
void kr_inject_line_header(kr_jbuf *b, long pid, uint32_t cupti_version, uint64_t start_ns,
                           unsigned kinds, const char *alternate);
/* names_json: what kr_inject_names_json produced for the kernel's name (cached by the caller). */
void kr_inject_line_kernel(kr_jbuf *b, const kr_inject_kernel *k, const char *names_json,
                           size_t names_len);
void kr_inject_line_memcpy(kr_jbuf *b, uint64_t start, uint64_t end, uint64_t bytes,
                           unsigned copy_kind, uint32_t device, uint32_t stream,
                           uint32_t correlation);
void kr_inject_line_memset(kr_jbuf *b, uint64_t start, uint64_t end, uint64_t bytes,
                           uint32_t device, uint32_t stream);
/* domain: NULL for NVTX's default domain, and then no "domain" key is written. */
void kr_inject_line_range(kr_jbuf *b, const char *name, const char *domain, uint64_t start,
                          uint64_t end);
/* With t->alternate, also "alternate_ranges", "switches_on", "switches_off", "switch_on_ns" and
 * "switch_off_ns". */
void kr_inject_line_footer(kr_jbuf *b, const kr_inject_totals *t);

#endif
