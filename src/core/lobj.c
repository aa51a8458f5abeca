/* lobj.c - a list value: one pack, or a quicklist (see lobj.h).
 *
 * The one-node form does on its pack what quicklist.c does on a node; the
 * other form forwards to quicklist.c. The switch happens in to_big (before
 * a change one node cannot take) and settle (after a deletion). */
#include "core/lobj.h"
#include "lib/mem.h"
#include <assert.h>
#include <stdint.h>

#define BIG_BIT ((uintptr_t)1)

static int is_big(const void *o) { return ((uintptr_t)o & BIG_BIT) != 0; }
static quicklist *big(const void *o) { return (quicklist *)((uintptr_t)o & ~BIG_BIT); }
static void *of_big(quicklist *ql) {
    assert(((uintptr_t)ql & BIG_BIT) == 0);
    return (void *)((uintptr_t)ql | BIG_BIT);
}

/* The quicklist of a value about to change, with the fill rule applied;
 * a one-node value first becomes a quicklist whose node 0 is its pack. */
static quicklist *to_big(void **o, int fill) {
    if (is_big(*o)) {
        quicklist_set_fill(big(*o), fill);
        return big(*o);
    }
    quicklist *ql = quicklist_create(fill);
    quicklist_append_pack(ql, *o);
    *o = of_big(ql);
    return ql;
}

/* After a deletion: a quicklist left with one node (or none) becomes its
 * pack, and pos (may be NULL) follows. */
static void settle(void **o, lobj_pos *pos) {
    if (!is_big(*o) || quicklist_nodes(big(*o)) > 1) return;
    quicklist *ql = big(*o);
    pack *p = quicklist_take_single(&ql);
    *o = p;
    if (pos && pos->q.ql) {
        assert(pos->q.node == 0);
        pos->p = p;
        pos->off = pos->q.off;
        pos->q.ql = NULL;
    }
}

static int pos_pack(lobj_pos *pos, const pack *p, size_t off) {
    pos->p = off ? p : NULL;
    pos->off = off;
    pos->q.ql = NULL;
    return off != 0;
}

static int pos_big(lobj_pos *pos, int r) {
    pos->p = NULL;
    pos->off = 0;
    return r;
}

/* ---- the value ---- */

void *lobj_new(void) { return pack_create_fixed(); }

void lobj_free(void *o) {
    if (is_big(o)) {
        quicklist *ql = big(o);
        quicklist_destroy(&ql);
    } else {
        pack *p = o;
        pack_destroy(&p);
    }
}

void *lobj_dup(const void *o) { return is_big(o) ? of_big(quicklist_dup(big(o))) : pack_dup(o); }

void *lobj_from_quicklist(quicklist *ql) {
    void *o = of_big(ql);
    settle(&o, NULL);
    return o;
}

size_t lobj_count(const void *o) { return is_big(o) ? quicklist_count(big(o)) : pack_count(o); }
size_t lobj_nodes(const void *o) { return is_big(o) ? quicklist_nodes(big(o)) : pack_count(o) > 0; }
size_t lobj_bytes(const void *o) { return is_big(o) ? quicklist_bytes(big(o)) : zmalloc_size(o); }

void lobj_foreach_node(const void *o, void (*fn)(void *ud, const pack *p), void *ud) {
    if (is_big(o))
        quicklist_foreach_node(big(o), fn, ud);
    else if (pack_count(o))
        fn(ud, o);
}

/* ---- ends ---- */

void lobj_push(void **o, int fill, int where, const char *s, size_t len) {
    if (!is_big(*o)) {
        pack *p = *o;
        size_t n = pack_count(p);
        if (n == 0 || (quicklist_may_join(p, len) && quicklist_fill_allows(fill, pack_size_insert(p, s, len), n + 1))) {
            *o = where == QL_HEAD ? pack_prepend(p, s, len) : pack_append(p, s, len);
            return;
        }
    }
    quicklist_push(to_big(o, fill), where, s, len);
}

int lobj_pop(void **o, int where) {
    lobj_pos pos;
    if (!(where == QL_HEAD ? lobj_first(*o, &pos) : lobj_last(*o, &pos))) return 0;
    lobj_delete_at(o, &pos, where == QL_HEAD);
    return 1;
}

