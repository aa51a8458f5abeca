/* list.c - the non-blocking list commands: LPUSH RPUSH LPUSHX RPUSHX LPOP
 * RPOP LLEN LINDEX LSET LRANGE LTRIM LINSERT LREM LPOS LMOVE RPOPLPUSH
 * LMPOP, and the helpers of list.h that the blocking commands reuse.
 *
 * A list is an lobj (core/lobj.h) kept as the object of its T_LIST entry:
 * its one pack while it fits in one node, else a quicklist. Every write
 * passes the current list-max-listpack-size, so CONFIG SET shapes the nodes
 * made from then on. list-compress-depth is accepted but ignored: nodes
 * are never compressed. OBJECT ENCODING answers "quicklist" for every
 * list, as redis-server 7.0 does.
 *
 * Handlers keep the entry rather than its link (links go stale when
 * another lookup expires or moves a key; the entry itself stays put while
 * a command runs). An lobj call may replace the value, so every change is
 * load (entry_obj), change, store (entry_set_obj); a list that loses its
 * last element is deleted by key. New lists enter the keyspace only
 * through db_add, with their elements already in them. */
#include "cmd/cross.h"
#include "cmd/notify.h"
#include "cmd/list.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/db.h"
#include <limits.h>

/* ---- the value ---- */

static int configured_fill(void) {
    int64_t f = cfg_get(list_max_listpack_size);
    return f > INT_MAX ? INT_MAX : (int)f;
}

void *list_new(void) { return lobj_new(); }
int list_config_fill(void) { return configured_fill(); }

static void list_free(void *o) { lobj_free(o); }
static size_t list_usage(const void *o) { return lobj_bytes(o); }
static void *list_copy(const void *o) { return lobj_dup(o); }
static const char *list_encoding(const void *o) { return "quicklist"; }

static const type_ops list_ops = {
    .name = "list", .free = list_free, .usage = list_usage, .copy = list_copy, .encoding = list_encoding};

/* ---- lookups and small helpers ---- */

/* The entry of the list at key argv[i]: 1 and *out, 0 when the key is
 * missing, -1 after replying WRONGTYPE. *dp gets the key's database.
 * reading: count a keyspace hit or miss. */
static int find(cmd_ctx *c, int i, int reading, db **dp, entry **out) {
    entry **l = ctx_lookup(c, i, reading, dp);
    *out = NULL;
    if (!l) return 0;
    if (ctx_wrong_type(c, *l, T_LIST)) return -1;
    *out = *l;
    return 1;
}

/* Deletes the key argv[i] when its list (in e) became empty. */
static void drop_if_empty(cmd_ctx *c, db *d, int i, const entry *e) {
    if (lobj_count(entry_obj(e)) != 0) return;
    db_delete(d, c->argv[i], c->argl[i], ctx_now(c));
    ctx_notify(c, NOTIFY_GENERIC, "del", i);
}

/* Puts the new list o under the key argv[i] (o holds its elements). */
static void add_list(cmd_ctx *c, db *d, int i, void *o) {
    db_add(d, entry_new_obj(c->argv[i], c->argl[i], T_LIST, o, -1));
}

/* One element as bytes; integers are spelled into buf (PACK_INTBUF). */
static const char *elem_at(const lobj_pos *pos, char *buf, size_t *len) {
    pack_val v;
    lobj_get(pos, &v);
    return pack_val_str(&v, buf, len);
}

static void reply_pos(cmd_ctx *c, const lobj_pos *pos) {
    char buf[PACK_INTBUF];
    size_t n;
    const char *s = elem_at(pos, buf, &n);
    reply_bulk(c, s, n);
}

/* Replies the element at one end of the list in e and removes it. */
static void reply_pop_one(cmd_ctx *c, entry *e, int where) {
    void *o = entry_obj(e);
    lobj_pos pos;
    if (where == QL_HEAD)
        lobj_first(o, &pos);
    else
        lobj_last(o, &pos);
    reply_pos(c, &pos);
    lobj_pop(&o, where);
    entry_set_obj(e, o);
}

int list_parse_where(cmd_ctx *c, int i, int *where) {
    if (arg_is(c, i, "left"))
        *where = QL_HEAD;
    else if (arg_is(c, i, "right"))
        *where = QL_TAIL;
    else {
        reply_status(c, ST_SYNTAX);
        return 0;
    }
    return 1;
}

