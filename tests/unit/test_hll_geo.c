/* test_hll_geo.c - unit tests of the HyperLogLog bytes (src/core/hll.c)
 * and the geohash arithmetic (src/core/geohash.c): sparse updates against
 * a register-array model (the sparse string must always decode to the
 * model's registers and count like the dense form), promotion, corrupt
 * strings of every kind rejected without reading past the end, MurmurHash64A
 * reference values, and geohash round trips, search ranges that hold the
 * centre and distances. No sockets. */
#include "core/geohash.h"
#include "core/hll.h"
#include "lib/mem.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The registers of an HLL string, through a merge into zeros. */
static int registers(const hll_buf *b, uint8_t *out) {
    memset(out, 0, HLL_REGISTERS);
    return hll_merge(out, b->p, b->len);
}

static void test_new_and_hash(void) {
    hll_buf b;
    hll_new(&b);
    static const uint8_t want[] = {'H', 'Y', 'L', 'L', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff};
    CHECK(b.len == sizeof want && memcmp(b.p, want, sizeof want) == 0);
    CHECK(hll_check(b.p, b.len) == 0);
    uint64_t card = 1;
    CHECK(hll_cache_get(b.p, &card) && card == 0);
    int inv = 0;
    CHECK(hll_count(b.p, b.len, &inv) == 0 && !inv);
    hll_invalidate(b.p);
    CHECK(!hll_cache_get(b.p, &card));
    hll_cache_set(b.p, 0x0102030405060708ULL);
    CHECK(hll_cache_get(b.p, &card) && card == 0x0102030405060708ULL && b.p[8] == 8 && b.p[15] == 1);
    zfree(b.p);
    /* MurmurHash64A: empty input with seed 0 is 0; equal inputs agree, and
     * the index/value split stays in range */
    CHECK(hll_murmur64a("", 0, 0) == 0);
    CHECK(hll_murmur64a("abcdefghi", 9, 7) == hll_murmur64a("abcdefghi", 9, 7));
    CHECK(hll_murmur64a("abcdefghi", 9, 7) != hll_murmur64a("abcdefghj", 9, 7));
    for (int i = 0; i < 1000; i++) {
        long idx;
        uint64_t v = rnd();
        int n = hll_hash(&v, sizeof v, &idx);
        CHECK(idx >= 0 && idx < HLL_REGISTERS && n >= 1 && n <= HLL_Q + 1);
    }
}

/* Random register raises on a sparse and a dense HLL: both hold the model. */
static void test_sparse_model(void) {
    for (int round = 0; round < 40; round++) {
        hll_buf s, d;
        hll_new(&s);
        hll_new(&d);
        CHECK(hll_to_dense(&d) == 0 && d.len == HLL_DENSE_SIZE);
        uint8_t *model = zcalloc(HLL_REGISTERS), *got = zmalloc(HLL_REGISTERS);
        int ops = 1 + (int)(rnd() % 400);
        int clustered = round % 2;
        for (int k = 0; k < ops; k++) {
            long i = clustered ? (long)(rnd() % 40) * 7 : (long)(rnd() % HLL_REGISTERS);
            uint8_t v = (uint8_t)(1 + rnd() % (round < 30 ? 8 : 40));
            int want = v > model[i];
            if (want) model[i] = v;
            CHECK(hll_set(&s, i, v, 100000) == want);
            CHECK(hll_set(&d, i, v, 100000) == want);
        }
        CHECK(registers(&s, got) == 0 && memcmp(got, model, HLL_REGISTERS) == 0);
        CHECK(registers(&d, got) == 0 && memcmp(got, model, HLL_REGISTERS) == 0);
        int inv = 0;
        CHECK(hll_count(s.p, s.len, &inv) == hll_count(d.p, d.len, &inv) && !inv);
        CHECK(hll_count_raw(model) == hll_count(d.p, d.len, &inv));
        if (s.p[4] == HLL_SPARSE) {
            CHECK(round < 30); /* values above 32 force dense */
            char *text;
            size_t n = hll_decode(s.p, s.len, &text);
            CHECK(n == strlen(text) && (n == 0 || text[n - 1] != ' '));
            zfree(text);
            CHECK(hll_to_dense(&s) == 0 && s.len == HLL_DENSE_SIZE && memcmp(s.p + HLL_HDR_SIZE, d.p + HLL_HDR_SIZE,
                                                                             HLL_DENSE_SIZE - HLL_HDR_SIZE) == 0);
        }
        zfree(s.p);
        zfree(d.p);
        zfree(model);
        zfree(got);
    }
}

static void test_promotion(void) {
    hll_buf b;
    hll_new(&b);
    int i = 0;
    while (b.p[4] == HLL_SPARSE) {
        char e[16];
        int n = snprintf(e, sizeof e, "e%d", i++);
        CHECK(hll_add(&b, e, (size_t)n, 200) >= 0);
        if (b.p[4] == HLL_SPARSE) CHECK(b.len <= 200);
    }
    CHECK(b.len == HLL_DENSE_SIZE && hll_check(b.p, b.len) == 0 && i > 10);
    zfree(b.p);
    hll_new(&b);
    CHECK(hll_set(&b, 5, 33, 3000) == 1 && b.p[4] == HLL_DENSE); /* a value a VAL cannot hold */
    CHECK(hll_dense_get(b.p + HLL_HDR_SIZE, 5) == 33 && hll_dense_get(b.p + HLL_HDR_SIZE, HLL_REGISTERS - 1) == 0);
    CHECK(hll_dense_set(b.p + HLL_HDR_SIZE, HLL_REGISTERS - 1, 63) == 1);
    CHECK(hll_dense_get(b.p + HLL_HDR_SIZE, HLL_REGISTERS - 1) == 63 && hll_dense_get(b.p + HLL_HDR_SIZE, 16382) == 0);
    zfree(b.p);
}

