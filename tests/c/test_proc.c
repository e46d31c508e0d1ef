/* test_proc.c: worker processes: lines in order, standard error kept apart, time-outs, kills,
 * exit statuses and signals; under a reaper (this binary itself, as kreach is), a process the
 * worker leaves behind in a session of its own ends with it. Needs no GPU (the workers are sh). */
#define _GNU_SOURCE
#include "kr_proc.h"
#include "kr_test.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char reaper_path[4096];

static kr_proc *sh_opts(const char *script, const char *reaper) {
    const char *argv[] = {"sh", "-c", script, NULL};
    kr_proc_opts o = {.argv = argv, .reaper = reaper};
    char err[256];
    kr_proc *p = kr_proc_start(&o, err, sizeof err);
    if (!p) fprintf(stderr, "spawn: %s\n", err);
    return p;
}

static kr_proc *sh(const char *script) { return sh_opts(script, NULL); }

/* whether process pid is gone (not even a zombie of ours), waiting up to 5 s */
static int gone(long pid) {
    for (int i = 0; i < 500; i++) {
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* a worker that leaves a process in a session of its own holding its standard output, prints
 * that process's pid as "daemon <pid>", then runs `rest` */
#define DAEMON "setsid sh -c 'echo daemon $$; exec sleep 1000' & "

static long daemon_pid(kr_proc *p) {
    const char *l;
    size_t n;
    long pid = 0;
    if (kr_proc_read_line(p, 5000, &l, &n) == 1) sscanf(l, "daemon %ld", &pid);
    CHECK(pid > 0);
    return pid;
}

static void reaper_tests(void) {
    const char *l;
    size_t n;
    int code;
    /* without a reaper (the control): the worker exits, but its output does not end, since
     * the process it left holds it, and that process lives on */
    kr_proc *p = sh_opts(DAEMON "sleep 0.2; echo done; exit 5", NULL);
    long d = daemon_pid(p);
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 1); CHECK_STR(l, "done");
    CHECK_INT(kr_proc_read_line(p, 500, &l, &n), -1);
    CHECK(d > 0 && kill((pid_t)d, 0) == 0); /* alive */
    if (d > 0) kill((pid_t)d, SIGKILL);
    kr_proc_free(p);

    /* under the reaper: the output ends, the worker's status is its own, the process is gone */
    p = sh_opts(DAEMON "sleep 0.2; echo done; exit 5", reaper_path);
    d = daemon_pid(p);
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 1); CHECK_STR(l, "done");
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 0);
    CHECK_INT(kr_proc_wait(p, &code), KR_PROC_EXITED); CHECK_INT(code, 5);
    CHECK(gone(d));
    kr_proc_free(p);

    /* killed while it runs: the worker, what is in its group and what left it all end */
    p = sh_opts(DAEMON "sleep 1000 & sleep 0.2; echo started; sleep 1000", reaper_path);
    d = daemon_pid(p);
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 1); CHECK_STR(l, "started");
    CHECK_INT(kr_proc_read_line(p, 200, &l, &n), -1);
    kr_proc_kill(p);
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 0);
    CHECK_INT(kr_proc_wait(p, &code), KR_PROC_SIGNALED); CHECK_INT(code, SIGKILL);
    CHECK(gone(d));
    kr_proc_free(p);

    /* a crash is the worker's signal; a program that cannot start is 127, with why */
    p = sh_opts("echo about to crash >&2; kill -SEGV $$", reaper_path);
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 0);
    CHECK_INT(kr_proc_wait(p, &code), KR_PROC_SIGNALED); CHECK_INT(code, SIGSEGV);
    CHECK_CONTAINS(kr_proc_stderr(p, &n), "about to crash");
    kr_proc_free(p);
    const char *bad[] = {"/nonexistent/kreach-worker", NULL};
    kr_proc_opts bo = {.argv = bad, .reaper = reaper_path};
    char err[256];
    p = kr_proc_start(&bo, err, sizeof err);
    CHECK(p != NULL);
    if (p) {
        CHECK_INT(kr_proc_wait(p, &code), KR_PROC_EXITED); CHECK_INT(code, 127);
        CHECK_CONTAINS(kr_proc_stderr(p, &n), "cannot start /nonexistent/kreach-worker");
        kr_proc_free(p);
    }

    /* the reaper's parent dies without freeing the worker: the reaper ends it all */
    int pp[2];
    CHECK(pipe(pp) == 0);
    pid_t c = fork();
    if (c == 0) {
        close(pp[0]);
        kr_proc *q = sh_opts(DAEMON "sleep 1000", reaper_path);
        long qd = q ? daemon_pid(q) : 0;
        dprintf(pp[1], "%ld\n", qd);
        _exit(0);
    }
    close(pp[1]);
    char buf[64] = {0};
    ssize_t r = read(pp[0], buf, sizeof buf - 1);
    close(pp[0]);
    d = r > 0 ? strtol(buf, NULL, 10) : 0;
    CHECK(d > 0);
    waitpid(c, NULL, 0);
    CHECK(d > 0 && gone(d));
}


