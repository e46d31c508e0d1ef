/* kr_proc.c: worker processes: spawn, line-by-line output with time limits, kill, reap.
 * Runtime layer (no Lua, no GPU). posix_spawn, pipes and poll: the harness never runs
 * candidate code in its own process, and a hung or crashed worker becomes a status here. */
#define _GNU_SOURCE
#include "kr_proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ERR_KEEP (64 * 1024)

struct kr_proc {
    pid_t pid;
    int out, err;           /* read ends; -1 once closed */
    int watch;              /* the parent's end of the watch pipe; -1 when none */
    char *buf;              /* stdout bytes not yet returned as lines */
    size_t len, cap, start; /* valid bytes are buf[start, len) */
    size_t scan;            /* buf[start, scan) holds no newline: never searched twice */
    size_t max_line;
    size_t scanned;         /* bytes searched for a newline, over the worker's life */
    int overflow;           /* a line grew past max_line */
    char *line;             /* the line handed out last */
    size_t line_cap;
    char *errbuf;
    size_t errlen;
    int reaped;
    int reaper;             /* the worker runs under a reaper (kr_proc_opts.reaper), p->pid */
    kr_proc_state state;
    int code;
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

kr_proc *kr_proc_spawn(const char *const *argv, char *err, size_t errlen) {
    kr_proc_opts o = {.argv = argv};
    return kr_proc_start(&o, err, errlen);
}

kr_proc *kr_proc_start(const kr_proc_opts *o, char *err, size_t errlen) {
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, pw[2] = {-1, -1};
    const char *const *argv = o->argv;
    const char **rargv = NULL; /* under a reaper: reaper, KR_PROC_REAPER_ARG, argv... */
    if (o->reaper) {
        size_t n = 0;
        while (argv[n]) n++;
        rargv = malloc((n + 3) * sizeof *rargv);
        if (!rargv) { snprintf(err, errlen, "out of memory"); return NULL; }
        rargv[0] = o->reaper;
        rargv[1] = KR_PROC_REAPER_ARG;
        memcpy(rargv + 2, argv, (n + 1) * sizeof *argv);
    }
    kr_proc *p = calloc(1, sizeof *p);
    if (!p) { snprintf(err, errlen, "out of memory"); free(rargv); return NULL; }
    p->reaper = o->reaper != NULL;
    p->watch = -1;
    p->max_line = o->max_line ? o->max_line : KR_PROC_MAX_LINE;
    p->errbuf = malloc(ERR_KEEP + 1);
    if (!p->errbuf || pipe2(po, O_CLOEXEC) != 0 || (!o->pass_stderr && pipe2(pe, O_CLOEXEC) != 0) ||
        (o->watch && pipe2(pw, O_CLOEXEC) != 0)) {
        snprintf(err, errlen, "cannot create pipes: %s", strerror(errno));
        goto fail;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    if (o->watch) posix_spawn_file_actions_adddup2(&fa, pw[0], 0); /* dup2 clears close-on-exec */
    else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    if (!o->pass_stderr) posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    if (o->fd3 > 0) posix_spawn_file_actions_adddup2(&fa, o->fd3, 3);
    posix_spawnattr_init(&at);
    /* a group of its own, so that a kill also ends what the worker started */
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&at, 0);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    char *const *envp = o->envp ? (char *const *)o->envp : environ;
    int rc = rargv ? posix_spawn(&p->pid, rargv[0], &fa, &at, (char *const *)rargv, envp)
                   : posix_spawnp(&p->pid, argv[0], &fa, &at, (char *const *)argv, envp);
    free(rargv);
    rargv = NULL;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(po[1]);
    if (pe[1] >= 0) close(pe[1]);
    po[1] = pe[1] = -1;
    if (pw[0] >= 0) close(pw[0]);
    pw[0] = -1;
    if (rc != 0) {
        snprintf(err, errlen, "cannot start %s: %s", o->reaper ? o->reaper : argv[0], strerror(rc));
        goto fail;
    }
    p->out = po[0];
    p->err = pe[0];
    p->watch = pw[1];
    return p;
fail:
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0) close(po[i]);
        if (pe[i] >= 0) close(pe[i]);
        if (pw[i] >= 0) close(pw[i]);
    }
    free(p->errbuf);
    free(p);
    free(rargv);
    return NULL;
}

