/* kr_nvrtc.c: compiling CUDA C++ with NVRTC to a cubin, and the compile cache.
 * Runtime layer (no Lua). The cache is keyed by a 128-bit XXH3 hash of everything that can
 * change the cubin (source, effective options, architecture, NVRTC version); each disk entry
 * carries its key, length and checksum, so a truncated or corrupt file is detected and rebuilt. */
#define _GNU_SOURCE
#include "kr_program.h"

#include <cuda_runtime.h>
#include <errno.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAX_SOURCE_KERNELS 256
static const char MAGIC[8] = {'K', 'R', 'C', 'U', 'B', 'I', 'N', '1'};

const char *kr_cache_result_name(kr_cache_result r) {
    switch (r) {
    case KR_CACHE_OFF: return "off";
    case KR_CACHE_MISS: return "miss";
    case KR_CACHE_MEMORY: return "memory";
    case KR_CACHE_DISK: return "disk";
    case KR_CACHE_REBUILT: return "rebuilt";
    }
    return "?";
}

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
typedef struct { mem_entry *e; int n, cap; } mem_cache;

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

static void mem_put(mem_cache *m, XXH128_hash_t key, const unsigned char *payload, size_t n) {
    if (!m || mem_find(m, key)) return;
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

/* Entry: magic, key (16 bytes), payload length, XXH3-64 of the payload, payload. */
static int disk_read(const char *path, XXH128_hash_t key, unsigned char **payload, size_t *n,
                     char *why, size_t whylen) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0; /* absent */
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
            } else {
                free(p);
                snprintf(why, whylen, "%s: length or checksum does not match its contents", path);
            }
        }
    }
    fclose(f);
    return ok ? 1 : -1;
}

static int disk_write(const char *path, XXH128_hash_t key, const unsigned char *payload,
                      size_t n, char *why, size_t whylen) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
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

void kr_program_free(kr_program *p) {
    if (!p) return;
    if (p->library) {
        int cur = -1;
        /* unloading needs the device it was loaded on to be current */
        if (cudaGetDevice(&cur) == cudaSuccess && cur != p->device) cudaSetDevice(p->device);
        cudaLibraryUnload((cudaLibrary_t)p->library);
        if (cur >= 0 && cur != p->device) cudaSetDevice(cur);
    }
    for (int i = 0; i < p->n_kernels; i++) {
        free(p->kernels[i].name);
        free(p->kernels[i].lowered);
    }
    free(p->kernels);
    free(p->name);
    free(p->log);
    free(p->cache_path);
    free(p->cubin);
    free(p);
}

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

