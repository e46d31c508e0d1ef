/* inject_check.c: the injection library's GPU test (ctest kreach.inject.gpu). Runs inject_target
 * under libkreach_inject.so, the way `kreach profile` does, and checks the JSON Lines trace against
 * what the target did (inject_expect.h). Exits 77 when the target finds no GPU.
 *   inject_check <libkreach_inject.so> <inject_target> */
#define _GNU_SOURCE
#include "inject_expect.h"
#include "kr_test.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *lib, *target;
static const char *alternate; /* KREACH_TRACE_ALTERNATE for the next run_target, or NULL */
static char dir[256];

/* ---- a strict JSON validator, so that every line is known to parse ---- */

static const char *ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return p;
}

static const char *value(const char *p, int depth);

static const char *string(const char *p) {
    if (*p++ != '"')
        return NULL;
    for (;;) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c < 0x20)
            return NULL;
        if (c == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i]))
                        return NULL;
                p += 5;
            } else if (*p && strchr("\"\\/bfnrt", *p)) {
                p++;
            } else {
                return NULL;
            }
        } else {
            p++;
        }
    }
}

static const char *number(const char *p) {
    const char *s = p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (isdigit((unsigned char)*p))
        while (isdigit((unsigned char)*p))
            p++;
    else
        return NULL;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return p > s ? p : NULL;
}

static const char *value(const char *p, int depth) {
    if (depth > 32)
        return NULL;
    p = ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (obj) {
                p = string(ws(p));
                if (!p)
                    return NULL;
                p = ws(p);
                if (*p++ != ':')
                    return NULL;
            }
            p = value(p, depth + 1);
            if (!p)
                return NULL;
            p = ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    if (*p == '"')
        return string(p);
    if (!strncmp(p, "true", 4))
        return p + 4;
    if (!strncmp(p, "false", 5))
        return p + 5;
    if (!strncmp(p, "null", 4))
        return p + 4;
    return number(p);
}

static int valid_object(const char *line) {
    if (*line != '{')
        return 0;
    const char *end = value(line, 0);
    return end && *ws(end) == 0;
}

/* ---- fields of our own lines (keys are unique within a line, names escaped) ---- */

static const char *key(const char *line, const char *k) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", k);
    const char *p = strstr(line, pat);
    return p ? p + strlen(pat) : NULL;
}

static int has(const char *line, const char *k) { return key(line, k) != NULL; }

static uint64_t num(const char *line, const char *k) {
    const char *p = key(line, k);
    return p ? strtoull(p, NULL, 10) : UINT64_MAX;
}

/* The string value of k, unescaped (\" and \\ only: the test's names need no more). */
static const char *str(const char *line, const char *k) {
    static char buf[2][512];
    static int which;
    char *out = buf[which ^= 1];
    const char *p = key(line, k);
    size_t n = 0;
    out[0] = 0;
    if (!p || *p != '"')
        return out;
    for (p++; *p && *p != '"' && n < sizeof buf[0] - 1; p++) {
        if (*p == '\\' && p[1])
            p++;
        out[n++] = *p;
    }
    out[n] = 0;
    return out;
}

/* ---- running the target ---- */

/* Runs the target with the injection environment (trace NULL: KREACH_TRACE_FILE unset); returns
 * its exit status (-1 when it died) and its pid; its stderr goes to <dir>/<tag>.err. */
static int run_target(const char *tag, const char *trace, const char *arg, pid_t *pid_out) {
    char errpath[512];
    snprintf(errpath, sizeof errpath, "%s/%s.err", dir, tag);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            dup2(fd, 2);
        setenv("CUDA_INJECTION64_PATH", lib, 1);
        setenv("NVTX_INJECTION64_PATH", lib, 1);
        if (trace)
            setenv("KREACH_TRACE_FILE", trace, 1);
        else
            unsetenv("KREACH_TRACE_FILE");
        unsetenv("KREACH_INJECT_VERBOSE");
        unsetenv("KREACH_INJECT_BUFFER_MB");
        unsetenv("KREACH_TRACE_KINDS"); /* every kind: the checks expect all four */
        if (alternate)
            setenv("KREACH_TRACE_ALTERNATE", alternate, 1);
        else
            unsetenv("KREACH_TRACE_ALTERNATE");
        execl(target, target, arg, (char *)NULL);
        perror(target);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    *pid_out = pid;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    size_t r;
    while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap)
            s = realloc(s, cap *= 2);
    }
    fclose(f);
    if (s)
        s[n] = 0;
    if (len)
        *len = n;
    return s;
}

