/* kr_nvrtc_api.h: NVRTC, loaded on first use. Runtime layer, internal (kr_nvrtc.c, kr_context.c,
 * kr_seal.c, kr_cublas.c). Linking libnvrtc costs every kreach process, each worker included,
 * about 27 ms at start-up (its relocations and static initialisers; measured on the CPU machine
 * with an empty program linked against it), whether it compiles anything or not. So it is opened
 * with dlopen the first time it is needed, by the soname the build was configured for, through
 * the executable's run path (then LD_LIBRARY_PATH and the system's paths, as dlopen searches).
 * Include after <nvrtc.h>: the nvrtc* names used below resolve to the loaded functions. */
#ifndef KR_NVRTC_API_H
#define KR_NVRTC_API_H

#include <nvrtc.h>

#define KR_NVRTC_FUNCTIONS(X)                                                                   \
    X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)         \
    X(nvrtcAddNameExpression) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize)                 \
    X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetLoweredName)

#define KR_NVRTC_MEMBER(name) __typeof__(&name) name;
typedef struct {
    KR_NVRTC_FUNCTIONS(KR_NVRTC_MEMBER)
} kr_nvrtc_api;
#undef KR_NVRTC_MEMBER

/* The loaded functions; valid once kr_nvrtc_load() returned NULL. */
extern kr_nvrtc_api kr_nvrtc_fn;

/* Loads NVRTC once (thread-safe). NULL when it is loaded, else why it is not ("cannot load
 * NVRTC (libnvrtc.so.13): ..."). Later calls return the first call's answer. */
const char *kr_nvrtc_load(void);

/* The directory NVRTC was loaded from (its real path, for the seal and for finding cuBLAS beside
 * it): 0, or -1 when it is not loaded or the path does not fit in n bytes. */
int kr_nvrtc_dir(char *out, size_t n);

/* Confinement of NVRTC's own file access (issue 33). NVRTC has no dependency output (no -M,
 * -MD, --generate-dependencies; its time trace lists headers only after a compile that
 * succeeds), so the only faithful list of what a compile reads is the calls it makes. When
 * NVRTC is loaded, its calls to the C library's path functions (open, fopen, fopen64, __xstat,
 * __lxstat, stat, lstat, access, opendir, readlink, realpath, statfs: those it imports) are
 * redirected, in its own relocation table only, to checks that pass through unless a confined
 * compile is running. During one, a path whose real path is not beneath one of the roots (a
 * relative path included: the working directory is never a root) fails as a missing file
 * does (ENOENT), whether it exists, is denied, or is absent: an #include of it cannot be
 * opened, __has_include of it is false, and the two cannot be told apart.
 *
 * kr_nvrtc_confine_begin: 0, with the roots set (real paths, copied) and a lock held until
 * kr_nvrtc_confine_end, which returns how many paths were refused; -1 with why when NVRTC's
 * calls could not be redirected (then no compile should run as if confined). Other threads'
 * NVRTC calls during a confined compile are checked too. */
int kr_nvrtc_confine_begin(const char *const *roots, int n, char *why, size_t whylen);
int kr_nvrtc_confine_end(void);

#ifndef KR_NVRTC_API_IMPL
#define nvrtcVersion (kr_nvrtc_fn.nvrtcVersion)
#define nvrtcGetErrorString (kr_nvrtc_fn.nvrtcGetErrorString)
#define nvrtcCreateProgram (kr_nvrtc_fn.nvrtcCreateProgram)
#define nvrtcDestroyProgram (kr_nvrtc_fn.nvrtcDestroyProgram)
#define nvrtcAddNameExpression (kr_nvrtc_fn.nvrtcAddNameExpression)
#define nvrtcCompileProgram (kr_nvrtc_fn.nvrtcCompileProgram)
#define nvrtcGetProgramLogSize (kr_nvrtc_fn.nvrtcGetProgramLogSize)
#define nvrtcGetProgramLog (kr_nvrtc_fn.nvrtcGetProgramLog)
#define nvrtcGetCUBINSize (kr_nvrtc_fn.nvrtcGetCUBINSize)
#define nvrtcGetCUBIN (kr_nvrtc_fn.nvrtcGetCUBIN)
#define nvrtcGetLoweredName (kr_nvrtc_fn.nvrtcGetLoweredName)
#endif

#endif
