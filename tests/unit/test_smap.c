/* test_smap.c - unit tests of the field -> value hash map (core/smap.h):
 * the three kinds, empty and one-element maps, empty and long fields,
 * value replacement, growth and shrinking, scans across resizes, safe
 * iteration with deletes, random elements and samples, exact memory
 * accounting, and a seeded randomized run against a plain array model. */
#include "core/smap.h"
#include "lib/mem.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static int fkey(char *buf, int i) { return snprintf(buf, 32, "f%d", i); }

/* Element index from a field "f<i>". */
static int field_idx(const smap_elem *e) {
    size_t l;
    const char *f = smap_elem_field(e, &l);
    char tmp[32];
    memcpy(tmp, f, l);
    tmp[l] = 0;
    return atoi(tmp + 1);
}

static void mark(void *ud, smap_elem *e) { ((unsigned char *)ud)[field_idx(e)]++; }
static void count_calls(void *ud, smap_elem *e) { ++*(size_t *)ud; }

static void test_empty(void) {
    smap *m = smap_create(SMAP_BYTES);
    size_t vl = 99, calls = 0;
    CHECK(smap_size(m) == 0);
    CHECK(smap_find(m, "x", 1) == NULL);
    CHECK(smap_get(m, "x", 1, &vl) == NULL);
    CHECK(!smap_exists(m, "", 0));
    CHECK(smap_delete(m, "x", 1) == 0);
    CHECK(smap_random(m, rnd) == NULL);
    smap_elem *out[4];
    CHECK(smap_sample(m, 4, out, rnd) == 0);
    CHECK(smap_scan(m, 0, count_calls, &calls) == 0 && calls == 0);
    smap_iter it;
    smap_iter_start(&it, m);
    CHECK(smap_iter_next(&it) == NULL);
    smap_iter_stop(&it);
    CHECK(smap_rehash_step(m, 10) == 0);
    smap_free(&m);
    CHECK(m == NULL);
    smap_free(&m); /* NULL-safe */
}

static void test_one_and_kinds(void) {
    smap *h = smap_create(SMAP_BYTES);
    size_t vl;
    CHECK(smap_add(h, "", 0, "", 0) == 1); /* empty field, empty value */
    CHECK(smap_add(h, "", 0, "x", 1) == 0);
    const char *v = smap_get(h, "", 0, &vl);
    CHECK(v != NULL && vl == 0);
    CHECK(smap_size(h) == 1);
    CHECK(smap_random(h, rnd) == smap_find(h, "", 0));
    int added = -1;
    smap_set(h, "", 0, "hello", 5, &added);
    CHECK(added == 0);
    v = smap_get(h, "", 0, &vl);
    CHECK(vl == 5 && memcmp(v, "hello", 5) == 0);
    CHECK(smap_delete(h, "", 0) == 1 && smap_size(h) == 0);
    CHECK(smap_delete(h, "", 0) == 0);
    smap_free(&h);

    smap *s = smap_create(SMAP_SET);
    CHECK(smap_kind(s) == SMAP_SET);
    CHECK(smap_add(s, "a", 1, NULL, 0) == 1);
    CHECK(smap_exists(s, "a", 1) && !smap_exists(s, "b", 1));
    CHECK(smap_get(s, "a", 1, &vl) != NULL && vl == 0);
    CHECK(smap_elem_value(s, smap_find(s, "a", 1), &vl) == NULL && vl == 0);
    smap_free(&s);

    smap *u = smap_create(SMAP_U64);
    uint64_t x = 0x0102030405060708ull, y;
    smap_elem *e = smap_set(u, "m", 1, (const char *)&x, 8, &added);
    CHECK(added == 1 && smap_elem_u64(e) == x);
    smap_elem_set_u64(e, 42);
    CHECK(smap_elem_u64(smap_find(u, "m", 1)) == 42);
    y = 7;
    CHECK(smap_set(u, "m", 1, (const char *)&y, 8, &added) == e && added == 0); /* in place */
    CHECK(smap_elem_u64(e) == 7);
    v = smap_get(u, "m", 1, &vl);
    CHECK(vl == 8 && memcmp(v, &y, 8) == 0);
    size_t fl;
    CHECK(smap_elem_field(e, &fl)[0] == 'm' && fl == 1);
    smap_free(&u);
}

