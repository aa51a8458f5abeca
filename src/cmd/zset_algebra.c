/* zset_algebra.c - the sorted set algebra: ZUNION ZINTER ZDIFF ZINTERCARD,
 * ZUNIONSTORE ZINTERSTORE ZDIFFSTORE.
 *
 * Inputs may be sorted sets or plain sets (every member scoring 1), as in
 * Redis. The result is accumulated in a fresh zset_big: members and scores
 * go into its smap first, and only when every score is final are the
 * elements put into its B+tree, so aggregation can change scores in place.
 * A stored result then takes the listpack encoding when it fits (zobj_fit),
 * as Redis's zsetConvertToListpackIfNeeded. Union and intersection visit
 * the inputs smallest first, as Redis does (which fixes the order of the
 * floating-point sums).
 *
 * Plain sets are read through set.c's value layout, documented at the top
 * of that file: a tagged pointer, low bit 0 an intset, low bit 1 an
 * SMAP_SET smap. */
#include "cmd/cross.h"
#include "cmd/zset.h"
#include "core/intset.h"
#include "lib/mem.h"
#include <math.h>
#include <stdlib.h>

enum { OP_UNION, OP_INTER, OP_DIFF };
enum { AGG_SUM, AGG_MIN, AGG_MAX };

/* ---- inputs: sorted sets, plain sets, or missing keys ---- */

typedef struct zsrc {
    void *o; /* NULL: missing key */
    int type;
    double weight;
} zsrc;

static int set_is_map(const void *o) { return ((uintptr_t)o & 1) != 0; }
static smap *set_map(const void *o) { return (smap *)((uintptr_t)o & ~(uintptr_t)1); }

static size_t src_size(const zsrc *s) {
    if (!s->o) return 0;
    if (s->type == T_ZSET) return zobj_size(s->o);
    return set_is_map(s->o) ? smap_size(set_map(s->o)) : intset_len(s->o);
}

/* 1 and *score (plain sets: 1) when m is in s. */
static int src_find(const zsrc *s, const char *m, size_t ml, double *score) {
    if (!s->o) return 0;
    if (s->type == T_ZSET) return zobj_score(s->o, m, ml, score);
    *score = 1.0;
    if (set_is_map(s->o)) return smap_exists(set_map(s->o), m, ml);
    long long v;
    return ml <= 20 && str2ll(m, ml, &v) && intset_find(s->o, v);
}

/* Calls fn for each element of s until it returns 0. */
typedef int (*src_fn)(void *ud, const char *m, size_t ml, double score);
static void src_each(const zsrc *s, src_fn fn, void *ud) {
    if (!s->o) return;
    if (s->type == T_ZSET) {
        zcur cu;
        for (int ok = zcur_seek(&cu, s->o, 0); ok; ok = zcur_next(&cu)) {
            zitem it;
            zcur_get(&cu, &it);
            if (!fn(ud, it.m, it.ml, it.score)) return;
        }
    } else if (set_is_map(s->o)) {
        smap_iter it;
        smap_iter_start(&it, set_map(s->o));
        for (smap_elem *e; (e = smap_iter_next(&it));) {
            size_t ml;
            const char *m = smap_elem_field(e, &ml);
            if (!fn(ud, m, ml, 1.0)) break;
        }
        smap_iter_stop(&it);
    } else {
        for (size_t i = 0; i < intset_len(s->o); i++) {
            char tmp[24];
            if (!fn(ud, tmp, (size_t)ll2str(tmp, intset_get(s->o, i)), 1.0)) return;
        }
    }
}

static int by_size(const void *a, const void *b) {
    size_t x = src_size(a), y = src_size(b);
    return x < y ? -1 : x > y;
}

/* ---- the request ---- */

typedef struct zop {
    int op, agg, withscores, card;
    long long limit; /* ZINTERCARD; 0: none */
    int n;
    zsrc *src;
} zop;

/* numkeys at argv[at] when usable (>= 1 and that many keys follow), else
 * 0. */