static void show_stderr(const char *tag) {
    char errpath[512];
    snprintf(errpath, sizeof errpath, "%s/%s.err", dir, tag);
    char *e = slurp(errpath, NULL);
    fprintf(stderr, "---- stderr of the target (%s) ----\n%s----\n", tag, e ? e : "(none)\n");
    free(e);
}

/* ---- the trace ---- */

typedef struct { uint64_t start, end; } span;

/* alternating: the run had KREACH_TRACE_ALTERNATE=step, so kernels, memcpys and memsets are traced
 * from the 1st, 3rd and 5th "step" push to the next push, ranges always. The target's copy and
 * memset come before the first step (traced: nothing is switched before it) and its last copy
 * after the 5th (traced), so those counts stay exact. */
static void check_trace(const char *tag, const char *path, pid_t pid, int alternating) {
    int failures_before = kr_test_failures;
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "%s: no trace at %s\n", tag, path);
        CHECK(!"trace written");
        return;
    }
    CHECK(len > 0 && text[len - 1] == '\n');

    enum { MAXR = 64, MAXK = 256 };
    span steps[MAXR], outer = {0, 0};
    uint64_t kstart[MAXK];
    int n_steps = 0, n_outer = 0, n_ranges = 0, n_add = 0, n_scale = 0, n_kernels = 0;
    int n_memcpy = 0, n_memset = 0, htod = 0, dtoh = 0, memset_ok = 0, n_lines = 0;
    int header_first = 0, footer_last = 0, n_bad = 0;
    uint64_t start_ns = 0, min_start = UINT64_MAX, max_end = 0;
    char *header = NULL, *footer = NULL;

    for (char *line = text, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            break;
        *nl = 0;
        n_lines++;
        if (!valid_object(line)) {
            if (n_bad++ < 3)
                fprintf(stderr, "%s: not a JSON object: %s\n", tag, line);
            continue;
        }
        const char *type = str(line, "type");
        if (strcmp(type, "footer") && has(line, "start")) {
            uint64_t s = num(line, "start"), e = num(line, "end");
            if (s < min_start)
                min_start = s;
            if (e > max_end)
                max_end = e;
            CHECK(s > 0 && e >= s);
        }
        if (!strcmp(type, "header")) {
            header = line;
            header_first = n_lines == 1;
            CHECK_INT(num(line, "version"), 1);
            CHECK_INT(num(line, "pid"), pid);
            CHECK(num(line, "cupti_version") > 0 && num(line, "cupti_version") != UINT64_MAX);
            start_ns = num(line, "start_ns");
        } else if (!strcmp(type, "kernel")) {
            const char *name = str(line, "name"), *mangled = str(line, "mangled");
            if (!strcmp(name, INJ_ADD_NAME)) {
                n_add++;
                CHECK_STR(mangled, INJ_ADD_MANGLED);
            } else if (!strcmp(name, INJ_SCALE_NAME)) {
                n_scale++;
                CHECK_STR(mangled, INJ_SCALE_MANGLED);
            } else {
                fprintf(stderr, "%s: unexpected kernel: %s\n", tag, line);
            }
            CHECK_CONTAINS(line, "\"grid\":[16,1,1],\"block\":[256,1,1],");
            CHECK(num(line, "registers") > 0 && num(line, "registers") < 256);
            CHECK(has(line, "device") && has(line, "context") && has(line, "stream"));
            CHECK(has(line, "static_shared") && has(line, "dynamic_shared"));
            CHECK(num(line, "correlation") > 0);
            if (n_kernels < MAXK)
                kstart[n_kernels] = num(line, "start");
            n_kernels++;
        } else if (!strcmp(type, "memcpy")) {
            n_memcpy++;
            const char *kind = str(line, "copy_kind");
            uint64_t bytes = num(line, "bytes");
            htod += !strcmp(kind, "HtoD") && bytes == INJ_N * 4;
            dtoh += !strcmp(kind, "DtoH") && bytes == INJ_N * 4;
            CHECK(has(line, "device") && has(line, "stream") && has(line, "correlation"));
        } else if (!strcmp(type, "memset")) {
            n_memset++;
            memset_ok += num(line, "bytes") == INJ_N * 4;
            CHECK(has(line, "device") && has(line, "stream"));
        } else if (!strcmp(type, "range")) {
            n_ranges++;
            span sp = {num(line, "start"), num(line, "end")};
            CHECK(!has(line, "domain"));
            if (!strcmp(str(line, "name"), "step")) {
                if (n_steps < MAXR)
                    steps[n_steps] = sp;
                n_steps++;
            } else if (!strcmp(str(line, "name"), INJ_OUTER)) {
                outer = sp;
                n_outer++;
            } else {
                fprintf(stderr, "%s: unexpected range: %s\n", tag, line);
            }
        } else if (!strcmp(type, "footer")) {
            footer = line;
            footer_last = nl + 1 == text + len;
        } else {
            fprintf(stderr, "%s: unexpected record: %s\n", tag, line);
            CHECK(!"known record type");
        }
    }

    CHECK_INT(n_bad, 0);
    CHECK(header_first);
    CHECK(footer && footer_last);
    int traced_steps = alternating ? (INJ_STEPS + 1) / 2 : INJ_STEPS;
    CHECK_INT(n_add, traced_steps * INJ_ADD_PER_STEP);
    CHECK_INT(n_scale, traced_steps * INJ_SCALE_PER_STEP);
    CHECK_INT(n_kernels, n_add + n_scale);
    CHECK_INT(n_steps, INJ_STEPS);
    CHECK_INT(n_outer, 1);
    CHECK(htod >= 1);
    CHECK(dtoh >= 1);
    CHECK(memset_ok >= 1);
    if (alternating) {
        CHECK_INT(n_memcpy, 2);
        CHECK_INT(n_memset, 1);
    }
    if (header) {
        if (alternating)
            CHECK_STR(str(header, "alternate"), "step");
        else
            CHECK(!has(header, "alternate"));
    }
    CHECK(start_ns > 0 && start_ns <= min_start);
    if (footer) {
        CHECK_INT(num(footer, "kernels"), n_kernels);
        CHECK_INT(num(footer, "memcpys"), n_memcpy);
        CHECK_INT(num(footer, "memsets"), n_memset);
        CHECK_INT(num(footer, "ranges"), n_ranges);
        CHECK_INT(num(footer, "dropped"), 0);
        CHECK(num(footer, "buffers") >= 1 && num(footer, "buffers") != UINT64_MAX);
        CHECK(num(footer, "end_ns") >= max_end);
        if (alternating) {
            CHECK_INT(num(footer, "alternate_ranges"), INJ_STEPS);
            /* steps 2 and 4 switch off, 3 and 5 on (1 finds it on already) */
            CHECK_INT(num(footer, "switches_off"), INJ_STEPS / 2);
            CHECK_INT(num(footer, "switches_on"), (INJ_STEPS - 1) / 2);
            CHECK(num(footer, "switch_on_ns") > 0 && num(footer, "switch_off_ns") > 0);
        } else {
            CHECK(!has(footer, "alternate_ranges"));
        }
    }
    /* the target synchronises before each pop, so every kernel starts (and ends) in a step; when
     * alternating, in a traced one (ranges arrive in the order they end, the steps' order here) */
    int outside = 0, untraced = 0;
    for (int i = 0; i < n_kernels && i < MAXK; i++) {
        int in = -1;
        for (int r = 0; r < n_steps && r < MAXR; r++)
            if (kstart[i] >= steps[r].start && kstart[i] <= steps[r].end)
                in = r;
        if (in < 0 && outside++ < 3)
            fprintf(stderr, "%s: a kernel starting at %llu is in no step range\n", tag,
                    (unsigned long long)kstart[i]);
        if (alternating && in >= 0 && in % 2 && untraced++ < 3)
            fprintf(stderr, "%s: a kernel starting at %llu is in step %d, which is not traced\n",
                    tag, (unsigned long long)kstart[i], in + 1);
    }
    CHECK_INT(outside, 0);
    CHECK_INT(untraced, 0);
    for (int r = 0; r < n_steps && r < MAXR; r++)
        CHECK(steps[r].start >= outer.start && steps[r].end <= outer.end);

    if (kr_test_failures != failures_before) {
        fprintf(stderr, "---- %s: the first lines of %s ----\n", tag, path);
        char *again = slurp(path, NULL);
        int shown = 0;
        for (char *p = again; p && *p && shown < 12; shown++) {
            char *q = strchr(p, '\n');
            fprintf(stderr, "%.*s\n", q ? (int)(q - p) : (int)strlen(p), p);
            p = q ? q + 1 : p + strlen(p);
        }
        free(again);
        show_stderr(tag);
    } else {
        printf("%s: %d lines, %d kernels%s, %d memcpys, %d memsets, %d ranges: ok\n", tag,
               n_lines, n_kernels, alternating ? " (in the odd steps)" : "", n_memcpy, n_memset,
               n_ranges);
    }
    free(text);
}