/* Long fields and values (multi-byte varints), values growing and
 * shrinking through reallocation, with exact byte accounting. */
static void test_long_and_replace(void) {
    int64_t base = mem_used();
    smap *m = smap_create(SMAP_BYTES);
    size_t big = 100000, vl;
    char *f = malloc(big), *v = malloc(big);
    for (size_t i = 0; i < big; i++) {
        f[i] = (char)('a' + i % 26);
        v[i] = (char)('A' + i % 7);
    }
    CHECK(smap_add(m, f, big, v, big) == 1);
    f[big - 1] = '#'; /* differs only in the last byte */
    CHECK(smap_add(m, f, big, "s", 1) == 1);
    CHECK(smap_size(m) == 2);
    const char *got = smap_get(m, f, big, &vl);
    CHECK(got && vl == 1 && got[0] == 's');
    CHECK((int64_t)smap_mem_usage(m) == mem_used() - base);
    /* grow the short value to huge and back down */
    smap_set(m, f, big, v, big, NULL);
    got = smap_get(m, f, big, &vl);
    CHECK(got && vl == big && memcmp(got, v, big) == 0);
    CHECK((int64_t)smap_mem_usage(m) == mem_used() - base);
    smap_set(m, f, big, "tiny", 4, NULL);
    got = smap_get(m, f, big, &vl);
    CHECK(got && vl == 4 && memcmp(got, "tiny", 4) == 0);
    CHECK((int64_t)smap_mem_usage(m) == mem_used() - base);
    f[big - 1] = 'a' + (big - 1) % 26;
    got = smap_get(m, f, big, &vl);
    CHECK(got && vl == big && memcmp(got, v, big) == 0);
    /* many value changes of one field among many: every other field
     * remains reachable through its chain after reallocations */
    char k[32];
    for (int i = 0; i < 1000; i++)
        smap_add(m, k, (size_t)fkey(k, i), "v", 1);
    for (int r = 0; r < 5; r++)
        for (int i = 0; i < 1000; i++) {
            char val[64];
            int n = snprintf(val, sizeof val, "%0*d", (i * 7 + r * 13) % 60 + 1, i);
            smap_set(m, k, (size_t)fkey(k, i), val, (size_t)n, NULL);
        }
    int bad = 0;
    for (int i = 0; i < 1000; i++) {
        char val[64];
        int n = snprintf(val, sizeof val, "%0*d", (i * 7 + 4 * 13) % 60 + 1, i);
        got = smap_get(m, k, (size_t)fkey(k, i), &vl);
        bad += !got || vl != (size_t)n || memcmp(got, val, vl) != 0;
    }
    CHECK(bad == 0);
    CHECK((int64_t)smap_mem_usage(m) == mem_used() - base);
    smap_free(&m);
    CHECK(mem_used() == base);
    free(f);
    free(v);
}

static void test_large(void) {
    enum { N = 100000 };
    int64_t base = mem_used();
    smap *m = smap_create(SMAP_SET);
    char k[32];
    int added = 0;
    for (int i = 0; i < N; i++)
        added += smap_add(m, k, (size_t)fkey(k, i), NULL, 0);
    CHECK(added == N && smap_size(m) == N);
    int missing = 0;
    for (int i = 0; i < N; i++)
        missing += !smap_exists(m, k, (size_t)fkey(k, i));
    CHECK(missing == 0);
    CHECK(!smap_exists(m, "f-1", 3));
    while (smap_rehash_step(m, 100)) {
    }
    CHECK(smap_buckets(m) == 131072); /* load factor <= 1, power of two */
    /* delete all but 100: the table shrinks step by step */
    int deleted = 0;
    for (int i = 100; i < N; i++)
        deleted += smap_delete(m, k, (size_t)fkey(k, i));
    CHECK(deleted == N - 100);
    CHECK(smap_size(m) == 100);
    for (int i = 0; i < 100; i++)
        missing += !smap_exists(m, k, (size_t)fkey(k, i));
    CHECK(missing == 0);
    while (smap_rehash_step(m, 100)) {
    }
    CHECK(smap_buckets(m) <= 1024);
    CHECK((int64_t)smap_mem_usage(m) == mem_used() - base);
    for (int i = 0; i < 100; i++)
        smap_delete(m, k, (size_t)fkey(k, i));
    CHECK(smap_size(m) == 0 && smap_buckets(m) <= 8);
    smap_free(&m);
    CHECK(mem_used() == base);
}

