/* kr_cudnn.h: convolutions and transposed convolutions through cuDNN 9, loaded at run time.
 * Runtime layer (no Lua). Where cuDNN lives is policy (scripts/kreach/cudnn.lua finds it): this
 * module loads the file it is given, keeps one cuDNN handle per context bound to the harness
 * stream, and runs convolutions with a plan (descriptors, algorithm, workspace) cached per
 * descriptor, so that a repeated call queries no heuristics and allocates nothing. */
#ifndef KR_CUDNN_H
#define KR_CUDNN_H

#include <stddef.h>
#include "kr_context.h"
#include "kr_tensor.h"

/* Loads cuDNN once per process with dlopen: `path` (a file), or the soname "libcudnn.so.9"
 * when NULL (the executable's run path, LD_LIBRARY_PATH, the loader's cache and the system's
 * directories, as dlopen searches). Needs no GPU. Once one cuDNN is loaded it stays: loading
 * it again (NULL, or a path naming the same file) is KR_OK; another file is KR_ERR_ARG. A file
 * that does not load is KR_ERR_NOTFOUND with the loader's words; one that loads but is not
 * cuDNN 9 (a missing entry point, another major version) is KR_ERR_NOTFOUND too, and is
 * unloaded. A failed attempt leaves nothing loaded, so another path may be tried. */
kr_status kr_cudnn_load(kr_context *ctx, const char *path);
/* (On the host device, KREACH_DEVICE=host, loading is KR_ERR_NOTFOUND "the host device has no
 * cuDNN", so that kreach.cudnn.available() says so and nothing is loaded.) */

/* The loaded cuDNN's version (cudnnGetVersion: major*10000 + minor*100 + patch, e.g. 91900),
 * or 0 when none is loaded. Loads nothing. */
int kr_cudnn_version(void);

/* The real path of the loaded library: 0, or -1 when none is loaded or it does not fit. */
int kr_cudnn_path(char *out, size_t n);

/* Loads now what cuDNN would open on first use: its sub-libraries (libcudnn_graph, _ops, _cnn,
 * _engines_precompiled, _engines_runtime_compiled, _heuristic: those present beside the loaded
 * libcudnn.so.9) with their dependencies from the system's directories, and the cuBLASLt its
 * engines open (found as they would find it); and, when the device is open, creates the
 * context's handle. What a worker does before it seals itself, after which those directories
 * are out of reach. KR_ERR_ARG when no cuDNN is loaded; KR_ERR_NOTFOUND with the loader's words
 * when a sub-library present, or cuBLASLt, fails to load. */
kr_status kr_cudnn_preload(kr_context *ctx);

typedef struct {
    /* 0: y = conv(x, w) (torch.nn.functional.conv1d/2d/3d; cudnnConvolutionForward).
     * 1: y = conv_transpose(x, w) (conv_transpose1d/2d/3d; cudnnConvolutionBackwardData). */
    int transposed;
    int stride[3];         /* per spatial dimension, in order (1-D uses [0] only); >= 1 */
    int padding[3];        /* >= 0 */
    int dilation[3];       /* >= 1 */
    int output_padding[3]; /* transposed only; each below the stride or the dilation */
    int groups;            /* >= 1; divides the input and output channels */
    /* How the engine is chosen (docs/scripting.md, "cuDNN"):
     * KR_CUDNN_SELECT_PYTORCH: as PyTorch eager does with torch.backends.cudnn.benchmark off
     *   (KernelBench's setting): the first configuration, in the order of cuDNN's heuristics
     *   then its fallback list, that PyTorch's filters keep and that builds and runs;
     * KR_CUDNN_SELECT_FASTEST: as with benchmark on: the fastest of those configurations and
     *   one for every engine that supports the graph, timed on the first call's tensors. */
    int select;
} kr_cudnn_conv_desc;

enum { KR_CUDNN_SELECT_PYTORCH = 0, KR_CUDNN_SELECT_FASTEST = 1 };

