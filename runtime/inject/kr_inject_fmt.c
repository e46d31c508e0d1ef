/* kr_inject_fmt.c: the text side of libkreach_inject: byte buffer, JSON escaping, demangling and
 * the JSON Lines records of the trace (docs/profiling-inject.md). Runtime layer, no CUPTI calls.
 * Records are formatted by hand rather than with snprintf: this runs once per GPU activity. */
#include "kr_inject_fmt.h"

#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (the library links libstdc++); declared here so this file stays C. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

void kr_jbuf_free(kr_jbuf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

int kr_jbuf_reserve(kr_jbuf *b, size_t n) {
    if (b->failed)
        return -1;
    if (b->len + n + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void kr_jbuf_raw(kr_jbuf *b, const char *s, size_t n) {
    if (kr_jbuf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void kr_jbuf_cstr(kr_jbuf *b, const char *s) { kr_jbuf_raw(b, s, strlen(s)); }

void kr_jbuf_u64(kr_jbuf *b, uint64_t v) {
    char tmp[24];
    int i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    kr_jbuf_raw(b, tmp + i, sizeof tmp - (size_t)i);
}

void kr_jbuf_i64(kr_jbuf *b, int64_t v) {
    if (v < 0) {
        kr_jbuf_raw(b, "-", 1);
        kr_jbuf_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        kr_jbuf_u64(b, (uint64_t)v);
    }
}

const char *kr_jbuf_text(kr_jbuf *b) {
    if (kr_jbuf_reserve(b, 0))
        return "";
    b->p[b->len] = 0;
    return b->p;
}

/* Length of the well-formed UTF-8 sequence at s (2 to 4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s) {
    unsigned c = s[0];
    unsigned lo = 0x80, hi = 0xBF;
    size_t n;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) { n = 3; lo = 0xA0; }
    else if (c == 0xED) { n = 3; hi = 0x9F; }  /* no UTF-16 surrogates */
    else if (c >= 0xE1 && c <= 0xEF) n = 3;
    else if (c == 0xF0) { n = 4; lo = 0x90; }
    else if (c == 0xF4) { n = 4; hi = 0x8F; }  /* nothing above U+10FFFF */
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

void kr_jbuf_json_string(kr_jbuf *b, const char *str) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    kr_jbuf_raw(b, "\"", 1);
    while (*s) {
        /* the common case: a run of printable ASCII, copied at once */
        const unsigned char *run = s;
        while (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
            s++;
        if (s > run)
            kr_jbuf_raw(b, (const char *)run, (size_t)(s - run));
        if (!*s)
            break;
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            kr_jbuf_raw(b, e, 2);
            s++;
        } else if (c < 0x20) {
            const char *e = NULL;
            switch (c) {
            case '\n': e = "\\n"; break;
            case '\r': e = "\\r"; break;
            case '\t': e = "\\t"; break;
            case '\b': e = "\\b"; break;
            case '\f': e = "\\f"; break;
            }
            if (e) {
                kr_jbuf_raw(b, e, 2);
            } else {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                kr_jbuf_raw(b, u, 6);
            }
            s++;
        } else {
            size_t n = utf8_len(s);
            if (n) {
                kr_jbuf_raw(b, (const char *)s, n);
                s += n;
            } else {
                kr_jbuf_raw(b, "\\ufffd", 6);
                s++;
            }
        }
    }
    kr_jbuf_raw(b, "\"", 1);
}

char *kr_inject_demangle(const char *name) {
    if (!name || name[0] != '_' || name[1] != 'Z')
        return NULL;
    int status = 0;
    char *out = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

void kr_inject_names_json(kr_jbuf *b, const char *mangled) {
    char *plain = kr_inject_demangle(mangled);
    kr_jbuf_cstr(b, "\"name\":");
    kr_jbuf_json_string(b, plain ? plain : mangled);
    kr_jbuf_cstr(b, ",\"mangled\":");
    kr_jbuf_json_string(b, mangled);
    free(plain);
}

const char *kr_inject_copy_kind(unsigned kind) {
    /* indexed by CUpti_ActivityMemcpyKind (kr_inject.c checks the values at compile time) */
    static const char *const names[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

/* `,"key":value` and friends, to keep the record functions readable */
static void key_u64(kr_jbuf *b, const char *key, uint64_t v) {
    kr_jbuf_cstr(b, key);
    kr_jbuf_u64(b, v);
}

static void key_dim3(kr_jbuf *b, const char *key, const int32_t d[3]) {
    kr_jbuf_cstr(b, key);
    kr_jbuf_raw(b, "[", 1);
    kr_jbuf_i64(b, d[0]);
    kr_jbuf_raw(b, ",", 1);
    kr_jbuf_i64(b, d[1]);
    kr_jbuf_raw(b, ",", 1);
    kr_jbuf_i64(b, d[2]);
    kr_jbuf_raw(b, "]", 1);
}

static const char *const kind_names[] = {"kernel", "memcpy", "memset", "marker"};

static void set_bad(char *bad, size_t badlen, const char *s, size_t n) {
    if (!bad || !badlen)
        return;
    if (n > badlen - 1)
        n = badlen - 1;
    memcpy(bad, s, n);
    bad[n] = 0;
}

int kr_inject_parse_kinds(const char *spec, unsigned *mask, char *bad, size_t badlen) {
    *mask = 0;
    set_bad(bad, badlen, "", 0);
    if (!spec || !*spec) {
        *mask = KR_TRACE_ALL;
        return 0;
    }
    const char *p = spec;
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        const char *a = p, *z = end;
        while (a < z && (*a == ' ' || *a == '\t'))
            a++;
        while (z > a && (z[-1] == ' ' || z[-1] == '\t'))
            z--;
        size_t n = (size_t)(z - a);
        unsigned bit = 0;
        if (n == 3 && !memcmp(a, "all", 3))
            bit = KR_TRACE_ALL;
        for (unsigned i = 0; !bit && i < sizeof kind_names / sizeof kind_names[0]; i++)
            if (strlen(kind_names[i]) == n && !memcmp(a, kind_names[i], n))
                bit = 1u << i;
        if (!bit) {
            set_bad(bad, badlen, a, n);
            *mask = 0;
            return -1;
        }
        *mask |= bit;
        if (!*end)
            break;
        p = end + 1;
    }
    return 0;
}

void kr_inject_line_header(kr_jbuf *b, long pid, uint32_t cupti_version, uint64_t start_ns,
                           unsigned kinds, const char *alternate) {
    kr_jbuf_cstr(b, "{\"type\":\"header\",\"version\":1,\"pid\":");
    kr_jbuf_i64(b, pid);
    key_u64(b, ",\"cupti_version\":", cupti_version);
    key_u64(b, ",\"start_ns\":", start_ns);
    kr_jbuf_cstr(b, ",\"kinds\":[");
    int first = 1;
    for (unsigned i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++) {
        if (!(kinds & (1u << i)))
            continue;
        if (!first)
            kr_jbuf_raw(b, ",", 1);
        kr_jbuf_json_string(b, kind_names[i]);
        first = 0;
    }
    kr_jbuf_raw(b, "]", 1);
    if (alternate) {
        kr_jbuf_cstr(b, ",\"alternate\":");
        kr_jbuf_json_string(b, alternate);
    }
    kr_jbuf_raw(b, "}\n", 2);
}

void kr_inject_line_kernel(kr_jbuf *b, const kr_inject_kernel *k, const char *names_json,
                           size_t names_len) {
    kr_jbuf_cstr(b, "{\"type\":\"kernel\",");
    kr_jbuf_raw(b, names_json, names_len);
    key_u64(b, ",\"start\":", k->start);
    key_u64(b, ",\"end\":", k->end);
    key_u64(b, ",\"device\":", k->device);
    key_u64(b, ",\"context\":", k->context);
    key_u64(b, ",\"stream\":", k->stream);
    key_dim3(b, ",\"grid\":", k->grid);
    key_dim3(b, ",\"block\":", k->block);
    key_u64(b, ",\"registers\":", k->registers);
    kr_jbuf_cstr(b, ",\"static_shared\":");
    kr_jbuf_i64(b, k->static_shared);
    kr_jbuf_cstr(b, ",\"dynamic_shared\":");
    kr_jbuf_i64(b, k->dynamic_shared);
    key_u64(b, ",\"correlation\":", k->correlation);
    kr_jbuf_raw(b, "}\n", 2);
}

void kr_inject_line_memcpy(kr_jbuf *b, uint64_t start, uint64_t end, uint64_t bytes,
                           unsigned copy_kind, uint32_t device, uint32_t stream,
                           uint32_t correlation) {
    key_u64(b, "{\"type\":\"memcpy\",\"start\":", start);
    key_u64(b, ",\"end\":", end);
    key_u64(b, ",\"bytes\":", bytes);
    kr_jbuf_cstr(b, ",\"copy_kind\":\"");
    kr_jbuf_cstr(b, kr_inject_copy_kind(copy_kind));
    key_u64(b, "\",\"device\":", device);
    key_u64(b, ",\"stream\":", stream);
    key_u64(b, ",\"correlation\":", correlation);
    kr_jbuf_raw(b, "}\n", 2);
}

void kr_inject_line_memset(kr_jbuf *b, uint64_t start, uint64_t end, uint64_t bytes,
                           uint32_t device, uint32_t stream) {
    key_u64(b, "{\"type\":\"memset\",\"start\":", start);
    key_u64(b, ",\"end\":", end);
    key_u64(b, ",\"bytes\":", bytes);
    key_u64(b, ",\"device\":", device);
    key_u64(b, ",\"stream\":", stream);
    kr_jbuf_raw(b, "}\n", 2);
}

void kr_inject_line_range(kr_jbuf *b, const char *name, const char *domain, uint64_t start,
                          uint64_t end) {
    kr_jbuf_cstr(b, "{\"type\":\"range\",\"name\":");
    kr_jbuf_json_string(b, name);
    if (domain) {
        kr_jbuf_cstr(b, ",\"domain\":");
        kr_jbuf_json_string(b, domain);
    }
    key_u64(b, ",\"start\":", start);
    key_u64(b, ",\"end\":", end);
    kr_jbuf_raw(b, "}\n", 2);
}

void kr_inject_line_footer(kr_jbuf *b, const kr_inject_totals *t) {
    key_u64(b, "{\"type\":\"footer\",\"kernels\":", t->kernels);
    key_u64(b, ",\"memcpys\":", t->memcpys);
    key_u64(b, ",\"memsets\":", t->memsets);
    key_u64(b, ",\"ranges\":", t->ranges);
    key_u64(b, ",\"dropped\":", t->dropped);
    key_u64(b, ",\"buffers\":", t->buffers);
    key_u64(b, ",\"end_ns\":", t->end_ns);
    if (t->alternate) {
        key_u64(b, ",\"alternate_ranges\":", t->alternate_ranges);
        key_u64(b, ",\"switches_on\":", t->switches_on);
        key_u64(b, ",\"switches_off\":", t->switches_off);
        key_u64(b, ",\"switch_on_ns\":", t->switch_on_ns);
        key_u64(b, ",\"switch_off_ns\":", t->switch_off_ns);
    }
    kr_jbuf_raw(b, "}\n", 2);
}
