/* test_quicklist.c - unit tests of the list of packs (src/core/quicklist.c):
 * node fill rules for every list-max-listpack-size form, elements bigger
 * than a node, index and iteration from both ends, insert/replace in full
 * nodes (splits and merges), deletes while iterating, range deletes, a list
 * rotated onto itself, a randomized run against an array model checking the
 * node invariants, and memory per list; then the list value on top of it
 * (src/core/lobj.c: one pack while one node holds the list) against the
 * same model. No sockets. */
#include "core/lobj.h"
#include "core/quicklist.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

/* ---- a plain array model ---- */

typedef struct {
    char *s;
    size_t len;
} mstr;
#define MMAX 6000
static mstr model[MMAX];
static size_t mcount;

static void m_insert(size_t at, const char *s, size_t len) {
    memmove(model + at + 1, model + at, (mcount - at) * sizeof model[0]);
    model[at].s = malloc(len ? len : 1);
    memcpy(model[at].s, s, len);
    model[at].len = len;
    mcount++;
}
static void m_delete(size_t at, size_t n) {
    for (size_t i = at; i < at + n; i++)
        free(model[i].s);
    memmove(model + at, model + at + n, (mcount - at - n) * sizeof model[0]);
    mcount -= n;
}
static void m_clear(void) { m_delete(0, mcount); }

/* ---- invariants ---- */

typedef struct {
    int fill;
    size_t nodes, count, bad;
} node_check;

static size_t node_limit(int fill) {
    if (fill < -5) fill = -5;
    return (size_t)4096 << (-fill - 1);
}

static void check_node(void *ud, const pack *p) {
    node_check *c = ud;
    size_t n = pack_count(p), b = pack_bytes(p);
    c->nodes++;
    c->count += n;
    if (n == 0 || !pack_validate(p, b)) c->bad++;
    if (n == 1) return; /* a single element may be of any size */
    if (c->fill < 0 && b > node_limit(c->fill)) c->bad++;
    if (c->fill >= 0 && (b > 8192 || n > (size_t)(c->fill > 32768 ? 32768 : c->fill))) c->bad++;
}

/* Nodes obey the fill rule, counts add up, and the contents equal the
 * model walking both ways. */
static int ql_ok(const quicklist *ql, int fill) {
    node_check c = {fill, 0, 0, 0};
    quicklist_foreach_node(ql, check_node, &c);
    if (c.bad || c.nodes != quicklist_nodes(ql) || c.count != quicklist_count(ql)) return 0;
    if (quicklist_count(ql) != mcount) return 0;
    ql_pos pos;
    int more = quicklist_first(ql, &pos);
    for (size_t i = 0; i < mcount; i++, more = quicklist_next(&pos))
        if (!more || !quicklist_eq(&pos, model[i].s, model[i].len)) return 0;
    if (more) return 0;
    more = quicklist_last(ql, &pos);
    for (size_t i = mcount; i-- > 0; more = quicklist_prev(&pos))
        if (!more || !quicklist_eq(&pos, model[i].s, model[i].len)) return 0;
    return !more && pos.ql == NULL;
}

static void push_both(quicklist *ql, int where, const char *s, size_t len) {
    quicklist_push(ql, where, s, len);
    m_insert(where == QL_HEAD ? 0 : mcount, s, len);
}

/* ---- tests ---- */

static void test_empty(void) {
    quicklist *ql = quicklist_create(-2);
    ql_pos pos;
    pack_val v;
    CHECK(quicklist_count(ql) == 0 && quicklist_nodes(ql) == 0);
    CHECK(!quicklist_peek(ql, QL_HEAD, &v) && !quicklist_peek(ql, QL_TAIL, &v));
    CHECK(!quicklist_pop(ql, QL_HEAD) && !quicklist_pop(ql, QL_TAIL));
    CHECK(!quicklist_first(ql, &pos) && pos.ql == NULL);
    CHECK(!quicklist_last(ql, &pos) && pos.ql == NULL);
    CHECK(!quicklist_index(ql, 0, &pos) && !quicklist_index(ql, -1, &pos));
    CHECK(!quicklist_next(&pos) && !quicklist_prev(&pos));
    CHECK(quicklist_delete_range(ql, 0, 10) == 0);
    CHECK(quicklist_bytes(ql) > 0);
    quicklist *d = quicklist_dup(ql);
    CHECK(quicklist_count(d) == 0);
    quicklist_append_pack(ql, pack_create()); /* an empty pack adds nothing */
    CHECK(quicklist_nodes(ql) == 0);
    quicklist_destroy(&d);
    quicklist_destroy(&ql);
    CHECK(ql == NULL);
    quicklist_destroy(&ql);
}

