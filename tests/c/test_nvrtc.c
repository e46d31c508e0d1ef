/* test_nvrtc.c: NVRTC compilation and the compile cache, without a GPU (explicit arch).
 * Covers compile errors with line numbers, the memory and disk caches, corrupt and truncated
 * cache entries (detected and rebuilt), name expressions, and option checks; the disk cache's
 * cap (KREACH_CACHE_MAX, least recently used entries evicted) and its mkstemp temporaries; a
 * FIFO planted at an entry's name (a miss, not a hang), and, in a child sealed with Landlock, a
 * failed #include's one message (existence cannot be told from permission) and a cache key of
 * its own; a confined build, in which NVRTC reaches only the toolkit's headers (issue 33). */
#define _GNU_SOURCE
#include "kr_nvrtc.h"
#include "kr_test.h"

#include "kr_seal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

/* Builds source number i (sources of equal length) with the cache in dir, in a fresh context
 * (so the memory cache is empty); returns the cache result and the entry's path in path. */
static kr_cache_result build_nth(const char *dir, int i, char *path, size_t n, char *note,
                                 size_t notelen) {
    char src[128];
    snprintf(src, sizeof src, "extern \"C\" __global__ void k%03d(float *x) { x[0] = %d.0f; }\n",
             i, i);
    kr_context *ctx = kr_context_new(0);
    kr_build_opts o = {0};
    o.source = src;
    o.arch = "sm_90";
    o.cache_dir = dir;
    kr_program *p = NULL;
    kr_status st = kr_nvrtc_build(ctx, &o, &p);
    CHECK_INT(st, KR_OK);
    kr_cache_result r = p ? kr_program_cache_result(p) : KR_CACHE_OFF;
    if (path) snprintf(path, n, "%s", p ? kr_program_cache_path(p) : "");
    if (note) snprintf(note, notelen, "%s", p ? kr_program_cache_note(p) : "");
    kr_program_free(p);
    kr_context_release(ctx);
    return r;
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* KREACH_CACHE_MAX: the cap, least recently used eviction, entries larger than the cap,
 * 0 for off, bad values; temporaries from mkstemp (a link planted at the old predictable name
 * is not followed) and stale ones removed. */
static void test_cache_cap(void) {
    char dir[] = "/tmp/kreach-test-cache-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char a[512], b[512], c[512], d[512], note[512];
    unsetenv("KREACH_CACHE_MAX");
    CHECK_INT(build_nth(dir, 1, a, sizeof a, NULL, 0), KR_CACHE_MISS);
    long long e = file_size(a);
    CHECK(e > 1000);
    char cap[32];
    snprintf(cap, sizeof cap, "%lld", 3 * e + e / 2); /* room for three entries */
    setenv("KREACH_CACHE_MAX", cap, 1);
    CHECK_INT(build_nth(dir, 2, b, sizeof b, NULL, 0), KR_CACHE_MISS);
    CHECK_INT(build_nth(dir, 3, c, sizeof c, NULL, 0), KR_CACHE_MISS);
    CHECK(file_size(a) == e && file_size(b) > 0 && file_size(c) > 0);
    usleep(20000);
    CHECK_INT(build_nth(dir, 1, NULL, 0, NULL, 0), KR_CACHE_DISK); /* a used, b is now oldest */
    usleep(20000);
    CHECK_INT(build_nth(dir, 4, d, sizeof d, NULL, 0), KR_CACHE_MISS);
    CHECK(file_size(a) > 0);
    CHECK(file_size(b) < 0); /* evicted */
    CHECK(file_size(c) > 0 && file_size(d) > 0);
    CHECK(file_size(a) + file_size(c) + file_size(d) <= 3 * e + e / 2);
    CHECK_INT(build_nth(dir, 2, NULL, 0, NULL, 0), KR_CACHE_MISS); /* compiled again */

    /* an entry larger than the cap is not stored; suffixes are powers of 1024 */
    setenv("KREACH_CACHE_MAX", "1KiB", 1);
    CHECK_INT(build_nth(dir, 5, d, sizeof d, note, sizeof note), KR_CACHE_MISS);
    CHECK(file_size(d) < 0);
    CHECK_CONTAINS(note, "more than the disk cache's cap of 1024");
    setenv("KREACH_CACHE_MAX", "0", 1);
    CHECK_INT(build_nth(dir, 6, d, sizeof d, note, sizeof note), KR_CACHE_MISS);
    CHECK_CONTAINS(note, "off");
    CHECK(file_size(d) < 0);
    setenv("KREACH_CACHE_MAX", "12X", 1);
    kr_context *ctx = kr_context_new(0);
    kr_build_opts o = {0};
    o.source = "extern \"C\" __global__ void z() {}\n";
    o.arch = "sm_90";
    o.cache_dir = dir;
    kr_program *p = NULL;
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p), KR_ERR_ARG);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "KREACH_CACHE_MAX='12X' is not a size");
    /* ... which a parent can ask before it starts workers */
    unsigned long long bytes = 1;
    char err[320] = "";
    CHECK_INT(kr_nvrtc_cache_max(&bytes, err, sizeof err), -1);
    CHECK_CONTAINS(err, "KREACH_CACHE_MAX='12X' is not a size");
    setenv("KREACH_CACHE_MAX", "0", 1);
    CHECK_INT(kr_nvrtc_cache_max(&bytes, err, sizeof err), 0);
    CHECK_INT(bytes, 0);
    setenv("KREACH_CACHE_MAX", "2G", 1);
    CHECK_INT(kr_nvrtc_cache_max(&bytes, err, sizeof err), 0);
    CHECK(bytes == 2ull << 30);

    /* a link planted where the old code put its temporary (<entry>.tmp.<pid>) is left alone,
     * and the entry is written; a temporary older than an hour is removed, a new one kept */
    o.no_cache = 1;
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p), KR_OK);
    char planted[700], victim[600], stale[600], fresh[600];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    if (f) { fputs("precious", f); fclose(f); }
    snprintf(planted, sizeof planted, "%s/%s.kcubin.tmp.%ld", dir, kr_program_key(p), (long)getpid());
    CHECK(symlink(victim, planted) == 0);
    kr_program_free(p);
    snprintf(stale, sizeof stale, "%s/dead.kcubin.tmp.abcdef", dir);
    snprintf(fresh, sizeof fresh, "%s/live.kcubin.tmp.abcdef", dir);
    f = fopen(stale, "w");
    if (f) fclose(f);
    f = fopen(fresh, "w");
    if (f) fclose(f);
    struct timespec old[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    CHECK(utimensat(AT_FDCWD, stale, old, 0) == 0);
    o.no_cache = 0;
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p), KR_OK);
    CHECK(p && kr_program_cache_result(p) == KR_CACHE_MISS);
    CHECK(p && file_size(kr_program_cache_path(p)) > 0);
    kr_program_free(p);
    kr_context_release(ctx);
    f = fopen(victim, "r");
    char got[32] = "";
    if (f) { if (!fgets(got, sizeof got, f)) got[0] = 0; fclose(f); }
    CHECK_STR(got, "precious");
    CHECK(file_size(stale) < 0);
    CHECK(file_size(fresh) == 0);
    unsetenv("KREACH_CACHE_MAX");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* A FIFO planted at an entry's name: the build must not block on it (it did: fopen of a FIFO
 * waits for a writer, so the compile hung until the harness's timeout). SIGALRM ends the test
 * if it hangs. The FIFO is a miss, and the entry is written in its place. */