/* The range [*from, *to] of Redis's LRANGE/LTRIM indexes start..end on a
 * list of len elements (negative from the tail, clamped); 0 when empty. */
static int norm_range(long long start, long long end, size_t len, size_t *from, size_t *to) {
    long long n = (long long)len;
    if (start < 0) start = n + start; /* n > 0 and small: no overflow */
    if (end < 0) end = n + end;
    if (start < 0) start = 0;
    if (start > end || start >= n) return 0;
    if (end >= n) end = n - 1;
    *from = (size_t)start;
    *to = (size_t)end;
    return 1;
}

/* ---- push and pop ---- */

/* LPUSH / RPUSH key element [element ...]; only_existing: LPUSHX / RPUSHX */
static void push_generic(cmd_ctx *c, int where, int only_existing) {
    db *d;
    entry *e;
    int r = find(c, 1, 0, &d, &e);
    if (r < 0) return;
    if (r == 0 && only_existing) {
        reply_int(c, 0);
        return;
    }
    void *o = r ? entry_obj(e) : list_new();
    int fill = configured_fill();
    for (int i = 2; i < c->argc; i++)
        lobj_push(&o, fill, where, c->argv[i], c->argl[i]);
    if (r)
        entry_set_obj(e, o);
    else
        add_list(c, d, 1, o);
    reply_int(c, (long long)lobj_count(o));
    ctx_notify(c, NOTIFY_LIST, where == QL_HEAD ? "lpush" : "rpush", 1);
}

/* LPUSH key element [element ...] */
static void lpush_cmd(cmd_ctx *c) { push_generic(c, QL_HEAD, 0); }
/* RPUSH key element [element ...] */
static void rpush_cmd(cmd_ctx *c) { push_generic(c, QL_TAIL, 0); }
/* LPUSHX key element [element ...] */
static void lpushx_cmd(cmd_ctx *c) { push_generic(c, QL_HEAD, 1); }
/* RPUSHX key element [element ...] */
static void rpushx_cmd(cmd_ctx *c) { push_generic(c, QL_TAIL, 1); }

int list_pop_reply(cmd_ctx *c, int i, int where, long count, int shape) {
    db *d;
    entry *e;
    int r = find(c, i, 0, &d, &e);
    if (r <= 0) return r;
    int many = shape == LIST_REPLY_MANY || shape == LIST_REPLY_KEY_MANY;
    size_t n = 1, len = lobj_count(entry_obj(e));
    if (many) n = count <= 0 ? 0 : ((unsigned long)count < len ? (size_t)count : len);
    if (shape == LIST_REPLY_KEY_ONE || shape == LIST_REPLY_KEY_MANY) {
        reply_array(c, 2);
        reply_bulk(c, c->argv[i], c->argl[i]);
    }
    if (many) reply_array(c, (long long)n);
    for (size_t k = 0; k < n; k++)
        reply_pop_one(c, e, where);
    if (n) ctx_notify(c, NOTIFY_LIST, where == QL_HEAD ? "lpop" : "rpop", i);
    drop_if_empty(c, d, i, e);
    return 1;
}

/* LPOP / RPOP key [count] */
static void pop_generic(cmd_ctx *c, int where) {
    long long count = 0;
    if (c->argc > 3) {
        reply_arity(c);
        return;
    }
    int with_count = c->argc == 3;
    if (with_count && (!str2ll(c->argv[2], c->argl[2], &count) || count < 0)) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    int r = list_pop_reply(c, 1, where, (long)count, with_count ? LIST_REPLY_MANY : LIST_REPLY_ONE);
    if (r == 0 && with_count)
        reply_null_array(c);
    else if (r == 0)
        reply_null(c);
}

/* LPOP key [count] */
static void lpop_cmd(cmd_ctx *c) { pop_generic(c, QL_HEAD); }
/* RPOP key [count] */
static void rpop_cmd(cmd_ctx *c) { pop_generic(c, QL_TAIL); }

/* numkeys of LMPOP when its keys are all in argv, else 0 (the handler
 * then replies the error). */
static long long lmpop_numkeys(int argc, const char **argv, const size_t *argl) {
    long long n;
    if (argc < 2 || !str2ll(argv[1], argl[1], &n) || n < 1 || n > argc - 2) return 0;
    return n;
}

