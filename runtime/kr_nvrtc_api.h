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
