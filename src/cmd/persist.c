/* persist.c - SAVE, LASTSAVE, DUMP, RESTORE, and the DEBUG RELOAD and INFO
 * persistence helpers (persist.h), over the RDB codec of persist/rdb.h.
 *
 * SAVE is CMD_ALLSHARDS: it runs under a lock of every shard and writes
 * each database once with the keys of every shard. DUMP and RESTORE are
 * single-key commands run on the key's shard. Writes since the last save
 * are counted per shard by the dispatcher (shard.dirty). */
#include "cmd/notify.h"
#include "cmd/persist.h"
#include "cmd/cmd.h"
#include "cmd/script.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/evict.h"
#include "shard/shard.h"

static int64_t last_save(void) {
    int64_t t = __atomic_load_n(&rdb_last_save_time, __ATOMIC_RELAXED);
    return t ? t : engine_start_time_ms() / 1000;
}
#include "persist/snapshot.h"
#include "shard/tx.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int shutdown_saved;
static int bgsave_scheduled; /* BGSAVE SCHEDULE met an AOF rewrite (atomic) */
/* persist_cron sent the scheduled rewrite's BGREWRITEAOF, which has not run
 * yet (it waits for every shard's grant). aof_rewrite_scheduled stays set
 * until then, so INFO never shows the rewrite neither scheduled nor
 * running while it is about to start (atomic). */
static int rewrite_starting;

static db *shard_db(void *ud, int s, int dbid) {
    const int *ids = ud;
    return &shards[ids[s]]->dbs[dbid];
}

int persist_save_shards(const int *ids, int n, int64_t now_ms) {
    char err[512];
    int64_t t0 = mono_us();
    __atomic_add_fetch(&rdb_saves, 1, __ATOMIC_RELAXED);
    uint64_t at[MAX_SHARDS];
    for (int i = 0; i < n; i++) at[i] = shards[ids[i]]->dirty;
    if (rdb_save(cfg.dbfilename_s, n, shard_db, (void *)ids, now_ms, err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        __atomic_store_n(&snap_last_ok, 0, __ATOMIC_RELAXED);
        return -1;
    }
    for (int i = 0; i < n; i++) __atomic_store_n(&shards[ids[i]]->dirty_saved, at[i], __ATOMIC_RELAXED);
    __atomic_store_n(&rdb_last_save_time, mstime() / 1000, __ATOMIC_RELAXED);
    __atomic_store_n(&snap_last_ok, 1, __ATOMIC_RELAXED);
    log_msg(LOG_NOTICE, "DB saved on disk (%.3f seconds)", (double)(mono_us() - t0) / 1e6);
    return 0;
}

int persist_save(cmd_ctx *c) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    return persist_save_shards(ids, n, ctx_now(c));
}

/* SAVE */
static void save_cmd(cmd_ctx *c) {
    if (snap_running_kind() == SNAP_RDB) {
        reply_error(c, "ERR Background save already in progress");
        return;
    }
    if (persist_save(c) < 0)
        reply_error(c, "ERR");
    else
        reply_ok(c);
}

/* Starts a background save under the lock of every shard; 0 ok. */
static int start_bgsave(cmd_ctx *c) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    char err[512];
    if (snap_start(ids, n, cfg.dbfilename_s, ctx_now(c), SNAP_RDB, NULL, NULL, err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        return -1;
    }
    if (!shards_running) snap_run_inline(); /* the embedded engine has no loops to walk in */
    return 0;
}

/* BGSAVE [SCHEDULE] */
static void bgsave_cmd(cmd_ctx *c) {
    if (c->argc > 2 || (c->argc == 2 && !arg_is(c, 1, "schedule"))) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (snap_running_kind() == SNAP_RDB) {
        reply_error(c, "ERR Background save already in progress");
        return;
    }
    if (snap_running()) { /* an AOF rewrite: one snapshot at a time */
        if (c->argc == 2) {
            __atomic_store_n(&bgsave_scheduled, 1, __ATOMIC_RELAXED);
            reply_simple(c, "Background saving scheduled");
        } else {
            reply_error(c, "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE "
                           "in order to schedule a BGSAVE whenever possible.");
        }
        return;
    }
    if (start_bgsave(c) < 0)
        reply_error(c, "ERR");
    else
        reply_simple(c, "Background saving started");
}