/* Key positions of LMPOP: argv[2 .. 2+numkeys); none when numkeys is bad. */
static int lmpop_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    long long n = lmpop_numkeys(argc, argv, argl);
    int w = 0;
    for (long long i = 0; i < n && w < max; i++)
        pos[w++] = (int)(2 + i);
    return w;
}

/* LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] */
static void lmpop_cmd(cmd_ctx *c) {
    long long n, count = 1;
    int where;
    if (!str2ll(c->argv[1], c->argl[1], &n) || n < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return;
    }
    if (n > c->argc - 3) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (!list_parse_where(c, (int)n + 2, &where) || !arg_count_option(c, (int)n + 3, &count)) return;
    for (int k = 2; k < n + 2; k++)
        if (list_pop_reply(c, k, where, (long)count, LIST_REPLY_KEY_MANY) != 0) return;
    reply_null_array(c);
}

/* ---- moving between lists ---- */

int list_move_reply(cmd_ctx *c, int src, int dst, int from, int to) {
    db *sd, *dd;
    entry *se, *de;
    int r = find(c, src, 0, &sd, &se);
    if (r <= 0) return r;
    if (find(c, dst, 0, &dd, &de) < 0) return -1;
    lobj_pos pos;
    if (from == QL_HEAD)
        lobj_first(entry_obj(se), &pos);
    else
        lobj_last(entry_obj(se), &pos);
    char buf[PACK_INTBUF];
    size_t n;
    const char *s = elem_at(&pos, buf, &n);
    reply_bulk(c, s, n);
    /* Push before the pop: s may point into the source, and when source
     * and destination are one list the pop at `from` then takes the right
     * element (the copy when from == to). The source is loaded again after
     * the push, which may have replaced it. */
    void *dobj = de ? entry_obj(de) : list_new();
    lobj_push(&dobj, configured_fill(), to, s, n);
    if (de) entry_set_obj(de, dobj);
    void *sobj = entry_obj(se);
    lobj_pop(&sobj, from);
    entry_set_obj(se, sobj);
    if (!de) add_list(c, dd, dst, dobj);
    /* Redis's order: the push, the pop, then the emptied source's del */
    ctx_notify(c, NOTIFY_LIST, to == QL_HEAD ? "lpush" : "rpush", dst);
    ctx_notify(c, NOTIFY_LIST, from == QL_HEAD ? "lpop" : "rpop", src);
    drop_if_empty(c, sd, src, se);
    return 1;
}

/* LMOVE source destination LEFT|RIGHT LEFT|RIGHT */
static void lmove_cmd(cmd_ctx *c) {
    int from, to;
    if (!list_parse_where(c, 3, &from) || !list_parse_where(c, 4, &to)) return;
    if (list_move_reply(c, 1, 2, from, to) == 0) reply_null(c);
}

/* RPOPLPUSH source destination */
static void rpoplpush_cmd(cmd_ctx *c) {
    if (list_move_reply(c, 1, 2, QL_TAIL, QL_HEAD) == 0) reply_null(c);
}

/* ---- reading ---- */

/* LLEN key */
static void llen_cmd(cmd_ctx *c) {
    db *d;
    entry *e;
    int r = find(c, 1, 1, &d, &e);
    if (r >= 0) reply_int(c, r ? (long long)lobj_count(entry_obj(e)) : 0);
}

/* LINDEX key index */
static void lindex_cmd(cmd_ctx *c) {
    db *d;
    entry *e;
    long long idx;
    int r = find(c, 1, 1, &d, &e);
    if (r < 0) return;
    if (r == 0) {
        reply_null(c);
        return;
    }
    if (!arg_ll(c, 2, &idx)) return;
    lobj_pos pos;
    if (lobj_index(entry_obj(e), (long)idx, &pos))
        reply_pos(c, &pos);
    else
        reply_null(c);
}

/* LRANGE key start stop */
static void lrange_cmd(cmd_ctx *c) {
    long long start, end;
    if (!arg_ll(c, 2, &start) || !arg_ll(c, 3, &end)) return;
    db *d;
    entry *e;
    int r = find(c, 1, 1, &d, &e);
    if (r < 0) return;
    size_t from, to;
    if (r == 0 || !norm_range(start, end, lobj_count(entry_obj(e)), &from, &to)) {
        reply_array(c, 0);
        return;
    }
    reply_array(c, (long long)(to - from + 1));
    lobj_pos pos;
    lobj_index(entry_obj(e), (long)from, &pos);
    for (size_t k = from; k <= to; k++, lobj_next(&pos))
        reply_pos(c, &pos);
}

