/* kr_seal.h: sealing a worker process before it reads a candidate (docs/candidates.md).
 * Runtime layer (no Lua, no GPU): Landlock (what the worker may read and write), a limit on
 * its data (RLIMIT_DATA), and a watch on the parent that ends the worker when the parent dies. Which
 * paths, which limit and when are policy, decided in scripts/kreach/run/seal.lua. */
#ifndef KR_SEAL_H
#define KR_SEAL_H

#include <stddef.h>
#include <stdint.h>

/* The Landlock ABI version of the running kernel (1 and up), or 0 when Landlock is not
 * available; then why (when given) says why, e.g. "disabled at boot". */
int kr_seal_landlock_abi(char *why, size_t whylen);

typedef enum {
    KR_SEAL_READ = 1,  /* read files, list directories (a file or a directory tree) */
    KR_SEAL_WRITE = 2, /* read, and create, write, truncate, rename and remove beneath */
    KR_SEAL_DEVICE = 3, /* a device file: open it for reading and writing */
    KR_SEAL_EXEC = 4    /* read, and execute programs and libraries beneath */
} kr_seal_access;

typedef struct {
    const char *path;
    kr_seal_access access;
} kr_seal_rule;

/* Restricts the calling thread, and every thread and process it starts afterwards, to the
 * rules: everything the running ABI can restrict is denied beneath "/" unless a rule grants
 * it. Device ioctls are not restricted (the GPU driver's ioctls on its already-open files),
 * TCP bind and connect are denied (ABI 4 and up), and signals to processes outside the
 * domain are denied (ABI 6 and up). Threads that exist already keep their freedom: seal
 * before starting the work, not after. A rule whose path does not exist is skipped and
 * counted in *skipped (when given). Returns the ABI used (>= 1), or -1 with a message in
 * err (then nothing was restricted, except that no_new_privs may be set). */
int kr_seal_landlock(const kr_seal_rule *rules, int n, int *skipped, char *err, size_t errlen);

/* The ruleset kr_seal_landlock applies, as a file descriptor (close-on-exec) for another
 * process to apply to itself: a program started with it (kr_proc_opts.fd3) calls
 * prctl(PR_SET_NO_NEW_PRIVS) and landlock_restrict_self(3, 0). -1 with a message. */
int kr_seal_ruleset(const kr_seal_rule *rules, int n, int *skipped, char *err, size_t errlen);

/* Sets the soft and hard limits of the data segment to bytes (RLIMIT_DATA: the heap and private
 * writable mappings, which malloc and Lua use; not the address ranges CUDA reserves for device
 * memory, which RLIMIT_AS would count). 0 on success, -1 with a message. The hard limit
 * cannot be raised again by this process. */
int kr_seal_limit_memory(uint64_t bytes, char *err, size_t errlen);

/* The current data limit (RLIMIT_DATA) in bytes, or 0 when there is none. */
uint64_t kr_seal_memory_limit(void);

/* The physical memory of the host in bytes (0 when unknown). */
uint64_t kr_seal_host_memory(void);

/* Starts a thread that ends this process group (SIGKILL) and then the process as soon as
 * fd reads end-of-file or hangs up (the parent's end of a pipe closed: it died or freed the
 * worker), or the parent process changes (checked every second). 0 on success, -1 with a
 * message. */
int kr_seal_watch_parent(int fd, char *err, size_t errlen);

/* The canonical absolute path of path (realpath), or -1 with a message. */
int kr_seal_realpath(const char *path, char *out, size_t n, char *err, size_t errlen);

/* The directory of the NVRTC library this process runs (NVRTC loads its builtins from there
 * at the first compile), or -1 when it cannot be told. */
int kr_seal_nvrtc_dir(char *out, size_t n);

/* Loads NVRTC's builtins library (libnvrtc-builtins.so.<major>.<minor>, beside NVRTC) now,
 * so that NVRTC's own dlopen at the first compile finds it loaded: once sealed, the dynamic
 * loader's cache (/etc/ld.so.cache) is out of reach. 0 on success, -1 with a message. */
int kr_seal_preload_nvrtc_builtins(char *err, size_t errlen);

/* Creates a private directory (mode 0700) from a template ending in XXXXXX, in place. */
int kr_seal_mkdtemp(char *template_, char *err, size_t errlen);

#endif
