/* kr_nvrtc_api.c: loading NVRTC on first use, and confining the files its compiles may reach
 * (kr_nvrtc_api.h says why). Runtime layer. */
#define _GNU_SOURCE /* dladdr, dlinfo */
#define KR_NVRTC_API_IMPL
#include "kr_nvrtc_api.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#ifndef KR_NVRTC_SONAME
#error "KR_NVRTC_SONAME (libnvrtc.so.<major>) is set by CMakeLists.txt"
#endif

kr_nvrtc_api kr_nvrtc_fn;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

/* ---- confinement: NVRTC's path calls, redirected in its relocation table ---- */

#define MAX_ROOTS 16
static char confine_error[256];  /* why the calls could not be redirected ("" when they were) */
static pthread_mutex_t confine_lock = PTHREAD_MUTEX_INITIALIZER;
static char roots[MAX_ROOTS][PATH_MAX];
static int n_roots;
static atomic_int confining;     /* a confined compile is running */
static atomic_int refused;

/* Whether NVRTC may reach path now: always outside a confined compile; during one, only a
 * path whose real path lies beneath a root. A refusal reads as a missing file. */
static int may_reach(const char *path) {
    if (!atomic_load(&confining) || !path) return 1;
    char r[PATH_MAX];
    if (path[0] == '/' && realpath(path, r)) {
        for (int i = 0; i < n_roots; i++) {
            size_t n = strlen(roots[i]);
            if (!strncmp(r, roots[i], n) && (r[n] == '/' || r[n] == 0)) return 1;
        }
    }
    atomic_fetch_add(&refused, 1);
    errno = ENOENT;
    return 0;
}

static int (*real_open)(const char *, int, ...);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fopen64)(const char *, const char *);
static int (*real_xstat)(int, const char *, struct stat *);
static int (*real_lxstat)(int, const char *, struct stat *);
static int (*real_stat)(const char *, struct stat *);
static int (*real_lstat)(const char *, struct stat *);
static int (*real_access)(const char *, int);
static DIR *(*real_opendir)(const char *);
static ssize_t (*real_readlink)(const char *, char *, size_t);
static char *(*real_realpath)(const char *, char *);
static int (*real_statfs)(const char *, struct statfs *);

static int h_open(const char *p, int flags, ...) {
    unsigned mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, unsigned);
        va_end(ap);
    }
    return may_reach(p) ? real_open(p, flags, mode) : -1;
}
static FILE *h_fopen(const char *p, const char *m) { return may_reach(p) ? real_fopen(p, m) : NULL; }
static FILE *h_fopen64(const char *p, const char *m) { return may_reach(p) ? real_fopen64(p, m) : NULL; }
static int h_xstat(int v, const char *p, struct stat *b) { return may_reach(p) ? real_xstat(v, p, b) : -1; }
static int h_lxstat(int v, const char *p, struct stat *b) { return may_reach(p) ? real_lxstat(v, p, b) : -1; }
static int h_stat(const char *p, struct stat *b) { return may_reach(p) ? real_stat(p, b) : -1; }
static int h_lstat(const char *p, struct stat *b) { return may_reach(p) ? real_lstat(p, b) : -1; }
static int h_access(const char *p, int m) { return may_reach(p) ? real_access(p, m) : -1; }
static DIR *h_opendir(const char *p) { return may_reach(p) ? real_opendir(p) : NULL; }
static ssize_t h_readlink(const char *p, char *b, size_t n) { return may_reach(p) ? real_readlink(p, b, n) : -1; }
static char *h_realpath(const char *p, char *b) { return may_reach(p) ? real_realpath(p, b) : NULL; }
static int h_statfs(const char *p, struct statfs *b) { return may_reach(p) ? real_statfs(p, b) : -1; }