static long long numkeys_of(int argc, const char **argv, const size_t *argl, int at) {
    long long n;
    if (argc <= at || !str2ll(argv[at], argl[at], &n) || n < 1 || n > argc - at - 1) return 0;
    return n;
}

static int keys_from(int argc, const char **argv, const size_t *argl, int *pos, int max, int at, int dst) {
    long long n = numkeys_of(argc, argv, argl, at);
    int w = 0;
    if (n && dst && w < max) pos[w++] = 1;
    for (long long i = 0; i < n && w < max; i++)
        pos[w++] = (int)(at + 1 + i);
    return w;
}

/* Key positions: none when numkeys is bad (the handler replies then). */
static int plain_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    return keys_from(argc, argv, argl, pos, max, 1, 0);
}
static int store_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    return keys_from(argc, argv, argl, pos, max, 2, 1);
}

/* Reads numkeys at argv[at] and the inputs after it, type-checking every
 * one. Replies the error and returns 0 on failure. */
static int load_inputs(cmd_ctx *c, int at, zop *q) {
    long long n;
    if (!arg_ll(c, at, &n)) return 0;
    if (n < 1) {
        reply_errorf(c, "ERR at least 1 input key is needed for '%s' command", c->cmd->name);
        return 0;
    }
    if (n > c->argc - at - 1) {
        reply_status(c, ST_SYNTAX);
        return 0;
    }
    q->n = (int)n;
    q->src = zcalloc((size_t)n * sizeof *q->src);
    for (int i = 0; i < q->n; i++) {
        entry *e = zs_lookup(c, at + 1 + i, 1, NULL);
        if (e && entry_type(e) != T_ZSET && entry_type(e) != T_SET) {
            reply_status(c, ST_WRONGTYPE);
            return 0;
        }
        q->src[i] = (zsrc){e ? entry_obj(e) : NULL, e ? entry_type(e) : -1, 1.0};
    }
    return 1;
}

/* WEIGHTS w... at argv[j]; returns the index after them, or -1. */
static int parse_weights(cmd_ctx *c, int j, zop *q) {
    for (int i = 0; i < q->n; i++) {
        if (!zs_parse_double(c->argv[j + 1 + i], c->argl[j + 1 + i], &q->src[i].weight)) {
            reply_error(c, "ERR weight value is not a float");
            return -1;
        }
    }
    return j + 1 + q->n;
}

static int parse_aggregate(cmd_ctx *c, int j, zop *q) {
    static const char *const names[] = {"sum", "min", "max"};
    for (int k = 0; k < 3; k++)
        if (arg_is(c, j + 1, names[k])) {
            q->agg = k;
            return j + 2;
        }
    reply_status(c, ST_SYNTAX);
    return -1;
}

/* The options after the keys, as each command allows them. */
static int parse_options(cmd_ctx *c, int j, int store, zop *q) {
    while (j < c->argc) {
        int left = c->argc - j;
        int full = q->op != OP_DIFF && !q->card;
        if (full && left >= q->n + 1 && arg_is(c, j, "weights")) {
            j = parse_weights(c, j, q);
        } else if (full && left >= 2 && arg_is(c, j, "aggregate")) {
            j = parse_aggregate(c, j, q);
        } else if (!store && !q->card && arg_is(c, j, "withscores")) {
            q->withscores = 1;
            j++;
        } else if (q->card && left >= 2 && arg_is(c, j, "limit")) {
            if (!str2ll(c->argv[j + 1], c->argl[j + 1], &q->limit) || q->limit < 0) {
                reply_error(c, "ERR LIMIT can't be negative");
                return 0;
            }
            j += 2;
        } else {
            reply_status(c, ST_SYNTAX);
            return 0;
        }
        if (j < 0) return 0;
    }
    return 1;
}

/* ---- computing ---- */

typedef struct zacc {
    zop *q;
    zset_big *acc;
    double weight;           /* of the input being walked */
    unsigned long long card; /* ZINTERCARD */
} zacc;

