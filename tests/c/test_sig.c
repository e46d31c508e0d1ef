/* test_sig.c: kernel signatures from CUDA source and from mangled names (runtime/kr_sig.c).
 * Host only: no GPU needed. */
#include "kr_sig.h"
#include "kr_test.h"

#include <stdlib.h>

#define NK 16
static kr_kernel_sig ks[NK];
static char err[512];

static int parse(const char *src) {
    memset(ks, 0, sizeof ks);
    err[0] = 0;
    return kr_sig_parse_source(src, ks, NK, err, sizeof err);
}

/* The one parameter of `__global__ void k(<decl>) {}`. A declaration that does not parse to
 * exactly one parameter is a failed check (with the parser's message), never a quiet default:
 * the parameter returned then is poisoned (type -1, spellings "<no parse>") so that no
 * expectation can match it either. */
static kr_param one(const char *decl) {
    kr_param bad;
    char src[512];
    int n;
    snprintf(src, sizeof src, "__global__ void k(%s) {}", decl);
    n = parse(src);
    kr_test_checks++;
    if (n == 1 && ks[0].n_params == 1) return ks[0].params[0];
    kr_test_failures++;
    if (n < 0)
        fprintf(stderr, "%s:%d: '%s' is a parse error: %s\n", __FILE__, __LINE__, decl, err);
    else
        fprintf(stderr, "%s:%d: '%s' parsed to %d kernels, the first with %d parameters\n",
                __FILE__, __LINE__, decl, n, n ? ks[0].n_params : 0);
    memset(&bad, 0x55, sizeof bad);
    bad.type = (kr_ptype)-1;
    bad.elem = (kr_elem)-1;
    bad.vec = -1;
    bad.is_const = -1;
    strcpy(bad.name, "<no parse>");
    strcpy(bad.type_text, "<no parse>");
    return bad;
}

static void scalars(void) {
    static const struct { const char *decl; kr_ptype want; } T[] = {
        {"int n", KR_PT_I32}, {"signed n", KR_PT_I32}, {"signed int n", KR_PT_I32},
        {"int signed n", KR_PT_I32}, {"int32_t n", KR_PT_I32}, {"std::int32_t n", KR_PT_I32},
        {"unsigned n", KR_PT_U32}, {"unsigned int n", KR_PT_U32}, {"uint32_t n", KR_PT_U32},
        {"long n", KR_PT_I64}, {"long int n", KR_PT_I64}, {"long long n", KR_PT_I64},
        {"long long int n", KR_PT_I64}, {"int long n", KR_PT_I64}, {"int64_t n", KR_PT_I64},
        {"ptrdiff_t n", KR_PT_I64}, {"intptr_t n", KR_PT_I64}, {"ssize_t n", KR_PT_I64},
        {"signed long n", KR_PT_I64},
        {"unsigned long n", KR_PT_U64}, {"unsigned long long n", KR_PT_U64},
        {"long unsigned int n", KR_PT_U64}, {"size_t n", KR_PT_U64},
        {"std::size_t n", KR_PT_U64}, {"::size_t n", KR_PT_U64}, {"uint64_t n", KR_PT_U64},
        {"uintptr_t n", KR_PT_U64},
        {"short n", KR_PT_I16}, {"short int n", KR_PT_I16}, {"int16_t n", KR_PT_I16},
        {"unsigned short n", KR_PT_U16}, {"uint16_t n", KR_PT_U16},
        {"char c", KR_PT_I8}, {"signed char c", KR_PT_I8}, {"int8_t c", KR_PT_I8},
        {"unsigned char c", KR_PT_U8}, {"uint8_t c", KR_PT_U8},
        {"float x", KR_PT_F32}, {"double x", KR_PT_F64}, {"half x", KR_PT_F16},
        {"__half x", KR_PT_F16}, {"__nv_bfloat16 x", KR_PT_BF16}, {"nv_bfloat16 x", KR_PT_BF16},
        {"bool b", KR_PT_BOOL}, {"const int n", KR_PT_I32}, {"int const n", KR_PT_I32},
        {"const volatile unsigned n", KR_PT_U32}, {"__grid_constant__ const int n", KR_PT_I32},
        /* unnamed, as in a declaration */
        {"int", KR_PT_I32}, {"unsigned", KR_PT_U32}, {"long long", KR_PT_I64},
        {"size_t", KR_PT_U64}, {"std::size_t", KR_PT_U64}, {"float", KR_PT_F32},
        {"const double", KR_PT_F64},
        /* not kreach scalars, or not types at all */
        {"long double x", KR_PT_UNKNOWN}, {"signed unsigned x", KR_PT_UNKNOWN},
        {"short long x", KR_PT_UNKNOWN}, {"long long long x", KR_PT_UNKNOWN},
        {"unsigned float x", KR_PT_UNKNOWN}, {"unsigned size_t x", KR_PT_UNKNOWN},
        {"std::half x", KR_PT_UNKNOWN}, {"wchar_t c", KR_PT_UNKNOWN}, {"void v", KR_PT_UNKNOWN},
        {"float4 v", KR_PT_UNKNOWN}, {"half2 h", KR_PT_UNKNOWN}, {"...", KR_PT_UNKNOWN},
    };
    size_t i;
    for (i = 0; i < sizeof T / sizeof *T; i++) {
        kr_param p = one(T[i].decl);
        CHECK_INT(p.type, T[i].want);
        if (p.type != T[i].want) fprintf(stderr, "  for '%s'\n", T[i].decl);
        CHECK_INT(p.elem, KR_EL_NONE);
        CHECK_INT(p.vec, 1);
    }
    CHECK_STR(one("int n").name, "n");
    CHECK_STR(one("int").name, "");
    CHECK_STR(one("size_t").name, "");
    CHECK_STR(one("std::size_t").name, "");
    CHECK_STR(one("std::size_t len").name, "len");
    CHECK_STR(one("long long").name, "");
    CHECK_STR(one("long unsigned int   count").type_text, "long unsigned int");
    CHECK_STR(one("std :: size_t n").type_text, "std::size_t");
    CHECK_STR(one("__grid_constant__ const int n").type_text, "const int");
    CHECK_STR(one("int n = 4").name, "n"); /* a default value is ignored */
    CHECK_INT(one("int n = 4").type, KR_PT_I32);
    CHECK_INT(one("int n = 1 < 2").type, KR_PT_I32);
    CHECK_INT(parse("__global__ void k(int a = 1 < 2, float *b = nullptr) {}"), 1);
    CHECK_INT(ks[0].n_params, 2);
    CHECK_STR(ks[0].params[1].name, "b");
    CHECK_INT(ks[0].params[1].elem, KR_EL_F32);
}