/* stride 1, padding 0, dilation 1, no output padding, one group. A zeroed descriptor has stride
 * and dilation 0, which are refused: start from this. */
#define KR_CUDNN_CONV_DESC_DEFAULT { 0, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1, KR_CUDNN_SELECT_PYTORCH }

/* What a call ran, for the report. algo_name is "engine N (heuristics|fallback|every engine)[, tensor
 * cores][, nondeterministic][, fastest of M timed]" (valid until the next call on the context), math_name "FMA" or
 * "tensor cores" (the engine's numerical notes). */
typedef struct {
    int algo;               /* the engine's global index */
    const char *algo_name;
    const char *math_name;
    size_t workspace_bytes; /* what the algorithm needs */
    int cached;             /* 1 when the plan came from the cache */
} kr_cudnn_conv_info;

/* The context's counters: plans made (each one heuristics query), calls served by a cached
 * plan, plans held now, and the size of the context's workspace. */
typedef struct {
    unsigned long heuristic_queries;
    unsigned long plan_hits;
    int plans;
    size_t workspace_bytes;
} kr_cudnn_stats;

/* y = conv(x, w) + bias, or conv_transpose(x, w) + bias, on the harness stream.
 * - Layout: contiguous NCL, NCHW or NCDHW tensors (3-, 4- or 5-D, 1 to 3 spatial dimensions;
 *   1-D runs as 2-D with a unit height). w is [C_out, C_in/groups, k...] for a convolution and
 *   [C_in, C_out/groups, k...] for a transposed one (PyTorch's weights); bias, when not NULL,
 *   is 1-D [C_out]. y's shape must be the one PyTorch gives (the message says which).
 * - Dtypes: x, w, y (and bias) all f32, all f16 or all bf16. f32 runs on no engine that cuDNN
 *   notes as using tensor cores: no TF32, whatever NVIDIA_TF32_OVERRIDE says. f16 and bf16
 *   allow tensor cores and accumulate in fp32 (compute type float; no engine that converts the
 *   inputs to another type or reduces in reduced precision).
 * - The engine is chosen through cuDNN's backend API: the configurations of cuDNN's heuristics
 *   (CUDNN_HEUR_MODE_INSTANT), its fallback list and every engine that supports the graph,
 *   filtered by those numerical notes (at f16 and bf16 deterministic ones only, unless none
 *   builds; at f32 non-deterministic ones too, as PyTorch allows them); the
 *   fastest of the first 24 whose plan builds, timed on the first call's own tensors (as
 *   torch.backends.cudnn.benchmark does; y is written). The plan (descriptors, engine, workspace size) is
 *   cached on the context, keyed by the whole descriptor (shapes, dtype, parameters, bias or
 *   not, the pointers' alignment); the context's one workspace grows when a new plan needs more
 *   (after synchronising the stream). A call whose plan is cached queries nothing and
 *   allocates nothing, so time it after a first call.
 * - The bias is added by cudnnAddTensor after the convolution (y is rounded to its dtype
 *   before the bias is added, as in PyTorch's cuDNN path).
 * y must not overlap x, w or bias. info (may be NULL) receives what ran.
 * Asynchronous, launch-noted as "cudnn conv". Bad shapes, dtypes or parameters give KR_ERR_ARG
 * before any device work; no cuDNN loaded gives KR_ERR_ARG; cuDNN failures give KR_ERR_CUDA
 * with cuDNN's status and its last error message; a sticky CUDA error gives KR_ERR_BROKEN. */
kr_status kr_cudnn_conv(kr_context *ctx, const kr_cudnn_conv_desc *d, const kr_tensor *x,
                        const kr_tensor *w, kr_tensor *y, const kr_tensor *bias,
                        kr_cudnn_conv_info *info);

/* The context's counters (all 0 before the first convolution). Needs no GPU. */
void kr_cudnn_get_stats(kr_context *ctx, kr_cudnn_stats *out);

#endif
