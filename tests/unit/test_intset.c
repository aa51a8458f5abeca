/* test_intset.c - unit tests of the sorted integer set (src/core/intset.c):
 * widths and upgrades at every boundary, the Redis byte layout, removal at
 * both ends and the middle, random picks, validation of bad blobs, and a
 * randomized run against a sorted-array model. No sockets. */
#include "core/intset.h"
#include "lib/mem.h"
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

static int sorted_unique(const intset *s) {
    for (size_t i = 1; i < intset_len(s); i++)
        if (intset_get(s, i - 1) >= intset_get(s, i)) return 0;
    return intset_validate(s, intset_bytes(s));
}

static void test_empty(void) {
    intset *s = intset_create();
    int r = -1;
    CHECK(intset_len(s) == 0 && intset_bytes(s) == 8 && intset_width(s) == 1);
    CHECK(!intset_find(s, 0) && !intset_find(s, INT64_MIN) && !intset_find(s, INT64_MAX));
    s = intset_remove(s, 5, &r);
    CHECK(r == 0 && intset_len(s) == 0);
    s = intset_remove(s, INT64_MAX, NULL);
    CHECK(intset_validate(s, intset_bytes(s)));
    intset_destroy(&s);
    CHECK(s == NULL);
    intset_destroy(&s);
}

/* The block is Redis's intset byte for byte from width 2 on; width 1 is
 * ours, and intset_widen turns it into Redis's. */
static void test_layout(void) {
    intset *s = intset_create();
    s = intset_add(s, 3, NULL);
    s = intset_add(s, 1, NULL);
    s = intset_add(s, 2, NULL);
    const uint8_t want8[] = {1, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3};
    CHECK(intset_bytes(s) == sizeof want8 && memcmp(s, want8, sizeof want8) == 0);
    const uint8_t want[] = {2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 2, 0, 3, 0};
    intset *w = intset_widen(s, 2);
    CHECK(intset_bytes(w) == sizeof want && memcmp(w, want, sizeof want) == 0);
    CHECK(intset_load(s, intset_bytes(s)) == NULL); /* Redis has no 1-byte intsets */
    intset *l = intset_load(w, intset_bytes(w));
    CHECK(l && intset_len(l) == 3 && intset_width(l) == 2);
    intset_destroy(&l);
    intset_destroy(&w);
    s = intset_add(s, 200, NULL); /* upgrade to 16 bits */
    s = intset_remove(s, 200, NULL);
    /* never narrows again */
    CHECK(intset_bytes(s) == sizeof want && memcmp(s, want, sizeof want) == 0);
    s = intset_add(s, -70000, NULL); /* upgrade to 32 bits, goes first */
    const uint8_t want32[] = {4, 0, 0, 0, 4, 0, 0, 0, 0x90, 0xEE, 0xFE, 0xFF, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0};
    CHECK(intset_bytes(s) == sizeof want32 && memcmp(s, want32, sizeof want32) == 0);
    intset_destroy(&s);
}

static void test_boundaries(void) {
    const int64_t vals[] = {0,
                            -1,
                            1,
                            INT8_MAX,
                            INT8_MIN,
                            (int64_t)INT8_MAX + 1,
                            (int64_t)INT8_MIN - 1,
                            INT16_MAX,
                            INT16_MIN,
                            (int64_t)INT16_MAX + 1,
                            (int64_t)INT16_MIN - 1,
                            INT32_MAX,
                            INT32_MIN,
                            (int64_t)INT32_MAX + 1,
                            (int64_t)INT32_MIN - 1,
                            INT64_MAX,
                            INT64_MIN,
                            INT64_MAX - 1,
                            INT64_MIN + 1};
    const int widths[] = {1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 8, 8, 8, 8, 8, 8};
    size_t n = sizeof vals / sizeof vals[0];
    intset *s = intset_create();
    for (size_t i = 0; i < n; i++) {
        int added = -1;
        s = intset_add(s, vals[i], &added);
        CHECK(added == 1);
        CHECK(intset_width(s) == widths[i]);
        CHECK(intset_len(s) == i + 1);
        CHECK(intset_bytes(s) == 8 + (i + 1) * (size_t)widths[i]);
        for (size_t j = 0; j <= i; j++)
            CHECK(intset_find(s, vals[j]));
        CHECK(sorted_unique(s));
        s = intset_add(s, vals[i], &added);
        CHECK(added == 0 && intset_len(s) == i + 1);
    }
    CHECK(intset_get(s, 0) == INT64_MIN && intset_get(s, n - 1) == INT64_MAX);
    CHECK(intset_get(s, 1) == INT64_MIN + 1 && intset_get(s, n - 2) == INT64_MAX - 1);
    CHECK(!intset_find(s, 2) && !intset_find(s, INT64_MAX - 2));
    intset_destroy(&s);

    /* 16 -> 64 bits in one step, with the new value first and last */
    s = intset_create();
    for (int i = -5; i <= 5; i++)
        s = intset_add(s, i, NULL);
    s = intset_add(s, INT64_MIN, NULL);
    CHECK(intset_width(s) == 8 && intset_get(s, 0) == INT64_MIN && intset_get(s, 1) == -5);
    s = intset_add(s, INT64_MAX, NULL);
    CHECK(intset_get(s, intset_len(s) - 1) == INT64_MAX && sorted_unique(s));
    for (int i = -5; i <= 5; i++)
        CHECK(intset_get(s, (size_t)(i + 6)) == i);
    intset_destroy(&s);
}

