/* stream_cg.c - consumer groups: XGROUP (CREATE SETID DESTROY
 * CREATECONSUMER DELCONSUMER), XACK, XPENDING, XCLAIM, XAUTOCLAIM and XINFO
 * (STREAM [FULL], GROUPS, CONSUMERS), with Redis 7.0's replies, errors and
 * lag arithmetic (core/stream_cg.c). XREADGROUP is in stream_read.c. */
#include "cmd/notify.h"
#include "cmd/families.h"
#include "cmd/stream.h"
#include "lib/mem.h"
#include <limits.h>
#include <string.h>

static void reply_nogroup_key(cmd_ctx *c, int ki, int gi) {
    reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s'", (int)c->argl[ki], c->argv[ki],
                 (int)c->argl[gi], c->argv[gi]);
}

static void subcommand_error(cmd_ctx *c, const char *cmd) {
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.",
                 (int)(c->argl[1] > 128 ? 128 : c->argl[1]), c->argv[1], cmd);
}

/* ---- XGROUP ---- */

/* The common part of XGROUP's subcommands on key argv[2], group argv[3]:
 * options from argv[5], the stream, the group. 0 after replying. */
static int xgroup_prepare(cmd_ctx *c, int create, int setid, int *mkstream, long long *entries_read, db **d,
                          stream **s, cgroup **g) {
    *mkstream = 0;
    *entries_read = CG_NO_ENTRIES_READ;
    for (int i = 5; i < c->argc;) {
        if (create && arg_is(c, i, "mkstream")) {
            *mkstream = 1;
            i++;
        } else if ((create || setid) && arg_is(c, i, "entriesread") && i + 1 < c->argc) {
            if (!arg_ll(c, i + 1, entries_read)) return 0;
            if (*entries_read < 0 && *entries_read != CG_NO_ENTRIES_READ) {
                reply_error(c, "ERR value for ENTRIESREAD must be positive or -1");
                return 0;
            }
            i += 2;
        } else {
            subcommand_error(c, "XGROUP");
            return 0;
        }
    }
    int wrong;
    *s = xlookup(c, 2, 0, d, &wrong);
    if (wrong) return 0;
    *g = *s ? stream_group(*s, c->argv[3], c->argl[3]) : NULL;
    if (!*mkstream) {
        if (!*s) {
            reply_error(c, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
                           "to use the MKSTREAM option to create an empty stream automatically.");
            return 0;
        }
        if (!*g && !create && !arg_is(c, 1, "destroy")) {
            reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)c->argl[3], c->argv[3],
                         (int)c->argl[2], c->argv[2]);
            return 0;
        }
    }
    return 1;
}

/* XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n] */
static void xgroup_create(cmd_ctx *c) {
    int mk;
    long long er;
    db *d;
    stream *s;
    cgroup *g;
    if (c->argc > 8) {
        subcommand_error(c, "XGROUP");
        return;
    }
    if (!xgroup_prepare(c, 1, 0, &mk, &er, &d, &s, &g)) return;
    sid id;
    if (c->argl[4] == 1 && c->argv[4][0] == '$') id = s ? s->last_id : (sid){0, 0};
    else if (!arg_xid(c, 4, &id, 0, 1, NULL)) return;
    if (!s) {
        s = stream_new();
        db_add(d, entry_new_obj(c->argv[2], c->argl[2], T_STREAM, s, -1));
    }
    if (stream_group_add(s, c->argv[3], c->argl[3], &id, er)) {
        reply_ok(c);
        ctx_notify(c, NOTIFY_STREAM, "xgroup-create", 2);
    } else {
        reply_error(c, "BUSYGROUP Consumer Group name already exists");
    }
}

