/* hash.c - the hash commands: HSET HSETNX HMSET HGET HMGET HDEL HLEN HSTRLEN
 * HEXISTS HKEYS HVALS HGETALL HINCRBY HINCRBYFLOAT HRANDFIELD HSCAN.
 *
 * A hash is one pointer in its keyspace entry, and the pointer's low bit
 * is the encoding (both kinds of block are at least 8-byte aligned):
 *
 *   bit 0 clear   hpack *  "listpack": field/value pairs in insertion order
 *                          (core/hpack.h); lookups walk the fields
 *   bit 0 set     smap *   "hashtable": an SMAP_BYTES map field -> value
 *
 * so a small hash costs its hpack and no header. An hpack becomes an smap
 * (never back, as in Redis) when a write stores a field or value longer
 * than hash-max-listpack-value, would grow the pack past its safety limit,
 * or leaves more than hash-max-listpack-entries fields (an update counts
 * too, so lowering the limit converts on the next write).
 *
 * The hash_* layer works on the value alone and may move it; handlers find
 * the key, call it, and store the value back (store_value). A hash that
 * loses its last field deletes its key. */
#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "cmd/hash.h"
#include "core/hpack.h"
#include "core/smap.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/shard.h"
#include <assert.h>
#include <limits.h>
#include <math.h>

/* ---- the value: a tagged pointer ---- */

#define MAP_BIT ((uintptr_t)1)

static int is_map(const void *o) { return ((uintptr_t)o & MAP_BIT) != 0; }
static smap *as_map(const void *o) { return (smap *)((uintptr_t)o & ~MAP_BIT); }
static hpack *as_hp(const void *o) { return (hpack *)(uintptr_t)o; }
static void *of_map(smap *m) {
    assert(((uintptr_t)m & MAP_BIT) == 0);
    return (void *)((uintptr_t)m | MAP_BIT);
}

/* One field or value as read. Integers of a pack are spelled into buf, so
 * s may point into the struct itself: do not copy an hstr. */
typedef struct hstr {
    const char *s;
    size_t len;
    char buf[PACK_INTBUF];
} hstr;

static void val_str(const pack_val *pv, hstr *out) { out->s = pack_val_str(pv, out->buf, &out->len); }

/* The pair at pos of h (either output may be NULL). */
static void pair_str(const hpack *h, size_t pos, hstr *f, hstr *v) {
    pack_val fv, vv;
    hpack_get(h, pos, f ? &fv : NULL, v ? &vv : NULL);
    if (f) val_str(&fv, f);
    if (v) val_str(&vv, v);
}

static void elem_str(const smap *m, const smap_elem *e, hstr *f, hstr *v) {
    if (f) f->s = smap_elem_field(e, &f->len);
    if (v) v->s = smap_elem_value(m, e, &v->len);
}

/* ---- operations on a value ---- */

static size_t hash_len(const void *o) { return is_map(o) ? smap_size(as_map(o)) : hpack_count(as_hp(o)); }

/* 1 and the value of field f in *v, or 0 when there is no such field. */
static int hash_get(const void *o, const char *f, size_t fl, hstr *v) {
    if (is_map(o)) {
        v->s = smap_get(as_map(o), f, fl, &v->len);
        return v->s != NULL;
    }
    const hpack *h = as_hp(o);
    size_t pos = hpack_find(h, f, fl);
    if (!pos) return 0;
    pair_str(h, pos, NULL, v);
    return 1;
}

/* The hpack's pairs moved into a new map; frees h. */
static void *to_map(hpack *h) {
    smap *m = smap_create(SMAP_BYTES);
    for (size_t pos = hpack_first(h); pos; pos = hpack_next(h, pos)) {
        hstr f, v;
        pair_str(h, pos, &f, &v);
        smap_add(m, f.s, f.len, v.s, v.len);
    }
    hpack_destroy(&h);
    return of_map(m);
}

/* May this pair go into (or replace a pair of) hpack h? */
static int hp_takes(const hpack *h, const char *f, size_t fl, const char *v, size_t vl) {
    int64_t max = cfg_get(hash_max_listpack_value);
    return (int64_t)fl <= max && (int64_t)vl <= max &&
           hpack_bytes(h) + hpack_pair_size(f, fl, v, vl) <= PACK_SAFETY_LIMIT;
}

