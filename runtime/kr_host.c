/* kr_host.c: the host device's mechanism: the runtime's own kernels (fills, conversion, random
 * fills, counting a pattern) as CPU loops with kr_kernels.cu's semantics, host storage, and
 * running entry points of libraries built for the CPU under kreach's CUDA emulation.
 * Runtime layer (no Lua). Everything is synchronous. */
#define _GNU_SOURCE /* posix_memalign, dlopen */
#include "kr_host.h"
#include "kr_dtype.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- element access with kr_kernels.cu's meaning: floats read exactly as double, integers
 * (and bool as 0/1) exactly as int64 ---- */

static int is_float(int dt) { return dt == KR_F64 || dt == KR_F32 || dt == KR_F16 || dt == KR_BF16; }

static double get_f(const void *src, int dt, int64_t i) {
    switch (dt) {
    case KR_F64: return ((const double *)src)[i];
    case KR_F32: return ((const float *)src)[i];
    case KR_F16: return kr_f16_to_f64(((const uint16_t *)src)[i]);
    default: return kr_bf16_to_f64(((const uint16_t *)src)[i]);
    }
}

static int64_t get_i(const void *src, int dt, int64_t i) {
    switch (dt) {
    case KR_I64: return ((const int64_t *)src)[i];
    case KR_I32: return ((const int32_t *)src)[i];
    case KR_I16: return ((const int16_t *)src)[i];
    case KR_I8: return ((const int8_t *)src)[i];
    case KR_U8: return ((const uint8_t *)src)[i];
    default: return ((const uint8_t *)src)[i] != 0; /* bool */
    }
}

/* Float to integer: truncation toward zero, saturating, NaN to 0 (IntElem::from_f). */
#define SATURATE(T, LO, HI)                                                                      \
    ((d != d) ? (T)0 : (d <= (double)(LO)) ? (T)(LO) : (d >= (double)(HI)) ? (T)(HI)             \
                                                      : (T)(long long)d)

static void put_f(void *dst, int dt, int64_t i, double d) {
    switch (dt) {
    case KR_F64: ((double *)dst)[i] = d; break;
    case KR_F32: ((float *)dst)[i] = (float)d; break;
    case KR_F16: ((uint16_t *)dst)[i] = kr_f64_to_f16(d); break;
    case KR_BF16: ((uint16_t *)dst)[i] = kr_f64_to_bf16(d); break;
    case KR_I64: ((int64_t *)dst)[i] = SATURATE(int64_t, INT64_MIN, INT64_MAX); break;
    case KR_I32: ((int32_t *)dst)[i] = SATURATE(int32_t, INT32_MIN, INT32_MAX); break;
    case KR_I16: ((int16_t *)dst)[i] = SATURATE(int16_t, INT16_MIN, INT16_MAX); break;
    case KR_I8: ((int8_t *)dst)[i] = SATURATE(int8_t, INT8_MIN, INT8_MAX); break;
    case KR_U8: ((uint8_t *)dst)[i] = SATURATE(uint8_t, 0, UINT8_MAX); break;
    default: ((uint8_t *)dst)[i] = d != 0; break; /* bool; NaN != 0 */
    }
}

/* An int64 as a double that rounds to any format of at most 51 significand bits exactly as the
 * integer itself would (__ll2half_rn, __ll2bfloat16_rn): exact below 2^53, else rounded to odd
 * at 53 bits (the bits shifted out kept as a sticky last bit). */
static double int_for_rounding(int64_t v) {
    if (v > -(INT64_C(1) << 53) && v < (INT64_C(1) << 53)) return (double)v;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int bits = 64 - __builtin_clzll(u);
    int s = bits - 53;
    uint64_t keep = u >> s;
    if (u & ((UINT64_C(1) << s) - 1)) keep |= 1;
    double r = ldexp((double)keep, s);
    return v < 0 ? -r : r;
}

/* Integer to anything (Elem::from_i): floats round to nearest even, integers wrap, bool != 0. */
static void put_i(void *dst, int dt, int64_t i, int64_t v) {
    switch (dt) {
    case KR_F64: ((double *)dst)[i] = (double)v; break;
    case KR_F32: ((float *)dst)[i] = (float)v; break;
    case KR_F16: ((uint16_t *)dst)[i] = kr_f64_to_f16(int_for_rounding(v)); break;
    case KR_BF16: ((uint16_t *)dst)[i] = kr_f64_to_bf16(int_for_rounding(v)); break;
    case KR_I64: ((int64_t *)dst)[i] = v; break;
    case KR_I32: ((int32_t *)dst)[i] = (int32_t)v; break;
    case KR_I16: ((int16_t *)dst)[i] = (int16_t)v; break;
    case KR_I8: ((int8_t *)dst)[i] = (int8_t)v; break;
    case KR_U8: ((uint8_t *)dst)[i] = (uint8_t)v; break;
    default: ((uint8_t *)dst)[i] = v != 0; break;
    }
}

