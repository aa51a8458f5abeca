/* set.c - the set commands: SADD SREM SCARD SISMEMBER SMISMEMBER SMEMBERS
 * SRANDMEMBER SPOP SMOVE, the algebra SINTER SINTERCARD SINTERSTORE SUNION
 * SUNIONSTORE SDIFF SDIFFSTORE, and SSCAN.
 *
 * A set value is ONE tagged pointer in the keyspace entry, with no wrapper
 * struct (memory matters: 10,000 small sets should cost less than Redis):
 *
 *   low bit 0: intset *   ("intset": every member a canonical int64 and at
 *                          most set-max-intset-entries of them)
 *   low bit 1: smap * | 1 ("hashtable", an SMAP_SET map of byte strings)
 *
 * A set starts as an intset when its first member is an integer, and becomes
 * a hashtable (one way only, as Redis) when a non-integer is added or a new
 * integer takes it past the limit. Members move through the handlers as
 * `selem`s, which carry either bytes or an integer and convert lazily, so an
 * intset member is never formatted unless a reply or a hash lookup needs it.
 * SADD of many integers to an intset sorts them once and builds the block
 * at its final size, instead of one insertion (and reallocation) each.
 * Results of the algebra are built with the same add/remove rules as Redis
 * (starting from an empty intset), so OBJECT ENCODING of a stored result is
 * Redis's. Random picks use the executing shard's generator. */
#include "cmd/cross.h"
#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "cmd/set.h"
#include "core/intset.h"
#include "core/smap.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/shard.h"
#include "shard/watch.h"
#include <limits.h>
#include <stdlib.h>

/* ---- the tagged set object ---- */

static int is_map(const void *o) { return ((uintptr_t)o & 1) != 0; }
static smap *as_map(const void *o) { return (smap *)((uintptr_t)o & ~(uintptr_t)1); }
static void *tag_map(smap *m) { return (void *)((uintptr_t)m | 1); }

static size_t set_size(const void *o) { return is_map(o) ? smap_size(as_map(o)) : intset_len(o); }

/* set-max-intset-entries, capped as Redis caps it (1G entries). */
static size_t intset_max(void) {
    long long v = cfg_get(set_max_intset_entries);
    return v > (1LL << 30) ? (size_t)1 << 30 : (size_t)v;
}

/* A set member: bytes, or an integer whose digits are made on demand. */
typedef struct selem {
    const char *p; /* NULL: an integer not formatted yet */
    size_t len;
    int64_t iv;
    int isint; /* 1 yes, 0 no, -1 not known yet */
    char tmp[24];
} selem;

static void selem_bytes(selem *e, const char *p, size_t len) {
    e->p = p;
    e->len = len;
    e->isint = -1;
}
static void selem_int(selem *e, int64_t v) {
    e->p = NULL;
    e->iv = v;
    e->isint = 1;
}
static void selem_arg(selem *e, cmd_ctx *c, int i) { selem_bytes(e, c->argv[i], c->argl[i]); }
/* 1 when the member is a canonical int64 (then e->iv holds it). */
static int selem_isint(selem *e) {
    if (e->isint < 0) {
        long long v;
        e->isint = e->len <= 20 && str2ll(e->p, e->len, &v);
        if (e->isint) e->iv = v;
    }
    return e->isint;
}
/* The member's bytes; valid while e (and what it points into) lives. */
static const char *selem_str(selem *e, size_t *len) {
    if (!e->p) {
        e->len = (size_t)ll2str(e->tmp, e->iv);
        e->p = e->tmp;
    }
    *len = e->len;
    return e->p;
}
static void reply_elem(cmd_ctx *c, selem *e) {
    size_t n;
    const char *p = selem_str(e, &n);
    reply_bulk(c, p, n);
}

/* An empty set of the encoding Redis picks for a first member e. */
static void *set_new_for(selem *e) { return selem_isint(e) ? (void *)intset_create() : tag_map(smap_create(SMAP_SET)); }

/* The intset's values as a hashtable; frees the intset. */
static void *set_to_map(intset *is) {
    smap *m = smap_create(SMAP_SET);
    char tmp[24];
    for (size_t i = 0; i < intset_len(is); i++) {
        int n = ll2str(tmp, intset_get(is, i));
        smap_add(m, tmp, (size_t)n, NULL, 0);
    }
    intset_destroy(&is);
    return tag_map(m);
}

static int set_has(void *o, selem *e) {
    if (!is_map(o)) return selem_isint(e) && intset_find(o, e->iv);
    size_t n;
    const char *p = selem_str(e, &n);
    return smap_exists(as_map(o), p, n);
}

/* Adds e; returns the (possibly new) object, *added = 1 when e was new. */
static void *set_add(void *o, selem *e, int *added) {
    if (!is_map(o)) {
        if (selem_isint(e)) {
            intset *is = intset_add(o, e->iv, added);
            return *added && intset_len(is) > intset_max() ? set_to_map(is) : is;
        }
        o = set_to_map(o);
    }
    size_t n;
    const char *p = selem_str(e, &n);
    *added = smap_add(as_map(o), p, n, NULL, 0);
    return o;
}

/* Removes e; returns the (possibly moved) object, *removed = 1 if it was
 * there. */
