/* test_host.c: the host device (KREACH_DEVICE=host) without a GPU: the context's emulated
 * device, host tensors (transfers, fills, poison, conversions, random fills), GEMM on the CPU,
 * what is refused there, and kr_host_call on a library this test builds with cc. */
#define _GNU_SOURCE /* setenv, mkdtemp */
#include "kr_test.h"
#include "kr_context.h"
#include "kr_cublas.h"
#include "kr_cudnn.h"
#include "kr_event.h"
#include "kr_host.h"
#include "kr_nvml.h"
#include "kr_nvrtc.h"
#include "kr_tensor.h"
#include "kr_timing.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static kr_context *ctx;

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static void t_context(void) {
    setenv("KREACH_DEVICE", "gpu0", 1);
    kr_context *bad = kr_context_new(-1);
    CHECK_INT(kr_context_ordinal(bad), -2); /* another word is still an invalid device */
    CHECK_INT(kr_context_is_host(bad), 0);
    kr_context_release(bad);
    unsetenv("KREACH_DEVICE");
    kr_context *dflt = kr_context_new(-1);
    CHECK_INT(kr_context_ordinal(dflt), 0);
    CHECK_INT(kr_context_is_host(dflt), 0);
    kr_context_release(dflt);
    kr_context *explicit_host = kr_context_new(KR_HOST_ORDINAL);
    CHECK_INT(kr_context_is_host(explicit_host), 1);
    kr_context_release(explicit_host);

    setenv("KREACH_DEVICE", "host", 1);
    ctx = kr_context_new(-1);
    CHECK(ctx != NULL);
    CHECK_INT(kr_context_ordinal(ctx), KR_HOST_ORDINAL);
    CHECK_INT(kr_context_is_host(ctx), 1);
    CHECK_INT(kr_context_state(ctx), 0);
    CHECK_INT(kr_context_require(ctx), KR_OK);
    CHECK_INT(kr_context_state(ctx), 1);
    CHECK(kr_context_stream(ctx) == NULL);
    kr_device_info d;
    CHECK_INT(kr_context_device(ctx, &d), KR_OK);
    CHECK_STR(d.name, "host (kreach's CUDA emulation on the CPU)");
    CHECK_STR(d.uuid, "host");
    CHECK_STR(d.pci_bus_id, "host");
    CHECK_INT(d.cc_major, 9);
    CHECK_INT(d.cc_minor, 0);
    CHECK_INT(d.sm_count, 4);
    CHECK_INT(d.max_threads_per_block, 1024);
    CHECK_INT(d.max_threads_per_sm, 2048);
    CHECK_INT(d.warp_size, 32);
    CHECK_INT(d.max_grid[0], 2147483647);
    CHECK_INT(d.max_grid[1], 65535);
    CHECK_INT(d.max_grid[2], 65535);
    CHECK_INT(d.max_block[0], 1024);
    CHECK_INT(d.max_block[1], 1024);
    CHECK_INT(d.max_block[2], 64);
    CHECK_INT(d.shared_per_block, 49152);
    CHECK_INT(d.shared_per_block_optin, 232448);
    CHECK_INT(d.shared_per_sm, 233472);
    CHECK_INT(d.regs_per_block, 65536);
    CHECK_INT(d.l2_bytes, 0);
    CHECK_INT(d.sm_clock_khz, 0);
    CHECK(d.total_mem_bytes > ((size_t)64 << 20));
    CHECK(d.free_mem_bytes > 0 && d.free_mem_bytes <= d.total_mem_bytes);
    CHECK_INT(kr_context_sync(ctx), KR_OK);
}