static void test_push_pop(void) {
    quicklist *ql = quicklist_create(-2);
    pack_val v;
    char buf[PACK_INTBUF];
    size_t len;
    quicklist_push(ql, QL_TAIL, "a", 1);
    CHECK(quicklist_count(ql) == 1 && quicklist_nodes(ql) == 1);
    CHECK(quicklist_peek(ql, QL_HEAD, &v) && v.len == 1 && v.s[0] == 'a');
    CHECK(quicklist_peek(ql, QL_TAIL, &v) && v.len == 1 && v.s[0] == 'a');
    quicklist_push(ql, QL_HEAD, "42", 2);
    quicklist_push(ql, QL_TAIL, "", 0);
    CHECK(quicklist_peek(ql, QL_HEAD, &v) && !v.s && v.v == 42);
    CHECK(quicklist_peek(ql, QL_TAIL, &v) && v.s && v.len == 0);
    CHECK(quicklist_pop(ql, QL_TAIL) && quicklist_count(ql) == 2);
    CHECK(quicklist_pop(ql, QL_HEAD) && quicklist_count(ql) == 1);
    CHECK(quicklist_peek(ql, QL_HEAD, &v));
    const char *s = pack_val_str(&v, buf, &len);
    CHECK(len == 1 && s[0] == 'a');
    CHECK(quicklist_pop(ql, QL_HEAD) && quicklist_count(ql) == 0 && quicklist_nodes(ql) == 0);
    CHECK(!quicklist_pop(ql, QL_HEAD));
    /* int boundaries round-trip */
    const char *ints[] = {"-9223372036854775808", "9223372036854775807", "0", "-1", "127", "128", "-4096"};
    for (int i = 0; i < 7; i++)
        quicklist_push(ql, QL_TAIL, ints[i], strlen(ints[i]));
    for (int i = 0; i < 7; i++) {
        CHECK(quicklist_peek(ql, QL_HEAD, &v) && !v.s);
        s = pack_val_str(&v, buf, &len);
        CHECK(len == strlen(ints[i]) && memcmp(s, ints[i], len) == 0);
        quicklist_pop(ql, QL_HEAD);
    }
    quicklist_destroy(&ql);
}

/* Node counts for each fill form: 1000 elements of 100 bytes take 100
 * bytes each inside a fixed pack (one width: no tags, no backlens) with an
 * 8-byte header. */
static void test_fill_rules(void) {
    struct {
        int fill;
        size_t nodes;
    } cases[] = {
        {-1, 25},   /* 4 KB: 40 per node */
        {-2, 13},   /* 8 KB: 81 per node */
        {-3, 7},    /* 16 KB: 163 */
        {-4, 4},    /* 32 KB: 327 */
        {-5, 2},    /* 64 KB: 655 */
        {-100, 2},  /* clamped to -5 */
        {5, 200},   /* 5 per node */
        {1, 1000},  /* 1 per node */
        {0, 1000},  /* 0 acts as one per node */
        {1000, 13}, /* count allows more, 8 KB safety limit caps at 81 */
        {INT_MAX, 13}, {INT_MIN, 2},
    };
    char s[100];
    memset(s, 'x', sizeof s);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int where = 0; where < 2; where++) {
            quicklist *ql = quicklist_create(cases[c].fill);
            for (int i = 0; i < 1000; i++) {
                s[0] = (char)('a' + i % 26);
                push_both(ql, where ? QL_TAIL : QL_HEAD, s, sizeof s);
            }
            CHECK(quicklist_nodes(ql) == cases[c].nodes);
            CHECK(ql_ok(ql, cases[c].fill));
            m_clear();
            quicklist_destroy(&ql);
        }
    }
    /* small integers: 2 bytes each, 4092 fit in 8 KB */
    quicklist *ql = quicklist_create(-2);
    for (int i = 0; i < 5000; i++)
        quicklist_push(ql, QL_TAIL, "7", 1);
    CHECK(quicklist_nodes(ql) == 2);
    quicklist_destroy(&ql);
    /* set_fill changes later pushes only */
    ql = quicklist_create(-2);
    for (int i = 0; i < 10; i++)
        quicklist_push(ql, QL_TAIL, "7", 1);
    quicklist_set_fill(ql, 2);
    for (int i = 0; i < 4; i++)
        quicklist_push(ql, QL_TAIL, "7", 1);
    CHECK(quicklist_nodes(ql) == 3 && quicklist_count(ql) == 14);
    quicklist_destroy(&ql);
}