static int valid_dtype(int dt) { return dt >= 0 && dt < KR_NDTYPES; }

int krh_convert(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t n) {
    if (!valid_dtype(dst_dtype) || !valid_dtype(src_dtype)) return -1;
    if (is_float(src_dtype))
        for (int64_t i = 0; i < n; i++) put_f(dst, dst_dtype, i, get_f(src, src_dtype, i));
    else
        for (int64_t i = 0; i < n; i++) put_i(dst, dst_dtype, i, get_i(src, src_dtype, i));
    return 0;
}

/* ---- patterns ---- */

int krh_fill_pattern(void *dst, int64_t n, int elem_size, const void *pattern) {
    if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8) return -1;
    if (n <= 0) return 0;
    switch (elem_size) {
    case 1: memset(dst, *(const unsigned char *)pattern, (size_t)n); return 0;
    case 2: {
        uint16_t p, *d = dst;
        memcpy(&p, pattern, 2);
        for (int64_t i = 0; i < n; i++) d[i] = p;
        return 0;
    }
    case 4: {
        uint32_t p, *d = dst;
        memcpy(&p, pattern, 4);
        for (int64_t i = 0; i < n; i++) d[i] = p;
        return 0;
    }
    case 8: {
        uint64_t p, *d = dst;
        memcpy(&p, pattern, 8);
        for (int64_t i = 0; i < n; i++) d[i] = p;
        return 0;
    }
    }
    return -1;
}

int krh_count_pattern(const void *src, int64_t n, int elem_size, const void *pattern,
                      unsigned long long *count) {
    unsigned long long c = 0;
    switch (elem_size) {
    case 1: {
        const uint8_t *s = src, p = *(const uint8_t *)pattern;
        for (int64_t i = 0; i < n; i++) c += s[i] == p;
        break;
    }
    case 2: {
        const uint16_t *s = src;
        uint16_t p;
        memcpy(&p, pattern, 2);
        for (int64_t i = 0; i < n; i++) c += s[i] == p;
        break;
    }
    case 4: {
        const uint32_t *s = src;
        uint32_t p;
        memcpy(&p, pattern, 4);
        for (int64_t i = 0; i < n; i++) c += s[i] == p;
        break;
    }
    case 8: {
        const uint64_t *s = src;
        uint64_t p;
        memcpy(&p, pattern, 8);
        for (int64_t i = 0; i < n; i++) c += s[i] == p;
        break;
    }
    default:
        return -1;
    }
    *count += c;
    return 0;
}

/* ---- random fills: splitmix64, element i taking outputs 2i+1 and 2i+2 of the generator
 * started at a state derived from the seed, so that it depends only on (seed, i) ---- */

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)

static uint64_t seed_state(uint64_t seed) { return mix64(seed ^ UINT64_C(0x6B72656163680A00)); }

/* output k (0 or 1) of element i */
static uint64_t draw(uint64_t state, int64_t i, unsigned k) {
    return mix64(state + ((uint64_t)i * 2 + k + 1) * GOLDEN);
}

static const double TWO_PI = 6.283185307179586476925286766559;

int krh_random_float(void *dst, int dtype, int64_t n, int kind, double a, double b,
                     uint64_t seed) {
    if (!is_float(dtype) || (kind != 0 && kind != 1)) return -1;
    uint64_t st = seed_state(seed);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r1 = draw(st, i, 0);
        double v;
        if (dtype == KR_F64) {
            if (kind == 0) {
                double u = (double)(r1 >> 11) * (1.0 / 9007199254740992.0);
                v = a + (b - a) * u;
                if (v >= b) v = nextafter(b, a); /* keep the interval half-open */
            } else {
                uint64_t r2 = draw(st, i, 1);
                double u1 = (double)((r1 >> 11) + 1) * (1.0 / 9007199254740992.0); /* (0, 1] */
                double u2 = (double)(r2 >> 11) * (1.0 / 9007199254740992.0);
                v = a + b * (sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2));
            }
        } else {
            /* f32 and the 16-bit floats draw the same f32 values; the 16-bit ones are the f32
             * draws rounded to nearest even */
            float f;
            if (kind == 0) {
                float u = (float)(r1 >> 40) * (1.0f / 16777216.0f);
                float fb = (float)b;
                f = (float)(a + (b - a) * (double)u);
                if (f >= fb) f = nextafterf(fb, (float)a);
            } else {
                uint64_t r2 = draw(st, i, 1);
                float u1 = (float)((r1 >> 40) + 1) * (1.0f / 16777216.0f);
                float u2 = (float)(r2 >> 40) * (1.0f / 16777216.0f);
                float z = sqrtf(-2.0f * logf(u1)) * cosf((float)TWO_PI * u2);
                float fa = (float)a, fs = (float)b;
                f = fa + fs * z;
            }
            v = f;
        }
        put_f(dst, dtype, i, v);
    }
    return 0;
}

