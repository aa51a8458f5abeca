/* ctx.c - the execution context helpers of cmd.h: database lookup per key,
 * error replies, argument parsing. */
#include "cmd/cmd.h"
#include "cmd/notify.h"
#include "lib/util.h"
#include "shard/cmdstats.h"
#include "shard/evict.h"
#include "shard/pause.h"
#include "shard/shard.h"
#include <stdarg.h>
#include <stdio.h>

db *ctx_db(cmd_ctx *c, const char *key, size_t klen) {
    if (__builtin_expect(c->scratch != NULL, 0)) return c->scratch;
    if (!c->tx) return &c->sh->dbs[c->dbid];
    return &shards[shard_of_key(key, klen)]->dbs[c->dbid];
}

db *ctx_shard_db(cmd_ctx *c, int s, int dbid) { return &shards[s]->dbs[dbid]; }

int ctx_shards(cmd_ctx *c, int *ids) {
    if (!c->tx) {
        ids[0] = c->sh->id;
        return 1;
    }
    for (int i = 0; i < nshards; i++) ids[i] = i;
    return nshards;
}

int64_t ctx_now(cmd_ctx *c) { return c->sh->now_ms; }

entry **ctx_lookup(cmd_ctx *c, int i, int reading, db **dp) {
    db *d = ctx_db(c, c->argv[i], c->argl[i]);
    entry **l;
    if (reading && __builtin_expect(pause_type(ctx_now(c)) != PAUSE_OFF, 0))
        l = db_find_link_kept(d, c->argv[i], c->argl[i], ctx_now(c)); /* a pause deletes nothing */
    else
        l = db_find_link(d, c->argv[i], c->argl[i], ctx_now(c));
    if (reading) {
        if (l) c->sh->stat_hits++;
        else {
            c->sh->stat_misses++;
            ctx_notify(c, NOTIFY_KEY_MISS, "keymiss", i);
        }
    }
    if (l) evict_touch(c->sh, *l); /* LRU clock or LFU counter */
    if (dp) *dp = d;
    return l;
}

int ctx_wrong_type(cmd_ctx *c, const entry *e, int type) {
    if (!e || entry_type(e) == type) return 0;
    reply_status(c, ST_WRONGTYPE);
    return 1;
}

void reply_error(cmd_ctx *c, const char *msg) {
    resp_error(c->out, msg);
    cmdstats_error(c->sh, msg);
}

void reply_errorf(cmd_ctx *c, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    reply_error(c, tmp);
}

static void defer_len(cmd_ctx *c, size_t at, char type, long long n) {
    char tmp[32];
    tmp[0] = type;
    int l = 1 + ll2str(tmp + 1, n);
    tmp[l++] = '\r';
    tmp[l++] = '\n';
    buf_insert(c->out, at, tmp, (size_t)l);
}

void reply_defer_array(cmd_ctx *c, size_t at, long long n) { defer_len(c, at, '*', n); }
void reply_defer_map(cmd_ctx *c, size_t at, long long pairs) {
    if (c->resp >= 3) defer_len(c, at, '%', pairs);
    else defer_len(c, at, '*', pairs * 2);
}
void reply_defer_set(cmd_ctx *c, size_t at, long long n) { defer_len(c, at, c->resp >= 3 ? '~' : '*', n); }

void reply_status(cmd_ctx *c, int st) {
    switch (st) {
    case ST_OK: reply_ok(c); break;
    case ST_WRONGTYPE: reply_error(c, "WRONGTYPE Operation against a key holding the wrong kind of value"); break;
    case ST_NOTINT: reply_error(c, "ERR value is not an integer or out of range"); break;
    case ST_OVERFLOW: reply_error(c, "ERR increment or decrement would overflow"); break;
    case ST_SYNTAX: reply_error(c, "ERR syntax error"); break;
    case ST_NOTFLOAT: reply_error(c, "ERR value is not a valid float"); break;
    case ST_NOKEY: reply_error(c, "ERR no such key"); break;
    case ST_RANGE: reply_error(c, "ERR index out of range"); break;
    case ST_TOOBIG: reply_error(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)"); break;
    case ST_BADBIT: reply_error(c, "ERR bit offset is not an integer or out of range"); break;
    case ST_DBRANGE: reply_error(c, "ERR DB index is out of range"); break;
    case ST_NAN: reply_error(c, "ERR increment would produce NaN or Infinity"); break;
    case ST_NOTINT_TIMEOUT: reply_error(c, "ERR timeout is not an integer or out of range"); break;
    default: reply_error(c, "ERR internal error"); break;
    }
}

void reply_help_lines(cmd_ctx *c, const char *const *lines, int n) {
    reply_array(c, n);
    for (int i = 0; i < n; i++) reply_simple(c, lines[i]);
}

void reply_arity(cmd_ctx *c) { reply_errorf(c, "ERR wrong number of arguments for '%s' command", c->cmd->name); }

int arg_ll(cmd_ctx *c, int i, long long *v) {
    if (i < c->argc && str2ll(c->argv[i], c->argl[i], v)) return 1;
    reply_status(c, ST_NOTINT);
    return 0;
}

int arg_double(cmd_ctx *c, int i, double *v) {
    if (i < c->argc && str2d(c->argv[i], c->argl[i], v)) return 1;
    reply_status(c, ST_NOTFLOAT);
    return 0;
}

int arg_ld(cmd_ctx *c, int i, long double *v) {
    if (i < c->argc && str2ld(c->argv[i], c->argl[i], v)) return 1;
    reply_status(c, ST_NOTFLOAT);
    return 0;
}

int arg_cursor(cmd_ctx *c, int i, uint64_t *cur) {
    if (i < c->argc && str2cursor(c->argv[i], c->argl[i], cur)) return 1;
    reply_error(c, "ERR invalid cursor");
    return 0;
}

int arg_scan_options(cmd_ctx *c, int from, const char **pat, size_t *plen, long long *count) {
    for (int i = from; i < c->argc; i += 2) {
        if (i + 1 >= c->argc) {
            reply_status(c, ST_SYNTAX);
            return 0;
        }
        if (arg_is(c, i, "count")) {
            if (!arg_ll(c, i + 1, count)) return 0;
            if (*count < 1) {
                reply_status(c, ST_SYNTAX);
                return 0;
            }
        } else if (arg_is(c, i, "match")) {
            int all = c->argl[i + 1] == 1 && c->argv[i + 1][0] == '*';
            *pat = all ? NULL : c->argv[i + 1];
            *plen = c->argl[i + 1];
        } else {
            reply_status(c, ST_SYNTAX);
            return 0;
        }
    }
    return 1;
}

int arg_count_option(cmd_ctx *c, int from, long long *count) {
    int seen = 0;
    for (int j = from; j < c->argc; j += 2) {
        if (seen || !arg_is(c, j, "count") || j + 1 >= c->argc) {
            reply_status(c, ST_SYNTAX);
            return 0;
        }
        if (!str2ll(c->argv[j + 1], c->argl[j + 1], count) || *count < 1) {
            reply_error(c, "ERR count should be greater than 0");
            return 0;
        }
        seen = 1;
    }
    return 1;
}
