/* kr_hash.h: content hashes for the results store (candidates, problems, configurations).
 * Runtime layer (no Lua, no GPU). XXH3, 128 bits, the same hash the compile cache keys on. */
#ifndef KR_HASH_H
#define KR_HASH_H

#include <stddef.h>

/* Writes the 128-bit XXH3 hash of n bytes as 32 lowercase hex digits and a NUL into hex. */
void kr_hash128_hex(const void *data, size_t n, char hex[33]);

#endif