static void pointers(void) {
    static const struct { const char *decl; kr_elem el; int vec, cst; const char *text; } T[] = {
        {"float *p", KR_EL_F32, 1, 0, "float *"}, {"double *p", KR_EL_F64, 1, 0, "double *"},
        {"half *p", KR_EL_F16, 1, 0, "half *"}, {"__half *p", KR_EL_F16, 1, 0, "__half *"},
        {"__nv_bfloat16 *p", KR_EL_BF16, 1, 0, NULL}, {"nv_bfloat16 *p", KR_EL_BF16, 1, 0, NULL},
        {"char *s", KR_EL_CHAR, 1, 0, "char *"}, {"signed char *s", KR_EL_I8, 1, 0, NULL},
        {"int8_t *s", KR_EL_I8, 1, 0, NULL}, {"unsigned char *s", KR_EL_U8, 1, 0, NULL},
        {"uint8_t *s", KR_EL_U8, 1, 0, NULL}, {"short *s", KR_EL_I16, 1, 0, NULL},
        {"unsigned short *s", KR_EL_U16, 1, 0, NULL}, {"int *p", KR_EL_I32, 1, 0, NULL},
        {"unsigned *p", KR_EL_U32, 1, 0, NULL}, {"uint32_t *p", KR_EL_U32, 1, 0, NULL},
        {"long *p", KR_EL_I64, 1, 0, NULL}, {"long long *p", KR_EL_I64, 1, 0, NULL},
        {"unsigned long *p", KR_EL_U64, 1, 0, NULL}, {"size_t *p", KR_EL_U64, 1, 0, NULL},
        {"bool *p", KR_EL_BOOL, 1, 0, NULL}, {"void *p", KR_EL_VOID, 1, 0, "void *"},
        {"const void *p", KR_EL_VOID, 1, 1, "const void *"},
        /* const placements: only the pointee's const counts */
        {"const float *p", KR_EL_F32, 1, 1, "const float *"},
        {"float const *p", KR_EL_F32, 1, 1, "float const *"},
        {"float *const p", KR_EL_F32, 1, 0, "float * const"},
        {"const float *const p", KR_EL_F32, 1, 1, "const float * const"},
        {"volatile int *p", KR_EL_I32, 1, 0, "volatile int *"},
        {"const float *__restrict__ p", KR_EL_F32, 1, 1, "const float *"},
        {"float *__restrict p", KR_EL_F32, 1, 0, "float *"},
        {"const float* __restrict__ const p", KR_EL_F32, 1, 1, "const float * const"},
        {"float*", KR_EL_F32, 1, 0, "float *"}, {"const float*", KR_EL_F32, 1, 1, NULL},
        {"float * __restrict__", KR_EL_F32, 1, 0, "float *"},
        /* vectors */
        {"float2 *v", KR_EL_F32, 2, 0, NULL}, {"float4 *v", KR_EL_F32, 4, 0, "float4 *"},
        {"const float4 *v", KR_EL_F32, 4, 1, NULL}, {"double2 *v", KR_EL_F64, 2, 0, NULL},
        {"double4 *v", KR_EL_F64, 4, 0, NULL}, {"half2 *v", KR_EL_F16, 2, 0, NULL},
        {"__half2 *v", KR_EL_F16, 2, 0, NULL}, {"__nv_bfloat162 *v", KR_EL_BF16, 2, 0, NULL},
        {"nv_bfloat162 *v", KR_EL_BF16, 2, 0, NULL}, {"int2 *v", KR_EL_I32, 2, 0, NULL},
        {"int4 *v", KR_EL_I32, 4, 0, NULL}, {"uint2 *v", KR_EL_U32, 2, 0, NULL},
        {"uint4 *v", KR_EL_U32, 4, 0, NULL}, {"longlong2 *v", KR_EL_I64, 2, 0, NULL},
        {"char4 *v", KR_EL_I8, 4, 0, NULL}, {"uchar4 *v", KR_EL_U8, 4, 0, NULL},
        {"short2 *v", KR_EL_I16, 2, 0, NULL}, {"ushort2 *v", KR_EL_U16, 2, 0, NULL},
        {"float1 *v", KR_EL_F32, 1, 0, NULL},
        /* pointers kreach has no dtype for */
        {"float **pp", KR_EL_OTHER, 1, 0, "float * *"},
        {"float *const *pp", KR_EL_OTHER, 1, 1, "float * const *"},
        {"struct Foo *f", KR_EL_OTHER, 1, 0, "struct Foo *"},
        {"Foo *f", KR_EL_OTHER, 1, 0, "Foo *"}, {"const Foo *f", KR_EL_OTHER, 1, 1, NULL},
        {"T *p", KR_EL_OTHER, 1, 0, "T *"}, {"ns::Foo *p", KR_EL_OTHER, 1, 0, "ns::Foo *"},
        {"Foo<int, 4> *p", KR_EL_OTHER, 1, 0, "Foo<int, 4> *"},
        {"Foo<float*> *p", KR_EL_OTHER, 1, 0, "Foo<float *> *"},
        {"float3 *p", KR_EL_F32, 3, 0, NULL}, {"float5 *p", KR_EL_OTHER, 1, 0, NULL},
        {"long double *p", KR_EL_OTHER, 1, 0, NULL},
        {"__nv_fp8_e4m3 *p", KR_EL_OTHER, 1, 0, NULL},
    };
    size_t i;
    for (i = 0; i < sizeof T / sizeof *T; i++) {
        kr_param p = one(T[i].decl);
        int bad = kr_test_failures;
        CHECK_INT(p.type, KR_PT_PTR);
        CHECK_INT(p.elem, T[i].el);
        CHECK_INT(p.vec, T[i].vec);
        CHECK_INT(p.is_const, T[i].cst);
        if (T[i].text) CHECK_STR(p.type_text, T[i].text);
        if (kr_test_failures != bad) fprintf(stderr, "  for '%s'\n", T[i].decl);
    }
    CHECK_STR(one("const float *__restrict__ in").name, "in");
    CHECK_STR(one("float * const out").name, "out");
    CHECK_STR(one("float4 *").name, "");
    CHECK_STR(one("Foo<int> f").name, "f");
    {
        /* an overlong spelling is cut, never overflowed */
        char decl[400];
        kr_param p;
        snprintf(decl, sizeof decl, "Foo<%0200d> *p", 0);
        p = one(decl);
        CHECK_INT(p.type, KR_PT_PTR);
        CHECK_INT(p.elem, KR_EL_OTHER);
        CHECK_INT(strlen(p.type_text), KR_SIG_TYPE_MAX - 1);
        CHECK_STR(p.type_text + KR_SIG_TYPE_MAX - 4, "...");
        CHECK_STR(p.name, "p");
    }
}

