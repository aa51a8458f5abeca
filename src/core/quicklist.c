/* quicklist.c - the list of packs (described in quicklist.h).
 *
 * The nodes are an array of pack pointers, not linked node structs, and a
 * list of one node keeps that node's pack pointer in the quicklist itself:
 *
 *   nodes 0    o = NULL
 *   nodes 1    o = pack *                              (16 bytes + the pack)
 *   nodes 2+   o = qarr { count, cap, pack *p[cap] }   (one more block)
 *
 * so slots() gives the node array in both cases (&o is an array of one).
 * The element count of a one-node list is its pack's count.
 *
 * Every insertion asks allow() whether the target node may take the new
 * entry. A push that does not fit starts a new end node; an insertion in
 * the middle of a full node tries the neighbour node at a node boundary,
 * else splits the node at the insertion point, places the element on the
 * side that has room (or in a node of its own between them) and merges
 * the pieces with their neighbours again when they fit together. Index
 * lookups add up node counts from the nearer end of the list. */
#include "core/quicklist.h"
#include "lib/mem.h"
#include <assert.h>
#include <string.h>

#define SAFETY_BYTES 8192  /* positive fill: a node never grows past this */
#define FILL_MAX (1 << 15) /* positive fill is capped here */

struct quicklist {
    void *o;
    int32_t fill;
    uint32_t nodes;
};

typedef struct qarr {
    size_t count;
    size_t cap;
    pack *p[];
} qarr;

static int clamp_fill(int fill) {
    if (fill < -5) return -5;
    if (fill > FILL_MAX) return FILL_MAX;
    return fill;
}

static qarr *arr(const quicklist *ql) { return ql->o; }

/* The node array: nodes() pack pointers. */
static pack **slots(quicklist *ql) { return ql->nodes > 1 ? arr(ql)->p : (pack **)&ql->o; }
static pack *node(const quicklist *ql, size_t i) { return ql->nodes > 1 ? arr(ql)->p[i] : (pack *)ql->o; }

/* Adds d to the element count of a list of several nodes (a one-node
 * list's count is its pack's). */
static void count_add(quicklist *ql, long d) {
    if (ql->nodes > 1) arr(ql)->count = (size_t)((long)arr(ql)->count + d);
}

int quicklist_fill_allows(int fill, size_t bytes, size_t count) {
    fill = clamp_fill(fill);
    if (fill < 0) return bytes <= ((size_t)4096 << (-fill - 1));
    return bytes <= SAFETY_BYTES && count <= (size_t)fill;
}

static size_t packed_threshold = (size_t)1 << 30;

void quicklist_set_packed_threshold(size_t bytes) { __atomic_store_n(&packed_threshold, bytes, __ATOMIC_RELAXED); }

int quicklist_may_join(const pack *p, size_t len) {
    size_t t = __atomic_load_n(&packed_threshold, __ATOMIC_RELAXED);
    if (len >= t) return 0;
    if (pack_count(p) != 1) return 1;
    pack_val v;
    pack_get(p, pack_first(p), &v);
    return !(v.s && v.len >= t);
}

/* 1 when a node of `bytes` bytes and `count` elements obeys ql's fill rule. */
static int fits(const quicklist *ql, size_t bytes, size_t count) {
    return quicklist_fill_allows(ql->fill, bytes, count);
}

/* May node i (may be out of range: no) take the element s? */
static int allow(const quicklist *ql, size_t i, const char *s, size_t len) {
    if (i >= ql->nodes) return 0;
    const pack *p = node(ql, i);
    return quicklist_may_join(p, len) && fits(ql, pack_size_insert(p, s, len), pack_count(p) + 1);
}

/* Makes p (not empty) node i, shifting the nodes from i on; counts its
 * elements. */
static void node_insert(quicklist *ql, size_t i, pack *p) {
    assert(i <= ql->nodes);
    if (ql->nodes == 0) {
        ql->o = p;
        ql->nodes = 1;
        return;
    }
    if (ql->nodes == 1) {
        qarr *a = zmalloc(sizeof *a + 4 * sizeof(pack *));
        a->count = pack_count(ql->o);
        a->cap = 4;
        a->p[0] = ql->o;
        ql->o = a;
    } else if (arr(ql)->cap == ql->nodes) {
        size_t cap = arr(ql)->cap * 2;
        ql->o = zrealloc(ql->o, sizeof(qarr) + cap * sizeof(pack *));
        arr(ql)->cap = cap;
    }
    qarr *a = arr(ql);
    memmove(a->p + i + 1, a->p + i, (ql->nodes - i) * sizeof(pack *));
    a->p[i] = p;
    a->count += pack_count(p);
    ql->nodes++;
}

