/* kr_dtype.c: the dtype table and exact host conversions to and from the 16-bit floats.
 * Runtime layer (no Lua). Host code only. */
#include "kr_dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
    int is_float;
    const char *ctype;
    const char *alias[3];
} T[KR_NDTYPES] = {
    [KR_F64] = {"f64", 8, 1, "double", {"float64", "double", NULL}},
    [KR_F32] = {"f32", 4, 1, "float", {"float32", "float", NULL}},
    [KR_F16] = {"f16", 2, 1, "__half", {"float16", "half", NULL}},
    [KR_BF16] = {"bf16", 2, 1, "__nv_bfloat16", {"bfloat16", NULL, NULL}},
    [KR_I64] = {"i64", 8, 0, "long long", {"int64", "long", NULL}},
    [KR_I32] = {"i32", 4, 0, "int", {"int32", "int", NULL}},
    [KR_I16] = {"i16", 2, 0, "short", {"int16", "short", NULL}},
    [KR_I8] = {"i8", 1, 0, "signed char", {"int8", NULL, NULL}},
    [KR_U8] = {"u8", 1, 0, "unsigned char", {"uint8", NULL, NULL}},
    [KR_BOOL] = {"bool", 1, 0, "bool", {NULL, NULL, NULL}},
};

size_t kr_dtype_size(kr_dtype d) { return d < KR_NDTYPES ? T[d].size : 0; }
const char *kr_dtype_name(kr_dtype d) { return d < KR_NDTYPES ? T[d].name : "?"; }
int kr_dtype_is_float(kr_dtype d) { return d < KR_NDTYPES && T[d].is_float; }
const char *kr_dtype_ctype(kr_dtype d) { return d < KR_NDTYPES ? T[d].ctype : "?"; }

int kr_dtype_parse(const char *name, kr_dtype *out) {
    if (!name) return -1;
    for (int d = 0; d < KR_NDTYPES; d++) {
        int hit = strcmp(name, T[d].name) == 0;
        for (int a = 0; !hit && a < 3 && T[d].alias[a]; a++) hit = strcmp(name, T[d].alias[a]) == 0;
        if (hit) {
            *out = (kr_dtype)d;
            return 0;
        }
    }
    return -1;
}

int kr_dtype_int_range(kr_dtype d, int64_t *min, int64_t *max) {
    switch (d) {
    case KR_I64: *min = INT64_MIN; *max = INT64_MAX; return 0;
    case KR_I32: *min = INT32_MIN; *max = INT32_MAX; return 0;
    case KR_I16: *min = INT16_MIN; *max = INT16_MAX; return 0;
    case KR_I8: *min = INT8_MIN; *max = INT8_MAX; return 0;
    case KR_U8: *min = 0; *max = UINT8_MAX; return 0;
    case KR_BOOL: *min = 0; *max = 1; return 0;
    default: return -1;
    }
}

/* Rounds |x| to a binary format with `mant` explicit fraction bits, exponent bias `bias` and
 * `ebits` exponent bits, in one step: frexp/ldexp are exact, and nearbyint rounds half to even
 * in the default rounding mode. */
static uint16_t round_to(double x, int mant, int ebits, int bias) {
    uint16_t sign = signbit(x) ? (uint16_t)(1u << (mant + ebits)) : 0;
    uint16_t emax_field = (uint16_t)((1u << ebits) - 1);
    if (isnan(x)) return (uint16_t)(sign | (emax_field << mant) | (1u << (mant - 1)));
    double a = fabs(x);
    if (isinf(a)) return (uint16_t)(sign | (emax_field << mant));
    if (a == 0) return sign;
    int emin = 1 - bias; /* exponent of the smallest normal */
    int e;
    frexp(a, &e);
    e -= 1; /* a = m * 2^e with m in [1, 2) */
    if (e < emin) {
        /* subnormal: the quantum is 2^(emin - mant) */
        double q = nearbyint(ldexp(a, mant - emin));
        /* q may reach 2^mant, which is the smallest normal: the encoding carries over itself */
        return (uint16_t)(sign | (uint16_t)q);
    }
    double q = nearbyint(ldexp(a, mant - e)); /* in [2^mant, 2^(mant+1)] */
    if (q >= ldexp(1.0, mant + 1)) {
        q /= 2;
        e += 1;
    }
    int field = e + bias;
    if (field >= (int)emax_field) return (uint16_t)(sign | (emax_field << mant)); /* overflow */
    return (uint16_t)(sign | (uint16_t)(field << mant) | ((uint16_t)q & ((1u << mant) - 1)));
}