/* Parameters that parse but that kreach cannot pass from Lua: they are KR_PT_UNKNOWN (the
 * launcher refuses to launch the kernel with them), never a parse error, which would hide every
 * other kernel in the source. Each is checked field by field, so a zeroed or poisoned parameter
 * from a failed parse cannot pass (a parsed one has vec 1). */
static void not_passable(void) {
    static const struct { const char *decl, *text, *name; } T[] = {
        /* function pointers and references: the name sits inside the declarator and is not
         * taken out (name NULL: not checked), the spelling is kept whole */
        {"void (*f)(int)", "void (* f) (int)", NULL},
        {"int (*fn)(int)", "int (* fn) (int)", NULL},
        {"void (*)(int)", "void (*) (int)", NULL},
        {"float (*cb)(float, float)", "float (* cb) (float, float)", NULL},
        {"void (*const f)(void)", "void (* const f) (void)", NULL},
        {"void (&f)(int)", "void (& f) (int)", NULL},
        {"float (*a)[4]", "float (* a) [4]", NULL}, /* pointer to an array */
        /* arrays */
        {"float a[4]", "float [4]", "a"}, {"float a[]", "float []", "a"},
        {"float a[2][3]", "float [2] [3]", "a"}, {"const float a[N]", "const float [N]", "a"},
        /* references */
        {"float &r", "float &", "r"}, {"const float &r", "const float &", "r"},
        {"float *&r", "float * &", "r"}, {"float &&r", "float &&", "r"},
        {"const Params &p", "const Params &", "p"},
        /* by-value types with no Lua spelling */
        {"Foo f", "Foo", "f"}, {"struct Foo f", "struct Foo", "f"}, {"Foo", "Foo", ""},
        {"const Foo f", NULL, "f"}, {"__grid_constant__ const Foo p", "const Foo", "p"},
        {"T x", "T", "x"}, {"const T x", NULL, "x"}, {"ns::Params p", "ns::Params", "p"},
        {"Foo<int> f", "Foo<int>", "f"}, {"enum E e", "enum E", "e"},
        {"float4 v", "float4", "v"}, {"long double x", "long double", "x"},
        {"void v", "void", "v"}, {"...", "...", ""},
        /* not a type at all */
        {"float * restrict p", NULL, NULL}, {"const *p", NULL, NULL},
    };
    size_t i;
    for (i = 0; i < sizeof T / sizeof *T; i++) {
        kr_param p = one(T[i].decl);
        int bad = kr_test_failures;
        CHECK_INT(p.type, KR_PT_UNKNOWN);
        CHECK_INT(p.elem, KR_EL_NONE);
        CHECK_INT(p.vec, 1);
        CHECK_INT(p.is_const, 0);
        CHECK_INT(kr_ptype_size(p.type), 0);
        if (T[i].text) CHECK_STR(p.type_text, T[i].text);
        if (T[i].name) CHECK_STR(p.name, T[i].name);
        if (kr_test_failures != bad) fprintf(stderr, "  for '%s'\n", T[i].decl);
    }
    /* among other parameters: the commas inside a function pointer's or an array's brackets
     * split nothing, and the parameters around it keep their types */
    CHECK_INT(parse("__global__ void k(float *x, void (*f)(int, float), int n,\n"
                    "                  float (&a)[4], const half *h) {}\n"
                    "__global__ void after(double *d);\n"), 2);
    CHECK_STR(err, "");
    CHECK_STR(ks[0].name, "k");
    CHECK_INT(ks[0].n_params, 5);
    CHECK_INT(ks[0].params[0].type, KR_PT_PTR);
    CHECK_INT(ks[0].params[0].elem, KR_EL_F32);
    CHECK_STR(ks[0].params[0].name, "x");
    CHECK_INT(ks[0].params[1].type, KR_PT_UNKNOWN);
    CHECK_STR(ks[0].params[1].type_text, "void (* f) (int, float)");
    CHECK_INT(ks[0].params[2].type, KR_PT_I32);
    CHECK_STR(ks[0].params[2].name, "n");
    CHECK_INT(ks[0].params[3].type, KR_PT_UNKNOWN);
    CHECK_STR(ks[0].params[3].type_text, "float (& a) [4]");
    CHECK_INT(ks[0].params[4].type, KR_PT_PTR);
    CHECK_INT(ks[0].params[4].elem, KR_EL_F16);
    CHECK_INT(ks[0].params[4].is_const, 1);
    CHECK_STR(ks[1].name, "after");
    CHECK_INT(ks[1].params[0].elem, KR_EL_F64);
}

