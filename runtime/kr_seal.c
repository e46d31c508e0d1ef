/* kr_seal.c: the mechanism of a sealed worker: Landlock through its raw system calls (the
 * distribution's <linux/landlock.h> may be older than the kernel, so the ABI is declared here
 * and probed at run time), RLIMIT_DATA, and a thread that watches the parent. Runtime layer
 * (no Lua, no GPU). */
#define _GNU_SOURCE
#include "kr_seal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nvrtc.h>
#include "kr_nvrtc_api.h"
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- Landlock's kernel ABI (include/uapi/linux/landlock.h), as of ABI 7 ---- */

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5: never handled here (the GPU driver's ioctls) */
#define LL_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define LL_SCOPE_SIGNAL (1ULL << 1)    /* ABI 6 */

/* the rights a rule on a file (not a directory) may carry */
#define LL_FS_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;  /* ABI 1 */
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

int kr_seal_landlock_abi(char *why, size_t whylen) {
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi >= 1) return (int)abi;
    if (why && whylen) {
        if (errno == ENOSYS)
            snprintf(why, whylen, "the kernel has no Landlock (Linux 5.13 or later, built with it)");
        else if (errno == EOPNOTSUPP)
            snprintf(why, whylen, "Landlock is disabled on this kernel (not in the lsm= list at boot)");
        else snprintf(why, whylen, "Landlock cannot be probed: %s", strerror(errno));
    }
    return 0;
}

static uint64_t handled_fs(int abi) {
    uint64_t r = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0 to 12 */
    if (abi >= 2) r |= LL_FS_REFER;
    if (abi >= 3) r |= LL_FS_TRUNCATE;
    return r;
}

static uint64_t rights(kr_seal_access a, int is_dir, uint64_t handled) {
    uint64_t r = 0;
    switch (a) {
    case KR_SEAL_READ: r = LL_FS_READ_FILE | LL_FS_READ_DIR; break;
    case KR_SEAL_EXEC: r = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE; break;
    case KR_SEAL_WRITE:
        r = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_WRITE_FILE | LL_FS_TRUNCATE |
            LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_REFER;
        break;
    case KR_SEAL_DEVICE: r = LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_READ_DIR; break;
    }
    if (!is_dir) r &= LL_FS_FILE_RIGHTS;
    return r & handled;
}

int kr_seal_ruleset(const kr_seal_rule *rules, int n, int *skipped, char *err, size_t errlen) {
    char why[160];
    int abi = kr_seal_landlock_abi(why, sizeof why);
    if (skipped) *skipped = 0;
    if (abi < 1) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    struct ll_ruleset_attr attr = {handled_fs(abi), 0, 0};
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 4) {
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
        size += sizeof attr.handled_access_net;
    }
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_SIGNAL;
        size += sizeof attr.scoped;
    }
    int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0) {
        snprintf(err, errlen, "cannot create a Landlock ruleset (ABI %d): %s", abi, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int fd = open(rules[i].path, O_PATH | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT || errno == ENOTDIR) {
                if (skipped) (*skipped)++;
                continue;
            }
            snprintf(err, errlen, "cannot open %s for a Landlock rule: %s", rules[i].path,
                     strerror(errno));
            close(rs);
            return -1;
        }
        struct stat st;
        if (fstat(fd, &st) != 0) {
            snprintf(err, errlen, "cannot stat %s: %s", rules[i].path, strerror(errno));
            close(fd);
            close(rs);
            return -1;
        }
        struct ll_path_beneath_attr pb = {rights(rules[i].access, S_ISDIR(st.st_mode), attr.handled_access_fs), fd};
        long r = pb.allowed_access ? syscall(__NR_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) : 0;
        int e = errno;
        close(fd);
        if (r != 0) {
            snprintf(err, errlen, "cannot add a Landlock rule for %s: %s", rules[i].path, strerror(e));
            close(rs);
            return -1;
        }
    }
    return rs;
}

