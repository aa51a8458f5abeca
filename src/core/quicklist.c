/* quicklist.c - the list of packs (described in quicklist.h).
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

struct ql_node {
    ql_node *prev, *next;
    pack *p;
};

struct quicklist {
    ql_node *head, *tail;
    size_t count;
    uint32_t nodes;
    int32_t fill;
};

static int clamp_fill(int fill) {
    if (fill < -5) return -5;
    if (fill > FILL_MAX) return FILL_MAX;
    return fill;
}

/* 1 when a node of `bytes` bytes and `count` elements obeys the fill rule. */
static int fits(const quicklist *ql, size_t bytes, size_t count) {
    if (ql->fill < 0) return bytes <= ((size_t)4096 << (-ql->fill - 1));
    return bytes <= SAFETY_BYTES && count <= (size_t)ql->fill;
}

/* May node n take one more entry of `add` bytes? */
static int allow(const quicklist *ql, const ql_node *n, size_t add) {
    return n && fits(ql, pack_bytes(n->p) + add, pack_count(n->p) + 1);
}

static ql_node *node_new(pack *p) {
    ql_node *n = zmalloc(sizeof *n);
    n->prev = n->next = NULL;
    n->p = p;
    return n;
}

/* Links n after `at` (at NULL: as the new head). */
static void link_after(quicklist *ql, ql_node *at, ql_node *n) {
    n->prev = at;
    n->next = at ? at->next : ql->head;
    if (n->next)
        n->next->prev = n;
    else
        ql->tail = n;
    if (at)
        at->next = n;
    else
        ql->head = n;
    ql->nodes++;
}

/* Unlinks and frees n (its pack too); its elements must be uncounted. */
static void unlink_free(quicklist *ql, ql_node *n) {
    if (n->prev)
        n->prev->next = n->next;
    else
        ql->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        ql->tail = n->prev;
    ql->nodes--;
    pack_destroy(&n->p);
    zfree(n);
}

static ql_node *node_with(const char *s, size_t len) { return node_new(pack_append(pack_create(), s, len)); }

quicklist *quicklist_create(int fill) {
    quicklist *ql = zcalloc(sizeof *ql);
    ql->fill = clamp_fill(fill);
    return ql;
}

void quicklist_destroy(quicklist **qp) {
    if (!qp || !*qp) return;
    quicklist *ql = *qp;
    while (ql->head)
        unlink_free(ql, ql->head);
    zfree(ql);
    *qp = NULL;
}

quicklist *quicklist_dup(const quicklist *ql) {
    quicklist *d = quicklist_create(ql->fill);
    for (ql_node *n = ql->head; n; n = n->next)
        link_after(d, d->tail, node_new(pack_dup(n->p)));
    d->count = ql->count;
    return d;
}

void quicklist_set_fill(quicklist *ql, int fill) { ql->fill = clamp_fill(fill); }
size_t quicklist_count(const quicklist *ql) { return ql->count; }
size_t quicklist_nodes(const quicklist *ql) { return ql->nodes; }

size_t quicklist_bytes(const quicklist *ql) {
    size_t b = zmalloc_size(ql);
    for (ql_node *n = ql->head; n; n = n->next)
        b += zmalloc_size(n) + zmalloc_size(n->p);
    return b;
}

/* ---- ends ---- */

void quicklist_push(quicklist *ql, int where, const char *s, size_t len) {
    ql_node *n = where == QL_HEAD ? ql->head : ql->tail;
    if (allow(ql, n, pack_entry_size(s, len))) {
        n->p = where == QL_HEAD ? pack_prepend(n->p, s, len) : pack_append(n->p, s, len);
    } else {
        link_after(ql, where == QL_HEAD ? NULL : ql->tail, node_with(s, len));
    }
    ql->count++;
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
    pos->node = NULL;
    pos->off = 0;
    return 0;
}

int quicklist_first(const quicklist *ql, ql_pos *pos) {
    if (!ql->head) return pos_none(pos);
    pos->node = ql->head;
    pos->off = pack_first(ql->head->p);
    return 1;
}