static void linkage(void) {
    const char *src =
        "extern \"C\" __global__ void one(float *x);\n"                   /* 1 */
        "extern \"C\" {\n"
        "__global__ void two(int n) {}\n"                                 /* 3 */
        "  namespace inner { __global__ void three(void) { if (1) { } } }\n"
        "  extern \"C++\" { __global__ void four(double d); }\n"          /* 5 */
        "  __global__ void five();\n"
        "}\n"
        "__global__ void six(float *x) { }\n"                             /* 8 */
        "namespace ns { namespace deep {\n"
        "__global__ void seven(const half *h);\n"                         /* 10 */
        "} }\n"
        "extern \"C++\" __global__ void eight(int);\n";                   /* 12 */
    static const struct { const char *name; int extc, line, np; } W[] = {
        {"one", 1, 1, 1}, {"two", 1, 3, 1}, {"three", 1, 4, 0}, {"four", 0, 5, 1},
        {"five", 1, 6, 0}, {"six", 0, 8, 1}, {"seven", 0, 10, 1}, {"eight", 0, 12, 1},
    };
    int i, n = parse(src);
    CHECK_INT(n, 8);
    CHECK_STR(err, "");
    for (i = 0; i < n && i < 8; i++) {
        CHECK_STR(ks[i].name, W[i].name);
        CHECK_INT(ks[i].extern_c, W[i].extc);
        CHECK_INT(ks[i].line, W[i].line);
        CHECK_INT(ks[i].n_params, W[i].np);
        CHECK_INT(ks[i].is_template, 0);
    }
    CHECK_INT(ks[6].params[0].elem, KR_EL_F16);
    CHECK_INT(ks[6].params[0].is_const, 1);
}

static void templates_and_attributes(void) {
    const char *src =
        "template <typename T, int N>\n"
        "__global__ void scale(T *x, int n) {}\n"                               /* 2 */
        "template __global__ void scale<float, 4>(float *, int);\n"
        "template <> __global__ void scale<double, 2>(double *x, int n) {}\n"
        "__global__ void __launch_bounds__(256, 2) lb1(float *x) {}\n"          /* 5 */
        "__global__ __launch_bounds__(128) void lb2(float *x) {}\n"             /* 6 */
        "static __global__ void __maxnreg__(32) st(int a) {}\n"                 /* 7 */
        "__global__ void __cluster_dims__(2, 1, 1) cl(int a) {}\n"              /* 8 */
        "__global__ __noinline__ void ni(int a);\n"                             /* 9 */
        "__launch_bounds__(64) __global__ void lb3(int a);\n"                   /* 10 */
        "[[nodiscard]] __global__ void __attribute__((used)) at(int a) noexcept {}\n"
        "template <template <class> class C, typename T = Foo<int>>\n"
        "__global__ void __launch_bounds__(N > 1 ? 64 : 32) tt(C<T> *c, T t) {}\n"; /* 13 */
    static const struct { const char *name; int tmpl, line; } W[] = {
        {"scale", 1, 2}, {"lb1", 0, 5}, {"lb2", 0, 6}, {"st", 0, 7}, {"cl", 0, 8},
        {"ni", 0, 9}, {"lb3", 0, 10}, {"at", 0, 11}, {"tt", 1, 13},
    };
    int i, n = parse(src);
    CHECK_INT(n, 9);
    CHECK_STR(err, "");
    for (i = 0; i < n && i < 9; i++) {
        CHECK_STR(ks[i].name, W[i].name);
        CHECK_INT(ks[i].is_template, W[i].tmpl);
        CHECK_INT(ks[i].line, W[i].line);
    }
    CHECK_INT(ks[0].n_params, 2);
    CHECK_INT(ks[0].params[0].type, KR_PT_PTR);
    CHECK_INT(ks[0].params[0].elem, KR_EL_OTHER);
    CHECK_INT(ks[0].params[1].type, KR_PT_I32);
    CHECK_INT(ks[1].params[0].elem, KR_EL_F32);
    CHECK_INT(ks[8].n_params, 2);
    CHECK_STR(ks[8].params[0].type_text, "C<T> *");
    CHECK_INT(ks[8].params[1].type, KR_PT_UNKNOWN);
}

