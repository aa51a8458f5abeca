/* test_pack.c - unit tests of the packed array (src/core/pack.c): integer
 * and string encodings at every size boundary, cursors both ways, find with
 * skip, insert/replace/delete/split/merge, aliasing, validation of corrupt
 * blobs, a randomized run against a plain array model (ordinary, lean
 * and fixed packs), fixed packs turning ordinary, and the sizes of typical small hashes; then the pair pack of
 * hashes (src/core/hpack.c) against a model of pairs. No sockets. */
#include "core/hpack.h"
#include "core/pack.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

/* The element at pos as bytes, copied into out (cap bytes); returns length. */
static size_t elem_str(const pack *p, size_t pos, char *out, size_t cap) {
    pack_val v;
    char buf[PACK_INTBUF];
    size_t n;
    pack_get(p, pos, &v);
    const char *s = pack_val_str(&v, buf, &n);
    if (n > cap) n = cap;
    memcpy(out, s, n);
    return n;
}

static int elem_is(const pack *p, size_t pos, const char *s, size_t len) {
    char tmp[256];
    if (len > sizeof tmp) return 0;
    return elem_str(p, pos, tmp, sizeof tmp) == len && memcmp(tmp, s, len) == 0;
}

static void test_empty(void) {
    pack *p = pack_create();
    CHECK(pack_count(p) == 0);
    CHECK(pack_bytes(p) == 8);
    CHECK(pack_first(p) == 0 && pack_last(p) == 0);
    CHECK(pack_index(p, 0) == 0 && pack_index(p, -1) == 0);
    CHECK(pack_index(p, LONG_MIN) == 0 && pack_index(p, LONG_MAX) == 0);
    CHECK(pack_prev(p, pack_bytes(p)) == 0);
    CHECK(pack_find(p, 0, "x", 1, 0) == 0);
    p = pack_delete_range(p, 0, 10);
    CHECK(pack_count(p) == 0);
    p = pack_delete(p, pack_bytes(p), 3);
    CHECK(pack_count(p) == 0 && pack_bytes(p) == 8);
    CHECK(pack_validate(p, pack_bytes(p)));
    pack *q = pack_split(&p, pack_bytes(p));
    CHECK(pack_count(p) == 0 && pack_count(q) == 0);
    p = pack_merge(p, q);
    CHECK(pack_count(p) == 0 && pack_bytes(p) == 8);
    pack_destroy(&p);
    CHECK(p == NULL);
    pack_destroy(&p); /* NULL is fine */
}

static void test_one(void) {
    pack *p = pack_append(pack_create(), "hello", 5);
    CHECK(pack_count(p) == 1);
    CHECK(pack_bytes(p) == 8 + 7);
    size_t f = pack_first(p);
    CHECK(f == 8 && pack_last(p) == f);
    CHECK(pack_next(p, f) == 0 && pack_prev(p, f) == 0);
    CHECK(pack_index(p, 0) == f && pack_index(p, -1) == f);
    CHECK(pack_index(p, 1) == 0 && pack_index(p, -2) == 0);
    pack_val v;
    pack_get(p, f, &v);
    CHECK(v.s && v.len == 5 && memcmp(v.s, "hello", 5) == 0);
    CHECK(pack_eq(p, f, "hello", 5) && !pack_eq(p, f, "hell", 4));
    p = pack_delete(p, f, 1);
    CHECK(pack_count(p) == 0 && pack_bytes(p) == 8);
    p = pack_append_int(p, -7);
    pack_get(p, pack_first(p), &v);
    CHECK(!v.s && v.v == -7);
    pack_destroy(&p);
}

/* Integers at every encoding boundary: read back exactly, both as an
 * integer and as the same decimal string, and take the expected size. */
static void test_int_boundaries(void) {
    struct {
        int64_t v;
        size_t size;
    } cases[] = {
        {0, 2},
        {1, 2},
        {127, 2},
        {128, 3},
        {-1, 3},
        {4095, 3},
        {-4096, 3},
        {4096, 4},
        {-4097, 4},
        {INT16_MAX, 4},
        {INT16_MIN, 4},
        {INT16_MAX + 1, 5},
        {INT16_MIN - 1, 5},
        {(1 << 23) - 1, 5},
        {-(1 << 23), 5},
        {1 << 23, 6},
        {INT32_MAX, 6},
        {INT32_MIN, 6},
        {(int64_t)INT32_MAX + 1, 7},
        {(int64_t)INT32_MIN - 1, 7},
        {((int64_t)1 << 39) - 1, 7},
        {(int64_t)1 << 39, 8},
        {-((int64_t)1 << 47), 8},
        {(int64_t)1 << 47, 9},
        {((int64_t)1 << 55) - 1, 9},
        {(int64_t)1 << 55, 10},
        {INT64_MAX, 10},
        {INT64_MIN, 10},
        {INT64_MIN + 1, 10},
    };
    size_t n = sizeof cases / sizeof cases[0];
    pack *p = pack_create(), *q = pack_create();
    size_t expect = 8;
    for (size_t i = 0; i < n; i++) {
        char d[PACK_INTBUF];
        int dl = ll2str(d, cases[i].v);
        CHECK(pack_size_insert(q, d, (size_t)dl) - pack_bytes(q) == cases[i].size);
        p = pack_append_int(p, cases[i].v);
        q = pack_append(q, d, (size_t)dl);
        expect += cases[i].size;
        CHECK(pack_bytes(p) == expect);
    }
    CHECK(pack_bytes(q) == pack_bytes(p));
    CHECK(memcmp(p, q, pack_bytes(p)) == 0); /* one encoding per value */
    CHECK(pack_validate(p, pack_bytes(p)));
    size_t pos = pack_first(p);
    for (size_t i = 0; i < n; i++, pos = pack_next(p, pos)) {
        pack_val v;
        int64_t x;
        char buf[PACK_INTBUF], d[PACK_INTBUF];
        size_t l;
        CHECK(pos != 0);
        pack_get(p, pos, &v);
        CHECK(v.s == NULL && v.v == cases[i].v);
        CHECK(pack_val_int(&v, &x) && x == cases[i].v);
        const char *s = pack_val_str(&v, buf, &l);
        int dl = ll2str(d, cases[i].v);
        CHECK(l == (size_t)dl && memcmp(s, d, l) == 0);
        CHECK(pack_eq(p, pos, d, (size_t)dl));
        CHECK(pack_find(p, 0, d, (size_t)dl, 0) == pos);
    }
    CHECK(pos == 0);
    /* backwards too */
    pos = pack_last(p);
    for (size_t i = n; i-- > 0; pos = pack_prev(p, pos)) {
        pack_val v;
        pack_get(p, pos, &v);
        CHECK(!v.s && v.v == cases[i].v);
    }
    CHECK(pos == 0);
    pack_destroy(&p);
    pack_destroy(&q);
}

