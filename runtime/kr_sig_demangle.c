/* kr_sig_demangle.c: kernel signatures read from Itanium-mangled names (kr_sig_demangle): a
 * decoder for the part of the Itanium C++ ABI that kernel names use. Runtime layer (no Lua);
 * host code, no CUDA calls. It refuses what it does not fully understand: a wrong signature
 * would corrupt a launch. The source reader and the shared type names are kr_sig.c's. */
#include "kr_sig_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- Itanium demangler ---- */

enum { DK_TYPE, DK_NAME, DK_LIT }; /* a type; a namespace or template name; a template value */

/* pconst: the outermost pointer's pointee is const; tconst: the type itself is const */
typedef struct {
    int kind, vec, nptr, pconst, tconst, ref;
    kr_elem el;
    char text[KR_SIG_TYPE_MAX];
} dty;

#define DM_SUBS 128
#define DM_TARGS 32
#define DM_DEPTH 48

typedef struct {
    const char *s, *p; /* the whole name; the reading position */
    dty subs[DM_SUBS], targs[DM_TARGS];
    int nsubs, ntargs, depth;
    char *err;
    size_t errlen;
} dm;

static const struct { char code; kr_elem el; const char *text; } BUILTINS[] = {
    {'v', KR_EL_VOID, "void"}, {'b', KR_EL_BOOL, "bool"}, {'c', KR_EL_CHAR, "char"},
    {'a', KR_EL_I8, "signed char"}, {'h', KR_EL_U8, "unsigned char"},
    {'s', KR_EL_I16, "short"}, {'t', KR_EL_U16, "unsigned short"}, {'i', KR_EL_I32, "int"},
    {'j', KR_EL_U32, "unsigned int"}, {'l', KR_EL_I64, "long"},
    {'m', KR_EL_U64, "unsigned long"}, {'x', KR_EL_I64, "long long"},
    {'y', KR_EL_U64, "unsigned long long"}, {'f', KR_EL_F32, "float"},
    {'d', KR_EL_F64, "double"}, {'e', KR_EL_OTHER, "long double"},
    {'g', KR_EL_OTHER, "__float128"}, {'n', KR_EL_OTHER, "__int128"},
    {'o', KR_EL_OTHER, "unsigned __int128"}, {'w', KR_EL_OTHER, "wchar_t"},
};

static int unsup(dm *d) {
    if (!*d->p) return fail(d->err, d->errlen, "mangled name '%s' ends too early", d->s);
    return fail(d->err, d->errlen, "unsupported mangling at '%.16s%s' in '%s'", d->p,
                strlen(d->p) > 16 ? "..." : "", d->s);
}

static int add_sub(dm *d, const dty *x) {
    if (d->nsubs == DM_SUBS)
        return fail(d->err, d->errlen, "too many substitutions in '%s'", d->s);
    d->subs[d->nsubs++] = *x;
    return 0;
}

/* <source-name> ::= <length> <identifier>; returns its length, start in *id, or -1. */
static int source_name(dm *d, const char **id) {
    long n = 0;
    const char *p = d->p;
    while (isdigit((unsigned char)*p) && n < 100000) n = n * 10 + (*p++ - '0');
    if (n == 0 || n >= 100000) return unsup(d);
    if (strlen(p) < (size_t)n)
        return fail(d->err, d->errlen, "mangled name '%s' ends too early", d->s);
    *id = p;
    d->p = p + n;
    return (int)n;
}

static int type(dm *d, dty *o);

static int literal(dm *d, dty *o) {
    const char *v;
    int isbool;
    d->p++;
    if (*d->p == '_' || *d->p == 'Z') return unsup(d);
    isbool = *d->p == 'b';
    if (type(d, o)) return -1;
    for (v = d->p; isalnum((unsigned char)*d->p) && *d->p != 'E'; d->p++) {}
    if (*d->p != 'E' || d->p == v) return unsup(d);
    o->kind = DK_LIT;
    if (isbool && d->p - v == 1 && (*v == '0' || *v == '1'))
        strcpy(o->text, *v == '1' ? "true" : "false");
    else /* the ABI writes a minus as 'n' */
        snprintf(o->text, sizeof o->text, "%s%.*s", *v == 'n' ? "-" : "",
                 (int)(d->p - v) - (*v == 'n'), v + (*v == 'n'));
    d->p++;
    return 0;
}

/* I <template-arg>+ E, spelt "<a, b>" onto text; kept in store when the caller wants them. */
static int targs(dm *d, dty *store, int *nstore, char *text) {
    int first = 1;
    dty *a = malloc(sizeof *a);
    if (!a) return fail(d->err, d->errlen, "out of memory");
    d->p++;
    kr_sig_cat(text, "<");
    while (*d->p != 'E') {
        int r;
        if (*d->p == 'X' || *d->p == 'J' || !*d->p) r = unsup(d);
        else if (*d->p == 'L') r = literal(d, a);
        else r = type(d, a);
        if (!r && store && *nstore == DM_TARGS)
            r = fail(d->err, d->errlen, "too many template arguments in '%s'", d->s);
        if (r) {
            free(a);
            return -1;
        }
        if (!first) kr_sig_cat(text, ", ");
        kr_sig_cat(text, a->text);
        first = 0;
        if (store) store[(*nstore)++] = *a;
    }
    d->p++;
    kr_sig_cat(text, ">");
    free(a);
    return 0;
}

