/* test_zindex.c - unit tests of the sorted-set index and zset_big
 * (core/zindex.h): empty and one-element sets, equal scores in lex order,
 * infinite scores, empty and long members, score and lex bounds and spans,
 * range deletes, 100k elements in random, ascending and descending order,
 * and seeded randomized runs against a sorted-array model. Every phase
 * runs zindex_verify (order, counts, keys, leaf links). */
#include "core/zindex.h"
#include "lib/mem.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* Member bytes of an element equal (m, ml). */
static int is_member(const smap_elem *e, const char *m, size_t ml) {
    size_t l;
    const char *p = e ? zelem_member(e, &l) : NULL;
    return p && l == ml && (ml == 0 || memcmp(p, m, ml) == 0);
}
#define IS(e, lit) is_member((e), lit, sizeof(lit) - 1)

static zlex_bound lexb(const char *s) {
    zlex_bound b;
    if (zlex_parse(s, strlen(s), &b) != 0) abort();
    return b;
}
static zlex_range lexr(const char *a, const char *b) {
    zlex_range r = {lexb(a), lexb(b)};
    return r;
}

static void test_empty(void) {
    int64_t base = mem_used();
    zset_big *z = zsetb_create();
    zindex *ix = z->idx;
    zpos pos;
    size_t first = 7, rank;
    double sc;
    CHECK(zsetb_size(z) == 0 && zindex_size(ix) == 0);
    CHECK(zindex_at(ix, 0, &pos) == NULL && zpos_elem(&pos) == NULL);
    CHECK(!zpos_next(&pos) && !zpos_prev(&pos));
    CHECK(zindex_first_score(ix, -INFINITY, 0, NULL) == NULL);
    CHECK(zindex_last_score(ix, INFINITY, 0, &pos) == NULL);
    zlex_bound minus = lexb("-"), plus = lexb("+");
    CHECK(zindex_first_lex(ix, &minus, NULL) == NULL && zindex_last_lex(ix, &plus, NULL) == NULL);
    zscore_range all = {-INFINITY, INFINITY, 0, 0};
    CHECK(zindex_score_span(ix, &all, &first) == 0 && first == 0);
    zlex_range lall = lexr("-", "+");
    CHECK(zindex_lex_span(ix, &lall, NULL) == 0);
    CHECK(zsetb_delete_ranks(z, 0, 100) == 0 && zsetb_delete_score(z, &all) == 0 && zsetb_delete_lex(z, &lall) == 0);
    CHECK(!zsetb_score(z, "a", 1, &sc) && !zsetb_rank(z, "a", 1, &rank) && !zsetb_delete(z, "a", 1));
    CHECK(zindex_delete(ix, 1, "a", 1) == NULL);
    CHECK(zindex_verify(ix) == 0);
    zsetb_free(&z);
    CHECK(z == NULL);
    zsetb_free(&z);
    zindex *lone = zindex_create();
    zindex_free(&lone);
    CHECK(lone == NULL);
    zindex_free(&lone);
    CHECK(mem_used() == base);
}

