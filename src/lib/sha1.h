/* sha1.h - SHA-1 (FIPS 180-4) for script names: EVALSHA and redis.sha1hex
 * name a script by the hex digest of its body. Pure, any thread. */
#ifndef SHOAL_SHA1_H
#define SHOAL_SHA1_H
#include <stddef.h>
#include <stdint.h>

/* The 20-byte digest of p[0..n). */
void sha1(const void *p, size_t n, uint8_t out[20]);
/* The digest as 40 lowercase hex digits and a NUL (out: 41 bytes). */
void sha1_hex(const void *p, size_t n, char out[41]);
#endif