/* XGROUP SETID key group id|$ [ENTRIESREAD n] */
static void xgroup_setid(cmd_ctx *c) {
    int mk;
    long long er;
    db *d;
    stream *s;
    cgroup *g;
    if (c->argc != 5 && c->argc != 7) {
        subcommand_error(c, "XGROUP");
        return;
    }
    if (!xgroup_prepare(c, 0, 1, &mk, &er, &d, &s, &g)) return;
    sid id;
    if (c->argl[4] == 1 && c->argv[4][0] == '$') id = s->last_id;
    else if (!arg_xid(c, 4, &id, 0, 0, NULL)) return;
    g->last_id = id;
    g->entries_read = er;
    reply_ok(c);
    ctx_notify(c, NOTIFY_STREAM, "xgroup-setid", 2);
}

/* XGROUP DESTROY key group */
static void xgroup_destroy(cmd_ctx *c) {
    int mk;
    long long er;
    db *d;
    stream *s;
    cgroup *g;
    if (!xgroup_prepare(c, 0, 0, &mk, &er, &d, &s, &g)) return;
    if (!g) {
        reply_int(c, 0);
        return;
    }
    stream_group_del(s, c->argv[3], c->argl[3]);
    reply_int(c, 1);
    ctx_notify(c, NOTIFY_STREAM, "xgroup-destroy", 2);
    xsignal(c, c->argv[2], c->argl[2]); /* blocked XREADGROUP clients learn the group is gone */
}

/* XGROUP CREATECONSUMER key group consumer */
static void xgroup_createconsumer(cmd_ctx *c) {
    int mk;
    long long er;
    db *d;
    stream *s;
    cgroup *g;
    if (!xgroup_prepare(c, 0, 0, &mk, &er, &d, &s, &g)) return;
    int added = cg_consumer_add(g, c->argv[4], c->argl[4], ctx_now(c)) != NULL;
    reply_int(c, added);
    if (added) ctx_notify(c, NOTIFY_STREAM, "xgroup-createconsumer", 2);
}

/* XGROUP DELCONSUMER key group consumer */
static void xgroup_delconsumer(cmd_ctx *c) {
    int mk;
    long long er;
    db *d;
    stream *s;
    cgroup *g;
    if (!xgroup_prepare(c, 0, 0, &mk, &er, &d, &s, &g)) return;
    consumer *k = cg_consumer(g, c->argv[4], c->argl[4]);
    reply_int(c, k ? (long long)cg_consumer_del(g, k) : 0);
    if (k) ctx_notify(c, NOTIFY_STREAM, "xgroup-delconsumer", 2);
}

static void xgroup_help(cmd_ctx *c) {
    static const char *lines[] = {
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Print this help.",
    };
    reply_array(c, sizeof lines / sizeof lines[0]);
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) reply_simple(c, lines[i]);
}

/* ---- XACK ---- */

/* The group argv[gi] of the stream at argv[ki]; NULL (stream too) when
 * either is missing; *wrong after a WRONGTYPE reply. */
static cgroup *find_group(cmd_ctx *c, int ki, int gi, stream **s, int *wrong) {
    db *d;
    *s = xlookup(c, ki, 1, &d, wrong);
    if (!*s) return NULL;
    return stream_group(*s, c->argv[gi], c->argl[gi]);
}

/* Parses argv[from..argc) as IDs (strict); NULL after replying. */
static sid *parse_ids(cmd_ctx *c, int from, int to, sid *stackv, size_t cap) {
    size_t n = (size_t)(to - from);
    sid *ids = n > cap ? zmalloc(sizeof(sid) * n) : stackv;
    for (int j = from; j < to; j++) {
        if (!arg_xid(c, j, &ids[j - from], 0, 1, NULL)) {
            if (ids != stackv) zfree(ids);
            return NULL;
        }
    }
    return ids;
}

/* XACK key group id [id ...] */
static void xack_cmd(cmd_ctx *c) {
    stream *s;
    int wrong;
    cgroup *g = find_group(c, 1, 2, &s, &wrong);
    if (wrong) return;
    sid sv[16];
    sid *ids = parse_ids(c, 3, c->argc, sv, 16);
    if (!ids) return;
    long long acked = 0;
    if (g) {
        for (int j = 0; j < c->argc - 3; j++) {
            if (!sidx_get(&g->pel, &ids[j])) continue;
            cg_pel_remove(g, &ids[j]);
            acked++;
        }
    }
    if (ids != sv) zfree(ids);
    reply_int(c, acked);
}