/* Sets field f to v, converting the encoding when needed (see the top).
 * Returns 1 when the field is new, 0 when its value was replaced. v must not
 * point into the hash. */
static int hash_set(void **o, const char *f, size_t fl, const char *v, size_t vl) {
    if (!is_map(*o) && !hp_takes(as_hp(*o), f, fl, v, vl)) *o = to_map(as_hp(*o));
    if (is_map(*o)) {
        int added;
        smap_set(as_map(*o), f, fl, v, vl, &added);
        return added;
    }
    hpack *h = as_hp(*o);
    size_t pos = hpack_find(h, f, fl);
    h = pos ? hpack_replace(h, pos, v, vl) : hpack_append(h, f, fl, v, vl);
    *o = h;
    if ((int64_t)hpack_count(h) > cfg_get(hash_max_listpack_entries)) *o = to_map(h);
    return pos == 0;
}

/* Deletes field f; returns 1 when it was there. */
static int hash_del(void **o, const char *f, size_t fl) {
    if (is_map(*o)) return smap_delete(as_map(*o), f, fl);
    hpack *h = as_hp(*o);
    size_t pos = hpack_find(h, f, fl);
    if (!pos) return 0;
    *o = hpack_delete(h, pos);
    return 1;
}

/* Walks every pair, in insertion order for a pack. The hash must not
 * change meanwhile. */
typedef struct hash_iter {
    const void *o;
    size_t pos;
    smap_iter mi;
} hash_iter;

static void hash_iter_start(hash_iter *it, const void *o) {
    it->o = o;
    if (is_map(o))
        smap_iter_start(&it->mi, as_map(o));
    else
        it->pos = hpack_first(as_hp(o));
}

/* 1 with the next pair in *f and *v (either may be NULL), 0 at the end. */
static int hash_iter_next(hash_iter *it, hstr *f, hstr *v) {
    if (is_map(it->o)) {
        smap_elem *e = smap_iter_next(&it->mi);
        if (e) elem_str(as_map(it->o), e, f, v);
        return e != NULL;
    }
    const hpack *h = as_hp(it->o);
    if (!it->pos) return 0;
    pair_str(h, it->pos, f, v);
    it->pos = hpack_next(h, it->pos);
    return 1;
}

static void hash_iter_stop(hash_iter *it) {
    if (is_map(it->o)) smap_iter_stop(&it->mi);
}

/* ---- type operations (db_register_type) ---- */

static void hash_free(void *o) {
    if (is_map(o)) {
        smap *m = as_map(o);
        smap_free(&m);
    } else {
        hpack *h = as_hp(o);
        hpack_destroy(&h);
    }
}

static size_t hash_usage(const void *o) { return is_map(o) ? smap_mem_usage(as_map(o)) : zmalloc_size(as_hp(o)); }

static void *hash_copy(const void *o) {
    if (!is_map(o)) return hpack_dup(as_hp(o));
    smap *m = smap_create(SMAP_BYTES);
    hash_iter it;
    hstr f, v;
    hash_iter_start(&it, o);
    while (hash_iter_next(&it, &f, &v))
        smap_add(m, f.s, f.len, v.s, v.len);
    hash_iter_stop(&it);
    return of_map(m);
}

static const char *hash_encoding(const void *o) { return is_map(o) ? "hashtable" : "listpack"; }

static const type_ops hash_ops = {
    .name = "hash", .free = hash_free, .usage = hash_usage, .copy = hash_copy, .encoding = hash_encoding};

/* ---- key lookup ---- */

/* The link of the live key argv[1], or NULL when it is missing; touches the
 * key's LRU clock, and reading lookups count a keyspace hit or miss (as
 * Redis's). The link is valid until the next call on the database. */
static entry **find(cmd_ctx *c, int reading, db **dp) { return ctx_lookup(c, 1, reading, dp); }

/* 1, after replying WRONGTYPE, when the key at l holds another type. */
static int not_hash(cmd_ctx *c, entry **l) { return ctx_wrong_type(c, l ? *l : NULL, T_HASH); }

/* The hash at l, or a new empty one when the key is missing. */
static void *value_or_new(entry **l) { return l ? entry_obj(*l) : hpack_create(); }

/* Stores the (possibly moved) value o of argv[1]: into the entry at l, or
 * under a new key; a hash left empty deletes the key. */
