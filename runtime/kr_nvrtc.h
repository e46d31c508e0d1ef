/* kr_nvrtc.h: run-time compilation with NVRTC, the compile cache, and kernel launches.
 * Runtime layer (no Lua). Compiling needs no GPU (give an explicit arch); loading and launching
 * do. A program owns its cubin, its kernels' signatures and, once loaded, a CUDA library. */
#ifndef KR_NVRTC_H
#define KR_NVRTC_H

#include <stddef.h>
#include <stdint.h>
#include "kr_context.h"
#include "kr_sig.h"

typedef struct kr_program kr_program;

typedef struct {
    const char *source;               /* CUDA C++ source, required */
    const char *name;                 /* file name used in compiler messages; "kernel.cu" */
    const char *const *options;       /* NVRTC options, passed as given */
    int n_options;
    const char *arch;                 /* "sm_90"; NULL: the device's own (needs the GPU) */
    const char *cache_dir;            /* NULL: $KREACH_CACHE_DIR, else $XDG_CACHE_HOME/kreach,
                                         else ~/.cache/kreach; "": no disk cache */
    int no_cache;                     /* skip the memory and disk caches altogether */
    const char *const *instantiate;   /* name expressions of C++ kernels: "scale<float, 4>" */
    int n_instantiate;
    int confine;                      /* NVRTC may reach only the toolkit's include directory
                                         and the options' -I directories (below) */
} kr_build_opts;

typedef enum {
    KR_CACHE_OFF = 0,  /* compiled; caching disabled */
    KR_CACHE_MISS,     /* compiled and stored */
    KR_CACHE_MEMORY,   /* found in this process's memory cache */
    KR_CACHE_DISK,     /* read from the disk cache */
    KR_CACHE_REBUILT   /* a corrupt disk entry was found, compiled again and replaced */
} kr_cache_result;

const char *kr_cache_result_name(kr_cache_result r);

/* Compiles (or fetches from the cache) and returns a new program in *out, owned by the caller.
 * KR_ERR_COMPILE when the source does not compile: the message carries NVRTC's log, whose
 * lines read "name(LINE): error: ...". A disk cache that cannot be written is not an error (the
 * program is still returned; kr_program_cache_note says why). */
kr_status kr_nvrtc_build(kr_context *ctx, const kr_build_opts *o, kr_program **out);

/* A confined build (o->confine, or a source given to kr_nvrtc_confine_source) compiles with
 * NVRTC's own calls to open, stat, access and the like checked (kr_nvrtc_api.h): a path whose
 * real path is not beneath the toolkit's include directory or a -I directory of the options
 * (never the working directory) is a missing file to NVRTC, whether it exists, is denied or is
 * absent, so an #include of it fails with one message and __has_include of it is false. This
 * is the check that agrees with NVRTC's preprocessor, as no list of opened files comes out of
 * NVRTC (no dependency output). KR_ERR_NVRTC when NVRTC's calls cannot be checked (an NVRTC
 * that calls a path function kreach does not know): such a build does not run unconfined.
 * The cache keys confined builds apart. */

/* Marks a source (its exact text) to be built confined from now on, in this process, whoever
 * builds it: kreach.candidate.directives marks each candidate source it has checked, so the candidate's
 * compile gets this second layer without its callers asking. 0, or -1 out of memory. */
int kr_nvrtc_confine_source(const char *source);

/* The disk cache's cap from $KREACH_CACHE_MAX (what every build reads): 0 with *bytes set
 * (the default, 2 GiB, when it is unset or empty; 0 bytes: no disk cache), or -1 with a
 * message naming the variable when its value is not a size. A parent that starts workers
 * asks this first, so that a bad value is refused once, not in each worker's compile. */
int kr_nvrtc_cache_max(unsigned long long *bytes, char *err, size_t errlen);

/* Loads NVRTC now (it is otherwise loaded by the first build): NULL when it is loaded, else
 * why it cannot be. A process that wants the load apart from a compile's time calls this. */
const char *kr_nvrtc_ensure_loaded(void);
void kr_program_free(kr_program *p);

