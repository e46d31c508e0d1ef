/* kr_sig.c: kernel signatures for the launcher's argument checks, read from CUDA source: a small
 * C++ tokeniser that finds __global__ declarations, and the parser of their parameters; with
 * the type names and classification both readers share. The other reader, a decoder for the
 * part of the Itanium C++ ABI that kernel names use, is kr_sig_demangle.c. Runtime layer (no
 * Lua); host code, no CUDA calls. Both readers refuse what they do not fully understand: a
 * wrong signature would corrupt a launch. */
#include "kr_sig_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- types both readers share ---- */

typedef struct { const char *name; kr_elem el; int vec; int in_std; } tyname;

/* CUDA's own structs: these keep their names in mangled symbols too. */
static const tyname cuda_types[] = {
    {"__half", KR_EL_F16, 1, 0}, {"__nv_bfloat16", KR_EL_BF16, 1, 0},
    {"__half2", KR_EL_F16, 2, 0}, {"__nv_bfloat162", KR_EL_BF16, 2, 0},
};

/* Typedefs, seen only in source: a mangled name spells out what they stand for. LP64 sizes. */
static const tyname typedefs[] = {
    {"half", KR_EL_F16, 1, 0}, {"nv_bfloat16", KR_EL_BF16, 1, 0},
    {"half2", KR_EL_F16, 2, 0}, {"nv_bfloat162", KR_EL_BF16, 2, 0},
    {"int8_t", KR_EL_I8, 1, 1}, {"uint8_t", KR_EL_U8, 1, 1},
    {"int16_t", KR_EL_I16, 1, 1}, {"uint16_t", KR_EL_U16, 1, 1},
    {"int32_t", KR_EL_I32, 1, 1}, {"uint32_t", KR_EL_U32, 1, 1},
    {"int64_t", KR_EL_I64, 1, 1}, {"uint64_t", KR_EL_U64, 1, 1},
    {"size_t", KR_EL_U64, 1, 1}, {"ssize_t", KR_EL_I64, 1, 0},
    {"ptrdiff_t", KR_EL_I64, 1, 1}, {"intptr_t", KR_EL_I64, 1, 1},
    {"uintptr_t", KR_EL_U64, 1, 1},
};

/* CUDA vector types are <stem><1..4>; char1..4 hold signed char. */
static const struct { const char *stem; kr_elem el; } vec_stems[] = {
    {"char", KR_EL_I8}, {"uchar", KR_EL_U8}, {"short", KR_EL_I16}, {"ushort", KR_EL_U16},
    {"int", KR_EL_I32}, {"uint", KR_EL_U32}, {"long", KR_EL_I64}, {"ulong", KR_EL_U64},
    {"longlong", KR_EL_I64}, {"ulonglong", KR_EL_U64}, {"float", KR_EL_F32},
    {"double", KR_EL_F64},
};

static int eqn(const char *s, size_t n, const char *lit) {
    return strlen(lit) == n && !memcmp(s, lit, n);
}

static int find_name(const tyname *tab, size_t ntab, const char *s, size_t n, int std_only,
                     kr_elem *el, int *vec) {
    size_t i;
    for (i = 0; i < ntab; i++)
        if (eqn(s, n, tab[i].name) && (!std_only || tab[i].in_std))
            return *el = tab[i].el, *vec = tab[i].vec, 1;
    return 0;
}

int kr_sig_cuda_name(const char *s, size_t n, kr_elem *el, int *vec) {
    size_t i;
    if (find_name(cuda_types, sizeof cuda_types / sizeof *cuda_types, s, n, 0, el, vec)) return 1;
    if (n < 2 || s[n - 1] < '1' || s[n - 1] > '4') return 0;
    for (i = 0; i < sizeof vec_stems / sizeof *vec_stems; i++)
        if (eqn(s, n - 1, vec_stems[i].stem))
            return *el = vec_stems[i].el, *vec = s[n - 1] - '0', 1;
    return 0;
}

