/* kr_nvrtc_api.c: loading NVRTC on first use (kr_nvrtc_api.h says why). Runtime layer. */
#define _GNU_SOURCE /* dladdr */
#define KR_NVRTC_API_IMPL
#include "kr_nvrtc_api.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KR_NVRTC_SONAME
#error "KR_NVRTC_SONAME (libnvrtc.so.<major>) is set by CMakeLists.txt"
#endif

kr_nvrtc_api kr_nvrtc_fn;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

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