static void *set_remove(void *o, selem *e, int *removed) {
    if (!is_map(o)) {
        *removed = 0;
        return selem_isint(e) ? intset_remove(o, e->iv, removed) : o;
    }
    size_t n;
    const char *p = selem_str(e, &n);
    *removed = smap_delete(as_map(o), p, n);
    return o;
}

/* Iteration over either encoding. While it runs, the set may lose only the
 * member last returned (see smap_iter). */
typedef struct set_iter {
    void *o;
    size_t i;
    smap_iter mi;
} set_iter;

static void set_iter_start(set_iter *it, void *o) {
    it->o = o;
    it->i = 0;
    if (is_map(o)) smap_iter_start(&it->mi, as_map(o));
}
static int set_iter_next(set_iter *it, selem *e) {
    if (!is_map(it->o)) {
        if (it->i >= intset_len(it->o)) return 0;
        selem_int(e, intset_get(it->o, it->i++));
        return 1;
    }
    smap_elem *x = smap_iter_next(&it->mi);
    if (!x) return 0;
    size_t n;
    const char *f = smap_elem_field(x, &n);
    selem_bytes(e, f, n);
    return 1;
}
static void set_iter_stop(set_iter *it) {
    if (is_map(it->o)) smap_iter_stop(&it->mi);
}

/* ---- type operations (TYPE, DEL, MEMORY USAGE, COPY, OBJECT ENCODING) ---- */

static void set_free(void *o) {
    if (is_map(o)) {
        smap *m = as_map(o);
        smap_free(&m);
    } else {
        intset *is = o;
        intset_destroy(&is);
    }
}

static size_t set_usage(const void *o) { return is_map(o) ? smap_mem_usage(as_map(o)) : zmalloc_size(o); }

static void *set_copy(const void *o) {
    if (!is_map(o)) return intset_dup(o);
    /* Iterating pauses the source's resizing, so it needs a mutable map;
     * the members themselves are only read. */
    smap *src = as_map(o), *dst = smap_create(SMAP_SET);
    smap_iter it;
    smap_iter_start(&it, src);
    for (smap_elem *x; (x = smap_iter_next(&it));) {
        size_t n;
        const char *f = smap_elem_field(x, &n);
        smap_add(dst, f, n, NULL, 0);
    }
    smap_iter_stop(&it);
    return tag_map(dst);
}

static const char *set_encoding(const void *o) { return is_map(o) ? "hashtable" : "intset"; }

static const type_ops set_ops = {
    .name = "set", .free = set_free, .usage = set_usage, .copy = set_copy, .encoding = set_encoding};

/* ---- randomness ---- */

/* smap_random and smap_sample take a plain function: it draws from the
 * executing shard, set by rng(). */
static _Thread_local shard *rnd_shard;
static uint64_t rnd_next(void) { return shard_rand(rnd_shard); }
static uint64_t (*rng(cmd_ctx *c))(void) {
    rnd_shard = c->sh;
    return rnd_next;
}
static size_t rand_below(cmd_ctx *c, size_t n) { return (size_t)(shard_rand(c->sh) % n); }

/* One uniformly chosen member (the set is not empty). */
static void set_random(cmd_ctx *c, void *o, selem *e) {
    if (!is_map(o)) {
        selem_int(e, intset_get(o, rand_below(c, intset_len(o))));
        return;
    }
    size_t n;
    const char *f = smap_elem_field(smap_random(as_map(o), rng(c)), &n);
    selem_bytes(e, f, n);
}

/* Calls fn(ud, i, picked) for every i in [0, n) in order, picking exactly
 * k of them, every k-subset equally likely (selection sampling). */
static void select_indices(cmd_ctx *c, size_t n, size_t k, void (*fn)(void *ud, size_t i, int picked), void *ud) {
    for (size_t i = 0; i < n; i++) {
        int take = k > 0 && rand_below(c, n - i) < k;
        k -= (size_t)take;
        fn(ud, i, take);
    }
}

/* k distinct indices of [0, n), k < n/3, in random order, by rejection
 * against an open-addressing table of index+1. */
static void sample_indices(cmd_ctx *c, size_t n, size_t k, size_t *out) {
    size_t cap = 4;
    while (cap < 2 * k)
        cap <<= 1;
    size_t *tab = zcalloc(cap * sizeof *tab);
    for (size_t w = 0; w < k;) {
        size_t idx = rand_below(c, n), h = (idx * 0x9E3779B97F4A7C15ull) & (cap - 1);
        while (tab[h] && tab[h] != idx + 1)
            h = (h + 1) & (cap - 1);
        if (tab[h]) continue;
        tab[h] = idx + 1;
        out[w++] = idx;
    }
    zfree(tab);
}

/* ---- keyspace helpers ---- */

/* The live entry of key argv[i], or NULL; touches its LRU clock. Reading
 * lookups count a keyspace hit or miss, as Redis's lookupKeyRead. The
 * entry pointer stays valid until that key is deleted. */
static entry *lookup(cmd_ctx *c, int i, int reading, db **dp) {
    entry **l = ctx_lookup(c, i, reading, dp);
    return l ? *l : NULL;
}

/* 1, after replying WRONGTYPE, when e holds another type. */
static int wrong_type(cmd_ctx *c, const entry *e) { return ctx_wrong_type(c, e, T_SET); }