static void store_value(cmd_ctx *c, db *d, entry **l, void *o) {
    if (l) {
        entry_set_obj(*l, o);
        if (hash_len(o) == 0) db_delete_link(d, l);
    } else if (hash_len(o) > 0) {
        db_add(d, entry_new_obj(c->argv[1], c->argl[1], T_HASH, o, -1));
    } else {
        hash_free(o);
    }
}

/* ---- writing ---- */

/* HSET key field value [field value ...]; HMSET the same, replying OK */
static void hset_generic(cmd_ctx *c, int reply_ok_status) {
    if (c->argc % 2) {
        reply_arity(c);
        return;
    }
    db *d;
    entry **l = find(c, 0, &d);
    if (not_hash(c, l)) return;
    void *o = value_or_new(l);
    long long added = 0;
    for (int i = 2; i < c->argc; i += 2)
        added += hash_set(&o, c->argv[i], c->argl[i], c->argv[i + 1], c->argl[i + 1]);
    store_value(c, d, l, o);
    if (reply_ok_status)
        reply_ok(c);
    else
        reply_int(c, added);
    ctx_notify(c, NOTIFY_HASH, "hset", 1);
}
static void hset_cmd(cmd_ctx *c) { hset_generic(c, 0); }
static void hmset_cmd(cmd_ctx *c) { hset_generic(c, 1); }

/* HSETNX key field value (an existing field converts nothing, as Redis) */
static void hsetnx_cmd(cmd_ctx *c) {
    db *d;
    entry **l = find(c, 0, &d);
    if (not_hash(c, l)) return;
    hstr v;
    if (l && hash_get(entry_obj(*l), c->argv[2], c->argl[2], &v)) {
        reply_int(c, 0);
        return;
    }
    void *o = value_or_new(l);
    hash_set(&o, c->argv[2], c->argl[2], c->argv[3], c->argl[3]);
    store_value(c, d, l, o);
    reply_int(c, 1);
    ctx_notify(c, NOTIFY_HASH, "hset", 1);
}

/* HDEL key field [field ...] */
static void hdel_cmd(cmd_ctx *c) {
    db *d;
    entry **l = find(c, 0, &d);
    if (not_hash(c, l)) return;
    long long n = 0;
    if (l) {
        void *o = entry_obj(*l);
        for (int i = 2; i < c->argc && hash_len(o) > 0; i++)
            n += hash_del(&o, c->argv[i], c->argl[i]);
        int gone = hash_len(o) == 0;
        store_value(c, d, l, o);
        if (n) ctx_notify(c, NOTIFY_HASH, "hdel", 1);
        if (gone) ctx_notify(c, NOTIFY_GENERIC, "del", 1);
    }
    reply_int(c, n);
}

/* HINCRBY key field increment */
static void hincrby_cmd(cmd_ctx *c) {
    long long by, v = 0;
    if (!arg_ll(c, 3, &by)) return;
    db *d;
    entry **l = find(c, 0, &d);
    if (not_hash(c, l)) return;
    hstr cur;
    if (l && hash_get(entry_obj(*l), c->argv[2], c->argl[2], &cur) && !str2ll(cur.s, cur.len, &v)) {
        reply_error(c, "ERR hash value is not an integer");
        return;
    }
    if ((by > 0 && v > LLONG_MAX - by) || (by < 0 && v < LLONG_MIN - by)) {
        reply_status(c, ST_OVERFLOW);
        return;
    }
    v += by;
    char num[24];
    void *o = value_or_new(l);
    hash_set(&o, c->argv[2], c->argl[2], num, (size_t)ll2str(num, v));
    store_value(c, d, l, o);
    reply_int(c, v);
    ctx_notify(c, NOTIFY_HASH, "hincrby", 1);
}

