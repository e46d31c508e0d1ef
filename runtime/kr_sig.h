/* kr_sig.h: kernel signatures, read from CUDA source and from Itanium-mangled names.
 * Runtime layer (no Lua). Pure host code: no CUDA calls, so it is unit-tested without a GPU.
 * The launcher uses these descriptions to check and convert every argument before a launch. */
#ifndef KR_SIG_H
#define KR_SIG_H

#include <stddef.h>

/* What a kernel parameter is, as far as a launch from Lua is concerned. */
typedef enum {
    KR_PT_UNKNOWN = 0, /* a type kreach cannot pass (struct by value, reference, ...) */
    KR_PT_PTR,         /* pointer to global memory: see kr_param.elem */
    KR_PT_I8, KR_PT_U8, KR_PT_I16, KR_PT_U16, KR_PT_I32, KR_PT_U32, KR_PT_I64, KR_PT_U64,
    KR_PT_F16, KR_PT_BF16, KR_PT_F32, KR_PT_F64,
    KR_PT_BOOL
} kr_ptype;

/* Element type a pointer points to. KR_EL_VOID accepts any tensor. CHAR is plain `char`,
 * whose signedness C leaves open; the launcher accepts i8 and u8 tensors for it. */
typedef enum {
    KR_EL_NONE = 0, KR_EL_VOID, KR_EL_CHAR,
    KR_EL_I8, KR_EL_U8, KR_EL_I16, KR_EL_U16, KR_EL_I32, KR_EL_U32, KR_EL_I64, KR_EL_U64,
    KR_EL_F16, KR_EL_BF16, KR_EL_F32, KR_EL_F64, KR_EL_BOOL,
    KR_EL_OTHER /* pointer to a type kreach has no tensor dtype for (a struct, ...) */
} kr_elem;

#define KR_SIG_NAME_MAX 128
#define KR_SIG_TYPE_MAX 128
#define KR_SIG_MAX_PARAMS 64

typedef struct {
    kr_ptype type;
    kr_elem elem;           /* for KR_PT_PTR */
    int vec;                /* for pointers to vector types: float4 -> elem F32, vec 4; else 1 */
    int is_const;           /* pointee is const (pointers only) */
    char name[KR_SIG_NAME_MAX];      /* parameter name; "" when not known (mangled names) */
    char type_text[KR_SIG_TYPE_MAX]; /* type as written, whitespace folded: "const float *" */
} kr_param;

typedef struct {
    char name[KR_SIG_NAME_MAX]; /* the kernel's name in the source */
    int extern_c;               /* declared inside extern "C" (or with extern "C" before it) */
    int is_template;            /* a template: must be named by an instantiation to be launched */
    int line;                   /* 1-based source line of the name */
    int n_params;
    kr_param params[KR_SIG_MAX_PARAMS];
} kr_kernel_sig;

/* Scans `source` for __global__ function definitions and declarations and fills up to `max`
 * entries of `out` (a kernel declared and later defined appears once). Comments, string and
 * character literals and preprocessor lines are skipped; macros are not expanded.
 * Returns the number of kernels found (which may exceed `max`; only `max` are written), or -1
 * on a malformed declaration, with a message of the form "line N: ..." in `err`. */
int kr_sig_parse_source(const char *source, kr_kernel_sig *out, int max, char *err, size_t errlen);

/* Decodes the parameter list of an Itanium-mangled kernel name such as "_Z3addPfPKfi" or
 * "_Z5scaleIfLi4EEvPT_i" into `out` (its name is set to the unqualified function name,
 * extern_c to 0, params' names to ""). Handles builtin types, CV-qualified pointers,
 * template arguments and T_ references to them, S_ substitutions, and the CUDA types
 * __half, __nv_bfloat16 and the vector types (float2, float4, ...). Returns 0, or -1 with a
 * message in `err` when the name uses something it does not decode. */
int kr_sig_demangle(const char *mangled, kr_kernel_sig *out, char *err, size_t errlen);

/* Byte size a parameter occupies in the kernel's argument buffer (8 for pointers), or 0 for
 * KR_PT_UNKNOWN. */
size_t kr_ptype_size(kr_ptype t);

/* Short names: "ptr", "i32", "f16", ... and "void", "char", "i8", ..., "other". */
const char *kr_ptype_name(kr_ptype t);
const char *kr_elem_name(kr_elem e);

#endif