static void delete_key(cmd_ctx *c, db *d, int i) {
    if (db_delete(d, c->argv[i], c->argl[i], ctx_now(c))) ctx_notify(c, NOTIFY_GENERIC, "del", i);
}

/* After a removal: stores the (possibly moved) object back, and deletes
 * the key (freeing o with the entry) when it is empty. */
static void settle(cmd_ctx *c, db *d, int i, entry *e, void *o) {
    entry_set_obj(e, o);
    if (set_size(o) == 0) delete_key(c, d, i);
}

/* Stores set o (NULL or empty: delete) at argv[i] over any value, without
 * a TTL, as Redis's setKey; replies the stored size. */
static void store_result(cmd_ctx *c, int i, void *o) {
    db *d = ctx_db(c, c->argv[i], c->argl[i]);
    size_t n = o ? set_size(o) : 0;
    if (n == 0) {
        if (o) set_free(o);
        delete_key(c, d, i);
        reply_int(c, 0);
        return;
    }
    entry **l = db_find_link(d, c->argv[i], c->argl[i], ctx_now(c));
    entry *ne = entry_new_obj(c->argv[i], c->argl[i], T_SET, o, -1);
    if (l)
        db_replace(d, l, ne, 0);
    else
        db_add(d, ne);
    reply_int(c, (long long)n);
    ctx_notify(c, NOTIFY_SET, c->cmd->name, i); /* the event is the command's name: sinterstore, ... */
}

/* Replies every member of o, after the caller's aggregate header. */
static void reply_each(cmd_ctx *c, void *o) {
    set_iter it;
    selem e;
    set_iter_start(&it, o);
    while (set_iter_next(&it, &e))
        reply_elem(c, &e);
    set_iter_stop(&it);
}

/* Replies every member of o as a RESP3 set (RESP2 array). */
static void reply_members(cmd_ctx *c, void *o) {
    reply_set(c, (long long)set_size(o));
    reply_each(c, o);
}

/* ---- single-set commands ---- */

/* ---- bulk integer insertion ---- */

/* From this many members on, SADD to an intset sorts them in one go. */
#define SADD_BULK 16

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Adds the integers argv[from..argc) to intset is (NULL: a new set) with
 * one sort instead of one insertion each. Returns the new intset (is is
 * freed) and the count added, or NULL (is untouched) when an argument is
 * not an integer or the result would pass the intset limit: the caller
 * then adds one by one, converting as Redis does. */
static intset *intset_add_args(intset *is, cmd_ctx *c, int from, long long *added) {
    size_t old = is ? intset_len(is) : 0, k = (size_t)(c->argc - from), n = old;
    int64_t *v = zmalloc((old + k) * sizeof *v);
    for (size_t i = 0; i < old; i++)
        v[i] = intset_get(is, i);
    for (int i = from; i < c->argc; i++) {
        long long x;
        if (c->argl[i] > 20 || !str2ll(c->argv[i], c->argl[i], &x)) {
            zfree(v);
            return NULL;
        }
        v[n++] = x;
    }
    qsort(v, n, sizeof *v, cmp_i64);
    size_t w = n ? 1 : 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[w - 1]) v[w++] = v[i];
    intset *r = NULL;
    if (w <= intset_max()) {
        r = intset_from_sorted(v, w, is ? intset_width(is) : 1);
        *added = (long long)(w - old);
        intset_destroy(&is);
    }
    zfree(v);
    return r;
}

/* SADD key member [member ...] */
static void sadd_cmd(cmd_ctx *c) {
    db *d;
    entry *e = lookup(c, 1, 0, &d);
    if (wrong_type(c, e)) return;
    selem el;
    selem_arg(&el, c, 2);
    void *o = e ? entry_obj(e) : set_new_for(&el);
    long long n = 0;
    if (!is_map(o) && c->argc - 2 >= SADD_BULK) {
        intset *is = intset_add_args(o, c, 2, &n);
        if (is) {
            if (e)
                entry_set_obj(e, is);
            else
                db_add(d, entry_new_obj(c->argv[1], c->argl[1], T_SET, is, -1));
            reply_int(c, n);
            if (n) ctx_notify(c, NOTIFY_SET, "sadd", 1);
            return;
        }
    }
    for (int i = 2; i < c->argc; i++) {
        int added;
        selem_arg(&el, c, i);
        o = set_add(o, &el, &added);
        n += added;
    }
    if (e)
        entry_set_obj(e, o);
    else
        db_add(d, entry_new_obj(c->argv[1], c->argl[1], T_SET, o, -1));
    reply_int(c, n);
    if (n) ctx_notify(c, NOTIFY_SET, "sadd", 1);
}

/* SREM key member [member ...] */
static void srem_cmd(cmd_ctx *c) {
    db *d;
    entry *e = lookup(c, 1, 0, &d);
    if (wrong_type(c, e)) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    void *o = entry_obj(e);
    long long n = 0;
    for (int i = 2; i < c->argc && set_size(o) > 0; i++) {
        int removed;
        selem el;
        selem_arg(&el, c, i);
        o = set_remove(o, &el, &removed);
        n += removed;
    }
    if (n) ctx_notify(c, NOTIFY_SET, "srem", 1);
    settle(c, d, 1, e, o);
    reply_int(c, n);
}

/* SCARD key */
static void scard_cmd(cmd_ctx *c) {
    entry *e = lookup(c, 1, 1, NULL);
    if (wrong_type(c, e)) return;
    reply_int(c, e ? (long long)set_size(entry_obj(e)) : 0);
}