/* Scan while the table grows, then while it shrinks: every element
 * present for the whole scan is reported at least once. */
static void test_scan_resize(void) {
    enum { N = 20000 };
    smap *m = smap_create(SMAP_SET);
    char k[32];
    for (int i = 0; i < N; i++)
        smap_add(m, k, (size_t)fkey(k, i), NULL, 0);
    unsigned char *seen = calloc(N * 4, 1);
    uint64_t cur = 0;
    int extra = N, steps = 0;
    do {
        cur = smap_scan(m, cur, mark, seen);
        for (int j = 0; j < 3 && extra < 3 * N; j++)
            smap_add(m, k, (size_t)fkey(k, extra++), NULL, 0);
        steps++;
    } while (cur);
    int missing = 0;
    for (int i = 0; i < N; i++)
        missing += seen[i] == 0;
    CHECK(missing == 0);
    CHECK(steps > 100);

    /* shrink: delete f0..f(3N-1) except multiples of 50 while scanning */
    memset(seen, 0, N * 4);
    int next_del = 1;
    cur = 0;
    do {
        cur = smap_scan(m, cur, mark, seen);
        for (int j = 0; j < 40 && next_del < 3 * N; next_del++) {
            if (next_del % 50 == 0) continue;
            smap_delete(m, k, (size_t)fkey(k, next_del));
            j++;
        }
    } while (cur);
    missing = 0;
    for (int i = 0; i < 3 * N; i += 50)
        missing += seen[i] == 0;
    CHECK(missing == 0);
    CHECK(smap_size(m) == (size_t)(3 * N / 50));
    /* a scan that starts mid-resize and runs with no change sees all */
    while (smap_rehash_step(m, 1000)) {
    }
    int i = 3 * N;
    while (!smap_rehash_step(m, 0) && i < 4 * N)
        smap_add(m, k, (size_t)fkey(k, i++), NULL, 0); /* mid-grow */
    memset(seen, 0, N * 4);
    cur = 0;
    do
        cur = smap_scan(m, cur, mark, seen);
    while (cur);
    missing = 0;
    for (int j = 0; j < 3 * N; j += 50)
        missing += seen[j] == 0;
    for (int j = 3 * N; j < i; j++)
        missing += seen[j] == 0;
    CHECK(missing == 0);
    CHECK(smap_rehash_step(m, 0) == 1); /* the scan did not finish the resize */
    free(seen);
    smap_free(&m);
}

/* Safe iteration deleting the current element (every other one), also
 * while a resize is half done; replacing values of the current element. */
