/* kr_cublas.h: matrix multiplication through cuBLAS, with PyTorch's row-major meaning.
 * Runtime layer (no Lua). One cuBLAS handle per context, made on first use and bound to the
 * harness stream; it dies with the context. Results are IEEE arithmetic in the precision the
 * dtype names unless the caller asks for TF32 (no TF32, no emulation, fp32 reductions). */
#ifndef KR_CUBLAS_H
#define KR_CUBLAS_H

#include "kr_context.h"
#include "kr_tensor.h"

typedef struct {
    int trans_a, trans_b;  /* use A^T (B^T) in place of A (B) */
    double alpha, beta;    /* C = alpha * op(A) @ op(B) + beta * C; passed as float below f64 */
    int tf32;              /* f32 only: let cuBLAS round the inputs to TF32 (10 mantissa bits) */
} kr_gemm_opts;

/* C = A @ B: no transposes, alpha 1, beta 0. A zeroed kr_gemm_opts has alpha 0: start from this. */
#define KR_GEMM_OPTS_DEFAULT { 0, 0, 1.0, 0.0, 0 }

/* The context's cuBLAS handle (a cublasHandle_t), created on the first call: bound to the
 * harness stream, pointer mode host, atomics off, default math with reduced-precision
 * reductions disallowed. cuBLAS's own default workspace is used (none is set here). The context
 * owns the handle: do not destroy it, and do not change its stream or math mode. Opens the
 * device if needed; on failure *handle is NULL and the context holds the reason. */
kr_status kr_cublas_handle(kr_context *ctx, void **handle);

/* cuBLAS's version as major*10000 + minor*100 + patch, loading the library if need be (it is
 * loaded on first use, not at start-up); 0 when it cannot be loaded. Needs no GPU. */
int kr_cublas_version(void);

/* Row-major C[m,n] = alpha * op(A) @ op(B) + beta * C, where A is [m,k] ([k,m] when trans_a)
 * and B is [k,n] ([n,k] when trans_b); `o` NULL means KR_GEMM_OPTS_DEFAULT.
 * - Shapes: all three 2-D (cublasGemmEx), or all three 3-D [batch, ., .]
 *   (cublasGemmStridedBatchedEx). C's batch is the batch; A or B may have batch 1, and is then
 *   used for every matrix of C (stride 0), like torch.matmul's broadcasting.
 * - Dtypes: A, B and C all f64 (CUBLAS_COMPUTE_64F), all f32 (CUBLAS_COMPUTE_32F_PEDANTIC, or
 *   CUBLAS_COMPUTE_32F_FAST_TF32 with o->tf32), or all f16 or all bf16 (fp32 accumulation,
 *   CUBLAS_COMPUTE_32F). tf32 with another dtype is an error, not ignored.
 * - With beta 0, C's old contents are not read (a NaN there does not propagate), as in BLAS.
 * - C must not overlap A or B. Sizes and leading dimensions must fit in an int (cuBLAS's
 *   32-bit API).
 * Asynchronous: the product is queued on the harness stream and launch-noted as "cublas gemm",
 * so a fault in it is named at the next kr_context_sync. Bad shapes, dtypes or sizes give
 * KR_ERR_ARG with the shapes in the message, before any device work; cuBLAS failures give
 * KR_ERR_CUBLAS with cuBLAS's status name and words; a sticky CUDA error gives KR_ERR_BROKEN.
 * Nothing is written to C on failure, except by a launched product that faults later.
 * On the host device (KREACH_DEVICE=host) the same checks are made and the product is computed
 * by the CPU before the call returns, without cuBLAS: each element summed in double over k in
 * increasing order, alpha and beta applied in double (rounded to float first below f64, as
 * cuBLAS receives them) and rounded once to the dtype, nearest even; C is not read when beta is
 * 0, A and B are not read when alpha is 0 (as in BLAS); tf32 is accepted and ignored (the f32
 * product is the one without it). kr_cublas_handle there is KR_ERR_ARG. */
kr_status kr_cublas_gemm(kr_context *ctx, kr_tensor *c, const kr_tensor *a, const kr_tensor *b,
                         const kr_gemm_opts *o);

#endif