int krh_randint(void *dst, int dtype, int64_t n, int64_t lo, int64_t hi, uint64_t seed) {
    if (!valid_dtype(dtype)) return -1;
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    uint64_t st = seed_state(seed);
    for (int64_t i = 0; i < n; i++) {
        uint64_t w = draw(st, i, 0);
        /* multiply-high maps 64 random bits onto [0, range) */
        __extension__ unsigned __int128 prod = (unsigned __int128)w * range;
        int64_t v = (int64_t)((uint64_t)lo + (uint64_t)(prod >> 64));
        put_i(dst, dtype, i, v);
    }
    return 0;
}

/* ---- storage ---- */

void *kr_host_alloc(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 256, bytes ? bytes : 16) != 0) return NULL;
    return p;
}

void kr_host_free(void *p) { free(p); }

static size_t meminfo(const char *key) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    size_t n = strlen(key), kb = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            unsigned long long v = 0;
            if (sscanf(line + n + 1, "%llu", &v) == 1) kb = (size_t)v;
            break;
        }
    }
    fclose(f);
    return kb * 1024;
}

size_t kr_host_mem_available(void) { return meminfo("MemAvailable"); }
size_t kr_host_mem_total(void) { return meminfo("MemTotal"); }

/* ---- entry points ---- */

kr_status kr_host_open(kr_context *ctx, const char *path, void **lib) {
    *lib = NULL;
    if (!path || !*path) return KR_ERROR(ctx, KR_ERR_ARG, "host library: no path given");
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "cannot load the host library %s: %s", path,
                        e ? e : "?");
    }
    *lib = h;
    return KR_OK;
}

void kr_host_close(void *lib) {
    if (lib) dlclose(lib);
}

kr_status kr_host_call(kr_context *ctx, void *lib, const char *symbol, const char *name,
                       const unsigned grid[3], const unsigned block[3], size_t shared,
                       const kr_harg *args, int nargs) {
    if (!kr_context_is_host(ctx))
        return KR_ERROR(ctx, KR_ERR_ARG, "host kernels run on the host device only "
                        "(KREACH_DEVICE=host); this context is device %d",
                        kr_context_ordinal(ctx));
    if (!lib) return KR_ERROR(ctx, KR_ERR_ARG, "host call: the library is closed");
    if (!symbol || !*symbol) return KR_ERROR(ctx, KR_ERR_ARG, "host call: no symbol given");
    if (!name || !*name) name = symbol;
    if (nargs < 0 || (nargs > 0 && !args))
        return KR_ERROR(ctx, KR_ERR_ARG, "host call of '%s': %d arguments and %s", name, nargs,
                        args ? "a list" : "no list");
    kr_device_info d;
    kr_status s = kr_context_device(ctx, &d);
    if (s != KR_OK) return s;
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "launch of '%s' with an empty grid {%u, %u, %u} "
                        "or block {%u, %u, %u}", name, grid[0], grid[1], grid[2], block[0],
                        block[1], block[2]);
    if (threads > (unsigned long long)d.max_threads_per_block)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "too many threads per block for '%s': %llu, the "
                        "most the host device runs is %d", name, threads,
                        d.max_threads_per_block);
    if (block[0] > (unsigned)d.max_block[0] || block[1] > (unsigned)d.max_block[1] ||
        block[2] > (unsigned)d.max_block[2])
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "block {%u, %u, %u} for '%s' exceeds the host "
                        "device's {%d, %d, %d}", block[0], block[1], block[2], name,
                        d.max_block[0], d.max_block[1], d.max_block[2]);
    if (grid[0] > (unsigned)d.max_grid[0] || grid[1] > (unsigned)d.max_grid[1] ||
        grid[2] > (unsigned)d.max_grid[2])
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "grid {%u, %u, %u} for '%s' exceeds the host "
                        "device's {%d, %d, %d}", grid[0], grid[1], grid[2], name,
                        d.max_grid[0], d.max_grid[1], d.max_grid[2]);
    if (shared > d.shared_per_block_optin)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "'%s' asks for %zu bytes of dynamic shared memory; "
                        "the host device allows %zu", name, shared, d.shared_per_block_optin);
    dlerror();
    void *f = dlsym(lib, symbol);
    if (!f) {
        const char *e = dlerror();
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "'%s' is not in the host library: %s", symbol,
                        e ? e : "a NULL symbol");
    }
    kr_host_entry entry;
    memcpy(&entry, &f, sizeof entry); /* object pointer to function pointer, as POSIX allows */
    char err[2048];
    err[0] = 0;
    kr_context_note_launch(ctx, name);
    int rc = entry(grid, block, shared, args, nargs, err, sizeof err);
    if (rc != 0) {
        err[sizeof err - 1] = 0;
        if (!err[0])
            return KR_ERROR(ctx, KR_ERR_LAUNCH, "'%s' failed (returned %d)", name, rc);
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s", err);
    }
    return KR_OK;
}
