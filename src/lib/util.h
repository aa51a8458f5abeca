/* util.h - number <-> string conversions with Redis's exact rules, and glob
 * matching. Pure functions, any thread. */
#ifndef SHOAL_UTIL_H
#define SHOAL_UTIL_H
#include <stddef.h>
#include <stdint.h>

/* Strict decimal parse as Redis's string2ll: optional '-', no '+', no
 * spaces, no leading zeros. Returns 1 and sets *v on success, else 0. */
int str2ll(const char *s, size_t n, long long *v);
/* Same for unsigned 64-bit (no sign allowed). */
int str2ull(const char *s, size_t n, unsigned long long *v);
/* Long double parse as Redis's string2ld (for INCRBYFLOAT). 1 ok, 0 bad. */
int str2ld(const char *s, size_t n, long double *v);
/* Double parse as Redis's getDoubleFromObject (accepts inf, rejects nan). */
int str2d(const char *s, size_t n, double *v);
/* A SCAN-family cursor as Redis reads it (strtoul rules: optional sign,
 * negative wraps, empty is 0). 1 ok, 0 invalid. */
int str2cursor(const char *s, size_t n, uint64_t *out);
/* Writes the decimal form of v into dst (>= 21 bytes); returns length. */
int ll2str(char *dst, long long v);
int ull2str(char *dst, unsigned long long v);
/* "%.17g" as Redis formats doubles; inf/-inf/nan spelled out. dst >= 32. */
int d2str(char *dst, double d);
/* INCRBYFLOAT's human form: %.17Lf with trailing zeros trimmed. dst >= 5120. */
int ld2str(char *dst, size_t cap, long double v);
/* Glob match as Redis (* ? [a-z] [^x] \x), optional case folding. Runs in
 * O(len(pattern) * len(string)) time, never exponentially. */
int glob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase);
/* Case-insensitive equality of a counted string and a C string. */
int str_eq_ci(const char *s, size_t n, const char *lit);
/* 64-bit hash of bytes with a process-wide random seed (set by hash_seed). */
uint64_t hash_bytes(const void *p, size_t n);
void hash_seed(uint64_t seed);
/* CRC16 (XMODEM) as Redis Cluster uses for key slots. */
uint16_t crc16(const char *p, size_t n);
/* Cluster slot of a key, honouring the first non-empty {hashtag}. */
unsigned key_slot(const char *key, size_t n);
#endif