static double decode(uint16_t h, int mant, int ebits, int bias) {
    int sign = (h >> (mant + ebits)) & 1;
    int field = (h >> mant) & ((1 << ebits) - 1);
    int frac = h & ((1 << mant) - 1);
    double v;
    if (field == (1 << ebits) - 1) v = frac ? NAN : INFINITY;
    else if (field == 0) v = ldexp((double)frac, 1 - bias - mant);
    else v = ldexp((double)(frac | (1 << mant)), field - bias - mant);
    return sign ? -v : v;
}

uint16_t kr_f64_to_f16(double x) { return round_to(x, 10, 5, 15); }
uint16_t kr_f64_to_bf16(double x) { return round_to(x, 7, 8, 127); }
double kr_f16_to_f64(uint16_t h) { return decode(h, 10, 5, 15); }
double kr_bf16_to_f64(uint16_t h) { return decode(h, 7, 8, 127); }

double kr_host_get(const void *buf, kr_dtype d, size_t i) {
    switch (d) {
    case KR_F64: return ((const double *)buf)[i];
    case KR_F32: return ((const float *)buf)[i];
    case KR_F16: return kr_f16_to_f64(((const uint16_t *)buf)[i]);
    case KR_BF16: return kr_bf16_to_f64(((const uint16_t *)buf)[i]);
    default: return (double)kr_host_get_i64(buf, d, i);
    }
}

int64_t kr_host_get_i64(const void *buf, kr_dtype d, size_t i) {
    switch (d) {
    case KR_I64: return ((const int64_t *)buf)[i];
    case KR_I32: return ((const int32_t *)buf)[i];
    case KR_I16: return ((const int16_t *)buf)[i];
    case KR_I8: return ((const int8_t *)buf)[i];
    case KR_U8: return ((const uint8_t *)buf)[i];
    case KR_BOOL: return ((const uint8_t *)buf)[i];
    default: return (int64_t)kr_host_get(buf, d, i);
    }
}

void kr_host_set(void *buf, kr_dtype d, size_t i, double x) {
    switch (d) {
    case KR_F64: ((double *)buf)[i] = x; break;
    case KR_F32: ((float *)buf)[i] = (float)x; break;
    case KR_F16: ((uint16_t *)buf)[i] = kr_f64_to_f16(x); break;
    case KR_BF16: ((uint16_t *)buf)[i] = kr_f64_to_bf16(x); break;
    case KR_BOOL: ((uint8_t *)buf)[i] = x != 0; break;
    default: kr_host_set_i64(buf, d, i, (int64_t)x); break;
    }
}

void kr_host_set_i64(void *buf, kr_dtype d, size_t i, int64_t x) {
    switch (d) {
    case KR_I64: ((int64_t *)buf)[i] = x; break;
    case KR_I32: ((int32_t *)buf)[i] = (int32_t)x; break;
    case KR_I16: ((int16_t *)buf)[i] = (int16_t)x; break;
    case KR_I8: ((int8_t *)buf)[i] = (int8_t)x; break;
    case KR_U8: ((uint8_t *)buf)[i] = (uint8_t)x; break;
    case KR_BOOL: ((uint8_t *)buf)[i] = x != 0; break;
    default: kr_host_set(buf, d, i, (double)x); break;
    }
}

void kr_dtype_poison_bits(kr_dtype d, void *out) {
    /* Signalling-NaN payloads: GPU arithmetic returns the canonical quiet NaN (all fraction
     * bits set), so an element still holding one of these was never written. */
    static const uint64_t f64 = 0x7FF4A5A5A5A5A5A5ull;
    static const uint32_t f32 = 0x7FA5A5A5u;
    static const uint16_t f16 = 0x7D25u, bf16 = 0x7FA5u;
    switch (d) {
    case KR_F64: memcpy(out, &f64, 8); break;
    case KR_F32: memcpy(out, &f32, 4); break;
    case KR_F16: memcpy(out, &f16, 2); break;
    case KR_BF16: memcpy(out, &bf16, 2); break;
    default: memset(out, 0xA5, kr_dtype_size(d)); break;
    }
}
