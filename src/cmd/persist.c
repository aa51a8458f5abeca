/* persist.c - SAVE, LASTSAVE, DUMP, RESTORE, and the DEBUG RELOAD and INFO
 * persistence helpers (persist.h), over the RDB codec of persist/rdb.h.
 *
 * SAVE is CMD_ALLSHARDS: it runs under a lock of every shard and writes
 * each database once with the keys of every shard. DUMP and RESTORE are
 * single-key commands run on the key's shard. Writes since the last save
 * are counted per shard by the dispatcher (shard.dirty). */
#include "cmd/persist.h"
#include "cmd/cmd.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/shard.h"
#include <limits.h>
#include <string.h>

typedef struct save_ctx {
    cmd_ctx *c;
    int ids[MAX_SHARDS];
    int n;
} save_ctx;

static db *save_db(void *ud, int s, int dbid) {
    save_ctx *x = ud;
    return ctx_shard_db(x->c, x->ids[s], dbid);
}

int persist_save(cmd_ctx *c) {
    save_ctx x = {.c = c};
    x.n = ctx_shards(c, x.ids);
    char err[512];
    int64_t t0 = mono_us();
    if (rdb_save(cfg.dbfilename_s, x.n, save_db, &x, ctx_now(c), err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        rdb_last_save_ok = 0;
        return -1;
    }
    for (int i = 0; i < x.n; i++)
        shards[x.ids[i]]->dirty = 0;
    rdb_last_save_time = mstime() / 1000;
    rdb_last_save_ok = 1;
    rdb_saves++;
    log_msg(LOG_NOTICE, "DB saved on disk (%.3f seconds)", (double)(mono_us() - t0) / 1e6);
    return 0;
}

/* SAVE */
static void save_cmd(cmd_ctx *c) {
    if (persist_save(c) < 0)
        reply_error(c, "ERR");
    else
        reply_ok(c);
}

static int64_t last_save(void) { return rdb_last_save_time ? rdb_last_save_time : engine_start_time_ms() / 1000; }

/* LASTSAVE */
static void lastsave_cmd(cmd_ctx *c) { reply_int(c, last_save()); }

/* DUMP key */
static void dump_cmd(cmd_ctx *c) {
    entry **l = ctx_lookup(c, 1, 1, NULL);
    if (!l) {
        reply_null(c);
        return;
    }
    buf out = {0};
    rdb_dump(&out, *l);
    reply_bulk(c, out.p, out.len);
    buf_free(&out);
}

typedef struct restore_opts {
    int replace, absttl;
    long long idle, freq;
} restore_opts;

/* REPLACE, ABSTTL, IDLETIME s, FREQ f from argv[4] on; 0 ok, else -1
 * after replying the error. */
static int restore_options(cmd_ctx *c, restore_opts *o) {
    o->replace = o->absttl = 0;
    o->idle = o->freq = -1;
    for (int j = 4; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(c, j, "replace")) {
            o->replace = 1;
        } else if (arg_is(c, j, "absttl")) {
            o->absttl = 1;
        } else if (arg_is(c, j, "idletime") && more >= 1 && o->freq == -1) {
            if (!arg_ll(c, ++j, &o->idle)) return -1;
            if (o->idle < 0) {
                reply_error(c, "ERR Invalid IDLETIME value, must be >= 0");
                return -1;
            }
        } else if (arg_is(c, j, "freq") && more >= 1 && o->idle == -1) {
            if (!arg_ll(c, ++j, &o->freq)) return -1;
            if (o->freq < 0 || o->freq > 255) {
                reply_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return -1;
            }
        } else {
            reply_status(c, ST_SYNTAX);
            return -1;
        }
    }
    return 0;
}

/* The LRU clock of a key idle for `idle` seconds. */
static uint32_t idle_clock(cmd_ctx *c, long long idle) {
    uint32_t now = (uint32_t)(ctx_now(c) / 1000) & LRU_CLOCK_MAX;
    if (idle > (long long)LRU_CLOCK_MAX) idle = LRU_CLOCK_MAX;
    return (uint32_t)((now + LRU_CLOCK_MAX + 1 - (uint32_t)idle) & LRU_CLOCK_MAX);
}

/* RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency] */
static void restore_cmd(cmd_ctx *c) {
    restore_opts o;
    if (restore_options(c, &o) < 0) return;
    db *d;
    entry **l = ctx_lookup(c, 1, 0, &d);
    if (!o.replace && l) {
        reply_error(c, "BUSYKEY Target key name already exists.");
        return;
    }
    long long ttl;
    if (!arg_ll(c, 2, &ttl)) return;
    if (ttl < 0) {
        reply_error(c, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    if (!rdb_dump_verify(c->argv[3], c->argl[3])) {
        reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    int64_t now = ctx_now(c);
    if (ttl && !o.absttl) ttl = ttl > LLONG_MAX - now ? -1 : ttl + now; /* overflow: already past, as Redis's wrap */
    entry *e = NULL;
    int64_t expire = ttl > 0 ? ttl : -1;
    if (rdb_undump(c->argv[3], c->argl[3], c->argv[1], c->argl[1], expire, &e) != RDB_OK) {
        reply_error(c, "ERR Bad data format");
        return;
    }
    l = db_find_link(d, c->argv[1], c->argl[1], now);
    if (l) db_delete_link(d, l);
    if (ttl && (ttl < 0 || (ttl <= now && !aof_loading))) { /* expired already: only the delete happens */
        entry_free(e);
        reply_ok(c);
        return;
    }
    entry_touch(e, idle_clock(c, o.idle > 0 ? o.idle : 0));
    db_add(d, e);
    reply_ok(c);
}

void persist_debug_reload(cmd_ctx *c) {
    int save = 1, flush = 1;
    for (int i = 2; i < c->argc; i++) {
        if (arg_is(c, i, "nosave"))
            save = 0;
        else if (arg_is(c, i, "noflush"))
            flush = 0;
        else {
            reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    if (save && persist_save(c) < 0) {
        reply_error(c, "ERR Error trying to save the DB");
        return;
    }
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    if (flush)
        for (int i = 0; i < n; i++)
            for (int d = 0; d < (int)cfg.databases_i; d++)
                db_clear(ctx_shard_db(c, ids[i], d));
    char err[512];
    rdb_load_stats st;
    if (rdb_load(cfg.dbfilename_s, 1, ctx_now(c), &st, err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        reply_error(c, "ERR Error trying to load the RDB dump, check server logs.");
        return;
    }
    log_msg(LOG_NOTICE, "DB reloaded by DEBUG RELOAD");
    reply_ok(c);
}

void persist_info(buf *o, const int *ids, int n) {
    uint64_t dirty = 0;
    for (int i = 0; i < n; i++)
        dirty += shards[ids[i]]->dirty;
    buf_printf(o,
               "loading:0\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\n"
               "current_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\n"
               "current_save_keys_total:0\r\nrdb_changes_since_last_save:%llu\r\nrdb_bgsave_in_progress:0\r\n"
               "rdb_last_save_time:%lld\r\nrdb_last_bgsave_status:%s\r\nrdb_last_bgsave_time_sec:-1\r\n"
               "rdb_current_bgsave_time_sec:-1\r\nrdb_saves:%llu\r\nrdb_last_cow_size:0\r\n"
               "rdb_last_load_keys_expired:%zu\r\nrdb_last_load_keys_loaded:%zu\r\n",
               (unsigned long long)dirty, (long long)last_save(), rdb_last_save_ok ? "ok" : "err",
               (unsigned long long)rdb_saves, rdb_last_load_expired, rdb_last_load_keys);
    aof_info(o); /* AOF: aof_enabled ... (and the module lines, in Redis's order) */
}

#define KEY1 .first = 1, .last = 1, .step = 1
static const command rows[] = {
    {.name = "save",
     .proc = save_cmd,
     .arity = 1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_ALLSHARDS,
     .group = "server",
     .since = "1.0.0",
     .acl = "admin slow dangerous",
     .summary = "Synchronously save the dataset to disk"},
    {.name = "lastsave",
     .proc = lastsave_cmd,
     .arity = 1,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .group = "server",
     .since = "1.0.0",
     .acl = "admin fast dangerous",
     .summary = "Get the UNIX time stamp of the last successful save to disk"},
    {.name = "dump",
     .proc = dump_cmd,
     .arity = 2,
     .flags = CMD_READONLY,
     KEY1,
     .group = "generic",
     .since = "2.6.0",
     .acl = "keyspace read slow",
     .summary = "Return a serialized version of the value stored at the specified key."},
    {.name = "restore",
     .proc = restore_cmd,
     .arity = -4,
     .flags = CMD_WRITE | CMD_DENYOOM,
     KEY1,
     .group = "generic",
     .since = "2.6.0",
     .acl = "keyspace write slow dangerous",
     .summary = "Create a key using the provided serialized value, previously obtained using DUMP."},
};

void persist_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