/* An element larger than any node gets a node of its own. */
static void test_big_elements(void) {
    quicklist *ql = quicklist_create(-1);
    size_t biglen = 70000;
    char *big = malloc(biglen);
    memset(big, 'B', biglen);
    for (int i = 0; i < 10; i++)
        push_both(ql, QL_TAIL, "s", 1);
    push_both(ql, QL_TAIL, big, biglen);
    for (int i = 0; i < 10; i++)
        push_both(ql, QL_TAIL, "t", 1);
    CHECK(quicklist_nodes(ql) == 3);
    push_both(ql, QL_HEAD, big, biglen);
    CHECK(quicklist_nodes(ql) == 4);
    ql_pos pos;
    CHECK(quicklist_index(ql, 11, &pos) && quicklist_eq(&pos, big, biglen));
    CHECK(quicklist_index(ql, -11, &pos) && quicklist_eq(&pos, big, biglen));
    /* inserting next to the big element never joins its node */
    quicklist_insert(ql, &pos, 0, "u", 1);
    m_insert(11, "u", 1);
    CHECK(quicklist_index(ql, 12, &pos));
    quicklist_insert(ql, &pos, 1, "v", 1);
    m_insert(13, "v", 1);
    CHECK(ql_ok(ql, -1));
    /* replace a small element by a big one inside a full-ish node */
    CHECK(quicklist_index(ql, 3, &pos));
    quicklist_replace(ql, &pos, big, biglen);
    m_delete(3, 1);
    m_insert(3, big, biglen);
    CHECK(ql_ok(ql, -1));
    /* and the big one back to small */
    CHECK(quicklist_index(ql, 3, &pos));
    quicklist_replace(ql, &pos, "w", 1);
    m_delete(3, 1);
    m_insert(3, "w", 1);
    CHECK(ql_ok(ql, -1));
    m_clear();
    quicklist_destroy(&ql);
    free(big);
}

static void fill_numbers(quicklist *ql, int n) {
    char d[24];
    for (int i = 0; i < n; i++) {
        int l = ll2str(d, i);
        push_both(ql, QL_TAIL, d, (size_t)l);
    }
}

static void test_index(void) {
    quicklist *ql = quicklist_create(4); /* many nodes */
    fill_numbers(ql, 103);
    ql_pos pos;
    pack_val v;
    for (long i = 0; i < 103; i++) {
        CHECK(quicklist_index(ql, i, &pos));
        quicklist_get(&pos, &v);
        CHECK(!v.s && v.v == i);
        CHECK(quicklist_index(ql, i - 103, &pos));
        quicklist_get(&pos, &v);
        CHECK(!v.s && v.v == i);
    }
    CHECK(!quicklist_index(ql, 103, &pos) && pos.ql == NULL);
    CHECK(!quicklist_index(ql, -104, &pos));
    CHECK(!quicklist_index(ql, LONG_MAX, &pos) && !quicklist_index(ql, LONG_MIN, &pos));
    /* walk from an index to both ends */
    CHECK(quicklist_index(ql, 50, &pos));
    long k = 50;
    while (quicklist_next(&pos)) {
        quicklist_get(&pos, &v);
        CHECK(v.v == ++k);
    }
    CHECK(k == 102);
    CHECK(quicklist_index(ql, 50, &pos));
    k = 50;
    while (quicklist_prev(&pos)) {
        quicklist_get(&pos, &v);
        CHECK(v.v == --k);
    }
    CHECK(k == 0);
    CHECK(ql_ok(ql, 4));
    m_clear();
    quicklist_destroy(&ql);
}