/* Frees node i (its elements must be uncounted) and closes the gap. */
static void node_remove(quicklist *ql, size_t i) {
    assert(i < ql->nodes);
    pack **s = slots(ql);
    pack_destroy(&s[i]);
    if (ql->nodes == 1) {
        ql->o = NULL;
        ql->nodes = 0;
        return;
    }
    qarr *a = arr(ql);
    memmove(a->p + i, a->p + i + 1, (ql->nodes - i - 1) * sizeof(pack *));
    if (--ql->nodes == 1) {
        ql->o = a->p[0];
        zfree(a);
    }
}

/* A new node i holding the one element s. */
static void node_with(quicklist *ql, size_t i, const char *s, size_t len) {
    node_insert(ql, i, pack_append(pack_create_fixed(), s, len));
}

quicklist *quicklist_create(int fill) {
    quicklist *ql = zcalloc(sizeof *ql);
    ql->fill = clamp_fill(fill);
    return ql;
}

void quicklist_destroy(quicklist **qp) {
    if (!qp || !*qp) return;
    quicklist *ql = *qp;
    while (ql->nodes)
        node_remove(ql, ql->nodes - 1);
    zfree(ql);
    *qp = NULL;
}

quicklist *quicklist_dup(const quicklist *ql) {
    quicklist *d = quicklist_create(ql->fill);
    for (size_t i = 0; i < ql->nodes; i++)
        node_insert(d, i, pack_dup(node(ql, i)));
    return d;
}

void quicklist_set_fill(quicklist *ql, int fill) { ql->fill = clamp_fill(fill); }

size_t quicklist_count(const quicklist *ql) {
    if (ql->nodes > 1) return arr(ql)->count;
    return ql->nodes ? pack_count(ql->o) : 0;
}

size_t quicklist_nodes(const quicklist *ql) { return ql->nodes; }

size_t quicklist_bytes(const quicklist *ql) {
    size_t b = zmalloc_size(ql) + (ql->nodes > 1 ? zmalloc_size(ql->o) : 0);
    for (size_t i = 0; i < ql->nodes; i++)
        b += zmalloc_size(node(ql, i));
    return b;
}

/* ---- ends ---- */

void quicklist_push(quicklist *ql, int where, const char *s, size_t len) {
    size_t i = where == QL_HEAD ? 0 : ql->nodes - 1; /* wraps when empty: allow() says no */
    if (allow(ql, i, s, len)) {
        pack **n = slots(ql) + i;
        *n = where == QL_HEAD ? pack_prepend(*n, s, len) : pack_append(*n, s, len);
        count_add(ql, 1);
    } else {
        node_with(ql, where == QL_HEAD ? 0 : ql->nodes, s, len);
    }
}

int quicklist_peek(const quicklist *ql, int where, pack_val *out) {
    ql_pos pos;
    if (!(where == QL_HEAD ? quicklist_first(ql, &pos) : quicklist_last(ql, &pos))) return 0;
    quicklist_get(&pos, out);
    return 1;
}

int quicklist_pop(quicklist *ql, int where) {
    ql_pos pos;
    if (!(where == QL_HEAD ? quicklist_first(ql, &pos) : quicklist_last(ql, &pos))) return 0;
    quicklist_delete_at(ql, &pos, where == QL_HEAD);
    return 1;
}

/* ---- positions ---- */

static int pos_none(ql_pos *pos) {
    pos->ql = NULL;
    pos->node = 0;
    pos->off = 0;
    return 0;
}

static int pos_at(ql_pos *pos, const quicklist *ql, size_t i, size_t off) {
    pos->ql = ql;
    pos->node = i;
    pos->off = off;
    return 1;
}

int quicklist_first(const quicklist *ql, ql_pos *pos) {
    if (!ql->nodes) return pos_none(pos);
    return pos_at(pos, ql, 0, pack_first(node(ql, 0)));
}