/* SISMEMBER key member */
static void sismember_cmd(cmd_ctx *c) {
    entry *e = lookup(c, 1, 1, NULL);
    if (wrong_type(c, e)) return;
    selem el;
    selem_arg(&el, c, 2);
    reply_int(c, e && set_has(entry_obj(e), &el));
}

/* SMISMEMBER key member [member ...] */
static void smismember_cmd(cmd_ctx *c) {
    entry *e = lookup(c, 1, 1, NULL);
    if (wrong_type(c, e)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        selem el;
        selem_arg(&el, c, i);
        reply_int(c, e && set_has(entry_obj(e), &el));
    }
}

/* SMEMBERS key */
static void smembers_cmd(cmd_ctx *c) {
    entry *e = lookup(c, 1, 1, NULL);
    if (wrong_type(c, e)) return;
    if (e)
        reply_members(c, entry_obj(e));
    else
        reply_set(c, 0);
}

/* ---- SRANDMEMBER ---- */

struct pick_reply {
    cmd_ctx *c;
    const intset *is;
};
static void reply_picked(void *ud, size_t i, int picked) {
    struct pick_reply *p = ud;
    if (picked) reply_bulk_ll(p->c, intset_get(p->is, i));
}

/* count distinct members, 0 < count < size, as an array. */
static void reply_distinct(cmd_ctx *c, void *o, size_t count) {
    size_t size = set_size(o);
    reply_array(c, (long long)count);
    if (is_map(o)) {
        smap_elem **out = zmalloc(count * sizeof *out);
        size_t got = smap_sample(as_map(o), count, out, rng(c));
        for (size_t i = 0; i < got; i++) {
            size_t n;
            const char *f = smap_elem_field(out[i], &n);
            reply_bulk(c, f, n);
        }
        zfree(out);
    } else if (count * 3 > size) {
        struct pick_reply p = {c, o};
        select_indices(c, size, count, reply_picked, &p);
    } else {
        size_t *idx = zmalloc(count * sizeof *idx);
        sample_indices(c, size, count, idx);
        for (size_t i = 0; i < count; i++)
            reply_bulk_ll(c, intset_get(o, idx[i]));
        zfree(idx);
    }
}

/* count members drawn with repetition. Redis streams any count; one reply
 * is bounded here by proto-max-bulk-len bytes, past which it is taken back
 * and answered with an error instead of growing without bound. */
static void reply_repeated(cmd_ctx *c, void *o, unsigned long long count) {
    unsigned long long max = (unsigned long long)cfg_get(proto_max_bulk_len);
    size_t start = c->out->len;
    if (count <= max / 7) { /* "$1\r\nx\r\n" is the shortest member reply */
        reply_array(c, (long long)count);
        while (count-- && c->out->len - start <= max) {
            selem e;
            set_random(c, o, &e);
            reply_elem(c, &e);
        }
        if (c->out->len - start <= max) return;
        c->out->len = start;
    }
    reply_error(c, "ERR value is out of range");
}

/* SRANDMEMBER key [count] */
static void srandmember_cmd(cmd_ctx *c) {
    if (c->argc > 3) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    long long count = 1;
    if (c->argc == 3) {
        if (!arg_ll(c, 2, &count)) return;
        if (count == LLONG_MIN) {
            reply_errorf(c, "ERR value is out of range, value must between %lld and %lld", -LLONG_MAX, LLONG_MAX);
            return;
        }
    }
    entry *e = lookup(c, 1, 1, NULL);
    if (wrong_type(c, e)) return;
    if (c->argc == 2) {
        selem el;
        if (!e) {
            reply_null(c);
            return;
        }
        set_random(c, entry_obj(e), &el);
        reply_elem(c, &el);
        return;
    }
    if (!e || count == 0) {
        reply_array(c, 0);
        return;
    }
    void *o = entry_obj(e);
    if (count < 0) {
        reply_repeated(c, o, (unsigned long long)-count);
    } else if ((unsigned long long)count >= set_size(o)) {
        reply_array(c, (long long)set_size(o));
        reply_each(c, o);
    } else {
        reply_distinct(c, o, (size_t)count);
    }
}

/* ---- SPOP ---- */

/* Pops count members (count*5 <= size) one random draw at a time. */
static void *pop_each(cmd_ctx *c, void *o, size_t count) {
    while (count--) {
        if (is_map(o)) {
            smap_elem *x = smap_random(as_map(o), rng(c));
            size_t n;
            const char *f = smap_elem_field(x, &n);
            reply_bulk(c, f, n);
            smap_remove(as_map(o), x);
        } else {
            int64_t v = intset_get(o, rand_below(c, intset_len(o)));
            reply_bulk_ll(c, v);
            o = intset_remove(o, v, NULL);
        }
    }
    return o;
}

struct keep_split {
    cmd_ctx *c;
    const intset *is;
    void *keep;
};
static void pop_or_keep(void *ud, size_t i, int picked) {
    struct keep_split *k = ud;
    selem e;
    selem_int(&e, intset_get(k->is, i));
    if (picked) {
        reply_elem(k->c, &e);
        return;
    }
    int added;
    if (!k->keep) k->keep = set_new_for(&e);
    k->keep = set_add(k->keep, &e, &added);
}

