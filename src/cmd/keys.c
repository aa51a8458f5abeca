/* keys.c - generic keyspace commands: DEL UNLINK EXISTS TYPE TOUCH KEYS
 * SCAN RANDOMKEY DBSIZE FLUSHDB FLUSHALL SWAPDB RENAME RENAMENX COPY MOVE,
 * and the OBJECT container (MEMORY is memory.c's).
 *
 * Commands over every shard carry CMD_ALLSHARDS and run under a transaction
 * holding every shard, walking ctx_shards. Two-key commands (RENAME, COPY)
 * whose keys land on different shards run under a transaction of both, so
 * ctx_db finds each key's table. SCAN is keyless but belongs to one shard:
 * the cursor carries the shard index (scan_route), and each call walks only
 * that shard's table. */
#include "cmd/cmd.h"
#include "cmd/cross.h"
#include "cmd/persist.h"
#include "persist/snapshot.h"
#include "shard/block.h"
#include "shard/tracking.h"
#include "shard/tx.h"
#include "shard/watch.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/lazyfree.h"
#include "shard/evict.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include "cmd/notify.h"
#include <limits.h>

/* DEL key [key ...], UNLINK key [key ...] */
static void del_cmd(cmd_ctx *c) {
    long long n = 0;
    int was = lazyfree_cause(c->cmd->name[0] == 'u' ? LF_UNLINK : LF_USER_DEL);
    for (int i = 1; i < c->argc; i++) {
        if (!db_delete(ctx_db(c, c->argv[i], c->argl[i]), c->argv[i], c->argl[i], ctx_now(c))) continue;
        n++;
        ctx_notify(c, NOTIFY_GENERIC, "del", i);
    }
    lazyfree_cause(was);
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
    if (c->argc == from) return cfg_get(lazyfree_lazy_user_flush) != 0; /* neither: the directive decides */
    return arg_is(c, from, "async");
}

/* FLUSHDB [ASYNC|SYNC] */
static void flushdb_cmd(cmd_ctx *c) {
    int async = flush_mode(c, 1);
    if (async < 0) return;
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    for (int i = 0; i < n; i++) {
        db *d = ctx_shard_db(c, ids[i], c->dbid);
        watch_touch_live(d, -1, ctx_now(c));
        (async ? db_clear_async : db_clear)(d);
    }
    tracking_flush_all(c->sess ? tracking_word(c->sess, c->cmd) : c->client);
    reply_ok(c);
}

/* FLUSHALL [ASYNC|SYNC] */
static void flushall_cmd(cmd_ctx *c) {
    int async = flush_mode(c, 1);
    if (async < 0) return;
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    int saving = snap_running_kind() == SNAP_RDB; /* an AOF rewrite goes on: FLUSHALL is in its incr file */
    if (saving) snap_abort(); /* as Redis, which kills its saving child */
    for (int i = 0; i < n; i++) {
        shard *s = shards[ids[i]];
        for (int d = 0; s->dbs && d < (int)cfg.databases_i; d++) {
            watch_touch_live(&s->dbs[d], -1, ctx_now(c));
            (async ? db_clear_async : db_clear)(&s->dbs[d]);
        }
    }
    if (saving) snap_drop_parts(ids, n);
    tracking_flush_all(c->sess ? tracking_word(c->sess, c->cmd) : c->client);
    if (cfg.save_s && *cfg.save_s) persist_save(c); /* the empty dataset replaces the file, as Redis's */
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

/* TOUCH key [key ...] */
static void touch_cmd(cmd_ctx *c) {
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        entry *e = db_find(ctx_db(c, c->argv[i], c->argl[i]), c->argv[i], c->argl[i], ctx_now(c));
        if (!e) continue;
        evict_touch(c->sh, e);
        n++;
    }
    reply_int(c, n);
}

/* The TYPE name of an entry ("string", "list", ...). */
static const char *type_name(const entry *e) {
    if (entry_type(e) == T_STRING) return "string";
    const type_ops *o = db_type_ops(entry_type(e));
    return o ? o->name : "unknown";
}

/* Parses a database index argument as Redis's getIntFromObjectOrReply plus
 * the range check; replies the error and returns 0 when it is bad. */
