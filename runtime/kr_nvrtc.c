/* kr_nvrtc.c: compiling CUDA C++ with NVRTC to a cubin, and the compile cache.
 * Runtime layer (no Lua). The cache is keyed by a 128-bit XXH3 hash of everything that can
 * change the cubin (source, effective options, architecture, NVRTC version); each disk entry
 * carries its key, length and checksum, so a truncated or corrupt file is detected and rebuilt.
 * The disk cache has a size cap (KREACH_CACHE_MAX, default 2 GiB): a hit marks its entry used
 * (its mtime), and after a write the least recently used entries go until the rest fit. The
 * key also says whether the compile could read outside the files it was allowed (a sealed
 * process gets entries of its own), and an entry that is not a regular file is a miss, never
 * opened in a way that blocks. A failed #include reads the same in the log whatever the reason
 * (NVRTC appends strerror's text, which told a denied file from a missing one). A confined
 * build (kr_nvrtc.h) runs NVRTC with its file access checked (kr_nvrtc_api.c). A program's
 * accessors and its freeing are kr_program.c's. */
#define _GNU_SOURCE
#include "kr_program.h"

#include <cuda_runtime.h>
#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <nvrtc.h>
#include "kr_nvrtc_api.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAX_SOURCE_KERNELS 256
#define DEFAULT_CACHE_MAX (2ull << 30)   /* the disk cache's cap without KREACH_CACHE_MAX */
#define MEM_CACHE_MAX (256ull << 20)     /* what one process keeps in its memory cache */
#define STALE_TEMP_S (3600)              /* a temporary this old was left by a killed writer */
static const char MAGIC[8] = {'K', 'R', 'C', 'U', 'B', 'I', 'N', '1'};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- a growable byte buffer for the cache payload ---- */

typedef struct { unsigned char *p; size_t n, cap; int oom; } buf;

static void put(buf *b, const void *d, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap * 2 : 4096;
        while (c < b->n + n) c *= 2;
        unsigned char *q = realloc(b->p, c);
        if (!q) { b->oom = 1; return; }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void put_u64(buf *b, uint64_t v) { put(b, &v, 8); }
static void put_str(buf *b, const char *s, size_t n) { put_u64(b, n); put(b, s, n); }

typedef struct { const unsigned char *p; size_t n, at; int bad; } reader;

static uint64_t get_u64(reader *r) {
    uint64_t v = 0;
    if (r->bad || r->n - r->at < 8) { r->bad = 1; return 0; }
    memcpy(&v, r->p + r->at, 8);
    r->at += 8;
    return v;
}

static const unsigned char *get_bytes(reader *r, size_t n) {
    if (r->bad || r->n - r->at < n) { r->bad = 1; return NULL; }
    const unsigned char *q = r->p + r->at;
    r->at += n;
    return q;
}

static char *get_str(reader *r) {
    uint64_t n = get_u64(r);
    const unsigned char *q = get_bytes(r, (size_t)n);
    if (!q) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) { r->bad = 1; return NULL; }
    memcpy(s, q, (size_t)n);
    s[n] = 0;
    return s;
}

/* ---- the memory cache: payloads by key, on the context ---- */

typedef struct { XXH128_hash_t key; unsigned char *payload; size_t n; } mem_entry;
typedef struct { mem_entry *e; int n, cap; size_t bytes; } mem_cache;

static void mem_cache_free(void *p) {
    mem_cache *m = p;
    for (int i = 0; i < m->n; i++) free(m->e[i].payload);
    free(m->e);
    free(m);
}

static mem_cache *mem_cache_of(kr_context *ctx) {
    mem_cache *m = kr_context_ext(ctx, KR_EXT_NVRTC);
    if (!m && (m = calloc(1, sizeof *m))) kr_context_set_ext(ctx, KR_EXT_NVRTC, m, mem_cache_free);
    return m;
}