/* Strings that look like integers but are not canonical stay strings. */
static void test_noncanonical(void) {
    const char *strs[] = {"0123", "+1",   "-0",  " 1", "1 ", "9223372036854775808",  "-9223372036854775809", "", "abc",
                          "1e3",  "0x10", "--1", "-",  "00", "123456789012345678901"};
    size_t n = sizeof strs / sizeof strs[0];
    pack *p = pack_create();
    for (size_t i = 0; i < n; i++)
        p = pack_append(p, strs[i], strlen(strs[i]));
    CHECK(pack_count(p) == n);
    CHECK(pack_validate(p, pack_bytes(p)));
    size_t pos = pack_first(p);
    for (size_t i = 0; i < n; i++, pos = pack_next(p, pos)) {
        pack_val v;
        int64_t x;
        pack_get(p, pos, &v);
        CHECK(v.s != NULL && v.len == strlen(strs[i]));
        CHECK(v.len == 0 || memcmp(v.s, strs[i], v.len) == 0);
        CHECK(!pack_val_int(&v, &x));
        CHECK(pack_find(p, 0, strs[i], strlen(strs[i]), 0) == pos);
    }
    /* "1" (int) and "01" (string) are different elements */
    p = pack_append(p, "1", 1);
    size_t one = pack_last(p);
    CHECK(pack_find(p, 0, "1", 1, 0) == one);
    CHECK(pack_find(p, 0, "01", 2, 0) == 0);
    CHECK(!pack_eq(p, one, "01", 2) && !pack_eq(p, one, "+1", 2));
    /* "-0" found as the string, not as integer 0 */
    p = pack_append_int(p, 0);
    CHECK(pack_find(p, 0, "-0", 2, 0) == pack_index(p, 2));
    CHECK(pack_find(p, 0, "0", 1, 0) == pack_last(p));
    pack_destroy(&p);
}

/* String lengths at the header and backlen tiers, and very long ones. */
static void test_string_sizes(void) {
    size_t lens[] = {0, 1, 63, 64, 125, 126, 127, 4095, 4096, 16381, 16382, 16383, 65535, 70000, 1 << 20, 2097148};
    size_t n = sizeof lens / sizeof lens[0];
    pack *p = pack_create();
    size_t expect = 8;
    char *big = malloc(1 << 22);
    for (size_t i = 0; i < (1 << 22); i++)
        big[i] = (char)('a' + i % 26);
    for (size_t i = 0; i < n; i++) {
        size_t l = lens[i];
        size_t hdr = l <= 63 ? 1 : l <= 4095 ? 2 : 5;
        size_t body = hdr + l;
        size_t bl = body < 128 ? 1 : body < 16384 ? 2 : body < (1 << 21) ? 3 : 4;
        CHECK(pack_size_insert(p, big + i, l) - pack_bytes(p) == body + bl);
        p = pack_append(p, big + i, l);
        expect += body + bl;
        CHECK(pack_bytes(p) == expect);
    }
    CHECK(pack_validate(p, pack_bytes(p)));
    /* walk forward and backward over the long entries */
    size_t pos = pack_first(p);
    for (size_t i = 0; i < n; i++, pos = pack_next(p, pos)) {
        pack_val v;
        pack_get(p, pos, &v);
        CHECK(v.s && v.len == lens[i] && (v.len == 0 || memcmp(v.s, big + i, v.len) == 0));
        CHECK(pack_index(p, (long)i) == pos);
        CHECK(pack_index(p, (long)i - (long)n) == pos);
    }
    CHECK(pos == 0);
    pos = pack_bytes(p);
    for (size_t i = n; i-- > 0;) {
        pos = pack_prev(p, pos);
        pack_val v;
        pack_get(p, pos, &v);
        CHECK(v.len == lens[i]);
    }
    CHECK(pack_prev(p, pos) == 0);
    /* find a long string, and one differing only in its last byte */
    CHECK(pack_find(p, 0, big + 13, 70000, 0) == pack_index(p, 13));
    char *alt = malloc(70000);
    memcpy(alt, big + 13, 70000);
    alt[69999] ^= 1;
    CHECK(pack_find(p, 0, alt, 70000, 0) == 0);
    free(alt);
    pack_destroy(&p);
    free(big);
}