static int arg_dbindex(cmd_ctx *c, int i, int *id) {
    long long v;
    if (!arg_ll(c, i, &v)) return 0;
    if (v < INT_MIN || v > INT_MAX) {
        reply_error(c, "ERR value is out of range, value must between -2147483648 and 2147483647");
        return 0;
    }
    if (v < 0 || v >= cfg.databases_i) {
        reply_status(c, ST_DBRANGE);
        return 0;
    }
    *id = (int)v;
    return 1;
}

/* Database `dbid` on the shard that holds key. */
static db *key_db(cmd_ctx *c, const char *key, size_t klen, int dbid) {
    db *d = ctx_db(c, key, klen);
    return d->owner ? &d->owner->dbs[dbid] : d;
}

/* ---- SCAN ---- */

/* Routes SCAN to the shard named by its cursor (-1: bad cursor, run locally
 * so the handler replies the error). */
static int scan_route(int argc, const char **argv, const size_t *argl, int n) {
    uint64_t cur;
    if (argc < 2 || !str2cursor(argv[1], argl[1], &cur)) return -1;
    if (cur == 0 && n > 1) {
        /* A keyspace COUNT covers (every shard's count as its last loop
         * turn left it): one call walks it all, as Redis's first SCAN of a
         * small database returns every key and cursor 0. */
        long long count = 10;
        for (int i = 2; i + 1 < argc; i += 2)
            if (str_eq_ci(argv[i], argl[i], "count") && !str2ll(argv[i + 1], argl[i + 1], &count)) count = 0;
        uint64_t keys = 0;
        for (int i = 0; i < n; i++) keys += __atomic_load_n(&shards[i]->pub_keys, __ATOMIC_RELAXED);
        if (count > 0 && keys <= (uint64_t)count) return ROUTE_ALL;
    }
    return (int)(cur % (uint64_t)n);
}

struct scan_walk {
    buf keys;        /* the reply's key bulks */
    long long n;     /* keys in `keys` */
    long long seen;  /* entries visited (COUNT budget) */
    const char *pat; /* MATCH, or NULL */
    size_t plen;
    const char *type; /* TYPE, or NULL */
    size_t tlen;
    int64_t now;
    buf expired; /* keys found expired (length, bytes): deleted after the walk, as Redis's SCAN does */
};

static void scan_visit(void *ud, entry *e) {
    struct scan_walk *w = ud;
    size_t kl;
    const char *k = (const char *)entry_keyp(e, &kl);
    w->seen++;
    if (entry_has_ttl(e) && w->now > entry_expire(e)) {
        buf_add(&w->expired, &kl, sizeof kl);
        buf_add(&w->expired, k, kl);
        return;
    }
    if (w->pat && !glob_match(w->pat, w->plen, k, kl, 0)) return;
    if (w->type && !str_eq_ci(w->type, w->tlen, type_name(e))) return;
    resp_bulk(&w->keys, k, kl);
    w->n++;
}

/* Parses SCAN's options into w and *count; replies the error, returns 0. */
static int scan_options(cmd_ctx *c, struct scan_walk *w, long long *count) {
    for (int i = 2; i < c->argc; i += 2) {
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
            w->pat = all ? NULL : c->argv[i + 1];
            w->plen = c->argl[i + 1];
        } else if (arg_is(c, i, "type")) {
            w->type = c->argv[i + 1];
            w->tlen = c->argl[i + 1];
        } else {
            reply_status(c, ST_SYNTAX);
            return 0;
        }
    }
    return 1;
}

/* SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
 * cursor = table cursor * nshards + shard index. */
