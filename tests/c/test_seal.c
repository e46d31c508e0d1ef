/* test_seal.c: the sealed worker's mechanism, without a GPU. A forked child seals itself with
 * Landlock and finds /etc/passwd, its parent's /proc/<pid>/environ (which holds a planted
 * secret) and writes outside its directory denied, while its directory, the toolkit's headers
 * and NVRTC still work; NVRTC itself, asked to #include the parent's environment, gets
 * "Permission denied" (the seal holds with no source check in front of it). Also: RLIMIT_DATA,
 * the parent watch (a worker ends when its pipe closes, and when its parent is killed), an
 * environment given explicitly, and a 64 MiB line read in linear time (a longer one refused).
 * Landlock's checks are skipped, and said so, where the kernel has none. */
#define _GNU_SOURCE
#include "kr_context.h"
#include "kr_nvrtc.h"
#include "kr_proc.h"
#include "kr_seal.h"
#include "kr_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SECRET "kreach-planted-secret-7f3a"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* errno of open(path, flags), 0 when it opened */
static int open_errno(const char *path, int flags) {
    int fd = open(path, flags | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    return errno;
}

static const char *toolkit(void) {
    const char *c[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    static char buf[PATH_MAX];
    for (int i = 0; i < 3; i++) {
        struct stat st;
        if (!c[i] || !*c[i]) continue;
        snprintf(buf, sizeof buf, "%s/include", c[i]);
        if (stat(buf, &st) == 0) return c[i];
    }
    return "/usr/local/cuda";
}

/* The sealed child: its checks count in its own kr_test counters; the exit status is the
 * number of failures. */
static int sealed_child(const char *dir, int abi) {
    char err[512], nvrtc_dir[PATH_MAX], path[PATH_MAX + 64];
    CHECK_INT(kr_seal_preload_nvrtc_builtins(err, sizeof err), 0);
    CHECK_INT(kr_seal_nvrtc_dir(nvrtc_dir, sizeof nvrtc_dir), 0);
    kr_seal_rule rules[] = {{toolkit(), KR_SEAL_READ}, {nvrtc_dir, KR_SEAL_READ},
                            {dir, KR_SEAL_WRITE}, {"/dev/null", KR_SEAL_DEVICE},
                            {"/nonexistent/kreach", KR_SEAL_READ}};
    int skipped = -1;
    int used = kr_seal_landlock(rules, 5, &skipped, err, sizeof err);
    if (used < 1) fprintf(stderr, "seal: %s\n", err);
    CHECK_INT(used, abi);
    CHECK_INT(skipped, 1);

    /* reads outside the rules are denied; stat still works (Landlock does not govern it) */
    CHECK_INT(open_errno("/etc/passwd", O_RDONLY), EACCES);
    snprintf(path, sizeof path, "/proc/%d/environ", (int)getppid());
    CHECK_INT(open_errno(path, O_RDONLY), EACCES);
    CHECK_INT(open_errno("/proc/self/environ", O_RDONLY), EACCES);
    snprintf(path, sizeof path, "/proc/self/root/etc/passwd");
    CHECK_INT(open_errno(path, O_RDONLY), EACCES);
    /* writes outside the private directory are denied, inside they work */
    CHECK_INT(open_errno("/tmp/kreach-seal-test-outside", O_WRONLY | O_CREAT), EACCES);
    snprintf(path, sizeof path, "%s/../kreach-seal-escape", dir);
    CHECK_INT(open_errno(path, O_WRONLY | O_CREAT), EACCES);
    snprintf(path, sizeof path, "%s/inside", dir);
    CHECK_INT(open_errno(path, O_WRONLY | O_CREAT | O_TRUNC), 0);
    CHECK_INT(unlink(path), 0);
    snprintf(path, sizeof path, "%s/sub", dir);
    CHECK_INT(mkdir(path, 0700), 0);
    CHECK_INT(rmdir(path), 0);
    CHECK_INT(open_errno("/dev/null", O_WRONLY), 0);
    /* the toolkit reads */
    snprintf(path, sizeof path, "%s/include/cuda_fp16.h", toolkit());
    CHECK_INT(open_errno(path, O_RDONLY), 0);
    if (abi >= 4) { /* no TCP */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        CHECK(s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) != 0 && errno == EACCES);
        if (s >= 0) close(s);
    }
    if (abi >= 6) { /* no signals out of the domain */
        CHECK(kill(getppid(), 0) != 0 && errno == EPERM);
    }

    /* NVRTC, with no source check in front: the toolkit's headers compile, the parent's
     * environment and /etc/passwd cannot be included */
    kr_context *ctx = kr_context_new(-1);
    kr_build_opts o = {0};
    o.name = "sealed.cu";
    o.arch = "sm_90";
    o.no_cache = 1;
    kr_program *p = NULL;
    o.source = "#include <cuda_fp16.h>\nextern \"C\" __global__ void f(__half *y) { y[0] = y[0]; }\n";
    kr_status st = kr_nvrtc_build(ctx, &o, &p);
    if (st != KR_OK) fprintf(stderr, "toolkit header under the seal: %s\n", kr_context_errmsg(ctx));
    CHECK_INT(st, KR_OK);
    kr_program_free(p);
    char src[256];
    snprintf(src, sizeof src, "#include \"/proc/%d/environ\"\n#include \"/etc/passwd\"\n",
             (int)getppid());
    o.source = src;
    p = NULL;
    CHECK(kr_nvrtc_build(ctx, &o, &p) != KR_OK);
    /* the seal denies it (open fails with EACCES), and the compile's message does not say so:
     * a failed #include reads the same whether the file is missing or denied (no existence
     * probe through the log) */
    CHECK(open_errno("/etc/passwd", O_RDONLY) == EACCES);
    CHECK_CONTAINS(kr_context_errmsg(ctx), "cannot open source file");
    CHECK(strstr(kr_context_errmsg(ctx), "Permission denied") == NULL);
    CHECK(strstr(kr_context_errmsg(ctx), SECRET) == NULL);
    CHECK(strstr(kr_context_errmsg(ctx), "root:") == NULL);
    kr_program_free(p);
    kr_context_release(ctx);
    return kr_test_failures;
}

static int wait_exit(pid_t pid, double limit_s, int *status) {
    double t0 = now_s();
    while (now_s() - t0 < limit_s) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) return 1;
        usleep(20000);
    }
    return 0;
}

