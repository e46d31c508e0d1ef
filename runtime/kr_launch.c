/* kr_launch.c: loading compiled programs on the device and launching their kernels.
 * Runtime layer (no Lua). Uses the runtime's library API (cudaLibraryLoadData), so no driver
 * API is linked. C++ kernels are matched to their mangled symbols when the program loads, and
 * every kernel's parameter sizes are compared with the compiled kernel's before its first
 * launch, so a misread signature is an error rather than a silent misuse of bytes. A launch
 * configuration is checked by one function (kr_launch_check) against limits that come from the
 * device, or without a GPU from the architecture's documented limits and the cubin itself
 * (kreach lint checks a candidate's launches with it). */
#define _GNU_SOURCE
#include "kr_program.h"

#include <cuda_runtime.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What loading and launching say on the host device (KREACH_DEVICE=host). */
#define NOT_ON_HOST "running CUDA kernels on a GPU (kernels built for the CPU run through " \
                    "kreach.core.host)"

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
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, NOT_ON_HOST);
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

/* ---- launch limits ---- */

/* The documented limits of each architecture (the CUDA C++ Programming Guide's table of
 * compute capabilities); the ones every architecture from sm_75 on shares are in arch_limits.
 * shared_kib: the most shared memory a block may opt in to. */
static const struct { int major, minor; int shared_kib; } ARCHS[] = {
    {7, 5, 64}, {8, 0, 163}, {8, 6, 99}, {8, 7, 163}, {8, 9, 99}, {9, 0, 227},
    {10, 0, 227}, {10, 3, 227}, {11, 0, 227}, {12, 0, 99}, {12, 1, 99},
};

#define REGS_PER_BLOCK 65536
#define REG_ALLOC_UNIT 256   /* registers are given to a warp in units of 256 */
#define SUB_PARTITIONS 4     /* an SM's processing blocks, each with its own register file */

/* "sm_90", "sm_90a", "sm_100f" -> 9, 0; "sm_100" -> 10, 0. */
static int parse_arch(const char *arch, int *major, int *minor) {
    if (strncmp(arch, "sm_", 3) != 0) return -1;
    int digits = 0, v = 0;
    for (const char *q = arch + 3; *q >= '0' && *q <= '9'; q++, digits++) v = v * 10 + (*q - '0');
    if (digits < 2) return -1;
    *major = v / 10;
    *minor = v % 10;
    return 0;
}

/* ---- what the cubin (ELF) says of a kernel ---- */

typedef struct {
    const unsigned char *data;
    size_t size;
    const Elf64_Shdr *sh;
    int shnum;
    const char *shstr;
    size_t shstr_size;
} elf_view;

static int elf_open(elf_view *e, const void *data, size_t size) {
    memset(e, 0, sizeof *e);
    const Elf64_Ehdr *h = data;
    if (size < sizeof *h || memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 ||
        h->e_ident[EI_CLASS] != ELFCLASS64 || h->e_shentsize != sizeof(Elf64_Shdr) ||
        h->e_shoff > size || (size - h->e_shoff) / sizeof(Elf64_Shdr) < h->e_shnum ||
        h->e_shstrndx >= h->e_shnum)
        return -1;
    e->data = data;
    e->size = size;
    e->sh = (const Elf64_Shdr *)((const unsigned char *)data + h->e_shoff);
    e->shnum = h->e_shnum;
    const Elf64_Shdr *ss = &e->sh[h->e_shstrndx];
    if (ss->sh_offset > size || ss->sh_size > size - ss->sh_offset) return -1;
    e->shstr = (const char *)e->data + ss->sh_offset;
    e->shstr_size = ss->sh_size;
    return 0;
}

static const char *sec_name(const elf_view *e, int i) {
    size_t off = e->sh[i].sh_name;
    if (off >= e->shstr_size || !memchr(e->shstr + off, 0, e->shstr_size - off)) return "";
    return e->shstr + off;
}

/* The section named prefix + name, or -1. */
static int find_sec(const elf_view *e, const char *prefix, const char *name) {
    size_t pl = strlen(prefix);
    for (int i = 0; i < e->shnum; i++) {
        const char *n = sec_name(e, i);
        if (!strncmp(n, prefix, pl) && !strcmp(n + pl, name)) return i;
    }
    return -1;
}