static void scan_cmd(cmd_ctx *c) {
    uint64_t cur;
    if (!str2cursor(c->argv[1], c->argl[1], &cur)) {
        reply_error(c, "ERR invalid cursor");
        return;
    }
    struct scan_walk w = {.now = ctx_now(c)};
    long long count = 10;
    if (!scan_options(c, &w, &count)) return;
    /* Routing put us on the cursor's shard; only a transaction may reach
     * another one, and one holding every shard goes on into the next
     * shards while the budget lasts. */
    int s = c->tx ? (int)(cur % (uint64_t)nshards) : c->sh->id;
    int all = c->tx && c->tx->n == nshards;
    uint64_t tcur = cur / (uint64_t)nshards;
    long long steps = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10; /* bounds empty buckets */
    for (;;) {
        db *d = ctx_shard_db(c, s, c->dbid);
        do tcur = table_scan(d->t, tcur, scan_visit, &w);
        while (tcur && w.seen < count && --steps > 0);
        /* the expired keys it met go now (their DELs are logged and replicated) */
        for (size_t at = 0; at < w.expired.len;) {
            size_t kl;
            memcpy(&kl, w.expired.p + at, sizeof kl);
            db_find(d, w.expired.p + at + sizeof kl, kl, w.now);
            at += sizeof kl + kl;
        }
        w.expired.len = 0;
        if (tcur || !all || s + 1 >= nshards || w.seen >= count || steps <= 0) break;
        s++;
    }
    uint64_t next;
    if (tcur) next = tcur * (uint64_t)nshards + (uint64_t)s;
    else next = s + 1 < nshards ? (uint64_t)(s + 1) : 0;
    char num[24];
    reply_array(c, 2);
    reply_bulk(c, num, (size_t)ull2str(num, next));
    reply_array(c, w.n);
    if (w.keys.len) buf_add(c->out, w.keys.p, w.keys.len);
    buf_free(&w.keys);
    buf_free(&w.expired);
}

/* ---- RANDOMKEY ---- */

/* table_random takes a plain function: it draws from the executing shard. */
static _Thread_local shard *rnd_shard;
static uint64_t rnd_next(void) { return shard_rand(rnd_shard); }

/* One random entry of database dbid over the shards held, weighted by
 * their sizes; NULL when every one is empty. */
static entry *random_entry(cmd_ctx *c, db **where) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    size_t total = 0;
    for (int i = 0; i < n; i++) total += db_size(ctx_shard_db(c, ids[i], c->dbid));
    if (total == 0) return NULL;
    rnd_shard = c->sh;
    size_t r = (size_t)(shard_rand(c->sh) % total);
    for (int i = 0; i < n; i++) {
        db *d = ctx_shard_db(c, ids[i], c->dbid);
        if (r < db_size(d)) {
            *where = d;
            return table_random(d->t, rnd_next);
        }
        r -= db_size(d);
    }
    return NULL;
}

/* RANDOMKEY */
static void randomkey_cmd(cmd_ctx *c) {
    int64_t now = ctx_now(c);
    for (;;) {
        db *d = NULL;
        entry *e = random_entry(c, &d);
        if (!e) {
            reply_null(c);
            return;
        }
        size_t kl;
        const char *k = (const char *)entry_keyp(e, &kl);
        if (!entry_has_ttl(e) || now <= entry_expire(e)) {
            reply_bulk(c, k, kl);
            return;
        }
        db_delete(d, k, kl, now); /* expired: every turn removes one key */
    }
}

/* ---- SWAPDB ---- */

static int swapdb_index(cmd_ctx *c, int i, const char *which, int *id) {
    long long v;
    if (!str2ll(c->argv[i], c->argl[i], &v) || v < INT_MIN || v > INT_MAX) {
        reply_errorf(c, "ERR invalid %s DB index", which);
        return 0;
    }
    *id = (int)v;
    return 1;
}

/* SWAPDB index1 index2 */
static void swapdb_cmd(cmd_ctx *c) {
    int a, b;
    if (!swapdb_index(c, 1, "first", &a) || !swapdb_index(c, 2, "second", &b)) return;
    if (a < 0 || a >= cfg.databases_i || b < 0 || b >= cfg.databases_i) {
        reply_status(c, ST_DBRANGE);
        return;
    }
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    for (int i = 0; a != b && i < n; i++) {
        db *x = ctx_shard_db(c, ids[i], a), *y = ctx_shard_db(c, ids[i], b);
        watch_touch_live(x, b, ctx_now(c));
        watch_touch_live(y, a, ctx_now(c));
        db tmp = *x;
        x->t = y->t;
        x->expires = y->expires;
        x->expire_cursor = y->expire_cursor;
        x->avg_ttl = y->avg_ttl;
        y->t = tmp.t;
        y->expires = tmp.expires;
        y->expire_cursor = tmp.expire_cursor;
        y->avg_ttl = tmp.avg_ttl;
        block_signal_db(x);
        block_signal_db(y);
    }
    reply_ok(c);
}

