/* test_fs.c: kr_fs without a GPU: resolving paths (links, new files, links to nothing), reading
 * only bounded regular files (a FIFO, a device, a directory and an oversized file refused, a FIFO
 * without blocking), and atomic writers (commit renames into place, abort and a failed commit
 * leave the old file, the temporary is gone either way). */
#define _GNU_SOURCE
#include "kr_fs.h"
#include "kr_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void spit(const char *path, const char *s) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(s, f);
    fclose(f);
}

static char *slurp(const char *path) {
    char *buf = NULL, err[256];
    size_t n;
    if (kr_fs_read_regular(path, 1 << 20, &buf, &n, err, sizeof err) != 0) return NULL;
    return buf;
}

/* files in dir other than . and .. */
static int count_files(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    if (d) closedir(d);
    return n;
}

int main(void) {
    char dir[] = "/tmp/kreach-test-fs-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *rdir = realpath(dir, NULL);
    char p[512], q[512], want[600], err[256];
    char *out = NULL;
    int exists = -1;

    /* resolve: an existing file, a link to it, a new name, a link to nothing, a missing dir */
    snprintf(p, sizeof p, "%s/r.db", dir);
    spit(p, "db");
    CHECK_INT(kr_fs_resolve(p, &out, &exists, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/r.db", rdir);
    CHECK_STR(out, want);
    CHECK_INT(exists, 1);
    free(out);
    snprintf(q, sizeof q, "%s/link", dir);
    CHECK(symlink("r.db", q) == 0);
    CHECK_INT(kr_fs_resolve(q, &out, &exists, err, sizeof err), 0);
    CHECK_STR(out, want);
    free(out);
    snprintf(p, sizeof p, "%s/sub", dir);
    CHECK(mkdir(p, 0755) == 0);
    snprintf(q, sizeof q, "%s/./sub/../new.csv", dir);
    CHECK_INT(kr_fs_resolve(q, &out, &exists, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/new.csv", rdir);
    CHECK_STR(out, want);
    CHECK_INT(exists, 0);
    free(out);
    snprintf(q, sizeof q, "%s/dangling", dir);
    CHECK(symlink("r.db-wal", q) == 0);
    CHECK_INT(kr_fs_resolve(q, &out, &exists, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/r.db-wal", rdir);
    CHECK_STR(out, want);
    CHECK_INT(exists, 0);
    free(out);
    snprintf(q, sizeof q, "%s/nodir/x", dir);
    CHECK_INT(kr_fs_resolve(q, &out, &exists, err, sizeof err), -1);
    CHECK_CONTAINS(err, "No such file");
    snprintf(q, sizeof q, "%s/loop", dir);
    CHECK(symlink("loop", q) == 0);
    CHECK_INT(kr_fs_resolve(q, &out, &exists, err, sizeof err), -1);

    /* read_regular: a file, under and over its limit; a FIFO (at once); a device; a dir */
    char *buf = NULL;
    size_t n = 0;
    snprintf(p, sizeof p, "%s/r.db", dir);
    CHECK_INT(kr_fs_read_regular(p, 2, &buf, &n, err, sizeof err), 0);
    CHECK_STR(buf, "db");
    CHECK_INT(n, 2);
    free(buf);
    CHECK_INT(kr_fs_read_regular(p, 1, &buf, &n, err, sizeof err), -1);
    CHECK_STR(err, "2 bytes, more than the limit of 1");
    CHECK(buf == NULL);
    snprintf(q, sizeof q, "%s/fifo", dir);
    CHECK(mkfifo(q, 0600) == 0);
    CHECK_INT(kr_fs_read_regular(q, 100, &buf, &n, err, sizeof err), -1);
    CHECK_STR(err, "a FIFO, not a regular file");
    CHECK_INT(kr_fs_read_regular("/dev/zero", 100, &buf, &n, err, sizeof err), -1);
    CHECK_STR(err, "a character device, not a regular file");
    CHECK_INT(kr_fs_read_regular(dir, 100, &buf, &n, err, sizeof err), -1);
    CHECK_STR(err, "a directory, not a regular file");
    snprintf(q, sizeof q, "%s/link", dir); /* a link to a regular file is read */
    CHECK_INT(kr_fs_read_regular(q, 100, &buf, &n, err, sizeof err), 0);
    free(buf);

    /* writers: a commit replaces the file whole; an abort leaves it; no temporary remains */
    snprintf(p, sizeof p, "%s/out.txt", dir);
    spit(p, "old");
    chmod(p, 0640);
    int before = count_files(dir);
    kr_fs_writer *w = kr_fs_writer_open(p, err, sizeof err);
    CHECK(w != NULL);
    CHECK(strstr(kr_fs_writer_temp(w), "/.out.txt.") != NULL);
    CHECK_INT(count_files(dir), before + 1);
    CHECK_INT(kr_fs_writer_write(w, "new ", 4, err, sizeof err), 0);
    char *mid = slurp(p);
    CHECK_STR(mid, "old"); /* nothing shows before the commit */
    free(mid);
    CHECK_INT(kr_fs_writer_write(w, "text", 4, err, sizeof err), 0);
    CHECK_INT(kr_fs_writer_commit(w, err, sizeof err), 0);
    char *got = slurp(p);
    CHECK_STR(got, "new text");
    free(got);
    struct stat st;
    CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0640); /* the target's mode is kept */
    CHECK_INT(count_files(dir), before);
    w = kr_fs_writer_open(p, err, sizeof err);
    CHECK(w != NULL);
    kr_fs_writer_write(w, "half", 4, err, sizeof err);
    kr_fs_writer_abort(w);
    got = slurp(p);
    CHECK_STR(got, "new text");
    free(got);
    CHECK_INT(count_files(dir), before);
    /* a commit whose rename fails (the target is a directory) removes its temporary */
    snprintf(q, sizeof q, "%s/sub", dir);
    w = kr_fs_writer_open(q, err, sizeof err);
    CHECK(w != NULL);
    CHECK_INT(kr_fs_writer_commit(w, err, sizeof err), -1);
    CHECK_CONTAINS(err, "cannot rename");
    CHECK_INT(count_files(dir), before);
    snprintf(q, sizeof q, "%s/nodir/x", dir);
    CHECK(kr_fs_writer_open(q, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "cannot create a temporary file");

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    free(rdir);
    return kr_test_done("test_fs");
}
