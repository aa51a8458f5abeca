/* expire.c - EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL EXPIRETIME
 * PEXPIRETIME PERSIST.
 *
 * A deadline is an absolute time in ms kept in the entry (entry.h); the
 * setters turn seconds or relative times into it, refuse values that would
 * overflow, and delete the key at once when the deadline is not in the
 * future (Redis replies 1 then). Readers round seconds as Redis does:
 * (ms + 500) / 1000. */
#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "persist/aof.h"
#include "shard/db.h"
#include <limits.h>

enum { EXP_NX = 1, EXP_XX = 2, EXP_GT = 4, EXP_LT = 8 };

/* Parses NX XX GT LT from argv[3..]; replies the error and returns 0 on an
 * unknown or incompatible option. */
static int expire_flags(cmd_ctx *c, int *flags) {
    *flags = 0;
    for (int i = 3; i < c->argc; i++) {
        if (arg_is(c, i, "nx")) *flags |= EXP_NX;
        else if (arg_is(c, i, "xx")) *flags |= EXP_XX;
        else if (arg_is(c, i, "gt")) *flags |= EXP_GT;
        else if (arg_is(c, i, "lt")) *flags |= EXP_LT;
        else {
            reply_errorf(c, "ERR Unsupported option %.*s", (int)c->argl[i], c->argv[i]);
            return 0;
        }
    }
    if ((*flags & EXP_NX) && (*flags & (EXP_XX | EXP_GT | EXP_LT))) {
        reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return 0;
    }
    if ((*flags & EXP_GT) && (*flags & EXP_LT)) {
        reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return 0;
    }
    return 1;
}

/* argv[2] as an absolute deadline in ms; replies the error, returns 0. */
static int expire_deadline(cmd_ctx *c, int unit_sec, int relative, int64_t *when) {
    long long v;
    if (!arg_ll(c, 2, &v)) return 0;
    int bad = unit_sec && (v > LLONG_MAX / 1000 || v < LLONG_MIN / 1000);
    if (!bad && unit_sec) v *= 1000;
    if (!bad && relative) {
        bad = v > LLONG_MAX - ctx_now(c);
        if (!bad) v += ctx_now(c);
    }
    if (bad) {
        reply_errorf(c, "ERR invalid expire time in '%s' command", c->cmd->name);
        return 0;
    }
    *when = v;
    return 1;
}

/* Whether the flags let `when` replace the current deadline (-1: none;
 * no deadline counts as an infinite one for GT and LT). */
static int expire_allowed(int flags, int64_t cur, int64_t when) {
    if ((flags & EXP_NX) && cur >= 0) return 0;
    if ((flags & EXP_XX) && cur < 0) return 0;
    if ((flags & EXP_GT) && (cur < 0 || when <= cur)) return 0;
    if ((flags & EXP_LT) && cur >= 0 && when >= cur) return 0;
    return 1;
}

static void expire_generic(cmd_ctx *c, int unit_sec, int relative) {
    int flags;
    int64_t when;
    if (!expire_flags(c, &flags) || !expire_deadline(c, unit_sec, relative, &when)) return;
    db *d = ctx_db(c, c->argv[1], c->argl[1]);
    entry **link = db_find_link(d, c->argv[1], c->argl[1], ctx_now(c));
    if (!link || !expire_allowed(flags, entry_expire(*link), when)) {
        reply_int(c, 0);
        return;
    }
    if (when <= ctx_now(c) && !aof_loading) { /* AOF: replay keeps it (as Redis) */
        db_delete_link(d, link);
        ctx_notify(c, NOTIFY_GENERIC, "del", 1);
    } else {
        db_set_expire(d, link, when);
        ctx_notify(c, NOTIFY_GENERIC, "expire", 1);
    }
    reply_int(c, 1);
}

/* EXPIRE key seconds [NX|XX|GT|LT] */
static void expire_cmd(cmd_ctx *c) { expire_generic(c, 1, 1); }
/* PEXPIRE key milliseconds [NX|XX|GT|LT] */
static void pexpire_cmd(cmd_ctx *c) { expire_generic(c, 0, 1); }
/* EXPIREAT key unix-time-seconds [NX|XX|GT|LT] */
static void expireat_cmd(cmd_ctx *c) { expire_generic(c, 1, 0); }
/* PEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT] */
static void pexpireat_cmd(cmd_ctx *c) { expire_generic(c, 0, 0); }