/* ---- RENAME, COPY, MOVE ---- */

/* Moves the entry at link in `from` to `to` under key (TTL kept). */
static void move_entry(db *from, entry **link, db *to, const char *key, size_t klen) {
    entry *e = db_take(from, link);
    entry *n = entry_rekey(e, key, klen, entry_expire(e));
    zfree(e); /* n now holds e's object, if any */
    db_add(to, n);
}

static void rename_generic(cmd_ctx *c, int nx) {
    const char *sk = c->argv[1], *dk = c->argv[2];
    size_t sl = c->argl[1], dl = c->argl[2];
    int64_t now = ctx_now(c);
    db *sd = ctx_db(c, sk, sl), *dd = ctx_db(c, dk, dl);
    if (!db_find(sd, sk, sl, now)) {
        reply_status(c, ST_NOKEY);
        return;
    }
    if (sl == dl && memcmp(sk, dk, sl) == 0) {
        if (nx) reply_int(c, 0);
        else reply_ok(c);
        return;
    }
    entry **old = db_find_link(dd, dk, dl, now);
    if (old && nx) {
        reply_int(c, 0);
        return;
    }
    if (old) db_delete_link(dd, old);
    /* Links are only valid until the next call on the table: look again. */
    move_entry(sd, db_find_link(sd, sk, sl, now), dd, dk, dl);
    if (nx) reply_int(c, 1);
    else reply_ok(c);
    ctx_notify(c, NOTIFY_GENERIC, "rename_from", 1);
    ctx_notify(c, NOTIFY_GENERIC, "rename_to", 2);
}

/* RENAME key newkey */
static void rename_cmd(cmd_ctx *c) { rename_generic(c, 0); }

/* RENAMENX key newkey */
static void renamenx_cmd(cmd_ctx *c) { rename_generic(c, 1); }