/* BGREWRITEAOF */
static void bgrewriteaof_cmd(cmd_ctx *c) {
    __atomic_store_n(&rewrite_starting, 0, __ATOMIC_RELAXED);
    if (snap_running_kind() == SNAP_AOF) {
        reply_error(c, "ERR Background append only file rewriting already in progress");
        return;
    }
    if (snap_running()) {
        __atomic_store_n(&aof_rewrite_scheduled, 1, __ATOMIC_RELAXED);
        reply_simple(c, "Background append only file rewriting scheduled");
        return;
    }
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    char err[512];
    __atomic_store_n(&aof_rewrite_scheduled, 0, __ATOMIC_RELAXED);
    if (aof_rewrite_start(ids, n, ctx_now(c), err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        reply_error(c, err);
        return;
    }
    if (!shards_running) snap_run_inline();
    reply_simple(c, "Background append only file rewriting started");
}

/* The save rules ("3600 1 300 100"): whether one holds now. */
static int save_rule_due(uint64_t changes, int64_t since_s) {
    const char *p = cfg.save_s;
    while (p && *p) {
        char *end;
        long long secs = strtoll(p, &end, 10);
        if (end == p) break;
        long long need = strtoll(end, &end, 10);
        if ((long long)changes >= need && since_s > secs) return 1;
        p = end;
    }
    return 0;
}

int persist_misconf(void) {
    return cfg_get(stop_writes_on_bgsave_error) && cfg.save_s && *cfg.save_s &&
           !__atomic_load_n(&snap_last_ok, __ATOMIC_RELAXED);
}

static uint64_t changes_since_save(const int *ids, int n) {
    uint64_t d = 0;
    for (int i = 0; i < n; i++) {
        shard *sh = shards[ids[i]];
        d += __atomic_load_n(&sh->dirty, __ATOMIC_RELAXED) - __atomic_load_n(&sh->dirty_saved, __ATOMIC_RELAXED);
    }
    return d;
}

#define BGSAVE_RETRY_MS 5000 /* after a failed save, as Redis's CONFIG_BGSAVE_RETRY_DELAY */

/* Starts the server's own command over every shard (internal transaction). */
static void run_internal(shard *sh, const char *name) {
    const char *argv[] = {name};
    size_t argl[] = {strlen(name)};
    tx_begin_internal(sh, cmd_lookup(name, argl[0]), 1, argv, argl);
}

/* auto-aof-rewrite-percentage / -min-size: the AOF grew enough past its base. */
static int aof_grown(void) {
    int64_t pct = cfg_get(auto_aof_rewrite_percentage);
    if (!aof_file_active() || pct <= 0) return 0;
    uint64_t cur, base;
    aof_sizes(&cur, &base);
    if (cur < (uint64_t)cfg_get(auto_aof_rewrite_min_size)) return 0;
    uint64_t b = base ? base : 1;
    return cur > b && (cur - b) * 100 / b >= (uint64_t)pct;
}

void persist_cron(shard *sh) {
    if (sh->id != 0 || snap_running()) return;
    if (__atomic_load_n(&aof_rewrite_scheduled, __ATOMIC_RELAXED)) {
        if (!__atomic_exchange_n(&rewrite_starting, 1, __ATOMIC_RELAXED)) run_internal(sh, "bgrewriteaof");
        return;
    }
    if (__atomic_exchange_n(&bgsave_scheduled, 0, __ATOMIC_RELAXED)) {
        run_internal(sh, "bgsave");
        return;
    }
    if (aof_grown()) {
        log_msg(LOG_NOTICE, "Starting automatic rewriting of AOF");
        run_internal(sh, "bgrewriteaof");
        return;
    }
    if (!cfg.save_s || !*cfg.save_s) return;
    int ids[MAX_SHARDS];
    for (int i = 0; i < nshards; i++) ids[i] = i;
    uint64_t changes = changes_since_save(ids, nshards);
    int64_t since = sh->now_ms / 1000 - last_save();
    if (!changes || !save_rule_due(changes, since)) return;
    if (!__atomic_load_n(&snap_last_ok, __ATOMIC_RELAXED) &&
        sh->now_ms - __atomic_load_n(&snap_last_try_ms, __ATOMIC_RELAXED) <= BGSAVE_RETRY_MS)
        return;
    log_msg(LOG_NOTICE, "%llu changes in %lld seconds. Saving...", (unsigned long long)changes, (long long)since);
    run_internal(sh, "bgsave");
}

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
        if (l) ctx_notify(c, NOTIFY_GENERIC, "del", 1);
        return;
    }
    if (entry_lfu) { /* as Redis's objectSetLRUOrLFU: FREQ under LFU, IDLETIME otherwise */
        if (o.freq >= 0) entry_touch(e, ((uint32_t)(ctx_now(c) / 60000) & 0xffff) << 8 | (uint32_t)o.freq);
    } else {
        entry_touch(e, idle_clock(c, o.idle > 0 ? o.idle : 0));
    }
    db_add(d, e);
    reply_ok(c);
    ctx_notify(c, NOTIFY_GENERIC, "restore", 1);
}