/* The scalar a by-value parameter of each element type is; 0 (KR_PT_UNKNOWN) for the rest. */
static const kr_ptype BY_VALUE[KR_EL_OTHER + 1] = {
    [KR_EL_CHAR] = KR_PT_I8, [KR_EL_I8] = KR_PT_I8, [KR_EL_U8] = KR_PT_U8,
    [KR_EL_I16] = KR_PT_I16, [KR_EL_U16] = KR_PT_U16, [KR_EL_I32] = KR_PT_I32,
    [KR_EL_U32] = KR_PT_U32, [KR_EL_I64] = KR_PT_I64, [KR_EL_U64] = KR_PT_U64,
    [KR_EL_F16] = KR_PT_F16, [KR_EL_BF16] = KR_PT_BF16, [KR_EL_F32] = KR_PT_F32,
    [KR_EL_F64] = KR_PT_F64, [KR_EL_BOOL] = KR_PT_BOOL,
};

/* nptr: levels of '*'; pconst: the outermost pointer's pointee is const; passable is 0 for
 * references, arrays and the like, which no Lua value can stand for. */
void kr_sig_classify(kr_param *p, kr_elem el, int vec, int nptr, int pconst, int passable) {
    p->type = KR_PT_UNKNOWN, p->elem = KR_EL_NONE, p->vec = 1, p->is_const = 0;
    if (!passable) return;
    if (nptr == 0) {
        /* a vector or struct by value has no Lua spelling */
        if (vec == 1) p->type = BY_VALUE[el];
        return;
    }
    p->type = KR_PT_PTR, p->is_const = pconst, p->elem = KR_EL_OTHER;
    if (nptr == 1) p->elem = el, p->vec = el == KR_EL_OTHER ? 1 : vec;
}

/* Bounded append. A type spelling is descriptive only (type, elem and vec carry the meaning),
 * so an overlong one is cut and ends in "..." rather than refused. */
void kr_sig_cat(char *dst, const char *src) {
    size_t n = strlen(dst), m = strlen(src), cut = n + m >= KR_SIG_TYPE_MAX;
    if (cut) m = KR_SIG_TYPE_MAX - 1 - n;
    memcpy(dst + n, src, m);
    dst[n + m] = 0;
    if (cut) memcpy(dst + KR_SIG_TYPE_MAX - 4, "...", 3);
}

/* ---- tokeniser ---- */

enum { T_ID, T_NUM, T_STR, T_CHR, T_PUN, T_END };

typedef struct { int kind, len, line; const char *s; } tok;
typedef struct { tok *v; int n, cap; } toks;

static int push(toks *t, int kind, const char *s, int len, int line) {
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 256;
        tok *v = realloc(t->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        t->v = v, t->cap = cap;
    }
    t->v[t->n++] = (tok){kind, len, line, s};
    return 0;
}