/* ---- XPENDING ---- */

/* XPENDING key group [[IDLE min-idle] start end count [consumer]] */
static void xpending_cmd(cmd_ctx *c) {
    int justinfo = c->argc == 3, sx = 0, ex = 0;
    long long count = 0, minidle = 0;
    sid start, end;
    int ci = 0;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (c->argc >= 6) {
        int si = 3;
        if (arg_is(c, 3, "idle")) {
            if (!arg_ll(c, 4, &minidle)) return;
            if (c->argc < 8) {
                reply_status(c, ST_SYNTAX);
                return;
            }
            si += 2;
        }
        if (!arg_ll(c, si + 2, &count)) return;
        if (count < 0) count = 0;
        if (!arg_xinterval(c, si, &start, &sx, 0)) return;
        if (sx && sid_incr(&start) < 0) {
            reply_error(c, "ERR invalid start ID for the interval");
            return;
        }
        if (!arg_xinterval(c, si + 1, &end, &ex, UINT64_MAX)) return;
        if (ex && sid_decr(&end) < 0) {
            reply_error(c, "ERR invalid end ID for the interval");
            return;
        }
        if (si + 3 < c->argc) ci = si + 3;
    }
    stream *s;
    int wrong;
    cgroup *g = find_group(c, 1, 2, &s, &wrong);
    if (wrong) return;
    if (!g) {
        reply_nogroup_key(c, 1, 2);
        return;
    }
    if (justinfo) {
        reply_array(c, 4);
        reply_int(c, (long long)g->pel.len);
        if (!g->pel.len) {
            reply_null(c);
            reply_null(c);
            reply_null_array(c);
            return;
        }
        reply_xid(c, &sidx_at(&g->pel, 0)->id);
        reply_xid(c, &sidx_at(&g->pel, g->pel.len - 1)->id);
        size_t at = reply_defer(c);
        long long n = 0;
        for (size_t i = 0; i < g->ncons; i++) {
            consumer *k = g->cons[i];
            if (!k->pel.len) continue;
            reply_array(c, 2);
            reply_bulk(c, k->name, k->nlen);
            reply_bulk_ll(c, (long long)k->pel.len);
            n++;
        }
        reply_defer_array(c, at, n);
        return;
    }
    const sidx *pel = &g->pel;
    if (ci) {
        consumer *k = cg_consumer(g, c->argv[ci], c->argl[ci]);
        if (!k) {
            reply_array(c, 0);
            return;
        }
        pel = &k->pel;
    }
    int64_t now = ctx_now(c);
    size_t at = reply_defer(c);
    long long n = 0;
    for (size_t i = sidx_lower(pel, &start); count && i < pel->len; i++) {
        const sidx_item *it = sidx_at(pel, i);
        if (sid_cmp(&it->id, &end) > 0) break;
        const nack *k = it->p;
        if (minidle && now - k->delivery_time < minidle) continue;
        n++;
        count--;
        int64_t el = now - k->delivery_time;
        reply_array(c, 4);
        reply_xid(c, &it->id);
        reply_bulk(c, k->consumer->name, k->consumer->nlen);
        reply_int(c, el < 0 ? 0 : el);
        reply_int(c, (long long)k->delivery_count);
    }
    reply_defer_array(c, at, n);
}

/* ---- XCLAIM / XAUTOCLAIM ---- */

/* Moves nack k (of id) to consumer `to`. */
static void move_nack(nack *k, const sid *id, consumer *to) {
    if (k->consumer == to) return;
    if (k->consumer) sidx_del(&k->consumer->pel, id);
    sidx_insert(&to->pel, sidx_lower(&to->pel, id), id, k);
    k->consumer = to;
}