/* LINSERT-like inserts at node boundaries and inside full nodes. */
static void test_insert(void) {
    int fills[] = {-1, 3, 1};
    char s[300];
    memset(s, 'i', sizeof s);
    for (int f = 0; f < 3; f++) {
        quicklist *ql = quicklist_create(fills[f]);
        for (int i = 0; i < 60; i++) {
            s[0] = (char)('A' + i % 26);
            push_both(ql, QL_TAIL, s, 200); /* 203 bytes: 20 per 4 KB node */
        }
        size_t nodes = quicklist_nodes(ql);
        /* before the head, after the tail, around every position */
        ql_pos pos;
        quicklist_first(ql, &pos);
        quicklist_insert(ql, &pos, 0, "head", 4);
        m_insert(0, "head", 4);
        quicklist_last(ql, &pos);
        quicklist_insert(ql, &pos, 1, "tail", 4);
        m_insert(mcount, "tail", 4);
        CHECK(ql_ok(ql, fills[f]));
        for (size_t at = 1; at < 60; at += 7) {
            CHECK(quicklist_index(ql, (long)at, &pos));
            int after = (int)(at & 1);
            quicklist_insert(ql, &pos, after, "mid", 3);
            m_insert(at + (size_t)after, "mid", 3);
            CHECK(ql_ok(ql, fills[f]));
        }
        CHECK(quicklist_nodes(ql) >= nodes);
        m_clear();
        quicklist_destroy(&ql);
    }
}

static void test_replace(void) {
    quicklist *ql = quicklist_create(-1);
    char s[200];
    memset(s, 'r', sizeof s);
    for (int i = 0; i < 40; i++)
        push_both(ql, QL_TAIL, s, 100); /* exactly 2 full 4 KB nodes */
    CHECK(quicklist_nodes(ql) == 1 || quicklist_nodes(ql) == 2);
    ql_pos pos;
    /* grow elements in a full node until it must split */
    for (int k = 0; k < 10; k++) {
        size_t at = (size_t)(k * 3 + 1);
        CHECK(quicklist_index(ql, (long)at, &pos));
        quicklist_replace(ql, &pos, s, 200);
        m_delete(at, 1);
        m_insert(at, s, 200);
        CHECK(ql_ok(ql, -1));
    }
    /* same-size and shrinking replaces stay in place */
    size_t nodes = quicklist_nodes(ql);
    CHECK(quicklist_index(ql, -1, &pos));
    quicklist_replace(ql, &pos, "12345", 5);
    m_delete(mcount - 1, 1);
    m_insert(mcount, "12345", 5);
    CHECK(quicklist_nodes(ql) == nodes && ql_ok(ql, -1));
    m_clear();
    quicklist_destroy(&ql);
}

/* LREM-style: delete matches while walking, both directions, with limits. */
static void test_delete_at(void) {
    quicklist *ql = quicklist_create(3);
    for (int i = 0; i < 30; i++)
        push_both(ql, QL_TAIL, i % 3 == 0 ? "x" : "y", 1);
    ql_pos pos;
    /* forward: remove every "x" */
    int more = quicklist_first(ql, &pos);
    size_t removed = 0;
    while (more) {
        if (quicklist_eq(&pos, "x", 1)) {
            more = quicklist_delete_at(ql, &pos, 1);
            removed++;
        } else {
            more = quicklist_next(&pos);
        }
    }
    CHECK(removed == 10 && quicklist_count(ql) == 20);
    for (size_t i = mcount; i-- > 0;)
        if (model[i].s[0] == 'x') m_delete(i, 1);
    CHECK(ql_ok(ql, 3));
    /* backward: remove the last 5 "y" */
    more = quicklist_last(ql, &pos);
    removed = 0;
    while (more && removed < 5) {
        more = quicklist_delete_at(ql, &pos, 0);
        removed++;
    }
    m_delete(mcount - 5, 5);
    CHECK(ql_ok(ql, 3));
    CHECK(more && quicklist_eq(&pos, model[mcount - 1].s, 1));
    /* delete everything from the head, forward */
    more = quicklist_first(ql, &pos);
    while (more)
        more = quicklist_delete_at(ql, &pos, 1);
    CHECK(quicklist_count(ql) == 0 && quicklist_nodes(ql) == 0);
    m_clear();
    /* backwards to empty */
    for (int i = 0; i < 10; i++)
        quicklist_push(ql, QL_TAIL, "z", 1);
    more = quicklist_last(ql, &pos);
    int n = 0;
    while (more) {
        more = quicklist_delete_at(ql, &pos, 0);
        n++;
    }
    CHECK(n == 10 && quicklist_count(ql) == 0 && quicklist_nodes(ql) == 0);
    quicklist_destroy(&ql);
}