static void test_cache_fifo(void) {
    char dir[] = "/tmp/kreach-test-fifo-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[512], note[512];
    CHECK_INT(build_nth(dir, 7, path, sizeof path, NULL, 0), KR_CACHE_MISS);
    CHECK(unlink(path) == 0);
    CHECK(mkfifo(path, 0644) == 0);
    alarm(20);
    kr_cache_result r = build_nth(dir, 7, NULL, 0, note, sizeof note);
    alarm(0);
    CHECK(r == KR_CACHE_REBUILT || r == KR_CACHE_MISS);
    CHECK_CONTAINS(note, "not a regular file");
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode));
    CHECK_INT(build_nth(dir, 7, NULL, 0, NULL, 0), KR_CACHE_DISK);
    /* a link planted there is not followed either */
    CHECK(unlink(path) == 0);
    CHECK(symlink("/dev/zero", path) == 0);
    alarm(20);
    r = build_nth(dir, 7, NULL, 0, note, sizeof note);
    alarm(0);
    CHECK(r == KR_CACHE_REBUILT || r == KR_CACHE_MISS);
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The error of a failed #include, with the name left out: everything from the message's
 * "cannot open source file" to the line's end, the quoted name replaced by N. */
static void include_error(kr_context *ctx, const char *file, char *out, size_t n) {
    char src[256];
    snprintf(src, sizeof src, "#include \"%s\"\nextern \"C\" __global__ void k() {}\n", file);
    kr_build_opts o = {0};
    o.source = src;
    o.name = "inc.cu";
    o.arch = "sm_90";
    o.no_cache = 1;
    kr_program *p = NULL;
    kr_status st = kr_nvrtc_build(ctx, &o, &p);
    kr_program_free(p);
    snprintf(out, n, "status %d", (int)st);
    const char *m = strstr(kr_context_errmsg(ctx), "cannot open source file");
    if (st != KR_ERR_COMPILE || !m) return;
    const char *q = strstr(m, file), *e = strchr(m, '\n');
    if (!e) e = m + strlen(m);
    if (!q || q > e) { snprintf(out, n, "%.*s", (int)(e - m), m); return; }
    snprintf(out, n, "%.*sN%.*s", (int)(q - m), m, (int)(e - q - strlen(file)), q + strlen(file));
}