static const mem_entry *mem_find(mem_cache *m, XXH128_hash_t key) {
    for (int i = 0; m && i < m->n; i++)
        if (XXH128_isEqual(m->e[i].key, key)) return &m->e[i];
    return NULL;
}

/* Keeps a copy; the oldest entries go when the cache would pass MEM_CACHE_MAX, and an entry
 * larger than that is not kept. */
static void mem_put(mem_cache *m, XXH128_hash_t key, const unsigned char *payload, size_t n) {
    if (!m || mem_find(m, key) || n > MEM_CACHE_MAX) return;
    int drop = 0;
    while (drop < m->n && m->bytes + n > MEM_CACHE_MAX) {
        m->bytes -= m->e[drop].n;
        free(m->e[drop++].payload);
    }
    if (drop) {
        memmove(m->e, m->e + drop, sizeof *m->e * (size_t)(m->n - drop));
        m->n -= drop;
    }
    if (m->n == m->cap) {
        int c = m->cap ? m->cap * 2 : 16;
        mem_entry *e = realloc(m->e, sizeof *e * (size_t)c);
        if (!e) return;
        m->e = e;
        m->cap = c;
    }
    unsigned char *copy = malloc(n);
    if (!copy) return;
    memcpy(copy, payload, n);
    m->e[m->n++] = (mem_entry){key, copy, n};
    m->bytes += n;
}

/* ---- the disk cache ---- */