static const struct { const char *name; void *hook; void **real; int opens; } HOOKS[] = {
    {"open", (void *)h_open, (void **)&real_open, 1},
    {"open64", (void *)h_open, (void **)&real_open, 1},
    {"fopen", (void *)h_fopen, (void **)&real_fopen, 1},
    {"fopen64", (void *)h_fopen64, (void **)&real_fopen64, 1},
    {"__xstat", (void *)h_xstat, (void **)&real_xstat, 0},
    {"__xstat64", (void *)h_xstat, (void **)&real_xstat, 0},
    {"__lxstat", (void *)h_lxstat, (void **)&real_lxstat, 0},
    {"__lxstat64", (void *)h_lxstat, (void **)&real_lxstat, 0},
    {"stat", (void *)h_stat, (void **)&real_stat, 0},
    {"stat64", (void *)h_stat, (void **)&real_stat, 0},
    {"lstat", (void *)h_lstat, (void **)&real_lstat, 0},
    {"lstat64", (void *)h_lstat, (void **)&real_lstat, 0},
    {"access", (void *)h_access, (void **)&real_access, 0},
    {"opendir", (void *)h_opendir, (void **)&real_opendir, 0},
    {"readlink", (void *)h_readlink, (void **)&real_readlink, 0},
    {"realpath", (void *)h_realpath, (void **)&real_realpath, 0},
    {"statfs", (void *)h_statfs, (void **)&real_statfs, 0},
    {"statfs64", (void *)h_statfs, (void **)&real_statfs, 0},
};
#define N_HOOKS (sizeof HOOKS / sizeof HOOKS[0])

/* Path functions that NVRTC might call and that are not redirected: if it imports one, its
 * compiles cannot be confined (a later NVRTC built against a newer C library, say). */
static const char *const UNHOOKED[] = {"openat", "openat64", "fstatat", "fstatat64", "statx",
    "faccessat", "freopen", "freopen64", "scandir", "glob", "creat", "mkstemp", "name_to_handle_at",
    "canonicalize_file_name", "opendir64", "truncate", "statvfs", NULL};

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

typedef struct { uintptr_t base, relro, relro_end; } relro_find;

static int find_relro(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    relro_find *f = data;
    if (info->dlpi_addr != f->base) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            f->relro = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            f->relro_end = f->relro + info->dlpi_phdr[i].p_memsz;
        }
    }
    return 1;
}

/* Points NVRTC's relocations of the HOOKS at the checks, keeping what they pointed at (the C
 * library's functions, resolved at load: RTLD_NOW). Sets confine_error on failure. */
static void redirect(void *h) {
#if defined(R_JUMP_SLOT)
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
        snprintf(confine_error, sizeof confine_error, "cannot find NVRTC's link map");
        return;
    }
    uintptr_t base = lm->l_addr;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *rel[2] = {NULL, NULL};
    size_t relsz[2] = {0, 0};
    int pltrel_is_rela = 1;
    for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
        /* glibc relocates these in place on x86-64 and AArch64; be safe if it did not */
        uintptr_t v = d->d_un.d_ptr;
        uintptr_t a = v < base ? v + base : v;
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)a; break;
        case DT_STRTAB: strtab = (const char *)a; break;
        case DT_JMPREL: rel[0] = (const ElfW(Rela) *)a; break;
        case DT_PLTRELSZ: relsz[0] = d->d_un.d_val; break;
        case DT_RELA: rel[1] = (const ElfW(Rela) *)a; break;
        case DT_RELASZ: relsz[1] = d->d_un.d_val; break;
        case DT_PLTREL: pltrel_is_rela = d->d_un.d_val == DT_RELA; break;
        }
    }
    if (!symtab || !strtab || !pltrel_is_rela) {
        snprintf(confine_error, sizeof confine_error, "NVRTC's dynamic section is not as expected");
        return;
    }
    relro_find rf = {base, 0, 0};
    dl_iterate_phdr(find_relro, &rf);
    long page = sysconf(_SC_PAGESIZE);
    int opens = 0;
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; rel[t] && i < relsz[t] / sizeof(ElfW(Rela)); i++) {
            const ElfW(Rela) *r = &rel[t][i];
            unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
            if (type != R_JUMP_SLOT && type != R_GLOB_DAT) continue;
            const char *name = strtab + symtab[ELF64_R_SYM(r->r_info)].st_name;
            for (int u = 0; UNHOOKED[u]; u++) {
                if (!strcmp(name, UNHOOKED[u])) {
                    snprintf(confine_error, sizeof confine_error, "NVRTC calls %s, which kreach "
                             "does not check", name);
                    return;
                }
            }
            for (size_t k = 0; k < N_HOOKS; k++) {
                if (strcmp(name, HOOKS[k].name) != 0) continue;
                void **slot = (void **)(base + r->r_offset);
                uintptr_t pg = (uintptr_t)slot & ~(uintptr_t)(page - 1);
                /* read-only as the loader left it: the RELRO pages up to the last whole one
                 * (a last partial page stays writable, and so must stay so here) */
                int ro = (uintptr_t)slot >= rf.relro &&
                         pg < (rf.relro_end & ~(uintptr_t)(page - 1));
                if (ro && mprotect((void *)pg, (size_t)page, PROT_READ | PROT_WRITE) != 0) {
                    snprintf(confine_error, sizeof confine_error, "cannot redirect NVRTC's %s: "
                             "mprotect: %s", name, strerror(errno));
                    return;
                }
                if (*slot != HOOKS[k].hook) {
                    *HOOKS[k].real = *slot;
                    *slot = HOOKS[k].hook;
                }
                if (ro) mprotect((void *)pg, (size_t)page, PROT_READ);
                opens += HOOKS[k].opens;
            }
        }
    }
    if (!opens)
        snprintf(confine_error, sizeof confine_error, "NVRTC imports none of open, fopen, fopen64");
