/* kr_hash.c: XXH3-128 of a byte string, as hex.
 * Runtime layer (no Lua, no GPU). */
#include "kr_hash.h"

#include <stdio.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

void kr_hash128_hex(const void *data, size_t n, char hex[33]) {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(data, n));
    for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", c.digest[i]);
}