static int mkdirs(const char *path) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return (mkdir(tmp, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

static int cache_dir(const kr_build_opts *o, char *out, size_t n) {
    const char *d = o->cache_dir;
    if (d && !*d) return 0;
    if (!d) d = getenv("KREACH_CACHE_DIR");
    if (d && *d) return snprintf(out, n, "%s", d) < (int)n;
    const char *x = getenv("XDG_CACHE_HOME");
    if (x && *x) return snprintf(out, n, "%s/kreach", x) < (int)n;
    const char *h = getenv("HOME");
    if (h && *h) return snprintf(out, n, "%s/.cache/kreach", h) < (int)n;
    return 0;
}

/* The disk cache's cap in bytes from KREACH_CACHE_MAX: a number of bytes, or with a suffix K,
 * M, G or T (powers of 1024; "KiB", "MB" and the like read the same); 0 turns the disk cache
 * off. Unset or empty: DEFAULT_CACHE_MAX. Returns 0 with *out set, -1 for a value that is not
 * a size. */
static int cache_max(unsigned long long *out) {
    const char *v = getenv("KREACH_CACHE_MAX");
    *out = DEFAULT_CACHE_MAX;
    if (!v || !*v) return 0;
    const char *q = v;
    unsigned long long n = 0;
    if (!isdigit((unsigned char)*q)) return -1;
    while (isdigit((unsigned char)*q)) {
        unsigned d = (unsigned)(*q++ - '0');
        if (n > (~0ull - d) / 10) return -1;
        n = n * 10 + d;
    }
    unsigned shift = 0;
    switch (toupper((unsigned char)*q)) {
    case 0: break;
    case 'K': shift = 10; q++; break;
    case 'M': shift = 20; q++; break;
    case 'G': shift = 30; q++; break;
    case 'T': shift = 40; q++; break;
    case 'B': break;
    default: return -1;
    }
    if (shift && (*q == 'i' || *q == 'I')) q++;
    if (*q == 'b' || *q == 'B') q++;
    if (*q) return -1;
    if (shift && n > (~0ull >> shift)) return -1;
    *out = n << shift;
    return 0;
}

#define CACHE_MAX_ERROR "KREACH_CACHE_MAX='%s' is not a size (bytes, or a number with K, M, G or T; 0 turns the disk cache off)"

int kr_nvrtc_cache_max(unsigned long long *bytes, char *err, size_t errlen) {
    if (cache_max(bytes) == 0) return 0;
    snprintf(err, errlen, CACHE_MAX_ERROR, getenv("KREACH_CACHE_MAX"));
    return -1;
}

typedef struct { char name[128]; unsigned long long size; struct timespec used; } cache_file;

static int older(const void *a, const void *b) {
    const struct timespec *x = &((const cache_file *)a)->used, *y = &((const cache_file *)b)->used;
    if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
    return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

/* Removes the least recently used entries of the cache directory (by mtime, which a hit
 * renews) until the entries' sizes add up to at most `cap`, never `keep` (the one just
 * written); and temporaries of writers that died, once STALE_TEMP_S old. Other processes may
 * be doing the same: an entry removed under a reader reads as absent (compiled again). */
static void evict(const char *dir, unsigned long long cap, const char *keep) {
    DIR *d = opendir(dir);
    if (!d) return;
    cache_file *files = NULL;
    size_t n = 0, capn = 0;
    unsigned long long total = 0;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *nm = e->d_name;
        size_t len = strlen(nm);
        struct stat st;
        if (len >= sizeof files->name || fstatat(dirfd(d), nm, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if (strstr(nm, ".kcubin.tmp.")) {
            if (now - st.st_mtim.tv_sec > STALE_TEMP_S) unlinkat(dirfd(d), nm, 0);
            continue;
        }
        if (len < 8 || strcmp(nm + len - 7, ".kcubin") != 0) continue;
        if (n == capn) {
            size_t c = capn ? capn * 2 : 64;
            cache_file *f = realloc(files, sizeof *f * c);
            if (!f) break;
            files = f;
            capn = c;
        }
        memcpy(files[n].name, nm, len + 1);
        files[n].size = (unsigned long long)st.st_size;
        files[n].used = st.st_mtim;
        total += files[n].size;
        n++;
    }
    if (total > cap && n) {
        qsort(files, n, sizeof *files, older);
        for (size_t i = 0; i < n && total > cap; i++) {
            if (keep && !strcmp(files[i].name, keep)) continue;
            if (unlinkat(dirfd(d), files[i].name, 0) == 0 || errno == ENOENT) total -= files[i].size;
        }
    }
    free(files);
    closedir(d);
}

/* Entry: magic, key (16 bytes), payload length, XXH3-64 of the payload, payload. */
static int disk_read(const char *path, XXH128_hash_t key, unsigned char **payload, size_t *n,
                     char *why, size_t whylen) {
    /* O_NONBLOCK: a FIFO planted at the name would otherwise block the open until a writer
     * came; O_NOFOLLOW: entries are written by rename, never links. Anything but a regular
     * file is a miss, compiled again and replaced by the rename. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return 0; /* absent */
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "%s: not a regular file%s%s", path, fd < 0 ? ": " : "",
                 fd < 0 ? strerror(errno) : "");
        if (fd >= 0) close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    unsigned char head[8 + 16 + 8 + 8];
    int ok = 0;
    if (fread(head, 1, sizeof head, f) != sizeof head) {
        snprintf(why, whylen, "%s: truncated header", path);
    } else if (memcmp(head, MAGIC, 8) != 0) {
        snprintf(why, whylen, "%s: not a kreach cache entry", path);
    } else {
        XXH128_canonical_t kc;
        XXH128_canonicalFromHash(&kc, key);
        uint64_t len, sum;
        memcpy(&len, head + 24, 8);
        memcpy(&sum, head + 32, 8);
        if (memcmp(head + 8, kc.digest, 16) != 0) {
            snprintf(why, whylen, "%s: entry is for another key", path);
        } else if (len > ((uint64_t)1 << 32)) {
            snprintf(why, whylen, "%s: implausible length %llu", path, (unsigned long long)len);
        } else {
            unsigned char *p = malloc(len ? (size_t)len : 1);
            if (p && fread(p, 1, (size_t)len, f) == len && fgetc(f) == EOF &&
                XXH3_64bits(p, (size_t)len) == sum) {
                *payload = p;
                *n = (size_t)len;
                ok = 1;
                /* used now: the last to be evicted (fails harmlessly on a read-only cache) */
                futimens(fileno(f), NULL);
            } else {
                free(p);
                snprintf(why, whylen, "%s: length or checksum does not match its contents", path);
            }
        }
    }
    fclose(f);
    return ok ? 1 : -1;
}

/* Writes the entry through a temporary made by mkstemp (a name nobody can guess or plant a
 * link at) renamed into place. */
static int disk_write(const char *path, XXH128_hash_t key, const unsigned char *payload,
                      size_t n, char *why, size_t whylen) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return -1;
    }
    fchmod(fd, 0644); /* mkstemp makes 0600; cache entries are as readable as before */
    XXH128_canonical_t kc;
    XXH128_canonicalFromHash(&kc, key);
    uint64_t len = n, sum = XXH3_64bits(payload, n);
    int ok = fwrite(MAGIC, 1, 8, f) == 8 && fwrite(kc.digest, 1, 16, f) == 16 &&
             fwrite(&len, 1, 8, f) == 8 && fwrite(&sum, 1, 8, f) == 8 &&
             fwrite(payload, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    /* rename is atomic: a reader sees the old entry or the whole new one, never a part */
    if (!ok || rename(tmp, path) != 0) {
        snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ---- program construction ---- */

static kr_pkernel *add_kernel(kr_program *p, const char *name) {
    kr_pkernel *k = realloc(p->kernels, sizeof *k * (size_t)(p->n_kernels + 1));
    if (!k) return NULL;
    p->kernels = k;
    k = &p->kernels[p->n_kernels];
    memset(k, 0, sizeof *k);
    k->name = strdup(name);
    if (!k->name) return NULL;
    p->n_kernels++;
    return k;
}

/* Payload: cubin, log, then pairs of (name expression, lowered name). */
static kr_status from_payload(kr_context *ctx, kr_program *p, const kr_build_opts *o,
                              const unsigned char *payload, size_t n) {
    reader r = {payload, n, 0, 0};
    uint64_t cl = get_u64(&r);
    const unsigned char *cubin = get_bytes(&r, (size_t)cl);
    p->log = get_str(&r);
    uint64_t ne = get_u64(&r);
    if (r.bad || ne != (uint64_t)o->n_instantiate)
        return KR_ERROR(ctx, KR_ERR_IO, "malformed compile-cache payload");
    if (!(p->cubin = malloc(cl ? (size_t)cl : 1))) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    memcpy(p->cubin, cubin, (size_t)cl);
    p->cubin_size = (size_t)cl;

    char err[512];
    kr_kernel_sig *sigs = malloc(sizeof *sigs * MAX_SOURCE_KERNELS);
    if (!sigs) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    int ns = kr_sig_parse_source(o->source, sigs, MAX_SOURCE_KERNELS, err, sizeof err);
    if (ns < 0) {
        free(sigs);
        return KR_ERROR(ctx, KR_ERR_COMPILE, "%s: compiled, but kreach cannot read its kernel "
                        "signatures: %s", p->name, err);
    }
    if (ns > MAX_SOURCE_KERNELS) ns = MAX_SOURCE_KERNELS;
    kr_status s = KR_OK;
    for (int i = 0; i < ns && s == KR_OK; i++) {
        if (sigs[i].is_template) continue; /* launched through `instantiate` only */
        if (kr_program_find(p, sigs[i].name) >= 0) continue; /* overloads: first one named */
        kr_pkernel *k = add_kernel(p, sigs[i].name);
        if (!k) { s = KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory"); break; }
        k->sig = sigs[i];
        k->from_source = 1;
        k->cpp = !sigs[i].extern_c;
        if (!k->cpp && !(k->lowered = strdup(sigs[i].name)))
            s = KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    free(sigs);
    for (uint64_t i = 0; i < ne && s == KR_OK; i++) {
        char *expr = get_str(&r), *low = get_str(&r);
        if (r.bad || !expr || !low) {
            free(expr); free(low);
            return KR_ERROR(ctx, KR_ERR_IO, "malformed compile-cache payload");
        }
        kr_pkernel *k = add_kernel(p, expr);
        free(expr);
        if (!k) { free(low); return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory"); }
        k->lowered = low;
        if (kr_sig_demangle(low, &k->sig, err, sizeof err) != 0)
            k->sig.n_params = -1; /* reported at launch, with the mangled name */
    }
    return s;
}

/* One text for a failed #include, whatever the reason: NVRTC 13.0 writes
 *   x.cu(1): catastrophic error: cannot open source file "/etc/shadow": Permission denied
 * for a file that exists but may not be read (under the seal) and no ": ..." for one that does
 * not exist, so the log told whether a path exists. Everything after the last quote of such a
 * line goes (a name may itself hold a quote, a reason never does). In place. */
static void normalise_log(char *log) {
    static const char what[] = "cannot open source file \"";
    char *w = log;
    for (char *r = log; *r;) {
        char *e = strchr(r, '\n');
        size_t len = e ? (size_t)(e - r) : strlen(r);
        char *m = memmem(r, len, what, sizeof what - 1);
        size_t keep = len;
        if (m) {
            char *q = r + len;
            while (q > m + sizeof what - 1 && q[-1] != '"') q--;
            if (q > m + sizeof what - 1) keep = (size_t)(q - r);
        }
        memmove(w, r, keep);
        w += keep;
        r += len;
        if (*r == '\n') { *w++ = '\n'; r++; }
    }
    *w = 0;
}

/* Whether this thread may read what an unsealed process reads: a Landlock domain (the seal)
 * grants none of "/" itself, so listing it fails with EACCES there. The compile cache keys on
 * it: an entry compiled unsealed (whose cubin may hold a file's bytes the seal would deny) is
 * not what a sealed compile of the same source may read back. */
static int reads_unconfined(void) {
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

/* ---- confined sources: the hashes of the sources to build confined, process-wide ---- */

static pthread_mutex_t confined_lock = PTHREAD_MUTEX_INITIALIZER;
static XXH128_hash_t *confined_sources;
static size_t n_confined, cap_confined;

int kr_nvrtc_confine_source(const char *source) {
    XXH128_hash_t h = XXH3_128bits(source, strlen(source));
    int rc = 0;
    pthread_mutex_lock(&confined_lock);
    int have = 0;
    for (size_t i = 0; i < n_confined && !have; i++) have = XXH128_isEqual(confined_sources[i], h);
    if (!have) {
        if (n_confined == cap_confined) {
            size_t c = cap_confined ? cap_confined * 2 : 16;
            XXH128_hash_t *q = realloc(confined_sources, sizeof *q * c);
            if (q) { confined_sources = q; cap_confined = c; }
        }
        if (n_confined < cap_confined) confined_sources[n_confined++] = h;
        else rc = -1;
    }
    pthread_mutex_unlock(&confined_lock);
    return rc;
}

static int source_confined(const char *source) {
    XXH128_hash_t h = XXH3_128bits(source, strlen(source));
    int have = 0;
    pthread_mutex_lock(&confined_lock);
    for (size_t i = 0; i < n_confined && !have; i++) have = XXH128_isEqual(confined_sources[i], h);
    pthread_mutex_unlock(&confined_lock);
    return have;
}

static kr_status compile(kr_context *ctx, kr_program *p, const kr_build_opts *o,
                         const char **opts, int nopts, buf *payload, int confine) {
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, o->source, p->name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return KR_ERROR(ctx, KR_ERR_NVRTC, "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
    kr_status s = KR_OK;
    for (int i = 0; i < o->n_instantiate && r == NVRTC_SUCCESS; i++)
        r = nvrtcAddNameExpression(prog, o->instantiate[i]);
    if (r != NVRTC_SUCCESS) {
        s = KR_ERROR(ctx, KR_ERR_NVRTC, "nvrtcAddNameExpression: %s", nvrtcGetErrorString(r));
        goto done;
    }
    if (confine) {
        /* the roots: the toolkit's headers (the last option, added by kr_nvrtc_build) and the
         * options' own -I directories */
        const char *roots[16];
        int nr = 0;
        for (int i = 0; i < nopts && nr < 16; i++) {
            const char *d = !strncmp(opts[i], "-I", 2) ? opts[i] + 2
                          : !strncmp(opts[i], "--include-path=", 15) ? opts[i] + 15 : NULL;
            if (d && *d) roots[nr++] = d;
        }
        char why[320];
        if (kr_nvrtc_confine_begin(roots, nr, why, sizeof why) != 0) {
            s = KR_ERROR(ctx, KR_ERR_NVRTC, "%s: %s", p->name, why);
            goto done;
        }
        r = nvrtcCompileProgram(prog, nopts, opts);
        kr_nvrtc_confine_end();
    } else {
        r = nvrtcCompileProgram(prog, nopts, opts);
    }
    size_t loglen = 0;
    nvrtcGetProgramLogSize(prog, &loglen);
    char *log = calloc(1, loglen + 1);
    if (!log) { s = KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory"); goto done; }
    if (loglen) nvrtcGetProgramLog(prog, log);
    normalise_log(log);
    for (size_t n = strlen(log); n && (log[n - 1] == '\n' || log[n - 1] == 0); n--) log[n - 1] = 0;
    if (r != NVRTC_SUCCESS) {
        s = KR_ERROR(ctx, KR_ERR_COMPILE, "%s: compilation failed (%s)\n%s", p->name,
                     nvrtcGetErrorString(r), log);
        free(log);
        goto done;
    }
    size_t cl = 0;
    char *cubin = NULL;
    if ((r = nvrtcGetCUBINSize(prog, &cl)) != NVRTC_SUCCESS || !(cubin = malloc(cl ? cl : 1)) ||
        (r = nvrtcGetCUBIN(prog, cubin)) != NVRTC_SUCCESS) {
        s = KR_ERROR(ctx, KR_ERR_NVRTC, "nvrtcGetCUBIN: %s", nvrtcGetErrorString(r));
        free(cubin);
        free(log);
        goto done;
    }
    put_str(payload, cubin, cl);
    put_str(payload, log, strlen(log));
    put_u64(payload, (uint64_t)o->n_instantiate);
    free(cubin);
    free(log);
    for (int i = 0; i < o->n_instantiate; i++) {
        const char *low = NULL;
        if ((r = nvrtcGetLoweredName(prog, o->instantiate[i], &low)) != NVRTC_SUCCESS) {
            s = KR_ERROR(ctx, KR_ERR_COMPILE, "%s: no kernel for '%s' (%s)", p->name,
                         o->instantiate[i], nvrtcGetErrorString(r));
            goto done;
        }
        put_str(payload, o->instantiate[i], strlen(o->instantiate[i]));
        put_str(payload, low, strlen(low));
    }
    if (payload->oom) s = KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
done:
    nvrtcDestroyProgram(&prog);
    return s;
}

static int valid_arch(const char *a) {
    if (strncmp(a, "sm_", 3) != 0) return 0;
    const char *q = a + 3;
    int digits = 0;
    while (*q >= '0' && *q <= '9') { q++; digits++; }
    return digits >= 2 && digits <= 3 && (!*q || ((*q == 'a' || *q == 'f') && !q[1]));
}

static const char *toolkit_include(void) {
    static char dir[1024];
    const char *cands[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (int i = 0; i < 3; i++) {
        struct stat st;
        if (!cands[i] || !*cands[i]) continue;
        snprintf(dir, sizeof dir, "%s/include", cands[i]);
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return dir;
    }
    return NULL;
}

/* The architecture to build for, into arch: o->arch (checked), else the device's; an option
 * that names one (-arch, --gpu-architecture) is refused. */
static kr_status build_arch(kr_context *ctx, const kr_build_opts *o, char *arch, size_t n) {
    if (o->arch) {
        if (!valid_arch(o->arch))
            return KR_ERROR(ctx, KR_ERR_ARG, "build: arch '%s' is not of the form sm_90 (or "
                            "sm_90a)", o->arch);
        snprintf(arch, n, "%s", o->arch);
    } else {
        kr_device_info d;
        kr_status s = kr_context_device(ctx, &d);
        if (s == KR_ERR_NODEVICE)
            return KR_ERROR(ctx, KR_ERR_NODEVICE, "%s (to compile without a GPU, give an "
                            "explicit arch such as sm_90)", kr_context_errmsg(ctx));
        if (s != KR_OK) return s;
        snprintf(arch, n, "sm_%d%d", d.cc_major, d.cc_minor);
    }
    for (int i = 0; i < o->n_options; i++) {
        const char *op = o->options[i];
        if (!strncmp(op, "-arch", 5) || !strncmp(op, "--gpu-architecture", 18))
            return KR_ERROR(ctx, KR_ERR_ARG, "build: give the architecture as arch, not as the "
                            "option '%s'", op);
    }
    return KR_OK;
}

/* The cache key, into *key: NVRTC's version, how the compile reads files, the effective
 * options, the instantiations, the name and the source. 0, or -1 out of host memory. */
static int cache_key(const kr_build_opts *o, const char **opts, int nopts, const char *name,
                     int confine, XXH128_hash_t *key) {
    int vmaj = 0, vmin = 0;
    nvrtcVersion(&vmaj, &vmin);
    XXH3_state_t *hs = XXH3_createState();
    if (!hs) return -1;
    XXH3_128bits_reset(hs);
    char ver[96];
    int vn = snprintf(ver, sizeof ver, "kreach-cache-1 nvrtc %d.%d reads %s%s", vmaj, vmin,
                      reads_unconfined() ? "any" : "sealed", confine ? " confined" : "") + 1;
    XXH3_128bits_update(hs, ver, (size_t)vn);
    for (int i = 0; i < nopts; i++) XXH3_128bits_update(hs, opts[i], strlen(opts[i]) + 1);
    XXH3_128bits_update(hs, "\1", 1);
    for (int i = 0; i < o->n_instantiate; i++)
        XXH3_128bits_update(hs, o->instantiate[i], strlen(o->instantiate[i]) + 1);
    XXH3_128bits_update(hs, "\1", 1);
    XXH3_128bits_update(hs, name, strlen(name) + 1); /* the name shows in the log */
    XXH3_128bits_update(hs, o->source, strlen(o->source));
    *key = XXH3_128bits_digest(hs);
    XXH3_freeState(hs);
    return 0;
}

/* A payload just compiled into the disk cache (dir, path), unless no cache was asked for or
 * the entry is over the cap; p->cache_note says why it was not stored. */
static void store_entry(kr_program *p, const kr_build_opts *o, int have_dir, const char *dir,
                        const char *path, unsigned long long cap, XXH128_hash_t key,
                        const unsigned char *use, size_t use_n) {
    unsigned long long entry = 40 + (unsigned long long)use_n; /* header + payload */
    if (have_dir && entry > cap) {
        snprintf(p->cache_note, sizeof p->cache_note, "not stored: the entry's %llu "
                 "bytes are more than the disk cache's cap of %llu (KREACH_CACHE_MAX)",
                 entry, cap);
    } else if (have_dir) {
        if (mkdirs(dir) != 0)
            snprintf(p->cache_note, sizeof p->cache_note,
                     "cannot create cache directory %s: %s", dir, strerror(errno));
        else if (disk_write(path, key, use, use_n, p->cache_note,
                            sizeof p->cache_note) == 0)
            evict(dir, cap, strrchr(path, '/') + 1);
    } else if (!o->no_cache) {
        snprintf(p->cache_note, sizeof p->cache_note, cap == 0
                 ? "the disk cache is off (KREACH_CACHE_MAX=0)" : "no disk cache directory");
    }
}

const char *kr_nvrtc_ensure_loaded(void) { return kr_nvrtc_load(); }

kr_status kr_nvrtc_build(kr_context *ctx, const kr_build_opts *o, kr_program **out) {
    double t0 = now_ms();
    *out = NULL;
    if (!o->source) return KR_ERROR(ctx, KR_ERR_ARG, "build: no source given");
    const char *unloaded = kr_nvrtc_load();
    if (unloaded) return KR_ERROR(ctx, KR_ERR_NVRTC, "%s", unloaded);
    const char *name = o->name && *o->name ? o->name : "kernel.cu";
    char arch[32];
    kr_status as = build_arch(ctx, o, arch, sizeof arch);
    if (as != KR_OK) return as;

    /* the effective options: the architecture first, the toolkit's headers last */
    const char **opts = calloc((size_t)o->n_options + 3, sizeof *opts);
    if (!opts) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    char archopt[48], incopt[1100];
    int nopts = 0;
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    opts[nopts++] = archopt;
    for (int i = 0; i < o->n_options; i++) opts[nopts++] = o->options[i];
    const char *inc = toolkit_include();
    if (inc) {
        snprintf(incopt, sizeof incopt, "-I%s", inc);
        opts[nopts++] = incopt;
    }

    int confine = o->confine || source_confined(o->source);
    XXH128_hash_t key;
    if (cache_key(o, opts, nopts, name, confine, &key) != 0) {
        free(opts);
        return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    }

    kr_program *p = calloc(1, sizeof *p);
    if (!p || !(p->name = strdup(name))) {
        free(p);
        free(opts);
        return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    snprintf(p->arch, sizeof p->arch, "%s", arch);
    snprintf(p->key, sizeof p->key, "%016llx%016llx", (unsigned long long)key.high64,
             (unsigned long long)key.low64);
    p->device = -1;

    kr_status s = KR_OK;
    buf payload = {0};
    const unsigned char *use = NULL;
    size_t use_n = 0;
    unsigned char *disk = NULL;
    mem_cache *mem = o->no_cache ? NULL : mem_cache_of(ctx);
    const mem_entry *hit = mem_find(mem, key);
    char dir[4096];
    unsigned long long cap = DEFAULT_CACHE_MAX;
    if (!o->no_cache && cache_max(&cap) != 0) {
        kr_program_free(p);
        free(opts);
        return KR_ERROR(ctx, KR_ERR_ARG, CACHE_MAX_ERROR, getenv("KREACH_CACHE_MAX"));
    }
    int have_dir = !o->no_cache && cap > 0 && cache_dir(o, dir, sizeof dir);
    char path[4200] = "";
    if (have_dir) snprintf(path, sizeof path, "%s/%s.kcubin", dir, p->key);
    p->cache_path = strdup(path);

    if (hit) {
        use = hit->payload;
        use_n = hit->n;
        p->cache = KR_CACHE_MEMORY;
    } else {
        int found = 0;
        if (have_dir)
            found = disk_read(path, key, &disk, &use_n, p->cache_note, sizeof p->cache_note);
        if (found == 1) {
            use = disk;
            p->cache = KR_CACHE_DISK;
        } else {
            s = compile(ctx, p, o, opts, nopts, &payload, confine);
            if (s == KR_OK) {
                use = payload.p;
                use_n = payload.n;
                p->cache = o->no_cache ? KR_CACHE_OFF : found == -1 ? KR_CACHE_REBUILT
                                                                    : KR_CACHE_MISS;
                store_entry(p, o, have_dir, dir, path, cap, key, use, use_n);
            }
        }
        if (s == KR_OK) mem_put(mem, key, use, use_n);
    }
    if (s == KR_OK) s = from_payload(ctx, p, o, use, use_n);
    free(disk);
    free(payload.p);
    free(opts);
    if (s != KR_OK) {
        kr_program_free(p);
        return s;
    }
    if (!p->log && !(p->log = strdup(""))) {
        kr_program_free(p);
        return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    p->compile_ms = now_ms() - t0;
    *out = p;
    return KR_OK;
}