static void test_one(void) {
    int64_t base = mem_used();
    zset_big *z = zsetb_create();
    zindex *ix = z->idx;
    CHECK(zsetb_set(z, "", 0, 2.5) == 1); /* member of length 0 */
    CHECK(zsetb_set(z, "", 0, 2.5) == 0);
    size_t rank = 9;
    double sc = 0;
    CHECK(zsetb_rank(z, "", 0, &rank) && rank == 0);
    CHECK(zsetb_score(z, "", 0, &sc) && sc == 2.5);
    zpos pos;
    smap_elem *e = zindex_at(ix, 0, &pos);
    CHECK(IS(e, "") && zelem_score(e) == 2.5);
    CHECK(zindex_at(ix, 1, NULL) == NULL);
    CHECK(zindex_first_score(ix, 2.5, 0, NULL) == e && zindex_first_score(ix, 2.5, 1, NULL) == NULL);
    CHECK(zindex_last_score(ix, 2.5, 0, NULL) == e && zindex_last_score(ix, 2.5, 1, NULL) == NULL);
    CHECK(zindex_first_score(ix, -INFINITY, 0, NULL) == e && zindex_last_score(ix, INFINITY, 1, NULL) == e);
    zpos p2 = pos;
    CHECK(!zpos_next(&pos) && zpos_elem(&pos) == NULL);
    CHECK(!zpos_prev(&p2));
    zscore_range r = {2.5, 2.5, 0, 0};
    size_t first;
    CHECK(zindex_score_span(ix, &r, &first) == 1 && first == 0);
    r.minex = 1;
    CHECK(zindex_score_span(ix, &r, NULL) == 0);
    zlex_range lr = lexr("[", "[");
    CHECK(zindex_lex_span(ix, &lr, &first) == 1 && first == 0);
    lr = lexr("(", "+");
    CHECK(zindex_lex_span(ix, &lr, NULL) == 0);
    CHECK(zsetb_set(z, "", 0, -1) == 0 && zsetb_score(z, "", 0, &sc) && sc == -1);
    CHECK(zindex_verify(ix) == 0);
    CHECK(zsetb_delete(z, "", 0) == 1 && zsetb_size(z) == 0 && zindex_size(ix) == 0);
    CHECK(zindex_verify(ix) == 0);
    CHECK(zsetb_delete(z, "", 0) == 0);
    zsetb_free(&z);
    CHECK(mem_used() == base);
}