/* In a child sealed with Landlock (reads: the toolkit and NVRTC's directory; writes: the cache):
 * a file that exists but may not be read and a file that does not exist give one message
 * (NVRTC 13.0 adds ": Permission denied" to the first, which made each compile a probe of
 * whether a path exists); and a sealed compile does not share the unsealed one's cache key
 * (the key said nothing of what the compile could read). */
static void test_sealed(void) {
    char why[256];
    if (kr_seal_landlock_abi(why, sizeof why) < 1) {
        printf("nvrtc: the sealed checks are skipped: no Landlock (%s)\n", why);
        return;
    }
    char dir[] = "/tmp/kreach-test-sealed-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    kr_context *ctx = kr_context_new(0);
    kr_status st;
    kr_program *p = build(ctx, SRC, dir, &st, NULL, 0);
    CHECK_INT(st, KR_OK);
    char key[64] = "";
    if (p) snprintf(key, sizeof key, "%s", kr_program_key(p));
    kr_program_free(p);
    kr_context_release(ctx);
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char err[512], nv[1024], tk[1024], msg[3][1024];
        const char *home = getenv("CUDA_HOME");
        if (kr_seal_preload_nvrtc_builtins(err, sizeof err) != 0 || kr_seal_nvrtc_dir(nv, sizeof nv) != 0 ||
            kr_seal_realpath(home && *home ? home : "/usr/local/cuda", tk, sizeof tk, err, sizeof err) != 0)
            _exit(3);
        kr_seal_rule rules[] = {{tk, KR_SEAL_READ}, {nv, KR_SEAL_READ}, {dir, KR_SEAL_WRITE},
                                {"/dev/null", KR_SEAL_DEVICE}};
        if (kr_seal_landlock(rules, 4, NULL, err, sizeof err) < 1) _exit(4);
        kr_context *c = kr_context_new(0);
        include_error(c, "/etc/passwd", msg[0], sizeof msg[0]);     /* exists, denied */
        include_error(c, "/etc/kreach-no-such-file", msg[1], sizeof msg[1]);
        kr_program *q = build(c, SRC, dir, &st, NULL, 0);
        snprintf(msg[2], sizeof msg[2], "%s %s", q ? kr_program_key(q) : "none",
                 q ? kr_cache_result_name(kr_program_cache_result(q)) : "failed");
        kr_program_free(q);
        kr_context_release(c);
        FILE *f = fdopen(fds[1], "w");
        fprintf(f, "%s\n%s\n%s\n", msg[0], msg[1], msg[2]);
        fclose(f);
        _exit(0);
    }
    close(fds[1]);
    char got[3][1024] = {"", "", ""};
    FILE *f = fdopen(fds[0], "r");
    for (int i = 0; f && i < 3 && fgets(got[i], sizeof got[i], f); i++) got[i][strcspn(got[i], "\n")] = 0;
    if (f) fclose(f);
    int ws = 0;
    waitpid(pid, &ws, 0);
    CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    CHECK_CONTAINS(got[1], "cannot open source file \"N\"");
    CHECK_STR(got[0], got[1]);
    char want[128];
    snprintf(want, sizeof want, "%s miss", key);
    CHECK(got[2][0] && strcmp(got[2], want) != 0 && strstr(got[2], " miss"));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The error of a confined build of an #include of file (include_error's form), or of its
 * __has_include: "yes" or "no". */