static void keep_err(kr_proc *p, const char *d, size_t n) {
    if (n >= ERR_KEEP) {
        memcpy(p->errbuf, d + n - ERR_KEEP, ERR_KEEP);
        p->errlen = ERR_KEEP;
    } else {
        if (p->errlen + n > ERR_KEEP) {
            size_t drop = p->errlen + n - ERR_KEEP;
            memmove(p->errbuf, p->errbuf + drop, p->errlen - drop);
            p->errlen -= drop;
        }
        memcpy(p->errbuf + p->errlen, d, n);
        p->errlen += n;
    }
    p->errbuf[p->errlen] = 0;
}

/* Hands out buf[start, end) as the current line. */
static int give_line(kr_proc *p, size_t end, size_t skip, const char **line, size_t *len) {
    size_t n = end - p->start;
    if (n + 1 > p->line_cap) {
        char *l = realloc(p->line, n + 1);
        if (!l) return 0;
        p->line = l;
        p->line_cap = n + 1;
    }
    memcpy(p->line, p->buf + p->start, n);
    p->line[n] = 0;
    p->start = p->scan = end + skip;
    *line = p->line;
    *len = n;
    return 1;
}

static void append_out(kr_proc *p, const char *d, size_t n) {
    if (p->overflow) return; /* the line is refused whole; the caller kills the worker */
    if (p->start > 0) { /* compact: the returned lines are no longer needed */
        memmove(p->buf, p->buf + p->start, p->len - p->start);
        p->len -= p->start;
        p->scan -= p->start;
        p->start = 0;
    }
    if (p->len + n > p->max_line + 65536) {
        p->overflow = 1; /* more waits unread than one line may hold: the rest is dropped */
        return;
    }
    if (p->len + n > p->cap) {
        size_t c = p->cap ? p->cap : 65536;
        while (c < p->len + n) c *= 2;
        char *b = realloc(p->buf, c);
        if (!b) return; /* out of memory: the bytes are dropped, the worker goes on */
        p->buf = b;
        p->cap = c;
    }
    memcpy(p->buf + p->len, d, n);
    p->len += n;
}

/* Waits up to wait_ms (< 0: forever) for either pipe and takes what is there. Returns 0 on
 * time-out, 1 otherwise (data or an end of a pipe). */
static int pump(kr_proc *p, int wait_ms) {
    struct pollfd fds[2];
    int fd_of[2], nf = 0;
    if (p->out >= 0) { fds[nf] = (struct pollfd){p->out, POLLIN, 0}; fd_of[nf++] = 0; }
    if (p->err >= 0) { fds[nf] = (struct pollfd){p->err, POLLIN, 0}; fd_of[nf++] = 1; }
    if (nf == 0) return 1;
    int r = poll(fds, (nfds_t)nf, wait_ms);
    if (r < 0) return errno == EINTR ? 1 : 0;
    if (r == 0) return 0;
    char tmp[65536];
    for (int i = 0; i < nf; i++) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        int *fd = fd_of[i] == 0 ? &p->out : &p->err;
        ssize_t n = read(*fd, tmp, sizeof tmp);
        if (n > 0) {
            if (fd_of[i] == 0) append_out(p, tmp, (size_t)n);
            else keep_err(p, tmp, (size_t)n);
        } else if (n == 0 || errno != EINTR) {
            close(*fd);
            *fd = -1;
        }
    }
    return 1;
}

int kr_proc_read_line(kr_proc *p, int timeout_ms, const char **line, size_t *len) {
    double deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    for (;;) {
        char *nl = p->len > p->scan ? memchr(p->buf + p->scan, '\n', p->len - p->scan) : NULL;
        p->scanned += nl ? (size_t)(nl - (p->buf + p->scan)) + 1 : p->len - p->scan;
        if (nl) {
            if ((size_t)(nl - p->buf) - p->start > p->max_line) return -2;
            return give_line(p, (size_t)(nl - p->buf), 1, line, len);
        }
        p->scan = p->len;
        if (p->overflow || p->len - p->start > p->max_line) return -2;
        if (p->out < 0) {
            if (p->len > p->start) return give_line(p, p->len, 0, line, len); /* last, unended */
            return 0;
        }
        int wait = -1;
        if (deadline >= 0) {
            double left = deadline - now_ms();
            if (left <= 0) return -1;
            wait = (int)left + 1;
        }
        if (!pump(p, wait)) return -1;
    }
}