static void test_delete_range(void) {
    struct {
        long start;
        size_t n;
        size_t want;
    } cases[] = {
        {0, 1, 1},   {-1, 1, 1},  {0, 0, 0},     {5, 10, 10},      {-20, 7, 7},      {48, 10, 2}, {50, 1, 0},
        {-51, 1, 0}, {0, 50, 50}, {0, 1000, 50}, {LONG_MIN, 1, 0}, {LONG_MAX, 1, 0}, {3, 1, 1},   {10, 30, 30},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        quicklist *ql = quicklist_create(4);
        fill_numbers(ql, 50);
        size_t got = quicklist_delete_range(ql, cases[c].start, cases[c].n);
        CHECK(got == cases[c].want);
        if (got) {
            size_t at = cases[c].start < 0 ? (size_t)((long)mcount + cases[c].start) : (size_t)cases[c].start;
            m_delete(at, got);
        }
        CHECK(ql_ok(ql, 4));
        m_clear();
        quicklist_destroy(&ql);
    }
    /* LTRIM-like: keep the middle */
    quicklist *ql = quicklist_create(-2);
    fill_numbers(ql, 5000);
    CHECK(quicklist_delete_range(ql, 0, 1000) == 1000);
    CHECK(quicklist_delete_range(ql, -1000, 1000) == 1000);
    m_delete(0, 1000);
    m_delete(mcount - 1000, 1000);
    CHECK(ql_ok(ql, -2));
    m_clear();
    quicklist_destroy(&ql);
}

static void collect(void *ud, const pack *p) {
    quicklist *dst = ud;
    quicklist_append_pack(dst, pack_dup(p));
}

static void test_dup_and_packs(void) {
    quicklist *ql = quicklist_create(-1);
    char s[64];
    for (int i = 0; i < 500; i++) {
        int l = snprintf(s, sizeof s, "element-%d", i);
        push_both(ql, QL_TAIL, s, (size_t)l);
    }
    quicklist *d = quicklist_dup(ql);
    CHECK(ql_ok(d, -1) && quicklist_nodes(d) == quicklist_nodes(ql));
    quicklist_destroy(&ql);
    CHECK(ql_ok(d, -1)); /* the copy owns its nodes */
    quicklist *r = quicklist_create(-1);
    quicklist_foreach_node(d, collect, r);
    CHECK(ql_ok(r, -1) && quicklist_nodes(r) == quicklist_nodes(d));
    m_clear();
    quicklist_destroy(&d);
    quicklist_destroy(&r);
}

/* RPOPLPUSH l l: the pushed value points into the list itself. */
static void test_rotate_self(void) {
    int fills[] = {-2, 2, 1};
    for (int f = 0; f < 3; f++) {
        quicklist *ql = quicklist_create(fills[f]);
        char s[40];
        for (int i = 0; i < 25; i++) {
            int l = snprintf(s, sizeof s, "v%d-%s", i, i % 2 ? "odd" : "even");
            push_both(ql, QL_TAIL, s, (size_t)l);
        }
        for (int r = 0; r < 60; r++) {
            pack_val v;
            char buf[PACK_INTBUF];
            size_t len;
            CHECK(quicklist_peek(ql, QL_TAIL, &v));
            const char *p = pack_val_str(&v, buf, &len);
            quicklist_push(ql, QL_HEAD, p, len);
            quicklist_pop(ql, QL_TAIL);
            m_insert(0, model[mcount - 1].s, model[mcount - 1].len);
            m_delete(mcount - 1, 1);
        }
        CHECK(ql_ok(ql, fills[f]));
        m_clear();
        /* a single-element list rotated onto itself */
        quicklist_destroy(&ql);
        ql = quicklist_create(fills[f]);
        quicklist_push(ql, QL_TAIL, "only", 4);
        for (int r = 0; r < 5; r++) {
            pack_val v;
            quicklist_peek(ql, QL_TAIL, &v);
            quicklist_push(ql, QL_HEAD, v.s, v.len);
            quicklist_pop(ql, QL_TAIL);
        }
        pack_val v;
        CHECK(quicklist_count(ql) == 1 && quicklist_peek(ql, QL_HEAD, &v) && v.len == 4 && !memcmp(v.s, "only", 4));
        quicklist_destroy(&ql);
    }
}