static consumer *get_consumer(cmd_ctx *c, cgroup *g, int i) {
    consumer *k = cg_consumer(g, c->argv[i], c->argl[i]);
    if (!k) {
        k = cg_consumer_add(g, c->argv[i], c->argl[i], ctx_now(c));
        ctx_notify(c, NOTIFY_STREAM, "xgroup-createconsumer", 1); /* XCLAIM and XAUTOCLAIM: the key is argv[1] */
    } else {
        k->seen_time = ctx_now(c);
    }
    return k;
}

/* XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms]
 * [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id] */
static void xclaim_cmd(cmd_ctx *c) {
    stream *s;
    int wrong;
    cgroup *g = find_group(c, 1, 2, &s, &wrong);
    if (wrong) return;
    if (!g) {
        reply_nogroup_key(c, 1, 2);
        return;
    }
    long long minidle, retry = -1, dtime = -1;
    int force = 0, justid = 0;
    if (!str2ll(c->argv[4], c->argl[4], &minidle)) {
        reply_error(c, "ERR Invalid min-idle-time argument for XCLAIM");
        return;
    }
    if (minidle < 0) minidle = 0;
    int j = 5;
    for (; j < c->argc; j++) {
        sid t;
        if (xid_parse(c->argv[j], c->argl[j], &t, 0, 1, NULL) < 0) break;
    }
    int last_id_arg = j - 1;
    int64_t now = ctx_now(c);
    sid last = {0, 0};
    for (; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(c, j, "force")) {
            force = 1;
        } else if (arg_is(c, j, "justid")) {
            justid = 1;
        } else if (arg_is(c, j, "idle") && more) {
            j++;
            if (!str2ll(c->argv[j], c->argl[j], &dtime)) {
                reply_error(c, "ERR Invalid IDLE option argument for XCLAIM");
                return;
            }
            dtime = now - dtime;
        } else if (arg_is(c, j, "time") && more) {
            j++;
            if (!str2ll(c->argv[j], c->argl[j], &dtime)) {
                reply_error(c, "ERR Invalid TIME option argument for XCLAIM");
                return;
            }
        } else if (arg_is(c, j, "retrycount") && more) {
            j++;
            if (!str2ll(c->argv[j], c->argl[j], &retry)) {
                reply_error(c, "ERR Invalid RETRYCOUNT option argument for XCLAIM");
                return;
            }
        } else if (arg_is(c, j, "lastid") && more) {
            j++;
            if (!arg_xid(c, j, &last, 0, 1, NULL)) return;
        } else {
            reply_errorf(c, "ERR Unrecognized XCLAIM option '%.*s'", (int)c->argl[j], c->argv[j]);
            return;
        }
    }
    if (sid_cmp(&last, &g->last_id) > 0) g->last_id = last;
    if (dtime != -1) {
        if (dtime < 0 || dtime > now) dtime = now;
    } else {
        dtime = now;
    }
    consumer *cons = NULL;
    size_t at = reply_defer(c);
    long long n = 0;
    for (int i = 5; i <= last_id_arg; i++) {
        sid id;
        xid_parse(c->argv[i], c->argl[i], &id, 0, 1, NULL);
        nack *k = sidx_get(&g->pel, &id);
        if (!stream_has(s, &id)) {
            if (k) cg_pel_remove(g, &id);
            continue;
        }
        if (force && !k) {
            k = zcalloc(sizeof *k);
            k->delivery_time = now;
            k->delivery_count = 1;
            sidx_insert(&g->pel, sidx_lower(&g->pel, &id), &id, k);
        }
        if (!k) continue;
        if (k->consumer && minidle && now - k->delivery_time < minidle) continue;
        if (!cons) cons = get_consumer(c, g, 3);
        k->delivery_time = dtime;
        if (retry >= 0) k->delivery_count = (uint64_t)retry;
        else if (!justid) k->delivery_count++;
        move_nack(k, &id, cons);
        if (justid) reply_xid(c, &id);
        else if (!xreply_range(c, s, &id, &id, 1, 0, NULL, NULL, XR_RAW)) reply_null(c);
        n++;
    }
    reply_defer_array(c, at, n);
}

/* XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID] */
static void xautoclaim_cmd(cmd_ctx *c) {
    long long minidle, count = 100;
    int sx, justid = 0;
    sid start;
    if (!str2ll(c->argv[4], c->argl[4], &minidle)) {
        reply_error(c, "ERR Invalid min-idle-time argument for XAUTOCLAIM");
        return;
    }
    if (minidle < 0) minidle = 0;
    if (!arg_xinterval(c, 5, &start, &sx, 0)) return;
    if (sx && sid_incr(&start) < 0) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(c, j, "count") && more) {
            if (!str2ll(c->argv[j + 1], c->argl[j + 1], &count) || count < 1 || count > LONG_MAX / 10) {
                reply_error(c, "ERR COUNT must be > 0");
                return;
            }
            j++;
        } else if (arg_is(c, j, "justid")) {
            justid = 1;
        } else {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    stream *s;
    int wrong;
    cgroup *g = find_group(c, 1, 2, &s, &wrong);
    if (wrong) return;
    if (!g) {
        reply_nogroup_key(c, 1, 2);
        return;
    }
    long long attempts = count * 10;
    int64_t now = ctx_now(c);
    consumer *cons = NULL;
    buf body = {0}, *out = c->out;
    sid *deleted = zmalloc(sizeof(sid) * (size_t)(count < 1024 ? count : 1024));
    size_t ndel = 0, capdel = (size_t)(count < 1024 ? count : 1024);
    long long n = 0;
    size_t i = sidx_lower(&g->pel, &start);
    c->out = &body;
    while (attempts-- && count && i < g->pel.len) {
        sidx_item *it = sidx_at(&g->pel, i);
        sid id = it->id;
        nack *k = it->p;
        if (!stream_has(s, &id)) {
            cg_pel_remove(g, &id);
            if (ndel == capdel) {
                capdel *= 2;
                deleted = zrealloc(deleted, sizeof(sid) * capdel);
            }
            deleted[ndel++] = id;
            count--;
            continue;
        }
        i++;
        if (minidle && now - k->delivery_time < minidle) continue;
        if (!cons) cons = get_consumer(c, g, 3);
        k->delivery_time = now;
        if (!justid) k->delivery_count++;
        move_nack(k, &id, cons);
        if (justid) reply_xid(c, &id);
        else if (!xreply_range(c, s, &id, &id, 1, 0, NULL, NULL, XR_RAW)) reply_null(c);
        n++;
        count--;
    }
    c->out = out;
    sid next = i < g->pel.len ? sidx_at(&g->pel, i)->id : (sid){0, 0};
    reply_array(c, 3);
    reply_xid(c, &next);
    reply_array(c, n);
    buf_add(c->out, body.p, body.len);
    buf_free(&body);
    reply_array(c, (long long)ndel);
    for (size_t k = 0; k < ndel; k++) reply_xid(c, &deleted[k]);
    zfree(deleted);
}

/* ---- XINFO ---- */

static void reply_lag(cmd_ctx *c, const stream *s, const cgroup *g) {
    long long lag;
    if (stream_cg_lag(s, g, &lag)) reply_int(c, lag);
    else reply_null(c);
}

static void reply_entries_read(cmd_ctx *c, const cgroup *g) {
    if (g->entries_read != CG_NO_ENTRIES_READ) reply_int(c, g->entries_read);
    else reply_null(c);
}

/* Redis counts its radix tree's nodes; ours has none, so this is an
 * estimate of what a rax of the same keys would have. */
static long long rax_nodes(const stream *s) { return s->nodes.len ? (long long)s->nodes.len + 1 : 1; }