void kr_proc_kill(kr_proc *p) {
    if (p->reaped || p->pid <= 0) return;
    /* a reaper kills what the worker started, in whatever group or session it went to */
    if (p->reaper) kill(p->pid, SIGTERM);
    else kill(-p->pid, SIGKILL);
    /* and the watch pipe ends: a reaper, or a worker watching it (kr_seal_watch_parent), ends
     * everything then, should this process not be allowed to signal it (Landlock's signal
     * scope, where this process was sealed after starting it) */
    if (p->watch >= 0) {
        close(p->watch);
        p->watch = -1;
    }
}

kr_proc_state kr_proc_wait(kr_proc *p, int *code) {
    if (!p->reaped) {
        /* drain both pipes, so that a worker blocked writing to one can finish; what it
         * wrote to standard output stays readable as lines */
        while (p->out >= 0 || p->err >= 0) pump(p, -1);
        int st = 0;
        while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR) {}
        p->reaped = 1;
        if (WIFSIGNALED(st)) { p->state = KR_PROC_SIGNALED; p->code = WTERMSIG(st); }
        else { p->state = KR_PROC_EXITED; p->code = WEXITSTATUS(st); }
    }
    if (code) *code = p->code;
    return p->state;
}

const char *kr_proc_stderr(kr_proc *p, size_t *len) {
    *len = p->errlen;
    return p->errbuf;
}

pid_t kr_proc_pid(const kr_proc *p) { return p->pid; }

size_t kr_proc_scanned(const kr_proc *p) { return p->scanned; }

int kr_proc_write(kr_proc *p, const void *buf, size_t len) {
    if (p->watch < 0) {
        errno = EINVAL;
        return -1;
    }
    const char *b = buf;
    while (len > 0) {
        /* MSG_NOSIGNAL is for sockets; a pipe's EPIPE comes with SIGPIPE, ignored here */
        struct sigaction ign = {0}, old;
        ign.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &ign, &old);
        ssize_t n = write(p->watch, b, len);
        int e = errno;
        sigaction(SIGPIPE, &old, NULL);
        if (n < 0) {
            if (e == EINTR) continue;
            errno = e;
            return -1;
        }
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

void kr_proc_free(kr_proc *p) {
    if (!p) return;
    if (!p->reaped) {
        kr_proc_kill(p);
        if (p->out >= 0) { close(p->out); p->out = -1; }
        kr_proc_wait(p, NULL);
    }
    if (p->out >= 0) close(p->out);
    if (p->err >= 0) close(p->err);
    if (p->watch >= 0) close(p->watch);
    free(p->buf);
    free(p->line);
    free(p->errbuf);
    free(p);
}

/* ---- the reaper (kr_proc_reaper_main) ---- */

/* Sends SIGKILL to every child of this process (found in /proc: the parent is the field after
 * the state, after the last ')' of /proc/<pid>/stat). Returns how many, or -1 when /proc cannot
 * be read. */
static int kill_children(pid_t self) {
    DIR *d = opendir("/proc");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self) continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (r <= 0) continue;
        buf[r] = 0;
        char *rp = strrchr(buf, ')');
        char state;
        long ppid;
        if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2 || ppid != self) continue;
        kill((pid_t)pid, SIGKILL);
        n++;
    }
    closedir(d);
    return n;
}

/* Kills this process's children round after round, reaping them, until it has none; the
 * worker's status goes to *wst when it is reaped here. */
static void reap_all(pid_t self, pid_t worker, int *wst, int *wdone) {
    for (long round = 0; round < 1000000; round++) {
        if (kill_children(self) < 0) kill(worker, SIGKILL);
        int st;
        pid_t r = waitpid(-1, &st, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            return; /* ECHILD: none left */
        }
        do {
            if (r == worker && !*wdone) { *wst = st; *wdone = 1; }
        } while ((r = waitpid(-1, &st, WNOHANG)) > 0);
    }
}

