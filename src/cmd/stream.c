/* stream.c - the stream commands on entries: XADD XRANGE XREVRANGE XLEN
 * XDEL XTRIM XSETID, the stream type's operations, and the helpers of
 * cmd/stream.h. The value is a core/stream.h `stream *` in the key's entry;
 * consumer groups are in stream_cg.c, XREAD and XREADGROUP in
 * stream_read.c. Replies and errors follow Redis 7.0's t_stream.c. */
#include "cmd/notify.h"
#include "cmd/stream.h"
#include "cmd/families.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include <errno.h>
#include "server/config.h"
#include "shard/block.h"
#include "shard/shard.h"
#include <stdlib.h>
#include <string.h>

/* ---- type operations ---- */

static void x_free(void *o) { stream_free(o); }
static size_t x_usage(const void *o) { return stream_mem(o); }
static void *x_copy(const void *o) { return stream_dup(o); }
static const char *x_encoding(const void *o) { return "stream"; }
/* Redis's free effort of a stream: its nodes, and each group with as many
 * PEL entries as the first one has. */
static size_t x_effort(const void *o) {
    const stream *s = o;
    size_t e = s->nodes.len;
    if (s->ngroups) e += s->ngroups * (1 + s->groups[0]->pel.len);
    return e;
}

static const type_ops stream_ops = {
    .name = "stream", .free = x_free, .usage = x_usage, .copy = x_copy, .encoding = x_encoding, .effort = x_effort};

/* ---- helpers (stream.h) ---- */

/* Redis's string2ull: a strict integer >= 0, or what strtoull takes whole. */
static int parse_u64(const char *s, uint64_t *v) {
    long long ll;
    size_t n = strlen(s);
    if (str2ll(s, n, &ll)) {
        if (ll < 0) return 0;
        *v = (uint64_t)ll;
        return 1;
    }
    if (!*s) return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno == EINVAL || errno == ERANGE || *end) return 0;
    *v = x;
    return 1;
}

int xid_parse(const char *s, size_t n, sid *id, uint64_t missing_seq, int strict, int *seq_given) {
    char b[128];
    if (n > sizeof b - 1) return -1;
    memcpy(b, s, n);
    b[n] = 0;
    if (strict && (b[0] == '-' || b[0] == '+') && b[1] == 0) return -1;
    if (seq_given) *seq_given = 1;
    if (b[0] == '-' && b[1] == 0) {
        *id = (sid){0, 0};
        return 0;
    }
    if (b[0] == '+' && b[1] == 0) {
        *id = (sid){UINT64_MAX, UINT64_MAX};
        return 0;
    }
    char *dot = strchr(b, '-');
    if (dot) *dot = 0;
    uint64_t ms, seq;
    if (!parse_u64(b, &ms)) return -1;
    if (dot) {
        if (seq_given && dot[1] == '*' && dot[2] == 0) {
            seq = 0;
            *seq_given = 0;
        } else if (!parse_u64(dot + 1, &seq)) {
            return -1;
        }
    } else {
        seq = missing_seq;
    }
    id->ms = ms;
    id->seq = seq;
    return 0;
}

int arg_xid(cmd_ctx *c, int i, sid *id, uint64_t missing_seq, int strict, int *seq_given) {
    if (xid_parse(c->argv[i], c->argl[i], id, missing_seq, strict, seq_given) == 0) return 1;
    reply_error(c, "ERR Invalid stream ID specified as stream command argument");
    return 0;
}

int arg_xinterval(cmd_ctx *c, int i, sid *id, int *excl, uint64_t missing_seq) {
    const char *s = c->argv[i];
    size_t n = c->argl[i];
    *excl = n > 1 && s[0] == '(';
    int r = *excl ? xid_parse(s + 1, n - 1, id, missing_seq, 1, NULL) : xid_parse(s, n, id, missing_seq, 0, NULL);
    if (r == 0) return 1;
    reply_error(c, "ERR Invalid stream ID specified as stream command argument");
    return 0;
}

void reply_xid(cmd_ctx *c, const sid *id) {
    char b[48];
    reply_bulk(c, b, (size_t)sid_fmt(b, id));
}