/* HINCRBYFLOAT key field increment */
static void hincrbyfloat_cmd(cmd_ctx *c) {
    long double by, v = 0;
    if (!arg_ld(c, 3, &by)) return;
    if (isnan(by) || isinf(by)) {
        reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    db *d;
    entry **l = find(c, 0, &d);
    if (not_hash(c, l)) return;
    hstr cur;
    if (l && hash_get(entry_obj(*l), c->argv[2], c->argl[2], &cur) && !str2ld(cur.s, cur.len, &v)) {
        reply_error(c, "ERR hash value is not a float");
        return;
    }
    v += by;
    if (isnan(v) || isinf(v)) {
        reply_status(c, ST_NAN);
        return;
    }
    char num[5120];
    size_t n = (size_t)ld2str(num, sizeof num, v);
    void *o = value_or_new(l);
    hash_set(&o, c->argv[2], c->argl[2], num, n);
    store_value(c, d, l, o);
    reply_bulk(c, num, n);
    ctx_notify(c, NOTIFY_HASH, "hincrbyfloat", 1);
}

/* ---- reading ---- */

/* The hash of argv[1] for a reading command, or NULL when the key is
 * missing or (after replying WRONGTYPE; *wrong = 1) of another type. */
static void *read_value(cmd_ctx *c, int *wrong) {
    entry **l = find(c, 1, NULL);
    *wrong = not_hash(c, l);
    return l && !*wrong ? entry_obj(*l) : NULL;
}

/* HGET key field */
static void hget_cmd(cmd_ctx *c) {
    int wrong;
    void *o = read_value(c, &wrong);
    hstr v;
    if (wrong) return;
    if (o && hash_get(o, c->argv[2], c->argl[2], &v))
        reply_bulk(c, v.s, v.len);
    else
        reply_null(c);
}

/* HMGET key field [field ...] */
static void hmget_cmd(cmd_ctx *c) {
    int wrong;
    void *o = read_value(c, &wrong);
    if (wrong) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        hstr v;
        if (o && hash_get(o, c->argv[i], c->argl[i], &v))
            reply_bulk(c, v.s, v.len);
        else
            reply_null(c);
    }
}

/* HLEN key */
static void hlen_cmd(cmd_ctx *c) {
    int wrong;
    void *o = read_value(c, &wrong);
    if (!wrong) reply_int(c, o ? (long long)hash_len(o) : 0);
}

/* HSTRLEN key field */
static void hstrlen_cmd(cmd_ctx *c) {
    int wrong;
    void *o = read_value(c, &wrong);
    hstr v;
    if (!wrong) reply_int(c, o && hash_get(o, c->argv[2], c->argl[2], &v) ? (long long)v.len : 0);
}

/* HEXISTS key field */
static void hexists_cmd(cmd_ctx *c) {
    int wrong;
    void *o = read_value(c, &wrong);
    hstr v;
    if (!wrong) reply_int(c, o && hash_get(o, c->argv[2], c->argl[2], &v));
}

enum { WANT_FIELDS = 1, WANT_VALUES = 2 };

/* Replies every field and/or value of argv[1]; both make a map. */
static void hgetall_generic(cmd_ctx *c, int want) {
    int wrong;
    void *o = read_value(c, &wrong);
    if (wrong) return;
    long long n = o ? (long long)hash_len(o) : 0;
    if (want == (WANT_FIELDS | WANT_VALUES))
        reply_map(c, n);
    else
        reply_array(c, n);
    if (!o) return;
    hash_iter it;
    hstr f, v;
    hash_iter_start(&it, o);
    while (hash_iter_next(&it, &f, &v)) {
        if (want & WANT_FIELDS) reply_bulk(c, f.s, f.len);
        if (want & WANT_VALUES) reply_bulk(c, v.s, v.len);
    }
    hash_iter_stop(&it);
}

/* HGETALL key */
static void hgetall_cmd(cmd_ctx *c) { hgetall_generic(c, WANT_FIELDS | WANT_VALUES); }
/* HKEYS key */
static void hkeys_cmd(cmd_ctx *c) { hgetall_generic(c, WANT_FIELDS); }
/* HVALS key */
static void hvals_cmd(cmd_ctx *c) { hgetall_generic(c, WANT_VALUES); }

/* ---- HRANDFIELD ---- */

/* smap_random and smap_sample take a plain function: draw from the
 * executing shard. */
static _Thread_local shard *rnd_shard;
static uint64_t rnd_next(void) { return shard_rand(rnd_shard); }

/* One pair of a HRANDFIELD reply: RESP3 nests each pair in an array. */
static void reply_pair(cmd_ctx *c, const hstr *f, const hstr *v, int withvalues) {
    if (withvalues && c->resp >= 3) reply_array(c, 2);
    reply_bulk(c, f->s, f->len);
    if (withvalues) reply_bulk(c, v->s, v->len);
}

static void reply_pairs_header(cmd_ctx *c, long long n, int withvalues) {
    reply_array(c, withvalues && c->resp < 3 ? n * 2 : n);
}