static void lexing(void) {
    const char *src =
        "// __global__ void c1(int);\n"                      /* 1 */
        "/* __global__ void c2(int);\n"
        "   more */ const char *s = \"__global__ void c3(\\\"x\\\", int);\";\n"
        "char q = '\"'; char q2 = '\\''; int big = 1'000'000;\n"
        "#define KERNEL __global__ void c4(int) \\\n"         /* 5 */
        "    __global__ void c5(int)\n"
        "  #  pragma unroll // __global__\n"
        "#include \"a/*b\" // \"\n"
        "__global__ /* c */ void // x\n"
        "  real(int a, /* , */ float b /* ) */) {\n"         /* 10 */
        "  const char *t = \"}\"; char c = '{';\n"
        "}\n"
        "__global__ void later(int a);\n";                  /* 13 */
    int n = parse(src);
    CHECK_INT(n, 2);
    CHECK_STR(err, "");
    CHECK_STR(ks[0].name, "real");
    CHECK_INT(ks[0].line, 10);
    CHECK_INT(ks[0].n_params, 2);
    CHECK_STR(ks[0].params[1].name, "b");
    CHECK_INT(ks[0].params[1].type, KR_PT_F32);
    CHECK_STR(ks[1].name, "later");
    CHECK_INT(ks[1].line, 13);
    CHECK_INT(ks[1].extern_c, 0);
    /* an unterminated literal ends at its line, like a compiler's recovery */
    CHECK_INT(parse("#if 0\nit's\n#endif\n__global__ void k(int a) {}\n"), 1);
    CHECK_INT(ks[0].line, 4);
    CHECK_INT(parse("// dos\r\n\r\n__global__ void k(int a)\r\n{}\r\n"), 1);
    CHECK_INT(ks[0].line, 3);
    CHECK_INT(parse(""), 0);
    CHECK_INT(parse("int main() { return 0; }"), 0);
}

static void declarations(void) {
    const char *src =
        "extern \"C\" __global__ void k(const float *, float *, int);\n"
        "__global__ void k(const float *, float *, int);\n"
        "__global__ void k(float const *in, float *__restrict__ out, const int n)\n"
        "{ }\n"
        "__global__ void k(const float *a, float *b, int c);\n"
        "__global__ void k(double *d) {}\n"                 /* an overload: listed too */
        "__global__ void v(void);\n"
        "__global__ void v() {}\n"
        "__global__ void s(Foo f);\n"
        "__global__ void s(Bar b);\n";
    int n = parse(src);
    CHECK_INT(n, 5);
    CHECK_STR(ks[0].name, "k");
    CHECK_INT(ks[0].extern_c, 1);
    CHECK_INT(ks[0].line, 3);
    CHECK_INT(ks[0].n_params, 3);
    CHECK_STR(ks[0].params[0].name, "in");
    CHECK_STR(ks[0].params[1].name, "out");
    CHECK_STR(ks[0].params[2].name, "n");
    CHECK_INT(ks[0].params[0].is_const, 1);
    CHECK_STR(ks[1].name, "k");
    CHECK_INT(ks[1].params[0].elem, KR_EL_F64);
    CHECK_STR(ks[2].name, "v");
    CHECK_INT(ks[2].n_params, 0);
    CHECK_INT(ks[2].line, 8);
    CHECK_STR(ks[3].params[0].type_text, "Foo");
    CHECK_STR(ks[4].params[0].type_text, "Bar");
    /* more kernels than room: the count is still right */
    {
        kr_kernel_sig two[2];
        CHECK_INT(kr_sig_parse_source("__global__ void a();\n__global__ void b();\n"
                                      "__global__ void c();\n__global__ void a() {}\n",
                                      two, 2, err, sizeof err), 3);
        CHECK_STR(two[0].name, "a");
        CHECK_STR(two[1].name, "b");
        CHECK_INT(kr_sig_parse_source("__global__ void a();", NULL, 0, err, sizeof err), 1);
    }
}

static void expect_error(const char *src, const char *msg) {
    CHECK_INT(parse(src), -1);
    CHECK_CONTAINS(err, msg);
}