stream *xlookup(cmd_ctx *c, int i, int reading, db **dp, int *wrong) {
    *wrong = 0;
    entry **l = ctx_lookup(c, i, reading, dp);
    if (!l) return NULL;
    if (ctx_wrong_type(c, *l, T_STREAM)) {
        *wrong = 1;
        return NULL;
    }
    return entry_obj(*l);
}

void xsignal(cmd_ctx *c, const char *key, size_t klen) { block_signal(ctx_db(c, key, klen), key, klen, T_STREAM); }

/* Puts the entry's fields as [id, [f, v, ...]]. */
static void reply_entry(cmd_ctx *c, stream_iter *it, const sid *id, long long nf) {
    reply_array(c, 2);
    reply_xid(c, id);
    reply_array(c, nf * 2);
    for (long long k = 0; k < nf; k++) {
        const char *f, *v;
        size_t fl, vl;
        stream_iter_field(it, &f, &fl, &v, &vl);
        reply_bulk(c, f, fl);
        reply_bulk(c, v, vl);
    }
}

/* XREADGROUP with a history ID: the consumer's own pending entries. */
static size_t reply_from_pel(cmd_ctx *c, stream *s, const sid *start, const sid *end, long long count,
                             consumer *cons) {
    size_t at = reply_defer(c), n = 0;
    for (size_t i = sidx_lower(&cons->pel, start); i < cons->pel.len && (!count || (long long)n < count); i++) {
        sidx_item *it = sidx_at(&cons->pel, i);
        if (end && sid_cmp(&it->id, end) > 0) break;
        if (xreply_range(c, s, &it->id, &it->id, 1, 0, NULL, NULL, XR_RAW) == 0) {
            reply_array(c, 2);
            reply_xid(c, &it->id);
            reply_null_array(c);
        } else {
            nack *k = it->p;
            k->delivery_time = ctx_now(c);
            k->delivery_count++;
        }
        n++;
    }
    reply_defer_array(c, at, (long long)n);
    return n;
}

/* A delivery of id to cons (XREADGROUP without NOACK). */
static void deliver(cmd_ctx *c, cgroup *g, consumer *cons, const sid *id) {
    size_t i = sidx_lower(&g->pel, id);
    if (i < g->pel.len && sid_cmp(&sidx_at(&g->pel, i)->id, id) == 0) {
        nack *k = sidx_at(&g->pel, i)->p;
        if (k->consumer) sidx_del(&k->consumer->pel, id);
        k->consumer = cons;
        k->delivery_time = ctx_now(c);
        k->delivery_count = 1;
    } else {
        nack *k = zmalloc(sizeof *k);
        k->consumer = cons;
        k->delivery_time = ctx_now(c);
        k->delivery_count = 1;
        sidx_insert(&g->pel, i, id, k);
    }
    size_t j = sidx_lower(&cons->pel, id);
    sidx_insert(&cons->pel, j, id, sidx_at(&g->pel, i)->p);
}

size_t xreply_range(cmd_ctx *c, stream *s, const sid *start, const sid *end, long long count, int rev, cgroup *g,
                    consumer *cons, int flags) {
    if (g && (flags & XR_HISTORY)) return reply_from_pel(c, s, start, end, count, cons);
    size_t at = reply_defer(c), n = 0;
    stream_iter it;
    sid id, hi = end ? *end : (sid){UINT64_MAX, UINT64_MAX};
    long long nf;
    stream_iter_start(&it, s, start, &hi, rev);
    while (stream_iter_next(&it, &id, &nf)) {
        if (g && sid_cmp(&id, &g->last_id) > 0) {
            if (g->entries_read != CG_NO_ENTRIES_READ && !stream_range_has_tombstones(s, &id, NULL))
                g->entries_read++;
            else if (s->entries_added)
                g->entries_read = stream_estimate_read(s, &id);
            g->last_id = id;
        }
        reply_entry(c, &it, &id, nf);
        if (g && !(flags & XR_NOACK)) deliver(c, g, cons, &id);
        n++;
        if (count && (long long)n == count) break;
    }
    stream_iter_stop(&it);
    if (!(flags & XR_RAW)) reply_defer_array(c, at, (long long)n);
    return n;
}

/* ---- XADD / XTRIM arguments ---- */