static void test_remove(void) {
    intset *s = intset_create();
    for (int i = 0; i < 10; i++)
        s = intset_add(s, i * 10, NULL);
    int r;
    s = intset_remove(s, 0, &r); /* front */
    CHECK(r == 1 && intset_len(s) == 9 && intset_get(s, 0) == 10);
    s = intset_remove(s, 90, &r); /* back */
    CHECK(r == 1 && intset_len(s) == 8 && intset_get(s, 7) == 80);
    s = intset_remove(s, 50, &r); /* middle */
    CHECK(r == 1 && intset_len(s) == 7 && !intset_find(s, 50) && intset_find(s, 40) && intset_find(s, 60));
    s = intset_remove(s, 55, &r);
    CHECK(r == 0 && intset_len(s) == 7);
    s = intset_remove(s, INT64_MAX, &r); /* wider than the set: not there */
    CHECK(r == 0);
    s = intset_remove(s, (int64_t)INT16_MAX + 1, &r);
    CHECK(r == 0);
    CHECK(sorted_unique(s));
    /* no downgrade after removing the wide value (as Redis) */
    s = intset_add(s, INT64_MAX, NULL);
    s = intset_remove(s, INT64_MAX, &r);
    CHECK(r == 1 && intset_width(s) == 8 && intset_len(s) == 7);
    CHECK(intset_find(s, 10) && intset_find(s, 80));
    while (intset_len(s))
        s = intset_remove(s, intset_get(s, 0), NULL);
    CHECK(intset_bytes(s) == 8 && intset_validate(s, 8));
    intset_destroy(&s);
}

static uint64_t seq_val;
static uint64_t seq(void) { return seq_val++; }

static void test_random(void) {
    intset *s = intset_create();
    for (int i = 0; i < 7; i++)
        s = intset_add(s, i * i, NULL);
    int seen[7] = {0};
    seq_val = 0;
    for (int k = 0; k < 70; k++) {
        int64_t v = intset_random(s, seq);
        for (int i = 0; i < 7; i++)
            if (v == i * i) seen[i]++;
    }
    for (int i = 0; i < 7; i++)
        CHECK(seen[i] == 10);
    CHECK(intset_find(s, intset_random(s, rnd)));
    intset_destroy(&s);
}

static void test_dup_load(void) {
    intset *s = intset_create();
    for (int i = 0; i < 100; i++)
        s = intset_add(s, i * 7919 - 300000, NULL);
    intset *d = intset_dup(s);
    CHECK(intset_bytes(d) == intset_bytes(s) && memcmp(d, s, intset_bytes(s)) == 0);
    intset *l = intset_load(s, intset_bytes(s));
    CHECK(l && memcmp(l, s, intset_bytes(s)) == 0);
    intset_destroy(&l);
    intset_destroy(&d);
    intset_destroy(&s);
}

static int valid_copy(const uint8_t *b, size_t n) {
    uint8_t *h = malloc(n ? n : 1); /* exact size so ASan sees any overread */
    memcpy(h, b, n);
    int r = intset_validate(h, n);
    free(h);
    return r;
}