static void malformed(void) {
    char *src, name[200];
    int i;
    expect_error("int x;\n\n__global__ void k(int a, float *b {\n}\n",
                 "line 3: unbalanced parentheses in the declaration of kernel 'k'");
    expect_error("__global__ void k(int a, (float *b);\n", "line 1: unbalanced parentheses");
    /* a function pointer that does not close is malformed, unlike a whole one (not_passable) */
    expect_error("\n__global__ void k(float *x, void (*f)(int);\n",
                 "line 2: unbalanced parentheses in the declaration of kernel 'k'");
    expect_error("__global__ void k(void (*f(int) {}", "line 1: unbalanced parentheses");
    expect_error("\n__global__ int x;\n", "line 2: __global__ is not followed by a function");
    expect_error("__global__\n", "line 1: __global__ is not followed by a function");
    expect_error("__global__ void (int a);", "line 1: __global__ is not followed by a function");
    expect_error("\n\n__global__ void __launch_bounds__(256 k(int a) {}",
                 "line 3: unbalanced parentheses in the arguments of '__launch_bounds__'");
    expect_error("__global__ void k(int a, , int b);", "line 1: kernel 'k': parameter 2 is empty");
    expect_error("__global__ void k(int a,);", "kernel 'k': parameter 2 is empty");
    expect_error("__global__ void BOUNDS(256) k(int a) {}",
                 "line 1: unexpected 'k' after the parameter list of kernel 'BOUNDS'");
    expect_error("extern \"C\" { __global__ void k(int a) }",
                 "line 1: declaration of kernel 'k' has no ';' or body");
    expect_error("__global__ void k(int a)", "declaration of kernel 'k' has no ';' or body");
    /* 65 parameters */
    src = malloc(65 * 16 + 64);
    strcpy(src, "\n__global__ void many(");
    for (i = 0; i < 65; i++) sprintf(src + strlen(src), "%sint a%d", i ? ", " : "", i);
    strcat(src, ");");
    expect_error(src, "line 2: kernel 'many' has more than 64 parameters");
    /* 64 are fine */
    strcpy(src, "__global__ void many(");
    for (i = 0; i < 64; i++) sprintf(src + strlen(src), "%sint a%d", i ? ", " : "", i);
    strcat(src, ");");
    CHECK_INT(parse(src), 1);
    CHECK_INT(ks[0].n_params, 64);
    CHECK_STR(ks[0].params[63].name, "a63");
    free(src);
    memset(name, 'x', 128);
    name[128] = 0;
    {
        char buf[400];
        snprintf(buf, sizeof buf, "__global__ void %s(int a);", name);
        expect_error(buf, "line 1: kernel name 'xxxx");
        CHECK_CONTAINS(err, "is too long");
        snprintf(buf, sizeof buf, "__global__ void k(int %s);", name);
        expect_error(buf, "line 1: kernel 'k': name of parameter 1 is too long");
        name[127] = 0; /* 127 characters fit */
        snprintf(buf, sizeof buf, "__global__ void %s(int a);", name);
        CHECK_INT(parse(buf), 1);
        CHECK_INT(strlen(ks[0].name), 127);
    }
}

static kr_kernel_sig dsig;

static int dm(const char *m) {
    memset(&dsig, 0x55, sizeof dsig);
    err[0] = 0;
    return kr_sig_demangle(m, &dsig, err, sizeof err);
}

static void check_dparam(int i, kr_ptype t, kr_elem e, int vec, int cst, const char *text) {
    const kr_param *p = &dsig.params[i];
    CHECK_INT(p->type, t);
    CHECK_INT(p->elem, e);
    CHECK_INT(p->vec, vec);
    CHECK_INT(p->is_const, cst);
    CHECK_STR(p->name, "");
    CHECK_STR(p->type_text, text);
}

