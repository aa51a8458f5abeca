/* string.c - the string commands: GET SET and friends, counters, ranges,
 * MGET/MSET/MSETNX. Values live inline in the keyspace entry (entry.h). */
#include "cmd/string.h"
#include "cmd/cmd.h"
#include "shard/shard.h"
#include <limits.h>

void string_set(db *d, const char *key, size_t klen, const char *val, size_t vlen, int64_t ttl, int keep_ttl,
                int64_t now) {
    entry **link = db_find_link(d, key, klen, now);
    if (!link) {
        db_add(d, entry_new_str(key, klen, val, vlen, keep_ttl ? -1 : ttl, 1));
        return;
    }
    entry *old = *link;
    if (keep_ttl) ttl = entry_expire(old);
    long long iv;
    int is_int = vlen <= 20 && str2ll(val, vlen, &iv);
    int kind = entry_kind(old);
    if (entry_type(old) == T_STRING && entry_has_ttl(old) == (ttl >= 0)) {
        if (is_int && kind == EK_INT) {
            entry_set_int(old, iv);
            if (ttl >= 0) entry_put_expire(old, ttl);
            return;
        }
        if (!is_int && (kind == EK_EMB || kind == EK_RAW)) {
            uint8_t *v = entry_valp(old);
            uint64_t l;
            size_t h = varint_get(v, &l);
            if (l == vlen && (kind == EK_EMB) == (vlen <= EMBSTR_MAX)) {
                memcpy(v + h, val, vlen);
                if (ttl >= 0) entry_put_expire(old, ttl);
                return;
            }
        }
    }
    db_replace(d, link, entry_new_str(key, klen, val, vlen, ttl, 1), 0);
}

void string_replace_raw(db *d, entry **link, const char *val, size_t vlen) {
    size_t kl;
    const uint8_t *k = entry_keyp(*link, &kl);
    entry *n = entry_new_raw((const char *)k, kl, val, vlen, entry_expire(*link));
    db_replace(d, link, n, 0);
}

static void reply_entry_str(cmd_ctx *c, const entry *e) {
    char tmp[24];
    size_t n;
    const char *p = entry_str(e, tmp, &n);
    reply_bulk(c, p, n);
}

/* GET key */
static void get_cmd(cmd_ctx *c) {
    db *d = ctx_db(c, c->argv[1], c->argl[1]);
    entry *e = db_find(d, c->argv[1], c->argl[1], ctx_now(c));
    if (!e) {
        c->sh->stat_misses++;
        reply_null(c);
        return;
    }
    c->sh->stat_hits++;
    if (entry_type(e) != T_STRING) {
        reply_status(c, ST_WRONGTYPE);
        return;
    }
    entry_touch(e, c->sh->lru_clock);
    reply_entry_str(c, e);
}

/* Parses EX/PX/EXAT/PXAT's number into an absolute ms deadline; replies the
 * error and returns 0 on a bad value. */
static int parse_expire(cmd_ctx *c, int i, int unit_sec, int absolute, int64_t *out) {
    long long v;
    if (!arg_ll(c, i, &v)) return 0;
    if (v <= 0 || (unit_sec && v > LLONG_MAX / 1000)) {
        reply_errorf(c, "ERR invalid expire time in '%s' command", c->cmd->name);
        return 0;
    }
    if (unit_sec) v *= 1000;
    if (!absolute) {
        if (v > LLONG_MAX - ctx_now(c)) {
            reply_errorf(c, "ERR invalid expire time in '%s' command", c->cmd->name);
            return 0;
        }
        v += ctx_now(c);
    }
    *out = v;
    return 1;
}

enum { SET_NX = 1, SET_XX = 2, SET_GET = 4, SET_KEEPTTL = 8, SET_EX = 16 };

/* SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms|KEEPTTL] */
static void set_cmd(cmd_ctx *c) {
    int flags = 0;
    int64_t when = -1;
    int exp_at = 0, exp_unit = 0, exp_abs = 0;
    for (int i = 3; i < c->argc; i++) {
        int has_next = i + 1 < c->argc;
        if (arg_is(c, i, "nx") && !(flags & SET_XX)) flags |= SET_NX;
        else if (arg_is(c, i, "xx") && !(flags & SET_NX)) flags |= SET_XX;
        else if (arg_is(c, i, "get")) flags |= SET_GET;
        else if (arg_is(c, i, "keepttl") && !(flags & SET_EX)) flags |= SET_KEEPTTL;
        else if (!(flags & (SET_EX | SET_KEEPTTL)) && has_next &&
                 (arg_is(c, i, "ex") || arg_is(c, i, "px") || arg_is(c, i, "exat") || arg_is(c, i, "pxat"))) {
            flags |= SET_EX;
            exp_unit = arg_is(c, i, "ex") || arg_is(c, i, "exat");
            exp_abs = arg_is(c, i, "exat") || arg_is(c, i, "pxat");
            exp_at = ++i;
        } else {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    if (exp_at && !parse_expire(c, exp_at, exp_unit, exp_abs, &when)) return;
    const char *key = c->argv[1];
    size_t kl = c->argl[1];
    db *d = ctx_db(c, key, kl);
    entry *old = db_find(d, key, kl, ctx_now(c));
    if ((flags & SET_GET) && old && entry_type(old) != T_STRING) {
        reply_status(c, ST_WRONGTYPE);
        return;
    }
    int skip = ((flags & SET_NX) && old) || ((flags & SET_XX) && !old);
    if (flags & SET_GET) {
        if (old) reply_entry_str(c, old);
        else reply_null(c);
    }
    if (skip) {
        if (!(flags & SET_GET)) reply_null(c);
        return;
    }
    string_set(d, key, kl, c->argv[2], c->argl[2], when, (flags & SET_KEEPTTL) != 0, ctx_now(c));
    if (!(flags & SET_GET)) reply_ok(c);
}

/* MGET key [key ...] */
static void mget_cmd(cmd_ctx *c) {
    reply_array(c, c->argc - 1);
    for (int i = 1; i < c->argc; i++) {
        db *d = ctx_db(c, c->argv[i], c->argl[i]);
        entry *e = db_find(d, c->argv[i], c->argl[i], ctx_now(c));
        if (!e || entry_type(e) != T_STRING) {
            if (!e) c->sh->stat_misses++;
            reply_null(c);
        } else {
            c->sh->stat_hits++;
            reply_entry_str(c, e);
        }
    }
}

/* MSET key value [key value ...] */
static void mset_cmd(cmd_ctx *c) {
    if (c->argc % 2 == 0) {
        reply_arity(c);
        return;
    }
    for (int i = 1; i < c->argc; i += 2) {
        db *d = ctx_db(c, c->argv[i], c->argl[i]);
        string_set(d, c->argv[i], c->argl[i], c->argv[i + 1], c->argl[i + 1], -1, 0, ctx_now(c));
    }
    reply_ok(c);
}

/* MSETNX key value [key value ...] */
static void msetnx_cmd(cmd_ctx *c) {
    if (c->argc % 2 == 0) {
        reply_arity(c);
        return;
    }
    for (int i = 1; i < c->argc; i += 2)
        if (db_find(ctx_db(c, c->argv[i], c->argl[i]), c->argv[i], c->argl[i], ctx_now(c))) {
            reply_int(c, 0);
            return;
        }
    for (int i = 1; i < c->argc; i += 2) {
        db *d = ctx_db(c, c->argv[i], c->argl[i]);
        string_set(d, c->argv[i], c->argl[i], c->argv[i + 1], c->argl[i + 1], -1, 0, ctx_now(c));
    }
    reply_int(c, 1);
}

#define RW CMD_WRITE | CMD_DENYOOM
static const command rows[] = {
    {.name = "get", .proc = get_cmd, .arity = 2, .flags = CMD_READONLY | CMD_FAST, .first = 1, .last = 1, .step = 1,
     .group = "string", .since = "1.0.0", .acl = "read string fast", .summary = "Get the value of a key"},
    {.name = "set", .proc = set_cmd, .arity = -3, .flags = RW, .first = 1, .last = 1, .step = 1, .group = "string",
     .since = "1.0.0", .acl = "write string slow", .summary = "Set the string value of a key"},
    {.name = "mget", .proc = mget_cmd, .arity = -2, .flags = CMD_READONLY | CMD_FAST, .first = 1, .last = -1,
     .step = 1, .group = "string", .since = "1.0.0", .acl = "read string fast",
     .summary = "Get the values of all the given keys"},
    {.name = "mset", .proc = mset_cmd, .arity = -3, .flags = RW, .first = 1, .last = -1, .step = 2,
     .group = "string", .since = "1.0.1", .acl = "write string slow",
     .summary = "Set multiple keys to multiple values"},
    {.name = "msetnx", .proc = msetnx_cmd, .arity = -3, .flags = RW, .first = 1, .last = -1, .step = 2,
     .group = "string", .since = "1.0.1", .acl = "write string slow",
     .summary = "Set multiple keys to multiple values, only if none of the keys exist"},
};

void string_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