/* Pops count members when they are most of the set: the members that stay
 * are chosen and copied into a new set (which may take the intset encoding
 * again, as in Redis), the rest are replied; returns the new set. */
static void *pop_most(cmd_ctx *c, void *o, size_t count) {
    size_t keep = set_size(o) - count;
    if (!is_map(o)) {
        struct keep_split k = {c, o, NULL};
        select_indices(c, intset_len(o), count, pop_or_keep, &k);
        set_free(o);
        return k.keep;
    }
    smap *m = as_map(o);
    smap_elem **out = zmalloc(keep * sizeof *out);
    size_t got = smap_sample(m, keep, out, rng(c));
    void *kept = NULL;
    for (size_t i = 0; i < got; i++) {
        selem e;
        size_t n;
        const char *f = smap_elem_field(out[i], &n);
        selem_bytes(&e, f, n);
        int added;
        if (!kept) kept = set_new_for(&e);
        kept = set_add(kept, &e, &added);
        smap_remove(m, out[i]);
    }
    zfree(out);
    reply_each(c, o);
    set_free(o);
    return kept;
}

/* SPOP key [count] */
static void spop_cmd(cmd_ctx *c) {
    if (c->argc > 3) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    long long count = 1;
    if (c->argc == 3 && (!str2ll(c->argv[2], c->argl[2], &count) || count < 0)) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    db *d;
    entry *e = lookup(c, 1, 0, &d);
    if (wrong_type(c, e)) return;
    if (!e || (c->argc == 3 && count == 0)) {
        if (c->argc == 2)
            reply_null(c);
        else
            reply_set(c, 0);
        return;
    }
    void *o = entry_obj(e);
    size_t size = set_size(o);
    if (c->argc == 2) {
        o = pop_each(c, o, 1);
    } else if ((unsigned long long)count >= size) {
        reply_members(c, o);
        ctx_notify(c, NOTIFY_SET, "spop", 1);
        delete_key(c, d, 1);
        return;
    } else {
        reply_set(c, count);
        o = (size_t)count * 5 <= size ? pop_each(c, o, (size_t)count) : pop_most(c, o, (size_t)count);
    }
    ctx_notify(c, NOTIFY_SET, "spop", 1);
    settle(c, d, 1, e, o);
}

/* ---- SMOVE ---- */

/* SMOVE source destination member */
static void smove_cmd(cmd_ctx *c) {
    db *sd, *dd;
    entry *src = lookup(c, 1, 0, &sd), *dst = lookup(c, 2, 0, &dd);
    if (!src) {
        reply_int(c, 0);
        return;
    }
    if (wrong_type(c, src) || wrong_type(c, dst)) return;
    selem el;
    selem_arg(&el, c, 3);
    if (src == dst) {
        reply_int(c, set_has(entry_obj(src), &el));
        return;
    }
    int removed, added;
    void *o = set_remove(entry_obj(src), &el, &removed);
    if (!removed) {
        reply_int(c, 0);
        return;
    }
    ctx_notify(c, NOTIFY_SET, "srem", 1);
    settle(c, sd, 1, src, o); /* dst is another entry: still valid */
    if (dst) {
        entry_set_obj(dst, set_add(entry_obj(dst), &el, &added));
    } else {
        void *n = set_add(set_new_for(&el), &el, &added);
        db_add(dd, entry_new_obj(c->argv[2], c->argl[2], T_SET, n, -1));
    }
    reply_int(c, 1);
    if (added) ctx_notify(c, NOTIFY_SET, "sadd", 2);
    else if (c->watch_bumped) watch_unbump(c->dbid, c->argv[2], c->argl[2]); /* dst did not change (Redis) */
}

/* ---- the algebra: SINTER SINTERCARD SUNION SDIFF and their STOREs ---- */

/* Reads the sets at argv[first .. first+n) into sets[] (NULL: missing key).
 * Every key is type-checked, as Redis. Returns how many are missing, or -1
 * after replying WRONGTYPE. */
static int load_sets(cmd_ctx *c, int first, int n, void **sets) {
    int missing = 0;
    for (int j = 0; j < n; j++) {
        entry *e = lookup(c, first + j, 1, NULL);
        if (wrong_type(c, e)) return -1;
        sets[j] = e ? entry_obj(e) : NULL;
        missing += !e;
    }
    return missing;
}

static size_t size_or_0(void *const *p) { return *p ? set_size(*p) : 0; }
static int by_size(const void *a, const void *b) {
    size_t x = size_or_0(a), y = size_or_0(b);
    return x < y ? -1 : x > y;
}
static int by_size_desc(const void *a, const void *b) { return by_size(b, a); }

enum { OUT_REPLY, OUT_STORE, OUT_CARD };

/* Intersection of argv[first .. first+n): replied as a set (OUT_REPLY),
 * stored at argv[dst] (OUT_STORE), or counted up to limit (OUT_CARD, 0:
 * no limit). The smallest set is walked and each member looked up in the
 * others. */