static void demangle(void) {
    CHECK_INT(dm("_Z3addPfPKfi"), 0);
    CHECK_STR(dsig.name, "add");
    CHECK_INT(dsig.extern_c, 0);
    CHECK_INT(dsig.is_template, 0);
    CHECK_INT(dsig.n_params, 3);
    check_dparam(0, KR_PT_PTR, KR_EL_F32, 1, 0, "float *");
    check_dparam(1, KR_PT_PTR, KR_EL_F32, 1, 1, "const float *");
    check_dparam(2, KR_PT_I32, KR_EL_NONE, 1, 0, "int");

    CHECK_INT(dm("_Z4axpyfPKfPfm"), 0);
    CHECK_STR(dsig.name, "axpy");
    CHECK_INT(dsig.n_params, 4);
    check_dparam(0, KR_PT_F32, KR_EL_NONE, 1, 0, "float");
    check_dparam(1, KR_PT_PTR, KR_EL_F32, 1, 1, "const float *");
    check_dparam(2, KR_PT_PTR, KR_EL_F32, 1, 0, "float *");
    check_dparam(3, KR_PT_U64, KR_EL_NONE, 1, 0, "unsigned long");

    CHECK_INT(dm("_Z3cpyP6__halfPKS_"), 0);
    CHECK_INT(dsig.n_params, 2);
    check_dparam(0, KR_PT_PTR, KR_EL_F16, 1, 0, "__half *");
    check_dparam(1, KR_PT_PTR, KR_EL_F16, 1, 1, "const __half *");

    CHECK_INT(dm("_Z5scaleIfLi4EEvPT_i"), 0);
    CHECK_STR(dsig.name, "scale");
    CHECK_INT(dsig.is_template, 0); /* an instantiation: its types are concrete */
    CHECK_INT(dsig.n_params, 2);
    check_dparam(0, KR_PT_PTR, KR_EL_F32, 1, 0, "float *");
    check_dparam(1, KR_PT_I32, KR_EL_NONE, 1, 0, "int");

    CHECK_INT(dm("_ZN2ns6kernelEPd"), 0);
    CHECK_STR(dsig.name, "kernel");
    CHECK_INT(dsig.n_params, 1);
    check_dparam(0, KR_PT_PTR, KR_EL_F64, 1, 0, "double *");

    CHECK_INT(dm("_Z1kv"), 0);
    CHECK_STR(dsig.name, "k");
    CHECK_INT(dsig.n_params, 0);

    CHECK_INT(dm("_Z2k2P13__nv_bfloat16PK6float4"), 0);
    CHECK_INT(dsig.n_params, 2);
    check_dparam(0, KR_PT_PTR, KR_EL_BF16, 1, 0, "__nv_bfloat16 *");
    check_dparam(1, KR_PT_PTR, KR_EL_F32, 4, 1, "const float4 *");

    /* every builtin code */
    CHECK_INT(dm("_Z1kbcahstijlmxyfd"), 0);
    CHECK_INT(dsig.n_params, 14);
    {
        static const kr_ptype W[] = {KR_PT_BOOL, KR_PT_I8, KR_PT_I8, KR_PT_U8, KR_PT_I16,
                                     KR_PT_U16, KR_PT_I32, KR_PT_U32, KR_PT_I64, KR_PT_U64,
                                     KR_PT_I64, KR_PT_U64, KR_PT_F32, KR_PT_F64};
        int i;
        for (i = 0; i < 14; i++) CHECK_INT(dsig.params[i].type, W[i]);
        CHECK_STR(dsig.params[1].type_text, "char");
        CHECK_STR(dsig.params[11].type_text, "unsigned long long");
    }
    CHECK_INT(dm("_Z1kPcPaPhPvPKvPb"), 0);
    CHECK_INT(dsig.params[0].elem, KR_EL_CHAR);
    CHECK_INT(dsig.params[1].elem, KR_EL_I8);
    CHECK_INT(dsig.params[2].elem, KR_EL_U8);
    CHECK_INT(dsig.params[3].elem, KR_EL_VOID);
    CHECK_INT(dsig.params[4].elem, KR_EL_VOID);
    CHECK_INT(dsig.params[4].is_const, 1);
    CHECK_INT(dsig.params[5].elem, KR_EL_BOOL);

    /* vector and CUDA struct names */
    CHECK_INT(dm("_Z1kP6float2P7double2P7__half2P14__nv_bfloat162P4int4P5uint2P9longlong2"
                 "P5char4P6uchar4P6short2P7ushort4"), 0);
    CHECK_INT(dsig.n_params, 11);
    {
        static const kr_elem E[] = {KR_EL_F32, KR_EL_F64, KR_EL_F16, KR_EL_BF16, KR_EL_I32,
                                    KR_EL_U32, KR_EL_I64, KR_EL_I8, KR_EL_U8, KR_EL_I16,
                                    KR_EL_U16};
        static const int V[] = {2, 2, 2, 2, 4, 2, 2, 4, 4, 2, 4};
        int i;
        for (i = 0; i < 11; i++) {
            CHECK_INT(dsig.params[i].elem, E[i]);
            CHECK_INT(dsig.params[i].vec, V[i]);
        }
    }
    CHECK_INT(dm("_Z1k6__half13__nv_bfloat166float4"), 0);
    check_dparam(0, KR_PT_F16, KR_EL_NONE, 1, 0, "__half");
    check_dparam(1, KR_PT_BF16, KR_EL_NONE, 1, 0, "__nv_bfloat16");
    check_dparam(2, KR_PT_UNKNOWN, KR_EL_NONE, 1, 0, "float4");

    /* the rest were produced by g++ 12 and checked with c++filt */
    CHECK_INT(dm("_Z2t2I6__halfEvPT_PKS1_PVS1_S2_"), 0);
    CHECK_INT(dsig.n_params, 4);
    check_dparam(0, KR_PT_PTR, KR_EL_F16, 1, 0, "__half *");
    check_dparam(1, KR_PT_PTR, KR_EL_F16, 1, 1, "const __half *");
    check_dparam(2, KR_PT_PTR, KR_EL_F16, 1, 0, "volatile __half *");
    check_dparam(3, KR_PT_PTR, KR_EL_F16, 1, 0, "__half *");
    CHECK_INT(dm("_Z2ppPPfPPKfPKS_"), 0);
    check_dparam(0, KR_PT_PTR, KR_EL_OTHER, 1, 0, "float * *");
    check_dparam(1, KR_PT_PTR, KR_EL_OTHER, 1, 0, "const float * *");
    check_dparam(2, KR_PT_PTR, KR_EL_OTHER, 1, 1, "float * const *");
    CHECK_INT(dm("_Z2cvPVKiS0_PiPKiS3_"), 0);
    CHECK_INT(dsig.n_params, 5);
    check_dparam(1, KR_PT_PTR, KR_EL_I32, 1, 1, "const volatile int *");
    check_dparam(4, KR_PT_PTR, KR_EL_I32, 1, 1, "const int *");
    CHECK_INT(dm("_Z5scaleIfLi4EEvPT_iS0_P1cS3_"), 0);
    CHECK_INT(dsig.n_params, 5);
    check_dparam(2, KR_PT_F32, KR_EL_NONE, 1, 0, "float");
    check_dparam(4, KR_PT_PTR, KR_EL_OTHER, 1, 0, "c *");
    CHECK_INT(dm("_ZN1a1bIiEEvP1cS2_PT_S4_"), 0);
    CHECK_STR(dsig.name, "b");
    check_dparam(1, KR_PT_PTR, KR_EL_OTHER, 1, 0, "c *");
    check_dparam(3, KR_PT_PTR, KR_EL_I32, 1, 0, "int *");
    CHECK_INT(dm("_ZN1a1d1gEPNS0_1cEPKS1_S2_"), 0);
    CHECK_STR(dsig.name, "g");
    check_dparam(0, KR_PT_PTR, KR_EL_OTHER, 1, 0, "a::d::c *");
    check_dparam(1, KR_PT_PTR, KR_EL_OTHER, 1, 1, "const a::d::c *");
    check_dparam(2, KR_PT_PTR, KR_EL_OTHER, 1, 0, "a::d::c *");
    CHECK_INT(dm("_ZL2sti"), 0); /* a static kernel */
    CHECK_STR(dsig.name, "st");
    CHECK_INT(dm("_ZN12_GLOBAL__N_14anonEi"), 0);
    CHECK_STR(dsig.name, "anon");
    CHECK_INT(dm("_Z2tbILb1EEvP1c"), 0);
    CHECK_INT(dsig.n_params, 1);
    CHECK_INT(dm("_Z2trI6float4EvRT_RKS1_"), 0);
    check_dparam(0, KR_PT_UNKNOWN, KR_EL_NONE, 1, 0, "float4 &");
    check_dparam(1, KR_PT_UNKNOWN, KR_EL_NONE, 1, 0, "const float4 &");
    CHECK_INT(dm("_Z1kP3FooIiLi3EES1_"), 0);
    check_dparam(0, KR_PT_PTR, KR_EL_OTHER, 1, 0, "Foo<int, 3> *");
    check_dparam(1, KR_PT_PTR, KR_EL_OTHER, 1, 0, "Foo<int, 3> *");
    CHECK_INT(dm("_ZN2ns5scaleI6__halfLin2EEEvPT_"), 0);
    CHECK_STR(dsig.name, "scale");
    check_dparam(0, KR_PT_PTR, KR_EL_F16, 1, 0, "__half *");

    /* refused */
    CHECK_INT(dm("_Z1kSt6vectorIiSaIiEE"), -1);
    CHECK_CONTAINS(err, "unsupported mangling at 'St6vector");
    CHECK_STR(dsig.name, "");
    CHECK_INT(dsig.n_params, 0);
    CHECK_INT(dm("add"), -1);
    CHECK_CONTAINS(err, "no _Z prefix");
    CHECK_INT(dm("_Z1k"), -1);
    CHECK_CONTAINS(err, "no parameter types");
    CHECK_INT(dm("_Z1kiz"), -1);
    CHECK_CONTAINS(err, "variadic");
    CHECK_INT(dm("_Z1kPS_"), -1);
    CHECK_CONTAINS(err, "refers to nothing");
    CHECK_INT(dm("_Z1kPT_"), -1);
    CHECK_CONTAINS(err, "not a type argument");
    CHECK_INT(dm("_Z1kIiLi2EEvT0_"), -1);
    CHECK_CONTAINS(err, "not a type argument");
    CHECK_INT(dm("_Z1kvi"), -1);
    CHECK_CONTAINS(err, "void parameter");
    CHECK_INT(dm("_Z1kPFviE"), -1);
    CHECK_CONTAINS(err, "unsupported mangling at 'FviE'");
    CHECK_INT(dm("_Z1kA4_f"), -1);
    CHECK_INT(dm("_Z3addPf.cold"), -1);
    CHECK_INT(dm("_Z10shortname"), -1);
    CHECK_CONTAINS(err, "ends too early");
    CHECK_INT(dm("_ZN1aC1Ev"), -1);
    CHECK_INT(dm("_ZZ1fvE1kv"), -1);
    CHECK_INT(dm("_Z1kIJifEEvDpT_"), -1);
    {
        char deep[300];
        memset(deep, 'P', sizeof deep);
        memcpy(deep, "_Z1k", 4);
        strcpy(deep + sizeof deep - 2, "f");
        CHECK_INT(dm(deep), -1);
        CHECK_CONTAINS(err, "nested too deeply");
    }
}

