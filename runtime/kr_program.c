/* kr_program.c: a compiled program's accessors and its freeing (its layout is kr_program.h's;
 * it is made by kr_nvrtc.c, compiled or read from the cache, and loaded and launched by
 * kr_launch.c). Runtime layer (no Lua). */
#include "kr_program.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

const char *kr_cache_result_name(kr_cache_result r) {
    switch (r) {
    case KR_CACHE_OFF: return "off";
    case KR_CACHE_MISS: return "miss";
    case KR_CACHE_MEMORY: return "memory";
    case KR_CACHE_DISK: return "disk";
    case KR_CACHE_REBUILT: return "rebuilt";
    }
    return "?";
}

void kr_program_free(kr_program *p) {
    if (!p) return;
    if (p->library) {
        int cur = -1;
        /* unloading needs the device it was loaded on to be current */
        if (cudaGetDevice(&cur) == cudaSuccess && cur != p->device) cudaSetDevice(p->device);
        cudaLibraryUnload((cudaLibrary_t)p->library);
        if (cur >= 0 && cur != p->device) cudaSetDevice(cur);
    }
    for (int i = 0; i < p->n_kernels; i++) {
        free(p->kernels[i].name);
        free(p->kernels[i].lowered);
    }
    free(p->kernels);
    free(p->name);
    free(p->log);
    free(p->cache_path);
    free(p->cubin);
    free(p);
}

const char *kr_program_name(const kr_program *p) { return p->name; }
const char *kr_program_arch(const kr_program *p) { return p->arch; }
const char *kr_program_log(const kr_program *p) { return p->log; }
const char *kr_program_key(const kr_program *p) { return p->key; }
const char *kr_program_cache_path(const kr_program *p) { return p->cache_path ? p->cache_path : ""; }
const char *kr_program_cache_note(const kr_program *p) { return p->cache_note; }
kr_cache_result kr_program_cache_result(const kr_program *p) { return p->cache; }
double kr_program_compile_ms(const kr_program *p) { return p->compile_ms; }
const void *kr_program_cubin(const kr_program *p, size_t *size) {
    *size = p->cubin_size;
    return p->cubin;
}
int kr_program_n_kernels(const kr_program *p) { return p->n_kernels; }
const char *kr_program_kernel_name(const kr_program *p, int i) { return p->kernels[i].name; }
const kr_kernel_sig *kr_program_kernel_sig(const kr_program *p, int i) { return &p->kernels[i].sig; }

int kr_program_find(const kr_program *p, const char *name) {
    for (int i = 0; i < p->n_kernels; i++)
        if (strcmp(p->kernels[i].name, name) == 0) return i;
    return -1;
}
