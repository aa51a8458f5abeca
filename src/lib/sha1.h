/* sha1.h - SHA-1 (FIPS 180-4), for the digests Redis exposes (DEBUG DIGEST,
 * script names). Not for security: SHA-1 is what the Redis protocol names.
 *
 *   sha1_ctx x; sha1_init(&x); sha1_update(&x, p, n) ...; sha1_final(&x, out);
 *
 * Any thread; a context belongs to its caller. */
#ifndef SHOAL_SHA1_H
#define SHOAL_SHA1_H
#include <stddef.h>
#include <stdint.h>

typedef struct sha1_ctx {
    uint32_t h[5];
    uint64_t bytes;    /* message length so far */
    uint8_t block[64]; /* the partial block */
    size_t fill;
} sha1_ctx;

void sha1_init(sha1_ctx *x);
void sha1_update(sha1_ctx *x, const void *p, size_t n);
/* Writes the 20-byte digest; x must be initialised again before reuse. */
void sha1_final(sha1_ctx *x, uint8_t out[20]);
/* One-shot digest of p[0..n). */
void sha1(const void *p, size_t n, uint8_t out[20]);
/* 40 lowercase hex digits and a NUL into hex. */
void sha1_hex(const uint8_t d[20], char hex[41]);
#endif
