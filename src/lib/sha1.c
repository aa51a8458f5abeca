/* sha1.c - SHA-1 as FIPS 180-4 specifies it: 512-bit blocks, 80 rounds of
 * four functions over five 32-bit words, the message padded with a 1 bit,
 * zeros and its length in bits (big-endian). */
#include "lib/sha1.h"
#include <string.h>

static inline uint32_t rol(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

static void compress(uint32_t h[5], const uint8_t b[64]) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (bb & c) | (~bb & d);
            k = 0x5a827999;
        } else if (i < 40) {
            f = bb ^ c ^ d;
            k = 0x6ed9eba1;
        } else if (i < 60) {
            f = (bb & c) | (bb & d) | (c & d);
            k = 0x8f1bbcdc;
        } else {
            f = bb ^ c ^ d;
            k = 0xca62c1d6;
        }
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(bb, 30);
        bb = a;
        a = t;
    }
    h[0] += a;
    h[1] += bb;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void sha1_init(sha1_ctx *x) {
    static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    memcpy(x->h, iv, sizeof iv);
    x->bytes = 0;
    x->fill = 0;
}

void sha1_update(sha1_ctx *x, const void *p, size_t n) {
    const uint8_t *s = p;
    x->bytes += n;
    if (x->fill) {
        size_t take = 64 - x->fill < n ? 64 - x->fill : n;
        memcpy(x->block + x->fill, s, take);
        x->fill += take;
        s += take;
        n -= take;
        if (x->fill < 64) return;
        compress(x->h, x->block);
        x->fill = 0;
    }
    for (; n >= 64; s += 64, n -= 64) compress(x->h, s);
    memcpy(x->block, s, n);
    x->fill = n;
}

void sha1_final(sha1_ctx *x, uint8_t out[20]) {
    uint64_t bits = x->bytes * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (x->fill < 56 ? 56 : 120) - x->fill;
    for (int i = 0; i < 8; i++) pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha1_update(x, pad, padlen + 8);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (uint8_t)(x->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(x->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(x->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)x->h[i];
    }
}

void sha1(const void *p, size_t n, uint8_t out[20]) {
    sha1_ctx x;
    sha1_init(&x);
    sha1_update(&x, p, n);
    sha1_final(&x, out);
}

void sha1_hex(const uint8_t d[20], char hex[41]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 20; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[40] = 0;
}