static void test_iter_delete(void) {
    enum { N = 5000 };
    smap *m = smap_create(SMAP_BYTES);
    char k[32];
    for (int i = 0; i < N; i++)
        smap_add(m, k, (size_t)fkey(k, i), "v", 1);
    CHECK(smap_rehash_step(m, 0) == 1); /* mid-resize: 4096 -> 8192 buckets */
    unsigned char *seen = calloc(N, 1);
    smap_iter it;
    smap_iter_start(&it, m);
    for (smap_elem *e; (e = smap_iter_next(&it));) {
        int i = field_idx(e);
        seen[i]++;
        if (i % 2) {
            smap_remove(m, e);
        } else { /* grow the current value: reallocates it */
            char val[200];
            memset(val, 'x', sizeof val);
            smap_set(m, k, (size_t)fkey(k, i), val, sizeof val, NULL);
        }
    }
    smap_iter_stop(&it);
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += seen[i] != 1;
    CHECK(wrong == 0);
    CHECK(smap_size(m) == N / 2);
    size_t vl;
    for (int i = 0; i < N; i++) {
        const char *v = smap_get(m, k, (size_t)fkey(k, i), &vl);
        wrong += (i % 2) ? v != NULL : (v == NULL || vl != 200);
    }
    CHECK(wrong == 0);
    /* deleting everything while iterating, then the map still works */
    smap_iter_start(&it, m);
    for (smap_elem *e; (e = smap_iter_next(&it));)
        smap_remove(m, e);
    smap_iter_stop(&it);
    CHECK(smap_size(m) == 0);
    CHECK(smap_add(m, "z", 1, "1", 1) == 1 && smap_exists(m, "z", 1));
    /* adds during iteration: old elements still returned exactly once */
    for (int i = 0; i < 100; i++)
        smap_add(m, k, (size_t)fkey(k, i), "v", 1);
    memset(seen, 0, N);
    int z = 0, j = 1000;
    smap_iter_start(&it, m);
    for (smap_elem *e; (e = smap_iter_next(&it));) {
        size_t fl;
        if (smap_elem_field(e, &fl)[0] == 'z') {
            z++;
            continue;
        }
        seen[field_idx(e)]++;
        for (int a = 0; a < 3; a++, j++)
            smap_add(m, k, (size_t)fkey(k, j), "n", 1);
    }
    smap_iter_stop(&it);
    for (int i = 0; i < 100; i++)
        wrong += seen[i] != 1;
    for (int i = 1000; i < j; i++)
        wrong += seen[i] > 1;
    CHECK(wrong == 0 && z == 1);
    CHECK(smap_size(m) == (size_t)(101 + (j - 1000)));
    free(seen);
    smap_free(&m);
}

static void test_random_sample(void) {
    smap *m = smap_create(SMAP_SET);
    char k[32];
    for (int i = 0; i < 10; i++)
        smap_add(m, k, (size_t)fkey(k, i), NULL, 0);
    int hits[10] = {0};
    for (int i = 0; i < 2000; i++)
        hits[field_idx(smap_random(m, rnd))]++;
    int all = 1;
    for (int i = 0; i < 10; i++)
        all &= hits[i] > 50;
    CHECK(all);
    smap_elem *out[2000];
    unsigned char seen[2000];
    /* k >= size: everything */
    CHECK(smap_sample(m, 50, out, rnd) == 10);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 10; i++)
        seen[field_idx(out[i])]++;
    int ok = 1;
    for (int i = 0; i < 10; i++)
        ok &= seen[i] == 1;
    CHECK(ok);
    for (int i = 10; i < 2000; i++)
        smap_add(m, k, (size_t)fkey(k, i), NULL, 0);
    /* sparse (k small) and dense (k > size/3) paths: distinct members */
    size_t ks[] = {1, 5, 100, 666, 667, 1000, 1999};
    for (size_t t = 0; t < sizeof ks / sizeof *ks; t++) {
        size_t n = smap_sample(m, ks[t], out, rnd);
        CHECK(n == ks[t]);
        memset(seen, 0, sizeof seen);
        int dup = 0;
        for (size_t i = 0; i < n; i++)
            dup += seen[field_idx(out[i])]++ > 0;
        CHECK(dup == 0);
    }
    /* dense sampling is uniform enough: each element chosen ~ k/n */
    int cnt[2000] = {0};
    for (int r = 0; r < 200; r++) {
        size_t n = smap_sample(m, 1000, out, rnd);
        for (size_t i = 0; i < n; i++)
            cnt[field_idx(out[i])]++;
    }
    int lo = 1 << 30, hi = 0;
    for (int i = 0; i < 2000; i++) {
        lo = cnt[i] < lo ? cnt[i] : lo;
        hi = cnt[i] > hi ? cnt[i] : hi;
    }
    CHECK(lo > 50 && hi < 150); /* mean 100 */
    smap_free(&m);
}

