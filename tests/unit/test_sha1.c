/* test_sha1.c - SHA-1 against the FIPS 180 example vectors and sha1sum. */
#include "check.h"
#include "lib/sha1.h"
#include <string.h>

static int hex_of(const char *s, size_t n, const char *want) {
    uint8_t d[20];
    char hex[41];
    sha1(s, n, d);
    sha1_hex(d, hex);
    if (strcmp(hex, want)) fprintf(stderr, "sha1(%.20s...) = %s, want %s\n", s, hex, want);
    return !strcmp(hex, want);
}

int main(void) {
    CHECK(hex_of("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709"));
    CHECK(hex_of("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d"));
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK(hex_of(two, strlen(two), "84983e441c3bd26ebaae4aa1f95129e5e54670f1"));
    /* a million 'a's, fed in uneven pieces */
    sha1_ctx x;
    sha1_init(&x);
    char a[997];
    memset(a, 'a', sizeof a);
    size_t left = 1000000;
    for (size_t step = 1; left; step = (step * 7 + 13) % 997 + 1) {
        size_t n = step < left ? step : left;
        sha1_update(&x, a, n);
        left -= n;
    }
    uint8_t d[20];
    char hex[41];
    sha1_final(&x, d);
    sha1_hex(d, hex);
    CHECK(!strcmp(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"));
    /* lengths around the padding boundary, against sha1sum's answers */
    CHECK(hex_of(a, 55, "c1c8bbdc22796e28c0e15163d20899b65621d65a"));
    CHECK(hex_of(a, 56, "c2db330f6083854c99d4b5bfb6e8f29f201be699"));
    CHECK(hex_of(a, 64, "0098ba824b5c16427bd7a1122a5a442a25ec644d"));
    return check_report();
}
