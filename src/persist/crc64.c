/* crc64.c - table-driven CRC-64/Jones, eight bytes per step (slicing-by-8):
 * table[0] is the classic byte table, table[k][b] the CRC of byte b
 * followed by k zero bytes, so eight lookups fold one 64-bit word. */
#include "persist/crc64.h"
#include <pthread.h>
#include <string.h>

#define POLY 0x95ac9329ac4bc9b5ull /* 0xad93d23594c935a9 bit-reversed */

static uint64_t table[8][256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void build(void) {
    for (int b = 0; b < 256; b++) {
        uint64_t c = (uint64_t)b;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        table[0][b] = c;
    }
    for (int b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xff];
}

uint64_t crc64(uint64_t crc, const void *p, size_t n) {
    pthread_once(&once, build);
    const uint8_t *s = p;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8); /* little-endian host (x86-64, arm64) */
        w ^= crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
              table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        s += 8;
        n -= 8;
    }
    while (n--)
        crc = table[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
    return crc;
}