static kr_status compile(kr_context *ctx, kr_program *p, const kr_build_opts *o,
                         const char **opts, int nopts, buf *payload) {
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
    r = nvrtcCompileProgram(prog, nopts, opts);
    size_t loglen = 0;
    nvrtcGetProgramLogSize(prog, &loglen);
    char *log = calloc(1, loglen + 1);
    if (!log) { s = KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory"); goto done; }
    if (loglen) nvrtcGetProgramLog(prog, log);
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

kr_status kr_nvrtc_build(kr_context *ctx, const kr_build_opts *o, kr_program **out) {
    double t0 = now_ms();
    *out = NULL;
    if (!o->source) return KR_ERROR(ctx, KR_ERR_ARG, "build: no source given");
    const char *name = o->name && *o->name ? o->name : "kernel.cu";
    char arch[32];
    if (o->arch) {
        if (!valid_arch(o->arch))
            return KR_ERROR(ctx, KR_ERR_ARG, "build: arch '%s' is not of the form sm_90 (or "
                            "sm_90a)", o->arch);
        snprintf(arch, sizeof arch, "%s", o->arch);
    } else {
        kr_device_info d;
        kr_status s = kr_context_device(ctx, &d);
        if (s == KR_ERR_NODEVICE)
            return KR_ERROR(ctx, KR_ERR_NODEVICE, "%s (to compile without a GPU, give an "
                            "explicit arch such as sm_90)", kr_context_errmsg(ctx));
        if (s != KR_OK) return s;
        snprintf(arch, sizeof arch, "sm_%d%d", d.cc_major, d.cc_minor);
    }
    for (int i = 0; i < o->n_options; i++) {
        const char *op = o->options[i];
        if (!strncmp(op, "-arch", 5) || !strncmp(op, "--gpu-architecture", 18))
            return KR_ERROR(ctx, KR_ERR_ARG, "build: give the architecture as arch, not as the "
                            "option '%s'", op);
    }

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

    int vmaj = 0, vmin = 0;
    nvrtcVersion(&vmaj, &vmin);
    XXH3_state_t *hs = XXH3_createState();
    if (!hs) { free(opts); return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory"); }
    XXH3_128bits_reset(hs);
    char ver[64];
    int vn = snprintf(ver, sizeof ver, "kreach-cache-1 nvrtc %d.%d", vmaj, vmin) + 1;
    XXH3_128bits_update(hs, ver, (size_t)vn);
    for (int i = 0; i < nopts; i++) XXH3_128bits_update(hs, opts[i], strlen(opts[i]) + 1);
    XXH3_128bits_update(hs, "\1", 1);
    for (int i = 0; i < o->n_instantiate; i++)
        XXH3_128bits_update(hs, o->instantiate[i], strlen(o->instantiate[i]) + 1);
    XXH3_128bits_update(hs, "\1", 1);
    XXH3_128bits_update(hs, name, strlen(name) + 1); /* the name shows in the log */
    XXH3_128bits_update(hs, o->source, strlen(o->source));
    XXH128_hash_t key = XXH3_128bits_digest(hs);
    XXH3_freeState(hs);

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
    int have_dir = !o->no_cache && cache_dir(o, dir, sizeof dir);
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
            s = compile(ctx, p, o, opts, nopts, &payload);
            if (s == KR_OK) {
                use = payload.p;
                use_n = payload.n;
                p->cache = o->no_cache ? KR_CACHE_OFF : found == -1 ? KR_CACHE_REBUILT
                                                                    : KR_CACHE_MISS;
                if (have_dir) {
                    if (mkdirs(dir) != 0)
                        snprintf(p->cache_note, sizeof p->cache_note,
                                 "cannot create cache directory %s: %s", dir, strerror(errno));
                    else
                        disk_write(path, key, use, use_n, p->cache_note, sizeof p->cache_note);
                } else if (!o->no_cache) {
                    snprintf(p->cache_note, sizeof p->cache_note, "no disk cache directory");
                }
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

const char *kr_program_name(const kr_program *p) { return p->name; }
const char *kr_program_arch(const kr_program *p) { return p->arch; }
const char *kr_program_log(const kr_program *p) { return p->log; }
const char *kr_program_key(const kr_program *p) { return p->key; }
const char *kr_program_cache_path(const kr_program *p) { return p->cache_path ? p->cache_path : ""; }
const char *kr_program_cache_note(const kr_program *p) { return p->cache_note; }
kr_cache_result kr_program_cache_result(const kr_program *p) { return p->cache; }
double kr_program_compile_ms(const kr_program *p) { return p->compile_ms; }
const void *kr_program_cubin(const kr_program *p, size_t *size) {
    *size = p->cubin_size;
    return p->cubin;
}
int kr_program_n_kernels(const kr_program *p) { return p->n_kernels; }
const char *kr_program_kernel_name(const kr_program *p, int i) { return p->kernels[i].name; }
const kr_kernel_sig *kr_program_kernel_sig(const kr_program *p, int i) { return &p->kernels[i].sig; }

int kr_program_find(const kr_program *p, const char *name) {
    for (int i = 0; i < p->n_kernels; i++)
        if (strcmp(p->kernels[i].name, name) == 0) return i;
    return -1;
}