int quicklist_last(const quicklist *ql, ql_pos *pos) {
    if (!ql->nodes) return pos_none(pos);
    return pos_at(pos, ql, ql->nodes - 1, pack_last(node(ql, ql->nodes - 1)));
}

/* Node holding element i (0 <= i < count) and i's index inside it. */
static size_t locate(const quicklist *ql, size_t i, size_t *local) {
    size_t n, count = quicklist_count(ql);
    if (i < count / 2) {
        for (n = 0; i >= pack_count(node(ql, n)); n++)
            i -= pack_count(node(ql, n));
        *local = i;
    } else {
        size_t back = count - 1 - i; /* index counted from the tail */
        for (n = ql->nodes - 1; back >= pack_count(node(ql, n)); n--)
            back -= pack_count(node(ql, n));
        *local = pack_count(node(ql, n)) - 1 - back;
    }
    return n;
}

/* Normalizes a Redis-style index; 0 when out of range. */
static int norm_index(const quicklist *ql, long i, size_t *out) {
    size_t count = quicklist_count(ql);
    if (i < 0) {
        long back = -(i + 1); /* 0 for -1; never overflows, even at LONG_MIN */
        if ((size_t)back >= count) return 0;
        *out = count - (size_t)back - 1;
        return 1;
    }
    if ((size_t)i >= count) return 0;
    *out = (size_t)i;
    return 1;
}

int quicklist_index(const quicklist *ql, long i, ql_pos *pos) {
    size_t idx, local;
    if (!norm_index(ql, i, &idx)) return pos_none(pos);
    size_t n = locate(ql, idx, &local);
    return pos_at(pos, ql, n, pack_index(node(ql, n), (long)local));
}

int quicklist_next(ql_pos *pos) {
    if (!pos->ql) return 0;
    size_t o = pack_next(node(pos->ql, pos->node), pos->off);
    if (o) {
        pos->off = o;
        return 1;
    }
    if (pos->node + 1 >= pos->ql->nodes) return pos_none(pos);
    pos->node++;
    pos->off = pack_first(node(pos->ql, pos->node));
    return 1;
}

int quicklist_prev(ql_pos *pos) {
    if (!pos->ql) return 0;
    size_t o = pack_prev(node(pos->ql, pos->node), pos->off);
    if (o) {
        pos->off = o;
        return 1;
    }
    if (pos->node == 0) return pos_none(pos);
    pos->node--;
    pos->off = pack_last(node(pos->ql, pos->node));
    return 1;
}

void quicklist_get(const ql_pos *pos, pack_val *out) { pack_get(node(pos->ql, pos->node), pos->off, out); }

int quicklist_eq(const ql_pos *pos, const char *s, size_t len) {
    return pack_eq(node(pos->ql, pos->node), pos->off, s, len);
}

/* ---- changes in the middle ---- */

/* Joins node i+1 into node i when both exist and the result obeys the fill
 * rule. */
static void merge_if_fits(quicklist *ql, size_t i) {
    if (i + 1 >= ql->nodes) return;
    pack *a = node(ql, i), *b = node(ql, i + 1);
    if (!fits(ql, pack_size_merge(a, b), pack_count(a) + pack_count(b))) return;
    if (!quicklist_may_join(a, 0) || !quicklist_may_join(b, 0)) return; /* a large element stays alone */
    pack **s = slots(ql);
    s[i] = pack_merge(a, b); /* the elements stay counted */
    s[i + 1] = NULL;
    node_remove(ql, i + 1);
}

/* Puts an element at byte offset `at` of node i (at may be the end). */
static void place(quicklist *ql, size_t i, size_t at, const char *s, size_t len) {
    pack *n = node(ql, i);
    int at_first = at == pack_first(n), at_end = at == pack_bytes(n);
    if (allow(ql, i, s, len)) {
        slots(ql)[i] = pack_insert(n, at, s, len);
        count_add(ql, 1);
    } else if (at_end && allow(ql, i + 1, s, len)) {
        slots(ql)[i + 1] = pack_prepend(node(ql, i + 1), s, len);
        count_add(ql, 1);
    } else if (at_first && i > 0 && allow(ql, i - 1, s, len)) {
        slots(ql)[i - 1] = pack_append(node(ql, i - 1), s, len);
        count_add(ql, 1);
    } else if (at_end || at_first) {
        node_with(ql, at_end ? i + 1 : i, s, len);
    } else {
        /* split node i at `at`; the right part becomes node i+1 */
        pack *right = pack_split(&slots(ql)[i], at);
        int own = 0;
        count_add(ql, -(long)pack_count(right));
        node_insert(ql, i + 1, right);
        if (allow(ql, i, s, len)) {
            slots(ql)[i] = pack_append(node(ql, i), s, len);
            count_add(ql, 1);
        } else if (allow(ql, i + 1, s, len)) {
            slots(ql)[i + 1] = pack_prepend(node(ql, i + 1), s, len);
            count_add(ql, 1);
        } else {
            node_with(ql, i + 1, s, len);
            own = 1;
        }
        merge_if_fits(ql, own ? i + 2 : i + 1); /* the right part with its successor */
        if (i > 0) merge_if_fits(ql, i - 1);
    }
}