/* The reply is built in memory: refuse a repeating count whose reply would
 * clearly exceed proto-max-bulk-len (Redis streams such a reply until it
 * runs out of memory). */
static int repeat_too_big(const void *o, unsigned long long n) {
    unsigned long long per = hash_usage(o) / hash_len(o) + 16;
    return n > (unsigned long long)cfg_get(proto_max_bulk_len) / per;
}

/* n random pairs, repeats allowed (a negative count). */
static void rand_repeat(cmd_ctx *c, const void *o, unsigned long long n, int withvalues) {
    hstr f, v;
    reply_pairs_header(c, (long long)n, withvalues);
    if (is_map(o)) {
        smap *m = as_map(o);
        while (n--) {
            elem_str(m, smap_random(m, rnd_next), &f, &v);
            reply_pair(c, &f, &v, withvalues);
        }
        return;
    }
    const hpack *h = as_hp(o);
    size_t len = hash_len(o), *at = zmalloc(len * sizeof *at), i = 0;
    for (size_t pos = hpack_first(h); pos; pos = hpack_next(h, pos))
        at[i++] = pos;
    while (n--) {
        pair_str(h, at[shard_rand(c->sh) % len], &f, &v);
        reply_pair(c, &f, &v, withvalues);
    }
    zfree(at);
}

/* n distinct random pairs, 0 < n < the hash's length. */
static void rand_distinct(cmd_ctx *c, const void *o, size_t n, int withvalues) {
    hstr f, v;
    reply_pairs_header(c, (long long)n, withvalues);
    if (is_map(o)) {
        smap *m = as_map(o);
        smap_elem **pick = zmalloc(n * sizeof *pick);
        size_t got = smap_sample(m, n, pick, rnd_next);
        for (size_t i = 0; i < got; i++) {
            elem_str(m, pick[i], &f, &v);
            reply_pair(c, &f, &v, withvalues);
        }
        zfree(pick);
        return;
    }
    /* Selection sampling: take each pair with probability need / left. */
    hash_iter it;
    size_t left = hash_len(o), need = n;
    hash_iter_start(&it, o);
    while (need && hash_iter_next(&it, &f, &v)) {
        if (shard_rand(c->sh) % left-- >= need) continue;
        reply_pair(c, &f, &v, withvalues);
        need--;
    }
    hash_iter_stop(&it);
}

static void rand_all(cmd_ctx *c, const void *o, int withvalues) {
    hash_iter it;
    hstr f, v;
    reply_pairs_header(c, (long long)hash_len(o), withvalues);
    hash_iter_start(&it, o);
    while (hash_iter_next(&it, &f, &v))
        reply_pair(c, &f, &v, withvalues);
    hash_iter_stop(&it);
}

/* HRANDFIELD key count [WITHVALUES] */
static void hrandfield_count(cmd_ctx *c) {
    long long n;
    if (!arg_ll(c, 2, &n)) return;
    if (n == LLONG_MIN) {
        reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
        return;
    }
    int withvalues = c->argc == 4;
    if (c->argc > 4 || (withvalues && !arg_is(c, 3, "withvalues"))) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (withvalues && (n < -LLONG_MAX / 2 || n > LLONG_MAX / 2)) {
        reply_error(c, "ERR value is out of range");
        return;
    }
    int wrong;
    void *o = read_value(c, &wrong);
    if (wrong) return;
    if (!o || n == 0) {
        reply_array(c, 0);
        return;
    }
    rnd_shard = c->sh;
    unsigned long long count = n < 0 ? (unsigned long long)-n : (unsigned long long)n;
    if (n < 0 && repeat_too_big(o, count))
        reply_error(c, "ERR value is out of range");
    else if (n < 0)
        rand_repeat(c, o, count, withvalues);
    else if (count < hash_len(o))
        rand_distinct(c, o, (size_t)count, withvalues);
    else
        rand_all(c, o, withvalues);
}

/* HRANDFIELD key [count [WITHVALUES]] */
static void hrandfield_cmd(cmd_ctx *c) {
    if (c->argc >= 3) {
        hrandfield_count(c);
        return;
    }
    int wrong;
    void *o = read_value(c, &wrong);
    if (wrong) return;
    if (!o) {
        reply_null(c);
        return;
    }
    hstr f;
    if (is_map(o)) {
        rnd_shard = c->sh;
        elem_str(as_map(o), smap_random(as_map(o), rnd_next), &f, NULL);
    } else {
        size_t i = (size_t)(shard_rand(c->sh) % hash_len(o));
        pair_str(as_hp(o), hpack_index(as_hp(o), i), &f, NULL);
    }
    reply_bulk(c, f.s, f.len);
}