static void random_value(char *out, size_t *len) {
    uint64_t r = rnd() % 10;
    if (r < 3) {
        *len = (size_t)ll2str(out, (int64_t)rnd() >> (rnd() % 64));
    } else {
        size_t l = rnd() % 200 == 0 ? 5000 + rnd() % 6000 : rnd() % 120;
        for (size_t i = 0; i < l; i++)
            out[i] = (char)('a' + rnd() % 4);
        *len = l;
    }
}

/* Randomized operations against the array model, for several fills. */
static void test_random_model(void) {
    int fills[] = {-1, -2, 1, 3, 16, 0};
    char val[12000];
    size_t len;
    for (int f = 0; f < 6; f++) {
        int fill = fills[f], bad = 0;
        rng = 1000 + (uint64_t)f;
        quicklist *ql = quicklist_create(fill);
        for (int iter = 0; iter < 6000 && !bad; iter++) {
            uint64_t op = rnd() % 100;
            ql_pos pos;
            if (op < 30 && mcount < MMAX - 10) {
                random_value(val, &len);
                push_both(ql, (rnd() & 1) ? QL_HEAD : QL_TAIL, val, len);
            } else if (op < 40 && mcount) {
                int where = (rnd() & 1) ? QL_HEAD : QL_TAIL;
                pack_val v;
                if (!quicklist_peek(ql, where, &v)) bad = 1;
                size_t at = where == QL_HEAD ? 0 : mcount - 1;
                char buf[PACK_INTBUF];
                size_t l;
                const char *s = pack_val_str(&v, buf, &l);
                if (l != model[at].len || memcmp(s, model[at].s, l) != 0) bad = 1;
                quicklist_pop(ql, where);
                m_delete(at, 1);
            } else if (op < 55 && mcount && mcount < MMAX - 10) {
                size_t at = rnd() % mcount;
                int after = (int)(rnd() & 1);
                random_value(val, &len);
                if (!quicklist_index(ql, (long)at, &pos)) bad = 1;
                quicklist_insert(ql, &pos, after, val, len);
                m_insert(at + (size_t)after, val, len);
            } else if (op < 65 && mcount) {
                size_t at = rnd() % mcount;
                random_value(val, &len);
                if (!quicklist_index(ql, (long)at - (long)mcount, &pos)) bad = 1;
                quicklist_replace(ql, &pos, val, len);
                m_delete(at, 1);
                m_insert(at, val, len);
            } else if (op < 72 && mcount) {
                size_t at = rnd() % mcount, n = rnd() % 30;
                size_t want = n < mcount - at ? n : mcount - at;
                long start = (rnd() & 1) ? (long)at : (long)at - (long)mcount;
                if (quicklist_delete_range(ql, start, n) != want) bad = 1;
                m_delete(at, want);
            } else if (op < 80 && mcount) {
                size_t at = rnd() % mcount;
                int fwd = (int)(rnd() & 1);
                if (!quicklist_index(ql, (long)at, &pos)) bad = 1;
                int more = quicklist_delete_at(ql, &pos, fwd);
                m_delete(at, 1);
                size_t nxt = fwd ? at : at - 1; /* where pos should now be */
                int expect = fwd ? at < mcount : at > 0;
                if (more != expect) bad = 1;
                if (more && !quicklist_eq(&pos, model[nxt].s, model[nxt].len)) bad = 1;
            } else if (mcount) {
                long i = (long)(rnd() % (2 * mcount)) - (long)mcount;
                size_t at = i < 0 ? (size_t)(i + (long)mcount) : (size_t)i;
                if (!quicklist_index(ql, i, &pos) || !quicklist_eq(&pos, model[at].s, model[at].len)) bad = 1;
            }
            if (iter % 200 == 0 && !ql_ok(ql, fill)) bad = 1;
            if (bad) fprintf(stderr, "quicklist model (fill %d) diverged at iteration %d\n", fill, iter);
        }
        CHECK(!bad);
        CHECK(ql_ok(ql, fill));
        m_clear();
        quicklist_destroy(&ql);
    }
}