/* Sparse strings built from raw opcodes. */
static hll_buf sparse_of(const uint8_t *ops, size_t n) {
    hll_buf b;
    hll_new(&b);
    b.p = zrealloc(b.p, HLL_HDR_SIZE + n + 8);
    b.cap = HLL_HDR_SIZE + n + 8;
    memcpy(b.p + HLL_HDR_SIZE, ops, n);
    b.len = HLL_HDR_SIZE + n;
    return b;
}

static void test_corrupt(void) {
    uint8_t hdr[HLL_DENSE_SIZE] = {'H', 'Y', 'L', 'L', 0};
    CHECK(hll_check(hdr, 15) < 0 && hll_check(hdr, HLL_DENSE_SIZE) == 0 && hll_check(hdr, HLL_DENSE_SIZE - 1) < 0);
    hdr[4] = 2;
    CHECK(hll_check(hdr, HLL_DENSE_SIZE) < 0);
    hdr[4] = 1;
    hdr[0] = 'h';
    CHECK(hll_check(hdr, 18) < 0);
    static const struct {
        uint8_t ops[4];
        size_t n;
    } bad[] = {
        {{0x7f}, 1},             /* XZERO cut short */
        {{0x7f, 0xff, 0x01}, 3}, /* 16386 registers */
        {{0x5f, 0xff}, 2},       /* 8192 registers */
        {{0x7f, 0xfe, 0x87}, 3}, /* 16383 + VAL of 4 */
        {{0}, 0},                /* no registers at all */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        hll_buf b = sparse_of(bad[k].ops, bad[k].n);
        uint8_t *max = zcalloc(HLL_REGISTERS);
        int inv = 0;
        hll_count(b.p, b.len, &inv);
        CHECK(inv == 1);
        CHECK(hll_merge(max, b.p, b.len) < 0);
        CHECK(hll_to_dense(&b) < 0 && b.p[4] == HLL_SPARSE);
        char *text;
        hll_decode(b.p, b.len, &text);
        zfree(text);
        zfree(max);
        zfree(b.p);
    }
    /* a register past the covered ones cannot be set; one inside can */
    hll_buf b = sparse_of((const uint8_t[]){0x5f, 0xff}, 2);
    CHECK(hll_set(&b, 9000, 3, 3000) == -1);
    CHECK(hll_set(&b, 100, 3, 3000) == 1);
    zfree(b.p);
    /* random bytes: every function stays inside the buffer (ASan) */
    for (int round = 0; round < 2000; round++) {
        size_t n = rnd() % 64;
        uint8_t ops[64];
        for (size_t k = 0; k < n; k++) ops[k] = (uint8_t)rnd();
        hll_buf r = sparse_of(ops, n);
        int inv = 0;
        hll_count(r.p, r.len, &inv);
        hll_set(&r, (long)(rnd() % HLL_REGISTERS), (uint8_t)(1 + rnd() % 40), 3000);
        hll_to_dense(&r);
        zfree(r.p);
    }
}

static void test_geohash(void) {
    for (int k = 0; k < 2000; k++) {
        double lon = -180 + 360.0 * (double)(rnd() % 1000001) / 1e6;
        double lat = GEO_LAT_MIN + (GEO_LAT_MAX - GEO_LAT_MIN) * (double)(rnd() % 1000001) / 1e6;
        geo_bits h;
        CHECK(geo_encode(lon, lat, &h) == 1 && h.step == GEO_STEP_MAX);
        uint64_t score = geo_align52(h);
        CHECK(score < (1ULL << 52));
        double xy[2];
        geo_decode_score((double)score, xy);
        CHECK(fabs(xy[0] - lon) < 360.0 / (1 << 26) && fabs(xy[1] - lat) < 171.0 / (1 << 26));
        geo_bits again;
        geo_encode(xy[0], xy[1], &again);
        CHECK(again.bits == h.bits); /* the cell centre is in its own cell */
        /* a search around the point covers the point's score */
        geo_shape s = {.type = k % 2 ? GEO_CIRCLE : GEO_BOX, .xy = {lon, lat}, .conversion = 1,
                       .radius = 10 + (double)(rnd() % 100000), .width = 10 + (double)(rnd() % 100000),
                       .height = 10 + (double)(rnd() % 100000)};
        uint64_t mn[9], mx[9];
        int cells = geo_search_ranges(&s, mn, mx), found = 0;
        CHECK(cells >= 1 && cells <= 9);
        for (int i = 0; i < cells; i++) found |= score >= mn[i] && score < mx[i];
        CHECK(found);
        double d;
        CHECK(geo_in_shape(&s, xy[0], xy[1], &d) && d < 1.0);
    }
    CHECK(!geo_encode(180.0001, 0, &(geo_bits){0}) && !geo_encode(0, 85.06, &(geo_bits){0}));
    char hs[11];
    geo_bits h;
    geo_encode(13.361389, 38.115556, &h);
    geo_hash_string((double)geo_align52(h), hs);
    CHECK(memcmp(hs, "sqc8b49rny0", 11) == 0); /* geohash.org's cell of Palermo, to 10 characters */
    CHECK(fabs(geo_distance(0, 0, 0, 1) - 6372797.560856 * M_PI / 180) < 1e-6);
    CHECK(geo_distance(10, 20, 10, 20) == 0);
}

int main(void) {
    test_new_and_hash();
    test_sparse_model();
    test_promotion();
    test_corrupt();
    test_geohash();
    return check_report();
}