static void inter_generic(cmd_ctx *c, int first, int n, int out, int dst, long long limit) {
    void **sets = zmalloc((size_t)n * sizeof *sets);
    int missing = load_sets(c, first, n, sets);
    if (missing != 0) {
        zfree(sets);
        if (missing < 0) return;
        if (out == OUT_STORE)
            store_result(c, dst, NULL);
        else if (out == OUT_CARD)
            reply_int(c, 0);
        else
            reply_set(c, 0);
        return;
    }
    qsort(sets, (size_t)n, sizeof *sets, by_size);
    void *res = out == OUT_STORE ? intset_create() : NULL;
    size_t at = reply_defer(c);
    long long cnt = 0;
    set_iter it;
    selem e;
    set_iter_start(&it, sets[0]);
    while (set_iter_next(&it, &e)) {
        int j = 1;
        while (j < n && (sets[j] == sets[0] || set_has(sets[j], &e)))
            j++;
        if (j < n) continue;
        cnt++;
        if (out == OUT_REPLY) {
            reply_elem(c, &e);
        } else if (out == OUT_STORE) {
            int added;
            res = set_add(res, &e, &added);
        } else if (limit && cnt >= limit) {
            break;
        }
    }
    set_iter_stop(&it);
    zfree(sets);
    if (out == OUT_REPLY)
        reply_defer_set(c, at, cnt);
    else if (out == OUT_STORE)
        store_result(c, dst, res);
    else
        reply_int(c, cnt);
}

/* Adds every member of o to res; returns res. */
static void *add_all(void *res, void *o) {
    set_iter it;
    selem e;
    int added;
    set_iter_start(&it, o);
    while (set_iter_next(&it, &e))
        res = set_add(res, &e, &added);
    set_iter_stop(&it);
    return res;
}

static void *union_of(void **sets, int n) {
    void *res = intset_create();
    for (int j = 0; j < n; j++)
        if (sets[j]) res = add_all(res, sets[j]);
    return res;
}

/* sets[0] minus the others, by Redis's choice of algorithm (which decides
 * the result's encoding): 1 walks sets[0] and looks each member up in the
 * rest, 2 copies sets[0] and removes the members of the rest. */
static void *diff_of(void **sets, int n) {
    void *res = intset_create();
    if (!sets[0]) return res;
    long long one = 0, two = 0;
    for (int j = 0; j < n; j++) {
        if (!sets[j]) continue;
        one += (long long)set_size(sets[0]);
        two += (long long)set_size(sets[j]);
    }
    set_iter it;
    selem e;
    int changed;
    if (one / 2 <= two) {
        if (n > 1) qsort(sets + 1, (size_t)n - 1, sizeof *sets, by_size_desc);
        set_iter_start(&it, sets[0]);
        while (set_iter_next(&it, &e)) {
            int j = 1;
            while (j < n && (!sets[j] || (sets[j] != sets[0] && !set_has(sets[j], &e))))
                j++;
            if (j == n) res = set_add(res, &e, &changed);
        }
        set_iter_stop(&it);
        return res;
    }
    res = add_all(res, sets[0]);
    for (int j = 1; j < n && set_size(res) > 0; j++) {
        if (!sets[j]) continue;
        set_iter_start(&it, sets[j]);
        while (set_iter_next(&it, &e))
            res = set_remove(res, &e, &changed);
        set_iter_stop(&it);
    }
    return res;
}

/* SUNION/SDIFF (dst 0: reply) and their STOREs over argv[first..argc). */
static void union_diff_generic(cmd_ctx *c, int first, int dst, int diff) {
    int n = c->argc - first;
    void **sets = zmalloc((size_t)n * sizeof *sets);
    if (load_sets(c, first, n, sets) < 0) {
        zfree(sets);
        return;
    }
    void *res = diff ? diff_of(sets, n) : union_of(sets, n);
    zfree(sets);
    if (dst) {
        store_result(c, dst, res);
        return;
    }
    reply_members(c, res);
    set_free(res);
}

/* SINTER key [key ...] */
static void sinter_cmd(cmd_ctx *c) { inter_generic(c, 1, c->argc - 1, OUT_REPLY, 0, 0); }

/* SINTERSTORE destination key [key ...] */
static void sinterstore_cmd(cmd_ctx *c) { inter_generic(c, 2, c->argc - 2, OUT_STORE, 1, 0); }

/* SUNION key [key ...] */
static void sunion_cmd(cmd_ctx *c) { union_diff_generic(c, 1, 0, 0); }

/* SUNIONSTORE destination key [key ...] */
static void sunionstore_cmd(cmd_ctx *c) { union_diff_generic(c, 2, 1, 0); }

/* SDIFF key [key ...] */
static void sdiff_cmd(cmd_ctx *c) { union_diff_generic(c, 1, 0, 1); }

/* SDIFFSTORE destination key [key ...] */
static void sdiffstore_cmd(cmd_ctx *c) { union_diff_generic(c, 2, 1, 1); }

/* SINTERCARD's numkeys when it is a usable count (1 .. argc-2), else 0. */
static long long sintercard_numkeys(int argc, const char **argv, const size_t *argl) {
    long long n;
    if (argc < 3 || !str2ll(argv[1], argl[1], &n) || n < 1 || n > argc - 2) return 0;
    return n;
}

/* Key positions of SINTERCARD: none when numkeys is bad (the handler then
 * replies the error on the connection's shard). */
static int sintercard_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    long long n = sintercard_numkeys(argc, argv, argl);
    int w = 0;
    for (long long i = 0; i < n && w < max; i++)
        pos[w++] = (int)(2 + i);
    return w;
}