static void test_sizes(void) {
    quicklist *ql = quicklist_create(-2);
    char s[16];
    for (int i = 0; i < 100; i++) {
        int l = snprintf(s, sizeof s, "item%04d", i);
        quicklist_push(ql, QL_TAIL, s, (size_t)l);
    }
    CHECK(quicklist_nodes(ql) == 1);
    printf("size: list of 100 x 8-byte strings: %zu bytes allocated in total\n", quicklist_bytes(ql));
    quicklist_destroy(&ql);
    int64_t before = mem_used();
    static quicklist *many[10000];
    for (int k = 0; k < 10000; k++) {
        many[k] = quicklist_create(-2);
        for (int i = 0; i < 100; i++)
            quicklist_push(many[k], QL_TAIL, "123456", 6);
    }
    int64_t used = mem_used() - before;
    printf("size: 10000 lists x 100 small integers: %lld bytes allocated, %.1f per list\n", (long long)used,
           used / 10000.0);
    CHECK(used < 10000LL * 800);
    for (int k = 0; k < 10000; k++)
        quicklist_destroy(&many[k]);
}

/* ---- the list value (core/lobj.h) ---- */

/* The value holds exactly the model, walking both ways, and is one bare
 * pack (no quicklist) exactly when it has at most one node. */
static int lobj_ok(const void *o, int fill) {
    node_check c = {fill, 0, 0, 0};
    lobj_foreach_node(o, check_node, &c);
    if (c.bad || c.nodes != lobj_nodes(o) || c.count != lobj_count(o) || lobj_count(o) != mcount) return 0;
    if ((((uintptr_t)o & 1) != 0) != (lobj_nodes(o) > 1)) return 0;
    lobj_pos pos;
    int more = lobj_first(o, &pos);
    for (size_t i = 0; i < mcount; i++, more = lobj_next(&pos))
        if (!more || !lobj_eq(&pos, model[i].s, model[i].len)) return 0;
    if (more) return 0;
    more = lobj_last(o, &pos);
    for (size_t i = mcount; i-- > 0; more = lobj_prev(&pos))
        if (!more || !lobj_eq(&pos, model[i].s, model[i].len)) return 0;
    return !more && !lobj_pos_ok(&pos);
}

/* Randomized operations on a value that keeps crossing the one-node line
 * (short values, small fills, many deletions). */
static void test_lobj_model(void) {
    int fills[] = {2, 5, -1, 0, 1, -2};
    char val[12000];
    size_t len;
    for (int f = 0; f < 6; f++) {
        int fill = fills[f], bad = 0;
        rng = 2000 + (uint64_t)f;
        void *o = lobj_new();
        for (int iter = 0; iter < 8000 && !bad; iter++) {
            uint64_t op = rnd() % 100;
            lobj_pos pos;
            if (op < 28 && mcount < 40) {
                random_value(val, &len);
                int where = (rnd() & 1) ? QL_HEAD : QL_TAIL;
                lobj_push(&o, fill, where, val, len);
                m_insert(where == QL_HEAD ? 0 : mcount, val, len);
            } else if (op < 40 && mcount) {
                int where = (rnd() & 1) ? QL_HEAD : QL_TAIL;
                size_t at = where == QL_HEAD ? 0 : mcount - 1;
                if (!(where == QL_HEAD ? lobj_first(o, &pos) : lobj_last(o, &pos))) bad = 1;
                if (!lobj_eq(&pos, model[at].s, model[at].len)) bad = 1;
                if (!lobj_pop(&o, where)) bad = 1;
                m_delete(at, 1);
            } else if (op < 55 && mcount && mcount < 40) {
                size_t at = rnd() % mcount;
                int after = (int)(rnd() & 1);
                random_value(val, &len);
                if (!lobj_index(o, (long)at, &pos)) bad = 1;
                lobj_insert(&o, fill, &pos, after, val, len);
                m_insert(at + (size_t)after, val, len);
            } else if (op < 65 && mcount) {
                size_t at = rnd() % mcount;
                random_value(val, &len);
                if (!lobj_index(o, (long)at - (long)mcount, &pos)) bad = 1;
                lobj_replace(&o, fill, &pos, val, len);
                m_delete(at, 1);
                m_insert(at, val, len);
            } else if (op < 75 && mcount) {
                size_t at = rnd() % mcount, n = rnd() % 6;
                size_t want = n < mcount - at ? n : mcount - at;
                long start = (rnd() & 1) ? (long)at : (long)at - (long)mcount;
                if (lobj_delete_range(&o, start, n) != want) bad = 1;
                m_delete(at, want);
            } else if (op < 90 && mcount) {
                size_t at = rnd() % mcount;
                int fwd = (int)(rnd() & 1);
                if (!lobj_index(o, (long)at, &pos)) bad = 1;
                int more = lobj_delete_at(&o, &pos, fwd);
                m_delete(at, 1);
                size_t nxt = fwd ? at : at - 1;
                int expect = fwd ? at < mcount : at > 0;
                if (more != expect || lobj_pos_ok(&pos) != expect) bad = 1;
                if (more && !lobj_eq(&pos, model[nxt].s, model[nxt].len)) bad = 1;
            } else if (mcount) {
                long i = (long)(rnd() % (2 * mcount)) - (long)mcount;
                size_t at = i < 0 ? (size_t)(i + (long)mcount) : (size_t)i;
                if (!lobj_index(o, i, &pos) || !lobj_eq(&pos, model[at].s, model[at].len)) bad = 1;
                if (lobj_index(o, (long)mcount, &pos) || lobj_pos_ok(&pos)) bad = 1;
            }
            if (!lobj_ok(o, fill)) bad = 1;
            if (iter % 500 == 0) { /* a copy is equal and independent */
                void *d = lobj_dup(o);
                if (!lobj_ok(d, fill)) bad = 1;
                lobj_free(d);
            }
            if (bad) fprintf(stderr, "lobj model (fill %d) diverged at iteration %d\n", fill, iter);
        }
        CHECK(!bad);
        m_clear();
        lobj_free(o);
    }
}

