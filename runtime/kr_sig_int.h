/* kr_sig_int.h: what the two readers of kr_sig.h share: kr_sig.c (the tokeniser and the source
 * parser, and the type names both know) and kr_sig_demangle.c (the Itanium demangler). Private
 * to those files: runtime layer, not part of the public API (kr_sig.h). */
#ifndef KR_SIG_INT_H
#define KR_SIG_INT_H

#include "kr_sig.h"

#include <stdarg.h>
#include <stdio.h>

/* Always -1, so that `return fail(...)` reports and refuses in one step. Defined here, where
 * both readers see it under its short name. */
static inline int fail(char *err, size_t n, const char *fmt, ...) {
    va_list ap;
    if (!err || !n) return -1;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* The element type and vector width of a CUDA type name (__half, float4, ...): 1 when s[0, n)
 * is one, else 0. */
int kr_sig_cuda_name(const char *s, size_t n, kr_elem *el, int *vec);

/* nptr: levels of '*'; pconst: the outermost pointer's pointee is const; passable is 0 for
 * references, arrays and the like, which no Lua value can stand for. */
void kr_sig_classify(kr_param *p, kr_elem el, int vec, int nptr, int pconst, int passable);

/* Bounded append. A type spelling is descriptive only (type, elem and vec carry the meaning),
 * so an overlong one is cut and ends in "..." rather than refused. */
void kr_sig_cat(char *dst, const char *src);

#endif /* KR_SIG_INT_H */