static void names_and_sizes(void) {
    CHECK_INT(kr_ptype_size(KR_PT_PTR), 8);
    CHECK_INT(kr_ptype_size(KR_PT_I8), 1);
    CHECK_INT(kr_ptype_size(KR_PT_BOOL), 1);
    CHECK_INT(kr_ptype_size(KR_PT_F16), 2);
    CHECK_INT(kr_ptype_size(KR_PT_BF16), 2);
    CHECK_INT(kr_ptype_size(KR_PT_U16), 2);
    CHECK_INT(kr_ptype_size(KR_PT_I32), 4);
    CHECK_INT(kr_ptype_size(KR_PT_F32), 4);
    CHECK_INT(kr_ptype_size(KR_PT_U64), 8);
    CHECK_INT(kr_ptype_size(KR_PT_F64), 8);
    CHECK_INT(kr_ptype_size(KR_PT_UNKNOWN), 0);
    CHECK_STR(kr_ptype_name(KR_PT_PTR), "ptr");
    CHECK_STR(kr_ptype_name(KR_PT_I32), "i32");
    CHECK_STR(kr_ptype_name(KR_PT_F16), "f16");
    CHECK_STR(kr_ptype_name(KR_PT_BF16), "bf16");
    CHECK_STR(kr_ptype_name(KR_PT_BOOL), "bool");
    CHECK_STR(kr_ptype_name(KR_PT_UNKNOWN), "unknown");
    CHECK_STR(kr_elem_name(KR_EL_VOID), "void");
    CHECK_STR(kr_elem_name(KR_EL_CHAR), "char");
    CHECK_STR(kr_elem_name(KR_EL_I8), "i8");
    CHECK_STR(kr_elem_name(KR_EL_U64), "u64");
    CHECK_STR(kr_elem_name(KR_EL_OTHER), "other");
    CHECK_STR(kr_elem_name(KR_EL_NONE), "none");
}

int main(void) {
    scalars();
    pointers();
    not_passable();
    linkage();
    templates_and_attributes();
    lexing();
    declarations();
    malformed();
    demangle();
    names_and_sizes();
    return kr_test_done("sig");
}