/* Seeded random operations against an array model (value per index, or
 * -1 when absent), with full iteration compared at checkpoints. */
static void test_model(void) {
    enum { K = 3000, OPS = 200000 };
    smap *m = smap_create(SMAP_BYTES);
    int *model = malloc(K * sizeof *model);
    for (int i = 0; i < K; i++)
        model[i] = -1;
    size_t live = 0;
    char k[32], v[32];
    rng_state = 12345;
    int bad = 0;
    for (int op = 0; op < OPS; op++) {
        int i = (int)(rnd() % K), r = (int)(rnd() % 100);
        size_t kl = (size_t)fkey(k, i), vl;
        int x = (int)(rnd() % 100000);
        size_t xl = (size_t)snprintf(v, sizeof v, "%0*d", x % 25 + 1, x);
        if (r < 30) {
            int a = smap_add(m, k, kl, v, xl);
            bad += a != (model[i] < 0);
            if (model[i] < 0) model[i] = x, live++;
        } else if (r < 55) {
            int added;
            smap_set(m, k, kl, v, xl, &added);
            bad += added != (model[i] < 0);
            if (model[i] < 0) live++;
            model[i] = x;
        } else if (r < 80 - (op > OPS / 2 ? 15 : 0)) {
            bad += smap_delete(m, k, kl) != (model[i] >= 0);
            if (model[i] >= 0) live--;
            model[i] = -1;
        } else {
            const char *g = smap_get(m, k, kl, &vl);
            if (model[i] < 0) {
                bad += g != NULL;
            } else {
                size_t el = (size_t)snprintf(v, sizeof v, "%0*d", model[i] % 25 + 1, model[i]);
                bad += !g || vl != el || memcmp(g, v, el) != 0;
            }
        }
        bad += smap_size(m) != live;
        if (op % 20000 == 0) {
            unsigned char *seen = calloc(K, 1);
            smap_iter it;
            smap_iter_start(&it, m);
            size_t n = 0;
            for (smap_elem *e; (e = smap_iter_next(&it)); n++)
                seen[field_idx(e)]++;
            smap_iter_stop(&it);
            bad += n != live;
            for (int j = 0; j < K; j++)
                bad += seen[j] != (model[j] >= 0);
            free(seen);
        }
    }
    CHECK(bad == 0);
    free(model);
    smap_free(&m);
}

/* Bytes per element at 1,000 members, as the brief measures them:
 * (a) a set of integer-like members, (b) a hash "field%04d" -> 8 bytes. */
static void test_memory(void) {
    int64_t base = mem_used();
    smap *s = smap_create(SMAP_SET);
    char k[32];
    for (int i = 0; i < 1000; i++)
        smap_add(s, k, (size_t)snprintf(k, sizeof k, "%d", 100000 + i * 37), NULL, 0);
    double per_set = (double)(mem_used() - base) / 1000;
    CHECK((int64_t)smap_mem_usage(s) == mem_used() - base);
    smap_free(&s);
    base = mem_used();
    smap *h = smap_create(SMAP_BYTES);
    for (int i = 0; i < 1000; i++)
        smap_add(h, k, (size_t)snprintf(k, sizeof k, "field%04d", i), "12345678", 8);
    double per_hash = (double)(mem_used() - base) / 1000;
    smap_free(&h);
    printf("bytes/element at 1000: set of ints %.1f, hash field%%04d->8B %.1f\n", per_set, per_hash);
    CHECK(per_set <= 26);  /* 16-byte element + 8.2 bytes of bucket */
    CHECK(per_hash <= 42); /* 32-byte element + 8.2 */
}

int main(void) {
    test_empty();
    test_one_and_kinds();
    test_long_and_replace();
    test_large();
    test_scan_resize();
    test_iter_delete();
    test_random_sample();
    test_model();
    test_memory();
    return check_report();
}
