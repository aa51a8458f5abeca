/* util.c - see util.h. */
#include "lib/util.h"
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int str2ull(const char *s, size_t n, unsigned long long *v) {
    if (n == 0 || n > 20) return 0;
    if (n == 1 && s[0] == '0') {
        *v = 0;
        return 1;
    }
    if (s[0] < '1' || s[0] > '9') return 0;
    unsigned long long r = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (r > (ULLONG_MAX - d) / 10) return 0;
        r = r * 10 + d;
    }
    *v = r;
    return 1;
}

int str2ll(const char *s, size_t n, long long *v) {
    if (n == 0) return 0;
    int neg = s[0] == '-';
    unsigned long long u;
    if (neg) {
        if (n == 1 || s[1] == '0') return 0;
        if (!str2ull(s + 1, n - 1, &u)) return 0;
        if (u > (unsigned long long)LLONG_MAX + 1) return 0;
        *v = (long long)(0 - u);
        return 1;
    }
    if (!str2ull(s, n, &u) || u > (unsigned long long)LLONG_MAX) return 0;
    *v = (long long)u;
    return 1;
}

int str2ld(const char *s, size_t n, long double *v) {
    char tmp[5120]; /* Redis refuses numbers of 5120 characters or more */
    if (n == 0 || n >= sizeof tmp) return 0;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *end;
    errno = 0;
    long double x = strtold(tmp, &end);
    if (isspace((unsigned char)tmp[0]) || end != tmp + n || isnan(x) || /* a NUL inside: not a number */
        (errno == ERANGE && (x == HUGE_VALL || x == -HUGE_VALL || x == 0)))
        return 0;
    *v = x;
    return 1;
}

int str2d(const char *s, size_t n, double *v) {
    char tmp[5120]; /* Redis refuses numbers of 5120 characters or more */
    if (n == 0 || n >= sizeof tmp) return 0;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *end;
    errno = 0;
    double x = strtod(tmp, &end);
    if (isspace((unsigned char)tmp[0]) || end != tmp + n || isnan(x) || /* a NUL inside: not a number */
        (errno == ERANGE && (x == HUGE_VAL || x == -HUGE_VAL || x == 0)))
        return 0;
    *v = x;
    return 1;
}

/* Digits are written from the end, so the length comes first; reply
 * headers ("$3", "*600") call this once per element. */
int ull2str(char *dst, unsigned long long v) {
    int n = 1;
    for (unsigned long long t = v; t >= 10; t /= 10) n++;
    dst[n] = 0;
    for (int i = n - 1; i > 0; i--, v /= 10) dst[i] = (char)('0' + v % 10);
    dst[0] = (char)('0' + v);
    return n;
}

int ll2str(char *dst, long long v) {
    if (v < 0) {
        dst[0] = '-';
        return 1 + ull2str(dst + 1, (unsigned long long)0 - (unsigned long long)v);
    }
    return ull2str(dst, (unsigned long long)v);
}

int d2str(char *dst, double d) {
    if (isinf(d)) return sprintf(dst, d > 0 ? "inf" : "-inf");
    if (isnan(d)) return sprintf(dst, "nan");
    return snprintf(dst, 32, "%.17g", d);
}

int ld2str(char *dst, size_t cap, long double v) {
    if (isinf(v)) return snprintf(dst, cap, v > 0 ? "inf" : "-inf");
    int n = snprintf(dst, cap, "%.17Lf", v);
    if (n < 0 || (size_t)n >= cap) return 0;
    if (strchr(dst, '.')) {
        while (n > 0 && dst[n - 1] == '0') n--;
        if (n > 0 && dst[n - 1] == '.') n--;
        dst[n] = 0;
    }
    if (n == 2 && dst[0] == '-' && dst[1] == '0') { /* "-0" prints as "0" */
        dst[0] = '0';
        dst[1] = 0;
        n = 1;
    }
    return n;
}

int str_eq_ci(const char *s, size_t n, const char *lit) {
    size_t l = strlen(lit);
    if (l != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)s[i]) != tolower((unsigned char)lit[i])) return 0;
    return 1;
}

/* One pattern token (not '*') against one character. *tl receives the
 * token's length in the pattern. */