/* SINTERCARD numkeys key [key ...] [LIMIT limit] */
static void sintercard_cmd(cmd_ctx *c) {
    long long n;
    if (!str2ll(c->argv[1], c->argl[1], &n) || n < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return;
    }
    if (n > c->argc - 2) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    long long limit = 0;
    for (int i = 2 + (int)n; i < c->argc; i += 2) {
        if (!arg_is(c, i, "limit") || i + 1 >= c->argc) {
            reply_status(c, ST_SYNTAX);
            return;
        }
        if (!str2ll(c->argv[i + 1], c->argl[i + 1], &limit) || limit < 0) {
            reply_error(c, "ERR LIMIT can't be negative");
            return;
        }
    }
    inter_generic(c, 2, (int)n, OUT_CARD, 0, limit);
}

/* ---- SSCAN ---- */


struct sscan_walk {
    buf out;         /* the members' bulks */
    long long n;     /* members in out */
    long long seen;  /* members visited (the COUNT budget) */
    const char *pat; /* MATCH, or NULL for every member */
    size_t plen;
};

static void sscan_take(struct sscan_walk *w, const char *p, size_t n) {
    w->seen++;
    if (w->pat && !glob_match(w->pat, w->plen, p, n, 0)) return;
    resp_bulk(&w->out, p, n);
    w->n++;
}

static void sscan_visit(void *ud, smap_elem *x) {
    size_t n;
    const char *f = smap_elem_field(x, &n);
    sscan_take(ud, f, n);
}

/* Parses SSCAN's options; replies the error and returns 0 on a bad one. */
static int sscan_options(cmd_ctx *c, struct sscan_walk *w, long long *count) {
    return arg_scan_options(c, 3, &w->pat, &w->plen, count);
}

/* SSCAN key cursor [MATCH pattern] [COUNT count]
 * An intset is returned whole with cursor 0, as Redis does. */
static void sscan_cmd(cmd_ctx *c) {
    uint64_t cur;
    if (!arg_cursor(c, 2, &cur)) return;
    entry *e = lookup(c, 1, 1, NULL);
    if (wrong_type(c, e)) return;
    struct sscan_walk w = {0};
    long long count = 10;
    if (e && !sscan_options(c, &w, &count)) return;
    void *o = e ? entry_obj(e) : NULL;
    if (o && is_map(o)) {
        long long steps = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
        do
            cur = smap_scan(as_map(o), cur, sscan_visit, &w);
        while (cur && steps-- && w.seen < count);
    } else {
        for (size_t i = 0; o && i < intset_len(o); i++) {
            char tmp[24];
            sscan_take(&w, tmp, (size_t)ll2str(tmp, intset_get(o, i)));
        }
        cur = 0;
    }
    char num[24];
    reply_array(c, 2);
    reply_bulk(c, num, (size_t)ull2str(num, cur));
    reply_array(c, w.n);
    if (w.out.len) buf_add(c->out, w.out.p, w.out.len);
    buf_free(&w.out);
}

/* ---- the command table ---- */