/* Equal scores order by member bytes (memcmp, then length); lex bounds. */
static void test_lex(void) {
    zset_big *z = zsetb_create();
    zindex *ix = z->idx;
    const char *ms[] = {"b", "", "ab", "a", "aa", "\xff", "c"};
    for (int i = 0; i < 7; i++)
        zsetb_set(z, ms[i], strlen(ms[i]), 1.0);
    zsetb_set(z, "a\0", 2, 1.0); /* embedded NUL: after "a", before "aa" */
    const char *order[] = {"", "a", "a\0", "aa", "ab", "b", "c", "\xff"};
    size_t olen[] = {0, 1, 2, 2, 2, 1, 1, 1};
    zpos pos;
    int ok = zindex_at(ix, 0, &pos) != NULL;
    for (int i = 0; i < 8; i++, zpos_next(&pos))
        ok &= is_member(zpos_elem(&pos), order[i], olen[i]);
    CHECK(ok && zpos_elem(&pos) == NULL);
    ok = zindex_at(ix, 7, &pos) != NULL;
    for (int i = 7; i >= 0; i--, zpos_prev(&pos))
        ok &= is_member(zpos_elem(&pos), order[i], olen[i]);
    CHECK(ok && zpos_elem(&pos) == NULL);
    for (int i = 0; i < 8; i++) {
        size_t rank;
        CHECK(zsetb_rank(z, order[i], olen[i], &rank) && rank == (size_t)i);
    }
    struct {
        const char *min, *max;
        size_t first, n;
    } cases[] = {
        {"-", "+", 0, 8},     {"[a", "[b", 1, 5}, {"(a", "(b", 2, 3}, {"[b", "+", 5, 3},
        {"-", "(a", 0, 1},    {"+", "-", 0, 0},   {"(a", "(a", 0, 0}, {"[a", "[a", 1, 1},
        {"[aa", "(aa", 0, 0}, {"[", "[", 0, 1},   {"(", "+", 1, 7},   {"(\xff", "+", 8, 0},
        {"-", "[\xff", 0, 8}, {"[c", "[a", 0, 0}, {"-", "-", 0, 0},   {"+", "+", 8, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        zlex_range r = lexr(cases[i].min, cases[i].max);
        size_t first = 99, n = zindex_lex_span(ix, &r, &first);
        CHECK(n == cases[i].n);
        if (n) CHECK(first == cases[i].first);
        smap_elem *f = zindex_first_lex(ix, &r.min, NULL), *l = zindex_last_lex(ix, &r.max, NULL);
        if (n) {
            CHECK(f == zindex_at(ix, first, NULL));
            CHECK(l == zindex_at(ix, first + n - 1, NULL));
        }
    }
    zlex_bound b;
    CHECK(zlex_parse("-", 1, &b) == 0 && b.kind == ZLEX_MINUS);
    CHECK(zlex_parse("+", 1, &b) == 0 && b.kind == ZLEX_PLUS);
    CHECK(zlex_parse("[ab", 3, &b) == 0 && b.kind == ZLEX_INCL && b.len == 2 && memcmp(b.p, "ab", 2) == 0);
    CHECK(zlex_parse("(x", 2, &b) == 0 && b.kind == ZLEX_EXCL && b.len == 1);
    CHECK(zlex_parse("[", 1, &b) == 0 && b.kind == ZLEX_INCL && b.len == 0);
    CHECK(zlex_parse("x", 1, &b) == -1 && zlex_parse("", 0, &b) == -1);
    CHECK(zlex_parse("+x", 2, &b) == -1 && zlex_parse("-a", 2, &b) == -1);
    zlex_range r = lexr("(a", "[ab"); /* removes a\0, aa, ab */
    CHECK(zsetb_delete_lex(z, &r) == 3 && zsetb_size(z) == 5 && zindex_size(ix) == 5);
    CHECK(!zsetb_score(z, "aa", 2, &(double){0}) && zsetb_score(z, "a", 1, &(double){0}));
    CHECK(zindex_verify(ix) == 0);
    zsetb_free(&z);
}

static void test_inf(void) {
    zset_big *z = zsetb_create();
    zindex *ix = z->idx;
    zsetb_set(z, "pinf", 4, INFINITY);
    zsetb_set(z, "one", 3, 1);
    zsetb_set(z, "ninf", 4, -INFINITY);
    zsetb_set(z, "ninf0", 5, -INFINITY);
    zsetb_set(z, "zero", 4, 0);
    zsetb_set(z, "mone", 4, -1);
    zsetb_set(z, "nzero", 5, -0.0); /* equal to 0: ordered by member */
    zsetb_set(z, "big", 3, 1e308);
    const char *order[] = {"ninf", "ninf0", "mone", "nzero", "zero", "one", "big", "pinf"};
    int ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= is_member(zindex_at(ix, (size_t)i, NULL), order[i], strlen(order[i]));
    CHECK(ok);
    CHECK(IS(zindex_first_score(ix, -INFINITY, 0, NULL), "ninf"));
    CHECK(IS(zindex_first_score(ix, -INFINITY, 1, NULL), "mone"));
    CHECK(IS(zindex_last_score(ix, INFINITY, 0, NULL), "pinf"));
    CHECK(IS(zindex_last_score(ix, INFINITY, 1, NULL), "big"));
    CHECK(IS(zindex_first_score(ix, 0, 0, NULL), "nzero"));
    CHECK(IS(zindex_first_score(ix, -0.0, 1, NULL), "one"));
    CHECK(IS(zindex_last_score(ix, 0, 1, NULL), "mone"));
    CHECK(IS(zindex_last_score(ix, -5, 0, NULL), "ninf0"));
    CHECK(zindex_last_score(ix, -INFINITY, 1, NULL) == NULL);
    CHECK(zindex_first_score(ix, INFINITY, 1, NULL) == NULL);
    zscore_range all = {-INFINITY, INFINITY, 0, 0}, open = {-INFINITY, INFINITY, 1, 1};
    size_t first;
    CHECK(zindex_score_span(ix, &all, &first) == 8 && first == 0);
    CHECK(zindex_score_span(ix, &open, &first) == 5 && first == 2);
    zscore_range inv = {2, 1, 0, 0}, pt = {0, 0, 0, 0};
    CHECK(zindex_score_span(ix, &inv, NULL) == 0);
    CHECK(zindex_score_span(ix, &pt, &first) == 2 && first == 3);
    /* moving members across the infinities */
    zsetb_set(z, "zero", 4, -INFINITY);
    zsetb_set(z, "ninf", 4, INFINITY);
    CHECK(IS(zindex_at(ix, 0, NULL), "ninf0") && IS(zindex_at(ix, 1, NULL), "zero"));
    CHECK(IS(zindex_at(ix, 6, NULL), "ninf") && IS(zindex_at(ix, 7, NULL), "pinf"));
    CHECK(zsetb_delete_score(z, &open) == 4 && zsetb_size(z) == 4);
    CHECK(zindex_verify(ix) == 0);
    zsetb_free(&z);
}

/* Long members that differ only at the end, all with one score. */
static void test_long_members(void) {
    enum { L = 5000, N = 300 };
    zset_big *z = zsetb_create();
    char *m = malloc(L);
    memset(m, 'q', L);
    for (int i = N - 1; i >= 0; i--) {
        m[L - 2] = (char)('A' + i / 26);
        m[L - 1] = (char)('a' + i % 26);
        zsetb_set(z, m, L, 7);
    }
    zsetb_set(z, m, L - 1, 7); /* "q..qA": a prefix of the first 26, sorts first */
    CHECK(zsetb_size(z) == N + 1);
    size_t r;
    CHECK(zsetb_rank(z, m, L - 1, &r) && r == 0);
    int ok = 1;
    for (int i = 0; i < N; i++) {
        m[L - 2] = (char)('A' + i / 26);
        m[L - 1] = (char)('a' + i % 26);
        ok &= zsetb_rank(z, m, L, &r) && r == (size_t)i + 1;
        ok &= is_member(zindex_at(z->idx, (size_t)i + 1, NULL), m, L);
    }
    CHECK(ok);
    zlex_bound b = {m, L - 1, ZLEX_EXCL};
    m[L - 2] = 'B';
    CHECK(zindex_first_lex(z->idx, &b, NULL) == zindex_at(z->idx, 27, NULL));
    CHECK(zindex_verify(z->idx) == 0);
    free(m);
    zsetb_free(&z);
}

/* ---- the model: a sorted array of (score, member) ---- */

typedef struct mel {
    double score;
    char m[24];
    size_t ml;
} mel;

static int mel_cmp(const mel *a, const mel *b) {
    if (a->score < b->score) return -1;
    if (a->score > b->score) return 1;
    size_t n = a->ml < b->ml ? a->ml : b->ml;
    int c = n ? memcmp(a->m, b->m, n) : 0;
    if (c) return c;
    return a->ml < b->ml ? -1 : a->ml > b->ml;
}
static int mel_qcmp(const void *a, const void *b) { return mel_cmp(a, b); }

typedef struct model {
    mel *a;
    size_t n;
} model;

static long model_find(const model *md, const char *m, size_t ml) {
    for (size_t i = 0; i < md->n; i++)
        if (md->a[i].ml == ml && memcmp(md->a[i].m, m, ml) == 0) return (long)i;
    return -1;
}
static void model_del(model *md, size_t i) {
    memmove(md->a + i, md->a + i + 1, (md->n - i - 1) * sizeof *md->a);
    md->n--;
}
static void model_add(model *md, const mel *x) {
    size_t i = 0;
    while (i < md->n && mel_cmp(&md->a[i], x) < 0)
        i++;
    memmove(md->a + i + 1, md->a + i, (md->n - i) * sizeof *md->a);
    md->a[i] = *x;
    md->n++;
}
static int elem_is(const smap_elem *e, const mel *x) {
    return e && zelem_score(e) == x->score && is_member(e, x->m, x->ml);
}
/* Whole order, forwards and backwards, equals the model. */
static int same_order(const zindex *ix, const model *md) {
    if (zindex_size(ix) != md->n) return 0;
    zpos p;
    zindex_at(ix, 0, &p);
    for (size_t i = 0; i < md->n; i++, zpos_next(&p))
        if (!elem_is(zpos_elem(&p), &md->a[i])) return 0;
    if (zpos_elem(&p)) return 0;
    if (!md->n) return 1;
    zindex_at(ix, md->n - 1, &p);
    for (size_t i = md->n; i-- > 0; zpos_prev(&p))
        if (!elem_is(zpos_elem(&p), &md->a[i])) return 0;
    return zpos_elem(&p) == NULL;
}

static double pick_score(void) {
    static const double special[] = {-INFINITY, INFINITY, 0, -0.0, 1e-300, -1e300};
    uint64_t r = rnd() % 100;
    if (r < 5) return special[rnd() % 6];
    if (r < 60) return (double)(rnd() % 50); /* many ties */
    return (double)(int64_t)(rnd() % 2000000) / 1000.0 - 1000.0;
}

static size_t model_lower(const model *md, double x, int excl) {
    size_t i = 0;
    while (i < md->n && (excl ? md->a[i].score <= x : md->a[i].score < x))
        i++;
    return i;
}

static void test_model(void) {
    enum { POOL = 1500, OPS = 60000 };
    int64_t base = mem_used();
    rng_state = 20240601;
    zset_big *z = zsetb_create();
    zindex *ix = z->idx;
    model md = {calloc(POOL, sizeof(mel)), 0};
    int bad = 0, vfail = 0;
    for (int op = 0; op < OPS; op++) {
        mel x;
        int id = (int)(rnd() % POOL);
        x.ml = (size_t)snprintf(x.m, sizeof x.m, "%.*s%d", (int)(id % 4), "xyz", id);
        x.score = pick_score();
        long at = model_find(&md, x.m, x.ml);
        uint64_t r = rnd() % 100;
        if (r < 40) { /* add or update */
            int added = zsetb_set(z, x.m, x.ml, x.score);
            bad += added != (at < 0);
            if (at >= 0) model_del(&md, (size_t)at);
            model_add(&md, &x);
        } else if (r < 55) {
            bad += zsetb_delete(z, x.m, x.ml) != (at >= 0);
            if (at >= 0) model_del(&md, (size_t)at);
        } else if (r < 65) { /* rank and score of a member */
            size_t rk;
            double sc;
            int f = zsetb_rank(z, x.m, x.ml, &rk);
            bad += f != (at >= 0) || (f && rk != (size_t)at);
            f = zsetb_score(z, x.m, x.ml, &sc);
            bad += f != (at >= 0) || (f && sc != md.a[at].score);
        } else if (r < 75) { /* first >= / > and last <= / < a score */
            int excl = (int)(rnd() % 2);
            zpos p;
            size_t lo = model_lower(&md, x.score, excl);
            smap_elem *e = zindex_first_score(ix, x.score, excl, &p);
            bad += lo < md.n ? !elem_is(e, &md.a[lo]) : e != NULL;
            /* walk a few steps forward from there */
            for (size_t i = lo + 1; i < lo + 4 && e; i++) {
                zpos_next(&p);
                bad += i < md.n ? !elem_is(zpos_elem(&p), &md.a[i]) : zpos_elem(&p) != NULL;
            }
            size_t hi = model_lower(&md, x.score, !excl); /* elements <= x (or < x) */
            e = zindex_last_score(ix, x.score, excl, &p);
            bad += hi > 0 ? !elem_is(e, &md.a[hi - 1]) : e != NULL;
            for (size_t i = hi - 1; e && hi > 0 && i > 0 && i + 3 >= hi;) {
                zpos_prev(&p);
                bad += !elem_is(zpos_elem(&p), &md.a[--i]);
            }
        } else if (r < 85) { /* element at rank, score span */
            size_t k = md.n ? rnd() % (md.n + 1) : 0;
            smap_elem *e = zindex_at(ix, k, NULL);
            bad += k < md.n ? !elem_is(e, &md.a[k]) : e != NULL;
            zscore_range sr = {x.score, pick_score(), (int)(rnd() % 2), (int)(rnd() % 2)};
            size_t lo = model_lower(&md, sr.min, sr.minex), hi = model_lower(&md, sr.max, !sr.maxex);
            size_t first, n = zindex_score_span(ix, &sr, &first);
            bad += n != (hi > lo ? hi - lo : 0) || (n && first != lo);
        } else if (r < 92) { /* delete a small score range */
            zscore_range sr = {x.score, x.score + (double)(rnd() % 3), (int)(rnd() % 2), (int)(rnd() % 2)};
            size_t lo = model_lower(&md, sr.min, sr.minex), hi = model_lower(&md, sr.max, !sr.maxex);
            size_t want = hi > lo ? hi - lo : 0;
            bad += zsetb_delete_score(z, &sr) != want;
            for (size_t i = 0; i < want; i++)
                model_del(&md, lo);
        } else if (r < 96) { /* delete a small rank range */
            size_t s = md.n ? rnd() % md.n : 0, e = s + rnd() % 5;
            size_t want = s < md.n ? (e < md.n ? e : md.n - 1) - s + 1 : 0;
            bad += zsetb_delete_ranks(z, s, e) != want;
            for (size_t i = 0; i < want; i++)
                model_del(&md, s);
        } else { /* in-place update of an existing member through the index */
            if (md.n) {
                size_t k = rnd() % md.n;
                smap_elem *e = zindex_at(ix, k, NULL);
                mel y = md.a[k];
                y.score += (rnd() % 2) ? 1e-9 : (double)(rnd() % 40) - 20;
                zindex_update(ix, e, y.score);
                model_del(&md, k);
                model_add(&md, &y);
            }
        }
        bad += zsetb_size(z) != md.n || zindex_size(ix) != md.n;
        if (op % 500 == 0) vfail += zindex_verify(ix) != 0;
        if (op % 5000 == 0) bad += !same_order(ix, &md);
    }
    CHECK(bad == 0);
    CHECK(vfail == 0);
    CHECK(same_order(ix, &md));
    CHECK(zindex_verify(ix) == 0);
    CHECK((int64_t)zsetb_mem_usage(z) == mem_used() - base);
    free(md.a);
    zsetb_free(&z);
    CHECK(mem_used() == base);
}

/* All scores equal; random short members over {a, b, NUL}; lex spans,
 * first/last and lex deletes against the model. */
static void test_lex_model(void) {
    enum { OPS = 20000 };
    rng_state = 777;
    zset_big *z = zsetb_create();
    zindex *ix = z->idx;
    model md = {calloc(2000, sizeof(mel)), 0};
    int bad = 0;
    for (int op = 0; op < OPS; op++) {
        mel x = {0};
        x.ml = rnd() % 5;
        for (size_t i = 0; i < x.ml; i++)
            x.m[i] = "ab\0"[rnd() % 3];
        long at = model_find(&md, x.m, x.ml);
        uint64_t r = rnd() % 10;
        if (r < 5) {
            if (at < 0 && md.n < 2000) {
                bad += zsetb_set(z, x.m, x.ml, 0) != 1;
                model_add(&md, &x);
            }
            continue;
        }
        /* a random range: bounds from random strings or -/+ */
        zlex_range lr;
        char lo[8], hi[8];
        zlex_bound *bs[2] = {&lr.min, &lr.max};
        char *bufs[2] = {lo, hi};
        for (int j = 0; j < 2; j++) {
            uint64_t k = rnd() % 10;
            size_t l = rnd() % 4;
            for (size_t i = 0; i < l; i++)
                bufs[j][i] = "ab\0"[rnd() % 3];
            bs[j]->p = bufs[j];
            bs[j]->len = l;
            bs[j]->kind = k == 0 ? ZLEX_MINUS : k == 1 ? ZLEX_PLUS : k < 6 ? ZLEX_INCL : ZLEX_EXCL;
        }
        size_t from = 0, past = 0;
        for (size_t i = 0; i < md.n; i++) {
            mel b = {0};
            int c;
            b.ml = lr.min.len;
            memcpy(b.m, lr.min.p, b.ml);
            c = mel_cmp(&md.a[i], &b);
            int below_min =
                lr.min.kind == ZLEX_PLUS || (lr.min.kind == ZLEX_INCL && c < 0) || (lr.min.kind == ZLEX_EXCL && c <= 0);
            b.ml = lr.max.len;
            memcpy(b.m, lr.max.p, b.ml);
            c = mel_cmp(&md.a[i], &b);
            int upto_max =
                lr.max.kind == ZLEX_PLUS || (lr.max.kind == ZLEX_INCL && c <= 0) || (lr.max.kind == ZLEX_EXCL && c < 0);
            from += below_min;
            past += upto_max;
        }
        size_t want = past > from ? past - from : 0, first;
        if (r < 8) {
            size_t n = zindex_lex_span(ix, &lr, &first);
            bad += n != want || (n && first != from);
            smap_elem *f = zindex_first_lex(ix, &lr.min, NULL), *l = zindex_last_lex(ix, &lr.max, NULL);
            bad += from < md.n ? !elem_is(f, &md.a[from]) : f != NULL;
            bad += past > 0 ? !elem_is(l, &md.a[past - 1]) : l != NULL;
        } else {
            bad += zsetb_delete_lex(z, &lr) != want;
            for (size_t i = 0; i < want; i++)
                model_del(&md, from);
        }
        bad += zsetb_size(z) != md.n;
    }
    CHECK(bad == 0);
    CHECK(same_order(ix, &md));
    CHECK(zindex_verify(ix) == 0);
    free(md.a);
    zsetb_free(&z);
}

/* 100k members: random order with many ties, then ascending and
 * descending loads (which must fill leaves), deletes in random order. */
static void test_big(void) {
    enum { N = 100000 };
    int64_t base = mem_used();
    rng_state = 4242;
    zset_big *z = zsetb_create();
    zindex *ix = z->idx;
    mel *a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++) {
        a[i].ml = (size_t)snprintf(a[i].m, sizeof a[i].m, "k%d", i);
        a[i].score = (double)(rnd() % 1000);
        zsetb_set(z, a[i].m, a[i].ml, a[i].score);
    }
    CHECK(zsetb_size(z) == N && zindex_verify(ix) == 0);
    mel *sorted = malloc(N * sizeof *sorted);
    memcpy(sorted, a, N * sizeof *a);
    qsort(sorted, N, sizeof *sorted, mel_qcmp);
    model md = {sorted, N};
    CHECK(same_order(ix, &md));
    int bad = 0;
    for (int i = 0; i < N; i += 97) {
        size_t rk;
        bad += !zsetb_rank(z, sorted[i].m, sorted[i].ml, &rk) || rk != (size_t)i;
    }
    for (int i = 0; i < N; i += 101)
        bad += !elem_is(zindex_at(ix, (size_t)i, NULL), &sorted[i]);
    CHECK(bad == 0);
    zscore_range r = {100, 199, 0, 0};
    size_t first, n = zindex_score_span(ix, &r, &first);
    CHECK(first == model_lower(&md, 100, 0) && n == model_lower(&md, 199, 1) - first);
    /* delete in random order (Fisher-Yates), verifying as it shrinks */
    for (int i = N - 1; i > 0; i--) {
        int j = (int)(rnd() % (uint64_t)(i + 1));
        mel t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    int vfail = 0;
    for (int i = 0; i < N; i++) {
        bad += zsetb_delete(z, a[i].m, a[i].ml) != 1;
        if (i % 20000 == 0 || i > N - 200) vfail += zindex_verify(ix) != 0;
    }
    CHECK(bad == 0 && vfail == 0 && zsetb_size(z) == 0 && zindex_size(ix) == 0);
    /* ascending scores: leaves fill up completely */
    for (int i = 0; i < N; i++)
        zsetb_set(z, a[i].m, a[i].ml, (double)i);
    double asc = (double)zindex_mem_usage(ix) / N;
    CHECK(zindex_verify(ix) == 0 && asc < 9.5);
    /* descending scores, into a fresh set */
    zset_big *d = zsetb_create();
    for (int i = 0; i < N; i++)
        zsetb_set(d, a[i].m, a[i].ml, (double)-i);
    double desc = (double)zindex_mem_usage(d->idx) / N;
    CHECK(zindex_verify(d->idx) == 0 && desc < 9.5);
    CHECK(zelem_score(zindex_at(d->idx, 0, NULL)) == -(N - 1) && zelem_score(zindex_at(d->idx, N - 1, NULL)) == 0);
    /* delete everything by rank ranges from the middle out */
    size_t removed = zsetb_delete_ranks(d, N / 4, N / 2);
    CHECK(removed == N / 4 + 1 && zindex_verify(d->idx) == 0);
    CHECK(zsetb_delete_ranks(d, 0, (size_t)-1) == N - removed && zsetb_size(d) == 0 && zindex_verify(d->idx) == 0);
    zscore_range all = {-INFINITY, INFINITY, 0, 0};
    CHECK(zsetb_delete_score(z, &all) == N && zsetb_size(z) == 0 && zindex_verify(ix) == 0);
    printf("index bytes/element at 100k: ascending %.2f, descending %.2f\n", asc, desc);
    zsetb_free(&d);
    zsetb_free(&z);
    free(a);
    free(sorted);
    CHECK(mem_used() == base);
}

/* Deep tree (150k members, height >= 2): interleaved inserts, deletes and
 * score changes; the structure is verified, and rank <-> element round
 * trips must agree, which exercises inner splits, merges and evening. */
static void test_deep_churn(void) {
    enum { POOL = 150000, OPS = 300000 };
    rng_state = 31337;
    zset_big *z = zsetb_create();
    zindex *ix = z->idx;
    char m[32];
    for (int i = 0; i < POOL; i++)
        zsetb_set(z, m, (size_t)snprintf(m, sizeof m, "c%d", i), (double)(rnd() % 5000));
    int bad = 0, vfail = zindex_verify(ix) != 0;
    for (int op = 0; op < OPS; op++) {
        int id = (int)(rnd() % POOL);
        size_t ml = (size_t)snprintf(m, sizeof m, "c%d", id), rk;
        uint64_t r = rnd() % 100;
        /* phases: shrink to ~10%, regrow, then churn */
        int phase = op < OPS / 3 ? 0 : op < 2 * OPS / 3 ? 1 : 2;
        if ((phase == 0 && r < 90) || (phase == 2 && r < 45)) {
            zsetb_delete(z, m, ml);
        } else if (phase == 1 || r < 90) {
            zsetb_set(z, m, ml, (double)(rnd() % 5000));
        } else if (zsetb_rank(z, m, ml, &rk)) {
            bad += !is_member(zindex_at(ix, rk, NULL), m, ml);
        }
        if (op % 25000 == 0) {
            vfail += zindex_verify(ix) != 0;
            size_t n = zindex_size(ix);
            for (int k = 0; k < 200 && n; k++) {
                size_t want = rnd() % n, got;
                smap_elem *e = zindex_at(ix, want, NULL);
                size_t el;
                const char *em = zelem_member(e, &el);
                bad += !zsetb_rank(z, em, el, &got) || got != want;
            }
        }
    }
    vfail += zindex_verify(ix) != 0;
    CHECK(bad == 0 && vfail == 0);
    CHECK(zsetb_size(z) == zindex_size(ix));
    zsetb_free(&z);
}

/* Bytes per element of a zset of 1,000 "member%04d" with double scores. */
static void test_memory(void) {
    rng_state = 99;
    int64_t base = mem_used();
    zset_big *z = zsetb_create();
    char m[32];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(m, sizeof m, "member%04d", i);
        zsetb_set(z, m, (size_t)n, (double)(rnd() % 1000000) / 7.0);
    }
    double per = (double)(mem_used() - base) / 1000;
    CHECK((int64_t)zsetb_mem_usage(z) == mem_used() - base);
    zsetb_free(&z);
    base = mem_used();
    z = zsetb_create();
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(m, sizeof m, "member%04d", i);
        zsetb_set(z, m, (size_t)n, (double)i);
    }
    double per_asc = (double)(mem_used() - base) / 1000;
    zsetb_free(&z);
    printf("bytes/element at 1000: zset member%%04d random scores %.1f, ascending scores %.1f\n", per, per_asc);
    CHECK(per <= 56);
}

int main(void) {
    test_empty();
    test_one();
    test_lex();
    test_inf();
    test_long_members();
    test_model();
    test_lex_model();
    test_big();
    test_deep_churn();
    test_memory();
    return check_report();
}