int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], KR_PROC_REAPER_ARG)) return kr_proc_reaper_main(argc - 2, argv + 2);
    ssize_t rl = readlink("/proc/self/exe", reaper_path, sizeof reaper_path - 1);
    if (rl <= 0) { fprintf(stderr, "cannot read /proc/self/exe\n"); return 1; }
    reaper_path[rl] = 0;
    const char *l;
    size_t n;
    int code;

    /* lines in order, an unended last line, standard error separate */
    kr_proc *p = sh("echo one; echo two >&2; printf 'three\\nfour'");
    CHECK(p != NULL);
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 1); CHECK_STR(l, "one");
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 1); CHECK_STR(l, "three");
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 1); CHECK_STR(l, "four");
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 0);
    CHECK_INT(kr_proc_wait(p, &code), KR_PROC_EXITED); CHECK_INT(code, 0);
    CHECK_CONTAINS(kr_proc_stderr(p, &n), "two");
    kr_proc_free(p);

    /* an exit status */
    p = sh("exit 7");
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 0);
    CHECK_INT(kr_proc_wait(p, &code), KR_PROC_EXITED); CHECK_INT(code, 7);
    kr_proc_free(p);

    /* a worker that hangs: the read times out, the kill ends it and what it started */
    p = sh("echo started; sleep 1000 & sleep 1000");
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 1); CHECK_STR(l, "started");
    CHECK_INT(kr_proc_read_line(p, 200, &l, &n), -1);
    kr_proc_kill(p);
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 0); /* the pipe closes: the whole group died */
    CHECK_INT(kr_proc_wait(p, &code), KR_PROC_SIGNALED); CHECK_INT(code, SIGKILL);
    kr_proc_free(p);

    /* a crash */
    p = sh("echo about to crash >&2; kill -SEGV $$");
    CHECK_INT(kr_proc_read_line(p, 5000, &l, &n), 0);
    CHECK_INT(kr_proc_wait(p, &code), KR_PROC_SIGNALED); CHECK_INT(code, SIGSEGV);
    CHECK_CONTAINS(kr_proc_stderr(p, &n), "about to crash");
    kr_proc_free(p);

    /* a lot of output on both pipes, and a worker freed while still running */
    p = sh("i=0; while [ $i -lt 20000 ]; do echo line$i; echo err$i >&2; i=$((i+1)); done");
    int lines = 0;
    while (kr_proc_read_line(p, 10000, &l, &n) == 1) lines++;
    CHECK_INT(lines, 20000);
    CHECK_INT(kr_proc_wait(p, &code), KR_PROC_EXITED);
    CHECK(n <= 64 * 1024);
    CHECK_CONTAINS(kr_proc_stderr(p, &n), "err19999");
    kr_proc_free(p);
    kr_proc_free(sh("sleep 1000"));

    /* a program that does not exist */
    const char *bad[] = {"/nonexistent/kreach-worker", NULL};
    char err[256];
    CHECK(kr_proc_spawn(bad, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "No such file");

    reaper_tests();
    return kr_test_done("proc");
}