void persist_debug_reload(cmd_ctx *c) {
    int save = 1, flush = 1, merge = 0;
    for (int i = 2; i < c->argc; i++) {
        if (arg_is(c, i, "nosave"))
            save = 0;
        else if (arg_is(c, i, "noflush"))
            flush = 0;
        else if (arg_is(c, i, "merge"))
            merge = 1;
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
    if (flush) {
        for (int i = 0; i < n; i++)
            for (int d = 0; d < (int)cfg.databases_i; d++)
                db_clear(ctx_shard_db(c, ids[i], d));
        function_flush_libraries(); /* the functions go with the data, as in Redis */
    }
    char err[512];
    rdb_load_stats st;
    rdb_load_allow_dup = merge; /* MERGE (with NOFLUSH): what is loaded replaces what is there */
    int rc = rdb_load(cfg.dbfilename_s, 1, ctx_now(c), &st, err, sizeof err);
    rdb_load_allow_dup = 0;
    if (rc < 0) {
        log_msg(LOG_WARNING, "%s", err);
        reply_error(c, "ERR Error trying to load the RDB dump, check server logs.");
        return;
    }
    log_msg(LOG_NOTICE, "DB reloaded by DEBUG RELOAD");
    reply_ok(c);
}

void persist_info(buf *o, const int *ids, int n) {
    int running = snap_running();
    int64_t now = mstime();
    buf_printf(o,
               "loading:0\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\n"
               "current_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\ncurrent_save_keys_processed:%llu\r\n"
               "current_save_keys_total:%llu\r\nrdb_changes_since_last_save:%llu\r\nrdb_bgsave_in_progress:%d\r\n"
               "rdb_last_save_time:%lld\r\nrdb_last_bgsave_status:%s\r\nrdb_last_bgsave_time_sec:%lld\r\n"
               "rdb_current_bgsave_time_sec:%lld\r\nrdb_saves:%llu\r\nrdb_last_cow_size:0\r\n"
               "rdb_last_load_keys_expired:%zu\r\nrdb_last_load_keys_loaded:%zu\r\n",
               running ? (unsigned long long)__atomic_load_n(&snap_keys_done, __ATOMIC_RELAXED) : 0ull,
               running ? (unsigned long long)__atomic_load_n(&snap_keys_total, __ATOMIC_RELAXED) : 0ull,
               (unsigned long long)changes_since_save(ids, n), running, (long long)last_save(),
               __atomic_load_n(&snap_last_ok, __ATOMIC_RELAXED) ? "ok" : "err",
               (long long)__atomic_load_n(&snap_last_seconds, __ATOMIC_RELAXED),
               running ? (long long)(now - __atomic_load_n(&snap_started_ms, __ATOMIC_RELAXED)) / 1000 : -1LL,
               (unsigned long long)__atomic_load_n(&rdb_saves, __ATOMIC_RELAXED), rdb_last_load_expired,
               rdb_last_load_keys);
    aof_info(o); /* AOF: aof_enabled ... (and the module lines, in Redis's order) */
}

#define KEY1 .first = 1, .last = 1, .step = 1
static const command rows[] = {
    {.name = "save",
     .proc = save_cmd,
     .arity = 1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_ALLSHARDS | CMD_NOMULTI | CMD_NO_ASYNC_LOADING,
     .group = "server",
     .since = "1.0.0",
     .acl = "admin slow dangerous",
     .summary = "Synchronously save the dataset to disk"},
    {.name = "bgsave",
     .proc = bgsave_cmd,
     .arity = -1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_ALLSHARDS | CMD_NO_ASYNC_LOADING,
     .group = "server",
     .since = "1.0.0",
     .acl = "admin slow dangerous",
     .summary = "Asynchronously save the dataset to disk"},
    {.name = "bgrewriteaof",
     .proc = bgrewriteaof_cmd,
     .arity = 1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_ALLSHARDS | CMD_NO_ASYNC_LOADING,
     .group = "server",
     .since = "1.0.0",
     .acl = "admin slow dangerous",
     .summary = "Asynchronously rewrite the append-only file"},
    {.name = "lastsave",
     .proc = lastsave_cmd,
     .arity = 1,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .group = "server",
     .since = "1.0.0",
     .acl = "admin fast dangerous",
     .summary = "Get the UNIX time stamp of the last successful save to disk"},
    {.name = "dump",
     .kflags = KS_RO | KS_ACCESS,
     .proc = dump_cmd,
     .arity = 2,
     .flags = CMD_READONLY,
     KEY1,
     .group = "generic",
     .since = "2.6.0",
     .acl = "keyspace read slow",
     .summary = "Return a serialized version of the value stored at the specified key."},
    {.name = "restore",
     .kflags = KS_OW | KS_UPDATE,
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