/* S_ / S<seq-id>_ : a copy of an earlier candidate. */
static int subst(dm *d, dty *o) {
    unsigned long idx = 0;
    const char *p = d->p + 1;
    if (*p != '_') {
        if (!isdigit((unsigned char)*p) && !isupper((unsigned char)*p)) return unsup(d);
        while (isdigit((unsigned char)*p) || isupper((unsigned char)*p)) {
            idx = idx * 36 + (unsigned long)(isdigit((unsigned char)*p) ? *p - '0'
                                                                         : *p - 'A' + 10);
            if (idx > DM_SUBS) return unsup(d);
            p++;
        }
        if (*p != '_') return unsup(d);
        idx++;
    }
    if (idx >= (unsigned long)d->nsubs)
        return fail(d->err, d->errlen, "substitution '%.*s' in '%s' refers to nothing",
                    (int)(p + 1 - d->p), d->p, d->s);
    *o = d->subs[idx];
    d->p = p + 1;
    return 0;
}

/* <name>: an unscoped source name, or N <prefix>... E, either followed by template arguments.
 * Every prefix, and a template's name before its arguments, becomes a candidate as the ABI
 * says; so does the complete name when it names a type. For the function's own name (func) the
 * last component goes to *last and its template arguments become d->targs. */
static int name(dm *d, int func, dty *o, char *last, int *has_targs) {
    int nested = 0, first = 1, from_sub, plain = 0;
    memset(o, 0, sizeof *o);
    o->kind = DK_NAME, o->el = KR_EL_OTHER, o->vec = 1;
    *has_targs = 0;
    if (*d->p == 'N') { nested = 1; d->p++; }
    for (;;) {
        const char *id = NULL;
        int n;
        from_sub = 0;
        if (func && *d->p == 'L') d->p++; /* internal linkage: a static kernel */
        if (nested && first && *d->p == 'S') {
            /* a class seen earlier as a type may also be a scope; a pointer may not */
            if (d->p[1] == 't') return unsup(d);
            if (subst(d, o)) return -1;
            if (o->nptr || o->ref || o->tconst) return unsup(d);
            o->kind = DK_NAME;
            from_sub = 1;
        } else if (isdigit((unsigned char)*d->p)) {
            char buf[KR_SIG_TYPE_MAX];
            if ((n = source_name(d, &id)) < 0) return -1;
            if (func) {
                if (n >= KR_SIG_NAME_MAX)
                    return fail(d->err, d->errlen, "name '%.32s...' in '%s' is too long", id,
                                d->s);
                memcpy(last, id, (size_t)n);
                last[n] = 0;
            }
            snprintf(buf, sizeof buf, "%s%.*s", first ? "" : "::", n, id);
            kr_sig_cat(o->text, buf);
            plain = first && !nested ? kr_sig_cuda_name(id, (size_t)n, &o->el, &o->vec) : 0;
        } else {
            return unsup(d);
        }
        first = 0;
        *has_targs = 0;
        if (*d->p == 'I') {
            if (!from_sub && add_sub(d, o)) return -1;
            if (func) d->ntargs = 0;
            if (targs(d, func ? d->targs : NULL, &d->ntargs, o->text)) return -1;
            *has_targs = 1;
            from_sub = 0;
            plain = 0;
        }
        if (!nested) break;
        if (*d->p == 'E') { d->p++; break; }
        if (!from_sub && add_sub(d, o)) return -1;
    }
    if (!plain) { o->el = KR_EL_OTHER; o->vec = 1; }
    if (func) {
        if (!*has_targs) d->ntargs = 0; /* they belonged to a prefix */
        return 0;
    }
    o->kind = DK_TYPE;
    return from_sub ? 0 : add_sub(d, o);
}