static void test_find_skip(void) {
    /* field/value pairs where values collide with field names */
    const char *kv[] = {"a", "b", "b", "a", "c", "123", "123", "x", "", "y"};
    pack *p = pack_create();
    for (int i = 0; i < 10; i++)
        p = pack_append(p, kv[i], strlen(kv[i]));
    CHECK(pack_find(p, 0, "a", 1, 1) == pack_index(p, 0));
    CHECK(pack_find(p, 0, "b", 1, 1) == pack_index(p, 2));
    CHECK(pack_find(p, 0, "123", 3, 1) == pack_index(p, 6));
    CHECK(pack_find(p, 0, "123", 3, 0) == pack_index(p, 5));
    CHECK(pack_find(p, 0, "x", 1, 1) == 0);
    CHECK(pack_find(p, 0, "y", 1, 1) == 0);
    CHECK(pack_find(p, 0, "", 0, 1) == pack_index(p, 8));
    /* starting from a value position visits values */
    CHECK(pack_find(p, pack_index(p, 1), "a", 1, 1) == pack_index(p, 3));
    CHECK(pack_find(p, pack_index(p, 1), "x", 1, 1) == pack_index(p, 7));
    /* larger skips (e.g. triples) */
    CHECK(pack_find(p, 0, "c", 1, 2) == 0);
    CHECK(pack_find(p, 0, "a", 1, 2) == pack_index(p, 0));
    CHECK(pack_find(p, 0, "x", 1, 6) == pack_index(p, 7));
    CHECK(pack_find(p, 0, "y", 1, 1000) == 0);
    pack_destroy(&p);
}

static void test_cmp(void) {
    pack *p = pack_create();
    p = pack_append(p, "10", 2); /* int */
    p = pack_append(p, "abc", 3);
    p = pack_append(p, "", 0);
    size_t a = pack_index(p, 0), b = pack_index(p, 1), c = pack_index(p, 2);
    CHECK(pack_cmp(p, a, "9", 1) < 0);
    CHECK(pack_cmp(p, a, "10", 2) == 0);
    CHECK(pack_cmp(p, a, "1", 1) > 0);
    CHECK(pack_cmp(p, a, "100", 3) < 0);
    CHECK(pack_cmp(p, b, "abd", 3) < 0);
    CHECK(pack_cmp(p, b, "abc", 3) == 0);
    CHECK(pack_cmp(p, b, "ab", 2) > 0);
    CHECK(pack_cmp(p, b, "\xff", 1) < 0); /* binary, unsigned bytes */
    CHECK(pack_cmp(p, c, "", 0) == 0);
    CHECK(pack_cmp(p, c, "a", 1) < 0);
    pack_destroy(&p);
}

static void test_insert_replace_delete(void) {
    pack *p = pack_create();
    p = pack_append(p, "b", 1);
    p = pack_prepend(p, "a", 1);
    p = pack_append(p, "d", 1);
    p = pack_insert(p, pack_index(p, 2), "c", 1); /* a b c d */
    p = pack_insert(p, pack_bytes(p), "e", 1);    /* append via end position */
    const char *want = "abcde";
    for (int i = 0; i < 5; i++)
        CHECK(elem_is(p, pack_index(p, i), want + i, 1));
    /* the inserted element is at the given position */
    size_t at = pack_index(p, 1);
    p = pack_insert_int(p, at, 77);
    CHECK(pack_eq(p, at, "77", 2) && pack_count(p) == 6);
    p = pack_delete(p, at, 1);
    CHECK(elem_is(p, at, "b", 1));
    /* replace: same size, grow, shrink, to int and back */
    at = pack_index(p, 2);
    p = pack_replace(p, at, "C", 1);
    CHECK(elem_is(p, at, "C", 1));
    char longs[300];
    memset(longs, 'L', sizeof longs);
    p = pack_replace(p, at, longs, sizeof longs);
    CHECK(pack_eq(p, at, longs, sizeof longs));
    CHECK(elem_is(p, pack_next(p, at), "d", 1) && elem_is(p, pack_prev(p, at), "b", 1));
    p = pack_replace_int(p, at, INT64_MIN);
    CHECK(pack_eq(p, at, "-9223372036854775808", 20));
    p = pack_replace(p, at, "", 0);
    CHECK(pack_eq(p, at, "", 0));
    CHECK(pack_validate(p, pack_bytes(p)));
    CHECK(pack_count(p) == 5);
    /* deletes: head, tail, middle, past the end */
    p = pack_delete_range(p, 0, 1); /* b "" d e */
    CHECK(pack_count(p) == 4 && elem_is(p, pack_first(p), "b", 1));
    p = pack_delete_range(p, -1, 1); /* b "" d */
    CHECK(pack_count(p) == 3 && elem_is(p, pack_last(p), "d", 1));
    p = pack_delete_range(p, 1, 1); /* b d */
    CHECK(pack_count(p) == 2 && elem_is(p, pack_index(p, 1), "d", 1));
    p = pack_delete_range(p, 5, 1); /* out of range: nothing */
    p = pack_delete_range(p, -3, 1);
    CHECK(pack_count(p) == 2);
    size_t last = pack_last(p);
    p = pack_delete(p, last, 100); /* clipped at the end */
    CHECK(pack_count(p) == 1 && last == pack_bytes(p));
    p = pack_delete_range(p, 0, 0);
    CHECK(pack_count(p) == 1);
    p = pack_delete_range(p, -1, 5);
    CHECK(pack_count(p) == 0 && pack_bytes(p) == 8);
    CHECK(pack_validate(p, pack_bytes(p)));
    pack_destroy(&p);
}

/* Values taken from the pack itself while it moves (LSET x LINDEX, LMOVE). */
static void test_aliasing(void) {
    pack *p = pack_create();
    char s[100];
    memset(s, 'q', sizeof s);
    p = pack_append(p, s, sizeof s);
    for (int i = 0; i < 12; i++) {
        pack_val v;
        pack_get(p, pack_first(p), &v);
        p = pack_append(p, v.s, v.len); /* realloc moves the source */
        pack_get(p, pack_last(p), &v);
        p = pack_prepend(p, v.s, v.len);
    }
    CHECK(pack_count(p) == 25);
    for (size_t pos = pack_first(p); pos; pos = pack_next(p, pos))
        CHECK(pack_eq(p, pos, s, sizeof s));
    pack_val v;
    p = pack_append(p, "short", 5);
    pack_get(p, pack_first(p), &v);
    p = pack_replace(p, pack_last(p), v.s, v.len); /* grows the tail with its own head */
    CHECK(pack_eq(p, pack_last(p), s, sizeof s));
    pack_get(p, pack_last(p), &v);
    p = pack_replace(p, pack_first(p), v.s + 1, 3); /* shrinks */
    CHECK(pack_eq(p, pack_first(p), "qqq", 3));
    CHECK(pack_validate(p, pack_bytes(p)));
    pack_destroy(&p);
}