/* LPOS options: RANK (0 never; LLONG_MIN is `all_from_tail`), COUNT and
 * MAXLEN (0: no limit), and whether COUNT was given. */
typedef struct lpos_opts {
    long long rank, count, maxlen;
    int has_count;
} lpos_opts;

/* Parses argv[from..] into o; 0 after replying Redis's error. */
static int lpos_parse(cmd_ctx *c, int from, lpos_opts *o) {
    o->rank = 1;
    o->count = o->maxlen = 0;
    o->has_count = 0;
    for (int j = from; j < c->argc; j += 2) {
        int more = j + 1 < c->argc;
        if (more && arg_is(c, j, "rank")) {
            if (!arg_ll(c, j + 1, &o->rank)) return 0;
            if (o->rank == 0) {
                reply_error(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
                               "or use negative to start from the end of the list");
                return 0;
            }
        } else if (more && (arg_is(c, j, "count") || arg_is(c, j, "maxlen"))) {
            int is_count = arg_is(c, j, "count");
            long long *v = is_count ? &o->count : &o->maxlen;
            if (!str2ll(c->argv[j + 1], c->argl[j + 1], v) || *v < 0) {
                reply_error(c, is_count ? "ERR COUNT can't be negative" : "ERR MAXLEN can't be negative");
                return 0;
            }
            o->has_count |= is_count;
        } else {
            reply_status(c, ST_SYNTAX);
            return 0;
        }
    }
    return 1;
}

/* Walks the list o for argv[2] as o says, replying each qualifying index (counted
 * from the head); returns how many were replied. Without COUNT it stops at
 * the first. RANK -9223372036854775808 makes every match from the tail
 * qualify and ignores COUNT, as Redis 7.0's arithmetic does. */
static long long lpos_walk(cmd_ctx *c, const void *ql, const lpos_opts *o) {
    int back = o->rank < 0;
    int wild = o->rank == LLONG_MIN;
    unsigned long long skip = back ? (unsigned long long)(-(o->rank + 1)) : (unsigned long long)(o->rank - 1);
    unsigned long long want = !o->has_count ? 1 : (o->count == 0 || wild ? ULLONG_MAX : (unsigned long long)o->count);
    size_t len = lobj_count(ql);
    long long replied = 0;
    lobj_pos pos;
    if (back)
        lobj_last(ql, &pos);
    else
        lobj_first(ql, &pos);
    for (size_t seen = 0; lobj_pos_ok(&pos) && (o->maxlen == 0 || seen < (unsigned long long)o->maxlen); seen++) {
        if (lobj_eq(&pos, c->argv[2], c->argl[2])) {
            if (wild || skip == 0) {
                reply_int(c, (long long)(back ? len - 1 - seen : seen));
                if ((unsigned long long)++replied >= want) break;
            } else {
                skip--;
            }
        }
        if (back)
            lobj_prev(&pos);
        else
            lobj_next(&pos);
    }
    return replied;
}

/* LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len] */
static void lpos_cmd(cmd_ctx *c) {
    lpos_opts o;
    if (!lpos_parse(c, 3, &o)) return;
    db *d;
    entry *e;
    int r = find(c, 1, 1, &d, &e);
    if (r < 0) return;
    if (r == 0) {
        if (o.has_count)
            reply_array(c, 0);
        else
            reply_null(c);
        return;
    }
    if (!o.has_count) {
        if (lpos_walk(c, entry_obj(e), &o) == 0) reply_null(c);
        return;
    }
    size_t at = reply_defer(c);
    reply_defer_array(c, at, lpos_walk(c, entry_obj(e), &o));
}

/* ---- changing in place ---- */

/* LSET key index element */
static void lset_cmd(cmd_ctx *c) {
    db *d;
    entry *e;
    long long idx;
    int r = find(c, 1, 0, &d, &e);
    if (r < 0) return;
    if (r == 0) {
        reply_status(c, ST_NOKEY);
        return;
    }
    if (!arg_ll(c, 2, &idx)) return;
    void *o = entry_obj(e);
    lobj_pos pos;
    if (!lobj_index(o, (long)idx, &pos)) {
        reply_status(c, ST_RANGE);
        return;
    }
    lobj_replace(&o, configured_fill(), &pos, c->argv[3], c->argl[3]);
    entry_set_obj(e, o);
    reply_ok(c);
    ctx_notify(c, NOTIFY_LIST, "lset", 1);
}