static void stream_head(cmd_ctx *c, const stream *s) {
    reply_cstr(c, "length");
    reply_int(c, (long long)s->length);
    reply_cstr(c, "radix-tree-keys");
    reply_int(c, (long long)s->nodes.len);
    reply_cstr(c, "radix-tree-nodes");
    reply_int(c, rax_nodes(s));
    reply_cstr(c, "last-generated-id");
    reply_xid(c, &s->last_id);
    reply_cstr(c, "max-deleted-entry-id");
    reply_xid(c, &s->max_deleted);
    reply_cstr(c, "entries-added");
    reply_int(c, (long long)s->entries_added);
    reply_cstr(c, "recorded-first-entry-id");
    reply_xid(c, &s->first_id);
}

static void xinfo_full(cmd_ctx *c, stream *s, long long count) {
    sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    reply_map(c, 9);
    stream_head(c, s);
    reply_cstr(c, "entries");
    xreply_range(c, s, &lo, &hi, count, 0, NULL, NULL, 0);
    reply_cstr(c, "groups");
    reply_array(c, (long long)s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) {
        cgroup *g = s->groups[i];
        reply_map(c, 7);
        reply_cstr(c, "name");
        reply_bulk(c, g->name, g->nlen);
        reply_cstr(c, "last-delivered-id");
        reply_xid(c, &g->last_id);
        reply_cstr(c, "entries-read");
        reply_entries_read(c, g);
        reply_cstr(c, "lag");
        reply_lag(c, s, g);
        reply_cstr(c, "pel-count");
        reply_int(c, (long long)g->pel.len);
        reply_cstr(c, "pending");
        size_t np = count && (size_t)count < g->pel.len ? (size_t)count : g->pel.len;
        reply_array(c, (long long)np);
        for (size_t k = 0; k < np; k++) {
            sidx_item *it = sidx_at(&g->pel, k);
            nack *nk = it->p;
            reply_array(c, 4);
            reply_xid(c, &it->id);
            reply_bulk(c, nk->consumer->name, nk->consumer->nlen);
            reply_int(c, nk->delivery_time);
            reply_int(c, (long long)nk->delivery_count);
        }
        reply_cstr(c, "consumers");
        reply_array(c, (long long)g->ncons);
        for (size_t k = 0; k < g->ncons; k++) {
            consumer *cn = g->cons[k];
            reply_map(c, 4);
            reply_cstr(c, "name");
            reply_bulk(c, cn->name, cn->nlen);
            reply_cstr(c, "seen-time");
            reply_int(c, cn->seen_time);
            reply_cstr(c, "pel-count");
            reply_int(c, (long long)cn->pel.len);
            reply_cstr(c, "pending");
            size_t cp = count && (size_t)count < cn->pel.len ? (size_t)count : cn->pel.len;
            reply_array(c, (long long)cp);
            for (size_t m = 0; m < cp; m++) {
                sidx_item *it = sidx_at(&cn->pel, m);
                nack *nk = it->p;
                reply_array(c, 3);
                reply_xid(c, &it->id);
                reply_int(c, nk->delivery_time);
                reply_int(c, (long long)nk->delivery_count);
            }
        }
    }
}

/* XINFO STREAM key [FULL [COUNT n]] */
static void xinfo_stream(cmd_ctx *c) {
    db *d;
    int wrong;
    stream *s = xlookup(c, 2, 1, &d, &wrong);
    if (wrong) return;
    if (!s) {
        reply_status(c, ST_NOKEY);
        return;
    }
    int optc = c->argc - 3;
    long long count = 10;
    if (optc) {
        if ((optc != 1 && optc != 3) || !arg_is(c, 3, "full") || (optc == 3 && !arg_is(c, 4, "count"))) {
            subcommand_error(c, "XINFO");
            return;
        }
        if (optc == 3) {
            if (!arg_ll(c, 5, &count)) return;
            if (count < 0) count = 10;
        }
        xinfo_full(c, s, count);
        return;
    }
    sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    reply_map(c, 10);
    stream_head(c, s);
    reply_cstr(c, "groups");
    reply_int(c, (long long)s->ngroups);
    reply_cstr(c, "first-entry");
    if (!xreply_range(c, s, &lo, &hi, 1, 0, NULL, NULL, XR_RAW)) reply_null(c);
    reply_cstr(c, "last-entry");
    if (!xreply_range(c, s, &lo, &hi, 1, 1, NULL, NULL, XR_RAW)) reply_null(c);
}