static void test_split_merge(void) {
    pack *p = pack_create();
    for (int i = 0; i < 50; i++)
        p = pack_append_int(p, i * 1000);
    pack *orig = pack_dup(p);
    pack *q = pack_split(&p, pack_index(p, 20));
    CHECK(pack_count(p) == 20 && pack_count(q) == 30);
    CHECK(pack_validate(p, pack_bytes(p)) && pack_validate(q, pack_bytes(q)));
    pack_val v;
    pack_get(q, pack_first(q), &v);
    CHECK(!v.s && v.v == 20000);
    pack_get(p, pack_last(p), &v);
    CHECK(!v.s && v.v == 19000);
    p = pack_merge(p, q);
    CHECK(pack_bytes(p) == pack_bytes(orig) && memcmp(p, orig, pack_bytes(p)) == 0);
    q = pack_split(&p, pack_first(p)); /* everything moves */
    CHECK(pack_count(p) == 0 && pack_count(q) == 50);
    p = pack_merge(p, q);
    CHECK(memcmp(p, orig, pack_bytes(p)) == 0);
    pack_destroy(&p);
    pack_destroy(&orig);
}

/* Builds a raw blob by hand: header plus the given entry bytes. */
static size_t blob(uint8_t *out, const uint8_t *ent, size_t elen, uint32_t count) {
    uint32_t total = (uint32_t)(8 + elen);
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(total >> (8 * i));
    for (int i = 0; i < 4; i++)
        out[4 + i] = (uint8_t)(count >> (8 * i));
    memcpy(out + 8, ent, elen);
    return total;
}

static int valid_bytes(const uint8_t *ent, size_t elen, uint32_t count) {
    uint8_t b[64];
    size_t n = blob(b, ent, elen, count);
    uint8_t *h = malloc(n); /* exact-size heap copy so ASan sees any overread */
    memcpy(h, b, n);
    int r = pack_validate(h, n);
    free(h);
    return r;
}

static void test_validate_handmade(void) {
    CHECK(pack_validate(NULL, 0) == 0);
    uint8_t e1[] = {0x05, 0x01}; /* int 5 */
    CHECK(valid_bytes(e1, 2, 1));
    CHECK(!valid_bytes(e1, 2, 2)); /* count mismatch */
    CHECK(!valid_bytes(e1, 2, 0));
    uint8_t e2[] = {0x05, 0x02}; /* wrong backlen */
    CHECK(!valid_bytes(e2, 2, 1));
    uint8_t e3[] = {0xC0, 0x05, 0x02}; /* 5 as a 13-bit int: not canonical */
    CHECK(!valid_bytes(e3, 3, 1));
    uint8_t e4[] = {0xC0, 0x80, 0x02}; /* 128 as 13-bit: fine */
    CHECK(valid_bytes(e4, 3, 1));
    uint8_t e5[] = {0x82, '1', '2', 0x03}; /* "12" stored as a string */
    CHECK(!valid_bytes(e5, 4, 1));
    uint8_t e6[] = {0x82, '0', '2', 0x03}; /* "02" is a real string */
    CHECK(valid_bytes(e6, 4, 1));
    uint8_t e7[] = {0xF1, 0x05, 0x00, 0x03}; /* 5 in 2 bytes */
    CHECK(!valid_bytes(e7, 4, 1));
    uint8_t e8[] = {0xF1, 0x00, 0x80, 0x03}; /* -32768 in 2 bytes: fine */
    CHECK(valid_bytes(e8, 4, 1));
    uint8_t e9[] = {0xF9, 0x01};
    CHECK(!valid_bytes(e9, 2, 1));
    uint8_t e10[] = {0xF0, 0x01};
    CHECK(!valid_bytes(e10, 2, 1));
    uint8_t e11[] = {0xE0, 0x03, 'a', 0x04}; /* 12-bit length for 3 bytes: not canonical (and short) */
    CHECK(!valid_bytes(e11, 4, 1));
    uint8_t e12[] = {0xF8, 0xFF, 0xFF, 0xFF, 0xFF, 0x00}; /* 4 GiB string in 6 bytes */
    CHECK(!valid_bytes(e12, 6, 1));
    uint8_t e13[] = {0xF7, 1, 2, 3, 4, 5, 6, 7}; /* int64 cut short */
    CHECK(!valid_bytes(e13, 8, 1));
    uint8_t e14[] = {0x85, 'a', 'b'}; /* string runs past the end */
    CHECK(!valid_bytes(e14, 3, 1));
    uint8_t e15[] = {0x81, 'a'}; /* backlen missing */
    CHECK(!valid_bytes(e15, 2, 1));
    uint8_t e16[] = {0xC0}; /* header cut */
    CHECK(!valid_bytes(e16, 1, 1));
    uint8_t hdr[8] = {9, 0, 0, 0, 0, 0, 0, 0}; /* says 9 bytes, has 8 */
    CHECK(!pack_validate(hdr, 8));
    CHECK(!pack_validate(hdr, 7));
    uint8_t ok[8] = {8, 0, 0, 0, 0, 0, 0, 0};
    CHECK(pack_validate(ok, 8));
    pack *l = pack_load(ok, 8);
    CHECK(l && pack_count(l) == 0);
    pack_destroy(&l);
    CHECK(pack_load(hdr, 8) == NULL);
}

