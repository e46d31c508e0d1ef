/* kr_fs.h: file-system mechanism for paths the harness does not trust and files it must not
 * damage: resolving a path, reading a file only when it is a bounded regular file, and writing
 * a file through a temporary beside it that is renamed into place.
 * Runtime layer (no Lua, no GPU). Failures return -1 (or NULL) with a message in `err`. */
#ifndef KR_FS_H
#define KR_FS_H

#include <stddef.h>

/* The absolute path with every symbolic link, "." and ".." resolved, in out (malloc'd, the
 * caller frees it). When the path does not exist but its directory does, the directory is
 * resolved and the last name appended (*exists is set to 0): what a new file of that name
 * would be. Returns 0, or -1 with err. */
int kr_fs_resolve(const char *path, char **out, int *exists, char *err, size_t errlen);

/* Reads a whole file into *out (malloc'd, NUL-terminated, the caller frees it), *n its size,
 * only when the path names a regular file (after following links) of at most max_bytes. It
 * never blocks on a FIFO or reads a device: the file is opened with O_NONBLOCK and checked
 * with fstat before a byte is read, and a file that grows past the limit while being read is
 * refused too. Returns 0, or -1 with err ("a FIFO, not a regular file", "5000000 bytes, more
 * than the limit of 4194304", or the system's message). */
int kr_fs_read_regular(const char *path, size_t max_bytes, char **out, size_t *n, char *err,
                       size_t errlen);

/* A file written whole or not at all: the bytes go to a temporary file made by mkstemp in the
 * target's directory (".<name>.XXXXXX"), which commit renames over the target after flushing
 * it to disk, so a reader sees the old file or the whole new one and an error leaves the old
 * one as it was. The new file gets mode 0666 less the umask (a target that exists keeps its
 * mode). */
typedef struct kr_fs_writer kr_fs_writer;

/* Opens a writer for `path`. NULL with err when the temporary file cannot be made. */
kr_fs_writer *kr_fs_writer_open(const char *path, char *err, size_t errlen);
/* Appends bytes. Returns 0, or -1 with err (the writer stays open; abort it). */
int kr_fs_writer_write(kr_fs_writer *w, const void *p, size_t n, char *err, size_t errlen);
/* Flushes, closes and renames the temporary over the target, and frees the writer. Returns 0,
 * or -1 with err, in which case the temporary is removed and the target is untouched. */
int kr_fs_writer_commit(kr_fs_writer *w, char *err, size_t errlen);
/* Removes the temporary and frees the writer. NULL is allowed. */
void kr_fs_writer_abort(kr_fs_writer *w);
/* The temporary file's path (for messages and tests). */
const char *kr_fs_writer_temp(const kr_fs_writer *w);

#endif