static const unsigned char *sec_data(const elf_view *e, int i, size_t *n) {
    const Elf64_Shdr *s = &e->sh[i];
    if (s->sh_type == SHT_NOBITS || s->sh_offset > e->size || s->sh_size > e->size - s->sh_offset)
        return NULL;
    *n = s->sh_size;
    return e->data + s->sh_offset;
}

/* The symbol of kernel k in the cubin: its lowered name, or for a C++ kernel not loaded yet
 * the first function whose demangled name is the kernel's. */
static const char *kernel_symbol(const elf_view *e, const kr_pkernel *k) {
    if (k->lowered) return k->lowered;
    for (int i = 0; i < e->shnum; i++) {
        const char *n = sec_name(e, i);
        if (strncmp(n, ".text.", 6) != 0 || strncmp(n + 6, "_Z", 2) != 0) continue;
        kr_kernel_sig sig;
        char err[128];
        if (kr_sig_demangle(n + 6, &sig, err, sizeof err) == 0 && !strcmp(sig.name, k->sig.name))
            return n + 6;
    }
    return NULL;
}

/* Walks the attributes of an .nv.info section: (format, attribute, value) entries, where format
 * 4 has a 16-bit length and that many bytes, and the others a 16-bit value. Calls fn for each
 * attribute `want`; stops at a malformed entry. */
static void nv_info_each(const unsigned char *d, size_t n, int want,
                         void (*fn)(const unsigned char *v, size_t len, void *arg), void *arg) {
    size_t at = 0;
    while (at + 4 <= n) {
        int fmt = d[at], attr = d[at + 1];
        size_t len = 2;
        const unsigned char *v = d + at + 2;
        if (fmt == 4) {
            len = (size_t)d[at + 2] | (size_t)d[at + 3] << 8;
            v = d + at + 4;
            if (len > n - at - 4) return;
            at += 4 + len;
        } else if (fmt >= 1 && fmt <= 3) {
            at += 4;
        } else {
            return;
        }
        if (attr == want) fn(v, len, arg);
    }
}

typedef struct { uint32_t sym; int regs; } regs_query;

static void on_regcount(const unsigned char *v, size_t len, void *arg) {
    regs_query *q = arg;
    uint32_t sym, regs;
    if (len < 8) return;
    memcpy(&sym, v, 4);
    memcpy(&regs, v + 4, 4);
    if (sym == q->sym) q->regs = (int)regs;
}

static void on_max_threads(const unsigned char *v, size_t len, void *arg) {
    uint32_t x[3];
    if (len < 12) return;
    memcpy(x, v, 12);
    unsigned long long t = (unsigned long long)x[0] * x[1] * x[2];
    if (t > 0 && t < (unsigned long long)*(int *)arg) *(int *)arg = (int)t;
}

#define EIATTR_MAX_THREADS 0x05
#define EIATTR_REGCOUNT 0x2f

/* Static shared memory, registers and the __launch_bounds__ bound of kernel k, as far as the
 * cubin tells them (left as they are where it does not). */