/* Every truncation and many one-byte corruptions of a real pack: validate
 * must never read outside the blob, and whatever it accepts must walk
 * cleanly both ways. */
static void test_validate_fuzz(void) {
    pack *p = pack_create();
    p = pack_append(p, "field", 5);
    p = pack_append_int(p, 300);
    p = pack_append_int(p, INT64_MIN);
    char mid[200];
    memset(mid, 'm', sizeof mid);
    p = pack_append(p, mid, sizeof mid);
    p = pack_append(p, "", 0);
    p = pack_append_int(p, 1);
    size_t n = pack_bytes(p);
    CHECK(pack_validate(p, n));
    int accepted = 0;
    for (size_t cut = 0; cut < n; cut++) {
        uint8_t *h = malloc(cut ? cut : 1);
        memcpy(h, p, cut);
        CHECK(!pack_validate(h, cut));
        if (cut >= 8) { /* also with the header patched to claim the cut size */
            for (int i = 0; i < 4; i++)
                h[i] = (uint8_t)(cut >> (8 * i));
            int ok = pack_validate(h, cut);
            if (ok) accepted++;
            CHECK(!ok); /* count no longer matches */
        }
        free(h);
    }
    CHECK(accepted == 0);
    const uint8_t flips[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF};
    int valid_mutants = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t f = 0; f < sizeof flips; f++) {
            uint8_t *h = malloc(n);
            memcpy(h, p, n);
            h[i] ^= flips[f];
            if (pack_validate(h, n)) {
                valid_mutants++;
                pack *q = (pack *)h;
                size_t cnt = 0;
                for (size_t pos = pack_first(q); pos; pos = pack_next(q, pos)) {
                    char tmp[300];
                    elem_str(q, pos, tmp, sizeof tmp);
                    cnt++;
                }
                CHECK(cnt == pack_count(q));
                cnt = 0;
                for (size_t pos = pack_last(q); pos; pos = pack_prev(q, pos))
                    cnt++;
                CHECK(cnt == pack_count(q));
            }
            free(h);
        }
    }
    CHECK(valid_mutants > 0); /* flipping a letter of "field" stays valid */
    pack_destroy(&p);
}

/* ---- randomized run against a model ---- */

typedef struct {
    char *s;
    size_t len;
} mstr;

static mstr model[4096];
static size_t mcount;

static void random_value(char *out, size_t *len) {
    uint64_t r = rnd() % 10;
    if (r < 3) { /* integer of a random width */
        int bits = 1 + (int)(rnd() % 64);
        int64_t v = (int64_t)(rnd() >> (64 - bits));
        if (rnd() & 1) v = (int64_t) ~(uint64_t)v; /* -v-1 without overflow */
        *len = (size_t)ll2str(out, v);
    } else if (r < 4) {
        const char *odd[] = {
            "", "0", "-0", "01", "+5", "9223372036854775807", "-9223372036854775808", "9223372036854775808"};
        const char *o = odd[rnd() % 8];
        *len = strlen(o);
        memcpy(out, o, *len);
    } else {
        size_t l = rnd() % 100 == 0 ? 64 + rnd() % 5000 : rnd() % 70;
        for (size_t i = 0; i < l; i++)
            out[i] = (char)('a' + rnd() % 3); /* small alphabet: collisions */
        *len = l;
    }
}

static void model_insert(size_t at, const char *s, size_t len) {
    memmove(model + at + 1, model + at, (mcount - at) * sizeof model[0]);
    model[at].s = malloc(len ? len : 1);
    memcpy(model[at].s, s, len);
    model[at].len = len;
    mcount++;
}

static void model_delete(size_t at, size_t n) {
    for (size_t i = at; i < at + n; i++)
        free(model[i].s);
    memmove(model + at, model + at + n, (mcount - at - n) * sizeof model[0]);
    mcount -= n;
}

static int model_matches(const pack *p) {
    if (pack_count(p) != mcount) return 0;
    size_t pos = pack_first(p);
    for (size_t i = 0; i < mcount; i++, pos = pack_next(p, pos)) {
        if (!pos || !pack_eq(p, pos, model[i].s, model[i].len)) return 0;
    }
    if (pos) return 0;
    pos = pack_bytes(p);
    for (size_t i = mcount; i-- > 0;) {
        pos = pack_prev(p, pos);
        if (!pos || !pack_eq(p, pos, model[i].s, model[i].len)) return 0;
    }
    return pack_prev(p, pos) == 0 && pack_validate(p, pack_bytes(p));
}

enum { ORDINARY, LEAN, FIXED };

/* A value for the model run of a pack kind: fixed packs mostly get 8-byte
 * strings, which they take as they are. */
static void model_value(int kind, char *out, size_t *len) {
    if (kind != FIXED || rnd() % 200 == 0) {
        random_value(out, len);
        return;
    }
    for (int i = 0; i < 8; i++)
        out[i] = (char)('a' + rnd() % 3);
    *len = 8;
}