/* ---- HSCAN ---- */


struct hscan_walk {
    buf items;       /* the reply's field and value bulks */
    long long n;     /* bulks in items */
    long long seen;  /* bulks visited, which Redis counts against COUNT */
    const char *pat; /* MATCH, or NULL */
    size_t plen;
    const smap *m;
};

static void hscan_add(struct hscan_walk *w, const hstr *f, const hstr *v) {
    w->seen += 2;
    if (w->pat && !glob_match(w->pat, w->plen, f->s, f->len, 0)) return;
    resp_bulk(&w->items, f->s, f->len);
    resp_bulk(&w->items, v->s, v->len);
    w->n += 2;
}

static void hscan_visit(void *ud, smap_elem *e) {
    struct hscan_walk *w = ud;
    hstr f, v;
    elem_str(w->m, e, &f, &v);
    hscan_add(w, &f, &v);
}

/* Parses MATCH and COUNT from argv[3] on; replies the error, returns 0. */
static int hscan_options(cmd_ctx *c, struct hscan_walk *w, long long *count) {
    return arg_scan_options(c, 3, &w->pat, &w->plen, count);
}

/* HSCAN key cursor [MATCH pattern] [COUNT count]
 * A listpack is returned whole with cursor 0, as Redis does; a missing key
 * answers an empty scan before the options are read, as Redis. */
static void hscan_cmd(cmd_ctx *c) {
    uint64_t cur;
    if (!arg_cursor(c, 2, &cur)) return;
    int wrong;
    void *o = read_value(c, &wrong);
    if (wrong) return;
    struct hscan_walk w = {.n = 0};
    long long count = 10;
    if (o && !hscan_options(c, &w, &count)) return;
    if (o && is_map(o)) {
        w.m = as_map(o);
        long long steps = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10; /* bounds empty buckets */
        do
            cur = smap_scan(as_map(o), cur, hscan_visit, &w);
        while (cur && w.seen < count && --steps > 0);
    } else if (o) {
        hash_iter it;
        hstr f, v;
        hash_iter_start(&it, o);
        while (hash_iter_next(&it, &f, &v))
            hscan_add(&w, &f, &v);
        hash_iter_stop(&it);
        cur = 0;
    } else {
        cur = 0;
    }
    char num[24];
    reply_array(c, 2);
    reply_bulk(c, num, (size_t)ull2str(num, cur));
    reply_array(c, w.n);
    if (w.items.len) buf_add(c->out, w.items.p, w.items.len);
    buf_free(&w.items);
}

/* ---- command table ---- */

#define RW (CMD_WRITE | CMD_DENYOOM)
#define RO (CMD_READONLY)
/* A row for a command whose only key is argv[1]. */
#define ROW(n, p, ar, fl, sn, ac, su, ...)                                                                             \
    {                                                                                                                  \
        .name = n, .proc = p, .arity = ar, .flags = fl, .first = 1, .last = 1, .step = 1, .group = "hash",             \
        .since = sn, .acl = ac, .summary = su, __VA_ARGS__                                                             \
    }
