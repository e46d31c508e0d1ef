/* kr_guard_os.c: the guard's look at its own process (kr_guard_os.h). */
#define _GNU_SOURCE
#include "kr_guard_os.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp_pid(const void *a, const void *b) {
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

int kr_guard_tids(int task_fd, kr_tids *t) {
    char buf[4096];
    t->n = 0;
    if (lseek(task_fd, 0, SEEK_SET) < 0)
        return -1;
    for (;;) {
        long got = syscall(SYS_getdents64, task_fd, buf, sizeof buf);
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        for (long off = 0; off < got;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_name[0] < '0' || d->d_name[0] > '9')
                continue;
            if (t->n == t->cap) {
                size_t c = t->cap ? t->cap * 2 : 64;
                pid_t *v = realloc(t->v, c * sizeof *v);
                if (!v) {
                    errno = ENOMEM;
                    return -1;
                }
                t->v = v;
                t->cap = c;
            }
            t->v[t->n++] = (pid_t)atol(d->d_name);
        }
    }
    qsort(t->v, t->n, sizeof *t->v, cmp_pid);
    return 0;
}

size_t kr_guard_new_tids(const kr_tids *before, const kr_tids *now) {
    size_t fresh = 0;
    for (size_t i = 0; i < now->n; i++)
        if (!before->n || !bsearch(&now->v[i], before->v, before->n, sizeof *before->v, cmp_pid))
            fresh++;
    return fresh;
}

void kr_guard_tids_free(kr_tids *t) {
    free(t->v);
    memset(t, 0, sizeof *t);
}

int kr_guard_has_child(void) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT) < 0)
        return errno == ECHILD ? 0 : 1;
    return 1;
}