static void cubin_kernel(const kr_program *p, const kr_pkernel *k, int major,
                         kr_launch_limits *lim) {
    elf_view e;
    if (!p->cubin || elf_open(&e, p->cubin, p->cubin_size) != 0) return;
    const char *sym = kernel_symbol(&e, k);
    if (!sym) return;
    int sh = find_sec(&e, ".nv.shared.", sym);
    if (sh >= 0) {
        size_t n = e.sh[sh].sh_size;
        /* from sm_90 on the section also holds the 1 KiB the system reserves in every block,
         * which the device's limits leave out as well */
        if (major >= 9 && find_sec(&e, ".nv.shared.reserved.", "0") >= 0) n = n > 1024 ? n - 1024 : 0;
        lim->static_shared = n;
    }
    size_t n;
    const unsigned char *d;
    int info = find_sec(&e, ".nv.info.", sym);
    if (info >= 0 && (d = sec_data(&e, info, &n)))
        nv_info_each(d, n, EIATTR_MAX_THREADS, on_max_threads, &lim->max_threads_per_block);
    /* registers are listed in .nv.info by symbol number */
    int symtab = -1;
    for (int i = 0; i < e.shnum && symtab < 0; i++)
        if (e.sh[i].sh_type == SHT_SYMTAB) symtab = i;
    int global = find_sec(&e, ".nv.info", "");
    const unsigned char *syms, *strs;
    size_t nsyms, nstrs;
    if (symtab < 0 || global < 0 || !(syms = sec_data(&e, symtab, &nsyms)) ||
        e.sh[symtab].sh_link >= (unsigned)e.shnum ||
        !(strs = sec_data(&e, (int)e.sh[symtab].sh_link, &nstrs)) || !(d = sec_data(&e, global, &n)))
        return;
    regs_query q = {0, 0};
    int found = 0;
    for (size_t j = 0; j < nsyms / sizeof(Elf64_Sym) && !found; j++) {
        Elf64_Sym s;
        memcpy(&s, syms + j * sizeof s, sizeof s);
        if (s.st_name < nstrs && memchr(strs + s.st_name, 0, nstrs - s.st_name) &&
            !strcmp((const char *)strs + s.st_name, sym)) {
            q.sym = (uint32_t)j;
            found = 1;
        }
    }
    if (!found) return;
    nv_info_each(d, n, EIATTR_REGCOUNT, on_regcount, &q);
    if (q.regs > 0) {
        lim->num_regs = q.regs;
        int per_warp = (q.regs * 32 + REG_ALLOC_UNIT - 1) / REG_ALLOC_UNIT * REG_ALLOC_UNIT;
        /* a block's warps are spread over the SM's four sub-partitions, each with a quarter
         * of the registers: with 208 registers per thread the H200 runs 2 warps in each, so
         * 256 threads (not the 288 a pooled 65536 would allow) */
        int threads = SUB_PARTITIONS * (REGS_PER_BLOCK / SUB_PARTITIONS / per_warp) * 32;
        if (threads < lim->max_threads_per_block) lim->max_threads_per_block = threads;
    }
}

static int arch_row(const char *arch) {
    int major, minor;
    if (parse_arch(arch, &major, &minor) != 0) return -1;
    for (size_t r = 0; r < sizeof ARCHS / sizeof *ARCHS; r++)
        if (ARCHS[r].major == major && ARCHS[r].minor == minor) return (int)r;
    return -1;
}

static void known_archs(char *buf, size_t len) {
    size_t n = 0;
    buf[0] = 0;
    for (size_t r = 0; r < sizeof ARCHS / sizeof *ARCHS && n < len; r++) {
        const char *sep = r == 0 ? "" : r + 1 == sizeof ARCHS / sizeof *ARCHS ? " and " : ", ";
        int w = snprintf(buf + n, len - n, "%ssm_%d%d", sep, ARCHS[r].major, ARCHS[r].minor);
        if (w < 0) break;
        n += (size_t)w;
    }
}

int kr_launch_arch_known(const char *arch, char *msg, size_t msglen) {
    if (arch && arch_row(arch) >= 0) return 1;
    char list[256];
    known_archs(list, sizeof list);
    if (msg && msglen)
        snprintf(msg, msglen, "kreach knows no launch limits for %s (it knows %s)",
                 arch ? arch : "(none)", list);
    return 0;
}

kr_status kr_launch_limits_arch(kr_context *ctx, const kr_program *p, int i,
                                kr_launch_limits *out) {
    if (i < 0 || i >= p->n_kernels)
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s: no kernel number %d", p->name, i);
    int row = arch_row(p->arch);
    if (row < 0) {
        char msg[320];
        kr_launch_arch_known(p->arch, msg, sizeof msg);
        return KR_ERROR(ctx, KR_ERR_ARG, "%s", msg);
    }
    memset(out, 0, sizeof *out);
    out->max_threads_per_block = 1024;
    out->max_block[0] = 1024, out->max_block[1] = 1024, out->max_block[2] = 64;
    out->max_grid[0] = 2147483647, out->max_grid[1] = 65535, out->max_grid[2] = 65535;
    out->shared_optin = (size_t)ARCHS[row].shared_kib * 1024;
    snprintf(out->from, sizeof out->from, "%s", p->arch);
    cubin_kernel(p, &p->kernels[i], ARCHS[row].major, out);
    return KR_OK;
}