#else
    (void)h;
    snprintf(confine_error, sizeof confine_error, "not implemented on this architecture");
#endif
}

static void load(void) {
    void *h = dlopen(KR_NVRTC_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load NVRTC (%s): %s", KR_NVRTC_SONAME,
                 e ? e : "?");
        return;
    }
#define KR_NVRTC_LOAD(name)                                                                     \
    if (!load_error[0]) {                                                                        \
        *(void **)&kr_nvrtc_fn.name = dlsym(h, #name);                                           \
        if (!kr_nvrtc_fn.name)                                                                   \
            snprintf(load_error, sizeof load_error, "NVRTC (%s) has no %s", KR_NVRTC_SONAME,     \
                     #name);                                                                     \
    }
    KR_NVRTC_FUNCTIONS(KR_NVRTC_LOAD)
#undef KR_NVRTC_LOAD
    if (load_error[0]) memset(&kr_nvrtc_fn, 0, sizeof kr_nvrtc_fn);
    else redirect(h);
}

int kr_nvrtc_confine_begin(const char *const *rs, int n, char *why, size_t whylen) {
    const char *e = kr_nvrtc_load();
    if (!e && confine_error[0]) e = confine_error;
    if (e) {
        snprintf(why, whylen, "cannot confine NVRTC's file access: %s", e);
        return -1;
    }
    pthread_mutex_lock(&confine_lock);
    n_roots = 0;
    for (int i = 0; i < n && n_roots < MAX_ROOTS; i++)
        if (realpath(rs[i], roots[n_roots])) n_roots++;
    atomic_store(&refused, 0);
    atomic_store(&confining, 1);
    return 0;
}

int kr_nvrtc_confine_end(void) {
    atomic_store(&confining, 0);
    int r = atomic_load(&refused);
    pthread_mutex_unlock(&confine_lock);
    return r;
}

const char *kr_nvrtc_load(void) {
    pthread_once(&once, load);
    return load_error[0] ? load_error : NULL;
}

int kr_nvrtc_dir(char *out, size_t n) {
    if (kr_nvrtc_load()) return -1;
    Dl_info info;
    if (!dladdr((void *)kr_nvrtc_fn.nvrtcVersion, &info) || !info.dli_fname) return -1;
    char buf[PATH_MAX];
    if (!realpath(info.dli_fname, buf)) return -1;
    char *slash = strrchr(buf, '/');
    if (!slash) return -1;
    *slash = 0;
    return snprintf(out, n, "%s", buf[0] ? buf : "/") < (int)n ? 0 : -1;
}
