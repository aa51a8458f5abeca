/* stream_read.c - XREAD and XREADGROUP, blocking through shard/block.h.
 *
 * The handler serves what it can at once, as Redis's xreadCommand. With
 * BLOCK and nothing to serve it blocks on every key (type T_STREAM); before
 * that the "$" IDs of XREAD become the stream's last ID in the copy of the
 * command that waits, so when an XADD wakes the client the same handler,
 * run again in serve mode for that key, finds entries after that ID. An
 * XREADGROUP ">" waits as it is: it always means "after the group's last
 * delivered ID". Inside MULTI (and where no connection can wait) BLOCK
 * answers the timeout reply at once, as Redis does. */
#include "cmd/notify.h"
#include "cmd/families.h"
#include "cmd/stream.h"
#include "lib/mem.h"
#include "shard/block.h"
#include <string.h>

#define XREAD_BLOCKED_COUNT 1000

/* STREAMS position of XREAD / XREADGROUP (0 when absent). */
static int streams_pos(int argc, const char **argv, const size_t *argl) {
    for (int i = 1; i < argc; i++) {
        if (str_eq_ci(argv[i], argl[i], "streams")) return i + 1;
        if (str_eq_ci(argv[i], argl[i], "group")) i += 2;
        else if (str_eq_ci(argv[i], argl[i], "block") || str_eq_ci(argv[i], argl[i], "count")) i++;
    }
    return 0;
}

static int xread_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    int sp = streams_pos(argc, argv, argl);
    if (!sp) return 0;
    int n = (argc - sp) / 2, w = 0;
    for (int i = 0; i < n && w < max; i++) pos[w++] = sp + i;
    return w;
}

typedef struct xread_args {
    long long count;
    int64_t deadline;
    int block, noack, streams, nstreams, gi; /* gi: argv index of GROUP's name (0: none) */
} xread_args;