static int glob_one(const char *p, size_t pl, char c, int nocase, size_t *tl) {
    if (nocase) c = (char)tolower((unsigned char)c);
    if (p[0] == '?') {
        *tl = 1;
        return 1;
    }
    if (p[0] == '\\' && pl >= 2) {
        *tl = 2;
        char q = nocase ? (char)tolower((unsigned char)p[1]) : p[1];
        return q == c;
    }
    if (p[0] == '[') {
        size_t i = 1;
        int neg = 0, match = 0;
        if (i < pl && p[i] == '^') {
            neg = 1;
            i++;
        }
        for (; i < pl && p[i] != ']'; i++) {
            if (p[i] == '\\' && i + 1 < pl) {
                i++;
                char q = nocase ? (char)tolower((unsigned char)p[i]) : p[i];
                if (q == c) match = 1;
            } else if (i + 2 < pl && p[i + 1] == '-' && p[i + 2] != ']') {
                char a = p[i], b = p[i + 2];
                if (a > b) {
                    char t = a;
                    a = b;
                    b = t;
                }
                if (nocase) {
                    a = (char)tolower((unsigned char)a);
                    b = (char)tolower((unsigned char)b);
                }
                if (c >= a && c <= b) match = 1;
                i += 2;
            } else {
                char q = nocase ? (char)tolower((unsigned char)p[i]) : p[i];
                if (q == c) match = 1;
            }
        }
        /* An unterminated class runs to the end of the pattern, as Redis. */
        *tl = i < pl ? i + 1 : pl;
        return neg ? !match : match;
    }
    *tl = 1;
    char q = nocase ? (char)tolower((unsigned char)p[0]) : p[0];
    return q == c;
}

int glob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase) {
    size_t pi = 0, si = 0;
    size_t star_p = (size_t)-1, star_s = 0;
    while (si < slen) {
        if (pi < plen && pat[pi] == '*') {
            while (pi < plen && pat[pi] == '*') pi++;
            if (pi == plen) return 1;
            star_p = pi;
            star_s = si;
            continue;
        }
        size_t tl;
        if (pi < plen && glob_one(pat + pi, plen - pi, s[si], nocase, &tl)) {
            pi += tl;
            si++;
            continue;
        }
        if (star_p == (size_t)-1) return 0;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < plen && pat[pi] == '*') pi++;
    return pi == plen;
}

static uint64_t seed0 = 0x9e3779b97f4a7c15ull;
void hash_seed(uint64_t seed) { seed0 = seed | 1; }

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    return x;
}

uint64_t hash_bytes(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = seed0 ^ (n * 0xff51afd7ed558ccdull);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ mix64(w + 0x2545f4914f6cdd1dull)) * 0x9fb21c651e98df25ull;
        s += 8;
        n -= 8;
    }
    /* the last 0..7 bytes in at most two loads, no byte loop */
    uint64_t w = 0;
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        w = lo | (uint64_t)hi << 32;
    } else if (n) {
        w = s[0] | (uint64_t)s[n / 2] << 8 | (uint64_t)s[n - 1] << 16;
    }
    h ^= mix64(w ^ (n << 56));
    return mix64(h);
}

/* CRC16-CCITT (XMODEM), Redis Cluster's key hash, four bytes a step:
 * crc_t[k][b] is the CRC of byte b followed by k zero bytes, so a step
 * combines four lookups that do not wait for each other. */
static uint16_t crc_t[4][256];
__attribute__((constructor)) static void crc16_init(void) {
    for (int i = 0; i < 256; i++) {
        uint16_t c = (uint16_t)(i << 8);
        for (int j = 0; j < 8; j++) c = (uint16_t)((c & 0x8000) ? (c << 1) ^ 0x1021 : c << 1);
        crc_t[0][i] = c;
    }
    for (int k = 1; k < 4; k++)
        for (int i = 0; i < 256; i++)
            crc_t[k][i] = (uint16_t)((crc_t[k - 1][i] << 8) ^ crc_t[0][crc_t[k - 1][i] >> 8]);
}

uint16_t crc16(const char *p, size_t n) {
    const unsigned char *s = (const unsigned char *)p;
    uint16_t c = 0;
    for (; n >= 4; n -= 4, s += 4)
        c = (uint16_t)(crc_t[3][(c >> 8) ^ s[0]] ^ crc_t[2][(c & 0xff) ^ s[1]] ^ crc_t[1][s[2]] ^ crc_t[0][s[3]]);
    for (; n; n--, s++)
        c = (uint16_t)((c << 8) ^ crc_t[0][((c >> 8) ^ *s) & 0xff]);
    return c;
}

unsigned key_slot(const char *key, size_t n) {
    const char *open = memchr(key, '{', n);
    if (open) {
        size_t s = (size_t)(open - key) + 1;
        const char *close = memchr(key + s, '}', n - s);
        if (close && close != key + s) return crc16(key + s, (size_t)(close - (key + s))) & 16383;
    }
    return crc16(key, n) & 16383;
}

/* The cursor as Redis reads it (strtoul semantics): optional sign, a
 * negative value wraps, an empty string is 0; no leading space, no junk,
 * no overflow. A NUL byte ends the text. 1 ok, 0 invalid. */
int str2cursor(const char *s, size_t n, uint64_t *out) {
    size_t len = strnlen(s, n), i = 0;
    int neg = 0;
    uint64_t v = 0;
    if (len == 0) {
        *out = 0;
        return 1;
    }
    if (s[0] == '+' || s[0] == '-') neg = s[i++] == '-';
    if (i == len) return 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = neg ? (uint64_t)0 - v : v;
    return 1;
}