static const command rows[] = {
    ROW("hset", hset_cmd, -4, RW | CMD_FAST, "2.0.0", "write hash fast", "Set the string value of a hash field",
        .kflags = KS_RW | KS_UPDATE),
    ROW("hsetnx", hsetnx_cmd, 4, RW | CMD_FAST, "2.0.0", "write hash fast",
        "Set the value of a hash field, only if the field does not exist", .kflags = KS_RW | KS_INSERT),
    ROW("hmset", hmset_cmd, -4, RW | CMD_FAST, "2.0.0", "write hash fast",
        "Set multiple hash fields to multiple values", .kflags = KS_RW | KS_UPDATE),
    ROW("hget", hget_cmd, 3, RO | CMD_FAST, "2.0.0", "read hash fast", "Get the value of a hash field",
        .kflags = KS_RO | KS_ACCESS),
    ROW("hmget", hmget_cmd, -3, RO | CMD_FAST, "2.0.0", "read hash fast", "Get the values of all the given hash fields",
        .kflags = KS_RO | KS_ACCESS),
    ROW("hdel", hdel_cmd, -3, CMD_WRITE | CMD_FAST, "2.0.0", "write hash fast", "Delete one or more hash fields",
        .kflags = KS_RW | KS_DELETE),
    ROW("hlen", hlen_cmd, 2, RO | CMD_FAST, "2.0.0", "read hash fast", "Get the number of fields in a hash",
        .kflags = KS_RO),
    ROW("hstrlen", hstrlen_cmd, 3, RO | CMD_FAST, "3.2.0", "read hash fast",
        "Get the length of the value of a hash field", .kflags = KS_RO),
    ROW("hexists", hexists_cmd, 3, RO | CMD_FAST, "2.0.0", "read hash fast", "Determine if a hash field exists",
        .kflags = KS_RO),
    ROW("hkeys", hkeys_cmd, 2, RO, "2.0.0", "read hash slow", "Get all the fields in a hash",
        .kflags = KS_RO | KS_ACCESS),
    ROW("hvals", hvals_cmd, 2, RO, "2.0.0", "read hash slow", "Get all the values in a hash",
        .kflags = KS_RO | KS_ACCESS),
    ROW("hgetall", hgetall_cmd, 2, RO, "2.0.0", "read hash slow", "Get all the fields and values in a hash",
        .kflags = KS_RO | KS_ACCESS),
    ROW("hincrby", hincrby_cmd, 4, RW | CMD_FAST, "2.0.0", "write hash fast",
        "Increment the integer value of a hash field by the given number", .kflags = KS_RW | KS_ACCESS | KS_UPDATE),
    ROW("hincrbyfloat", hincrbyfloat_cmd, 4, RW | CMD_FAST, "2.6.0", "write hash fast",
        "Increment the float value of a hash field by the given amount", .kflags = KS_RW | KS_ACCESS | KS_UPDATE),
    ROW("hrandfield", hrandfield_cmd, -2, RO, "6.2.0", "read hash slow",
        "Get one or multiple random fields from a hash", .kflags = KS_RO | KS_ACCESS),
    ROW("hscan", hscan_cmd, -3, RO, "2.8.0", "read hash slow",
        "Incrementally iterate hash fields and associated values", .kflags = KS_RO | KS_ACCESS),
};

void hash_register(void) {
    db_register_type(T_HASH, &hash_ops);
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
}

/* ---- the value API of hash.h (RDB and DUMP) ---- */

size_t hash_value_len(const void *o) { return hash_len(o); }

const hpack *hash_value_hpack(const void *o) { return is_map(o) ? NULL : as_hp(o); }

void hash_value_foreach(const void *o, hash_pair_fn *fn, void *ud) {
    hash_iter it;
    hstr f, v;
    hash_iter_start(&it, o);
    while (hash_iter_next(&it, &f, &v)) fn(ud, f.s, f.len, v.s, v.len);
    hash_iter_stop(&it);
}

void *hash_value_new(size_t hint) {
    if ((long long)hint > cfg_get(hash_max_listpack_entries)) return of_map(smap_create(SMAP_BYTES));
    return hpack_create();
}

int hash_value_add(void **o, const char *f, size_t fl, const char *v, size_t vl) { return hash_set(o, f, fl, v, vl); }

void *hash_value_from_pack(pack *p) {
    void *o = hpack_create();
    for (size_t pos = pack_first(p); pos; pos = pack_next(p, pack_next(p, pos))) {
        pack_val f, v;
        hstr fs, vs;
        pack_get(p, pos, &f);
        pack_get(p, pack_next(p, pos), &v);
        val_str(&f, &fs);
        val_str(&v, &vs);
        o = hpack_append(o, fs.s, fs.len, vs.s, vs.len);
    }
    pack_destroy(&p);
    if ((long long)hpack_count(o) > cfg_get(hash_max_listpack_entries)) return to_map(o);
    return o;
}

void hash_value_free(void *o) { hash_free(o); }

const char *hash_value_get(const void *o, const char *f, size_t fl, size_t *vl, char *intbuf) {
    hstr v;
    if (!hash_get(o, f, fl, &v)) return NULL;
    *vl = v.len;
    if (v.s != v.buf) return v.s;
    memcpy(intbuf, v.buf, v.len);
    return intbuf;
}