static void test_random_model(int kind) {
    rng = 12345 + (uint64_t)kind;
    pack *p = kind == LEAN ? pack_create_lean() : kind == FIXED ? pack_create_fixed() : pack_create();
    char val[6000];
    size_t len;
    int bad = 0, was_fixed = 0;
    for (int iter = 0; iter < 20000 && !bad; iter++) {
        uint64_t op = rnd() % 100;
        was_fixed |= pack_is_fixed(p);
        if (op < 35 && mcount < 4000) {
            model_value(kind, val, &len);
            size_t at = mcount ? rnd() % (mcount + 1) : 0;
            size_t pos = at == mcount ? pack_bytes(p) : pack_index(p, (long)at);
            size_t want = pack_size_insert(p, val, len);
            p = pack_insert(p, pos, val, len);
            if (pack_bytes(p) != want) bad = 1;
            model_insert(at, val, len);
        } else if (op < 37 && kind == FIXED) { /* empty: a fixed pack chooses its width again */
            p = pack_delete_range(p, 0, mcount);
            model_delete(0, mcount);
        } else if (op < 45 && mcount < 4000) {
            model_value(kind, val, &len);
            if (rnd() & 1) {
                p = pack_append(p, val, len);
                model_insert(mcount, val, len);
            } else {
                p = pack_prepend(p, val, len);
                model_insert(0, val, len);
            }
        } else if (op < 60 && mcount) {
            size_t at = rnd() % mcount, n = 1 + rnd() % 4;
            if (n > mcount - at) n = mcount - at;
            long idx = (rnd() & 1) ? (long)at : (long)at - (long)mcount;
            p = pack_delete_range(p, idx, n);
            model_delete(at, n);
        } else if (op < 75 && mcount) {
            size_t at = rnd() % mcount, pos = pack_index(p, (long)at);
            model_value(kind, val, &len);
            size_t want = pack_size_replace(p, pos, val, len);
            p = pack_replace(p, pos, val, len);
            if (pack_bytes(p) != want) bad = 1;
            model_delete(at, 1);
            model_insert(at, val, len);
        } else if (op < 90 && mcount) {
            long i = (long)(rnd() % (2 * mcount)) - (long)mcount;
            size_t at = i < 0 ? (size_t)(i + (long)mcount) : (size_t)i;
            size_t pos = pack_index(p, i);
            if (!pos || !pack_eq(p, pos, model[at].s, model[at].len)) bad = 1;
        } else {
            model_value(kind, val, &len);
            size_t skip = rnd() % 3, want = 0;
            for (size_t i = 0; i < mcount; i += skip + 1)
                if (model[i].len == len && memcmp(model[i].s, val, len) == 0) {
                    want = pack_index(p, (long)i);
                    break;
                }
            if (pack_find(p, 0, val, len, skip) != want) bad = 1;
        }
        if (iter % 500 == 0 && !model_matches(p)) bad = 1;
        if (bad) fprintf(stderr, "random model diverged at iteration %d\n", iter);
    }
    CHECK(!bad);
    CHECK(model_matches(p));
    CHECK(pack_is_lean(p) == (kind == LEAN));
    CHECK(was_fixed == (kind == FIXED));
    if (mcount > 2) { /* split and merge keep the flags */
        int fixed = pack_is_fixed(p);
        pack *q = pack_split(&p, pack_index(p, (long)(mcount / 2)));
        CHECK(pack_is_lean(q) == (kind == LEAN) && pack_is_fixed(q) == fixed);
        CHECK(pack_validate(q, pack_bytes(q)) && pack_validate(p, pack_bytes(p)));
        size_t want = pack_size_merge(p, q);
        p = pack_merge(p, q);
        CHECK(model_matches(p) && pack_bytes(p) == want);
    }
    model_delete(0, mcount);
    pack_destroy(&p);
}

/* A lean pack spends no backlen: one byte less per short entry. */
static void test_lean(void) {
    pack *p = pack_create_lean(), *q = pack_create();
    for (int i = 0; i < 50; i++) {
        p = pack_append(p, "m0000000", 8);
        p = pack_append_int(p, i);
        q = pack_append(q, "m0000000", 8);
        q = pack_append_int(q, i);
    }
    CHECK(pack_bytes(p) == 8 + 50 * (9 + 1) && pack_bytes(q) == 8 + 50 * (10 + 2));
    CHECK(pack_validate(p, pack_bytes(p)) && !pack_validate(p, pack_bytes(p) - 1));
    CHECK(pack_last(p) && pack_eq(p, pack_last(p), "49", 2) && pack_index(p, -2) == pack_prev(p, pack_last(p)));
    pack *d = pack_dup(p);
    CHECK(pack_is_lean(d) && pack_count(d) == 100);
    pack_destroy(&d);
    pack_destroy(&p);
    pack_destroy(&q);
}

/* A fixed pack: 8 bytes per 8-byte element, arithmetic cursors, and the
 * one-way turn into an ordinary pack on a value it cannot take. */
