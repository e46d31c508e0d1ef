/* test_proc.c: worker processes: lines in order, standard error kept apart, time-outs, kills,
 * exit statuses and signals. Needs no GPU (the workers are sh). */
#include "kr_proc.h"
#include "kr_test.h"

#include <signal.h>

static kr_proc *sh(const char *script) {
    const char *argv[] = {"sh", "-c", script, NULL};
    char err[256];
    kr_proc *p = kr_proc_spawn(argv, err, sizeof err);
    if (!p) fprintf(stderr, "spawn: %s\n", err);
    return p;
}

int main(void) {
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
    return kr_test_done("proc");
}
