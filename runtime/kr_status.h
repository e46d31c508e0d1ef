/* kr_status.h: status codes shared by every runtime module.
 * Runtime layer (no Lua). A runtime call returns one of these; the details (file, line, the
 * call that failed, the driver's or compiler's words) are kept on the kr_context. */
#ifndef KR_STATUS_H
#define KR_STATUS_H

typedef enum {
    KR_OK = 0,
    KR_ERR_NODEVICE,  /* no driver, no device, or the ordinal asked for does not exist */
    KR_ERR_CUDA,      /* a CUDA runtime call failed; the context may still be usable */
    KR_ERR_BROKEN,    /* a sticky CUDA error (illegal address, ...): the context is unusable */
    KR_ERR_NVRTC,     /* NVRTC itself failed (not the user's source) */
    KR_ERR_COMPILE,   /* the source did not compile; the log is in the message */
    KR_ERR_CUBLAS,
    KR_ERR_CUDNN,     /* a cuDNN call failed (its status and last error message are kept) */
    KR_ERR_LAUNCH,    /* bad launch configuration or arguments */
    KR_ERR_ARG,       /* a bad argument to a runtime call (shape, dtype, range) */
    KR_ERR_NOMEM,     /* host or device allocation failed */
    KR_ERR_IO,        /* a file could not be read or written */
    KR_ERR_NOTFOUND   /* a named thing (kernel, file) does not exist */
} kr_status;

/* "ok", "no device", "cuda", ...: a stable short name for each status. */
const char *kr_status_name(kr_status s);

#endif