typedef struct add_args {
    trim_args t;
    int limit_given, nomkstream, id_given, seq_given;
    sid id;
} add_args;

/* Redis's streamParseAddOrTrimArgsOrReply: the index of the ID argument
 * (XADD), or -1 after replying. */
static int parse_add_trim(cmd_ctx *c, add_args *a, int xadd) {
    memset(a, 0, sizeof *a);
    int i = 2;
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        const char *o = c->argv[i];
        if (xadd && c->argl[i] == 1 && o[0] == '*') break;
        if (arg_is(c, i, "maxlen") && more) {
            if (a->t.strategy != TRIM_NONE) {
                reply_error(c, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            a->t.approx = 0;
            if (more >= 2 && c->argl[i + 1] == 1 && c->argv[i + 1][0] == '~') {
                a->t.approx = 1;
                i++;
            } else if (more >= 2 && c->argl[i + 1] == 1 && c->argv[i + 1][0] == '=') {
                i++;
            }
            if (!arg_ll(c, i + 1, &a->t.maxlen)) return -1;
            if (a->t.maxlen < 0) {
                reply_error(c, "ERR The MAXLEN argument must be >= 0.");
                return -1;
            }
            i++;
            a->t.strategy = TRIM_MAXLEN;
        } else if (arg_is(c, i, "minid") && more) {
            if (a->t.strategy != TRIM_NONE) {
                reply_error(c, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            a->t.approx = 0;
            if (more >= 2 && c->argl[i + 1] == 1 && c->argv[i + 1][0] == '~') {
                a->t.approx = 1;
                i++;
            } else if (more >= 2 && c->argl[i + 1] == 1 && c->argv[i + 1][0] == '=') {
                i++;
            }
            if (!arg_xid(c, i + 1, &a->t.minid, 0, 1, NULL)) return -1;
            i++;
            a->t.strategy = TRIM_MINID;
        } else if (arg_is(c, i, "limit") && more) {
            if (!arg_ll(c, i + 1, &a->t.limit)) return -1;
            if (a->t.limit < 0) {
                reply_error(c, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            a->limit_given = 1;
            i++;
        } else if (xadd && arg_is(c, i, "nomkstream")) {
            a->nomkstream = 1;
        } else if (xadd) {
            if (!arg_xid(c, i, &a->id, 0, 1, &a->seq_given)) return -1;
            a->id_given = 1;
            break;
        } else {
            reply_status(c, ST_SYNTAX);
            return -1;
        }
    }
    if (a->t.limit && a->t.strategy == TRIM_NONE) {
        reply_error(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && a->t.strategy == TRIM_NONE) {
        reply_error(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (aof_loading) { /* obey the log: trim exactly as it says */
        a->t.limit = 0;
    } else if (a->limit_given) {
        if (!a->t.approx) {
            reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (a->t.approx) {
        long long e = cfg_get(stream_node_max_entries);
        a->t.limit = 100 * e;
        if (a->t.limit <= 0 || a->t.limit > 1000000) a->t.limit = 10000;
    } else {
        a->t.limit = 0;
    }
    return i;
}

/* XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...] */
static void xadd_cmd(cmd_ctx *c) {
    add_args a;
    int idpos = parse_add_trim(c, &a, 1);
    if (idpos < 0) return;
    int fpos = idpos + 1;
    if (c->argc - fpos < 2 || (c->argc - fpos) % 2 == 1) {
        reply_arity(c);
        return;
    }
    if (a.id_given && a.seq_given && sid_zero(&a.id)) {
        reply_error(c, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    db *d;
    int wrong;
    stream *s = xlookup(c, 1, 0, &d, &wrong);
    if (wrong) return;
    if (!s && a.nomkstream) {
        reply_null(c);
        return;
    }
    sid last = s ? s->last_id : (sid){0, 0};
    if (last.ms == UINT64_MAX && last.seq == UINT64_MAX) {
        reply_error(c, "ERR The stream has exhausted the last possible ID, unable to add more items");
        return;
    }
    sid id;
    if (a.id_given) {
        id = a.id;
        if (!a.seq_given) {
            if (id.ms == last.ms) {
                if (last.seq == UINT64_MAX) {
                    reply_error(c, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
                    return;
                }
                id.seq = last.seq + 1;
            } else {
                id.seq = 0;
            }
        }
        if (sid_cmp(&id, &last) <= 0) {
            reply_error(c, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
            return;
        }
    } else {
        uint64_t ms = (uint64_t)ctx_now(c);
        if (ms > last.ms) {
            id = (sid){ms, 0};
        } else {
            id = last;
            sid_incr(&id);
        }
    }
    int created = 0;
    if (!s) {
        s = stream_new();
        db_add(d, entry_new_obj(c->argv[1], c->argl[1], T_STREAM, s, -1));
        created = 1;
    }
    (void)created;
    stream_append(s, &id, c->argv + fpos, c->argl + fpos, (c->argc - fpos) / 2, (size_t)cfg_get(stream_node_max_bytes),
                  cfg_get(stream_node_max_entries));
    reply_xid(c, &id);
    ctx_notify(c, NOTIFY_STREAM, "xadd", 1);
    if (a.t.strategy != TRIM_NONE && stream_trim(s, &a.t)) ctx_notify(c, NOTIFY_STREAM, "xtrim", 1);
    xsignal(c, c->argv[1], c->argl[1]);
}

/* XRANGE key start end [COUNT n]; XREVRANGE key end start [COUNT n] */
static void range_generic(cmd_ctx *c, int rev) {
    int si = rev ? 3 : 2, ei = rev ? 2 : 3, sx, ex;
    sid start, end;
    long long count = -1;
    if (!arg_xinterval(c, si, &start, &sx, 0)) return;
    if (sx && sid_incr(&start) < 0) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    if (!arg_xinterval(c, ei, &end, &ex, UINT64_MAX)) return;
    if (ex && sid_decr(&end) < 0) {
        reply_error(c, "ERR invalid end ID for the interval");
        return;
    }
    for (int j = 4; j < c->argc; j++) {
        if (arg_is(c, j, "count") && c->argc - j - 1 >= 1) {
            if (!arg_ll(c, j + 1, &count)) return;
            if (count < 0) count = 0;
            j++;
        } else {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    db *d;
    int wrong;
    stream *s = xlookup(c, 1, 1, &d, &wrong);
    if (wrong) return;
    if (!s) {
        reply_array(c, 0);
        return;
    }
    if (count == 0) {
        reply_null_array(c);
        return;
    }
    xreply_range(c, s, &start, &end, count < 0 ? 0 : count, rev, NULL, NULL, 0);
}
static void xrange_cmd(cmd_ctx *c) { range_generic(c, 0); }
static void xrevrange_cmd(cmd_ctx *c) { range_generic(c, 1); }

/* XLEN key */
static void xlen_cmd(cmd_ctx *c) {
    db *d;
    int wrong;
    stream *s = xlookup(c, 1, 1, &d, &wrong);
    if (wrong) return;
    reply_int(c, s ? (long long)s->length : 0);
}

/* XDEL key id [id ...] */
static void xdel_cmd(cmd_ctx *c) {
    db *d;
    int wrong;
    stream *s = xlookup(c, 1, 0, &d, &wrong);
    if (wrong) return;
    if (!s) {
        reply_int(c, 0);
        return;
    }
    sid stackids[16], *ids = stackids;
    int n = c->argc - 2;
    if (n > 16) ids = zmalloc(sizeof(sid) * (size_t)n);
    for (int j = 0; j < n; j++) {
        if (!arg_xid(c, j + 2, &ids[j], 0, 1, NULL)) {
            if (ids != stackids) zfree(ids);
            return;
        }
    }
    long long deleted = 0;
    int first = 0;
    for (int j = 0; j < n; j++) {
        if (!stream_delete(s, &ids[j])) continue;
        if (sid_cmp(&ids[j], &s->first_id) == 0) first = 1;
        if (sid_cmp(&ids[j], &s->max_deleted) > 0) s->max_deleted = ids[j];
        deleted++;
    }
    if (deleted) {
        if (s->length == 0) s->first_id = (sid){0, 0};
        else if (first) stream_first(s, &s->first_id);
    }
    if (ids != stackids) zfree(ids);
    reply_int(c, deleted);
    if (deleted) ctx_notify(c, NOTIFY_STREAM, "xdel", 1);
}

/* XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count] */
static void xtrim_cmd(cmd_ctx *c) {
    add_args a;
    if (parse_add_trim(c, &a, 0) < 0) return;
    db *d;
    int wrong;
    stream *s = xlookup(c, 1, 0, &d, &wrong);
    if (wrong) return;
    long long n = s ? (long long)stream_trim(s, &a.t) : 0;
    reply_int(c, n);
    if (n) ctx_notify(c, NOTIFY_STREAM, "xtrim", 1);
}

/* XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id] */
static void xsetid_cmd(cmd_ctx *c) {
    sid id, maxdel = {0, 0};
    long long added = -1;
    if (!arg_xid(c, 2, &id, 0, 1, NULL)) return;
    for (int i = 3; i < c->argc;) {
        int more = c->argc - 1 - i;
        if (arg_is(c, i, "entriesadded") && more) {
            if (!arg_ll(c, i + 1, &added)) return;
            if (added < 0) {
                reply_error(c, "ERR entries_added must be positive");
                return;
            }
            i += 2;
        } else if (arg_is(c, i, "maxdeletedid") && more) {
            if (!arg_xid(c, i + 1, &maxdel, 0, 1, NULL)) return;
            if (sid_cmp(&id, &maxdel) < 0) {
                reply_error(c, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
            i += 2;
        } else {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    db *d;
    int wrong;
    stream *s = xlookup(c, 1, 0, &d, &wrong);
    if (wrong) return;
    if (!s) {
        reply_status(c, ST_NOKEY);
        return;
    }
    if (s->length > 0) {
        sid top;
        stream_last(s, &top);
        if (sid_cmp(&id, &top) < 0) {
            reply_error(c, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (added != -1 && s->length > (uint64_t)added) {
            reply_error(c, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    s->last_id = id;
    if (added != -1) s->entries_added = (uint64_t)added;
    if (!sid_zero(&maxdel)) s->max_deleted = maxdel;
    reply_ok(c);
    ctx_notify(c, NOTIFY_STREAM, "xsetid", 1);
}

/* ---- command table ---- */

#define ROW(n, p, ar, fl, sn, ac, su, ...)                                                                             \
    {                                                                                                                  \
        .name = n, .proc = p, .arity = ar, .flags = fl, .first = 1, .last = 1, .step = 1, .group = "stream",           \
        .since = sn, .acl = ac, .summary = su, __VA_ARGS__                                                             \
    }
static const command rows[] = {
    ROW("xadd", xadd_cmd, -5, CMD_WRITE | CMD_DENYOOM | CMD_FAST, "5.0.0", "write stream fast",
        "Appends a new entry to a stream",
        KEY_SPECS({KS_RW | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0),
                   .notes = "UPDATE instead of INSERT because of the optional trimming feature"})),
    ROW("xrange", xrange_cmd, -4, CMD_READONLY, "5.0.0", "read stream slow",
        "Return a range of elements in a stream, with IDs matching the specified IDs interval",
        .kflags = KS_RO | KS_ACCESS),
    ROW("xrevrange", xrevrange_cmd, -4, CMD_READONLY, "5.0.0", "read stream slow",
        "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order "
        "(from greater to smaller IDs) compared to XRANGE",
        .kflags = KS_RO | KS_ACCESS),
    ROW("xlen", xlen_cmd, 2, CMD_READONLY | CMD_FAST, "5.0.0", "read stream fast",
        "Return the number of entries in a stream", .kflags = KS_RO),
    ROW("xdel", xdel_cmd, -3, CMD_WRITE | CMD_FAST, "5.0.0", "write stream fast",
        "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be "
        "different from the number of IDs passed in case certain IDs do not exist.",
        .kflags = KS_RW | KS_DELETE),
    ROW("xtrim", xtrim_cmd, -4, CMD_WRITE, "5.0.0", "write stream slow",
        "Trims the stream to (approximately if '~' is passed) a certain size", .kflags = KS_RW | KS_DELETE),
    ROW("xsetid", xsetid_cmd, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, "5.0.0", "write stream fast",
        "An internal command for replicating stream values", .kflags = KS_RW | KS_UPDATE),
};

void stream_register(void) {
    db_register_type(T_STREAM, &stream_ops);
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
}
