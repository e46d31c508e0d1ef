/* inject_target.cu: a small CUDA program for the injection library's GPU test (inject_check.c):
 * a known number of kernels of two kinds (one a template, so names need demangling) inside NVTX
 * ranges, a memcpy each way and a memset. Exits 77 without a GPU.
 *   inject_target            return from main
 *   inject_target thread     end with exit() called from another thread */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject_expect.h"

__global__ void add_one(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1;
}

namespace krt {
template <typename T> __global__ void scale(T *x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}
} // namespace krt

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
    exit(1); } } while (0)

static void *exit_from_thread(void *arg) {
    (void)arg;
    exit(0);
    return NULL;
}

int main(int argc, char **argv) {
    int from_thread = argc > 1 && strcmp(argv[1], "thread") == 0;
    /* NVTX before CUDA: the injection library must start from NVTX's side too */
    nvtxRangeId_t outer = nvtxRangeStartA(INJ_OUTER);
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        fprintf(stderr, "inject_target: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return 77;
    }
    const int n = INJ_N, threads = 256, blocks = (n + threads - 1) / threads;
    int *host = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        host[i] = i;
    int *a = NULL;
    float *b = NULL;
    CK(cudaMalloc(&a, n * sizeof(int)));
    CK(cudaMalloc(&b, n * sizeof(float)));
    CK(cudaMemcpy(a, host, n * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemset(b, 0, n * sizeof(float)));
    for (int s = 0; s < INJ_STEPS; s++) {
        nvtxRangePushA("step");
        for (int k = 0; k < INJ_ADD_PER_STEP; k++)
            add_one<<<blocks, threads>>>(a, n);
        for (int k = 0; k < INJ_SCALE_PER_STEP; k++)
            krt::scale<float><<<blocks, threads>>>(b, 2.0f, n);
        CK(cudaGetLastError());
        /* the kernels finish inside the range, so the checker can ask that they start inside */
        CK(cudaDeviceSynchronize());
        nvtxRangePop();
    }
    CK(cudaMemcpy(host, a, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        if (host[i] != i + INJ_STEPS * INJ_ADD_PER_STEP) {
            fprintf(stderr, "inject_target: wrong result at %d: %d\n", i, host[i]);
            return 1;
        }
    CK(cudaFree(a));
    CK(cudaFree(b));
    free(host);
    nvtxRangeEnd(outer);
    if (from_thread) {
        pthread_t t;
        pthread_create(&t, NULL, exit_from_thread, NULL);
        pthread_join(t, NULL); /* never returns: the process exits from t */
    }
    return 0;
}