/* ---- positions ---- */

int lobj_first(const void *o, lobj_pos *pos) {
    if (is_big(o)) return pos_big(pos, quicklist_first(big(o), &pos->q));
    return pos_pack(pos, o, pack_first(o));
}

int lobj_last(const void *o, lobj_pos *pos) {
    if (is_big(o)) return pos_big(pos, quicklist_last(big(o), &pos->q));
    return pos_pack(pos, o, pack_last(o));
}

int lobj_index(const void *o, long i, lobj_pos *pos) {
    if (is_big(o)) return pos_big(pos, quicklist_index(big(o), i, &pos->q));
    return pos_pack(pos, o, pack_index(o, i));
}

int lobj_next(lobj_pos *pos) {
    if (!pos->p) return quicklist_next(&pos->q);
    return pos_pack(pos, pos->p, pack_next(pos->p, pos->off));
}

int lobj_prev(lobj_pos *pos) {
    if (!pos->p) return quicklist_prev(&pos->q);
    return pos_pack(pos, pos->p, pack_prev(pos->p, pos->off));
}

void lobj_get(const lobj_pos *pos, pack_val *out) {
    if (pos->p)
        pack_get(pos->p, pos->off, out);
    else
        quicklist_get(&pos->q, out);
}

int lobj_eq(const lobj_pos *pos, const char *s, size_t len) {
    return pos->p ? pack_eq(pos->p, pos->off, s, len) : quicklist_eq(&pos->q, s, len);
}

/* ---- changes in the middle ---- */

/* pos as a quicklist position in ql, which a one-node value just became
 * (its pack is node 0, offsets unchanged). */
static ql_pos as_ql_pos(const lobj_pos *pos, quicklist *ql) {
    if (!pos->p) return pos->q;
    return (ql_pos){.ql = ql, .node = 0, .off = pos->off};
}

void lobj_insert(void **o, int fill, const lobj_pos *pos, int after, const char *s, size_t len) {
    if (!is_big(*o)) {
        pack *p = *o;
        if (quicklist_may_join(p, len) && quicklist_fill_allows(fill, pack_size_insert(p, s, len), pack_count(p) + 1)) {
            size_t at = pos->off;
            if (after) {
                at = pack_next(p, pos->off);
                if (!at) at = pack_bytes(p);
            }
            *o = pack_insert(p, at, s, len);
            return;
        }
    }
    quicklist *ql = to_big(o, fill);
    ql_pos q = as_ql_pos(pos, ql);
    quicklist_insert(ql, &q, after, s, len);
}

void lobj_replace(void **o, int fill, const lobj_pos *pos, const char *s, size_t len) {
    if (!is_big(*o)) {
        pack *p = *o;
        if (pack_count(p) == 1 || (quicklist_may_join(p, len) &&
                                   quicklist_fill_allows(fill, pack_size_replace(p, pos->off, s, len), pack_count(p)))) {
            *o = pack_replace(p, pos->off, s, len);
            return;
        }
    }
    quicklist *ql = to_big(o, fill);
    ql_pos q = as_ql_pos(pos, ql);
    quicklist_replace(ql, &q, s, len);
}

int lobj_delete_at(void **o, lobj_pos *pos, int forward) {
    if (is_big(*o)) {
        int more = quicklist_delete_at(big(*o), &pos->q, forward);
        settle(o, more ? pos : NULL);
        return more;
    }
    pack *p = *o = pack_delete(*o, pos->off, 1);
    if (forward) return pos_pack(pos, p, pos->off < pack_bytes(p) ? pos->off : 0);
    return pos_pack(pos, p, pack_prev(p, pos->off));
}

size_t lobj_delete_range(void **o, long start, size_t n) {
    if (is_big(*o)) {
        size_t k = quicklist_delete_range(big(*o), start, n);
        settle(o, NULL);
        return k;
    }
    size_t count = pack_count(*o);
    size_t pos = pack_index(*o, start);
    if (n == 0 || !pos) return 0;
    size_t idx = start < 0 ? count - (size_t)(-(start + 1)) - 1 : (size_t)start;
    if (n > count - idx) n = count - idx;
    *o = pack_delete(*o, pos, n);
    return n;
}
