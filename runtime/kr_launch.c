/* kr_launch.c: loading compiled programs on the device and launching their kernels.
 * Runtime layer (no Lua). Uses the runtime's library API (cudaLibraryLoadData), so no driver
 * API is linked. C++ kernels are matched to their mangled symbols when the program loads, and
 * every kernel's parameter sizes are compared with the compiled kernel's before its first
 * launch, so a misread signature is an error rather than a silent misuse of bytes. */
#define _GNU_SOURCE
#include "kr_program.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Gives C++ kernels found in the source their mangled names, by enumerating the library. */
static kr_status resolve_cpp(kr_context *ctx, kr_program *p) {
    int need = 0;
    for (int i = 0; i < p->n_kernels; i++) need |= p->kernels[i].cpp && !p->kernels[i].lowered;
    if (!need) return KR_OK;
    unsigned count = 0;
    kr_status s = KR_CUDA(ctx, cudaLibraryGetKernelCount(&count, (cudaLibrary_t)p->library));
    if (s != KR_OK) return s;
    cudaKernel_t *ks = calloc(count ? count : 1, sizeof *ks);
    if (!ks) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
    s = KR_CUDA(ctx, cudaLibraryEnumerateKernels(ks, count, (cudaLibrary_t)p->library));
    for (unsigned j = 0; j < count && s == KR_OK; j++) {
        const char *mangled = NULL;
        if (cudaFuncGetName(&mangled, (const void *)ks[j]) != cudaSuccess || !mangled) continue;
        kr_kernel_sig sig;
        char err[256];
        if (strncmp(mangled, "_Z", 2) != 0 || kr_sig_demangle(mangled, &sig, err, sizeof err) != 0)
            continue;
        for (int i = 0; i < p->n_kernels; i++) {
            kr_pkernel *k = &p->kernels[i];
            if (!k->cpp || k->lowered || strcmp(k->sig.name, sig.name) != 0) continue;
            if (!(k->lowered = strdup(mangled))) s = KR_ERROR(ctx, KR_ERR_NOMEM, "out of memory");
            /* the mangled name's types are exact; keep the source's parameter names */
            for (int a = 0; a < sig.n_params && a < k->sig.n_params; a++)
                memcpy(sig.params[a].name, k->sig.params[a].name, sizeof sig.params[a].name);
            sig.line = k->sig.line;
            k->sig = sig;
            k->from_source = 0;
            break;
        }
    }
    free(ks);
    return s;
}

kr_status kr_program_load(kr_context *ctx, kr_program *p) {
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) return s;
    if (p->library) return KR_OK;
    kr_device_info d;
    kr_context_device(ctx, &d);
    char devarch[32];
    snprintf(devarch, sizeof devarch, "sm_%d%d", d.cc_major, d.cc_minor);
    if (strncmp(p->arch, devarch, strlen(devarch)) != 0)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s was compiled for %s, but device %d (%s) is %s",
                        p->name, p->arch, d.ordinal, d.name, devarch);
    cudaLibrary_t lib;
    s = KR_CUDA(ctx, cudaLibraryLoadData(&lib, p->cubin, NULL, NULL, 0, NULL, NULL, 0));
    if (s != KR_OK) return s;
    p->library = lib;
    p->device = kr_context_ordinal(ctx);
    return resolve_cpp(ctx, p);
}

static kr_status kernel_handle(kr_context *ctx, kr_program *p, int i, kr_pkernel **out) {
    kr_status s = kr_program_load(ctx, p);
    if (s != KR_OK) return s;
    kr_pkernel *k = &p->kernels[i];
    *out = k;
    if (k->handle) return KR_OK;
    if (!k->lowered)
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s: kernel '%s' is not in the compiled program "
                        "(a C++ kernel kreach could not match to a symbol: declare it extern \"C\" "
                        "or name it in instantiate)", p->name, k->name);
    cudaKernel_t h;
    s = KR_CUDA(ctx, cudaLibraryGetKernel(&h, (cudaLibrary_t)p->library, k->lowered));
    if (s != KR_OK) {
        if (s == KR_ERR_CUDA)
            return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s: kernel '%s' is not in the compiled "
                            "program (%s)", p->name, k->name, kr_context_errmsg(ctx));
        return s;
    }
    struct cudaFuncAttributes fa;
    s = KR_CUDA(ctx, cudaFuncGetAttributes(&fa, (const void *)h));
    if (s != KR_OK) return s;
    k->attrs.num_regs = fa.numRegs;
    k->attrs.static_shared_bytes = fa.sharedSizeBytes;
    k->attrs.local_bytes = fa.localSizeBytes;
    k->attrs.max_threads_per_block = fa.maxThreadsPerBlock;
    k->attrs.binary_version = fa.binaryVersion;
    k->dyn_shared_limit = fa.maxDynamicSharedSizeBytes;
    snprintf(k->attrs.mangled, sizeof k->attrs.mangled, "%s", k->lowered);
    k->handle = h;
    return KR_OK;
}