const char *kr_program_name(const kr_program *p);
const char *kr_program_arch(const kr_program *p);
const char *kr_program_log(const kr_program *p);      /* warnings; "" when none */
const char *kr_program_key(const kr_program *p);      /* cache key, 32 hex digits */
const char *kr_program_cache_path(const kr_program *p); /* "" without a disk cache */
const char *kr_program_cache_note(const kr_program *p); /* why the disk cache was not used */
kr_cache_result kr_program_cache_result(const kr_program *p);
double kr_program_compile_ms(const kr_program *p);    /* time spent in build, cache included */
const void *kr_program_cubin(const kr_program *p, size_t *size);

/* Kernels: extern "C" kernels of the source, the `instantiate` expressions, and the source's
 * other (C++) kernels, which are matched to their mangled names when the program is loaded. */
int kr_program_n_kernels(const kr_program *p);
/* Index of the kernel named `name` (a source name or an instantiate expression), or -1. */
int kr_program_find(const kr_program *p, const char *name);
const char *kr_program_kernel_name(const kr_program *p, int i);
/* The signature; for a C++ kernel not yet loaded it is the one read from the source. */
const kr_kernel_sig *kr_program_kernel_sig(const kr_program *p, int i);

typedef struct {
    int num_regs;
    size_t static_shared_bytes;
    size_t local_bytes;
    int max_threads_per_block;   /* for this kernel, given its registers */
    int binary_version;
    char mangled[256];
} kr_kernel_attrs;

/* Loads the program on the device if needed, then the kernel's attributes. */
kr_status kr_program_kernel_attrs(kr_context *ctx, kr_program *p, int i, kr_kernel_attrs *out);

typedef struct { unsigned x, y, z; } kr_dim3;

/* What a launch configuration is checked against: the device's (or architecture's) limits and
 * the kernel's own (its registers and __launch_bounds__ bound its threads per block; its
 * static shared memory leaves the rest for dynamic). */
typedef struct {
    int max_threads_per_block;   /* for this kernel */
    int max_block[3];
    int max_grid[3];
    size_t shared_optin;         /* the most static + dynamic shared memory a block may use */
    size_t static_shared;        /* the kernel's static shared memory */
    int num_regs;                /* registers per thread; 0 when unknown */
    char from[32];               /* whose limits, for messages: "sm_90" or "the device" */
} kr_launch_limits;

/* The limits of kernel `i` without a GPU: the documented limits of the program's architecture
 * (sm_75 to sm_121) and what the cubin says of the kernel (static shared memory, registers,
 * __launch_bounds__). KR_ERR_ARG for an architecture kreach has no table for. */
/* Whether kreach has launch limits for `arch` ("sm_90", "sm_90a", "sm_100f"): 1 if so; 0 if
 * not, with a message naming the ones it has (what --arch on lint takes). No context needed. */
int kr_launch_arch_known(const char *arch, char *msg, size_t msglen);

kr_status kr_launch_limits_arch(kr_context *ctx, const kr_program *p, int i,
                                kr_launch_limits *out);
/* The limits of kernel `i` on the device: its properties and the loaded kernel's attributes
 * (loads the program). */
kr_status kr_launch_limits_device(kr_context *ctx, kr_program *p, int i, kr_launch_limits *out);
/* Checks a configuration against limits, as every launch does: no empty dimension, threads per
 * block, block and grid dimensions, dynamic shared memory. KR_OK, or KR_ERR_LAUNCH with a
 * message naming the kernel and the limit. Needs no GPU. */
kr_status kr_launch_check(kr_context *ctx, const kr_program *p, int i, const kr_launch_limits *lim,
                          kr_dim3 grid, kr_dim3 block, size_t shared_bytes);

/* Launches kernel `i` on the harness stream. `args[j]` points at the value of parameter j, in
 * the representation of its type (the binding converts and checks them against the signature;
 * this call checks the count and sizes against the compiled kernel). Checks the configuration
 * against the device and the kernel (threads per block, grid limits, dynamic shared memory,
 * raising the kernel's limit above 48 KiB when asked). KR_ERR_LAUNCH with a message naming
 * the kernel on a bad configuration. */
kr_status kr_launch(kr_context *ctx, kr_program *p, int i, kr_dim3 grid, kr_dim3 block,
                    size_t shared_bytes, void **args);

/* ---- internal to the runtime (kr_launch.c): loading ---- */
kr_status kr_program_load(kr_context *ctx, kr_program *p);

#endif