static void test_fixed(void) {
    pack *p = pack_create_fixed();
    char e[16];
    CHECK(!pack_is_fixed(p) && pack_validate(p, pack_bytes(p)));
    for (int i = 0; i < 100; i++) {
        snprintf(e, sizeof e, "e%07d", i);
        CHECK(pack_size_insert(p, e, 8) == pack_bytes(p) + 8);
        p = pack_append(p, e, 8);
    }
    CHECK(pack_is_fixed(p) && pack_count(p) == 100 && pack_bytes(p) == 8 + 100 * 8);
    CHECK(pack_validate(p, pack_bytes(p)) && !pack_validate(p, pack_bytes(p) - 1));
    CHECK(elem_is(p, pack_index(p, 42), "e0000042", 8) && elem_is(p, pack_index(p, -1), "e0000099", 8));
    CHECK(pack_prev(p, pack_bytes(p)) == pack_index(p, 99) && pack_prev(p, pack_first(p)) == 0);
    CHECK(pack_skip(p, pack_first(p), 99) == pack_last(p) && pack_skip(p, pack_first(p), 100) == 0);
    CHECK(pack_find(p, 0, "e0000077", 8, 0) == pack_index(p, 77) && pack_find(p, 0, "e000007", 7, 0) == 0);
    CHECK(pack_eq(p, pack_index(p, 3), "e0000003", 8) && !pack_eq(p, pack_index(p, 3), "e0000004", 8));
    /* a same-width value is replaced in place, even from inside the pack */
    p = pack_replace(p, pack_index(p, 5), (const char *)p + pack_index(p, 6), 8);
    CHECK(pack_is_fixed(p) && elem_is(p, pack_index(p, 5), "e0000006", 8));
    /* an inserted copy of an element of the pack itself, then an integer */
    p = pack_insert(p, pack_first(p), (const char *)p + pack_index(p, 9), 8);
    CHECK(pack_is_fixed(p) && elem_is(p, pack_first(p), "e0000009", 8) && pack_count(p) == 101);
    CHECK(pack_size_insert(p, "12345678", 8) == 8 + 101 * 10 + 6);
    p = pack_insert(p, pack_index(p, 50), "12345678", 8); /* a canonical integer: not taken */
    CHECK(!pack_is_fixed(p) && pack_count(p) == 102 && pack_bytes(p) == 8 + 101 * 10 + 6);
    CHECK(elem_is(p, pack_index(p, 50), "12345678", 8) && elem_is(p, pack_index(p, 51), "e0000049", 8));
    CHECK(elem_is(p, pack_index(p, -1), "e0000099", 8) && pack_validate(p, pack_bytes(p)));
    p = pack_delete(p, pack_first(p), 102); /* an ordinary pack stays one */
    p = pack_append(p, "ab", 2);
    CHECK(!pack_is_fixed(p) && pack_bytes(p) == 8 + 4);
    pack_destroy(&p);

    /* emptied, a fixed pack chooses again; too long, it turns ordinary */
    p = pack_append(pack_create_fixed(), "ab", 2);
    CHECK(pack_is_fixed(p) && pack_bytes(p) == 10);
    p = pack_delete(p, pack_first(p), 1);
    p = pack_append(p, "abcd", 4);
    CHECK(pack_is_fixed(p) && pack_bytes(p) == 12 && elem_is(p, pack_first(p), "abcd", 4));
    char big[300];
    memset(big, 'x', sizeof big);
    CHECK(pack_size_replace(p, pack_first(p), big, 300) == 8 + 2 + 300 + 2);
    p = pack_replace(p, pack_first(p), big, 300);
    CHECK(!pack_is_fixed(p) && pack_bytes(p) == 8 + 2 + 300 + 2 && pack_validate(p, pack_bytes(p)));
    pack_destroy(&p);

    /* split keeps the width; merge of two widths turns both ordinary */
    p = pack_create_fixed();
    for (int i = 0; i < 10; i++)
        p = pack_append(p, "xyz", 3);
    pack *q = pack_split(&p, pack_index(p, 4));
    CHECK(pack_is_fixed(p) && pack_is_fixed(q) && pack_count(q) == 6 && pack_bytes(q) == 8 + 18);
    CHECK(pack_size_merge(p, q) == 8 + 30);
    p = pack_merge(p, q);
    CHECK(pack_is_fixed(p) && pack_count(p) == 10 && pack_bytes(p) == 38);
    q = pack_append(pack_create_fixed(), "wxyz", 4);
    CHECK(pack_size_merge(p, q) == 8 + 10 * 5 + 6);
    p = pack_merge(p, q);
    CHECK(!pack_is_fixed(p) && pack_count(p) == 11 && pack_bytes(p) == 8 + 10 * 5 + 6);
    CHECK(elem_is(p, pack_last(p), "wxyz", 4) && pack_validate(p, pack_bytes(p)));
    pack_destroy(&p);

    /* validation: a width without entries, a canonical integer inside */
    uint8_t b[16] = {16, 0, 0, 0, 1, 0, 0, 0x42, /* fixed, width 8, count 1 */ '1', '2', '3', '4', '5', '6', '7', '8'};
    CHECK(!pack_validate(b, sizeof b));
    b[8] = 'x';
    CHECK(pack_validate(b, sizeof b));
    b[4] = 0;
    CHECK(!pack_validate(b, sizeof b));
}

/* ---- the pair pack ---- */

typedef struct {
    char f[64], v[6000];
    size_t fl, vl;
} mpair;
static mpair pairs[300];
static size_t npairs;

static int pair_is(const hpack *h, size_t pos, const mpair *m) {
    pack_val f, v;
    char fb[PACK_INTBUF], vb[PACK_INTBUF];
    size_t fl, vl;
    hpack_get(h, pos, &f, &v);
    const char *fs = pack_val_str(&f, fb, &fl), *vs = pack_val_str(&v, vb, &vl);
    return fl == m->fl && vl == m->vl && !memcmp(fs, m->f, fl) && !memcmp(vs, m->v, vl);
}

static int hpack_matches(const hpack *h) {
    if (hpack_count(h) != npairs) return 0;
    size_t pos = hpack_first(h), bytes = 8;
    for (size_t i = 0; i < npairs; i++, pos = hpack_next(h, pos)) {
        if (!pos || !pair_is(h, pos, &pairs[i]) || hpack_index(h, i) != pos) return 0;
        if (hpack_find(h, pairs[i].f, pairs[i].fl) != pos) return 0;
        bytes += hpack_pair_size(pairs[i].f, pairs[i].fl, pairs[i].v, pairs[i].vl);
    }
    return pos == 0 && hpack_index(h, npairs) == 0 && hpack_bytes(h) == bytes;
}

/* Fields and values of every form: short strings, longer ones, integers. */
static void random_field(char *out, size_t *len, size_t cap) {
    static char tmp[6000];
    random_value(tmp, len);
    if (*len > cap) *len = cap;
    memcpy(out, tmp, *len);
    if (rnd() % 3 == 0) *len = (size_t)snprintf(out, cap, "field%03d", (int)(rnd() % 400));
}

