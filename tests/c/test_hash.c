/* test_hash.c: kr_hash128_hex (the results store's content hash: candidates, problems,
 * configurations) covers every byte it is given: XXH3-128's known answers, a change of any one
 * byte or bit of a buffer (its last included) gives a new hash, and so does one byte fewer.
 * Needs no GPU. */
#include "kr_hash.h"
#include "kr_test.h"

#include <stdlib.h>
#include <string.h>

#define N 300

/* the hashes seen so far, to find two buffers that hash alike */
static char seen[N * 9 + 8][33];
static int nseen;

static int is_hex32(const char *h) {
    if (strlen(h) != 32) return 0;
    for (int i = 0; i < 32; i++)
        if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f'))) return 0;
    return 1;
}

/* Hashes buf and checks the hash is new; what names the change. */
static void check_new(const unsigned char *buf, size_t n, const char *what, size_t i) {
    char h[33];
    kr_hash128_hex(buf, n, h);
    kr_test_checks++;
    for (int k = 0; k < nseen; k++) {
        if (strcmp(seen[k], h) == 0) {
            kr_test_failures++;
            fprintf(stderr, "%s %zu of %zu hashes as an earlier buffer does (%s)\n", what, i, n, h);
            return;
        }
    }
    memcpy(seen[nseen++], h, 33);
}

int main(void) {
    char h[33];
    /* known answers: XXH3-128 of "" (as kreach.core.util.hash gives it) */
    memset(h, 'x', sizeof h);
    kr_hash128_hex("", 0, h);
    CHECK_STR(h, "99aa06d3014798d86001c324468d497f");
    CHECK(is_hex32(h));

    /* bytes 0..255 and on, NULs among them */
    unsigned char buf[N];
    for (int i = 0; i < N; i++) buf[i] = (unsigned char)(i * 7 + 3);
    buf[N / 2] = 0;
    buf[N - 1] = 0;
    kr_hash128_hex(buf, N, h);
    CHECK(is_hex32(h));
    check_new(buf, N, "the original", 0);
    /* the same bytes again, and at another address */
    unsigned char *copy = malloc(N + 1);
    memcpy(copy + 1, buf, N);
    char h2[33];
    kr_hash128_hex(copy + 1, N, h2);
    CHECK_STR(h2, h);
    free(copy);

    /* every byte alone; every bit of the first and the last bytes */
    for (size_t i = 0; i < N; i++) {
        buf[i] ^= 1;
        check_new(buf, N, "byte", i + 1);
        buf[i] ^= 1;
    }
    for (int b = 1; b < 8; b++) {
        buf[0] ^= (unsigned char)(1 << b);
        check_new(buf, N, "a bit of byte", 1);
        buf[0] ^= (unsigned char)(1 << b);
        buf[N - 1] ^= (unsigned char)(1 << b);
        check_new(buf, N, "a bit of byte", N);
        buf[N - 1] ^= (unsigned char)(1 << b);
    }
    /* one byte fewer (the last, a NUL), and each length down to one byte */
    for (size_t n = N - 1; n >= 1; n--) check_new(buf, n, "the first bytes, a prefix of length", n);
    return kr_test_done("test_hash");
}
