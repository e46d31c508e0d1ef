/* kr_context.c: device selection, properties, the harness stream, versions, error details.
 * Runtime layer (no Lua). The CUDA runtime is linked statically and loads the driver itself on
 * first use, so this file is where a machine without a GPU is detected and explained. */
#define _GNU_SOURCE
#include "kr_context.h"

#include <cuda_runtime.h>
#include <nvrtc.h>
#include "kr_nvrtc_api.h"
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct kr_context {
    int refs;
    int ordinal;
    int state;                 /* 0 untried, 1 open, -1 failed */
    cudaStream_t stream;
    kr_device_info info;
    kr_status status;
    char *msg;
    size_t msg_cap;
    int broken;
    char broken_msg[1024];
    char last_kernel[256];
    unsigned long launches_since_sync;
    void *ext[KR_EXT_COUNT];
    void (*ext_dtor[KR_EXT_COUNT])(void *);
};

const char *kr_status_name(kr_status s) {
    switch (s) {
    case KR_OK: return "ok";
    case KR_ERR_NODEVICE: return "no device";
    case KR_ERR_CUDA: return "cuda";
    case KR_ERR_BROKEN: return "broken context";
    case KR_ERR_NVRTC: return "nvrtc";
    case KR_ERR_COMPILE: return "compile";
    case KR_ERR_CUBLAS: return "cublas";
    case KR_ERR_CUDNN: return "cudnn";
    case KR_ERR_LAUNCH: return "launch";
    case KR_ERR_ARG: return "argument";
    case KR_ERR_NOMEM: return "out of memory";
    case KR_ERR_IO: return "io";
    case KR_ERR_NOTFOUND: return "not found";
    }
    return "unknown";
}

kr_context *kr_context_new(int ordinal) {
    kr_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    ctx->refs = 1;
    if (ordinal < 0 && ordinal != KR_HOST_ORDINAL) {
        const char *env = getenv("KREACH_DEVICE");
        char *end = NULL;
        long v = env && *env ? strtol(env, &end, 10) : 0;
        /* A malformed KREACH_DEVICE is remembered as an impossible ordinal so that opening the
         * device reports it, instead of silently using device 0. */
        ordinal = (env && *env && (*end || v < 0 || v > 1024)) ? -2 : (int)v;
        if (env && strcmp(env, "host") == 0) ordinal = KR_HOST_ORDINAL;
    }
    ctx->ordinal = ordinal;
    ctx->msg_cap = 256;
    ctx->msg = calloc(1, ctx->msg_cap);
    if (!ctx->msg) { free(ctx); return NULL; }
    return ctx;
}

kr_context *kr_context_retain(kr_context *ctx) {
    if (ctx) ctx->refs++;
    return ctx;
}

void kr_context_release(kr_context *ctx) {
    if (!ctx || --ctx->refs > 0) return;
    for (int i = KR_EXT_COUNT - 1; i >= 0; i--)
        if (ctx->ext[i] && ctx->ext_dtor[i]) ctx->ext_dtor[i](ctx->ext[i]);
    if (ctx->state == 1 && ctx->stream) {
        cudaStreamSynchronize(ctx->stream);
        cudaStreamDestroy(ctx->stream);
    }
    free(ctx->msg);
    free(ctx);
}

void *kr_context_ext(kr_context *ctx, kr_ext_slot slot) { return ctx->ext[slot]; }

void kr_context_set_ext(kr_context *ctx, kr_ext_slot slot, void *ptr, void (*dtor)(void *)) {
    ctx->ext[slot] = ptr;
    ctx->ext_dtor[slot] = dtor;
}

/* ---- errors ---- */

/* Formats into a fresh buffer: the arguments may include the current message itself. */
static void set_msg(kr_context *ctx, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    char small[1];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) n = 0;
    char *p = malloc((size_t)n + 1);
    if (p) {
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
        free(ctx->msg);
        ctx->msg = p;
        ctx->msg_cap = (size_t)n + 1;
    }
    va_end(ap2);
}

kr_status kr_set_error(kr_context *ctx, kr_status s, const char *file, int line,
                       const char *fmt, ...) {
    (void)file; (void)line; /* kept for debugging builds; messages stay user-facing */
    ctx->status = s;
    va_list ap;
    va_start(ap, fmt);
    set_msg(ctx, fmt, ap);
    va_end(ap);
    return s;
}

void kr_clear_error(kr_context *ctx) {
    ctx->status = KR_OK;
    ctx->msg[0] = 0;
}

kr_status kr_context_status(const kr_context *ctx) { return ctx->status; }
const char *kr_context_errmsg(const kr_context *ctx) { return ctx->msg; }
int kr_context_broken(const kr_context *ctx) { return ctx->broken; }
int kr_context_state(const kr_context *ctx) { return ctx->state; }
int kr_context_ordinal(const kr_context *ctx) { return ctx->ordinal; }
int kr_context_is_host(const kr_context *ctx) { return ctx->ordinal == KR_HOST_ORDINAL; }