static void test_hpack_model(void) {
    rng = 777;
    hpack *h = hpack_create();
    int bad = 0;
    for (int iter = 0; iter < 20000 && !bad; iter++) {
        uint64_t op = rnd() % 100;
        char f[64];
        size_t fl;
        random_field(f, &fl, sizeof f);
        size_t at = hpack_find(h, f, fl), mi = npairs;
        for (size_t i = 0; i < npairs; i++)
            if (pairs[i].fl == fl && !memcmp(pairs[i].f, f, fl)) mi = i;
        if ((at != 0) != (mi < npairs)) bad = 1;
        if (op < 60 && (mi < npairs || npairs < 300)) { /* set */
            mpair m;
            memcpy(m.f, f, fl);
            m.fl = fl;
            random_value(m.v, &m.vl);
            if (mi < npairs) {
                h = hpack_replace(h, at, m.v, m.vl);
                pairs[mi] = m;
            } else {
                h = hpack_append(h, m.f, m.fl, m.v, m.vl);
                pairs[npairs++] = m;
            }
        } else if (mi < npairs) { /* delete */
            h = hpack_delete(h, at);
            memmove(pairs + mi, pairs + mi + 1, (npairs - mi - 1) * sizeof pairs[0]);
            npairs--;
        }
        if (iter % 100 == 0 && !hpack_matches(h)) bad = 1;
        if (bad) fprintf(stderr, "hpack model diverged at iteration %d\n", iter);
    }
    CHECK(!bad && hpack_matches(h));
    hpack *d = hpack_dup(h);
    CHECK(hpack_matches(d));
    hpack_destroy(&d);
    hpack_destroy(&h);
    npairs = 0;
}

/* The short form: a pair of short strings costs one byte on top. */
static void test_hpack_sizes(void) {
    hpack *h = hpack_create();
    char f[32], v[32];
    for (int i = 0; i < 100; i++) {
        snprintf(f, sizeof f, "field%03d", i);
        snprintf(v, sizeof v, "v%07d", i);
        h = hpack_append(h, f, 8, v, 8);
    }
    CHECK(hpack_bytes(h) == 8 + 100 * 17);
#ifndef SHOAL_LIBC_MALLOC
    CHECK(zmalloc_size(h) == 1792); /* mimalloc's size class: 1708 fits in 1792 */
#endif
    printf("size: hpack 100 x field%%03d -> 8-byte string: %zu bytes (%zu allocated)\n", hpack_bytes(h),
           zmalloc_size(h));
    /* the limits of the short form, and an empty field and value */
    CHECK(hpack_pair_size("12345678901234", 14, "123456789012345", 15) == 30);
    CHECK(hpack_pair_size("abcdefghijklmno", 15, "v", 1) == 1 + 16 + 2);
    CHECK(hpack_pair_size("f", 1, "1234567890123456", 16) == 1 + 2 + 8); /* a 7-byte integer element */
    h = hpack_append(h, "", 0, "", 0);
    size_t pos = hpack_find(h, "", 0);
    pack_val a, b;
    hpack_get(h, pos, &a, &b);
    CHECK(pos && a.s && a.len == 0 && b.s && b.len == 0 && hpack_count(h) == 101);
    hpack_destroy(&h);
}

/* Sizes of typical small hashes, checked exactly (and printed for the
 * memory budget). */
static void test_sizes(void) {
    pack *p = pack_create();
    char f[32], v[32];
    for (int i = 0; i < 100; i++) {
        snprintf(f, sizeof f, "field%03d", i);
        p = pack_append(p, f, 8);
        p = pack_append(p, "vvvvvvvv", 8);
    }
    /* each of the 200 entries: 1 tag + 8 bytes + 1 backlen */
    CHECK(pack_bytes(p) == 8 + 200 * 10);
    printf("size: 100 x field%%03d -> 8-byte string: %zu bytes (%zu allocated), %.2f bytes/pair\n", pack_bytes(p),
           zmalloc_size(p), pack_bytes(p) / 100.0);
    pack_destroy(&p);
    p = pack_create();
    for (int i = 0; i < 100; i++) {
        snprintf(f, sizeof f, "field%03d", i);
        snprintf(v, sizeof v, "%08d", 10000000 + i * 898989);
        p = pack_append(p, f, 8);
        p = pack_append(p, v, 8);
    }
    /* 8-digit numbers are 4-byte integers: 1 tag + 4 + 1 backlen */
    CHECK(pack_bytes(p) == 8 + 100 * (10 + 6));
    printf("size: 100 x field%%03d -> 8-digit integer: %zu bytes (%zu allocated), %.2f bytes/pair\n", pack_bytes(p),
           zmalloc_size(p), pack_bytes(p) / 100.0);
    pack_destroy(&p);
    p = pack_create();
    for (int i = 0; i < 100; i++)
        p = pack_append_int(p, i);
    CHECK(pack_bytes(p) == 8 + 100 * 2);
    printf("size: 100 x small integer 0..99: %zu bytes\n", pack_bytes(p));
    pack_destroy(&p);
    /* 10,000 hashes of 100 pairs, measured by the allocator's counter */
    int64_t before = mem_used();
    static pack *many[10000];
    for (int k = 0; k < 10000; k++) {
        many[k] = pack_create();
        for (int i = 0; i < 100; i++) {
            snprintf(f, sizeof f, "field%03d", i);
            many[k] = pack_append(many[k], f, 8);
            many[k] = pack_append(many[k], "vvvvvvvv", 8);
        }
    }
    int64_t used = mem_used() - before;
    printf("size: 10000 hashes x 100 pairs: %lld bytes allocated, %.1f per hash\n", (long long)used, used / 10000.0);
    CHECK(used < 10000LL * 2400); /* allocator slack stays small */
    for (int k = 0; k < 10000; k++)
        pack_destroy(&many[k]);
}

int main(void) {
    test_empty();
    test_one();
    test_int_boundaries();
    test_noncanonical();
    test_string_sizes();
    test_find_skip();
    test_cmp();
    test_insert_replace_delete();
    test_aliasing();
    test_split_merge();
    test_validate_handmade();
    test_validate_fuzz();
    test_random_model(ORDINARY);
    test_random_model(LEAN);
    test_random_model(FIXED);
    test_lean();
    test_fixed();
    test_sizes();
    test_hpack_model();
    test_hpack_sizes();
    return check_report();
}