kr_status kr_program_kernel_attrs(kr_context *ctx, kr_program *p, int i, kr_kernel_attrs *out) {
    kr_pkernel *k;
    kr_status s = kernel_handle(ctx, p, i, &k);
    if (s == KR_OK) *out = k->attrs;
    return s;
}

/* Compares the signature kreach read with the compiled kernel's parameter layout. */
static kr_status check_params(kr_context *ctx, kr_program *p, kr_pkernel *k) {
    if (k->sig.n_params < 0)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: cannot read the parameter types of '%s' from "
                        "its mangled name %s", p->name, k->name, k->lowered);
    int n = 0;
    for (;; n++) {
        size_t off = 0, size = 0;
        if (cudaFuncGetParamInfo((const void *)k->handle, (size_t)n, &off, &size) != cudaSuccess)
            break;
        if (n < k->sig.n_params) {
            const kr_param *pa = &k->sig.params[n];
            size_t want = kr_ptype_size(pa->type);
            if (pa->type != KR_PT_UNKNOWN && want != size)
                return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: kernel '%s' parameter %d ('%s %s') is "
                                "%zu bytes in the compiled kernel, but kreach read it as %zu",
                                p->name, k->name, n + 1, pa->type_text, pa->name, size, want);
        }
    }
    cudaGetLastError(); /* the probe past the last parameter leaves an error behind */
    if (n != k->sig.n_params)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: kernel '%s' has %d parameters in the compiled "
                        "kernel, but kreach read %d from its declaration", p->name, k->name, n,
                        k->sig.n_params);
    k->checked = 1;
    return KR_OK;
}

kr_status kr_launch(kr_context *ctx, kr_program *p, int i, kr_dim3 grid, kr_dim3 block,
                    size_t shared_bytes, void **args) {
    if (i < 0 || i >= p->n_kernels)
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s: no kernel number %d", p->name, i);
    kr_pkernel *k;
    kr_status s = kernel_handle(ctx, p, i, &k);
    if (s != KR_OK) return s;
    if (!k->checked && (s = check_params(ctx, p, k)) != KR_OK) return s;
    kr_device_info d;
    kr_context_device(ctx, &d);
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: launch of '%s' with an empty grid {%u, %u, %u} "
                        "or block {%u, %u, %u}", p->name, k->name, grid.x, grid.y, grid.z,
                        block.x, block.y, block.z);
    if (threads > (unsigned long long)k->attrs.max_threads_per_block)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: too many threads per block for '%s': %llu, "
                        "the most it can run is %d (%d registers per thread)", p->name, k->name,
                        threads, k->attrs.max_threads_per_block, k->attrs.num_regs);
    if (block.x > (unsigned)d.max_block[0] || block.y > (unsigned)d.max_block[1] ||
        block.z > (unsigned)d.max_block[2])
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: block {%u, %u, %u} for '%s' exceeds the "
                        "device's {%d, %d, %d}", p->name, block.x, block.y, block.z, k->name,
                        d.max_block[0], d.max_block[1], d.max_block[2]);
    if (grid.x > (unsigned)d.max_grid[0] || grid.y > (unsigned)d.max_grid[1] ||
        grid.z > (unsigned)d.max_grid[2])
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: grid {%u, %u, %u} for '%s' exceeds the device's "
                        "{%d, %d, %d}", p->name, grid.x, grid.y, grid.z, k->name, d.max_grid[0],
                        d.max_grid[1], d.max_grid[2]);
    size_t avail = d.shared_per_block_optin > k->attrs.static_shared_bytes
                       ? d.shared_per_block_optin - k->attrs.static_shared_bytes : 0;
    if (shared_bytes > avail)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: '%s' asks for %zu bytes of dynamic shared "
                        "memory; with its %zu static bytes the device allows %zu", p->name,
                        k->name, shared_bytes, k->attrs.static_shared_bytes, avail);
    if (shared_bytes > (size_t)k->dyn_shared_limit) {
        s = KR_CUDA(ctx, cudaFuncSetAttribute((const void *)k->handle,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)shared_bytes));
        if (s != KR_OK) return s;
        k->dyn_shared_limit = (int)shared_bytes;
    }
    kr_context_note_launch(ctx, k->name);
    cudaError_t e = cudaLaunchKernel((const void *)k->handle, (dim3){grid.x, grid.y, grid.z},
                                     (dim3){block.x, block.y, block.z}, args, shared_bytes,
                                     (cudaStream_t)kr_context_stream(ctx));
    if (e != cudaSuccess) {
        s = KR_CUDA(ctx, e);
        if (s == KR_ERR_CUDA)
            return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: launch of '%s' failed: %s", p->name,
                            k->name, kr_context_errmsg(ctx));
        return s;
    }
    return KR_OK;
}