/* LINSERT key BEFORE|AFTER pivot element */
static void linsert_cmd(cmd_ctx *c) {
    int after;
    if (arg_is(c, 2, "after"))
        after = 1;
    else if (arg_is(c, 2, "before"))
        after = 0;
    else {
        reply_status(c, ST_SYNTAX);
        return;
    }
    db *d;
    entry *e;
    int r = find(c, 1, 0, &d, &e);
    if (r <= 0) {
        if (r == 0) reply_int(c, 0);
        return;
    }
    void *o = entry_obj(e);
    lobj_pos pos;
    for (lobj_first(o, &pos); lobj_pos_ok(&pos); lobj_next(&pos)) {
        if (lobj_eq(&pos, c->argv[3], c->argl[3])) {
            lobj_insert(&o, configured_fill(), &pos, after, c->argv[4], c->argl[4]);
            entry_set_obj(e, o);
            reply_int(c, (long long)lobj_count(o));
            ctx_notify(c, NOTIFY_LIST, "linsert", 1);
            return;
        }
    }
    reply_int(c, -1);
}

/* Removes up to `limit` elements equal to s from the list *o, walking
 * from the head (forward) or the tail; returns how many went. */
static size_t remove_matches(void **o, const char *s, size_t len, unsigned long long limit, int forward) {
    size_t removed = 0;
    lobj_pos pos;
    int more = forward ? lobj_first(*o, &pos) : lobj_last(*o, &pos);
    while (more && removed < limit) {
        if (lobj_eq(&pos, s, len)) {
            removed++;
            more = lobj_delete_at(o, &pos, forward);
        } else {
            more = forward ? lobj_next(&pos) : lobj_prev(&pos);
        }
    }
    return removed;
}

/* How many matches LREM's count lets go: |count|, or all for 0. */
static unsigned long long lrem_limit(long long count) {
    if (count == 0) return ULLONG_MAX;
    if (count > 0) return (unsigned long long)count;
    return (unsigned long long)(-(count + 1)) + 1; /* |LLONG_MIN| without overflow */
}

/* LREM key count element */
static void lrem_cmd(cmd_ctx *c) {
    long long count;
    if (!arg_ll(c, 2, &count)) return;
    db *d;
    entry *e;
    int r = find(c, 1, 0, &d, &e);
    if (r <= 0) {
        if (r == 0) reply_int(c, 0);
        return;
    }
    void *o = entry_obj(e);
    size_t n = remove_matches(&o, c->argv[3], c->argl[3], lrem_limit(count), count >= 0);
    entry_set_obj(e, o);
    if (n) ctx_notify(c, NOTIFY_LIST, "lrem", 1);
    drop_if_empty(c, d, 1, e);
    reply_int(c, (long long)n);
}

/* LTRIM key start stop */
static void ltrim_cmd(cmd_ctx *c) {
    long long start, end;
    if (!arg_ll(c, 2, &start) || !arg_ll(c, 3, &end)) return;
    db *d;
    entry *e;
    int r = find(c, 1, 0, &d, &e);
    if (r < 0) return;
    if (r > 0) {
        void *o = entry_obj(e);
        size_t len = lobj_count(o), from, to;
        if (!norm_range(start, end, len, &from, &to)) {
            lobj_delete_range(&o, 0, len);
        } else {
            lobj_delete_range(&o, (long)(to + 1), len - to - 1);
            lobj_delete_range(&o, 0, from);
        }
        entry_set_obj(e, o);
        ctx_notify(c, NOTIFY_LIST, "ltrim", 1);
        drop_if_empty(c, d, 1, e);
    }
    reply_ok(c);
}

/* ---- the command rows ---- */

#define RW (CMD_WRITE | CMD_DENYOOM)
#define RO (CMD_READONLY)
/* A row for a command whose only key is argv[1]. */
#define ROW(n, p, ar, fl, sn, ac, su, ...)                                                                             \
    {                                                                                                                  \
        .name = n, .proc = p, .arity = ar, .flags = fl, .first = 1, .last = 1, .step = 1, .group = "list",             \
        .since = sn, .acl = ac, .summary = su, __VA_ARGS__                                                             \
    }