kr_status kr_context_not_on_host(kr_context *ctx, const char *what) {
    return kr_set_error(ctx, KR_ERR_ARG, __FILE__, __LINE__,
                        "%s is not available on the host device (KREACH_DEVICE=host)", what);
}
void *kr_context_stream(kr_context *ctx) { return ctx->state == 1 ? (void *)ctx->stream : NULL; }

/* Errors after which the CUDA context is corrupt and every later call fails the same way. */
static int is_sticky(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress: case cudaErrorLaunchFailure: case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction: case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace: case cudaErrorInvalidPc: case cudaErrorAssert:
    case cudaErrorLaunchTimeout: case cudaErrorECCUncorrectable: case cudaErrorContextIsDestroyed:
        return 1;
    default:
        return 0;
    }
}

kr_status kr_cuda_check(kr_context *ctx, int err, const char *call, const char *file, int line) {
    cudaError_t e = (cudaError_t)err;
    if (e == cudaSuccess) return KR_OK;
    const char *tail = "";
    char launched[512] = "";
    if (ctx->launches_since_sync > 0 && ctx->last_kernel[0]) {
        if (ctx->launches_since_sync == 1)
            snprintf(launched, sizeof launched, " after kernel '%s'", ctx->last_kernel);
        else
            snprintf(launched, sizeof launched,
                     " after kernel '%s' (the last of %lu kernels launched since the previous"
                     " synchronisation)", ctx->last_kernel, ctx->launches_since_sync);
    }
    if (is_sticky(e)) {
        ctx->broken = 1;
        tail = "; the CUDA context is unusable from here on";
        kr_set_error(ctx, KR_ERR_BROKEN, file, line, "%s: %s (%s)%s%s", call,
                     cudaGetErrorString(e), cudaGetErrorName(e), launched, tail);
        snprintf(ctx->broken_msg, sizeof ctx->broken_msg, "%s", ctx->msg);
        return KR_ERR_BROKEN;
    }
    kr_status s = (e == cudaErrorMemoryAllocation) ? KR_ERR_NOMEM : KR_ERR_CUDA;
    return kr_set_error(ctx, s, file, line, "%s: %s (%s)", call, cudaGetErrorString(e),
                        cudaGetErrorName(e));
}

/* ---- device ---- */

static kr_status nodevice(kr_context *ctx, const char *fmt, ...) {
    ctx->state = -1;
    ctx->status = KR_ERR_NODEVICE;
    va_list ap;
    va_start(ap, fmt);
    set_msg(ctx, fmt, ap);
    va_end(ap);
    return KR_ERR_NODEVICE;
}

static void read_info(kr_context *ctx) {
    kr_device_info *d = &ctx->info;
    struct cudaDeviceProp p;
    memset(d, 0, sizeof *d);
    d->ordinal = ctx->ordinal;
    if (cudaGetDeviceProperties(&p, ctx->ordinal) == cudaSuccess) {
        snprintf(d->name, sizeof d->name, "%s", p.name);
        d->cc_major = p.major;
        d->cc_minor = p.minor;
        d->sm_count = p.multiProcessorCount;
        d->max_threads_per_block = p.maxThreadsPerBlock;
        d->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
        d->warp_size = p.warpSize;
        for (int i = 0; i < 3; i++) {
            d->max_grid[i] = p.maxGridSize[i];
            d->max_block[i] = p.maxThreadsDim[i];
        }
        d->shared_per_block = p.sharedMemPerBlock;
        d->shared_per_block_optin = p.sharedMemPerBlockOptin;
        d->shared_per_sm = p.sharedMemPerMultiprocessor;
        d->regs_per_block = p.regsPerBlock;
        d->l2_bytes = (size_t)p.l2CacheSize;
        d->persisting_l2_max_bytes = (size_t)p.persistingL2CacheMaxSize;
        d->total_mem_bytes = p.totalGlobalMem;
        d->mem_bus_width_bits = p.memoryBusWidth;
        d->ecc = p.ECCEnabled;
        const unsigned char *u = (const unsigned char *)p.uuid.bytes;
        snprintf(d->uuid, sizeof d->uuid,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                 u[12], u[13], u[14], u[15]);
    }
    cudaDeviceGetAttribute(&d->sm_clock_khz, cudaDevAttrClockRate, ctx->ordinal);
    cudaDeviceGetAttribute(&d->mem_clock_khz, cudaDevAttrMemoryClockRate, ctx->ordinal);
    cudaDeviceGetPCIBusId(d->pci_bus_id, (int)sizeof d->pci_bus_id, ctx->ordinal);
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) == cudaSuccess) d->free_mem_bytes = fr;
}

/* The host device: the facts kreach's CUDA emulation (scripts/kreach/emulate.lua) presents,
 * an sm_90-like device with 4 SMs, and the machine's memory. */