static void aggregate(double *target, double v, int agg) {
    if (agg == AGG_SUM) {
        *target += v;
        if (isnan(*target)) *target = 0.0; /* inf + -inf */
    } else if (agg == AGG_MIN) {
        if (v < *target) *target = v;
    } else if (v > *target) {
        *target = v;
    }
}

static void acc_put(zset_big *acc, const char *m, size_t ml, double score) {
    uint64_t bits;
    memcpy(&bits, &score, 8);
    smap_set(acc->dict, m, ml, (const char *)&bits, 8, NULL);
}

static int union_visit(void *ud, const char *m, size_t ml, double score) {
    zacc *a = ud;
    double v = a->weight * score;
    if (isnan(v)) v = 0; /* inf * 0 */
    smap_elem *e = smap_find(a->acc->dict, m, ml);
    if (!e) {
        acc_put(a->acc, m, ml, v);
        return 1;
    }
    double t = zelem_score(e);
    aggregate(&t, v, a->q->agg);
    zelem_set_score(e, t); /* not in the index yet */
    return 1;
}

static int inter_visit(void *ud, const char *m, size_t ml, double score) {
    zacc *a = ud;
    zop *q = a->q;
    double t = q->src[0].weight * score, v;
    if (isnan(t)) t = 0;
    for (int j = 1; j < q->n; j++) {
        if (!src_find(&q->src[j], m, ml, &v)) return 1;
        aggregate(&t, v * q->src[j].weight, q->agg);
    }
    if (q->card) return !(++a->card >= (unsigned long long)q->limit && q->limit);
    acc_put(a->acc, m, ml, t);
    return 1;
}

static int diff_visit(void *ud, const char *m, size_t ml, double score) {
    zacc *a = ud;
    double v;
    for (int j = 1; j < a->q->n; j++)
        if (src_find(&a->q->src[j], m, ml, &v)) return 1;
    acc_put(a->acc, m, ml, score);
    return 1;
}

/* Runs the operation; the accumulated elements are then indexed. */
static void compute(zacc *a) {
    zop *q = a->q;
    if (q->op != OP_DIFF) qsort(q->src, (size_t)q->n, sizeof *q->src, by_size);
    if (q->op == OP_UNION) {
        for (int i = 0; i < q->n; i++) {
            a->weight = q->src[i].weight;
            src_each(&q->src[i], union_visit, a);
        }
    } else if (src_size(&q->src[0]) > 0) {
        src_each(&q->src[0], q->op == OP_INTER ? inter_visit : diff_visit, a);
    }
    smap_iter it;
    smap_iter_start(&it, a->acc->dict);
    for (smap_elem *e; (e = smap_iter_next(&it));)
        zindex_insert(a->acc->idx, e);
    smap_iter_stop(&it);
}

static void reply_result(cmd_ctx *c, void *o, int withscores) {
    zs_reply_header(c, zobj_size(o), withscores);
    zcur cu;
    for (int ok = zcur_seek(&cu, o, 0); ok; ok = zcur_next(&cu)) {
        zitem it;
        zcur_get(&cu, &it);
        zs_reply_item(c, &it, withscores);
    }
}

/* numkeys at argv[at]; dst: the store key's index, or 0. */
static void algebra_generic(cmd_ctx *c, int at, int dst, int op, int card) {
    zop q = {.op = op, .card = card};
    if (!load_inputs(c, at, &q) || !parse_options(c, at + 1 + q.n, dst > 0, &q)) {
        zfree(q.src);
        return;
    }
    zacc a = {.q = &q, .acc = zsetb_create()};
    compute(&a);
    void *o = zobj_tag_big(a.acc);
    zfree(q.src);
    if (card) {
        reply_int(c, (long long)a.card);
        zobj_free(o);
    } else if (dst && zobj_size(o) == 0) {
        zobj_free(o);
        zs_store(c, dst, NULL);
    } else if (dst) {
        zs_store(c, dst, zobj_fit(o));
    } else {
        reply_result(c, o, q.withscores);
        zobj_free(o);
    }
}

/* ZUNION numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES] */
static void zunion_cmd(cmd_ctx *c) { algebra_generic(c, 1, 0, OP_UNION, 0); }