static int type_in(dm *d, dty *o) {
    char c = *d->p, buf[KR_SIG_TYPE_MAX];
    size_t i;
    int ht;
    memset(o, 0, sizeof *o);
    o->kind = DK_TYPE, o->el = KR_EL_OTHER, o->vec = 1;
    for (i = 0; i < sizeof BUILTINS / sizeof *BUILTINS; i++)
        if (c == BUILTINS[i].code) {
            o->el = BUILTINS[i].el;
            strcpy(o->text, BUILTINS[i].text);
            d->p++;
            return 0;
        }
    if (c == 'r' || c == 'V' || c == 'K') {
        int r = 0, v = 0, k = 0;
        for (; *d->p && strchr("rVK", *d->p); d->p++)
            r |= *d->p == 'r', v |= *d->p == 'V', k |= *d->p == 'K';
        if (type(d, o)) return -1;
        if (o->kind != DK_TYPE) return unsup(d);
        o->tconst |= k;
        if (o->nptr == 0 && !o->ref) {
            strcpy(buf, k ? "const " : "");
            kr_sig_cat(buf, v ? "volatile " : "");
            kr_sig_cat(buf, o->text);
            strcpy(o->text, buf);
        } else {
            if (k) kr_sig_cat(o->text, " const");
            if (v) kr_sig_cat(o->text, " volatile");
        }
        if (r) kr_sig_cat(o->text, " __restrict__");
        return add_sub(d, o);
    }
    if (c == 'P' || c == 'R' || c == 'O') {
        d->p++;
        if (type(d, o)) return -1;
        if (o->kind != DK_TYPE || o->ref) return unsup(d);
        if (c == 'P') o->pconst = o->tconst, o->nptr++;
        else o->ref = 1;
        o->tconst = 0;
        kr_sig_cat(o->text, c == 'P' ? " *" : c == 'R' ? " &" : " &&");
        return add_sub(d, o);
    }
    if (c == 'T') {
        unsigned long idx = 0;
        const char *p = d->p + 1;
        if (*p != '_') {
            if (!isdigit((unsigned char)*p)) return unsup(d);
            while (isdigit((unsigned char)*p) && idx <= DM_TARGS)
                idx = idx * 10 + (unsigned long)(*p++ - '0');
            if (*p != '_') return unsup(d);
            idx++;
        }
        if (idx >= (unsigned long)d->ntargs || d->targs[idx].kind != DK_TYPE)
            return fail(d->err, d->errlen, "template parameter '%.*s' in '%s' is not a type "
                        "argument", (int)(p + 1 - d->p), d->p, d->s);
        *o = d->targs[idx];
        d->p = p + 1;
        if (*d->p == 'I') return unsup(d);
        return add_sub(d, o);
    }
    if (c == 'S') {
        if (d->p[1] && strchr("tabsiod", d->p[1])) return unsup(d);
        if (subst(d, o)) return -1;
        if (o->kind == DK_NAME && *d->p == 'I') {
            if (targs(d, NULL, NULL, o->text)) return -1;
            o->kind = DK_TYPE, o->el = KR_EL_OTHER, o->vec = 1;
            return add_sub(d, o);
        }
        return o->kind == DK_TYPE && *d->p != 'I' ? 0 : unsup(d);
    }
    return isdigit((unsigned char)c) || c == 'N' ? name(d, 0, o, NULL, &ht) : unsup(d);
}

/* Depth-limited, so a hostile "PPPP..." cannot exhaust the stack. */
static int type(dm *d, dty *o) {
    int r = ++d->depth > DM_DEPTH
                ? fail(d->err, d->errlen, "mangled name '%.32s...' is nested too deeply", d->s)
                : type_in(d, o);
    d->depth--;
    return r;
}

int kr_sig_demangle(const char *mangled, kr_kernel_sig *out, char *err, size_t errlen) {
    dm *d;
    dty *a;
    int rc = -1, ht;
    if (err && errlen) err[0] = 0;
    if (!mangled || !out) return fail(err, errlen, "no name to decode");
    memset(out, 0, sizeof *out);
    if (strncmp(mangled, "_Z", 2) != 0)
        return fail(err, errlen, "'%s' is not an Itanium-mangled name (no _Z prefix)", mangled);
    d = calloc(1, sizeof *d);
    a = malloc(sizeof *a);
    if (!d || !a) {
        fail(err, errlen, "out of memory");
        goto done;
    }
    d->s = mangled, d->p = mangled + 2, d->err = err, d->errlen = errlen;
    if (name(d, 1, a, out->name, &ht)) goto done;
    /* a template's encoding carries its return type first */
    if (ht && type(d, a)) goto done;
    if (!*d->p && fail(err, errlen, "'%s' has no parameter types (not a function)", mangled))
        goto done;
    while (*d->p) {
        kr_param *p;
        if (*d->p == 'z' && fail(err, errlen, "'%s' is variadic", mangled)) goto done;
        if (out->n_params == KR_SIG_MAX_PARAMS &&
            fail(err, errlen, "'%s' has more than %d parameters", mangled, KR_SIG_MAX_PARAMS))
            goto done;
        if (type(d, a)) goto done;
        if (a->el == KR_EL_VOID && a->nptr == 0 && !a->ref) {
            if (out->n_params == 0 && !*d->p) break; /* f(void) */
            fail(err, errlen, "'%s' has a void parameter", mangled);
            goto done;
        }
        p = &out->params[out->n_params++];
        kr_sig_classify(p, a->el, a->vec, a->nptr, a->pconst, !a->ref);
        strcpy(p->type_text, a->text);
    }
    rc = 0;
done:
    free(d);
    free(a);
    if (rc) {
        out->n_params = 0;
        out->name[0] = 0;
    }
    return rc;
}