static void t_storage(void) {
    kr_tensor t, z1, z2, v, nr;
    int64_t sh[2] = {3, 4};
    CHECK_INT(kr_tensor_alloc(ctx, &t, KR_F32, 2, sh), KR_OK);
    CHECK(kr_tensor_live(&t));
    CHECK((uintptr_t)kr_tensor_data(&t) % 256 == 0);
    CHECK(kr_tensor_context(&t) == ctx);
    float in[12], out[12];
    for (int i = 0; i < 12; i++) in[i] = (float)i * 0.5f - 1.0f;
    CHECK_INT(kr_tensor_from_host(ctx, &t, 0, in, sizeof in), KR_OK);
    memset(out, 0, sizeof out);
    CHECK_INT(kr_tensor_to_host(ctx, &t, 0, out, sizeof out), KR_OK);
    CHECK(memcmp(in, out, sizeof in) == 0);
    /* the data pointer is host memory */
    CHECK(((float *)kr_tensor_data(&t))[5] == in[5]);
    CHECK_INT(kr_tensor_to_host(ctx, &t, 40, out, 16), KR_ERR_ARG); /* past the end */
    /* partial transfers at an offset */
    float two[2] = {100, 200};
    CHECK_INT(kr_tensor_from_host(ctx, &t, 4 * 4, two, sizeof two), KR_OK);
    CHECK_INT(kr_tensor_to_host(ctx, &t, 0, out, sizeof out), KR_OK);
    CHECK(out[3] == in[3] && out[4] == 100 && out[5] == 200 && out[6] == in[6]);
    /* views and narrow are pointer arithmetic */
    int64_t flat = -1;
    CHECK_INT(kr_tensor_view(ctx, &t, &v, 1, &flat), KR_OK);
    CHECK(kr_tensor_data(&v) == kr_tensor_data(&t));
    CHECK_INT(kr_tensor_narrow(ctx, &v, &nr, 0, 4, 3), KR_OK);
    CHECK((char *)kr_tensor_data(&nr) == (char *)kr_tensor_data(&t) + 16);
    float got[3];
    CHECK_INT(kr_tensor_to_host(ctx, &nr, 0, got, sizeof got), KR_OK);
    CHECK(got[0] == 100 && got[1] == 200 && got[2] == in[6]);
    kr_tensor_release(&t); /* the views keep the storage */
    CHECK_INT(kr_tensor_to_host(ctx, &nr, 0, got, sizeof got), KR_OK);
    CHECK(got[0] == 100);
    kr_tensor_release(&v);
    kr_tensor_release(&nr);
    kr_tensor_release(&nr); /* twice is safe */
    /* zero-size tensors get distinct addresses */
    int64_t zero = 0;
    CHECK_INT(kr_tensor_alloc(ctx, &z1, KR_F64, 1, &zero), KR_OK);
    CHECK_INT(kr_tensor_alloc(ctx, &z2, KR_F64, 1, &zero), KR_OK);
    CHECK(kr_tensor_data(&z1) != NULL && kr_tensor_data(&z1) != kr_tensor_data(&z2));
    CHECK_INT(kr_tensor_nbytes(&z1), 0);
    CHECK_INT(kr_tensor_fill(ctx, &z1, 1.0), KR_OK);
    kr_tensor_release(&z1);
    kr_tensor_release(&z2);
    /* IPC is refused */
    kr_tensor s;
    CHECK_INT(kr_tensor_alloc(ctx, &s, KR_U8, 1, sh), KR_OK);
    unsigned char h[64];
    size_t off;
    CHECK_INT(kr_tensor_ipc_handle(ctx, &s, h, &off), KR_ERR_ARG);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "not available on the host device (KREACH_DEVICE=host)");
    kr_tensor o;
    memset(h, 0, sizeof h);
    CHECK_INT(kr_tensor_open_ipc(ctx, &o, h, 0, KR_U8, 1, sh), KR_ERR_ARG);
    CHECK(!kr_tensor_live(&o));
    kr_tensor_release(&s);
    /* a tensor the system could not back is refused before it is allocated (Linux would grant
       it, and the out-of-memory killer would end a process when its pages are written) */
    size_t total = kr_host_mem_total(), avail = kr_host_mem_available();
    CHECK(total > 0 && avail > 0 && avail <= total);
    int64_t big = (int64_t)(total / 10 * 9 / 4 + 1);
    kr_tensor b;
    CHECK_INT(kr_tensor_alloc(ctx, &b, KR_F32, 1, &big), KR_ERR_NOMEM);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "out of host memory: a tensor of");
    CHECK_CONTAINS(kr_context_errmsg(ctx), "small sizes");
    CHECK(!kr_tensor_live(&b));
    /* one that fits is granted, and counts no more once released (32 MiB: below the size
       checked against MemAvailable, so a machine short of memory passes too) */
    int64_t mb64 = 8 << 20;
    for (int i = 0; i < 3; i++) {
        CHECK_INT(kr_tensor_alloc(ctx, &b, KR_F32, 1, &mb64), KR_OK);
        kr_tensor_release(&b);
    }
}

