/* test_nvrtc.c: NVRTC compilation and the compile cache, without a GPU (explicit arch).
 * Covers compile errors with line numbers, the memory and disk caches, corrupt and truncated
 * cache entries (detected and rebuilt), name expressions, and option checks. */
#define _GNU_SOURCE
#include "kr_nvrtc.h"
#include "kr_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *SRC =
    "extern \"C\" __global__ void axpy(float *y, const float *x, float a, long long n) {\n"
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] += a * x[i];\n"
    "}\n"
    "template <typename T, int N> __global__ void scale(T *p, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) p[i] *= (T)N;\n"
    "}\n"
    "namespace ns { __global__ void cpp_kernel(double *d) { d[0] = 1; } }\n";

static kr_program *build(kr_context *ctx, const char *src, const char *dir, kr_status *st,
                         const char *const *inst, int ninst) {
    kr_build_opts o = {0};
    o.source = src;
    o.name = "test.cu";
    o.arch = "sm_90";
    o.cache_dir = dir;
    o.instantiate = inst;
    o.n_instantiate = ninst;
    kr_program *p = NULL;
    *st = kr_nvrtc_build(ctx, &o, &p);
    return p;
}

static void corrupt(const char *path, long at, int truncate_to) {
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    if (truncate_to >= 0) {
        CHECK(ftruncate(fileno(f), truncate_to) == 0);
    } else {
        fseek(f, at, SEEK_SET);
        int c = fgetc(f);
        fseek(f, at, SEEK_SET);
        fputc(c ^ 0x40, f);
    }
    fclose(f);
}

