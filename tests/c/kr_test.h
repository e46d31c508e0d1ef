/* kr_test.h: the few macros the C unit tests share. A test binary returns 0 when every check
 * passed, 1 when one failed, and 77 (ctest's skip code) when it needs a GPU and has none. */
#ifndef KR_TEST_H
#define KR_TEST_H

#include <stdio.h>
#include <string.h>
#include <math.h>

static int kr_test_failures = 0;
static int kr_test_checks = 0;

#define CHECK(cond) do { kr_test_checks++; if (!(cond)) { kr_test_failures++; \
    fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)

#define CHECK_INT(a, b) do { long long va_ = (long long)(a), vb_ = (long long)(b); kr_test_checks++; \
    if (va_ != vb_) { kr_test_failures++; fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
    __FILE__, __LINE__, #a, va_, #b, vb_); } } while (0)

#define CHECK_STR(a, b) do { const char *sa_ = (a), *sb_ = (b); kr_test_checks++; \
    if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) { kr_test_failures++; \
    fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
    sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)"); } } while (0)

/* |a - b| <= tol; the tolerance is stated at each call. */
#define CHECK_NEAR(a, b, tol) do { double da_ = (a), db_ = (b); kr_test_checks++; \
    if (!(fabs(da_ - db_) <= (tol))) { kr_test_failures++; \
    fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g (tol %g)\n", __FILE__, __LINE__, #a, \
    da_, db_, (double)(tol)); } } while (0)

#define CHECK_CONTAINS(hay, needle) do { const char *h_ = (hay); kr_test_checks++; \
    if (!h_ || !strstr(h_, (needle))) { kr_test_failures++; \
    fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
    h_ ? h_ : "(null)", (needle)); } } while (0)

static int kr_test_done(const char *name) {
    printf("%s: %d checks, %d failed\n", name, kr_test_checks, kr_test_failures);
    return kr_test_failures ? 1 : 0;
}

#endif