/* A row for a command with keys argv[1] and argv[2]. */
#define ROW2(n, p, ar, fl, sn, ac, su, ...)                                                                            \
    {                                                                                                                  \
        .name = n, .proc = p, .arity = ar, .flags = fl, .first = 1, .last = 2, .step = 1, .hops = cross_gather,        \
        .group = "list", .since = sn, .acl = ac, .summary = su, __VA_ARGS__                                            \
    }

static const command rows[] = {
    ROW("lpush", lpush_cmd, -3, RW | CMD_FAST, "1.0.0", "write list fast", "Prepend one or multiple elements to a list",
        .kflags = KS_RW | KS_INSERT),
    ROW("rpush", rpush_cmd, -3, RW | CMD_FAST, "1.0.0", "write list fast", "Append one or multiple elements to a list",
        .kflags = KS_RW | KS_INSERT),
    ROW("lpushx", lpushx_cmd, -3, RW | CMD_FAST, "2.2.0", "write list fast",
        "Prepend an element to a list, only if the list exists", .kflags = KS_RW | KS_INSERT),
    ROW("rpushx", rpushx_cmd, -3, RW | CMD_FAST, "2.2.0", "write list fast",
        "Append an element to a list, only if the list exists", .kflags = KS_RW | KS_INSERT),
    ROW("lpop", lpop_cmd, -2, CMD_WRITE | CMD_FAST, "1.0.0", "write list fast",
        "Remove and get the first elements in a list", .kflags = KS_RW | KS_ACCESS | KS_DELETE),
    ROW("rpop", rpop_cmd, -2, CMD_WRITE | CMD_FAST, "1.0.0", "write list fast",
        "Remove and get the last elements in a list", .kflags = KS_RW | KS_ACCESS | KS_DELETE),
    ROW("llen", llen_cmd, 2, RO | CMD_FAST, "1.0.0", "read list fast", "Get the length of a list", .kflags = KS_RO),
    ROW("lindex", lindex_cmd, 3, RO, "1.0.0", "read list slow", "Get an element from a list by its index",
        .kflags = KS_RO | KS_ACCESS),
    ROW("lrange", lrange_cmd, 4, RO, "1.0.0", "read list slow", "Get a range of elements from a list",
        .kflags = KS_RO | KS_ACCESS),
    ROW("lpos", lpos_cmd, -3, RO, "6.0.6", "read list slow", "Return the index of matching elements on a list",
        .kflags = KS_RO | KS_ACCESS),
    ROW("lset", lset_cmd, 4, RW, "1.0.0", "write list slow", "Set the value of an element in a list by its index",
        .kflags = KS_RW | KS_UPDATE),
    ROW("linsert", linsert_cmd, 5, RW, "2.2.0", "write list slow",
        "Insert an element before or after another element in a list", .kflags = KS_RW | KS_INSERT),
    ROW("lrem", lrem_cmd, 4, CMD_WRITE, "1.0.0", "write list slow", "Remove elements from a list",
        .kflags = KS_RW | KS_DELETE),
    ROW("ltrim", ltrim_cmd, 4, CMD_WRITE, "1.0.0", "write list slow", "Trim a list to the specified range",
        .kflags = KS_RW | KS_DELETE),
    ROW2("lmove", lmove_cmd, 5, RW, "6.2.0", "write list slow",
         "Pop an element from a list, push it to another list and return it",
         KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
                   {KS_RW | KS_INSERT, KS_INDEX(2), KS_RANGE(0, 1, 0)})),
    ROW2("rpoplpush", rpoplpush_cmd, 3, RW, "1.2.0", "write list slow",
         "Remove the last element in a list, prepend it to another list and return it",
         KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
                   {KS_RW | KS_INSERT, KS_INDEX(2), KS_RANGE(0, 1, 0)})),
    {.name = "lmpop",
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_KEYNUM(0, 1, 1)}),
     .hops = cross_gather,
     .proc = lmpop_cmd,
     .arity = -4,
     .flags = CMD_WRITE | CMD_MOVABLEKEYS,
     .keys = lmpop_keys,
     .group = "list",
     .since = "7.0.0",
     .acl = "write list slow",
     .summary = "Pop elements from a list"},
};

void list_register(void) {
    db_register_type(T_LIST, &list_ops);
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
}