kr_status kr_launch_limits_device(kr_context *ctx, kr_program *p, int i, kr_launch_limits *out) {
    if (i < 0 || i >= p->n_kernels)
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s: no kernel number %d", p->name, i);
    kr_pkernel *k;
    kr_status s = kernel_handle(ctx, p, i, &k);
    if (s != KR_OK) return s;
    kr_device_info d;
    if ((s = kr_context_device(ctx, &d)) != KR_OK) return s;
    memset(out, 0, sizeof *out);
    out->max_threads_per_block = k->attrs.max_threads_per_block;
    memcpy(out->max_block, d.max_block, sizeof out->max_block);
    memcpy(out->max_grid, d.max_grid, sizeof out->max_grid);
    out->shared_optin = d.shared_per_block_optin;
    out->static_shared = k->attrs.static_shared_bytes;
    out->num_regs = k->attrs.num_regs;
    memcpy(out->from, "the device", sizeof "the device"); /* no formatting on every launch */
    return KR_OK;
}

kr_status kr_launch_check(kr_context *ctx, const kr_program *p, int i, const kr_launch_limits *lim,
                          kr_dim3 grid, kr_dim3 block, size_t shared_bytes) {
    if (i < 0 || i >= p->n_kernels)
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s: no kernel number %d", p->name, i);
    const char *kn = p->kernels[i].name;
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: launch of '%s' with an empty grid {%u, %u, %u} "
                        "or block {%u, %u, %u}", p->name, kn, grid.x, grid.y, grid.z,
                        block.x, block.y, block.z);
    if (threads > (unsigned long long)lim->max_threads_per_block) {
        char regs[48] = "";
        if (lim->num_regs > 0) snprintf(regs, sizeof regs, " (%d registers per thread)", lim->num_regs);
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: too many threads per block for '%s': %llu, "
                        "the most it can run on %s is %d%s", p->name, kn, threads, lim->from,
                        lim->max_threads_per_block, regs);
    }
    if (block.x > (unsigned)lim->max_block[0] || block.y > (unsigned)lim->max_block[1] ||
        block.z > (unsigned)lim->max_block[2])
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: block {%u, %u, %u} for '%s' exceeds %s's "
                        "{%d, %d, %d}", p->name, block.x, block.y, block.z, kn, lim->from,
                        lim->max_block[0], lim->max_block[1], lim->max_block[2]);
    if (grid.x > (unsigned)lim->max_grid[0] || grid.y > (unsigned)lim->max_grid[1] ||
        grid.z > (unsigned)lim->max_grid[2])
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: grid {%u, %u, %u} for '%s' exceeds %s's "
                        "{%d, %d, %d}", p->name, grid.x, grid.y, grid.z, kn, lim->from,
                        lim->max_grid[0], lim->max_grid[1], lim->max_grid[2]);
    size_t avail = lim->shared_optin > lim->static_shared ? lim->shared_optin - lim->static_shared : 0;
    if (shared_bytes > avail)
        return KR_ERROR(ctx, KR_ERR_LAUNCH, "%s: '%s' asks for %zu bytes of dynamic shared "
                        "memory; with its %zu static bytes %s allows %zu", p->name, kn,
                        shared_bytes, lim->static_shared, lim->from, avail);
    return KR_OK;
}

kr_status kr_launch(kr_context *ctx, kr_program *p, int i, kr_dim3 grid, kr_dim3 block,
                    size_t shared_bytes, void **args) {
    if (i < 0 || i >= p->n_kernels)
        return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s: no kernel number %d", p->name, i);
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, NOT_ON_HOST);
    kr_pkernel *k;
    kr_status s = kernel_handle(ctx, p, i, &k);
    if (s != KR_OK) return s;
    if (!k->checked && (s = check_params(ctx, p, k)) != KR_OK) return s;
    kr_launch_limits lim;
    if ((s = kr_launch_limits_device(ctx, p, i, &lim)) != KR_OK) return s;
    if ((s = kr_launch_check(ctx, p, i, &lim, grid, block, shared_bytes)) != KR_OK) return s;
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