static int parse_xread(cmd_ctx *c, int group_cmd, xread_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        if (arg_is(c, i, "block") && more) {
            i++;
            long long ms;
            if (!str2ll(c->argv[i], c->argl[i], &ms)) {
                reply_status(c, ST_NOTINT_TIMEOUT);
                return 0;
            }
            if (ms < 0) {
                reply_error(c, "ERR timeout is negative");
                return 0;
            }
            a->block = 1;
            a->deadline = ms == 0 ? 0 : ctx_now(c) + ms;
        } else if (arg_is(c, i, "count") && more) {
            i++;
            if (!arg_ll(c, i, &a->count)) return 0;
            if (a->count < 0) a->count = 0;
        } else if (arg_is(c, i, "streams") && more) {
            a->streams = i + 1;
            int n = c->argc - a->streams;
            if (n % 2) {
                reply_errorf(c,
                             "ERR Unbalanced '%s' list of streams: for each stream key an ID or '%c' must be "
                             "specified.",
                             group_cmd ? "xreadgroup" : "xread", group_cmd ? '>' : '$');
                return 0;
            }
            a->nstreams = n / 2;
            break;
        } else if (arg_is(c, i, "group") && more >= 2) {
            if (!group_cmd) {
                reply_error(c, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return 0;
            }
            a->gi = i + 1;
            i += 2;
        } else if (arg_is(c, i, "noack")) {
            if (!group_cmd) {
                reply_error(c, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return 0;
            }
            a->noack = 1;
        } else {
            reply_status(c, ST_SYNTAX);
            return 0;
        }
    }
    if (!a->streams) {
        reply_status(c, ST_SYNTAX);
        return 0;
    }
    if (group_cmd && !a->gi) {
        reply_error(c, "ERR Missing GROUP option for XREADGROUP");
        return 0;
    }
    return 1;
}

static int is_word(cmd_ctx *c, int i, char ch) { return c->argl[i] == 1 && c->argv[i][0] == ch; }

static void xread_generic(cmd_ctx *c, int group_cmd) {
    xread_args a;
    if (!parse_xread(c, group_cmd, &a)) return;
    int n = a.nstreams, ks = a.streams, is = a.streams + a.nstreams;
    sid stackids[8], *ids = n > 8 ? zmalloc(sizeof(sid) * (size_t)n) : stackids;
    cgroup *stackg[8], **groups = n > 8 ? zmalloc(sizeof(cgroup *) * (size_t)n) : stackg;
    int ok = 1;
    for (int k = 0; k < n && ok; k++) {
        int ii = is + k;
        db *d;
        int wrong;
        groups[k] = NULL;
        if (!block_key_wanted(c, ks + k)) continue; /* serve mode: only the ready key is ours */
        if (c->serve_key) { /* woken: the key may be gone or hold another type now */
            entry **l = ctx_lookup(c, ks + k, 1, &d);
            if (!l || entry_type(*l) != T_STREAM) {
                if (group_cmd) reply_error(c, "UNBLOCKED the stream key no longer exists");
                ok = 0;
                break;
            }
        }
        stream *s = xlookup(c, ks + k, 1, &d, &wrong);
        if (wrong) {
            ok = 0;
            break;
        }
        if (a.gi) {
            if (!s || !(groups[k] = stream_group(s, c->argv[a.gi], c->argl[a.gi]))) {
                reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s' in XREADGROUP with GROUP option",
                             (int)c->argl[ks + k], c->argv[ks + k], (int)c->argl[a.gi], c->argv[a.gi]);
                ok = 0;
                break;
            }
        }
        if (is_word(c, ii, '$')) {
            if (group_cmd) {
                reply_error(c, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
                               "history of this consumer by specifying a proper ID, or use the > ID to get new "
                               "messages. The $ ID would just return an empty result set.");
                ok = 0;
                break;
            }
            ids[k] = s ? s->last_id : (sid){0, 0};
        } else if (is_word(c, ii, '>')) {
            if (!group_cmd) {
                reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
                               "<consumer> option.");
                ok = 0;
                break;
            }
            ids[k] = (sid){UINT64_MAX, UINT64_MAX};
        } else if (!arg_xid(c, ii, &ids[k], 0, 1, NULL)) {
            ok = 0;
        }
    }
    if (!ok) goto done;
    long long served = 0;
    size_t at = reply_defer(c);
    long long count = a.count;
    if (c->serve_key && !count) count = XREAD_BLOCKED_COUNT;
    for (int k = 0; k < n; k++) {
        if (!block_key_wanted(c, ks + k)) continue;
        db *d;
        int wrong;
        stream *s = xlookup(c, ks + k, 1, &d, &wrong);
        if (!s) continue;
        sid gt = ids[k];
        int now_ = 0, history = 0;
        consumer *cons = NULL;
        if (groups[k]) {
            if (gt.ms != UINT64_MAX || gt.seq != UINT64_MAX) {
                now_ = history = 1;
            } else if (s->length) {
                sid top;
                stream_last(s, &top);
                if (sid_cmp(&top, &groups[k]->last_id) > 0) {
                    now_ = 1;
                    gt = groups[k]->last_id;
                }
            }
        } else if (s->length) {
            sid top;
            stream_last(s, &top);
            if (sid_cmp(&top, &gt) > 0) now_ = 1;
        }
        if (!now_) continue;
        if (groups[k]) { /* the consumer comes with the first entries it is served (Redis 7.0), not with a block */
            int ci = a.gi + 1;
            cons = cg_consumer(groups[k], c->argv[ci], c->argl[ci]);
            if (!cons) {
                cons = cg_consumer_add(groups[k], c->argv[ci], c->argl[ci], ctx_now(c));
                ctx_notify(c, NOTIFY_STREAM, "xgroup-createconsumer", ks + k);
            }
            cons->seen_time = ctx_now(c);
        }
        served++;
        sid start = gt;
        sid_incr(&start);
        if (c->resp == 2) reply_array(c, 2);
        reply_bulk(c, c->argv[ks + k], c->argl[ks + k]);
        xreply_range(c, s, &start, NULL, count, 0, groups[k], cons,
                     (a.noack ? XR_NOACK : 0) | (history ? XR_HISTORY : 0));
    }
    if (served) {
        if (c->resp == 2) reply_defer_array(c, at, served);
        else reply_defer_map(c, at, served);
        goto done;
    }
    if (!a.block) {
        reply_null_array(c);
        goto done;
    }
    /* Block: the waiting copy of the command names the IDs it waits after. */
    const char **argv = c->argv;
    const size_t *argl = c->argl;
    const char **nv = zmalloc(sizeof(char *) * (size_t)c->argc);
    size_t *nl = zmalloc(sizeof(size_t) * (size_t)c->argc);
    char *idtext = zmalloc((size_t)n * 48);
    memcpy(nv, argv, sizeof(char *) * (size_t)c->argc);
    memcpy(nl, argl, sizeof(size_t) * (size_t)c->argc);
    int *kpos = zmalloc(sizeof(int) * (size_t)n);
    for (int k = 0; k < n; k++) {
        kpos[k] = ks + k;
        if (!group_cmd && is_word(c, is + k, '$')) {
            nv[is + k] = idtext + 48 * k;
            nl[is + k] = (size_t)sid_fmt(idtext + 48 * k, &ids[k]);
        }
    }
    c->argv = nv;
    c->argl = nl;
    block_client(c, kpos, n, T_STREAM, a.deadline, BLOCK_NULL_ARRAY);
    c->argv = argv;
    c->argl = argl;
    zfree(kpos);
    zfree(idtext);
    zfree(nl);
    zfree(nv);
done:
    if (ids != stackids) zfree(ids);
    if (groups != stackg) zfree(groups);
}

/* XREAD [COUNT n] [BLOCK ms] STREAMS key [key ...] id [id ...] */
static void xread_cmd(cmd_ctx *c) { xread_generic(c, 0); }

/* XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key [key ...] id [id ...] */
static void xreadgroup_cmd(cmd_ctx *c) { xread_generic(c, 1); }

static const command rows[] = {
    {.name = "xread", .proc = xread_cmd, .arity = -4, .flags = CMD_READONLY | CMD_BLOCKING | CMD_MOVABLEKEYS,
     .keys = xread_keys,
     KEY_SPECS({KS_RO | KS_ACCESS, KS_KEYWORD("STREAMS", 1), KS_RANGE(-1, 1, 2)}),
     .group = "stream", .since = "5.0.0", .acl = "read stream slow blocking",
     .summary = "Return never seen elements in multiple streams, with IDs greater than the ones reported by the "
                "caller for each stream. Can block."},
    {.name = "xreadgroup", .proc = xreadgroup_cmd, .arity = -7,
     .flags = CMD_WRITE | CMD_BLOCKING | CMD_MOVABLEKEYS, .keys = xread_keys,
     KEY_SPECS({KS_RO | KS_ACCESS, KS_KEYWORD("STREAMS", 4), KS_RANGE(-1, 1, 2)}),
     .group = "stream", .since = "5.0.0",
     .acl = "write stream slow blocking",
     .summary = "Return new entries from a stream using a consumer group, or access the history of the pending "
                "entries for a given consumer. Can block."},
};

void stream_read_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
