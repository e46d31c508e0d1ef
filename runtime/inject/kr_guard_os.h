/* kr_guard_os.h: what the guard (kr_guard.c) asks of the process, apart from CUDA: its threads
 * (from /proc/self/task, a descriptor opened before the worker's seal) and whether it has a child.
 * Runtime layer; no CUDA, no CUPTI, so tests/c/test_inject.c compiles it directly. */
#ifndef KR_GUARD_OS_H
#define KR_GUARD_OS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct kr_tids {
    pid_t *v; /* sorted */
    size_t n, cap;
} kr_tids;

/* The process's threads now, read from task_fd (an open /proc/self/task), sorted into *t.
 * 0, or -1 with errno. */
int kr_guard_tids(int task_fd, kr_tids *t);
/* The threads in now that are not in before. */
size_t kr_guard_new_tids(const kr_tids *before, const kr_tids *now);
void kr_guard_tids_free(kr_tids *t);
/* 1 when this process has a child (running, stopped, or ended and not yet waited for), else 0.
 * With PR_SET_CHILD_SUBREAPER set, what a child leaves behind (a double fork) becomes a child. */
int kr_guard_has_child(void);

#endif