static void t_fills(void) {
    int64_t n = 37;
    kr_tensor a;
    CHECK_INT(kr_tensor_alloc(ctx, &a, KR_F32, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_fill(ctx, &a, 2.5), KR_OK);
    float f[37];
    kr_tensor_to_host(ctx, &a, 0, f, sizeof f);
    int ok = 1;
    for (int i = 0; i < 37; i++) ok &= f[i] == 2.5f;
    CHECK(ok);
    kr_tensor_release(&a);

    CHECK_INT(kr_tensor_alloc(ctx, &a, KR_F64, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_fill(ctx, &a, -1.25), KR_OK);
    double dv[37];
    kr_tensor_to_host(ctx, &a, 0, dv, sizeof dv);
    CHECK(dv[0] == -1.25 && dv[36] == -1.25);
    kr_tensor_release(&a);

    uint16_t hv[37];
    CHECK_INT(kr_tensor_alloc(ctx, &a, KR_BF16, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_fill(ctx, &a, 1.5), KR_OK);
    kr_tensor_to_host(ctx, &a, 0, hv, sizeof hv);
    CHECK_INT(hv[0], 0x3FC0);
    CHECK_INT(hv[36], 0x3FC0);
    kr_tensor_release(&a);

    CHECK_INT(kr_tensor_alloc(ctx, &a, KR_F16, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_fill(ctx, &a, -2.0), KR_OK);
    kr_tensor_to_host(ctx, &a, 0, hv, sizeof hv);
    CHECK_INT(hv[0], 0xC000);
    CHECK_INT(hv[36], 0xC000);
    kr_tensor_release(&a);

    int64_t iv[37];
    int64_t big = (INT64_C(1) << 40) + 3;
    CHECK_INT(kr_tensor_alloc(ctx, &a, KR_I64, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_fill_i64(ctx, &a, big), KR_OK);
    kr_tensor_to_host(ctx, &a, 0, iv, sizeof iv);
    CHECK(iv[0] == big && iv[36] == big);
    kr_tensor_release(&a);

    uint8_t bv[37];
    CHECK_INT(kr_tensor_alloc(ctx, &a, KR_I8, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_fill_i64(ctx, &a, -3), KR_OK);
    kr_tensor_to_host(ctx, &a, 0, bv, sizeof bv);
    CHECK_INT((int8_t)bv[17], -3);
    kr_tensor_release(&a);
}

static void t_poison(void) {
    static const kr_dtype dts[] = {KR_F64, KR_F32, KR_F16, KR_BF16, KR_I64, KR_I32, KR_U8, KR_BOOL};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        int64_t n = 10, c = -1;
        kr_tensor a;
        CHECK_INT(kr_tensor_alloc(ctx, &a, dts[k], 1, &n), KR_OK);
        CHECK_INT(kr_tensor_poison(ctx, &a), KR_OK);
        CHECK_INT(kr_tensor_count_poisoned(ctx, &a, &c), KR_OK);
        CHECK_INT(c, 10);
        unsigned char zeros[3 * 8] = {0};
        size_t es = kr_dtype_size(dts[k]);
        CHECK_INT(kr_tensor_from_host(ctx, &a, 2 * es, zeros, 3 * es), KR_OK); /* 3 written */
        CHECK_INT(kr_tensor_count_poisoned(ctx, &a, &c), KR_OK);
        CHECK_INT(c, 7);
        unsigned char pat[8], first[8];
        kr_dtype_poison_bits(dts[k], pat);
        kr_tensor_to_host(ctx, &a, 0, first, es);
        CHECK(memcmp(pat, first, es) == 0);
        kr_tensor_release(&a);
    }
}

/* src (host values, dtype sd) converted to dd through the tensors' copy; into out */
static void convert(kr_dtype sd, const void *src, kr_dtype dd, void *out, int64_t n) {
    kr_tensor s, d;
    CHECK_INT(kr_tensor_alloc(ctx, &s, sd, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_alloc(ctx, &d, dd, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_from_host(ctx, &s, 0, src, (size_t)n * kr_dtype_size(sd)), KR_OK);
    CHECK_INT(kr_tensor_copy(ctx, &d, &s), KR_OK);
    CHECK_INT(kr_tensor_to_host(ctx, &d, 0, out, (size_t)n * kr_dtype_size(dd)), KR_OK);
    kr_tensor_release(&s);
    kr_tensor_release(&d);
}

static void t_convert(void) {
    float f[9] = {1.00390625f, 1.01171875f, NAN, 65520.0f, -2.5f, 3.7f, -3.7f, 1e10f, 0.0f};
    uint16_t h[9];
    convert(KR_F32, f, KR_BF16, h, 9);
    CHECK_INT(h[0], 0x3F80); /* 1 + 2^-8: a tie, to even (1.0) */
    CHECK_INT(h[1], 0x3F82); /* 1 + 3*2^-8: a tie, to even (1.015625) */
    CHECK((h[2] & 0x7F80) == 0x7F80 && (h[2] & 0x7F) != 0); /* NaN stays NaN */
    CHECK_INT(h[4], 0xC020);
    convert(KR_F32, f, KR_F16, h, 9);
    CHECK_INT(h[3], 0x7C00); /* 65520 rounds to infinity in f16 */
    CHECK((h[2] & 0x7C00) == 0x7C00 && (h[2] & 0x3FF) != 0);
    CHECK_INT(h[4], 0xC100);
    int32_t i32[9];
    convert(KR_F32, f, KR_I32, i32, 9);
    CHECK_INT(i32[0], 1);
    CHECK_INT(i32[2], 0);          /* NaN to 0 */
    CHECK_INT(i32[4], -2);         /* toward zero */
    CHECK_INT(i32[5], 3);
    CHECK_INT(i32[6], -3);
    CHECK_INT(i32[7], INT32_MAX);  /* saturating */
    uint8_t u8[9], b[9];
    convert(KR_F32, f, KR_U8, u8, 9);
    CHECK_INT(u8[4], 0);
    CHECK_INT(u8[3], 255);
    convert(KR_F32, f, KR_BOOL, b, 9);
    CHECK_INT(b[0], 1);
    CHECK_INT(b[2], 1); /* NaN != 0 */
    CHECK_INT(b[8], 0);

    double d[3] = {0.1, 1e300, -0.0};
    float fo[3];
    convert(KR_F64, d, KR_F32, fo, 3);
    CHECK(fo[0] == 0.1f);
    CHECK(isinf(fo[1]));
    CHECK_INT(f32_bits(fo[2]), 0x80000000u);

    uint16_t bf[2] = {0x3FC0, 0xFF80}; /* 1.5, -inf */
    double back[2];
    convert(KR_BF16, bf, KR_F64, back, 2);
    CHECK(back[0] == 1.5 && isinf(back[1]) && back[1] < 0);

    /* integers: wrap to narrower ones, round once to the 16-bit floats */
    int64_t iv[3] = {300, (INT64_C(1) << 60) + (INT64_C(1) << 52) + 1, -7};
    int8_t i8[3];
    convert(KR_I64, iv, KR_I8, i8, 3);
    CHECK_INT(i8[0], 44);
    CHECK_INT(i8[2], -7);
    convert(KR_I64, iv, KR_BF16, h, 3);
    /* 2^60 + 2^52 + 1 is above the tie between 2^60 and 2^60 + 2^53: up, where rounding
     * through double first would give a tie and 2^60 */
    CHECK_INT(h[1], 0x5D81);
    float fl[3];
    convert(KR_I64, iv, KR_F32, fl, 3);
    CHECK(fl[0] == 300.0f && fl[2] == -7.0f);
    uint8_t bl[2] = {1, 0};
    convert(KR_BOOL, bl, KR_F32, fl, 2);
    CHECK(fl[0] == 1.0f && fl[1] == 0.0f);

    /* the same dtype is a copy; in place with another dtype is refused */
    int64_t n = 4;
    kr_tensor x, y;
    kr_tensor_alloc(ctx, &x, KR_F32, 1, &n);
    kr_tensor_fill(ctx, &x, 7);
    kr_tensor_alloc(ctx, &y, KR_F32, 1, &n);
    CHECK_INT(kr_tensor_copy(ctx, &y, &x), KR_OK);
    float yv[4];
    kr_tensor_to_host(ctx, &y, 0, yv, sizeof yv);
    CHECK(yv[3] == 7.0f);
    kr_tensor xi = x;
    xi.dtype = KR_I32; /* the same memory seen as i32 */
    CHECK_INT(kr_tensor_copy(ctx, &xi, &x), KR_ERR_ARG);
    kr_tensor_release(&x);
    kr_tensor_release(&y);
}

static void t_random(void) {
    int64_t n = 20000;
    kr_tensor a, b;
    CHECK_INT(kr_tensor_alloc(ctx, &a, KR_F32, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_alloc(ctx, &b, KR_F32, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_uniform(ctx, &a, -2.0, 3.0, 42), KR_OK);
    CHECK_INT(kr_tensor_uniform(ctx, &b, -2.0, 3.0, 42), KR_OK);
    float *va = malloc(sizeof(float) * (size_t)n), *vb = malloc(sizeof(float) * (size_t)n);
    kr_tensor_to_host(ctx, &a, 0, va, sizeof(float) * (size_t)n);
    kr_tensor_to_host(ctx, &b, 0, vb, sizeof(float) * (size_t)n);
    CHECK(memcmp(va, vb, sizeof(float) * (size_t)n) == 0); /* deterministic by seed */
    int inrange = 1;
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        inrange &= va[i] >= -2.0f && va[i] < 3.0f;
        sum += va[i];
    }
    CHECK(inrange);
    CHECK_NEAR(sum / (double)n, 0.5, 0.05);
    CHECK_INT(kr_tensor_uniform(ctx, &b, -2.0, 3.0, 43), KR_OK);
    kr_tensor_to_host(ctx, &b, 0, vb, sizeof(float) * (size_t)n);
    CHECK(memcmp(va, vb, sizeof(float) * (size_t)n) != 0);
    /* element i depends on (seed, i) only: a shorter tensor holds the first draws */
    int64_t m = 100;
    kr_tensor s;
    CHECK_INT(kr_tensor_alloc(ctx, &s, KR_F32, 1, &m), KR_OK);
    CHECK_INT(kr_tensor_uniform(ctx, &s, -2.0, 3.0, 42), KR_OK);
    kr_tensor_to_host(ctx, &s, 0, vb, sizeof(float) * 100);
    CHECK(memcmp(va, vb, sizeof(float) * 100) == 0);
    kr_tensor_release(&s);

    /* normal(1, 2) */
    CHECK_INT(kr_tensor_normal(ctx, &a, 1.0, 2.0, 7), KR_OK);
    kr_tensor_to_host(ctx, &a, 0, va, sizeof(float) * (size_t)n);
    double s1 = 0, s2 = 0;
    int finite = 1;
    for (int64_t i = 0; i < n; i++) {
        s1 += va[i];
        s2 += (double)va[i] * va[i];
        finite &= isfinite(va[i]) != 0;
    }
    double mean = s1 / (double)n, sd = sqrt(s2 / (double)n - mean * mean);
    CHECK(finite);
    CHECK_NEAR(mean, 1.0, 0.06);
    CHECK_NEAR(sd, 2.0, 0.06);

    /* f64 uniform */
    kr_tensor d;
    CHECK_INT(kr_tensor_alloc(ctx, &d, KR_F64, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_uniform(ctx, &d, 0.0, 1e-3, 1), KR_OK);
    double *vd = malloc(sizeof(double) * (size_t)n);
    kr_tensor_to_host(ctx, &d, 0, vd, sizeof(double) * (size_t)n);
    inrange = 1;
    for (int64_t i = 0; i < n; i++) inrange &= vd[i] >= 0.0 && vd[i] < 1e-3;
    CHECK(inrange);
    CHECK_INT(kr_tensor_normal(ctx, &d, 0.0, 1.0, 1), KR_OK);
    kr_tensor_to_host(ctx, &d, 0, vd, sizeof(double) * (size_t)n);
    s1 = 0;
    for (int64_t i = 0; i < n; i++) s1 += vd[i];
    CHECK_NEAR(s1 / (double)n, 0.0, 0.05);
    kr_tensor_release(&d);
    free(vd);

    /* bad arguments are refused as on the GPU */
    CHECK_INT(kr_tensor_uniform(ctx, &a, 1.0, 1.0, 1), KR_ERR_ARG);

    /* randint [-5, 7) into i32, every value drawn */
    kr_tensor r;
    CHECK_INT(kr_tensor_alloc(ctx, &r, KR_I32, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_randint(ctx, &r, -5, 7, 3), KR_OK);
    int32_t *vi = malloc(sizeof(int32_t) * (size_t)n);
    kr_tensor_to_host(ctx, &r, 0, vi, sizeof(int32_t) * (size_t)n);
    int seen[12] = {0};
    inrange = 1;
    for (int64_t i = 0; i < n; i++) {
        inrange &= vi[i] >= -5 && vi[i] < 7;
        if (vi[i] >= -5 && vi[i] < 7) seen[vi[i] + 5] = 1;
    }
    CHECK(inrange);
    int all = 1;
    for (int k = 0; k < 12; k++) all &= seen[k];
    CHECK(all);
    CHECK_INT(kr_tensor_randint(ctx, &r, 0, 1LL << 40, 3), KR_ERR_ARG); /* does not fit i32 */
    kr_tensor_release(&r);
    /* randint into a float tensor draws integers */
    CHECK_INT(kr_tensor_randint(ctx, &a, 10, 20, 5), KR_OK);
    kr_tensor_to_host(ctx, &a, 0, va, sizeof(float) * (size_t)n);
    inrange = 1;
    for (int64_t i = 0; i < n; i++) inrange &= va[i] >= 10 && va[i] < 20 && va[i] == floorf(va[i]);
    CHECK(inrange);
    free(vi);
    free(va);
    free(vb);
    kr_tensor_release(&a);
    kr_tensor_release(&b);
}

/* a tensor of dtype dt holding vals (doubles) */
static void make(kr_tensor *t, kr_dtype dt, int ndim, const int64_t *shape, const double *vals) {
    CHECK_INT(kr_tensor_alloc(ctx, t, dt, ndim, shape), KR_OK);
    int64_t n = kr_tensor_numel(t);
    unsigned char *buf = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) kr_host_set(buf, dt, (size_t)i, vals[i]);
    CHECK_INT(kr_tensor_from_host(ctx, t, 0, buf, kr_tensor_nbytes(t)), KR_OK);
    free(buf);
}

static void check_vals(const kr_tensor *t, const double *want, const char *what) {
    int64_t n = kr_tensor_numel(t);
    unsigned char *buf = malloc((size_t)n * 8);
    kr_tensor_to_host(ctx, t, 0, buf, kr_tensor_nbytes(t));
    for (int64_t i = 0; i < n; i++) {
        double got = kr_host_get(buf, t->dtype, (size_t)i);
        kr_test_checks++;
        if (got != want[i]) {
            kr_test_failures++;
            fprintf(stderr, "%s (%s): element %lld is %.17g, expected %.17g\n", what,
                    kr_dtype_name(t->dtype), (long long)i, got, want[i]);
        }
    }
    free(buf);
}

static void t_gemm(kr_dtype dt) {
    static const double A[6] = {1, 2, 3, 4, 5, 6};           /* 2x3 */
    static const double AT[6] = {1, 4, 2, 5, 3, 6};          /* A^T stored 3x2 */
    static const double B[6] = {7, 8, 9, 10, 11, 12};        /* 3x2 */
    static const double BT[6] = {7, 9, 11, 8, 10, 12};       /* B^T stored 2x3 */
    static const double AB[4] = {58, 64, 139, 154};
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s22[2] = {2, 2};
    kr_tensor a, at, b, bt, c;
    make(&a, dt, 2, s23, A);
    make(&at, dt, 2, s32, AT);
    make(&b, dt, 2, s32, B);
    make(&bt, dt, 2, s23, BT);
    double nan4[4] = {NAN, NAN, NAN, NAN};
    make(&c, dt, 2, s22, nan4);
    CHECK_INT(kr_cublas_gemm(ctx, &c, &a, &b, NULL), KR_OK); /* beta 0: the NaNs are not read */
    check_vals(&c, AB, "A @ B");
    kr_gemm_opts o = KR_GEMM_OPTS_DEFAULT;
    o.trans_a = 1;
    kr_tensor_fill(ctx, &c, 0);
    CHECK_INT(kr_cublas_gemm(ctx, &c, &at, &b, &o), KR_OK);
    check_vals(&c, AB, "A^T^T @ B");
    o.trans_a = 0;
    o.trans_b = 1;
    kr_tensor_fill(ctx, &c, 0);
    CHECK_INT(kr_cublas_gemm(ctx, &c, &a, &bt, &o), KR_OK);
    check_vals(&c, AB, "A @ B^T^T");
    o.trans_a = 1;
    kr_tensor_fill(ctx, &c, 0);
    CHECK_INT(kr_cublas_gemm(ctx, &c, &at, &bt, &o), KR_OK);
    check_vals(&c, AB, "both transposed");
    /* alpha and beta: C = 2 A B + 0.5 C */
    double c0[4] = {1, 2, 3, 4}, want[4];
    for (int i = 0; i < 4; i++) want[i] = 2 * AB[i] + 0.5 * c0[i];
    kr_tensor c2;
    make(&c2, dt, 2, s22, c0);
    kr_gemm_opts ab = KR_GEMM_OPTS_DEFAULT;
    ab.alpha = 2;
    ab.beta = 0.5;
    CHECK_INT(kr_cublas_gemm(ctx, &c2, &a, &b, &ab), KR_OK);
    if (dt == KR_BF16) {
        /* 279.5 needs 10 bits: bf16 keeps 8, and it rounds to 280 */
        double r[4] = {116.5, 129, 280, 310};
        check_vals(&c2, r, "alpha/beta");
    } else {
        check_vals(&c2, want, "alpha/beta");
    }
    /* a batch of 2 against one B (broadcast) */
    double A2[12];
    for (int i = 0; i < 6; i++) { A2[i] = A[i]; A2[6 + i] = 2 * A[i]; }
    int64_t sa[3] = {2, 2, 3}, sb[3] = {1, 3, 2}, sc[3] = {2, 2, 2};
    kr_tensor ba, bb, bc;
    make(&ba, dt, 3, sa, A2);
    make(&bb, dt, 3, sb, B);
    double z8[8] = {0};
    make(&bc, dt, 3, sc, z8);
    CHECK_INT(kr_cublas_gemm(ctx, &bc, &ba, &bb, NULL), KR_OK);
    double w8[8];
    for (int i = 0; i < 4; i++) { w8[i] = AB[i]; w8[4 + i] = 2 * AB[i]; }
    check_vals(&bc, w8, "batched, B broadcast");
    /* the argument checks are the GPU's */
    CHECK_INT(kr_cublas_gemm(ctx, &c, &a, &a, NULL), KR_ERR_ARG);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "inner sizes");
    kr_gemm_opts tf = KR_GEMM_OPTS_DEFAULT;
    tf.tf32 = 1;
    CHECK_INT(kr_cublas_gemm(ctx, &c, &a, &b, &tf), dt == KR_F32 ? KR_OK : KR_ERR_ARG);
    CHECK_INT(kr_cublas_gemm(ctx, &bc, &ba, &b, NULL), KR_ERR_ARG); /* 3-D with 2-D */
    kr_tensor *all[] = {&a, &at, &b, &bt, &c, &c2, &ba, &bb, &bc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) kr_tensor_release(all[i]);
}

static void t_refused(void) {
    kr_event *e = NULL;
    CHECK_INT(kr_event_new(ctx, &e), KR_ERR_ARG);
    CHECK(e == NULL);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "is not available on the host device (KREACH_DEVICE=host)");
    size_t bytes;
    CHECK_INT(kr_timing_flush(ctx, 2.0, &bytes), KR_ERR_ARG);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "L2 flush");
    CHECK_INT(kr_timing_persisting_l2(ctx, &bytes), KR_ERR_ARG);
    CHECK_INT(kr_graph_begin(ctx), KR_ERR_ARG);
    kr_graph_abort(ctx);
    kr_gate *g = NULL;
    CHECK_INT(kr_gate_new(ctx, &g), KR_ERR_ARG);
    kr_clocks clk;
    CHECK_INT(kr_nvml_clocks(ctx, &clk), KR_ERR_ARG);
    void *handle = NULL;
    CHECK_INT(kr_cublas_handle(ctx, &handle), KR_ERR_ARG);
    CHECK_INT(kr_cudnn_load(ctx, NULL), KR_ERR_NOTFOUND);
    CHECK_STR(kr_context_errmsg(ctx), "the host device has no cuDNN");
    CHECK_INT(kr_cudnn_version(), 0);
    CHECK_INT(kr_context_sync(ctx), KR_OK);
}

/* NVRTC compiles on the host device, for its sm_90 when no arch is given; launching is
 * refused. Skipped where NVRTC cannot be loaded. */
static void t_nvrtc(void) {
    if (kr_nvrtc_ensure_loaded()) {
        printf("test_host: NVRTC not loadable, its check skipped: %s\n", kr_nvrtc_ensure_loaded());
        return;
    }
    kr_build_opts o;
    memset(&o, 0, sizeof o);
    o.source = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = 1; }";
    o.no_cache = 1;
    kr_program *p = NULL;
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p), KR_OK);
    if (!p) return;
    CHECK_STR(kr_program_arch(p), "sm_90");
    float *x = NULL;
    void *args[1] = {&x};
    kr_dim3 one = {1, 1, 1};
    CHECK_INT(kr_launch(ctx, p, 0, one, one, 0, args), KR_ERR_ARG);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "kreach.core.host");
    CHECK_INT(kr_program_load(ctx, p), KR_ERR_ARG);
    kr_program_free(p);
}

static const char ENTRY_SRC[] =
    "#include <stddef.h>\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "typedef struct { int kind; int64_t i; double d; void *p; const char *dtype; } kr_harg;\n"
    "int entry(const unsigned *grid, const unsigned *block, size_t shared, const kr_harg *args,\n"
    "          int nargs, char *err, size_t errlen) {\n"
    "    if (nargs < 1 || args[0].kind != 0) { snprintf(err, errlen, \"no buffer\"); return 2; }\n"
    "    double *out = args[0].p;\n"
    "    int at = 0;\n"
    "    for (int k = 0; k < 3; k++) out[at++] = grid[k];\n"
    "    for (int k = 0; k < 3; k++) out[at++] = block[k];\n"
    "    out[at++] = (double)shared;\n"
    "    out[at++] = nargs;\n"
    "    for (int a = 1; a < nargs; a++) {\n"
    "        out[at++] = args[a].kind;\n"
    "        out[at++] = args[a].kind == 1 ? (double)args[a].i : args[a].kind == 2 ? args[a].d\n"
    "                  : (double)(uintptr_t)args[a].p;\n"
    "    }\n"
    "    return 0;\n"
    "}\n"
    "int fails(const unsigned *grid, const unsigned *block, size_t shared, const kr_harg *args,\n"
    "          int nargs, char *err, size_t errlen) {\n"
    "    (void)grid; (void)block; (void)shared; (void)args; (void)nargs;\n"
    "    snprintf(err, errlen, \"out-of-bounds read in block (%u, 0, 0)\", grid[0] - 1);\n"
    "    return 3;\n"
    "}\n"
    "int silent(const unsigned *grid, const unsigned *block, size_t shared, const kr_harg *args,\n"
    "           int nargs, char *err, size_t errlen) {\n"
    "    (void)grid; (void)block; (void)shared; (void)args; (void)nargs; (void)err; (void)errlen;\n"
    "    return 5;\n"
    "}\n";

static void t_call(void) {
    char dir[] = "/tmp/kreach-test-host-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char src[256], lib[256], cmd[1024];
    snprintf(src, sizeof src, "%s/entry.c", dir);
    snprintf(lib, sizeof lib, "%s/libentry.so", dir);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(ENTRY_SRC, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 -o %s %s", lib, src);
    int rc = system(cmd);
    CHECK_INT(rc, 0);
    if (rc != 0) return;

    void *h = NULL;
    CHECK_INT(kr_host_open(ctx, "/nonexistent/libnothing.so", &h), KR_ERR_NOTFOUND);
    CHECK(h == NULL);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "libnothing.so");
    CHECK_INT(kr_host_open(ctx, lib, &h), KR_OK);
    CHECK(h != NULL);

    int64_t n = 32;
    kr_tensor buf, other;
    CHECK_INT(kr_tensor_alloc(ctx, &buf, KR_F64, 1, &n), KR_OK);
    CHECK_INT(kr_tensor_alloc(ctx, &other, KR_F32, 1, &n), KR_OK);
    kr_tensor_fill(ctx, &buf, -1);
    kr_harg args[5] = {
        {KR_HARG_POINTER, 0, 0, kr_tensor_data(&buf), "f64"},
        {KR_HARG_INTEGER, -7, 0, NULL, NULL},
        {KR_HARG_FLOAT, 0, 2.5, NULL, NULL},
        {KR_HARG_BOOLEAN, 1, 0, NULL, NULL},
        {KR_HARG_POINTER, 0, 0, kr_tensor_data(&other), "f32"},
    };
    unsigned grid[3] = {5, 6, 7}, block[3] = {32, 4, 2};
    CHECK_INT(kr_host_call(ctx, h, "entry", NULL, grid, block, 1234, args, 5), KR_OK);
    double out[32];
    kr_tensor_to_host(ctx, &buf, 0, out, sizeof out);
    double want[] = {5, 6, 7, 32, 4, 2, 1234, 5, 1, -7, 2, 2.5, 3, 0, 0,
                     (double)(uintptr_t)kr_tensor_data(&other), -1};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        kr_test_checks++;
        if (out[i] != want[i]) {
            kr_test_failures++;
            fprintf(stderr, "entry's record %zu is %.17g, expected %.17g\n", i, out[i], want[i]);
        }
    }
    CHECK_INT(kr_context_sync(ctx), KR_OK);

    /* a nonzero return is KR_ERR_LAUNCH with the entry's words */
    CHECK_INT(kr_host_call(ctx, h, "fails", NULL, grid, block, 0, NULL, 0), KR_ERR_LAUNCH);
    CHECK_STR(kr_context_errmsg(ctx), "out-of-bounds read in block (4, 0, 0)");
    CHECK_INT(kr_context_status(ctx), KR_ERR_LAUNCH);
    CHECK_INT(kr_host_call(ctx, h, "silent", NULL, grid, block, 0, NULL, 0), KR_ERR_LAUNCH);
    CHECK_STR(kr_context_errmsg(ctx), "'silent' failed (returned 5)");
    CHECK_INT(kr_host_call(ctx, h, "absent", NULL, grid, block, 0, NULL, 0), KR_ERR_NOTFOUND);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "'absent' is not in the host library");
    /* the configuration is checked as the GPU checks it */
    unsigned zero[3] = {0, 1, 1}, big[3] = {64, 32, 1}, deep[3] = {1, 1, 65}, wide[3] = {1, 65536, 1};
    CHECK_INT(kr_host_call(ctx, h, "entry", NULL, zero, block, 0, args, 1), KR_ERR_LAUNCH);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "empty grid");
    CHECK_INT(kr_host_call(ctx, h, "entry", NULL, grid, big, 0, args, 1), KR_ERR_LAUNCH);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "too many threads per block for 'entry'");
    /* messages name the kernel when its name is given, not the entry's symbol */
    CHECK_INT(kr_host_call(ctx, h, "entry", "twice<float>", grid, big, 0, args, 1), KR_ERR_LAUNCH);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "too many threads per block for 'twice<float>'");
    CHECK_INT(kr_host_call(ctx, h, "entry", NULL, grid, deep, 0, args, 1), KR_ERR_LAUNCH);
    CHECK_INT(kr_host_call(ctx, h, "entry", NULL, wide, block, 0, args, 1), KR_ERR_LAUNCH);
    CHECK_INT(kr_host_call(ctx, h, "entry", NULL, grid, block, 232449, args, 1), KR_ERR_LAUNCH);
    CHECK_INT(kr_host_call(ctx, h, "entry", NULL, grid, block, 232448, args, 1), KR_OK);
    CHECK_INT(kr_host_call(ctx, h, "entry", NULL, grid, block, 0, NULL, 2), KR_ERR_ARG);
    /* only on the host device */
    kr_context *gpu = kr_context_new(0);
    CHECK_INT(kr_host_call(gpu, h, "entry", NULL, grid, block, 0, args, 1), KR_ERR_ARG);
    CHECK_CONTAINS(kr_context_errmsg(gpu), "host device only");
    CHECK_INT(kr_context_state(gpu), 0); /* nothing was opened */
    kr_context_release(gpu);

    kr_host_close(h);
    kr_host_close(NULL);
    kr_tensor_release(&buf);
    kr_tensor_release(&other);
    unlink(src);
    unlink(lib);
    rmdir(dir);
}

int main(void) {
    t_context();
    t_storage();
    t_fills();
    t_poison();
    t_convert();
    t_random();
    t_gemm(KR_F64);
    t_gemm(KR_F32);
    t_gemm(KR_BF16);
    t_gemm(KR_F16);
    t_refused();
    t_nvrtc();
    t_call();
    kr_context_release(ctx);
    return kr_test_done("test_host");
}
