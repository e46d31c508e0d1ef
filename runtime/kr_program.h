/* kr_program.h: the layout of a compiled program, shared by kr_nvrtc.c (compile, cache),
 * kr_program.c (accessors, free) and kr_launch.c (load, launch). Runtime layer, internal: bindings use kr_nvrtc.h only. */
#ifndef KR_PROGRAM_H
#define KR_PROGRAM_H

#include "kr_nvrtc.h"

typedef struct {
    char *name;            /* what users call it: source name or instantiate expression */
    char *lowered;         /* symbol in the cubin; NULL for C++ kernels until loaded */
    int from_source;       /* signature read from the source (else demangled) */
    int cpp;               /* C++ kernel, resolved at load time */
    kr_kernel_sig sig;
    /* set when loaded */
    void *handle;          /* cudaKernel_t */
    int checked;           /* parameter sizes compared with the compiled kernel */
    int dyn_shared_limit;  /* the kernel's current cudaFuncAttributeMaxDynamicSharedMemorySize */
    kr_kernel_attrs attrs;
} kr_pkernel;

struct kr_program {
    char *name;
    char arch[32];
    char key[33];
    char *log;
    char *cache_path;
    char cache_note[512];
    kr_cache_result cache;
    double compile_ms;
    void *cubin;
    size_t cubin_size;
    int n_kernels;
    kr_pkernel *kernels;
    void *library;         /* cudaLibrary_t once loaded */
    int device;            /* the device it was loaded on */
};

#endif