static void confined(const char *file, int has, int confine, char *out, size_t n) {
    char src[320];
    if (has)
        snprintf(src, sizeof src, "#if __has_include(\"%s\")\n#error yes\n#else\n#error no\n#endif\n", file);
    else
        snprintf(src, sizeof src, "#include \"%s\"\nextern \"C\" __global__ void k() {}\n", file);
    kr_context *ctx = kr_context_new(0);
    kr_build_opts o = {0};
    o.source = src;
    o.name = "inc.cu";
    o.arch = "sm_90";
    o.no_cache = 1;
    o.confine = confine;
    kr_program *p = NULL;
    kr_status st = kr_nvrtc_build(ctx, &o, &p);
    kr_program_free(p);
    const char *m = kr_context_errmsg(ctx);
    if (has) {
        snprintf(out, n, "%s", st != KR_ERR_COMPILE ? "?" : strstr(m, "#error directive: yes") ? "yes"
                 : strstr(m, "#error directive: no") ? "no" : "?");
    } else if (st == KR_OK) {
        snprintf(out, n, "compiled");
    } else {
        const char *e = strstr(m, "cannot open source file");
        snprintf(out, n, "%.*s", e ? (int)strcspn(e, "\n") : 40, e ? e : m);
        char *q = strstr(out, file);
        if (q) memmove(q, q + strlen(file) - 1, strlen(q + strlen(file) - 1) + 1), *q = 'N';
    }
    kr_context_release(ctx);
}

/* A confined build: NVRTC's own file calls are checked (kr_nvrtc_api.c), so outside the
 * toolkit's headers a file that exists reads as one that does not, for #include and for
 * __has_include, the working directory included; the toolkit's headers still compile. The
 * unconfined build reads them (what the check is against). Confined builds have keys of their
 * own. */
static void test_confined(void) {
    char a[256], b[256];
    confined("/etc/hostname", 0, 0, a, sizeof a);
    CHECK(strstr(a, "cannot open") == NULL); /* unconfined: read */
    confined("/etc/hostname", 0, 1, a, sizeof a);
    confined("/etc/kreach-no-such-file", 0, 1, b, sizeof b);
    CHECK_CONTAINS(a, "cannot open source file \"N\"");
    CHECK_STR(a, b);
    confined("/etc/hostname", 1, 0, a, sizeof a);
    CHECK_STR(a, "yes");
    confined("/etc/hostname", 1, 1, a, sizeof a);
    CHECK_STR(a, "no");
    /* a file of the working directory (NVRTC looks there first for a quoted name) */
    char cwd[512], dir[] = "/tmp/kreach-test-confine-XXXXXX";
    CHECK(getcwd(cwd, sizeof cwd) != NULL && mkdtemp(dir) != NULL);
    CHECK(chdir(dir) == 0);
    FILE *f = fopen("here.h", "w");
    if (f) { fputs("int here = 1;\n", f); fclose(f); }
    confined("here.h", 0, 0, a, sizeof a);
    CHECK(strstr(a, "cannot open") == NULL);
    confined("here.h", 0, 1, a, sizeof a);
    CHECK_CONTAINS(a, "cannot open source file");
    confined("here.h", 1, 1, a, sizeof a);
    CHECK_STR(a, "no");
    unlink("here.h");
    CHECK(chdir(cwd) == 0);
    rmdir(dir);
    /* the toolkit's headers are reached, and the key differs from the unconfined build's */
    kr_context *ctx = kr_context_new(0);
    kr_build_opts o = {0};
    o.source = "#include <cuda_fp16.h>\nextern \"C\" __global__ void k(__half *h) {}\n";
    o.arch = "sm_90";
    o.no_cache = 1;
    kr_program *p = NULL, *q = NULL;
    CHECK_INT(kr_nvrtc_build(ctx, &o, &p), KR_OK);
    o.confine = 1;
    CHECK_INT(kr_nvrtc_build(ctx, &o, &q), KR_OK);
    CHECK(p && q && strcmp(kr_program_key(p), kr_program_key(q)) != 0);
    kr_program_free(q);
    /* a source marked with kr_nvrtc_confine_source builds confined without asking */
    o.confine = 0;
    CHECK_INT(kr_nvrtc_confine_source(o.source), 0);
    CHECK_INT(kr_nvrtc_build(ctx, &o, &q), KR_OK);
    CHECK(q && p && strcmp(kr_program_key(p), kr_program_key(q)) != 0);
    kr_program_free(p);
    kr_program_free(q);
    kr_context_release(ctx);
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
    test_cache_cap();
    test_sealed();
    test_confined();
    test_cache_fifo();
    return kr_test_done("nvrtc");
}