static int idch(int c) { return isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

/* Literals end at an unescaped newline even when unterminated, the way compilers recover: an
 * apostrophe in an #if 0 block must not swallow the rest of the file. */
static const char *quoted(const char *p, int *line) {
    char q = *p++;
    while (*p && *p != q && *p != '\n') {
        if (*p != '\\' || !p[1]) { p++; continue; }
        if (p[1] == '\n') (*line)++;
        p += 2;
    }
    return *p == q ? p + 1 : p;
}

static const char *block_comment(const char *p, int *line) {
    for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
        if (*p == '\n') (*line)++;
    return *p ? p + 2 : p;
}

static const char *line_comment(const char *p, int *line) {
    while (*p && *p != '\n')
        if (p[0] == '\\' && p[1] == '\n') (*line)++, p += 2;
        else p++;
    return p;
}

static int lex(const char *src, toks *t) {
    const char *p = src, *q;
    int line = 1, bol = 1;
    while (*p) {
        unsigned char c = (unsigned char)*p;
        if (c == '\n') { line++; bol = 1; p++; continue; }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') { p++; continue; }
        if (c == '\\' && p[1] == '\n') { line++; p += 2; continue; }
        if (c == '/' && p[1] == '/') { p = line_comment(p, &line); continue; }
        if (c == '/' && p[1] == '*') { p = block_comment(p, &line); continue; }
        if (c == '#' && bol) {
            /* a directive runs to an unescaped newline; comments and literals inside it can
             * hide a newline or a quote, so they are skipped as units */
            for (p++; *p && *p != '\n';) {
                if (p[0] == '\\' && p[1] == '\n') { line++; p += 2; }
                else if (p[0] == '/' && p[1] == '*') p = block_comment(p, &line);
                else if (p[0] == '/' && p[1] == '/') p = line_comment(p, &line);
                else if (*p == '"' || *p == '\'') p = quoted(p, &line);
                else p++;
            }
            continue;
        }
        bol = 0;
        q = p;
        if (idch(c) && !isdigit(c)) {
            while (idch((unsigned char)*p)) p++;
            if (push(t, T_ID, q, (int)(p - q), line)) return -1;
        } else if (isdigit(c) || (c == '.' && isdigit((unsigned char)p[1]))) {
            /* pp-number, with C++14 digit separators so 1'000 is not a char literal */
            for (p++;; p++) {
                if (idch((unsigned char)*p) || *p == '.') continue;
                if (*p == '\'' && isalnum((unsigned char)p[1])) continue;
                if ((*p == '+' || *p == '-') && strchr("eEpP", p[-1])) continue;
                break;
            }
            if (push(t, T_NUM, q, (int)(p - q), line)) return -1;
        } else if (c == '"' || c == '\'') {
            int l0 = line;
            p = quoted(p, &line);
            if (push(t, c == '"' ? T_STR : T_CHR, q, (int)(p - q), l0)) return -1;
        } else {
            int n = 1;
            if ((c == ':' && p[1] == ':') || (c == '&' && p[1] == '&') || (c == '-' && p[1] == '>'))
                n = 2;
            else if (c == '.' && p[1] == '.' && p[2] == '.')
                n = 3;
            p += n;
            if (push(t, T_PUN, q, n, line)) return -1;
        }
    }
    return push(t, T_END, p, 0, line);
}

/* ---- source parser ---- */

static int is(const tok *k, const char *lit) {
    return k->kind != T_END && eqn(k->s, (size_t)k->len, lit);
}

static int any(const tok *k, const char *const *set) {
    while (*set && !is(k, *set)) set++;
    return *set != NULL;
}

static const char *const QUALS[] = {"const", "volatile", "__restrict__", "__restrict",
                                    "__grid_constant__", NULL};
static const char *const ELAB[] = {"struct", "class", "union", "enum", "typename", NULL};
/* builtin type words, counted per parameter; index + 1 is the slot in kw[] */
static const char *const BUILTIN[] = {"void", "bool", "char", "short", "int", "long", "signed",
                                      "unsigned", "float", "double", NULL};
enum { KW_VOID = 1, KW_BOOL, KW_CHAR, KW_SHORT, KW_INT, KW_LONG, KW_SIGNED, KW_UNSIGNED,
       KW_FLOAT, KW_DOUBLE, KW_N };
/* attributes that take an argument list, wherever they stand in a declaration */
static const char *const ATTR_ARGS[] = {"__launch_bounds__", "__maxnreg__", "__cluster_dims__",
                                        "__attribute__", "__declspec", "__align__", "alignas",
                                        NULL};
/* words that cannot be a kernel's name: finding one before '(' means we misread the line */
static const char *const NOT_NAME[] = {"static", "inline", "extern", "operator", "decltype",
                                       "sizeof", "alignof", "__device__", "__host__",
                                       "__global__", "template", "auto", "return", NULL};

static int builtin(const tok *k) {
    int i;
    for (i = 0; BUILTIN[i]; i++)
        if (is(k, BUILTIN[i])) return i + 1;
    return 0;
}

typedef struct { kr_kernel_sig sig; int has_def; } entry;

typedef struct { tok *t; entry *e; int ne, cap; char *err; size_t errlen; } ps;

/* Index of the token closing the group opened at t[i], '(' and '[' counted together, or '<'
 * alone; -1 when a ';', a brace or the end comes first: a declaration never holds those. */
static int match(const tok *t, int i, int angle) {
    int depth = 0;
    for (;; i++) {
        if (t[i].kind == T_END || is(&t[i], ";") || is(&t[i], "{") || is(&t[i], "}")) return -1;
        if (angle ? is(&t[i], "<") : is(&t[i], "(") || is(&t[i], "[")) depth++;
        else if ((angle ? is(&t[i], ">") : is(&t[i], ")") || is(&t[i], "]")) && --depth == 0)
            return i;
    }
}

static kr_elem builtin_elem(const int *kw) {
    int n = 0, i;
    for (i = 1; i < KW_N; i++) {
        n += kw[i];
        if (kw[i] > (i == KW_LONG ? 2 : 1)) return KR_EL_OTHER;
    }
    if (kw[KW_SIGNED] && kw[KW_UNSIGNED]) return KR_EL_OTHER;
    if (kw[KW_VOID]) return n == 1 ? KR_EL_VOID : KR_EL_OTHER;
    if (kw[KW_BOOL]) return n == 1 ? KR_EL_BOOL : KR_EL_OTHER;
    if (kw[KW_FLOAT]) return n == 1 ? KR_EL_F32 : KR_EL_OTHER;
    if (kw[KW_DOUBLE]) return n == 1 ? KR_EL_F64 : KR_EL_OTHER; /* long double too */
    if (kw[KW_CHAR]) {
        if (kw[KW_SHORT] || kw[KW_INT] || kw[KW_LONG]) return KR_EL_OTHER;
        return kw[KW_SIGNED] ? KR_EL_I8 : kw[KW_UNSIGNED] ? KR_EL_U8 : KR_EL_CHAR;
    }
    if (kw[KW_SHORT]) return kw[KW_LONG] ? KR_EL_OTHER : kw[KW_UNSIGNED] ? KR_EL_U16 : KR_EL_I16;
    if (kw[KW_LONG]) return kw[KW_UNSIGNED] ? KR_EL_U64 : KR_EL_I64;
    if (kw[KW_INT] || kw[KW_SIGNED] || kw[KW_UNSIGNED])
        return kw[KW_UNSIGNED] ? KR_EL_U32 : KR_EL_I32;
    return KR_EL_OTHER;
}

/* type_text keeps every token of the type as written (const, volatile, struct, template
 * arguments) but drops __restrict__/__restrict, __grid_constant__ and attributes, which say how
 * the argument is used rather than what it is; tokens are joined by one space except around
 * '::' and inside brackets, so '*' always stands apart: "const float *". */
static void spell(char *dst, const tok *t, const int *kx, int nk, int skip) {
    char buf[KR_SIG_TYPE_MAX];
    const tok *prev = NULL;
    int i;
    dst[0] = 0;
    for (i = 0; i < nk; i++) {
        const tok *k = &t[kx[i]];
        if (i == skip || is(k, "__restrict__") || is(k, "__restrict") ||
            is(k, "__grid_constant__"))
            continue;
        if (prev && !is(prev, "::") && !is(prev, "<") && !is(prev, "(") && !is(prev, "[") &&
            !is(k, ">") && !is(k, ")") && !is(k, "]") && !is(k, ",") &&
            !(is(k, "<") && prev->kind == T_ID) &&
            !(is(k, "::") && (prev->kind == T_ID || is(prev, ">"))))
            kr_sig_cat(dst, " ");
        snprintf(buf, sizeof buf, "%.*s", k->len, k->s);
        kr_sig_cat(dst, buf);
        prev = k;
    }
}

/* One parameter, tokens [a, b). Returns 0, or -1 with a message. */
static int param(ps *s, int a, int b, kr_param *p, const char *kname, int pi) {
    const tok *t = s->t;
    int *kx, nk = 0, i, nm = -1, end, stars = 0, last = -1, prev = -1, ad = 0;
    int ref = 0, arr = 0, fn = 0, ell = 0, elab = 0, tmpl = 0, other = 0, stdq = 0, scoped = 0;
    int kw[KW_N] = {0}, nid = 0, idt = -1, pconst = 0, nkw = 0, vec = 1, depth = 0;
    kr_elem el;
    memset(p, 0, sizeof *p);
    for (i = a; i < b; i++) { /* a default value says nothing about the type */
        depth += is(&t[i], "(") + is(&t[i], "[") + is(&t[i], "<");
        depth -= is(&t[i], ")") + is(&t[i], "]") + is(&t[i], ">");
        if (depth == 0 && is(&t[i], "=")) b = i;
    }
    if (a == b)
        return fail(s->err, s->errlen, "line %d: kernel '%s': parameter %d is empty",
                    t[a].line, kname, pi + 1);
    if (!(kx = malloc((size_t)(b - a) * sizeof *kx)))
        return fail(s->err, s->errlen, "out of memory");
    for (i = a; i < b; i++) {
        int j = -1;
        if (any(&t[i], ATTR_ARGS) && i + 1 < b && is(&t[i + 1], "(")) j = match(t, i + 1, 0);
        else if (is(&t[i], "[") && i + 1 < b && is(&t[i + 1], "[")) j = match(t, i, 0);
        if (j > i && j < b) i = j;
        else kx[nk++] = i;
    }
    end = nk;
    for (i = 0; i < nk; i++)
        if (is(&t[kx[i]], "[")) { end = i; break; }
    /* the last identifier is a name only after some type word: `size_t` alone is a type */
    if (end > 0 && t[kx[end - 1]].kind == T_ID && !any(&t[kx[end - 1]], QUALS) &&
        !any(&t[kx[end - 1]], ELAB) && !builtin(&t[kx[end - 1]]) &&
        !(end > 1 && is(&t[kx[end - 2]], "::")))
        for (i = 0; i < end - 1; i++) {
            const tok *k = &t[kx[i]];
            if ((k->kind == T_ID && !any(k, QUALS) && !any(k, ELAB)) || is(k, ">")) {
                nm = end - 1;
                break;
            }
        }
    if (nm >= 0) {
        const tok *k = &t[kx[nm]];
        if (k->len >= KR_SIG_NAME_MAX) {
            fail(s->err, s->errlen, "line %d: kernel '%s': name of parameter %d is too long "
                 "(at most %d characters)", k->line, kname, pi + 1, KR_SIG_NAME_MAX - 1);
            free(kx);
            return -1;
        }
        memcpy(p->name, k->s, (size_t)k->len);
        p->name[k->len] = 0;
    }
    /* after a '*' only qualifiers may follow; '[', '(' or '&' make it no passable type */
    for (i = 0; i < nk; i++) {
        const tok *k = &t[kx[i]];
        int w;
        if (i == nm) continue;
        if (ad) { ad += is(k, "<") - is(k, ">"); continue; }
        if (is(k, "&") || is(k, "&&")) ref = 1;
        else if (is(k, "[")) arr = 1;
        else if (is(k, "(")) fn = 1;
        else if (is(k, "...")) ell = 1;
        else if (is(k, "*")) { prev = last; last = i; stars++; }
        else if (stars > 0) { if (!any(k, QUALS)) other = 1; }
        else if (any(k, QUALS)) continue;
        else if (any(k, ELAB)) elab = 1;
        else if (is(k, "<")) { tmpl = 1; ad = 1; }
        else if (is(k, "::")) {
            /* only ::T and std::T keep their meaning; any other scope is a user type */
            if (nid == 1 && nkw == 0 && is(&t[idt], "std") && !stdq) { nid = 0; stdq = 1; }
            else if (nid || nkw) scoped = 1;
        } else if ((w = builtin(k)) != 0) { kw[w]++; nkw++; }
        else if (k->kind == T_ID) { nid++; idt = kx[i]; }
        else other = 1;
    }
    for (i = prev + 1; i < last; i++)
        if (is(&t[kx[i]], "const")) pconst = 1;
    if (elab || tmpl || scoped || nid > 1 || (nid && nkw)) el = KR_EL_OTHER;
    else if (nid == 1) {
        const tok *k = &t[idt];
        if (!find_name(typedefs, sizeof typedefs / sizeof *typedefs, k->s, (size_t)k->len, stdq,
                       &el, &vec) &&
            (stdq || !kr_sig_cuda_name(k->s, (size_t)k->len, &el, &vec)))
            el = KR_EL_OTHER;
    } else {
        el = builtin_elem(kw);
    }
    if (!nid && !nkw && !elab) other = 1; /* no type at all: `const *`, a lone number */
    kr_sig_classify(p, el, vec, stars, pconst, !(ref || arr || fn || ell || other));
    spell(p->type_text, t, kx, nk, nm);
    free(kx);
    return 0;
}

static int same_params(const kr_kernel_sig *x, const kr_kernel_sig *y) {
    int i;
    if (x->n_params != y->n_params) return 0;
    for (i = 0; i < x->n_params; i++) {
        const kr_param *a = &x->params[i], *b = &y->params[i];
        /* two unknown types are the same only if spelt the same */
        if (a->type != b->type || a->elem != b->elem || a->vec != b->vec ||
            a->is_const != b->is_const || ((a->type == KR_PT_UNKNOWN || a->elem == KR_EL_OTHER)
                                           && strcmp(a->type_text, b->type_text) != 0))
            return 0;
    }
    return 1;
}

static int add(ps *s, const kr_kernel_sig *k, int def) {
    int i, j;
    for (i = 0; i < s->ne; i++) {
        entry *e = &s->e[i];
        if (strcmp(e->sig.name, k->name) != 0 || !same_params(&e->sig, k)) continue;
        /* linkage comes from the first declaration; names and line from the definition */
        e->sig.extern_c |= k->extern_c;
        e->sig.is_template |= k->is_template;
        if (def && !e->has_def) {
            e->sig.line = k->line;
            for (j = 0; j < k->n_params; j++) e->sig.params[j] = k->params[j];
            e->has_def = 1;
        } else {
            for (j = 0; j < k->n_params; j++)
                if (!e->sig.params[j].name[0]) strcpy(e->sig.params[j].name, k->params[j].name);
        }
        return 0;
    }
    if (s->ne == s->cap) {
        int cap = s->cap ? s->cap * 2 : 8;
        entry *v = realloc(s->e, (size_t)cap * sizeof *v);
        if (!v) return fail(s->err, s->errlen, "out of memory");
        s->e = v, s->cap = cap;
    }
    s->e[s->ne].sig = *k;
    s->e[s->ne++].has_def = def;
    return 0;
}

/* The declaration whose __global__ is t[g]; scope_c is the linkage of the enclosing braces.
 * Returns the index of its closing ';' or '{' (so the caller tracks the body's braces), or -1. */
static int kernel(ps *s, int g, int scope_c) {
    const tok *t = s->t;
    kr_kernel_sig *k = NULL;
    int i, j, name = -1, lp = -1, rp, spec = 0, extc = scope_c, tmpl = 0, def, n, a, ad, depth;
    char kname[KR_SIG_NAME_MAX];
    /* what comes before __global__ in the same declaration: linkage and template heads */
    for (i = g - 1; i >= 0 && !is(&t[i], ";") && !is(&t[i], "{") && !is(&t[i], "}"); i--) {
        if (is(&t[i], "extern") && t[i + 1].kind == T_STR) extc = is(&t[i + 1], "\"C\"");
        else if (is(&t[i], "template"))
            /* `template <>` and a bare `template` are a specialization or an explicit
             * instantiation: the primary template is what is listed */
            tmpl = !is(&t[i + 1], "<") || is(&t[i + 2], ">") ? 2 : 1;
    }
    for (i = g + 1;; i++) {
        const tok *c = &t[i];
        if (c->kind == T_ID && any(c, ATTR_ARGS) && is(&t[i + 1], "(")) {
            if ((i = match(t, i + 1, 0)) < 0)
                return fail(s->err, s->errlen, "line %d: unbalanced parentheses in the arguments "
                            "of '%.*s'", c->line, c->len, c->s);
        } else if (is(c, "[") && is(&t[i + 1], "[")) {
            if ((i = match(t, i, 0)) < 0) break;
        } else if (c->kind == T_ID && !any(c, NOT_NAME) && !any(c, QUALS) && !builtin(c) &&
                   is(&t[i + 1], "(")) {
            name = i, lp = i + 1;
            break;
        } else if (c->kind == T_ID && is(&t[i + 1], "<")) {
            if ((j = match(t, i + 1, 1)) < 0) break;
            if (is(&t[j + 1], "(") && !any(c, NOT_NAME) && !builtin(c)) {
                name = i, lp = j + 1, spec = 1;
                break;
            }
            i = j; /* template arguments of the return type */
        } else if (!(c->kind == T_ID || is(c, "::") || is(c, "*") || is(c, "&"))) {
            break;
        }
    }
    if (name < 0)
        return fail(s->err, s->errlen, "line %d: __global__ is not followed by a function "
                    "declaration", t[g].line);
    if (t[name].len >= KR_SIG_NAME_MAX)
        return fail(s->err, s->errlen, "line %d: kernel name '%.32s...' is too long (at most %d "
                    "characters)", t[name].line, t[name].s, KR_SIG_NAME_MAX - 1);
    memcpy(kname, t[name].s, (size_t)t[name].len);
    kname[t[name].len] = 0;
    if ((rp = match(t, lp, 0)) < 0)
        return fail(s->err, s->errlen, "line %d: unbalanced parentheses in the declaration of "
                    "kernel '%s'", t[name].line, kname);
    /* between ')' and ';' or '{' only attributes, noexcept and a trailing return type; anything
     * else (an unexpanded macro, say) means the name above may be wrong */
    for (j = rp + 1;; j++) {
        const tok *c = &t[j];
        if (is(c, ";") || is(c, "{")) break;
        if (any(c, ATTR_ARGS) || is(c, "noexcept") || is(c, "throw")) {
            if (is(&t[j + 1], "(") && (j = match(t, j + 1, 0)) < 0) j = -1;
        } else if (is(c, "[") && is(&t[j + 1], "[")) {
            j = match(t, j, 0);
        } else if (is(c, "->")) {
            while (t[j + 1].kind != T_END && !is(&t[j + 1], ";") && !is(&t[j + 1], "{") &&
                   !is(&t[j + 1], "}"))
                j++;
        } else {
            j = -1;
        }
        if (j >= 0) continue;
        if (c->kind == T_END || is(c, "}"))
            return fail(s->err, s->errlen, "line %d: declaration of kernel '%s' has no ';' or "
                        "body", t[name].line, kname);
        return fail(s->err, s->errlen, "line %d: unexpected '%.*s' after the parameter list of "
                    "kernel '%s'", c->line, c->len, c->s, kname);
    }
    def = is(&t[j], "{");
    if (!(k = calloc(1, sizeof *k))) return fail(s->err, s->errlen, "out of memory");
    strcpy(k->name, kname);
    k->extern_c = extc, k->is_template = tmpl != 0, k->line = t[name].line;
    /* split at top-level commas; '<' counts only before a default value's '=' */
    for (i = a = lp + 1, n = 0, depth = 0, ad = 1; rp > lp + 1 && i <= rp; i++) {
        const tok *c = &t[i];
        if (i < rp && depth == 0 && is(c, "=")) ad = 0;
        if (i < rp && (depth || !is(c, ","))) {
            depth += is(c, "(") + is(c, "[") - is(c, ")") - is(c, "]");
            if (ad) depth += is(c, "<") - is(c, ">");
            if (depth < 0) depth = 0;
            continue;
        }
        if (n == KR_SIG_MAX_PARAMS)
            j = fail(s->err, s->errlen, "line %d: kernel '%s' has more than %d parameters",
                     t[name].line, kname, KR_SIG_MAX_PARAMS);
        else if (param(s, a, i, &k->params[n], kname, n))
            j = -1;
        if (j < 0) break;
        n++, a = i + 1, ad = 1;
    }
    if (n == 1 && rp == lp + 2 && is(&t[lp + 1], "void")) n = 0;
    k->n_params = n;
    if (j >= 0 && tmpl != 2 && !spec && add(s, k, def)) j = -1;
    free(k);
    return j;
}

int kr_sig_parse_source(const char *source, kr_kernel_sig *out, int max, char *err,
                        size_t errlen) {
    toks tk = {NULL, 0, 0};
    ps s;
    unsigned char *link = NULL;
    int i, depth = 0, rc = -1;
    if (err && errlen) err[0] = 0;
    memset(&s, 0, sizeof s);
    s.err = err, s.errlen = errlen;
    if (!source) return fail(err, errlen, "no source");
    /* one linkage flag per open brace; there are fewer braces than tokens */
    if (lex(source, &tk) || !(link = malloc((size_t)tk.n + 1))) {
        fail(err, errlen, "out of memory");
        goto done;
    }
    s.t = tk.v;
    link[0] = 0;
    for (i = 0; i < tk.n; i++) {
        const tok *c = &tk.v[i];
        if (is(c, "{")) {
            int l = link[depth];
            if (i >= 2 && is(&tk.v[i - 2], "extern") && tk.v[i - 1].kind == T_STR)
                l = is(&tk.v[i - 1], "\"C\"");
            link[++depth] = (unsigned char)l;
        } else if (is(c, "}")) {
            if (depth) depth--;
        } else if (is(c, "__global__")) {
            int next = kernel(&s, i, link[depth]);
            if (next < 0) goto done;
            i = next - 1;
        }
    }
    for (i = 0; i < s.ne && i < max; i++) out[i] = s.e[i].sig;
    rc = s.ne;
done:
    free(tk.v);
    free(link);
    free(s.e);
    return rc;
}

size_t kr_ptype_size(kr_ptype t) {
    switch (t) {
    case KR_PT_I8: case KR_PT_U8: case KR_PT_BOOL: return 1;
    case KR_PT_I16: case KR_PT_U16: case KR_PT_F16: case KR_PT_BF16: return 2;
    case KR_PT_I32: case KR_PT_U32: case KR_PT_F32: return 4;
    case KR_PT_I64: case KR_PT_U64: case KR_PT_F64: case KR_PT_PTR: return 8;
    default: return 0;
    }
}

const char *kr_ptype_name(kr_ptype t) {
    static const char *const N[] = {
        [KR_PT_UNKNOWN] = "unknown", [KR_PT_PTR] = "ptr", [KR_PT_I8] = "i8", [KR_PT_U8] = "u8",
        [KR_PT_I16] = "i16", [KR_PT_U16] = "u16", [KR_PT_I32] = "i32", [KR_PT_U32] = "u32",
        [KR_PT_I64] = "i64", [KR_PT_U64] = "u64", [KR_PT_F16] = "f16", [KR_PT_BF16] = "bf16",
        [KR_PT_F32] = "f32", [KR_PT_F64] = "f64", [KR_PT_BOOL] = "bool"};
    return (unsigned)t < sizeof N / sizeof *N ? N[t] : "?";
}

const char *kr_elem_name(kr_elem e) {
    static const char *const N[] = {
        [KR_EL_NONE] = "none", [KR_EL_VOID] = "void", [KR_EL_CHAR] = "char",
        [KR_EL_I8] = "i8", [KR_EL_U8] = "u8", [KR_EL_I16] = "i16", [KR_EL_U16] = "u16",
        [KR_EL_I32] = "i32", [KR_EL_U32] = "u32", [KR_EL_I64] = "i64", [KR_EL_U64] = "u64",
        [KR_EL_F16] = "f16", [KR_EL_BF16] = "bf16", [KR_EL_F32] = "f32", [KR_EL_F64] = "f64",
        [KR_EL_BOOL] = "bool", [KR_EL_OTHER] = "other"};
    return (unsigned)e < sizeof N / sizeof *N ? N[e] : "?";
}
