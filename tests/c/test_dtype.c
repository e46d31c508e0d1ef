/* test_dtype.c: dtype names and sizes, and the exact host conversions to and from f16/bf16.
 * Needs no GPU. The random part prints its seed and takes KREACH_SEED. */
#include "kr_dtype.h"
#include "kr_test.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static float f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Reference for bf16: round-to-nearest-even on the f32 bit pattern (exact for f32 inputs,
 * which is all this reference is used on). */
static uint16_t bf16_ref(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    uint32_t lsb = (u >> 16) & 1;
    return (uint16_t)((u + 0x7fffu + lsb) >> 16);
}

static uint64_t rng_state;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

int main(void) {
    const char *env = getenv("KREACH_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : 20261202;
    printf("seed %llu (set KREACH_SEED to repeat)\n", (unsigned long long)seed);
    rng_state = seed * 2654435761u + 1;

    /* names, aliases, sizes */
    kr_dtype d;
    CHECK_INT(kr_dtype_parse("bf16", &d), 0); CHECK_INT(d, KR_BF16);
    CHECK_INT(kr_dtype_parse("bfloat16", &d), 0); CHECK_INT(d, KR_BF16);
    CHECK_INT(kr_dtype_parse("float32", &d), 0); CHECK_INT(d, KR_F32);
    CHECK_INT(kr_dtype_parse("int64", &d), 0); CHECK_INT(d, KR_I64);
    CHECK_INT(kr_dtype_parse("f8", &d), -1);
    CHECK_INT(kr_dtype_parse(NULL, &d), -1);
    size_t sizes[KR_NDTYPES] = {8, 4, 2, 2, 8, 4, 2, 1, 1, 1};
    for (int i = 0; i < KR_NDTYPES; i++) {
        CHECK_INT(kr_dtype_size((kr_dtype)i), sizes[i]);
        CHECK_INT(kr_dtype_parse(kr_dtype_name((kr_dtype)i), &d), 0);
        CHECK_INT(d, i);
    }
    CHECK_STR(kr_dtype_ctype(KR_BF16), "__nv_bfloat16");
    int64_t mn, mx;
    CHECK_INT(kr_dtype_int_range(KR_U8, &mn, &mx), 0); CHECK_INT(mn, 0); CHECK_INT(mx, 255);
    CHECK_INT(kr_dtype_int_range(KR_I16, &mn, &mx), 0); CHECK_INT(mn, -32768);
    CHECK_INT(kr_dtype_int_range(KR_F32, &mn, &mx), -1);

    /* f16: known encodings, ties to even, subnormals, overflow */
    CHECK_INT(kr_f64_to_f16(1.0), 0x3c00);
    CHECK_INT(kr_f64_to_f16(-2.0), 0xc000);
    CHECK_INT(kr_f64_to_f16(65504.0), 0x7bff);
    CHECK_INT(kr_f64_to_f16(65520.0), 0x7c00);              /* rounds up to infinity */
    CHECK_INT(kr_f64_to_f16(65519.99), 0x7bff);
    CHECK_INT(kr_f64_to_f16(1.0 + 1.0 / 2048), 0x3c00);     /* tie: to even (down) */
    CHECK_INT(kr_f64_to_f16(1.0 + 3.0 / 2048), 0x3c02);     /* tie: to even (up) */
    CHECK_INT(kr_f64_to_f16(1.0 + 1.0 / 2048 + 1e-12), 0x3c01); /* no double rounding */
    CHECK_INT(kr_f64_to_f16(ldexp(1, -24)), 0x0001);        /* smallest subnormal */
    CHECK_INT(kr_f64_to_f16(ldexp(1, -25)), 0x0000);        /* tie to even: zero */
    CHECK_INT(kr_f64_to_f16(ldexp(3, -26)), 0x0001);
    CHECK_INT(kr_f64_to_f16(ldexp(1023, -24) + ldexp(1, -25)), 0x0400); /* into the normals */
    CHECK_INT(kr_f64_to_f16(-0.0), 0x8000);
    CHECK_INT(kr_f64_to_f16(INFINITY), 0x7c00);
    CHECK((kr_f64_to_f16(NAN) & 0x7c00) == 0x7c00 && (kr_f64_to_f16(NAN) & 0x3ff));

    /* bf16: a few encodings, then agreement with the bit-level reference on random floats */
    CHECK_INT(kr_f64_to_bf16(1.0), 0x3f80);
    CHECK_INT(kr_f64_to_bf16(1.0 + 1.0 / 256), 0x3f80);     /* tie: to even */
    CHECK_INT(kr_f64_to_bf16(1.0 + 3.0 / 256), 0x3f82);
    CHECK_INT(kr_f64_to_bf16(3.3895313892515355e38), 0x7f7f); /* largest finite */
    CHECK_INT(kr_f64_to_bf16(3.5e38), 0x7f80);
    int mismatches = 0;
    for (int i = 0; i < 2000000; i++) {
        float f = f32_from_bits(rnd());
        if (isnan(f)) continue;
        if (kr_f64_to_bf16(f) != bf16_ref(f)) mismatches++;
    }
    CHECK_INT(mismatches, 0);
    /* every bf16 and f16 pattern decodes and encodes back to itself (NaNs stay NaN) */
    int rt16 = 0, rtbf = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        double a = kr_f16_to_f64((uint16_t)h), b = kr_bf16_to_f64((uint16_t)h);
        if (isnan(a) ? !isnan(kr_f16_to_f64(kr_f64_to_f16(a))) : kr_f64_to_f16(a) != h) rt16++;
        if (isnan(b) ? !isnan(kr_bf16_to_f64(kr_f64_to_bf16(b))) : kr_f64_to_bf16(b) != h) rtbf++;
    }
    CHECK_INT(rt16, 0);
    CHECK_INT(rtbf, 0);
    /* f16 against a float reference: for random doubles in range, the result is one of the
     * two neighbours and the nearer one */
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        double x = ((double)rnd() / 4294967296.0 - 0.5) * 1000.0;
        uint16_t h = kr_f64_to_f16(x);
        double got = kr_f16_to_f64(h);
        double up = kr_f16_to_f64((uint16_t)(h + 1)), down = kr_f16_to_f64((uint16_t)(h - 1));
        if (fabs(got - x) > fabs(up - x) || fabs(got - x) > fabs(down - x)) bad++;
    }
    CHECK_INT(bad, 0);

    /* host element access */
    unsigned char buf[64];
    for (int i = 0; i < KR_NDTYPES; i++) {
        kr_host_set(buf, (kr_dtype)i, 1, 3.0);
        CHECK_NEAR(kr_host_get(buf, (kr_dtype)i, 1), i == KR_BOOL ? 1.0 : 3.0, 0);
    }
    kr_host_set_i64(buf, KR_I64, 0, INT64_MAX);
    CHECK(kr_host_get_i64(buf, KR_I64, 0) == INT64_MAX);
    kr_host_set(buf, KR_BF16, 0, 1.0 + 3.0 / 256);
    CHECK_NEAR(kr_host_get(buf, KR_BF16, 0), 1.0 + 2.0 / 128, 0);

    /* poison: NaNs that are not the canonical NaN; integers 0xA5 bytes; bool neither 0 nor 1 */
    float pf; double pd; uint16_t ph, pb; uint8_t pbool; int32_t pi;
    kr_dtype_poison_bits(KR_F32, &pf); CHECK(isnan(pf));
    kr_dtype_poison_bits(KR_F64, &pd); CHECK(isnan(pd));
    kr_dtype_poison_bits(KR_F16, &ph); CHECK(isnan(kr_f16_to_f64(ph)));
    kr_dtype_poison_bits(KR_BF16, &pb); CHECK(isnan(kr_bf16_to_f64(pb)));
    uint32_t pfb; memcpy(&pfb, &pf, 4); CHECK(pfb != 0x7fffffffu && pfb != 0x7fc00000u);
    kr_dtype_poison_bits(KR_BOOL, &pbool); CHECK(pbool > 1);
    kr_dtype_poison_bits(KR_I32, &pi); CHECK_INT((uint32_t)pi, 0xA5A5A5A5u);
    return kr_test_done("dtype");
}
