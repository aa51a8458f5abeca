/* sha256.h - SHA-256 (FIPS 180-4) of a byte string, for ACL passwords,
 * which are kept and shown only as the hex of their hash (as Redis does).
 * Pure functions, any thread. */
#ifndef SHOAL_SHA256_H
#define SHOAL_SHA256_H
#include <stddef.h>
#include <stdint.h>

/* The 32-byte digest of p[0..n). */
void sha256(const void *p, size_t n, uint8_t out[32]);
/* The digest as 64 lowercase hex characters and a NUL (out: 65 bytes). */
void sha256_hex(const void *p, size_t n, char out[65]);
#endif