int main(void) {
    char dir[] = "/tmp/kreach-test-nvrtc-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    kr_status st;
    const char *inst[] = {"scale<float, 3>"};

    /* a first build compiles and stores; a second in the same context hits memory */
    kr_context *ctx = kr_context_new(0);
    kr_program *p = build(ctx, SRC, dir, &st, inst, 1);
    CHECK_INT(st, KR_OK);
    if (!p) { fprintf(stderr, "%s\n", kr_context_errmsg(ctx)); return 1; }
    CHECK_INT(kr_program_cache_result(p), KR_CACHE_MISS);
    CHECK_STR(kr_program_arch(p), "sm_90");
    CHECK_INT(strlen(kr_program_key(p)), 32);
    size_t cubin_size = 0;
    const unsigned char *cubin = kr_program_cubin(p, &cubin_size);
    CHECK(cubin_size > 64 && cubin[0] == 0x7f && cubin[1] == 'E'); /* an ELF image */
    CHECK_INT(kr_program_n_kernels(p), 3);
    int ax = kr_program_find(p, "axpy");
    CHECK(ax >= 0);
    const kr_kernel_sig *s = kr_program_kernel_sig(p, ax);
    CHECK_INT(s->n_params, 4);
    CHECK_INT(s->params[0].type, KR_PT_PTR); CHECK_INT(s->params[0].elem, KR_EL_F32);
    CHECK_INT(s->params[1].is_const, 1);
    CHECK_INT(s->params[2].type, KR_PT_F32);
    CHECK_INT(s->params[3].type, KR_PT_I64);
    int sc = kr_program_find(p, "scale<float, 3>");
    CHECK(sc >= 0);
    if (sc >= 0) {
        s = kr_program_kernel_sig(p, sc);
        CHECK_INT(s->n_params, 2); /* from the mangled name: (float *, int) */
        CHECK_INT(s->params[0].elem, KR_EL_F32);
        CHECK_INT(s->params[1].type, KR_PT_I32);
    }
    CHECK(kr_program_find(p, "cpp_kernel") >= 0); /* resolved to its symbol when loaded */
    CHECK(kr_program_find(p, "scale") < 0);       /* a template needs an instantiation */
    char path[512];
    snprintf(path, sizeof path, "%s", kr_program_cache_path(p));
    CHECK(access(path, R_OK) == 0);
    kr_program *p2 = build(ctx, SRC, dir, &st, inst, 1);
    CHECK_INT(st, KR_OK);
    CHECK(p2 && kr_program_cache_result(p2) == KR_CACHE_MEMORY);
    kr_program_free(p2);
    kr_program_free(p);
    kr_context_release(ctx);

    /* a new context (empty memory cache) reads the disk entry */
    ctx = kr_context_new(0);
    p = build(ctx, SRC, dir, &st, inst, 1);
    CHECK(p && kr_program_cache_result(p) == KR_CACHE_DISK);
    CHECK(p && kr_program_find(p, "scale<float, 3>") >= 0);
    kr_program_free(p);
    kr_context_release(ctx);

    /* a flipped byte in the payload, a truncated file, a foreign file: each rebuilt */
    long flip_at[] = {100, 12, 0};
    for (int i = 0; i < 3; i++) {
        corrupt(path, flip_at[i], -1);
        ctx = kr_context_new(0);
        p = build(ctx, SRC, dir, &st, inst, 1);
        CHECK_INT(st, KR_OK);
        CHECK(p && kr_program_cache_result(p) == KR_CACHE_REBUILT);
        if (p) CHECK(strlen(kr_program_cache_note(p)) > 0);
        kr_program_free(p);
        kr_context_release(ctx);
        ctx = kr_context_new(0);
        p = build(ctx, SRC, dir, &st, inst, 1);
        CHECK(p && kr_program_cache_result(p) == KR_CACHE_DISK); /* the rebuilt entry is good */
        kr_program_free(p);
        kr_context_release(ctx);
    }
    corrupt(path, 0, 20);
    ctx = kr_context_new(0);
    p = build(ctx, SRC, dir, &st, inst, 1);
    CHECK(p && kr_program_cache_result(p) == KR_CACHE_REBUILT);
    if (p) CHECK_CONTAINS(kr_program_cache_note(p), "truncated");
    kr_program_free(p);

    /* different options or arch: a different key */
    kr_build_opts o = {0};
    o.source = SRC;
    o.arch = "sm_90";
    o.cache_dir = dir;
    const char *fast[] = {"--use_fast_math"};
    o.options = fast;
    o.n_options = 1;
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p2), KR_OK);
    CHECK(p2 && kr_program_cache_result(p2) == KR_CACHE_MISS);
    kr_program_free(p2);
    o.options = NULL;
    o.n_options = 0;
    o.arch = "sm_80";
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p2), KR_OK);
    CHECK(p2 && kr_program_cache_result(p2) == KR_CACHE_MISS && !strcmp(kr_program_arch(p2), "sm_80"));
    kr_program_free(p2);

    /* compile errors are data: the log names the file and line */
    p = build(ctx, "extern \"C\" __global__ void f(float *x) {\n  x[0] = undefined_thing;\n}\n",
              dir, &st, NULL, 0);
    CHECK_INT(st, KR_ERR_COMPILE);
    CHECK(p == NULL);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "test.cu(2): error");
    CHECK_CONTAINS(kr_context_errmsg(ctx), "undefined_thing");
    /* an instantiation that does not exist */
    const char *nope[] = {"no_such_kernel<int>"};
    p = build(ctx, SRC, dir, &st, nope, 1);
    CHECK(st == KR_ERR_COMPILE || st == KR_ERR_NVRTC);
    CHECK(p == NULL);

    /* bad arguments */
    o.arch = "compute_90";
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p2), KR_ERR_ARG);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "sm_90");
    o.arch = "sm_90";
    const char *archopt[] = {"-arch=sm_80"};
    o.options = archopt;
    o.n_options = 1;
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p2), KR_ERR_ARG);
    o.options = NULL;
    o.n_options = 0;
    /* no arch and no GPU: the missing device is reported, with the way out */
    o.arch = NULL;
    st = kr_nvrtc_build(ctx, &o, &p2);
    if (st == KR_ERR_NODEVICE) CHECK_CONTAINS(kr_context_errmsg(ctx), "explicit arch");
    else { CHECK_INT(st, KR_OK); kr_program_free(p2); }
    /* caching off, and an unwritable cache directory: still compiles */
    o.arch = "sm_90";
    o.no_cache = 1;
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p2), KR_OK);
    CHECK(p2 && kr_program_cache_result(p2) == KR_CACHE_OFF);
    kr_program_free(p2);
    o.no_cache = 0;
    o.cache_dir = "/proc/kreach-cannot-write-here";
    o.source = "extern \"C\" __global__ void g() {}\n";
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p2), KR_OK);
    CHECK(p2 && strlen(kr_program_cache_note(p2)) > 0);
    kr_program_free(p2);
    kr_context_release(ctx);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return kr_test_done("nvrtc");
}