static void test_validate(void) {
    CHECK(!intset_validate(NULL, 0));
    const uint8_t ok[] = {2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 2, 0};
    CHECK(valid_copy(ok, sizeof ok));
    for (size_t cut = 0; cut < sizeof ok; cut++)
        CHECK(!valid_copy(ok, cut));
    const uint8_t w3[] = {3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0};
    CHECK(!valid_copy(w3, sizeof w3));
    const uint8_t w0[] = {0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(!valid_copy(w0, sizeof w0));
    const uint8_t dup[] = {2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 1, 0};
    CHECK(!valid_copy(dup, sizeof dup));
    const uint8_t desc[] = {2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 1, 0};
    CHECK(!valid_copy(desc, sizeof desc));
    const uint8_t neg[] = {2, 0, 0, 0, 2, 0, 0, 0, 0xFF, 0xFF, 1, 0}; /* -1 < 1: fine */
    CHECK(valid_copy(neg, sizeof neg));
    const uint8_t negbad[] = {2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0xFF, 0xFF}; /* 1 > -1 */
    CHECK(!valid_copy(negbad, sizeof negbad));
    const uint8_t big[] = {8, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0, 0, 0, 0, 0}; /* count lies */
    CHECK(!valid_copy(big, sizeof big));
    const uint8_t extra[] = {2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0}; /* trailing bytes */
    CHECK(!valid_copy(extra, sizeof extra));
    const uint8_t empty[] = {4, 0, 0, 0, 0, 0, 0, 0};
    CHECK(valid_copy(empty, sizeof empty));
    CHECK(intset_load(dup, sizeof dup) == NULL);
    const uint8_t w1[] = {1, 0, 0, 0, 2, 0, 0, 0, 0xFF, 1}; /* -1 < 1 */
    CHECK(valid_copy(w1, sizeof w1) && intset_load(w1, sizeof w1) == NULL);
    const uint8_t w1bad[] = {1, 0, 0, 0, 2, 0, 0, 0, 1, 0xFF};
    CHECK(!valid_copy(w1bad, sizeof w1bad));
    /* built from sorted values at the narrowest width allowed */
    const int64_t sv[] = {-3, 5, 127};
    intset *b = intset_from_sorted(sv, 3, 1);
    CHECK(intset_width(b) == 1 && intset_len(b) == 3 && intset_get(b, 0) == -3 && intset_get(b, 2) == 127);
    intset_destroy(&b);
    b = intset_from_sorted(sv, 3, 4);
    CHECK(intset_width(b) == 4 && intset_find(b, 5));
    intset_destroy(&b);
    const int64_t sv2[] = {-129, 0};
    b = intset_from_sorted(sv2, 2, 1);
    CHECK(intset_width(b) == 2 && intset_get(b, 0) == -129);
    intset_destroy(&b);
}

/* Randomized: adds, removes and lookups against a sorted array. */
static void test_random_model(void) {
    static int64_t model[3000];
    size_t n = 0;
    intset *s = intset_create();
    int bad = 0;
    rng = 424242;
    for (int iter = 0; iter < 30000 && !bad; iter++) {
        uint64_t r = rnd();
        int64_t v;
        switch (r % 4) {
        case 0:
            v = (int64_t)(rnd() % 200) - 100;
            break;
        case 1:
            v = (int64_t)(rnd() % 100000) - 50000;
            break;
        case 2:
            v = (int64_t)(int32_t)rnd();
            break;
        default:
            v = (int64_t)rnd();
            break;
        }
        if (iter < 1000 && (r % 4) > 1) v = (int64_t)(rnd() % 1000); /* start narrow, upgrade later */
        size_t at = 0;
        while (at < n && model[at] < v)
            at++;
        int present = at < n && model[at] == v;
        int op = (int)((r >> 8) % 3), res = -1;
        if (op == 0 && n < 3000) {
            s = intset_add(s, v, &res);
            if (res != !present) bad = 1;
            if (!present) {
                memmove(model + at + 1, model + at, (n - at) * sizeof *model);
                model[at] = v;
                n++;
            }
        } else if (op == 1) {
            /* remove an existing value half of the time */
            if (n && (r >> 20) & 1) {
                at = (size_t)(rnd() % n);
                v = model[at];
                present = 1;
            }
            s = intset_remove(s, v, &res);
            if (res != present) bad = 1;
            if (present) {
                memmove(model + at, model + at + 1, (n - at - 1) * sizeof *model);
                n--;
            }
        } else if (intset_find(s, v) != present) {
            bad = 1;
        }
        if (intset_len(s) != n) bad = 1;
        if (iter % 1000 == 0) {
            for (size_t i = 0; i < n; i++)
                if (intset_get(s, i) != model[i]) bad = 1;
            if (!sorted_unique(s)) bad = 1;
        }
        if (bad) fprintf(stderr, "intset model diverged at iteration %d\n", iter);
    }
    CHECK(!bad);
    for (size_t i = 0; i < n; i++)
        CHECK(intset_get(s, i) == model[i]);
    CHECK(intset_width(s) == 8);
    intset_destroy(&s);
}

static void test_sizes(void) {
    intset *s = intset_create();
    for (int i = 0; i < 100; i++)
        s = intset_add(s, i, NULL);
    CHECK(intset_bytes(s) == 8 + 100); /* 1 byte each (Redis: 2) */
    printf("size: intset of 100 small integers: %zu bytes (%zu allocated)\n", intset_bytes(s), zmalloc_size(s));
    intset_destroy(&s);
}

int main(void) {
    test_empty();
    test_layout();
    test_boundaries();
    test_remove();
    test_random();
    test_dup_load();
    test_validate();
    test_random_model();
    test_sizes();
    return check_report();
}
