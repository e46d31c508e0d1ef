/* kr_context.h: the device context every runtime call takes explicitly.
 * Runtime layer (no Lua). A context exists without a GPU (NVRTC compiles, versions are read);
 * the device is opened on first need, and that is where "no CUDA device" is reported.
 * The context owns the one stream all harness work runs on, and the last error's details. */
#ifndef KR_CONTEXT_H
#define KR_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include "kr_status.h"

typedef struct kr_context kr_context;

typedef struct {
    int ordinal;
    char name[256];
    char pci_bus_id[32];
    char uuid[40];
    int cc_major, cc_minor;
    int sm_count;
    int max_threads_per_block;
    int max_threads_per_sm;
    int warp_size;
    int max_grid[3];
    int max_block[3];
    size_t shared_per_block;        /* without opt-in */
    size_t shared_per_block_optin;  /* the most a kernel may ask for after opting in */
    size_t shared_per_sm;
    int regs_per_block;
    size_t l2_bytes;
    size_t persisting_l2_max_bytes;
    size_t total_mem_bytes;
    size_t free_mem_bytes;          /* at the time the device was opened */
    int sm_clock_khz;               /* peak clocks from the device attributes */
    int mem_clock_khz;
    int mem_bus_width_bits;
    int ecc;
} kr_device_info;

typedef struct {
    int driver;    /* cudaDriverGetVersion, e.g. 13000; 0 when there is no driver */
    int runtime;   /* cudaRuntimeGetVersion */
    int nvrtc_major, nvrtc_minor;
} kr_versions; /* cuBLAS's version is kr_cublas_version (kr_cublas.h): the context does not own it */

/* The ordinal of the host device: kreach's CUDA emulation on the CPU, chosen with
 * KREACH_DEVICE=host (or by passing it to kr_context_new). Opening it touches no CUDA: there is
 * no stream, the device info describes the emulation, tensors live in host memory
 * (kr_tensor.h), GEMM runs on the CPU (kr_cublas.h), kernels run through kr_host_call
 * (kr_host.h), and what needs a GPU (events, graphs, the L2 flush, the timing gate, NVML, CUDA
 * IPC, cuBLAS's handle, cuDNN, kr_launch) fails with KR_ERR_ARG "<what> is not available on the
 * host device (KREACH_DEVICE=host)". NVRTC compiles as usual (for sm_90 by default). */
#define KR_HOST_ORDINAL (-3)

/* Creates a context for device `ordinal` (-1: $KREACH_DEVICE, else 0; "host" in
 * KREACH_DEVICE, or KR_HOST_ORDINAL, is the host device; another non-number is remembered as
 * -2, which opening reports). Touches no GPU.
 * Returns NULL only when out of host memory. The caller owns one reference. */
kr_context *kr_context_new(int ordinal);
kr_context *kr_context_retain(kr_context *ctx);
/* Drops a reference; the last one synchronises, destroys the stream and frees the context. */
void kr_context_release(kr_context *ctx);

/* Opens the device if it is not open yet. KR_ERR_NODEVICE with the driver's words when there is
 * no usable GPU; the same status on every later call (the attempt is not retried). */
kr_status kr_context_require(kr_context *ctx);
/* 1 when the device was opened, 0 when it has not been tried, -1 when opening it failed. */
int kr_context_state(const kr_context *ctx);
/* Device properties; requires the device (kr_context_require). */
kr_status kr_context_device(kr_context *ctx, kr_device_info *out);
/* Versions: needs no GPU; fields that cannot be read are 0. */
void kr_context_versions(kr_context *ctx, kr_versions *out);
int kr_context_ordinal(const kr_context *ctx);
/* 1 when the context is the host device (KR_HOST_ORDINAL), else 0. Needs no GPU. */
int kr_context_is_host(const kr_context *ctx);
/* Records KR_ERR_ARG "<what> is not available on the host device (KREACH_DEVICE=host)" and
 * returns it: what the GPU-only functions give on the host device. */
kr_status kr_context_not_on_host(kr_context *ctx, const char *what);
/* The harness stream (a cudaStream_t), or NULL before the device is opened (and always NULL on
 * the host device). */
void *kr_context_stream(kr_context *ctx);

/* Waits for all work on the harness stream. An asynchronous fault is reported here, naming
 * the last kernel launched since the previous successful synchronisation. On the host device
 * all work is synchronous: KR_OK. */
kr_status kr_context_sync(kr_context *ctx);

/* The last error: its status, its message (never NULL; "" when none), and the source location
 * in the runtime where it was raised. */
kr_status kr_context_status(const kr_context *ctx);
const char *kr_context_errmsg(const kr_context *ctx);
/* Whether a sticky CUDA error has made the device context unusable. */
int kr_context_broken(const kr_context *ctx);

/* Records the name of a kernel about to be launched, for fault reports at the next sync. */
void kr_context_note_launch(kr_context *ctx, const char *kernel);

/* Per-context state owned by other runtime modules (the cuBLAS handle, the compile cache),
 * destroyed with the context by its `dtor`. */
typedef enum {
    KR_EXT_CUBLAS, KR_EXT_NVRTC, KR_EXT_CUDNN, KR_EXT_TIMING, KR_EXT_NVML, KR_EXT_COUNT
} kr_ext_slot;
void *kr_context_ext(kr_context *ctx, kr_ext_slot slot);
void kr_context_set_ext(kr_context *ctx, kr_ext_slot slot, void *ptr, void (*dtor)(void *));

/* ---- for runtime modules: error recording ---- */
kr_status kr_set_error(kr_context *ctx, kr_status s, const char *file, int line,
                       const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
void kr_clear_error(kr_context *ctx);
/* Turns a cudaError_t (passed as int) from `call` into a status and message; a sticky error
 * marks the context broken. Returns KR_OK for cudaSuccess. */
kr_status kr_cuda_check(kr_context *ctx, int err, const char *call, const char *file, int line);

#define KR_ERROR(ctx, s, ...) kr_set_error((ctx), (s), __FILE__, __LINE__, __VA_ARGS__)
#define KR_CUDA(ctx, call) kr_cuda_check((ctx), (int)(call), #call, __FILE__, __LINE__)

#endif
