/* kr_fs.c: resolving paths, reading bounded regular files, and writing files atomically
 * (a mkstemp temporary renamed into place). Runtime layer (no Lua, no GPU). */
#define _GNU_SOURCE
#include "kr_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const char *kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISLNK(m)) return "a symbolic link";
    return "not a regular file";
}

/* dir and base of a path ("a/b" -> "a", "b"; "b" -> ".", "b"), in malloc'd strings */
static int split(const char *path, char **dir, char **base) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        *dir = strdup(".");
        *base = strdup(path);
    } else {
        size_t dl = (size_t)(slash - path);
        *dir = dl ? strndup(path, dl) : strdup("/");
        *base = strdup(slash + 1);
    }
    if (!*dir || !*base) {
        free(*dir);
        free(*base);
        return -1;
    }
    return 0;
}

int kr_fs_resolve(const char *path, char **out, int *exists, char *err, size_t errlen) {
    *out = NULL;
    if (exists) *exists = 0;
    if (!path || !*path) return fail(err, errlen, "an empty path");
    char *cur = strdup(path);
    if (!cur) return fail(err, errlen, "out of memory");
    for (int hops = 0; hops < 40; hops++) {
        char *r = realpath(cur, NULL);
        if (r) {
            free(cur);
            *out = r;
            if (exists) *exists = 1;
            return 0;
        }
        if (errno != ENOENT) {
            int e = errno;
            free(cur);
            return fail(err, errlen, "%s: %s", path, strerror(e));
        }
        char *dir, *base;
        if (split(cur, &dir, &base) != 0) {
            free(cur);
            return fail(err, errlen, "out of memory");
        }
        struct stat st;
        if (lstat(cur, &st) == 0 && S_ISLNK(st.st_mode)) {
            /* a link to nothing (yet): what it would name */
            char target[PATH_MAX];
            ssize_t n = readlink(cur, target, sizeof target - 1);
            if (n < 0) {
                int e = errno;
                free(dir), free(base), free(cur);
                return fail(err, errlen, "%s: %s", path, strerror(e));
            }
            target[n] = 0;
            char *next = NULL;
            if (target[0] == '/') next = strdup(target);
            else if (asprintf(&next, "%s/%s", dir, target) < 0) next = NULL;
            free(dir), free(base), free(cur);
            if (!next) return fail(err, errlen, "out of memory");
            cur = next;
            continue;
        }
        if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
            free(dir), free(base), free(cur);
            return fail(err, errlen, "%s: not a file name", path);
        }
        char *rdir = realpath(dir, NULL);
        if (!rdir) {
            int e = errno;
            free(dir), free(base), free(cur);
            return fail(err, errlen, "%s: %s", path, strerror(e));
        }
        char *res = NULL;
        if (asprintf(&res, "%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", base) < 0) res = NULL;
        free(rdir), free(dir), free(base), free(cur);
        if (!res) return fail(err, errlen, "out of memory");
        *out = res;
        return 0;
    }
    free(cur);
    return fail(err, errlen, "%s: too many levels of symbolic links", path);
}

int kr_fs_read_regular(const char *path, size_t max_bytes, char **out, size_t *n, char *err,
                       size_t errlen) {
    *out = NULL;
    *n = 0;
    /* a device is never even opened (opening some has effects); the file could be swapped
     * after this look, so what is opened is looked at again. O_NONBLOCK: opening a FIFO for
     * reading would otherwise wait for a writer. */
    struct stat st;
    if (stat(path, &st) != 0) return fail(err, errlen, "%s", strerror(errno));
    if (!S_ISREG(st.st_mode)) return fail(err, errlen, "%s, not a regular file", kind_of(st.st_mode));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return fail(err, errlen, "%s", strerror(errno));
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(err, errlen, "%s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen, "%s, not a regular file", kind_of(st.st_mode));
    }
    if ((unsigned long long)st.st_size > (unsigned long long)max_bytes) {
        close(fd);
        return fail(err, errlen, "%lld bytes, more than the limit of %zu",
                    (long long)st.st_size, max_bytes);
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return fail(err, errlen, "out of memory");
    }
    for (;;) {
        if (len == cap) { /* it grew while we read: the limit still holds */
            if (cap > max_bytes) {
                free(buf);
                close(fd);
                return fail(err, errlen, "more than the limit of %zu bytes (it grew while "
                            "being read)", max_bytes);
            }
            size_t nc = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
            char *nb = realloc(buf, nc + 1);
            if (!nb) {
                free(buf);
                close(fd);
                return fail(err, errlen, "out of memory");
            }
            buf = nb;
            cap = nc;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            close(fd);
            return fail(err, errlen, "%s", strerror(e));
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    close(fd);
    if (len > max_bytes) {
        free(buf);
        return fail(err, errlen, "more than the limit of %zu bytes (it grew while being read)",
                    max_bytes);
    }
    buf[len] = 0;
    *out = buf;
    *n = len;
    return 0;
}

/* ---- atomic writes ---- */

struct kr_fs_writer {
    int fd;
    char *path;
    char *temp;
};

kr_fs_writer *kr_fs_writer_open(const char *path, char *err, size_t errlen) {
    char *dir = NULL, *base = NULL;
    if (!path || !*path || split(path, &dir, &base) != 0) {
        fail(err, errlen, "%s: not a file name", path ? path : "(null)");
        return NULL;
    }
    kr_fs_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path)) ||
        asprintf(&w->temp, "%s/.%s.XXXXXX", dir, base) < 0) {
        if (w) free(w->path);
        free(w);
        free(dir), free(base);
        fail(err, errlen, "out of memory");
        return NULL;
    }
    free(dir), free(base);
    w->fd = mkostemp(w->temp, O_CLOEXEC);
    if (w->fd < 0) {
        fail(err, errlen, "cannot create a temporary file for %s: %s", path, strerror(errno));
        free(w->temp);
        free(w->path);
        free(w);
        return NULL;
    }
    /* mkstemp makes 0600; give what a plain open would, or the target's own mode */
    struct stat st;
    mode_t mode;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        mode = st.st_mode & 07777;
    } else {
        mode_t um = umask(0);
        umask(um);
        mode = 0666 & ~um;
    }
    fchmod(w->fd, mode);
    return w;
}

int kr_fs_writer_write(kr_fs_writer *w, const void *p, size_t n, char *err, size_t errlen) {
    const char *c = p;
    while (n) {
        ssize_t r = write(w->fd, c, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return fail(err, errlen, "cannot write %s: %s", w->temp, strerror(errno));
        }
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static void writer_free(kr_fs_writer *w) {
    free(w->temp);
    free(w->path);
    free(w);
}

int kr_fs_writer_commit(kr_fs_writer *w, char *err, size_t errlen) {
    int rc = 0;
    if (fsync(w->fd) != 0) rc = fail(err, errlen, "cannot write %s: %s", w->temp, strerror(errno));
    if (close(w->fd) != 0 && rc == 0)
        rc = fail(err, errlen, "cannot write %s: %s", w->temp, strerror(errno));
    w->fd = -1;
    if (rc == 0 && rename(w->temp, w->path) != 0)
        rc = fail(err, errlen, "cannot rename %s to %s: %s", w->temp, w->path, strerror(errno));
    if (rc != 0) unlink(w->temp);
    writer_free(w);
    return rc;
}

void kr_fs_writer_abort(kr_fs_writer *w) {
    if (!w) return;
    if (w->fd >= 0) close(w->fd);
    unlink(w->temp);
    writer_free(w);
}

const char *kr_fs_writer_temp(const kr_fs_writer *w) { return w->temp; }