void quicklist_insert(quicklist *ql, const ql_pos *pos, int after, const char *s, size_t len) {
    size_t i = pos->node, at = pos->off;
    if (after) {
        at = pack_next(node(ql, i), pos->off);
        if (!at) at = pack_bytes(node(ql, i));
    }
    place(ql, i, at, s, len);
}

void quicklist_replace(quicklist *ql, const ql_pos *pos, const char *s, size_t len) {
    size_t i = pos->node;
    pack *n = node(ql, i);
    if (pack_count(n) == 1 ||
        (quicklist_may_join(n, len) && fits(ql, pack_size_replace(n, pos->off, s, len), pack_count(n)))) {
        slots(ql)[i] = pack_replace(n, pos->off, s, len);
        return;
    }
    slots(ql)[i] = pack_delete(n, pos->off, 1); /* the node keeps at least one element */
    count_add(ql, -1);
    place(ql, i, pos->off, s, len);
}

int quicklist_delete_at(quicklist *ql, ql_pos *pos, int forward) {
    size_t i = pos->node;
    pack *n = slots(ql)[i] = pack_delete(node(ql, i), pos->off, 1);
    count_add(ql, -1);
    if (pack_count(n) == 0) {
        node_remove(ql, i);
        if (forward) {
            if (i >= ql->nodes) return pos_none(pos);
            return pos_at(pos, ql, i, pack_first(node(ql, i)));
        }
        if (i == 0) return pos_none(pos);
        return pos_at(pos, ql, i - 1, pack_last(node(ql, i - 1)));
    }
    if (forward) {
        if (pos->off < pack_bytes(n)) return 1;
        if (i + 1 >= ql->nodes) return pos_none(pos);
        return pos_at(pos, ql, i + 1, pack_first(node(ql, i + 1)));
    }
    size_t o = pack_prev(n, pos->off);
    if (o) {
        pos->off = o;
        return 1;
    }
    if (i == 0) return pos_none(pos);
    return pos_at(pos, ql, i - 1, pack_last(node(ql, i - 1)));
}

size_t quicklist_delete_range(quicklist *ql, long start, size_t n) {
    size_t idx, local;
    if (n == 0 || !norm_index(ql, start, &idx)) return 0;
    if (n > quicklist_count(ql) - idx) n = quicklist_count(ql) - idx;
    size_t left = n, i = locate(ql, idx, &local);
    while (left > 0) {
        pack *p = node(ql, i);
        size_t have = pack_count(p) - local;
        size_t k = left < have ? left : have;
        count_add(ql, -(long)k);
        if (local == 0 && k == pack_count(p)) {
            node_remove(ql, i); /* the next node moves into slot i */
        } else {
            slots(ql)[i] = pack_delete_range(p, (long)local, k);
            i++;
        }
        left -= k;
        local = 0;
    }
    return n;
}

void quicklist_foreach_node(const quicklist *ql, void (*fn)(void *ud, const pack *p), void *ud) {
    for (size_t i = 0; i < ql->nodes; i++)
        fn(ud, node(ql, i));
}

pack *quicklist_take_single(quicklist **qp) {
    quicklist *ql = *qp;
    if (ql->nodes > 1) return NULL;
    pack *p = ql->nodes ? ql->o : pack_create_fixed();
    zfree(ql);
    *qp = NULL;
    return p;
}

void quicklist_append_pack(quicklist *ql, pack *p) {
    if (pack_count(p) == 0) {
        pack_destroy(&p);
        return;
    }
    node_insert(ql, ql->nodes, p);
}
