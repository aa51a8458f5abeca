/* zset_range.c - range reads and removals of sorted sets: ZRANGE (BYSCORE
 * BYLEX REV LIMIT WITHSCORES), ZRANGESTORE, ZREVRANGE, ZRANGEBYSCORE,
 * ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZREMRANGEBYRANK,
 * ZREMRANGEBYSCORE, ZREMRANGEBYLEX.
 *
 * Every range, whatever its kind, selects a run of consecutive ascending
 * ranks [first, first + n): a rank range directly, a score or lex range as
 * the span of its bounds, narrowed by LIMIT offset/count. So a reply walks
 * that run forward or backward, a STORE copies it in ascending order and a
 * removal deletes it; LIMIT costs nothing however large it is, and a reply
 * never holds more than the set has. */
#include "cmd/cross.h"
#include "cmd/notify.h"
#include "cmd/zset.h"

enum { ZRT_AUTO, ZRT_RANK, ZRT_SCORE, ZRT_LEX };
enum { ZRD_AUTO, ZRD_FWD, ZRD_REV };

typedef struct zrange_req {
    int type, dir, withscores;
    long long start, end;    /* ZRT_RANK */
    zscore_range sr;         /* ZRT_SCORE */
    zlex_range lr;           /* ZRT_LEX */
    long long offset, limit; /* LIMIT; limit < 0: no limit */
} zrange_req;

/* Parses the options after argv[at + 2] (at: the source key). Replies the
 * error and returns 0 when one is bad. */
static int parse_options(cmd_ctx *c, int at, int store, zrange_req *q) {
    for (int j = at + 3; j < c->argc; j++) {
        int left = c->argc - j - 1;
        if (!store && arg_is(c, j, "withscores")) {
            q->withscores = 1;
        } else if (arg_is(c, j, "limit") && left >= 2) {
            if (!arg_ll(c, j + 1, &q->offset) || !arg_ll(c, j + 2, &q->limit)) return 0;
            j += 2;
        } else if (q->dir == ZRD_AUTO && arg_is(c, j, "rev")) {
            q->dir = ZRD_REV;
        } else if (q->type == ZRT_AUTO && arg_is(c, j, "bylex")) {
            q->type = ZRT_LEX;
        } else if (q->type == ZRT_AUTO && arg_is(c, j, "byscore")) {
            q->type = ZRT_SCORE;
        } else {
            reply_status(c, ST_SYNTAX);
            return 0;
        }
    }
    return 1;
}

/* Parses a whole range request as Redis's zrangeGenericCommand, in its
 * order: options, their conflicts, then the range itself. */