/* XINFO GROUPS key */
static void xinfo_groups(cmd_ctx *c) {
    db *d;
    int wrong;
    stream *s = xlookup(c, 2, 1, &d, &wrong);
    if (wrong) return;
    if (!s) {
        reply_status(c, ST_NOKEY);
        return;
    }
    reply_array(c, (long long)s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) {
        cgroup *g = s->groups[i];
        reply_map(c, 6);
        reply_cstr(c, "name");
        reply_bulk(c, g->name, g->nlen);
        reply_cstr(c, "consumers");
        reply_int(c, (long long)g->ncons);
        reply_cstr(c, "pending");
        reply_int(c, (long long)g->pel.len);
        reply_cstr(c, "last-delivered-id");
        reply_xid(c, &g->last_id);
        reply_cstr(c, "entries-read");
        reply_entries_read(c, g);
        reply_cstr(c, "lag");
        reply_lag(c, s, g);
    }
}

/* XINFO CONSUMERS key group */
static void xinfo_consumers(cmd_ctx *c) {
    db *d;
    int wrong;
    stream *s = xlookup(c, 2, 1, &d, &wrong);
    if (wrong) return;
    if (!s) {
        reply_status(c, ST_NOKEY);
        return;
    }
    cgroup *g = stream_group(s, c->argv[3], c->argl[3]);
    if (!g) {
        reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)c->argl[3], c->argv[3],
                     (int)c->argl[2], c->argv[2]);
        return;
    }
    int64_t now = ctx_now(c);
    reply_array(c, (long long)g->ncons);
    for (size_t i = 0; i < g->ncons; i++) {
        consumer *k = g->cons[i];
        int64_t idle = now - k->seen_time;
        reply_map(c, 3);
        reply_cstr(c, "name");
        reply_bulk(c, k->name, k->nlen);
        reply_cstr(c, "pending");
        reply_int(c, (long long)k->pel.len);
        reply_cstr(c, "idle");
        reply_int(c, idle < 0 ? 0 : idle);
    }
}

static void xinfo_help(cmd_ctx *c) {
    static const char *lines[] = {
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Print this help.",
    };
    reply_array(c, sizeof lines / sizeof lines[0]);
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) reply_simple(c, lines[i]);
}

/* ---- command table ---- */