int kr_seal_landlock(const kr_seal_rule *rules, int n, int *skipped, char *err, size_t errlen) {
    int rs = kr_seal_ruleset(rules, n, skipped, err, errlen);
    if (rs < 0) return -1;
    int abi = kr_seal_landlock_abi(NULL, 0);
    /* without no_new_privs an unprivileged process may not restrict itself */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(err, errlen, "prctl(PR_SET_NO_NEW_PRIVS) failed: %s", strerror(errno));
        close(rs);
        return -1;
    }
    if (syscall(__NR_landlock_restrict_self, rs, 0) != 0) {
        snprintf(err, errlen, "landlock_restrict_self failed: %s", strerror(errno));
        close(rs);
        return -1;
    }
    close(rs);
    return abi;
}

/* ---- memory ---- */

int kr_seal_limit_memory(uint64_t bytes, char *err, size_t errlen) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_DATA, &rl) != 0) {
        snprintf(err, errlen, "getrlimit(RLIMIT_DATA) failed: %s", strerror(errno));
        return -1;
    }
    rlim_t want = (rlim_t)bytes;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) want = rl.rlim_max;
    rl.rlim_cur = rl.rlim_max = want;
    if (setrlimit(RLIMIT_DATA, &rl) != 0) {
        snprintf(err, errlen, "setrlimit(RLIMIT_DATA, %llu) failed: %s", (unsigned long long)want,
                 strerror(errno));
        return -1;
    }
    return 0;
}

uint64_t kr_seal_memory_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_DATA, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
    return (uint64_t)rl.rlim_cur;
}

uint64_t kr_seal_host_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/* ---- the parent watch ---- */

typedef struct {
    int fd;
    pid_t parent;
} watch_arg;

static void *watch(void *p) {
    watch_arg a = *(watch_arg *)p;
    free(p);
    for (;;) {
        struct pollfd pf = {a.fd, POLLIN, 0};
        int r = poll(&pf, 1, 1000);
        if (r > 0) {
            if (pf.revents & (POLLHUP | POLLERR | POLLNVAL)) break;
            if (pf.revents & POLLIN) {
                char b[256];
                ssize_t got = read(a.fd, b, sizeof b);
                if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) break;
            }
        } else if (r < 0 && errno != EINTR) {
            break;
        }
        if (getppid() != a.parent) break;
    }
    /* a worker leads its process group: end what it started too */
    if (getpgrp() == getpid()) kill(0, SIGKILL);
    _exit(70);
}

int kr_seal_watch_parent(int fd, char *err, size_t errlen) {
    watch_arg *a = malloc(sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    a->fd = fd;
    a->parent = getppid();
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    /* the thread takes no signals: they stay the main thread's */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, &at, watch, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        free(a);
        snprintf(err, errlen, "cannot start the parent watch: %s", strerror(rc));
        return -1;
    }
    return 0;
}

/* ---- paths ---- */

int kr_seal_realpath(const char *path, char *out, size_t n, char *err, size_t errlen) {
    char buf[PATH_MAX];
    if (!realpath(path, buf)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (snprintf(out, n, "%s", buf) >= (int)n) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    return 0;
}

int kr_seal_nvrtc_dir(char *out, size_t n) { return kr_nvrtc_dir(out, n); }

int kr_seal_preload_nvrtc_builtins(char *err, size_t errlen) {
    char dir[PATH_MAX], path[PATH_MAX + 64];
    int major = 0, minor = 0;
    if (kr_seal_nvrtc_dir(dir, sizeof dir) != 0 || nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
        snprintf(err, errlen, "cannot tell where NVRTC is loaded from");
        return -1;
    }
    snprintf(path, sizeof path, "%s/libnvrtc-builtins.so.%d.%d", dir, major, minor);
    if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) { /* kept loaded for the process's life */
        const char *e = dlerror();
        snprintf(err, errlen, "cannot load %s: %s", path, e ? e : "?");
        return -1;
    }
    return 0;
}

int kr_seal_mkdtemp(char *template_, char *err, size_t errlen) {
    if (!mkdtemp(template_)) {
        snprintf(err, errlen, "cannot create %s: %s", template_, strerror(errno));
        return -1;
    }
    return 0;
}
