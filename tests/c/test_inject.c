/* test_inject.c: libkreach_inject.so without a GPU: the text helpers (runtime/inject/kr_inject_fmt.c,
 * compiled in), the library's exports, and InitializeInjection's behaviour when it cannot trace.
 * The library is found beside the tests directory (../libkreach_inject.so), or at $KREACH_INJECT_LIB.
 * With a GPU, tests/inject/inject_check.c checks a real trace. kreach's reader is checked against
 * these same record functions by tests/lua/inject_trace_spec.lua (tests/inject/inject_write.c
 * writes the file, kreach.profile.trace reads it). */
#define _GNU_SOURCE
#include "kr_guard_os.h"
#include "kr_inject_fmt.h"
#include "kr_test.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char text[4096];

static const char *esc(const char *s) {
    kr_jbuf b = {0};
    kr_jbuf_json_string(&b, s);
    snprintf(text, sizeof text, "%s", kr_jbuf_text(&b));
    kr_jbuf_free(&b);
    return text;
}

static void escaping(void) {
    CHECK_STR(esc("step"), "\"step\"");
    CHECK_STR(esc(""), "\"\"");
    CHECK_STR(esc(NULL), "\"\"");
    CHECK_STR(esc("a\"b\\c"), "\"a\\\"b\\\\c\"");
    CHECK_STR(esc("l1\nl2\r\t\b\f"), "\"l1\\nl2\\r\\t\\b\\f\"");
    CHECK_STR(esc("\x01\x1f\x7f"), "\"\\u0001\\u001f\x7f\"");
    CHECK_STR(esc("void krt::scale<float>(float*, float, int)"),
              "\"void krt::scale<float>(float*, float, int)\"");
    /* well-formed UTF-8 passes through; anything else becomes U+FFFD, a byte at a time */
    CHECK_STR(esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    CHECK_STR(esc("a\xff" "b"), "\"a\\ufffdb\"");
    CHECK_STR(esc("\xc3"), "\"\\ufffd\"");                   /* cut short at the end */
    CHECK_STR(esc("\xc0\xaf"), "\"\\ufffd\\ufffd\"");        /* overlong */
    CHECK_STR(esc("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\""); /* a surrogate */
    CHECK_STR(esc("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* above U+10FFFF */

    kr_jbuf b = {0};
    kr_jbuf_u64(&b, 0);
    kr_jbuf_raw(&b, " ", 1);
    kr_jbuf_u64(&b, UINT64_MAX);
    kr_jbuf_raw(&b, " ", 1);
    kr_jbuf_i64(&b, INT64_MIN);
    kr_jbuf_raw(&b, " ", 1);
    kr_jbuf_i64(&b, -7);
    CHECK_STR(kr_jbuf_text(&b), "0 18446744073709551615 -9223372036854775808 -7");
    kr_jbuf_free(&b);

    /* a long string grows the buffer */
    static char big[3000];
    memset(big, 'x', sizeof big - 1);
    kr_jbuf_json_string(&b, big);
    CHECK_INT(b.len, sizeof big + 1);
    CHECK(!b.failed);
    kr_jbuf_free(&b);
}

static void names(void) {
    char *d = kr_inject_demangle("_ZN3krt5scaleIfEEvPT_S1_i");
    CHECK_STR(d, "void krt::scale<float>(float*, float, int)");
    free(d);
    d = kr_inject_demangle("_Z7add_onePii");
    CHECK_STR(d, "add_one(int*, int)");
    free(d);
    CHECK(kr_inject_demangle("add_one") == NULL);      /* extern "C": not mangled */
    CHECK(kr_inject_demangle("_Z") == NULL);           /* not a valid mangling */
    CHECK(kr_inject_demangle("_Znotreally(") == NULL);
    CHECK(kr_inject_demangle(NULL) == NULL);

    kr_jbuf b = {0};
    kr_inject_names_json(&b, "_ZN3krt5scaleIfEEvPT_S1_i");
    CHECK_STR(kr_jbuf_text(&b),
              "\"name\":\"void krt::scale<float>(float*, float, int)\",\"mangled\":\"_ZN3krt5scaleIfEEvPT_S1_i\"");
    b.len = 0;
    kr_inject_names_json(&b, "relu_kernel");
    CHECK_STR(kr_jbuf_text(&b), "\"name\":\"relu_kernel\",\"mangled\":\"relu_kernel\"");
    kr_jbuf_free(&b);

    CHECK_STR(kr_inject_copy_kind(0), "unknown");
    CHECK_STR(kr_inject_copy_kind(1), "HtoD");
    CHECK_STR(kr_inject_copy_kind(2), "DtoH");
    CHECK_STR(kr_inject_copy_kind(8), "DtoD");
    CHECK_STR(kr_inject_copy_kind(9), "HtoH");
    CHECK_STR(kr_inject_copy_kind(10), "PtoP");
    CHECK_STR(kr_inject_copy_kind(11), "unknown");
    CHECK_STR(kr_inject_copy_kind(0x7fffffff), "unknown");
}

static void kinds(void) {
    unsigned m = 99;
    char bad[16];
    CHECK_INT(kr_inject_parse_kinds(NULL, &m, bad, sizeof bad), 0);
    CHECK_INT(m, KR_TRACE_ALL);
    CHECK_INT(kr_inject_parse_kinds("", &m, bad, sizeof bad), 0);
    CHECK_INT(m, KR_TRACE_ALL);
    CHECK_INT(kr_inject_parse_kinds("kernel", &m, bad, sizeof bad), 0);
    CHECK_INT(m, KR_TRACE_KERNEL);
    CHECK_INT(kr_inject_parse_kinds(" kernel , marker", &m, bad, sizeof bad), 0);
    CHECK_INT(m, KR_TRACE_KERNEL | KR_TRACE_MARKER);
    CHECK_INT(kr_inject_parse_kinds("memset,memcpy,memset", &m, bad, sizeof bad), 0);
    CHECK_INT(m, KR_TRACE_MEMSET | KR_TRACE_MEMCPY);
    CHECK_INT(kr_inject_parse_kinds("marker,all", &m, bad, sizeof bad), 0);
    CHECK_INT(m, KR_TRACE_ALL);
    /* unknown names are named back, cut to the buffer */
    CHECK_INT(kr_inject_parse_kinds("kernel,kernels", &m, bad, sizeof bad), -1);
    CHECK_STR(bad, "kernels");
    CHECK_INT(m, 0);
    CHECK_INT(kr_inject_parse_kinds("Kernel", &m, bad, sizeof bad), -1);
    CHECK_STR(bad, "Kernel");
    CHECK_INT(kr_inject_parse_kinds("a-very-long-unknown-kind-name", &m, bad, sizeof bad), -1);
    CHECK_STR(bad, "a-very-long-unk");
    /* an empty name: no kind at all */
    CHECK_INT(kr_inject_parse_kinds("kernel,", &m, bad, sizeof bad), -1);
    CHECK_STR(bad, "");
    CHECK_INT(kr_inject_parse_kinds(" , ", &m, bad, sizeof bad), -1);
}

static void records(void) {
    kr_jbuf b = {0};
    kr_inject_line_header(&b, 123, 130001, 1000, KR_TRACE_ALL, NULL);
    CHECK_STR(kr_jbuf_text(&b), "{\"type\":\"header\",\"version\":1,\"pid\":123,"
                                "\"cupti_version\":130001,\"start_ns\":1000,"
                                "\"kinds\":[\"kernel\",\"memcpy\",\"memset\",\"marker\"]}\n");
    b.len = 0;
    kr_inject_line_header(&b, 7, 130001, 2, KR_TRACE_KERNEL | KR_TRACE_MARKER, NULL);
    CHECK_STR(kr_jbuf_text(&b), "{\"type\":\"header\",\"version\":1,\"pid\":7,"
                                "\"cupti_version\":130001,\"start_ns\":2,"
                                "\"kinds\":[\"kernel\",\"marker\"]}\n");
    b.len = 0;
    kr_inject_line_header(&b, 7, 130001, 2, KR_TRACE_ALL, "st\"ep");
    CHECK_STR(kr_jbuf_text(&b), "{\"type\":\"header\",\"version\":1,\"pid\":7,"
                                "\"cupti_version\":130001,\"start_ns\":2,"
                                "\"kinds\":[\"kernel\",\"memcpy\",\"memset\",\"marker\"],"
                                "\"alternate\":\"st\\\"ep\"}\n");
    b.len = 0;
    kr_inject_kernel k = {.start = 5000, .end = 7000, .device = 0, .context = 1, .stream = 7,
                          .correlation = 123, .grid = {4, 2, 1}, .block = {256, 1, 1},
                          .registers = 32, .static_shared = 1024, .dynamic_shared = 0};
    kr_jbuf n = {0};
    kr_inject_names_json(&n, "_Z7add_onePii");
    kr_inject_line_kernel(&b, &k, n.p, n.len);
    CHECK_STR(kr_jbuf_text(&b),
              "{\"type\":\"kernel\",\"name\":\"add_one(int*, int)\",\"mangled\":\"_Z7add_onePii\","
              "\"start\":5000,\"end\":7000,\"device\":0,\"context\":1,\"stream\":7,"
              "\"grid\":[4,2,1],\"block\":[256,1,1],\"registers\":32,\"static_shared\":1024,"
              "\"dynamic_shared\":0,\"correlation\":123}\n");
    kr_jbuf_free(&n);
    b.len = 0;
    kr_inject_line_memcpy(&b, 10, 20, 4096, 1, 0, 7, 55);
    CHECK_STR(kr_jbuf_text(&b), "{\"type\":\"memcpy\",\"start\":10,\"end\":20,\"bytes\":4096,"
                                "\"copy_kind\":\"HtoD\",\"device\":0,\"stream\":7,\"correlation\":55}\n");
    b.len = 0;
    kr_inject_line_memset(&b, 30, 40, 4096, 1, 13);
    CHECK_STR(kr_jbuf_text(&b), "{\"type\":\"memset\",\"start\":30,\"end\":40,\"bytes\":4096,"
                                "\"device\":1,\"stream\":13}\n");
    b.len = 0;
    kr_inject_line_range(&b, "step", NULL, 1, 2);
    CHECK_STR(kr_jbuf_text(&b), "{\"type\":\"range\",\"name\":\"step\",\"start\":1,\"end\":2}\n");
    b.len = 0;
    kr_inject_line_range(&b, "all\"reduce", "NCCL", 3, 4);
    CHECK_STR(kr_jbuf_text(&b), "{\"type\":\"range\",\"name\":\"all\\\"reduce\",\"domain\":\"NCCL\","
                                "\"start\":3,\"end\":4}\n");
    b.len = 0;
    kr_inject_totals t = {.kernels = 25, .memcpys = 2, .memsets = 1, .ranges = 6, .dropped = 0,
                          .buffers = 3, .end_ns = 99};
    kr_inject_line_footer(&b, &t);
    CHECK_STR(kr_jbuf_text(&b), "{\"type\":\"footer\",\"kernels\":25,\"memcpys\":2,\"memsets\":1,"
                                "\"ranges\":6,\"dropped\":0,\"buffers\":3,\"end_ns\":99}\n");
    b.len = 0;
    t.alternate = 1;
    t.alternate_ranges = 10;
    t.switches_on = 4;
    t.switches_off = 5;
    t.switch_on_ns = 12345;
    t.switch_off_ns = 678;
    kr_inject_line_footer(&b, &t);
    CHECK_STR(kr_jbuf_text(&b), "{\"type\":\"footer\",\"kernels\":25,\"memcpys\":2,\"memsets\":1,"
                                "\"ranges\":6,\"dropped\":0,\"buffers\":3,\"end_ns\":99,"
                                "\"alternate_ranges\":10,\"switches_on\":4,\"switches_off\":5,"
                                "\"switch_on_ns\":12345,\"switch_off_ns\":678}\n");
    kr_jbuf_free(&b);
}

/* ---- the built library ---- */

static char lib_path[4096];
static char tmpdir[256];

static int find_library(void) {
    const char *env = getenv("KREACH_INJECT_LIB");
    if (env && *env) {
        snprintf(lib_path, sizeof lib_path, "%s", env);
        return 0;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = 0;
    snprintf(lib_path, sizeof lib_path, "%s/../libkreach_inject.so", dirname(exe));
    return 0;
}

/* The file's first 64 KiB, malloc'd (the caller frees it), or NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 16);
    size_t n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
    if (buf)
        buf[n] = 0;
    fclose(f);
    return buf;
}

/* KREACH_TRACE_KINDS for the next run_child (NULL: unset). */
static const char *kinds_env;

/* Runs InitializeInjection in a child with `trace` as KREACH_TRACE_FILE (NULL: unset); returns the
 * child's wait status and leaves its stderr in <tmpdir>/stderr. */
static int run_child(int (*init)(void), const char *trace, pid_t *pid_out) {
    char errpath[512];
    snprintf(errpath, sizeof errpath, "%s/stderr", tmpdir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            dup2(fd, 2);
        if (trace)
            setenv("KREACH_TRACE_FILE", trace, 1);
        else
            unsetenv("KREACH_TRACE_FILE");
        unsetenv("KREACH_INJECT_VERBOSE");
        if (kinds_env)
            setenv("KREACH_TRACE_KINDS", kinds_env, 1);
        else
            unsetenv("KREACH_TRACE_KINDS");
        unsetenv("KREACH_TRACE_ALTERNATE"); /* the header checks expect none */
        int r = init();
        exit(r == 1 ? 0 : 3); /* exit, not _exit: the library's exit handler must run */
    }
    int status = -1;
    waitpid(pid, &status, 0);
    if (pid_out)
        *pid_out = pid;
    return status;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

static void library(void) {
    if (find_library()) {
        CHECK(!"cannot find the library");
        return;
    }
    void *h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", lib_path, dlerror());
        CHECK(h != NULL);
        return;
    }
    int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
    CHECK(init != NULL);
    CHECK(dlsym(h, "InitializeInjectionNvtx2") != NULL);
    /* the helpers stay inside */
    CHECK(dlsym(h, "kr_jbuf_json_string") == NULL);
    CHECK(dlsym(h, "kr_inject_demangle") == NULL);
    CHECK(dlsym(h, "kr_inject_line_kernel") == NULL);
    if (!init)
        return;

    snprintf(tmpdir, sizeof tmpdir, "%s/kr_inject_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char errpath[512], trace[512];
    snprintf(errpath, sizeof errpath, "%s/stderr", tmpdir);

    /* no KREACH_TRACE_FILE: one line, nothing written, the program goes on */
    int st = run_child(init, NULL, NULL);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *err = slurp(errpath);
    CHECK_STR(err, "kreach_inject: KREACH_TRACE_FILE is not set; not tracing\n");
    free(err);

    /* a directory that does not exist: one line naming the path, %p expanded */
    pid_t pid = 0;
    st = run_child(init, "/nonexistent-kreach-dir/trace.%p.jsonl", &pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    err = slurp(errpath);
    char want[256];
    snprintf(want, sizeof want, "cannot create the trace file /nonexistent-kreach-dir/trace.%ld.jsonl",
             (long)pid);
    CHECK_CONTAINS(err, want);
    CHECK_INT(count_lines(err), 1);
    free(err);

    /* an unknown kind in KREACH_TRACE_KINDS: one line naming it, no trace file, the program goes on */
    snprintf(trace, sizeof trace, "%s/kinds.jsonl", tmpdir);
    kinds_env = "kernel,kernal";
    st = run_child(init, trace, NULL);
    kinds_env = NULL;
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    err = slurp(errpath);
    CHECK_STR(err, "kreach_inject: KREACH_TRACE_KINDS=kernel,kernal: unknown kind 'kernal' (kinds: "
                   "kernel, memcpy, memset, marker, all); not tracing\n");
    free(err);
    CHECK(access(trace, F_OK) != 0);

    /* a writable path: without a GPU driver CUPTI fails, says so and the file is removed; with
     * one (the GPU machine runs this test too), the trace of a process with no CUDA work is a
     * header and a footer */
    snprintf(trace, sizeof trace, "%s/trace.jsonl", tmpdir);
    st = run_child(init, trace, &pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    err = slurp(errpath);
    char *t = slurp(trace);
    if (t) {
        snprintf(want, sizeof want, "{\"type\":\"header\",\"version\":1,\"pid\":%ld,", (long)pid);
        CHECK(strncmp(t, want, strlen(want)) == 0);
        CHECK_CONTAINS(t, "\n{\"type\":\"footer\",\"kernels\":0,\"memcpys\":0,\"memsets\":0,\"ranges\":0,\"dropped\":0,");
        CHECK_INT(count_lines(t), 2);
        CHECK_STR(err, "");
        printf("CUPTI started here: the trace has a header and a footer\n");
    } else {
        CHECK_CONTAINS(err, "kreach_inject: ");
        CHECK_CONTAINS(err, "kreach_inject: not tracing\n");
        printf("CUPTI did not start here (no GPU driver?): %s", err ? err : "(no message)\n");
    }
    free(err);
    free(t);
    unlink(trace);
    unlink(errpath);
    rmdir(tmpdir);
}

/* ---- the guard's look at its own process (kr_guard_os.c): a thread left running, a child ---- */

static int release_fd[2];

static void *parked(void *arg) {
    (void)arg;
    char c;
    while (read(release_fd[0], &c, 1) < 0 && errno == EINTR) {}
    return NULL;
}

static void guard_os(void) {
    int task = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(task >= 0);
    kr_tids before = {0}, now = {0};
    CHECK_INT(kr_guard_tids(task, &before), 0);
    CHECK(before.n >= 1);
    CHECK_INT(kr_guard_tids(task, &now), 0);
    CHECK_INT(kr_guard_new_tids(&before, &now), 0);
    /* a thread started and still running is new; once it has ended, it is not */
    CHECK_INT(pipe(release_fd), 0);
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, parked, NULL), 0);
    CHECK_INT(kr_guard_tids(task, &now), 0);
    CHECK_INT(now.n, before.n + 1);
    CHECK_INT(kr_guard_new_tids(&before, &now), 1);
    CHECK_INT(write(release_fd[1], "x", 1), 1);
    pthread_join(th, NULL);
    CHECK_INT(kr_guard_tids(task, &now), 0);
    CHECK_INT(kr_guard_new_tids(&before, &now), 0);
    close(release_fd[0]);
    close(release_fd[1]);

    /* a child: running, then ended and not yet waited for, then gone */
    CHECK_INT(kr_guard_has_child(), 0);
    pid_t c = fork();
    if (c == 0) {
        pause();
        _exit(0);
    }
    CHECK(c > 0);
    CHECK_INT(kr_guard_has_child(), 1);
    kill(c, SIGKILL);
    usleep(100000);
    CHECK_INT(kr_guard_has_child(), 1); /* a zombie still counts */
    waitpid(c, NULL, 0);
    CHECK_INT(kr_guard_has_child(), 0);

    /* a double fork whose middle process is waited for: with the subreaper set, as the guard
     * sets it, the grandchild is this process's child (without it, init's) */
    int sync_fd[2];
    CHECK_INT(pipe(sync_fd), 0);
    CHECK_INT(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
    c = fork();
    if (c == 0) {
        pid_t g = fork();
        if (g == 0) {
            close(sync_fd[1]);
            char ch;
            (void)!read(sync_fd[0], &ch, 1); /* ends when the test closes the pipe */
            _exit(0);
        }
        _exit(0);
    }
    close(sync_fd[0]);
    waitpid(c, NULL, 0);
    usleep(100000);
    CHECK_INT(kr_guard_has_child(), 1);
    close(sync_fd[1]);
    while (waitpid(-1, NULL, 0) > 0) {}
    CHECK_INT(kr_guard_has_child(), 0);
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    kr_guard_tids_free(&before);
    kr_guard_tids_free(&now);
    close(task);
}

int main(void) {
    guard_os();
    escaping();
    names();
    kinds();
    records();
    library();
    return kr_test_done("test_inject");
}