#define KEY2 .first = 2, .last = 2, .step = 1
#define KEY1 .first = 1, .last = 1, .step = 1
static command xgroup_subs[] = {
    {.name = "xgroup|create", .proc = xgroup_create, .arity = -5, .flags = CMD_WRITE | CMD_DENYOOM, KEY2,
     .kflags = KS_RW | KS_INSERT,
     .group = "stream", .since = "5.0.0", .acl = "write stream slow", .summary = "Create a consumer group."},
    {.name = "xgroup|createconsumer", .proc = xgroup_createconsumer, .arity = 5, .flags = CMD_WRITE | CMD_DENYOOM,
     KEY2, .kflags = KS_RW | KS_INSERT, .group = "stream", .since = "6.2.0", .acl = "write stream slow",
     .summary = "Create a consumer in a consumer group."},
    {.name = "xgroup|delconsumer", .proc = xgroup_delconsumer, .arity = 5, .flags = CMD_WRITE, KEY2,
     .kflags = KS_RW | KS_DELETE,
     .group = "stream", .since = "5.0.0", .acl = "write stream slow",
     .summary = "Delete a consumer from a consumer group."},
    {.name = "xgroup|destroy", .proc = xgroup_destroy, .arity = 4, .flags = CMD_WRITE, KEY2,
     .kflags = KS_RW | KS_DELETE, .group = "stream",
     .since = "5.0.0", .acl = "write stream slow", .summary = "Destroy a consumer group."},
    {.name = "xgroup|help", .proc = xgroup_help, .arity = 2, .flags = CMD_LOADING | CMD_STALE, .group = "stream",
     .since = "5.0.0", .acl = "stream slow", .summary = "Show helpful text about the different subcommands"},
    {.name = "xgroup|setid", .proc = xgroup_setid, .arity = -5, .flags = CMD_WRITE, KEY2, .kflags = KS_RW | KS_UPDATE,
     .group = "stream",
     .since = "5.0.0", .acl = "write stream slow", .summary = "Set a consumer group to an arbitrary last delivered ID value."},
};
static command xinfo_subs[] = {
    {.name = "xinfo|consumers", .proc = xinfo_consumers, .arity = 4, .flags = CMD_READONLY, KEY2,
     .kflags = KS_RO | KS_ACCESS,
     .group = "stream", .since = "5.0.0", .acl = "read stream slow", .summary = "List the consumers in a consumer group"},
    {.name = "xinfo|groups", .proc = xinfo_groups, .arity = 3, .flags = CMD_READONLY, KEY2,
     .kflags = KS_RO | KS_ACCESS, .group = "stream",
     .since = "5.0.0", .acl = "read stream slow", .summary = "List the consumer groups of a stream"},
    {.name = "xinfo|help", .proc = xinfo_help, .arity = 2, .flags = CMD_LOADING | CMD_STALE, .group = "stream",
     .since = "5.0.0", .acl = "stream slow", .summary = "Show helpful text about the different subcommands"},
    {.name = "xinfo|stream", .proc = xinfo_stream, .arity = -3, .flags = CMD_READONLY, KEY2,
     .kflags = KS_RO | KS_ACCESS, .group = "stream",
     .since = "5.0.0", .acl = "read stream slow", .summary = "Get information about a stream"},
};
static const command rows[] = {
    {.name = "xgroup", .arity = -2, .group = "stream", .since = "5.0.0", .acl = "slow",
     .summary = "A container for consumer groups commands", .subs = xgroup_subs,
     .nsubs = (int)(sizeof xgroup_subs / sizeof xgroup_subs[0])},
    {.name = "xinfo", .arity = -2, .group = "stream", .since = "5.0.0", .acl = "slow",
     .summary = "A container for stream introspection commands", .subs = xinfo_subs,
     .nsubs = (int)(sizeof xinfo_subs / sizeof xinfo_subs[0])},
    {.name = "xack", .proc = xack_cmd, .arity = -4, .flags = CMD_WRITE | CMD_FAST, KEY1, .kflags = KS_RW | KS_UPDATE,
     .group = "stream",
     .since = "5.0.0", .acl = "write stream fast",
     .summary = "Marks a pending message as correctly processed, effectively removing it from the pending entries "
                "list of the consumer group. Return value of the command is the number of messages successfully "
                "acknowledged, that is, the IDs we were actually able to resolve in the PEL."},
    {.name = "xpending", .proc = xpending_cmd, .arity = -3, .flags = CMD_READONLY, KEY1, .kflags = KS_RO | KS_ACCESS,
     .group = "stream",
     .since = "5.0.0", .acl = "read stream slow",
     .summary = "Return information and entries from a stream consumer group pending entries list, that are "
                "messages fetched but never acknowledged."},
    {.name = "xclaim", .proc = xclaim_cmd, .arity = -6, .flags = CMD_WRITE | CMD_FAST, KEY1,
     .kflags = KS_RW | KS_UPDATE, .group = "stream",
     .since = "5.0.0", .acl = "write stream fast",
     .summary = "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered "
                "to the specified consumer."},
    {.name = "xautoclaim", .proc = xautoclaim_cmd, .arity = -6, .flags = CMD_WRITE | CMD_FAST, KEY1,
     .kflags = KS_RW | KS_DELETE,
     .group = "stream", .since = "6.2.0", .acl = "write stream fast",
     .summary = "Changes (or acquires) ownership of messages in a consumer group, as if the messages were "
                "delivered to the specified consumer."},
};

void stream_cg_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