/* A value of n tail pushes of "<prefix><i>" under fill; the model gets them
 * too. */
static void *lobj_filled(int n, const char *prefix, int fill) {
    void *o = lobj_new();
    char s[32];
    for (int i = 0; i < n; i++) {
        int l = snprintf(s, sizeof s, "%s%07d", prefix, i);
        lobj_push(&o, fill, QL_TAIL, s, (size_t)l);
        m_insert(mcount, s, (size_t)l);
    }
    return o;
}

/* LMOVE l l through the value: the pushed string points into the list,
 * also while the push turns the one pack into a quicklist. */
static void test_lobj_rotate_self(void) {
    void *o = lobj_filled(6, "v", 3);
    for (int r = 0; r < 20; r++) {
        lobj_pos pos;
        pack_val v;
        char buf[PACK_INTBUF];
        size_t len;
        CHECK(lobj_last(o, &pos));
        lobj_get(&pos, &v);
        const char *p = pack_val_str(&v, buf, &len);
        lobj_push(&o, r % 2 ? 3 : 100, QL_HEAD, p, len);
        lobj_pop(&o, QL_TAIL);
        m_insert(0, model[mcount - 1].s, model[mcount - 1].len);
        m_delete(mcount - 1, 1);
    }
    CHECK(lobj_ok(o, 100));
    m_clear();
    lobj_free(o);
}

/* A list of one node costs its pack alone; an RDB-style quicklist of one
 * node comes back as that pack. */
static void test_lobj_sizes(void) {
    void *o = lobj_filled(100, "e", -2);
    m_clear();
    CHECK(lobj_nodes(o) == 1 && lobj_bytes(o) == zmalloc_size(o));
#ifndef SHOAL_LIBC_MALLOC
    CHECK(lobj_bytes(o) == 896); /* 808 bytes of fixed pack in mimalloc's 896 class, nothing else */
#endif
    printf("size: list value of 100 x 8-byte strings: %zu bytes allocated in total\n", lobj_bytes(o));
    lobj_free(o);
    quicklist *ql = quicklist_create(-2);
    quicklist_push(ql, QL_TAIL, "a", 1);
    o = lobj_from_quicklist(ql);
    CHECK(((uintptr_t)o & 1) == 0 && lobj_count(o) == 1);
    lobj_free(o);
}

int main(void) {
    test_empty();
    test_push_pop();
    test_fill_rules();
    test_big_elements();
    test_index();
    test_insert();
    test_replace();
    test_delete_at();
    test_delete_range();
    test_dup_and_packs();
    test_rotate_self();
    test_random_model();
    test_sizes();
    test_lobj_model();
    test_lobj_rotate_self();
    test_lobj_sizes();
    return check_report();
}