/* the worker of the watch tests: watch fd 0, say so, wait to be ended */
static int watch_child(void) {
    char err[256];
    if (kr_seal_watch_parent(0, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    printf("watching\n");
    fflush(stdout);
    for (;;) pause();
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "watch-child")) return watch_child();
    setenv("KREACH_TEST_SECRET", SECRET, 1);
    char why[256] = "";
    int abi = kr_seal_landlock_abi(why, sizeof why);

    /* ---- Landlock ---- */
    if (abi < 1) {
        printf("seal: Landlock unavailable here (%s): its checks are skipped\n", why);
    } else {
        char dir[] = "/tmp/kreach-seal-test-XXXXXX";
        char err[256];
        CHECK_INT(kr_seal_mkdtemp(dir, err, sizeof err), 0);
        fflush(NULL);
        pid_t c = fork();
        if (c == 0) _exit(sealed_child(dir, abi));
        int st = 0;
        CHECK_INT(waitpid(c, &st, 0), c);
        CHECK(WIFEXITED(st));
        CHECK_INT(WEXITSTATUS(st), 0);
        /* the parent is not sealed by its child */
        CHECK_INT(open_errno("/etc/passwd", O_RDONLY), 0);
        rmdir(dir);
    }
    char rp[PATH_MAX], err[PATH_MAX + 64];
    CHECK_INT(kr_seal_realpath("/tmp/../tmp", rp, sizeof rp, err, sizeof err), 0);
    CHECK_STR(rp, "/tmp");
    CHECK_INT(kr_seal_realpath("/nonexistent/x", rp, sizeof rp, err, sizeof err), -1);

    /* ---- RLIMIT_DATA: a limit above the data the process has already; a large malloc fails ---- */
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        long vm_kb = 0;
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "VmData:", 7)) vm_kb = atol(line + 7);
        if (f) fclose(f);
        uint64_t limit = (uint64_t)vm_kb * 1024 + (256ull << 20);
        if (kr_seal_limit_memory(limit, err, sizeof err) != 0) _exit(10);
        if (kr_seal_memory_limit() != limit) _exit(11);
        void *big = malloc(1ull << 30);
        if (big) _exit(12);
        void *small = malloc(16 << 20);
        if (!small) _exit(13);
        _exit(0);
    }
    int st = 0;
    waitpid(c, &st, 0);
    CHECK(WIFEXITED(st));
    CHECK_INT(WEXITSTATUS(st), 0);
    CHECK(kr_seal_host_memory() > (64ull << 20));

    /* ---- the parent watch: the pipe closes, the worker ends (its parent lives on) ---- */
    int pw[2];
    CHECK_INT(pipe2(pw, O_CLOEXEC), 0);
    fflush(NULL);
    c = fork();
    if (c == 0) {
        dup2(pw[0], 0);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execl("/proc/self/exe", argv[0], "watch-child", (char *)NULL);
        _exit(127);
    }
    close(pw[0]);
    usleep(300000);
    CHECK_INT(waitpid(c, &st, WNOHANG), 0); /* still running */
    double t0 = now_s();
    close(pw[1]);
    CHECK(wait_exit(c, 10, &st));
    CHECK(now_s() - t0 < 5); /* the watch reads EOF at once; 5 s is for a loaded machine */

    /* ---- the parent watch: the parent is killed (SIGKILL), its worker ends ---- */
    CHECK_INT(prctl(PR_SET_CHILD_SUBREAPER, 1), 0); /* the orphan comes to us to be reaped */
    int report[2];
    CHECK_INT(pipe(report), 0);
    fflush(NULL);
    pid_t parent = fork();
    if (parent == 0) {
        close(report[0]);
        const char *wargv[] = {"/proc/self/exe", "watch-child", NULL};
        kr_proc_opts o = {.argv = wargv, .watch = 1};
        kr_proc *w = kr_proc_start(&o, err, sizeof err);
        const char *l;
        size_t n;
        if (!w || kr_proc_read_line(w, 10000, &l, &n) != 1) _exit(1);
        pid_t wp = kr_proc_pid(w);
        if (write(report[1], &wp, sizeof wp) != sizeof wp) _exit(1);
        for (;;) pause(); /* holds the pipe until it is killed */
    }
    close(report[1]);
    pid_t wpid = 0;
    CHECK_INT(read(report[0], &wpid, sizeof wpid), (long)sizeof wpid);
    close(report[0]);
    CHECK(wpid > 0);
    CHECK_INT(kill(wpid, 0), 0); /* the worker runs */
    t0 = now_s();
    kill(parent, SIGKILL);
    waitpid(parent, &st, 0);
    if (wpid > 0) {
        int ended = wait_exit(wpid, 10, &st);
        CHECK(ended);
        if (!ended) kill(wpid, SIGKILL), waitpid(wpid, &st, 0);
        CHECK(now_s() - t0 < 5);
    }

    /* ---- an environment given explicitly: nothing else passes ---- */
    const char *sh[] = {"sh", "-c", "env", NULL};
    const char *env[] = {"PATH=/usr/bin:/bin", "KREACH_ONLY=1", NULL};
    kr_proc_opts eo = {sh, env, 0, 0};
    kr_proc *p = kr_proc_start(&eo, err, sizeof err);
    CHECK(p != NULL);
    const char *l;
    size_t n;
    int only = 0, secret = 0;
    while (p && kr_proc_read_line(p, 10000, &l, &n) == 1) {
        if (!strcmp(l, "KREACH_ONLY=1")) only = 1;
        if (strstr(l, SECRET)) secret = 1;
    }
    CHECK(only && !secret);
    kr_proc_free(p);
    /* ... and without one, the parent's passes (so the check above can fail) */
    p = kr_proc_spawn(sh, err, sizeof err);
    secret = 0;
    while (p && kr_proc_read_line(p, 10000, &l, &n) == 1)
        if (strstr(l, SECRET)) secret = 1;
    CHECK(secret);
    kr_proc_free(p);

    /* ---- a 64 MiB line: read whole, each byte searched once; a longer one is refused ---- */
    const char *big[] = {"sh", "-c", "head -c 67108864 /dev/zero | tr '\\0' a; echo; echo after", NULL};
    kr_proc_opts bo = {big, NULL, 0, (size_t)80 << 20};
    p = kr_proc_start(&bo, err, sizeof err);
    t0 = now_s();
    CHECK_INT(kr_proc_read_line(p, 60000, &l, &n), 1);
    CHECK_INT(n, 64 << 20);
    CHECK(kr_proc_scanned(p) <= ((size_t)64 << 20) + 1);
    CHECK_INT(kr_proc_read_line(p, 60000, &l, &n), 1);
    CHECK_STR(l, "after");
    printf("a 64 MiB line read in %.2f s\n", now_s() - t0);
    kr_proc_free(p);
    const char *huge[] = {"sh", "-c", "head -c 268435456 /dev/zero | tr '\\0' a; echo", NULL};
    p = kr_proc_spawn(huge, err, sizeof err); /* the default limit: 64 MiB */
    CHECK_INT(kr_proc_read_line(p, 60000, &l, &n), -2);
    CHECK_INT(kr_proc_read_line(p, 60000, &l, &n), -2);
    kr_proc_kill(p);
    CHECK_INT(kr_proc_wait(p, &st), KR_PROC_SIGNALED);
    kr_proc_free(p);
    return kr_test_done("seal");
}