int quicklist_last(const quicklist *ql, ql_pos *pos) {
    if (!ql->tail) return pos_none(pos);
    pos->node = ql->tail;
    pos->off = pack_last(ql->tail->p);
    return 1;
}

/* Node holding element i (0 <= i < count) and i's index inside it. */
static ql_node *locate(const quicklist *ql, size_t i, size_t *local) {
    ql_node *n;
    if (i < ql->count / 2) {
        for (n = ql->head; i >= pack_count(n->p); n = n->next)
            i -= pack_count(n->p);
        *local = i;
    } else {
        size_t back = ql->count - 1 - i; /* index counted from the tail */
        for (n = ql->tail; back >= pack_count(n->p); n = n->prev)
            back -= pack_count(n->p);
        *local = pack_count(n->p) - 1 - back;
    }
    return n;
}

/* Normalizes a Redis-style index; 0 when out of range. */
static int norm_index(const quicklist *ql, long i, size_t *out) {
    if (i < 0) {
        long back = -(i + 1); /* 0 for -1; never overflows, even at LONG_MIN */
        if ((size_t)back >= ql->count) return 0;
        *out = ql->count - (size_t)back - 1;
        return 1;
    }
    if ((size_t)i >= ql->count) return 0;
    *out = (size_t)i;
    return 1;
}

int quicklist_index(const quicklist *ql, long i, ql_pos *pos) {
    size_t idx, local;
    if (!norm_index(ql, i, &idx)) return pos_none(pos);
    pos->node = locate(ql, idx, &local);
    pos->off = pack_index(pos->node->p, (long)local);
    return 1;
}

/* pos moves to offset o of its node, or (o == 0) to the next node's first
 * element. */
static int advance(ql_pos *pos, size_t o) {
    if (o) {
        pos->off = o;
        return 1;
    }
    if (!pos->node->next) return pos_none(pos);
    pos->node = pos->node->next;
    pos->off = pack_first(pos->node->p);
    return 1;
}

int quicklist_next(ql_pos *pos) {
    if (!pos->node) return 0;
    return advance(pos, pack_next(pos->node->p, pos->off));
}

int quicklist_get_next(ql_pos *pos, pack_val *out) {
    return advance(pos, pack_get_next(pos->node->p, pos->off, out));
}

int quicklist_prev(ql_pos *pos) {
    if (!pos->node) return 0;
    size_t o = pack_prev(pos->node->p, pos->off);
    if (o) {
        pos->off = o;
        return 1;
    }
    if (!pos->node->prev) return pos_none(pos);
    pos->node = pos->node->prev;
    pos->off = pack_last(pos->node->p);
    return 1;
}

void quicklist_get(const ql_pos *pos, pack_val *out) { pack_get(pos->node->p, pos->off, out); }

int quicklist_eq(const ql_pos *pos, const char *s, size_t len) { return pack_eq(pos->node->p, pos->off, s, len); }

/* ---- changes in the middle ---- */

/* Joins b into a when both exist and the result obeys the fill rule. */
static void merge_if_fits(quicklist *ql, ql_node *a, ql_node *b) {
    if (!a || !b) return;
    size_t bytes = pack_bytes(a->p) + pack_bytes(b->p) - 8; /* one header goes */
    if (!fits(ql, bytes, pack_count(a->p) + pack_count(b->p))) return;
    a->p = pack_merge(a->p, b->p);
    b->p = NULL;
    unlink_free(ql, b);
}