static void host_info(kr_context *ctx) {
    kr_device_info *d = &ctx->info;
    memset(d, 0, sizeof *d);
    d->ordinal = KR_HOST_ORDINAL;
    snprintf(d->name, sizeof d->name, "host (kreach's CUDA emulation on the CPU)");
    snprintf(d->uuid, sizeof d->uuid, "host");
    snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "host");
    d->cc_major = 9;
    d->cc_minor = 0;
    d->sm_count = 4;
    d->max_threads_per_block = 1024;
    d->max_threads_per_sm = 2048;
    d->warp_size = 32;
    d->max_grid[0] = 2147483647;
    d->max_grid[1] = d->max_grid[2] = 65535;
    d->max_block[0] = d->max_block[1] = 1024;
    d->max_block[2] = 64;
    d->shared_per_block = 49152;
    d->shared_per_block_optin = 232448;
    d->shared_per_sm = 233472;
    d->regs_per_block = 65536;
    long page = sysconf(_SC_PAGESIZE), phys = sysconf(_SC_PHYS_PAGES),
         avail = sysconf(_SC_AVPHYS_PAGES);
    if (page > 0 && phys > 0) d->total_mem_bytes = (size_t)phys * (size_t)page;
    if (page > 0 && avail > 0) d->free_mem_bytes = (size_t)avail * (size_t)page;
}

kr_status kr_context_require(kr_context *ctx) {
    if (ctx->ordinal == KR_HOST_ORDINAL) {
        if (ctx->state != 1) {
            host_info(ctx);
            ctx->state = 1;
            kr_clear_error(ctx);
        }
        return KR_OK;
    }
    if (ctx->state == 1) {
        if (ctx->broken)
            return kr_set_error(ctx, KR_ERR_BROKEN, __FILE__, __LINE__,
                                "the CUDA context is unusable after an earlier error: %s",
                                ctx->broken_msg);
        return KR_OK;
    }
    if (ctx->state == -1) return ctx->status = KR_ERR_NODEVICE; /* message kept from the try */
    if (ctx->ordinal == -2)
        return nodevice(ctx, "KREACH_DEVICE='%s' is not a device number",
                        getenv("KREACH_DEVICE") ? getenv("KREACH_DEVICE") : "");
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        /* The runtime's words for a missing driver ("driver version is insufficient") hide
         * the usual cause, so the loader's own message comes first when it has one. */
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
        if (!h) {
            const char *why = dlerror();
            return nodevice(ctx, "%s (%s)", why ? why : "libcuda.so.1 not found",
                            cudaGetErrorName(e));
        }
        dlclose(h);
        return nodevice(ctx, "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    }
    if (n == 0) return nodevice(ctx, "the driver reports no CUDA devices");
    if (ctx->ordinal >= n)
        return nodevice(ctx, "device %d asked for, but the driver reports %d device%s "
                        "(0 to %d)", ctx->ordinal, n, n == 1 ? "" : "s", n - 1);
    e = cudaSetDevice(ctx->ordinal);
    if (e == cudaSuccess) e = cudaFree(0); /* creates the primary context now, not mid-timing */
    if (e != cudaSuccess)
        return nodevice(ctx, "device %d: %s (%s)", ctx->ordinal, cudaGetErrorString(e),
                        cudaGetErrorName(e));
    e = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return nodevice(ctx, "device %d: cannot create a stream: %s", ctx->ordinal,
                        cudaGetErrorString(e));
    ctx->state = 1;
    read_info(ctx);
    kr_clear_error(ctx);
    return KR_OK;
}

kr_status kr_context_device(kr_context *ctx, kr_device_info *out) {
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    *out = ctx->info;
    return KR_OK;
}

void kr_context_versions(kr_context *ctx, kr_versions *out) {
    (void)ctx;
    memset(out, 0, sizeof *out);
    if (cudaDriverGetVersion(&out->driver) != cudaSuccess) out->driver = 0;
    if (cudaRuntimeGetVersion(&out->runtime) != cudaSuccess) out->runtime = 0;
    if (kr_nvrtc_load() || nvrtcVersion(&out->nvrtc_major, &out->nvrtc_minor) != NVRTC_SUCCESS)
        out->nvrtc_major = out->nvrtc_minor = 0;
}

void kr_context_note_launch(kr_context *ctx, const char *kernel) {
    snprintf(ctx->last_kernel, sizeof ctx->last_kernel, "%s", kernel);
    ctx->launches_since_sync++;
}

kr_status kr_context_sync(kr_context *ctx) {
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (ctx->ordinal == KR_HOST_ORDINAL) { /* host work is done when its call returns */
        ctx->launches_since_sync = 0;
        return KR_OK;
    }
    s = KR_CUDA(ctx, cudaStreamSynchronize(ctx->stream));
    if (s == KR_OK) ctx->launches_since_sync = 0;
    return s;
}