/* ZINTER numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES] */
static void zinter_cmd(cmd_ctx *c) { algebra_generic(c, 1, 0, OP_INTER, 0); }

/* ZDIFF numkeys key [key ...] [WITHSCORES] */
static void zdiff_cmd(cmd_ctx *c) { algebra_generic(c, 1, 0, OP_DIFF, 0); }

/* ZINTERCARD numkeys key [key ...] [LIMIT limit] */
static void zintercard_cmd(cmd_ctx *c) { algebra_generic(c, 1, 0, OP_INTER, 1); }

/* ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] */
static void zunionstore_cmd(cmd_ctx *c) { algebra_generic(c, 2, 1, OP_UNION, 0); }

/* ZINTERSTORE destination numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] */
static void zinterstore_cmd(cmd_ctx *c) { algebra_generic(c, 2, 1, OP_INTER, 0); }

/* ZDIFFSTORE destination numkeys key [key ...] */
static void zdiffstore_cmd(cmd_ctx *c) { algebra_generic(c, 2, 1, OP_DIFF, 0); }

/* ---- the command table ---- */

#define READ_ROW(nm, fn, sum, ...)                                                                                     \
    {                                                                                                                  \
        .name = nm, .proc = fn, .arity = -3, .flags = CMD_READONLY | CMD_MOVABLEKEYS, .keys = plain_keys,              \
        .hops = cross_gather, .group = "sorted_set", .since = "6.2.0", .acl = "read sortedset slow", .summary = sum,   \
        __VA_ARGS__                                                                                                    \
    }
#define STORE_ROW(nm, fn, ver, sum, ...)                                                                               \
    {                                                                                                                  \
        .name = nm, .proc = fn, .arity = -4, .flags = CMD_WRITE | CMD_DENYOOM | CMD_MOVABLEKEYS, .first = 1,           \
        .last = 1, .step = 1, .keys = store_keys, .hops = cross_gather, .group = "sorted_set", .since = ver,           \
        .acl = "write sortedset slow", .summary = sum, __VA_ARGS__                                                     \
    }
static const command rows[] = {
    READ_ROW("zunion", zunion_cmd, "Add multiple sorted sets",
             KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_KEYNUM(0, 1, 1)})),
    READ_ROW("zinter", zinter_cmd, "Intersect multiple sorted sets",
             KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_KEYNUM(0, 1, 1)})),
    READ_ROW("zdiff", zdiff_cmd, "Subtract multiple sorted sets",
             KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_KEYNUM(0, 1, 1)})),
    {.name = "zintercard",
     KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_KEYNUM(0, 1, 1)}),
     .hops = cross_gather,
     .proc = zintercard_cmd,
     .arity = -3,
     .flags = CMD_READONLY | CMD_MOVABLEKEYS,
     .keys = plain_keys,
     .group = "sorted_set",
     .since = "7.0.0",
     .acl = "read sortedset slow",
     .summary = "Intersect multiple sorted sets and return the cardinality of the result"},
    STORE_ROW("zunionstore", zunionstore_cmd, "2.0.0",
              "Add multiple sorted sets and store the resulting sorted set in a new key",
              KEY_SPECS({KS_OW | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
                        {KS_RO | KS_ACCESS, KS_INDEX(2), KS_KEYNUM(0, 1, 1)})),
    STORE_ROW("zinterstore", zinterstore_cmd, "2.0.0",
              "Intersect multiple sorted sets and store the resulting sorted set in a new key",
              KEY_SPECS({KS_OW | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
                        {KS_RO | KS_ACCESS, KS_INDEX(2), KS_KEYNUM(0, 1, 1)})),
    STORE_ROW("zdiffstore", zdiffstore_cmd, "6.2.0",
              "Subtract multiple sorted sets and store the resulting sorted set in a new key",
              KEY_SPECS({KS_OW | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
                        {KS_RO | KS_ACCESS, KS_INDEX(2), KS_KEYNUM(0, 1, 1)})),
};

void zset_algebra_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