/* -2: no key, -1: no deadline, else the remaining (or absolute) time. */
static void ttl_generic(cmd_ctx *c, int in_ms, int absolute) {
    entry *e = db_find(ctx_db(c, c->argv[1], c->argl[1]), c->argv[1], c->argl[1], ctx_now(c));
    if (!e || !entry_has_ttl(e)) {
        reply_int(c, e ? -1 : -2);
        return;
    }
    int64_t t = absolute ? entry_expire(e) : entry_expire(e) - ctx_now(c);
    if (t < 0) t = 0;
    /* (t + 500) / 1000 without overflowing near LLONG_MAX */
    reply_int(c, in_ms ? t : t / 1000 + (t % 1000 >= 500));
}

/* TTL key */
static void ttl_cmd(cmd_ctx *c) { ttl_generic(c, 0, 0); }
/* PTTL key */
static void pttl_cmd(cmd_ctx *c) { ttl_generic(c, 1, 0); }
/* EXPIRETIME key */
static void expiretime_cmd(cmd_ctx *c) { ttl_generic(c, 0, 1); }
/* PEXPIRETIME key */
static void pexpiretime_cmd(cmd_ctx *c) { ttl_generic(c, 1, 1); }

/* PERSIST key */
static void persist_cmd(cmd_ctx *c) {
    db *d = ctx_db(c, c->argv[1], c->argl[1]);
    entry **link = db_find_link(d, c->argv[1], c->argl[1], ctx_now(c));
    if (!link || !entry_has_ttl(*link)) {
        reply_int(c, 0);
        return;
    }
    db_set_expire(d, link, -1);
    reply_int(c, 1);
    ctx_notify(c, NOTIFY_GENERIC, "persist", 1);
}

#define KEY1 .first = 1, .last = 1, .step = 1, .group = "generic"
#define WRITE_FAST .flags = CMD_WRITE | CMD_FAST, .acl = "keyspace write fast"
#define READ_FAST .flags = CMD_READONLY | CMD_FAST, .acl = "keyspace read fast"
static const command rows[] = {
    {.name = "expire", .proc = expire_cmd, .arity = -3, WRITE_FAST, KEY1, .kflags = KS_RW | KS_UPDATE, .since = "1.0.0",
     .summary = "Set a key's time to live in seconds"},
    {.name = "pexpire", .proc = pexpire_cmd, .arity = -3, WRITE_FAST, KEY1, .kflags = KS_RW | KS_UPDATE,
     .since = "2.6.0",
     .summary = "Set a key's time to live in milliseconds"},
    {.name = "expireat", .proc = expireat_cmd, .arity = -3, WRITE_FAST, KEY1, .kflags = KS_RW | KS_UPDATE,
     .since = "1.2.0",
     .summary = "Set the expiration for a key as a UNIX timestamp"},
    {.name = "pexpireat", .proc = pexpireat_cmd, .arity = -3, WRITE_FAST, KEY1, .kflags = KS_RW | KS_UPDATE,
     .since = "2.6.0",
     .summary = "Set the expiration for a key as a UNIX timestamp specified in milliseconds"},
    {.name = "ttl", .proc = ttl_cmd, .arity = 2, READ_FAST, KEY1, .kflags = KS_RO | KS_ACCESS, .since = "1.0.0",
     .summary = "Get the time to live for a key in seconds"},
    {.name = "pttl", .proc = pttl_cmd, .arity = 2, READ_FAST, KEY1, .kflags = KS_RO | KS_ACCESS, .since = "2.6.0",
     .summary = "Get the time to live for a key in milliseconds"},
    {.name = "expiretime", .proc = expiretime_cmd, .arity = 2, READ_FAST, KEY1, .kflags = KS_RO | KS_ACCESS,
     .since = "7.0.0",
     .summary = "Get the expiration Unix timestamp for a key"},
    {.name = "pexpiretime", .proc = pexpiretime_cmd, .arity = 2, READ_FAST, KEY1, .kflags = KS_RO | KS_ACCESS,
     .since = "7.0.0",
     .summary = "Get the expiration Unix timestamp for a key in milliseconds"},
    {.name = "persist", .proc = persist_cmd, .arity = 2, WRITE_FAST, KEY1, .kflags = KS_RW | KS_UPDATE,
     .since = "2.2.0",
     .summary = "Remove the expiration from a key"},
};

void expire_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
