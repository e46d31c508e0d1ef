/* kr_proc.h: worker processes, for running untrusted candidates away from the harness.
 * Runtime layer (no Lua, no GPU). A worker is a child process whose standard output is read
 * line by line with a time limit, whose standard error is collected, and which can be killed;
 * its end is reported as an exit status, a signal, or a kill by the harness. */
#ifndef KR_PROC_H
#define KR_PROC_H

#include <stddef.h>
#include <sys/types.h>

typedef struct kr_proc kr_proc;

typedef enum { KR_PROC_RUNNING = 0, KR_PROC_EXITED, KR_PROC_SIGNALED } kr_proc_state;

/* The longest line kr_proc_read_line hands out by default. */
#define KR_PROC_MAX_LINE ((size_t)64 << 20)

typedef struct {
    const char *const *argv; /* argv[0] is looked up on PATH */
    const char *const *envp; /* the environment; NULL: this process's own */
    int watch;               /* standard input is a pipe whose other end this process holds
                                (close-on-exec, so no sibling inherits it) until kr_proc_free:
                                the worker reads end-of-file when its parent is gone */
    size_t max_line;         /* the longest line read_line accepts; 0: KR_PROC_MAX_LINE */
    int pass_stderr;         /* standard error is this process's own, written as it comes (not
                                collected: kr_proc_stderr is then empty) */
    int fd3;                 /* > 0: this process's descriptor, given to the program as its
                                descriptor 3 (a Landlock ruleset it applies to itself); 0: none */
    const char *reaper;      /* a program (an absolute path) that runs kr_proc_reaper_main when
                                its first argument is KR_PROC_REAPER_ARG: the worker runs under it,
                                and everything the worker starts, even in a session of its own,
                                ends when the worker does; NULL: the worker is started directly */
} kr_proc_opts;

/* The first argument that makes a program's main call kr_proc_reaper_main. */
#define KR_PROC_REAPER_ARG "__kreach-reaper"

/* Starts a worker in a process group of its own (so that a kill reaches everything it
 * started), standard input from /dev/null unless o->watch. Returns NULL with a message in err
 * on failure. The caller owns the result: kr_proc_free kills and reaps it if needed. */
kr_proc *kr_proc_start(const kr_proc_opts *o, char *err, size_t errlen);

/* kr_proc_start with argv alone: this process's environment, no watch pipe. */
kr_proc *kr_proc_spawn(const char *const *argv, char *err, size_t errlen);

/* Waits up to timeout_ms (< 0: forever) for one line of standard output. Returns 1 with the
 * line (without its newline) in *line, valid until the next call; 0 at the end of output; -1
 * on time-out; -2 when the line grew past the limit (KR_PROC_MAX_LINE or opts.max_line): the
 * worker broke the protocol, and the caller kills it. Standard error is collected meanwhile.
 * Each byte is searched for the newline once, so a long line costs linear time. */
int kr_proc_read_line(kr_proc *p, int timeout_ms, const char **line, size_t *len);

/* Writes len bytes to the worker's standard input (the watch pipe; opts.watch must have been
 * set). Returns 0, or -1 with errno (EPIPE when the worker is gone; EINVAL without a watch
 * pipe). A write blocks while the pipe is full: the worker is expected to read. */
int kr_proc_write(kr_proc *p, const void *buf, size_t len);

/* Kills the process group with SIGKILL; under a reaper, asks the reaper (SIGTERM), which kills
 * the worker and everything it started, and ends as the worker did. Either way the watch pipe
 * (opts.watch) is closed: a reaper ends everything when it sees that, and so does a worker that
 * watches the pipe, for a parent that may not signal it (sealed by Landlock after starting it,
 * with signals scoped). kr_proc_write then fails. */
void kr_proc_kill(kr_proc *p);

/* Waits for the process to end (after its output has ended or it was killed). */
kr_proc_state kr_proc_wait(kr_proc *p, int *code_or_signal);

/* What it wrote to standard error so far (at most the last 64 KiB). */
const char *kr_proc_stderr(kr_proc *p, size_t *len);
pid_t kr_proc_pid(const kr_proc *p);
/* Bytes of standard output searched for a line end so far: each byte at most once (the tests
 * check that a long line is read in linear time). */
size_t kr_proc_scanned(const kr_proc *p);

void kr_proc_free(kr_proc *p);

/* The reaper (kr_proc_opts.reaper): runs argv (argv[0] looked up on PATH) as a child in a
 * process group of its own, as the child subreaper of everything it starts, so that a process
 * the worker starts and leaves (a double fork, a session of its own) is re-parented here and
 * not to init. When the worker ends, when the reaper's parent dies (PR_SET_PDEATHSIG), when
 * the other end of a watch pipe on its standard input is closed, or on SIGTERM, SIGINT or SIGHUP, it kills its children with SIGKILL, round after round (children
 * of theirs are re-parented to it as they die), until it has none. Then it ends as the worker
 * did: its exit status, or the same signal (without a core file); 127 when the worker could
 * not be started. Its own standard streams are closed once the worker runs, so the worker's
 * output ends when the worker and what it started have ended. Children are found in /proc.
 * Call it first thing in main, in a process with one thread. Returns only on a usage error. */
int kr_proc_reaper_main(int argc, char **argv);

#endif