static int stderr_contains(const char *tag, const char *needle) {
    char errpath[512];
    snprintf(errpath, sizeof errpath, "%s/%s.err", dir, tag);
    char *e = slurp(errpath, NULL);
    int r = e && strstr(e, needle);
    free(e);
    return r;
}

static int stderr_empty(const char *tag) {
    char errpath[512];
    snprintf(errpath, sizeof errpath, "%s/%s.err", dir, tag);
    struct stat st;
    return stat(errpath, &st) == 0 && st.st_size == 0;
}

/* the run's directory and its traces, removed (a failed run keeps them to look at) */
static void remove_dir(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: inject_check <libkreach_inject.so> <inject_target>\n");
        return 2;
    }
    lib = argv[1];
    target = argv[2];
    snprintf(dir, sizeof dir, "%s/kr_inject_check_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char a[512], b[512], alt[600];
    snprintf(a, sizeof a, "%s/a.jsonl", dir);
    snprintf(b, sizeof b, "%s/b.jsonl", dir);
    pid_t pid = 0;

    /* 1. the usual run, returning from main */
    int rc = run_target("main", a, NULL, &pid);
    if (rc == 77) {
        show_stderr("main");
        printf("inject_check: no GPU: skipped\n");
        remove_dir();
        return 77;
    }
    CHECK_INT(rc, 0);
    if (rc != 0)
        show_stderr("main");
    CHECK(stderr_empty("main"));
    check_trace("main", a, pid, 0);

    /* 2. exit() from another thread: the footer still comes */
    rc = run_target("thread", b, "thread", &pid);
    CHECK_INT(rc, 0);
    check_trace("thread", b, pid, 0);

    /* 3. the trace file exists already: kept as it was; this process's trace goes beside it */
    struct stat before, after;
    stat(a, &before);
    rc = run_target("exists", a, NULL, &pid);
    CHECK_INT(rc, 0);
    stat(a, &after);
    CHECK_INT(after.st_size, before.st_size);
    CHECK(stderr_contains("exists", "exists; this process"));
    snprintf(alt, sizeof alt, "%s.%ld", a, (long)pid);
    check_trace("exists", alt, pid, 0);

    /* 4. KREACH_TRACE_ALTERNATE=step: every other step traced */
    char c[512];
    snprintf(c, sizeof c, "%s/c.jsonl", dir);
    alternate = "step";
    rc = run_target("alternate", c, NULL, &pid);
    alternate = NULL;
    CHECK_INT(rc, 0);
    CHECK(stderr_empty("alternate"));
    check_trace("alternate", c, pid, 1);

    /* 5. no KREACH_TRACE_FILE: one line, and the program runs as usual */
    rc = run_target("unset", NULL, NULL, &pid);
    CHECK_INT(rc, 0);
    CHECK(stderr_contains("unset", "kreach_inject: KREACH_TRACE_FILE is not set; not tracing\n"));

    if (!kr_test_failures) {
        remove_dir();
    } else {
        fprintf(stderr, "inject_check: traces kept in %s\n", dir);
    }
    return kr_test_done("inject_check");
}