/* Puts an element at byte offset `at` of node n (at may be the end). */
static void place(quicklist *ql, ql_node *n, size_t at, const char *s, size_t len) {
    size_t add = pack_entry_size(s, len), end = pack_bytes(n->p);
    int at_first = at == pack_first(n->p), at_end = at == end;
    ql->count++;
    if (allow(ql, n, add)) {
        n->p = pack_insert(n->p, at, s, len);
    } else if (at_end && allow(ql, n->next, add)) {
        n->next->p = pack_prepend(n->next->p, s, len);
    } else if (at_first && allow(ql, n->prev, add)) {
        n->prev->p = pack_append(n->prev->p, s, len);
    } else if (at_end || at_first) {
        link_after(ql, at_end ? n : n->prev, node_with(s, len));
    } else {
        ql_node *r = node_new(pack_split(&n->p, at));
        link_after(ql, n, r);
        if (allow(ql, n, add))
            n->p = pack_append(n->p, s, len);
        else if (allow(ql, r, add))
            r->p = pack_prepend(r->p, s, len);
        else
            link_after(ql, n, node_with(s, len));
        merge_if_fits(ql, r, r->next);
        merge_if_fits(ql, n->prev, n);
    }
}

void quicklist_insert(quicklist *ql, const ql_pos *pos, int after, const char *s, size_t len) {
    ql_node *n = pos->node;
    size_t at = pos->off;
    if (after) {
        at = pack_next(n->p, pos->off);
        if (!at) at = pack_bytes(n->p);
    }
    place(ql, n, at, s, len);
}

void quicklist_replace(quicklist *ql, const ql_pos *pos, const char *s, size_t len) {
    ql_node *n = pos->node;
    size_t next = pack_next(n->p, pos->off);
    size_t old = (next ? next : pack_bytes(n->p)) - pos->off;
    size_t bytes = pack_bytes(n->p) - old + pack_entry_size(s, len);
    if (pack_count(n->p) == 1 || fits(ql, bytes, pack_count(n->p))) {
        n->p = pack_replace(n->p, pos->off, s, len);
        return;
    }
    n->p = pack_delete(n->p, pos->off, 1); /* n keeps at least one element */
    ql->count--;
    place(ql, n, pos->off, s, len);
}

int quicklist_delete_at(quicklist *ql, ql_pos *pos, int forward) {
    ql_node *n = pos->node;
    n->p = pack_delete(n->p, pos->off, 1);
    ql->count--;
    if (pack_count(n->p) == 0) {
        ql_node *to = forward ? n->next : n->prev;
        unlink_free(ql, n);
        if (!to) return pos_none(pos);
        pos->node = to;
        pos->off = forward ? pack_first(to->p) : pack_last(to->p);
        return 1;
    }
    if (forward) {
        if (pos->off < pack_bytes(n->p)) return 1;
        if (!n->next) return pos_none(pos);
        pos->node = n->next;
        pos->off = pack_first(n->next->p);
        return 1;
    }
    size_t o = pack_prev(n->p, pos->off);
    if (o) {
        pos->off = o;
        return 1;
    }
    if (!n->prev) return pos_none(pos);
    pos->node = n->prev;
    pos->off = pack_last(n->prev->p);
    return 1;
}

size_t quicklist_delete_range(quicklist *ql, long start, size_t n) {
    size_t idx, local;
    if (n == 0 || !norm_index(ql, start, &idx)) return 0;
    if (n > ql->count - idx) n = ql->count - idx;
    size_t left = n;
    ql_node *nd = locate(ql, idx, &local);
    while (left > 0) {
        ql_node *next = nd->next;
        size_t have = pack_count(nd->p) - local;
        size_t k = left < have ? left : have;
        if (local == 0 && k == pack_count(nd->p))
            unlink_free(ql, nd);
        else
            nd->p = pack_delete_range(nd->p, (long)local, k);
        left -= k;
        local = 0;
        nd = next;
    }
    ql->count -= n;
    return n;
}

void quicklist_foreach_node(const quicklist *ql, void (*fn)(void *ud, const pack *p), void *ud) {
    for (ql_node *n = ql->head; n; n = n->next)
        fn(ud, n->p);
}

void quicklist_append_pack(quicklist *ql, pack *p) {
    if (pack_count(p) == 0) {
        pack_destroy(&p);
        return;
    }
    ql->count += pack_count(p);
    link_after(ql, ql->tail, node_new(p));
}