/* Closes every descriptor from `from` up, except `keep` (-1: none): close_range where the
 * kernel has it (5.9), else one by one up to the descriptor limit (at most 65536). */
static void close_from(int from, int keep) {
#ifdef SYS_close_range
    if (keep < from) {
        if (syscall(SYS_close_range, (unsigned)from, ~0U, 0) == 0) return;
    } else if ((keep == from || syscall(SYS_close_range, (unsigned)from, (unsigned)keep - 1, 0) == 0) &&
               syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0) == 0) {
        return;
    }
#endif
    long maxfd = sysconf(_SC_OPEN_MAX);
    if (maxfd < 0 || maxfd > 65536) maxfd = 65536;
    for (int fd = from; fd < maxfd; fd++)
        if (fd != keep) close(fd);
}

int kr_proc_reaper_main(int argc, char **argv) {
    if (argc < 1) {
        fprintf(stderr, "usage: <reaper> %s program [args...]\n", KR_PROC_REAPER_ARG);
        return 2;
    }
    pid_t parent = getppid(), self = getpid();
    sigset_t set, none;
    sigemptyset(&set);
    sigemptyset(&none);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 || prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0) {
        fprintf(stderr, "kreach reaper: prctl: %s\n", strerror(errno));
        _exit(127);
    }
    if (getppid() != parent) _exit(127); /* the parent died before the death signal was set */
    DIR *d = opendir("/proc"); /* the children are found there: without it, refuse now */
    if (!d) {
        fprintf(stderr, "kreach reaper: cannot read /proc: %s\n", strerror(errno));
        _exit(127);
    }
    closedir(d);
    pid_t w = fork();
    if (w < 0) {
        fprintf(stderr, "kreach reaper: fork: %s\n", strerror(errno));
        _exit(127);
    }
    if (w == 0) {
        setpgid(0, 0);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot start %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(w, w); /* as the child does: whichever runs first */
    /* a watch pipe on standard input (kr_proc_opts.watch): the reaper keeps a copy of its read
     * end, never read, to see its parent close the other end (kr_proc_kill), which a signal
     * the parent may not send (a Landlock signal scope) would otherwise have told it */
    struct stat sb;
    int watchfd = fstat(0, &sb) == 0 && S_ISFIFO(sb.st_mode) ? fcntl(0, F_DUPFD_CLOEXEC, 3) : -1;
    /* the reaper's own streams and descriptors (a ruleset on 3) are the worker's alone now */
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
        if (nul > 2) close(nul);
    }
    close_from(3, watchfd);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    int wst = 0, wdone = 0, stop = 0;
    while (!wdone && !stop) {
        int sig = 0;
        if (sfd >= 0) {
            struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN}, {.fd = watchfd, .events = 0}};
            if (poll(pf, watchfd >= 0 ? 2 : 1, -1) < 0) continue;
            if (watchfd >= 0 && (pf[1].revents & (POLLHUP | POLLERR))) { stop = SIGTERM; break; }
            if (!(pf[0].revents & POLLIN)) continue;
            struct signalfd_siginfo fi;
            if (read(sfd, &fi, sizeof fi) != (ssize_t)sizeof fi) continue;
            sig = (int)fi.ssi_signo;
        } else { /* no signalfd: signals alone */
            siginfo_t si;
            sig = sigwaitinfo(&set, &si);
            if (sig < 0) continue;
        }
        if (sig != SIGCHLD) { stop = sig; break; }
        int st;
        pid_t r;
        while ((r = waitpid(-1, &st, WNOHANG)) > 0)
            if (r == w) { wst = st; wdone = 1; }
    }
    if (!wdone) kill(w, SIGKILL);
    reap_all(self, w, &wst, &wdone);
    if (wdone && WIFEXITED(wst)) _exit(WEXITSTATUS(wst));
    int sig = wdone && WIFSIGNALED(wst) ? WTERMSIG(wst) : SIGKILL;
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    kill(self, sig);
    _exit(128 + sig);
}
