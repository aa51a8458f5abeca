/* keys.c - generic keyspace commands: DEL UNLINK EXISTS TYPE KEYS DBSIZE
 * FLUSHDB FLUSHALL ... Commands over every shard carry CMD_ALLSHARDS and
 * run under a transaction holding every shard, walking ctx_shards. */
#include "cmd/cmd.h"
#include "server/config.h"
#include "shard/shard.h"

/* DEL key [key ...], UNLINK key [key ...] */
static void del_cmd(cmd_ctx *c) {
    long long n = 0;
    for (int i = 1; i < c->argc; i++) n += db_delete(ctx_db(c, c->argv[i], c->argl[i]), c->argv[i], c->argl[i], ctx_now(c));
    reply_int(c, n);
}

/* EXISTS key [key ...] (a key named twice counts twice) */
static void exists_cmd(cmd_ctx *c) {
    long long n = 0;
    for (int i = 1; i < c->argc; i++) n += db_find(ctx_db(c, c->argv[i], c->argl[i]), c->argv[i], c->argl[i], ctx_now(c)) != NULL;
    reply_int(c, n);
}

/* DBSIZE */
static void dbsize_cmd(cmd_ctx *c) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    long long total = 0;
    for (int i = 0; i < n; i++) total += (long long)db_size(ctx_shard_db(c, ids[i], c->dbid));
    reply_int(c, total);
}

static int flush_mode(cmd_ctx *c, int from) {
    if (c->argc > from + 1 || (c->argc == from + 1 && !arg_is(c, from, "async") && !arg_is(c, from, "sync"))) {
        reply_status(c, ST_SYNTAX);
        return -1;
    }
    return 0;
}

/* FLUSHDB [ASYNC|SYNC] */
static void flushdb_cmd(cmd_ctx *c) {
    if (flush_mode(c, 1) < 0) return;
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    for (int i = 0; i < n; i++) db_clear(ctx_shard_db(c, ids[i], c->dbid));
    reply_ok(c);
}

/* FLUSHALL [ASYNC|SYNC] */
static void flushall_cmd(cmd_ctx *c) {
    if (flush_mode(c, 1) < 0) return;
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    for (int i = 0; i < n; i++) {
        shard *s = shards[ids[i]];
        for (int d = 0; s->dbs && d < (int)cfg.databases_i; d++) db_clear(&s->dbs[d]);
    }
    reply_ok(c);
}

struct keys_walk {
    cmd_ctx *c;
    const char *pat;
    size_t plen;
    int all;
    long long n;
    int64_t now;
};

static void keys_visit(void *ud, entry *e) {
    struct keys_walk *w = ud;
    size_t kl;
    const uint8_t *k = entry_keyp(e, &kl);
    if (entry_has_ttl(e) && w->now > entry_expire(e)) return;
    if (w->all || glob_match(w->pat, w->plen, (const char *)k, kl, 0)) {
        reply_bulk(w->c, (const char *)k, kl);
        w->n++;
    }
}

/* KEYS pattern */
static void keys_cmd(cmd_ctx *c) {
    struct keys_walk w = {c, c->argv[1], c->argl[1], c->argl[1] == 1 && c->argv[1][0] == '*', 0, ctx_now(c)};
    size_t at = reply_defer(c);
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    for (int i = 0; i < n; i++) {
        db *d = ctx_shard_db(c, ids[i], c->dbid);
        uint64_t cur = 0;
        do cur = table_scan(d->t, cur, keys_visit, &w);
        while (cur);
    }
    reply_defer_array(c, at, w.n);
}

/* TYPE key */
static void type_cmd(cmd_ctx *c) {
    entry *e = db_find(ctx_db(c, c->argv[1], c->argl[1]), c->argv[1], c->argl[1], ctx_now(c));
    if (!e) {
        reply_simple(c, "none");
        return;
    }
    if (entry_type(e) == T_STRING) {
        reply_simple(c, "string");
        return;
    }
    const type_ops *o = db_type_ops(entry_type(e));
    reply_simple(c, o ? o->name : "unknown");
}

static const command rows[] = {
    {.name = "del", .proc = del_cmd, .arity = -2, .flags = CMD_WRITE, .first = 1, .last = -1, .step = 1,
     .group = "generic", .since = "1.0.0", .acl = "keyspace write slow", .summary = "Delete a key"},
    {.name = "unlink", .proc = del_cmd, .arity = -2, .flags = CMD_WRITE | CMD_FAST, .first = 1, .last = -1,
     .step = 1, .group = "generic", .since = "4.0.0", .acl = "keyspace write fast",
     .summary = "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking."},
    {.name = "exists", .proc = exists_cmd, .arity = -2, .flags = CMD_READONLY | CMD_FAST, .first = 1, .last = -1,
     .step = 1, .group = "generic", .since = "1.0.0", .acl = "keyspace read fast", .summary = "Determine if a key exists"},
    {.name = "dbsize", .proc = dbsize_cmd, .arity = 1, .flags = CMD_READONLY | CMD_FAST | CMD_ALLSHARDS,
     .group = "server", .since = "1.0.0", .acl = "keyspace read fast",
     .summary = "Return the number of keys in the selected database"},
    {.name = "flushdb", .proc = flushdb_cmd, .arity = -1, .flags = CMD_WRITE | CMD_ALLSHARDS, .group = "server",
     .since = "1.0.0", .acl = "keyspace write slow dangerous", .summary = "Remove all keys from the current database"},
    {.name = "flushall", .proc = flushall_cmd, .arity = -1, .flags = CMD_WRITE | CMD_ALLSHARDS, .group = "server",
     .since = "1.0.0", .acl = "keyspace write slow dangerous", .summary = "Remove all keys from all databases"},
    {.name = "keys", .proc = keys_cmd, .arity = 2, .flags = CMD_READONLY | CMD_ALLSHARDS, .group = "generic",
     .since = "1.0.0", .acl = "keyspace read slow dangerous", .summary = "Find all keys matching the given pattern"},
    {.name = "type", .proc = type_cmd, .arity = 2, .flags = CMD_READONLY | CMD_FAST, .first = 1, .last = 1,
     .step = 1, .group = "generic", .since = "1.0.0", .acl = "keyspace read fast",
     .summary = "Determine the type stored at key"},
};

void keys_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