/* COPY source destination [DB destination-db] [REPLACE] */
static void copy_cmd(cmd_ctx *c) {
    int dbid = c->dbid, replace = 0;
    for (int i = 3; i < c->argc; i++) {
        if (arg_is(c, i, "replace")) {
            replace = 1;
        } else if (arg_is(c, i, "db") && i + 1 < c->argc) {
            if (!arg_dbindex(c, ++i, &dbid)) return;
        } else {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    const char *sk = c->argv[1], *dk = c->argv[2];
    size_t sl = c->argl[1], dl = c->argl[2];
    if (dbid == c->dbid && sl == dl && memcmp(sk, dk, sl) == 0) {
        reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    int64_t now = ctx_now(c);
    db *sd = ctx_db(c, sk, sl), *dd = key_db(c, dk, dl, dbid);
    if (!db_find(sd, sk, sl, now)) {
        reply_int(c, 0);
        return;
    }
    entry **old = db_find_link(dd, dk, dl, now);
    if (old && !replace) {
        reply_int(c, 0);
        return;
    }
    if (old) db_delete_link(dd, old);
    entry *src = db_find(sd, sk, sl, now); /* again: dd may be sd's table */
    db_add(dd, entry_copy(src, dk, dl, entry_expire(src)));
    reply_int(c, 1);
    notify_key(NOTIFY_GENERIC, "copy_to", dk, dl, dbid);
}

/* MOVE key db */
static void move_cmd(cmd_ctx *c) {
    int dbid;
    if (!arg_dbindex(c, 2, &dbid)) return;
    if (dbid == c->dbid) {
        reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    const char *k = c->argv[1];
    size_t kl = c->argl[1];
    int64_t now = ctx_now(c);
    db *sd = ctx_db(c, k, kl), *dd = key_db(c, k, kl, dbid);
    entry **link = db_find_link(sd, k, kl, now);
    if (!link || db_find(dd, k, kl, now)) {
        reply_int(c, 0);
        return;
    }
    db_add(dd, db_take(sd, link)); /* dd is another table: link still valid */
    reply_int(c, 1);
    ctx_notify(c, NOTIFY_GENERIC, "move_from", 1);
    notify_key(NOTIFY_GENERIC, "move_to", k, kl, dbid);
}

/* ---- OBJECT ---- */

static entry *object_key(cmd_ctx *c) {
    entry *e = db_find(ctx_db(c, c->argv[2], c->argl[2]), c->argv[2], c->argl[2], ctx_now(c));
    if (!e) reply_null(c);
    return e;
}

static int policy_has(const char *what) {
    return cfg.maxmemory_policy_s && strstr(cfg.maxmemory_policy_s, what) != NULL;
}

/* OBJECT ENCODING key */
static void object_encoding(cmd_ctx *c) {
    entry *e = object_key(c);
    if (e) reply_cstr(c, entry_encoding(e));
}

/* OBJECT REFCOUNT key: Redis shares the integers 0..9999 (refcount
 * INT_MAX) unless an LRU/LFU policy with a maxmemory limit is set. */
static void object_refcount(cmd_ctx *c) {
    entry *e = object_key(c);
    if (!e) return;
    int shared = entry_type(e) == T_STRING && entry_kind(e) == EK_INT && entry_int(e) >= 0 &&
                 entry_int(e) < 10000 && !(cfg.maxmemory_i > 0 && (policy_has("lru") || policy_has("lfu")));
    reply_int(c, shared ? INT_MAX : 1);
}

/* OBJECT IDLETIME key */
static void object_idletime(cmd_ctx *c) {
    entry *e = object_key(c);
    if (!e) return;
    if (policy_has("lfu")) {
        reply_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
                       "switching between policies at runtime LRU and LFU data will take some time to adjust.");
        return;
    }
    uint32_t now = (uint32_t)(ctx_now(c) / 1000) & LRU_CLOCK_MAX, then = entry_lru(e);
    reply_int(c, now >= then ? now - then : now + (LRU_CLOCK_MAX - then));
}

/* OBJECT FREQ key: the LFU counter after its decay */
static void object_freq(cmd_ctx *c) {
    entry *e = object_key(c);
    if (!e) return;
    if (!policy_has("lfu")) {
        reply_error(c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
                       "that when switching between policies at runtime LRU and LFU data will take some time to "
                       "adjust.");
        return;
    }
    reply_int(c, (long long)evict_lfu_count(e, ctx_now(c)));
}


/* OBJECT HELP */
static void object_help(cmd_ctx *c) {
    static const char *const lines[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    };
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

#define KEY2 .first = 2, .last = 2, .step = 1
static command object_subs[] = {
    {.name = "object|encoding", .proc = object_encoding, .arity = 3, .flags = CMD_READONLY, KEY2, .kflags = KS_RO,
     .group = "generic", .since = "2.2.3", .acl = "keyspace read slow",
     .summary = "Inspect the internal encoding of a Redis object"},
    {.name = "object|freq", .proc = object_freq, .arity = 3, .flags = CMD_READONLY, KEY2, .kflags = KS_RO,
     .group = "generic",
     .since = "4.0.0", .acl = "keyspace read slow",
     .summary = "Get the logarithmic access frequency counter of a Redis object"},
    {.name = "object|idletime", .proc = object_idletime, .arity = 3, .flags = CMD_READONLY, KEY2, .kflags = KS_RO,
     .group = "generic", .since = "2.2.3", .acl = "keyspace read slow",
     .summary = "Get the time since a Redis object was last accessed"},
    {.name = "object|refcount", .proc = object_refcount, .arity = 3, .flags = CMD_READONLY, KEY2, .kflags = KS_RO,
     .group = "generic", .since = "2.2.3", .acl = "keyspace read slow",
     .summary = "Get the number of references to the value of the key"},
    {.name = "object|help", .proc = object_help, .arity = 2, .flags = CMD_LOADING | CMD_STALE, .group = "generic",
     .since = "6.2.0", .acl = "keyspace slow", .summary = "Show helpful text about the different subcommands"},
};

/* TYPE key */
static void type_cmd(cmd_ctx *c) {
    entry *e = db_find(ctx_db(c, c->argv[1], c->argl[1]), c->argv[1], c->argl[1], ctx_now(c));
    reply_simple(c, e ? type_name(e) : "none");
}

static const command rows[] = {
    {.name = "del", .proc = del_cmd, .arity = -2, .flags = CMD_WRITE, .first = 1, .last = -1, .step = 1,
     .kflags = KS_RM | KS_DELETE, .split = SPLIT_SUM,
     .group = "generic", .since = "1.0.0", .acl = "keyspace write slow", .summary = "Delete a key"},
    {.name = "unlink", .proc = del_cmd, .arity = -2, .flags = CMD_WRITE | CMD_FAST, .first = 1, .last = -1,
     .step = 1, .kflags = KS_RM | KS_DELETE, .split = SPLIT_SUM, .group = "generic", .since = "4.0.0",
     .acl = "keyspace write fast",
     .summary = "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking."},
    {.name = "exists", .proc = exists_cmd, .arity = -2, .flags = CMD_READONLY | CMD_FAST, .first = 1, .last = -1,
     .step = 1, .kflags = KS_RO, .split = SPLIT_SUM, .group = "generic", .since = "1.0.0",
     .acl = "keyspace read fast", .summary = "Determine if a key exists"},
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
     .step = 1, .kflags = KS_RO, .group = "generic", .since = "1.0.0", .acl = "keyspace read fast",
     .summary = "Determine the type stored at key"},
    {.name = "touch", .proc = touch_cmd, .arity = -2, .flags = CMD_READONLY | CMD_FAST, .first = 1, .last = -1,
     .step = 1, .kflags = KS_RO, .split = SPLIT_SUM, .group = "generic", .since = "3.2.1", .acl = "keyspace read fast",
     .summary = "Alters the last access time of a key(s). Returns the number of existing keys specified."},
    {.name = "scan", .proc = scan_cmd, .arity = -2, .flags = CMD_READONLY | CMD_RANDOM, .route = scan_route,
     .group = "generic", .since = "2.8.0", .acl = "keyspace read slow", .summary = "Incrementally iterate the keys space"},
    {.name = "randomkey", .proc = randomkey_cmd, .arity = 1, .flags = CMD_READONLY | CMD_ALLSHARDS,
     .group = "generic", .since = "1.0.0", .acl = "keyspace read slow", .summary = "Return a random key from the keyspace"},
    {.name = "swapdb", .proc = swapdb_cmd, .arity = 3, .flags = CMD_WRITE | CMD_FAST | CMD_ALLSHARDS, .group = "server",
     .since = "4.0.0", .acl = "keyspace write fast dangerous", .summary = "Swaps two Redis databases"},
    {.name = "rename", .proc = rename_cmd, .arity = 3, .flags = CMD_WRITE, .first = 1, .last = 2, .step = 1,
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_OW | KS_UPDATE, KS_INDEX(2), KS_RANGE(0, 1, 0)}),
     .hops = cross_rename,
     .group = "generic", .since = "1.0.0", .acl = "keyspace write slow", .summary = "Rename a key"},
    {.name = "renamenx", .proc = renamenx_cmd, .arity = 3, .flags = CMD_WRITE | CMD_FAST, .first = 1, .last = 2,
     .step = 1,
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_OW | KS_INSERT, KS_INDEX(2), KS_RANGE(0, 1, 0)}),
     .hops = cross_rename, .group = "generic", .since = "1.0.0", .acl = "keyspace write fast",
     .summary = "Rename a key, only if the new key does not exist"},
    {.name = "copy", .hops = cross_gather, .proc = copy_cmd, .arity = -3, .flags = CMD_WRITE | CMD_DENYOOM, .first = 1, .last = 2,
     .step = 1,
     KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_OW | KS_UPDATE, KS_INDEX(2), KS_RANGE(0, 1, 0)}),
     .group = "generic", .since = "6.2.0", .acl = "keyspace write slow", .summary = "Copy a key"},
    {.name = "move", .proc = move_cmd, .arity = 3, .flags = CMD_WRITE | CMD_FAST, .first = 1, .last = 1, .step = 1,
     .kflags = KS_RW | KS_ACCESS | KS_UPDATE,
     .group = "generic", .since = "1.0.0", .acl = "keyspace write fast", .summary = "Move a key to another database"},
    {.name = "object", .arity = -2, .group = "generic", .since = "2.2.3", .acl = "slow",
     .summary = "A container for object introspection commands", .subs = object_subs,
     .nsubs = (int)(sizeof object_subs / sizeof object_subs[0])},
};

void keys_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