#define ONEKEY .first = 1, .last = 1, .step = 1
#define ALLKEYS .first = 1, .last = -1, .step = 1
static const command rows[] = {
    {.name = "sadd",
     .kflags = KS_RW | KS_INSERT,
     .proc = sadd_cmd,
     .arity = -3,
     .flags = CMD_WRITE | CMD_DENYOOM | CMD_FAST,
     ONEKEY,
     .group = "set",
     .since = "1.0.0",
     .acl = "write set fast",
     .summary = "Add one or more members to a set"},
    {.name = "srem",
     .kflags = KS_RW | KS_DELETE,
     .proc = srem_cmd,
     .arity = -3,
     .flags = CMD_WRITE | CMD_FAST,
     ONEKEY,
     .group = "set",
     .since = "1.0.0",
     .acl = "write set fast",
     .summary = "Remove one or more members from a set"},
    {.name = "scard",
     .kflags = KS_RO,
     .proc = scard_cmd,
     .arity = 2,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "set",
     .since = "1.0.0",
     .acl = "read set fast",
     .summary = "Get the number of members in a set"},
    {.name = "sismember",
     .kflags = KS_RO,
     .proc = sismember_cmd,
     .arity = 3,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "set",
     .since = "1.0.0",
     .acl = "read set fast",
     .summary = "Determine if a given value is a member of a set"},
    {.name = "smismember",
     .kflags = KS_RO | KS_ACCESS,
     .proc = smismember_cmd,
     .arity = -3,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "set",
     .since = "6.2.0",
     .acl = "read set fast",
     .summary = "Returns the membership associated with the given elements for a set"},
    {.name = "smembers",
     .kflags = KS_RO | KS_ACCESS,
     .proc = smembers_cmd,
     .arity = 2,
     .flags = CMD_READONLY,
     ONEKEY,
     .group = "set",
     .since = "1.0.0",
     .acl = "read set slow",
     .summary = "Get all the members in a set"},
    {.name = "srandmember",
     .kflags = KS_RO | KS_ACCESS,
     .proc = srandmember_cmd,
     .arity = -2,
     .flags = CMD_READONLY,
     ONEKEY,
     .group = "set",
     .since = "1.0.0",
     .acl = "read set slow",
     .summary = "Get one or multiple random members from a set"},
    {.name = "spop",
     .kflags = KS_RW | KS_ACCESS | KS_DELETE,
     .proc = spop_cmd,
     .arity = -2,
     .flags = CMD_WRITE | CMD_FAST,
     ONEKEY,
     .group = "set",
     .since = "1.0.0",
     .acl = "write set fast",
     .summary = "Remove and return one or multiple random members from a set"},
    {.name = "smove",
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RW | KS_INSERT, KS_INDEX(2), KS_RANGE(0, 1, 0)}),
     .hops = cross_gather,
     .proc = smove_cmd,
     .arity = 4,
     .flags = CMD_WRITE | CMD_FAST,
     .first = 1,
     .last = 2,
     .step = 1,
     .group = "set",
     .since = "1.0.0",
     .acl = "write set fast",
     .summary = "Move a member from one set to another"},
    {.name = "sinter",
     .kflags = KS_RO | KS_ACCESS,
     .hops = cross_gather,
     .proc = sinter_cmd,
     .arity = -2,
     .flags = CMD_READONLY,
     ALLKEYS,
     .group = "set",
     .since = "1.0.0",
     .acl = "read set slow",
     .summary = "Intersect multiple sets"},
    {.name = "sintercard",
     KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_KEYNUM(0, 1, 1)}),
     .hops = cross_gather,
     .proc = sintercard_cmd,
     .arity = -3,
     .flags = CMD_READONLY | CMD_MOVABLEKEYS,
     .keys = sintercard_keys,
     .group = "set",
     .since = "7.0.0",
     .acl = "read set slow",
     .summary = "Intersect multiple sets and return the cardinality of the result"},
    {.name = "sinterstore",
     KEY_SPECS({KS_RW | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RO | KS_ACCESS, KS_INDEX(2), KS_RANGE(-1, 1, 0)}),
     .hops = cross_gather,
     .proc = sinterstore_cmd,
     .arity = -3,
     .flags = CMD_WRITE | CMD_DENYOOM,
     ALLKEYS,
     .group = "set",
     .since = "1.0.0",
     .acl = "write set slow",
     .summary = "Intersect multiple sets and store the resulting set in a key"},
    {.name = "sunion",
     .kflags = KS_RO | KS_ACCESS,
     .hops = cross_gather,
     .proc = sunion_cmd,
     .arity = -2,
     .flags = CMD_READONLY,
     ALLKEYS,
     .group = "set",
     .since = "1.0.0",
     .acl = "read set slow",
     .summary = "Add multiple sets"},
    {.name = "sunionstore",
     KEY_SPECS({KS_OW | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RO | KS_ACCESS, KS_INDEX(2), KS_RANGE(-1, 1, 0)}),
     .hops = cross_gather,
     .proc = sunionstore_cmd,
     .arity = -3,
     .flags = CMD_WRITE | CMD_DENYOOM,
     ALLKEYS,
     .group = "set",
     .since = "1.0.0",
     .acl = "write set slow",
     .summary = "Add multiple sets and store the resulting set in a key"},
    {.name = "sdiff",
     .kflags = KS_RO | KS_ACCESS,
     .hops = cross_gather,
     .proc = sdiff_cmd,
     .arity = -2,
     .flags = CMD_READONLY,
     ALLKEYS,
     .group = "set",
     .since = "1.0.0",
     .acl = "read set slow",
     .summary = "Subtract multiple sets"},
    {.name = "sdiffstore",
     KEY_SPECS({KS_OW | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RO | KS_ACCESS, KS_INDEX(2), KS_RANGE(-1, 1, 0)}),
     .hops = cross_gather,
     .proc = sdiffstore_cmd,
     .arity = -3,
     .flags = CMD_WRITE | CMD_DENYOOM,
     ALLKEYS,
     .group = "set",
     .since = "1.0.0",
     .acl = "write set slow",
     .summary = "Subtract multiple sets and store the resulting set in a key"},
    {.name = "sscan",
     .kflags = KS_RO | KS_ACCESS,
     .proc = sscan_cmd,
     .arity = -3,
     .flags = CMD_READONLY,
     ONEKEY,
     .group = "set",
     .since = "2.8.0",
     .acl = "read set slow",
     .summary = "Incrementally iterate Set elements"},
};

void set_register(void) {
    db_register_type(T_SET, &set_ops);
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
}

/* ---- the value API of set.h (RDB and DUMP) ---- */

size_t set_value_len(const void *o) { return set_size(o); }

const intset *set_value_intset(const void *o) { return is_map(o) ? NULL : o; }

void set_value_foreach(const void *o, void (*fn)(void *ud, const char *m, size_t ml), void *ud) {
    set_iter it;
    selem e;
    set_iter_start(&it, (void *)o);
    while (set_iter_next(&it, &e)) {
        size_t n;
        const char *p = selem_str(&e, &n);
        fn(ud, p, n);
    }
    set_iter_stop(&it);
}

void *set_value_new(size_t hint) {
    if (hint > intset_max()) return tag_map(smap_create(SMAP_SET));
    return intset_create();
}

int set_value_add(void **o, const char *m, size_t ml) {
    selem e;
    int added;
    selem_bytes(&e, m, ml);
    *o = set_add(*o, &e, &added);
    return added;
}

void *set_value_from_intset(intset *is) { return intset_len(is) > intset_max() ? set_to_map(is) : is; }

void set_value_free(void *o) { set_free(o); }