static int parse_request(cmd_ctx *c, int at, int store, zrange_req *q) {
    q->offset = 0;
    q->limit = -1;
    if (!parse_options(c, at, store, q)) return 0;
    if (q->dir == ZRD_AUTO) q->dir = ZRD_FWD;
    if (q->type == ZRT_AUTO) q->type = ZRT_RANK;
    if (q->limit != -1 && q->type == ZRT_RANK) {
        reply_error(c, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return 0;
    }
    if (q->withscores && q->type == ZRT_LEX) {
        reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return 0;
    }
    int lo = at + 1, hi = at + 2;
    if (q->dir == ZRD_REV && q->type != ZRT_RANK) { /* given as max, min */
        lo = at + 2;
        hi = at + 1;
    }
    if (q->type == ZRT_RANK) return arg_ll(c, lo, &q->start) && arg_ll(c, hi, &q->end);
    if (q->type == ZRT_SCORE && zs_parse_score_range(c, lo, hi, &q->sr) < 0) {
        reply_error(c, "ERR min or max is not a float");
        return 0;
    }
    if (q->type == ZRT_LEX && zs_parse_lex_range(c, lo, hi, &q->lr) < 0) {
        reply_error(c, "ERR min or max not valid string range item");
        return 0;
    }
    return 1;
}

/* Ranks start..end as Redis sanitizes them (negative from the end,
 * clamped); returns the count, 0 when the range is empty. */
static size_t rank_span(size_t size, long long start, long long end, size_t *first) {
    long long len = (long long)size;
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (start > end || start >= len) return 0;
    if (end >= len) end = len - 1;
    *first = (size_t)start;
    return (size_t)(end - start + 1);
}

/* The ascending ranks [*first, *first + n) that q selects in o. */
static size_t request_span(void *o, const zrange_req *q, size_t *first) {
    size_t size = zobj_size(o), f = 0, cnt;
    if (q->type == ZRT_RANK) {
        size_t n = rank_span(size, q->start, q->end, &f);
        *first = q->dir == ZRD_REV && n ? size - f - n : f; /* ranks counted from the top */
        return n;
    }
    cnt = q->type == ZRT_SCORE ? zobj_score_span(o, &q->sr, &f) : zobj_lex_span(o, &q->lr, &f);
    if (q->offset < 0 || (unsigned long long)q->offset >= cnt) return 0;
    size_t rest = cnt - (size_t)q->offset;
    size_t n = q->limit < 0 || (unsigned long long)q->limit > rest ? rest : (size_t)q->limit;
    *first = q->dir == ZRD_REV ? f + cnt - (size_t)q->offset - n : f + (size_t)q->offset;
    return n;
}

/* Replies ranks [first, first + n) in the request's direction. */
static void reply_span(cmd_ctx *c, void *o, size_t first, size_t n, const zrange_req *q) {
    int rev = q->dir == ZRD_REV;
    zs_reply_header(c, n, q->withscores);
    zcur cu;
    int ok = n > 0 && zcur_seek(&cu, o, rev ? first + n - 1 : first);
    for (size_t k = 0; k < n && ok; k++) {
        zitem it;
        zcur_get(&cu, &it);
        zs_reply_item(c, &it, q->withscores);
        ok = rev ? zcur_prev(&cu) : zcur_next(&cu);
    }
}

/* A new object holding ranks [first, first + n) of o; hint: the count
 * when known in advance (rank ranges), else 0. */
static void *copy_span(void *o, size_t first, size_t n, size_t hint) {
    zbuild b = {.hint = hint};
    zcur cu;
    int ok = n > 0 && zcur_seek(&cu, o, first);
    for (size_t k = 0; k < n && ok; k++, ok = zcur_next(&cu)) {
        zitem it;
        zcur_get(&cu, &it);
        zbuild_add(&b, it.m, it.ml, it.score);
    }
    return b.o;
}

/* The whole family: the source key at argv[at]; dst >= 0 stores there. */
static void range_generic(cmd_ctx *c, int at, int dst, int type, int dir) {
    zrange_req q = {.type = type, .dir = dir};
    if (!parse_request(c, at, dst >= 0, &q)) return;
    entry *e = zs_lookup(c, at, 1, NULL);
    if (zs_wrong_type(c, e)) return;
    size_t first = 0, n = e ? request_span(entry_obj(e), &q, &first) : 0;
    if (dst >= 0)
        zs_store(c, dst, n ? copy_span(entry_obj(e), first, n, q.type == ZRT_RANK ? n : 0) : NULL);
    else if (!e)
        reply_array(c, 0);
    else
        reply_span(c, entry_obj(e), first, n, &q);
}

/* ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES] */
static void zrange_cmd(cmd_ctx *c) { range_generic(c, 1, -1, ZRT_AUTO, ZRD_AUTO); }

/* ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count] */
static void zrangestore_cmd(cmd_ctx *c) { range_generic(c, 2, 1, ZRT_AUTO, ZRD_AUTO); }

/* ZREVRANGE key start stop [WITHSCORES] */
static void zrevrange_cmd(cmd_ctx *c) { range_generic(c, 1, -1, ZRT_RANK, ZRD_REV); }

/* ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count] */
static void zrangebyscore_cmd(cmd_ctx *c) { range_generic(c, 1, -1, ZRT_SCORE, ZRD_FWD); }

/* ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count] */
static void zrevrangebyscore_cmd(cmd_ctx *c) { range_generic(c, 1, -1, ZRT_SCORE, ZRD_REV); }

/* ZRANGEBYLEX key min max [LIMIT offset count] */
static void zrangebylex_cmd(cmd_ctx *c) { range_generic(c, 1, -1, ZRT_LEX, ZRD_FWD); }

/* ZREVRANGEBYLEX key max min [LIMIT offset count] */
static void zrevrangebylex_cmd(cmd_ctx *c) { range_generic(c, 1, -1, ZRT_LEX, ZRD_REV); }

/* ---- removals ---- */

/* Removes the run the range selects: the range is parsed first, then the
 * key looked up (a missing key removes nothing), as Redis. */
static void remrange_generic(cmd_ctx *c, int type) {
    zrange_req q = {.type = type, .dir = ZRD_FWD, .limit = -1};
    if (type == ZRT_RANK && (!arg_ll(c, 2, &q.start) || !arg_ll(c, 3, &q.end))) return;
    if (type == ZRT_SCORE && zs_parse_score_range(c, 2, 3, &q.sr) < 0) {
        reply_error(c, "ERR min or max is not a float");
        return;
    }
    if (type == ZRT_LEX && zs_parse_lex_range(c, 2, 3, &q.lr) < 0) {
        reply_error(c, "ERR min or max not valid string range item");
        return;
    }
    db *d;
    entry *e = zs_lookup(c, 1, 0, &d);
    if (zs_wrong_type(c, e)) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    size_t first = 0, n = request_span(entry_obj(e), &q, &first);
    if (n) {
        void *o = zobj_delete_ranks(entry_obj(e), first, n);
        ctx_notify(c, NOTIFY_ZSET, c->cmd->name, 1); /* zremrangebyrank, ... */
        zs_settle(c, d, 1, e, o);
    }
    reply_int(c, (long long)n);
}

/* ZREMRANGEBYRANK key start stop */
static void zremrangebyrank_cmd(cmd_ctx *c) { remrange_generic(c, ZRT_RANK); }

/* ZREMRANGEBYSCORE key min max */
static void zremrangebyscore_cmd(cmd_ctx *c) { remrange_generic(c, ZRT_SCORE); }

/* ZREMRANGEBYLEX key min max */
static void zremrangebylex_cmd(cmd_ctx *c) { remrange_generic(c, ZRT_LEX); }

/* ---- the command table ---- */

#define ONEKEY .first = 1, .last = 1, .step = 1
#define READ_ROW(nm, fn, sum, ver, ...)                                                                                \
    {                                                                                                                  \
        .name = nm, .proc = fn, .arity = -4, .flags = CMD_READONLY, ONEKEY, .group = "sorted_set", .since = ver,       \
        .acl = "read sortedset slow", .summary = sum, __VA_ARGS__                                                      \
    }
#define REM_ROW(nm, fn, sum, ver, ...)                                                                                 \
    {                                                                                                                  \
        .name = nm, .proc = fn, .arity = 4, .flags = CMD_WRITE, ONEKEY, .group = "sorted_set", .since = ver,           \
        .acl = "write sortedset slow", .summary = sum, __VA_ARGS__                                                     \
    }
static const command rows[] = {
    READ_ROW("zrange", zrange_cmd, "Return a range of members in a sorted set", "1.2.0", .kflags = KS_RO | KS_ACCESS),
    {.name = "zrangestore",
     KEY_SPECS({KS_OW | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RO | KS_ACCESS, KS_INDEX(2), KS_RANGE(0, 1, 0)}),
     .hops = cross_gather,
     .proc = zrangestore_cmd,
     .arity = -5,
     .flags = CMD_WRITE | CMD_DENYOOM,
     .first = 1,
     .last = 2,
     .step = 1,
     .group = "sorted_set",
     .since = "6.2.0",
     .acl = "write sortedset slow",
     .summary = "Store a range of members from sorted set into another key"},
    READ_ROW("zrevrange", zrevrange_cmd,
             "Return a range of members in a sorted set, by index, with scores ordered from high to low", "1.2.0",
             .kflags = KS_RO | KS_ACCESS),
    READ_ROW("zrangebyscore", zrangebyscore_cmd, "Return a range of members in a sorted set, by score", "1.0.5",
             .kflags = KS_RO | KS_ACCESS),
    READ_ROW("zrevrangebyscore", zrevrangebyscore_cmd,
             "Return a range of members in a sorted set, by score, with scores ordered from high to low", "2.2.0",
             .kflags = KS_RO | KS_ACCESS),
    READ_ROW("zrangebylex", zrangebylex_cmd, "Return a range of members in a sorted set, by lexicographical range",
             "2.8.9", .kflags = KS_RO | KS_ACCESS),
    READ_ROW("zrevrangebylex", zrevrangebylex_cmd,
             "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower "
             "strings.",
             "2.8.9", .kflags = KS_RO | KS_ACCESS),
    REM_ROW("zremrangebyrank", zremrangebyrank_cmd, "Remove all members in a sorted set within the given indexes",
            "2.0.0", .kflags = KS_RW | KS_DELETE),
    REM_ROW("zremrangebyscore", zremrangebyscore_cmd, "Remove all members in a sorted set within the given scores",
            "1.2.0", .kflags = KS_RW | KS_DELETE),
    REM_ROW("zremrangebylex", zremrangebylex_cmd,
            "Remove all members in a sorted set between the given lexicographical range", "2.8.9",
            .kflags = KS_RW | KS_DELETE),
};

void zset_range_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
