/* debug.c - DEBUG, the test aid Redis's own suite leans on, behind
 * enable-debug-command as in Redis. DEBUG holds every shard (CMD_ALLSHARDS),
 * so a subcommand may read or change any shard's data through ctx_db /
 * ctx_shard_db.
 *
 * DIGEST and DIGEST-VALUE follow Redis's definition: per key a SHA-1 mix
 * of the key, the type and the value (ordered types mixed in order,
 * unordered ones XORed), XORed into one digest per dataset with each
 * non-empty database's number mixed in first; an expire adds a mark, not
 * its time. Equal datasets give equal digests across a reload, a copy or a
 * restart with another shard count. */
#include "cmd/cmd.h"
#include "cmd/hash.h"
#include "cmd/persist.h"
#include "cmd/script.h"
#include "cmd/set.h"
#include "cmd/zset.h"
#include "core/lobj.h"
#include "core/quicklist.h"
#include "core/stream.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/sha1.h"
#include "lib/util.h"
#include "net/conn.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "server/config.h"
#include "shard/shard.h"
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- digests ---- */

/* d ^= sha1(p) */
static void dg_xor(uint8_t d[20], const void *p, size_t n) {
    uint8_t h[20];
    sha1(p, n, h);
    for (int i = 0; i < 20; i++) d[i] ^= h[i];
}

/* d = sha1(d ^ sha1(p)): order matters */
static void dg_mix(uint8_t d[20], const void *p, size_t n) {
    dg_xor(d, p, n);
    sha1(d, 20, d);
}

static void dg_mix_ll(uint8_t d[20], long long v) {
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", v);
    dg_mix(d, tmp, (size_t)n);
}

static void set_member(void *ud, const char *m, size_t ml) { dg_xor(ud, m, ml); }

static void hash_pair(void *ud, const char *f, size_t fl, const char *v, size_t vl) {
    uint8_t e[20] = {0};
    dg_mix(e, f, fl);
    dg_mix(e, v, vl);
    dg_xor(ud, e, 20);
}

static void digest_list(uint8_t d[20], const void *o) {
    lobj_pos pos;
    for (int ok = lobj_first(o, &pos); ok; ok = lobj_next(&pos)) {
        pack_val v;
        lobj_get(&pos, &v);
        if (v.s)
            dg_mix(d, v.s, v.len);
        else
            dg_mix_ll(d, (long long)v.v);
    }
}

static void digest_zset(uint8_t d[20], void *o) {
    zcur cu;
    for (int ok = zcur_seek(&cu, o, 0); ok; ok = zcur_next(&cu)) {
        zitem it;
        zcur_get(&cu, &it);
        uint8_t e[20] = {0};
        char tmp[64];
        dg_mix(e, it.m, it.ml);
        int n = snprintf(tmp, sizeof tmp, "%.17g", it.score);
        dg_mix(e, tmp, (size_t)n);
        dg_xor(d, e, 20);
    }
}

static void digest_stream(uint8_t d[20], const stream *s) {
    stream_iter it;
    sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX}, id;
    long long nf;
    stream_iter_start(&it, s, &lo, &hi, 0);
    while (stream_iter_next(&it, &id, &nf)) {
        char tmp[48];
        int n = snprintf(tmp, sizeof tmp, "%llu.%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
        dg_mix(d, tmp, (size_t)n);
        while (nf-- > 0) {
            const char *f, *v;
            size_t fl, vl;
            stream_iter_field(&it, &f, &fl, &v, &vl);
            dg_mix(d, f, fl);
            dg_mix(d, v, vl);
        }
    }
    stream_iter_stop(&it);
}

/* The digest of e's value (type, contents, expire mark) mixed into d. */
static void digest_value(uint8_t d[20], const entry *e) {
    /* Redis's type numbers: its module type (5) comes before streams */
    uint32_t type = htonl((uint32_t)(entry_type(e) == T_STREAM ? 6 : entry_type(e)));
    dg_mix(d, &type, sizeof type);
    switch (entry_type(e)) {
    case T_STRING: {
        char tmp[24];
        size_t n;
        const char *s = db_str(e, tmp, &n);
        dg_mix(d, s, n);
        break;
    }
    case T_LIST: digest_list(d, entry_obj(e)); break;
    case T_SET: set_value_foreach(entry_obj(e), set_member, d); break;
    case T_ZSET: digest_zset(d, entry_obj(e)); break;
    case T_HASH: hash_value_foreach(entry_obj(e), hash_pair, d); break;
    case T_STREAM: digest_stream(d, entry_obj(e)); break;
    }
    if (entry_has_ttl(e)) dg_xor(d, "!!expire!!", 10);
}

typedef struct digest_walk {
    uint8_t *final;
} digest_walk;

static void digest_key(void *ud, entry *e) {
    digest_walk *w = ud;
    uint8_t d[20] = {0};
    size_t kl;
    const uint8_t *k = entry_keyp(e, &kl);
    dg_mix(d, k, kl);
    digest_value(d, e);
    for (int i = 0; i < 20; i++) w->final[i] ^= d[i];
}

/* DEBUG DIGEST */
static void debug_digest(cmd_ctx *c) {
    uint8_t final[20] = {0};
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    digest_walk w = {final};
    for (int dbid = 0; dbid < (int)cfg.databases_i; dbid++) {
        size_t keys = 0;
        for (int i = 0; i < n; i++) keys += db_size(ctx_shard_db(c, ids[i], dbid));
        if (!keys) continue;
        uint32_t aux = htonl((uint32_t)dbid);
        dg_mix(final, &aux, sizeof aux);
        for (int i = 0; i < n; i++) {
            db *d = ctx_shard_db(c, ids[i], dbid);
            /* a finished rehash makes the scan visit every key exactly once */
            while (table_rehash_step(d->t, 1024)) {
            }
            uint64_t cur = 0;
            do cur = table_scan(d->t, cur, digest_key, &w);
            while (cur);
        }
    }
    char hex[41];
    sha1_hex(final, hex);
    reply_simple(c, hex);
}

/* DEBUG DIGEST-VALUE key ... */
static void debug_digest_value(cmd_ctx *c) {
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        uint8_t d[20] = {0};
        entry *e = db_find(ctx_db(c, c->argv[i], c->argl[i]), c->argv[i], c->argl[i], ctx_now(c));
        if (e) digest_value(d, e);
        char hex[41];
        sha1_hex(d, hex);
        reply_simple(c, hex);
    }
}

/* ---- OBJECT, HTSTATS ---- */

/* DEBUG OBJECT key: Redis's one status line. The address is the entry's,
 * which in-place updates (INCR of an integer) keep. */
static void debug_object(cmd_ctx *c) {
    /* the entry as it is in the table, expired or not (Redis looks in the dict) */
    entry **l = db_find_link_kept(ctx_db(c, c->argv[2], c->argl[2]), c->argv[2], c->argl[2], INT64_MIN);
    entry *e = l ? *l : NULL;
    if (!e) {
        reply_error(c, "ERR no such key");
        return;
    }
    buf ser = {0};
    rdb_put_value(&ser, e);
    uint32_t now = (uint32_t)(ctx_now(c) / 1000) & LRU_CLOCK_MAX, then = entry_lru(e);
    uint32_t idle = now >= then ? now - then : now + (LRU_CLOCK_MAX - then);
    char extra[200] = "";
    if (entry_type(e) == T_LIST) {
        const void *o = entry_obj(e);
        size_t nodes = lobj_nodes(o), count = lobj_count(o);
        snprintf(extra, sizeof extra,
                 " ql_nodes:%zu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:0 ql_uncompressed_size:%zu", nodes,
                 nodes ? (double)count / (double)nodes : 0.0, (int)cfg_get(list_max_listpack_size), lobj_bytes(o));
    }
    int shared = entry_type(e) == T_STRING && entry_kind(e) == EK_INT && entry_int(e) >= 0 && entry_int(e) < 10000;
    char line[400];
    snprintf(line, sizeof line, "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%u%s",
             (void *)e, shared ? 2147483647 : 1, entry_encoding(e), ser.len - 1 /* the type byte */, then, idle,
             extra);
    reply_simple(c, line);
    buf_free(&ser);
}

/* Redis's "Hash table 0 stats" block for one table. */
static void ht_stats(buf *o, const char *title, size_t buckets, size_t elems) {
    buf_printf(o, "[%s]\n", title);
    if (!elems) {
        buf_printf(o, "No stats available for empty dictionaries\n");
        return;
    }
    buf_printf(o, "Hash table 0 stats (main hash table):\n table size: %zu\n number of elements: %zu\n", buckets, elems);
}

/* DEBUG HTSTATS dbid [full]: the key table of database dbid, summed
 * over the shards (each has its own table). */
static void debug_htstats(cmd_ctx *c) {
    long long dbid;
    if (!str2ll(c->argv[2], c->argl[2], &dbid) || dbid < 0 || dbid >= cfg.databases_i) {
        reply_error(c, "ERR Out of range database");
        return;
    }
    if (c->argc == 4 && !arg_is(c, 3, "full")) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    size_t buckets = 0, keys = 0, expires = 0;
    for (int i = 0; i < n; i++) {
        db *d = ctx_shard_db(c, ids[i], (int)dbid);
        buckets += table_buckets(d->t);
        keys += db_size(d);
        expires += d->expires;
    }
    buf o = {0};
    ht_stats(&o, "Dictionary HT", buckets, keys);
    buf_printf(&o, "[Expires HT]\n");
    if (expires)
        buf_printf(&o, "Hash table 0 stats (main hash table):\n number of elements: %zu\n", expires);
    else
        buf_printf(&o, "No stats available for empty dictionaries\n");
    reply_verbatim(c, o.p, o.len);
    buf_free(&o);
}

/* ---- PROTOCOL ---- */

/* DEBUG PROTOCOL type: one reply of each RESP3 type (and its RESP2 form). */
static void debug_protocol(cmd_ctx *c) {
    const char *t = c->argv[2];
    size_t tl = c->argl[2];
#define IS(w) str_eq_ci(t, tl, w)
    if (IS("string")) {
        reply_cstr(c, "Hello World");
    } else if (IS("integer")) {
        reply_int(c, 12345);
    } else if (IS("double")) {
        reply_double(c, 3.141);
    } else if (IS("bignum")) {
        static const char big[] = "1234567999999999999999999999999999999";
        if (c->resp >= 3)
            buf_printf(c->out, "(%s\r\n", big);
        else
            reply_bulk(c, big, sizeof big - 1);
    } else if (IS("null")) {
        reply_null(c);
    } else if (IS("array") || IS("set")) {
        if (IS("set"))
            reply_set(c, 3);
        else
            reply_array(c, 3);
        for (int j = 0; j < 3; j++) reply_int(c, j);
    } else if (IS("map")) {
        reply_map(c, 3);
        for (int j = 0; j < 3; j++) {
            reply_int(c, j);
            reply_bool(c, j == 1);
        }
    } else if (IS("attrib")) {
        if (c->resp >= 3) {
            buf_add(c->out, "|1\r\n", 4);
            reply_cstr(c, "key-popularity");
            reply_array(c, 2);
            reply_cstr(c, "key:123");
            reply_int(c, 90);
        }
        reply_cstr(c, "Some real reply following the attribute");
    } else if (IS("push")) {
        if (c->resp < 3) {
            reply_error(c, "ERR RESP2 is not supported by this command");
            return;
        }
        resp_push(c->out, 3, 2);
        reply_cstr(c, "server-cpu-usage");
        reply_int(c, 42);
        reply_cstr(c, "Some real reply following the push reply");
    } else if (IS("true") || IS("false")) {
        reply_bool(c, IS("true"));
    } else if (IS("verbatim")) {
        reply_verbatim(c, "This is a verbatim\nstring", 25);
    } else {
        reply_error(c, "ERR Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
#undef IS
}

/* ---- switches ---- */

/* "0"/"1" style flags as Redis reads them (atoi: anything else is 0). */
static int flag_arg(cmd_ctx *c, int i) {
    long long v;
    return str2ll(c->argv[i], c->argl[i], &v) && v != 0;
}

/* DEBUG QUICKLIST-PACKED-THRESHOLD size: elements of at least size bytes
 * get a list node of their own (0: back to the 1 GB default). */
static void debug_packed_threshold(cmd_ctx *c) {
    int64_t sz;
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*s", (int)(c->argl[2] < 63 ? c->argl[2] : 63), c->argv[2]);
    if (c->argl[2] > 63 || !cfg_parse_memory(tmp, &sz) || sz < 0 || sz > (1LL << 32) - (1 << 20)) {
        reply_error(c, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
        return;
    }
    quicklist_set_packed_threshold(sz ? (size_t)sz : (size_t)1 << 30);
    reply_ok(c);
}

/* DEBUG POPULATE count [prefix] [size]: keys prefix:0 .. prefix:count-1
 * (default "key"), each "value:<n>" or, with size, that string cut or
 * padded with zero bytes to size; existing keys are left alone. */
static void debug_populate(cmd_ctx *c) {
    long long count, size = 0;
    if (!str2ll(c->argv[2], c->argl[2], &count) || count < 0) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    const char *prefix = c->argc > 3 ? c->argv[3] : "key";
    size_t pl = c->argc > 3 ? c->argl[3] : 3;
    if (c->argc > 4 && (!str2ll(c->argv[4], c->argl[4], &size) || size < 0 || size > 512LL * 1024 * 1024)) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    buf key = {0}, val = {0};
    for (long long j = 0; j < count; j++) {
        key.len = 0;
        buf_add(&key, prefix, pl);
        buf_printf(&key, ":%lld", j);
        db *d = ctx_db(c, key.p, key.len);
        if (db_find(d, key.p, key.len, ctx_now(c))) continue;
        val.len = 0;
        buf_printf(&val, "value:%lld", j);
        if (c->argc > 4) {
            size_t want = (size_t)size;
            buf_reserve(&val, want + 1);
            if (val.len < want) memset(val.p + val.len, 0, want - val.len);
            val.len = want;
        }
        db_add(d, entry_new_str(key.p, key.len, val.p, val.len, -1, 1));
    }
    buf_free(&key);
    buf_free(&val);
    reply_ok(c);
}

/* DEBUG LOADAOF: writes what is buffered for the AOF, empties every
 * database and loads the append-only files again. */
static void debug_loadaof(cmd_ctx *c) {
    if (aof_active()) aof_before_send(c->sh);
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < (int)cfg.databases_i; d++) db_clear(ctx_shard_db(c, ids[i], d));
    if (aof_reload(c->sh) < 0) {
        reply_error(c, "ERR Error loading the append only file, check server logs.");
        return;
    }
    log_msg(LOG_WARNING, "Append Only File loaded by DEBUG LOADAOF");
    reply_ok(c);
}

/* DEBUG SLEEP seconds: as Redis, strtod ("abc" sleeps 0 s); at most an hour. */
static void debug_sleep(cmd_ctx *c) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*s", (int)(c->argl[2] < 63 ? c->argl[2] : 63), c->argv[2]);
    double secs = strtod(tmp, NULL);
    if (secs > 0) {
        if (secs > 3600) secs = 3600;
        struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
        nanosleep(&ts, NULL);
    }
    reply_ok(c);
}

/* DEBUG REPLYBUFFER PEAK-RESET-TIME <never|reset|ms> | RESIZING <0|1> */
static void debug_replybuffer(cmd_ctx *c) {
    if (arg_is(c, 2, "peak-reset-time")) {
        long long ms;
        if (arg_is(c, 3, "never"))
            ms = -1;
        else if (arg_is(c, 3, "reset"))
            ms = CONN_RBUF_PEAK_RESET_MS;
        else if (!str2ll(c->argv[3], c->argl[3], &ms) || ms < 0) {
            reply_error(c, "ERR value is not an integer or out of range");
            return;
        }
        __atomic_store_n(&conn_rbuf_peak_reset_ms, ms, __ATOMIC_RELAXED);
    } else if (arg_is(c, 2, "resizing")) {
        __atomic_store_n(&conn_rbuf_resizing, flag_arg(c, 3), __ATOMIC_RELAXED);
    } else {
        reply_error(c, "ERR Syntax error, try DEBUG [peak-reset-time|resizing]");
        return;
    }
    reply_ok(c);
}

static void debug_help(cmd_ctx *c) {
    static const char *const lines[] = {
        "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANGE-REPL-ID",
        "    Change the replication IDs of the instance.",
        "    Dangerous: should be used only for testing the replication subsystem.",
        "DIGEST",
        "    Output a hex signature representing the current DB content.",
        "DIGEST-VALUE <key> [<key> ...]",
        "    Output a hex signature of the values of all the specified keys.",
        "HTSTATS <dbid> [full]",
        "    Return hash table statistics of the specified Redis database.",
        "LOADAOF",
        "    Flush the AOF buffers on disk and reload the AOF in memory.",
        "OBJECT <key>",
        "    Show low level info about the `key` and associated value.",
        "PAUSE-CRON <0|1>",
        "    Stop periodic cron job processing.",
        "POPULATE <count> [<prefix>] [<size>]",
        "    Create <count> string keys named key:<num>. If <prefix> is specified then",
        "    it is used instead of the 'key' prefix. These are not propagated to",
        "    replicas. Cluster slots are not respected so keys not belonging to the",
        "    current node can be created in cluster mode.",
        "PROTOCOL <type>",
        "    Reply with a test value of the specified type. <type> can be: string,",
        "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
        "    true, false.",
        "QUICKLIST-PACKED-THRESHOLD <size>",
        "    Sets the threshold for elements to be inserted as plain vs packed nodes",
        "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
        "RELOAD [option ...]",
        "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
        "    * NOSAVE: the database will be loaded from an existing RDB file.",
        "    * NOFLUSH: the existing database will not be removed before load, but",
        "      that can cause duplicate keys.",
        "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
        "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
        "    In case NEVER is provided the last observed peak will never be reset",
        "    In case RESET is provided the peak reset time will be restored to the default value",
        "REPLYBUFFER RESIZING <0|1>",
        "    Enable or disable the reply buffer resize cron job",
        "SET-DISABLE-DENY-SCRIPTS <0|1>",
        "    Setting it to 1 allows Lua scripts to call commands that are normally denied to them.",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
        "HELP",
        "    Print this help.",
    };
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

/* A client on a Unix socket or a loopback address. */
static int is_local(const session *s) {
    const conn *x = s ? s->conn : NULL;
    if (!x) return 1; /* the embedded engine */
    return x->is_local;
}

static int debug_allowed(cmd_ctx *c) {
    int64_t mode = cfg_get(enable_debug_command);
    if (mode == CFG_ALLOW_YES || (mode == CFG_ALLOW_LOCAL && is_local(c->sess))) return 1;
    reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
                   "you can run it from a local connection, otherwise you need to set this option in the "
                   "configuration file, and then restart the server.");
    return 0;
}

typedef struct debug_sub {
    const char *name;
    int min, max; /* argument counts allowed (argc, DEBUG included); max -1: any */
    void (*fn)(cmd_ctx *c);
} debug_sub;

static void debug_reload(cmd_ctx *c) { persist_debug_reload(c); }
static void debug_set_active_expire(cmd_ctx *c) {
    __atomic_store_n(&shard_active_expire, flag_arg(c, 2), __ATOMIC_RELAXED);
    reply_ok(c);
}
static void debug_pause_cron(cmd_ctx *c) {
    __atomic_store_n(&shard_cron_paused, flag_arg(c, 2), __ATOMIC_RELAXED);
    reply_ok(c);
}
/* DEBUG SET-DISABLE-DENY-SCRIPTS 0|1: scripts may call noscript commands */
static void debug_set_disable_deny_scripts(cmd_ctx *c) {
    __atomic_store_n(&script_deny_disabled, flag_arg(c, 2), __ATOMIC_RELAXED);
    reply_ok(c);
}
/* No replication: there is no ID to change, and nothing to refuse. */
static void debug_change_repl_id(cmd_ctx *c) { reply_ok(c); }

static const debug_sub subs[] = {
    {"help", 2, 2, debug_help},
    {"sleep", 3, 3, debug_sleep},
    {"reload", 2, -1, debug_reload},
    {"loadaof", 2, 2, debug_loadaof},
    {"object", 3, 3, debug_object},
    {"digest", 2, 2, debug_digest},
    {"digest-value", 2, -1, debug_digest_value},
    {"protocol", 3, 3, debug_protocol},
    {"set-active-expire", 3, 3, debug_set_active_expire},
    {"pause-cron", 3, 3, debug_pause_cron},
    {"quicklist-packed-threshold", 3, 3, debug_packed_threshold},
    {"populate", 3, 5, debug_populate},
    {"htstats", 3, 4, debug_htstats},
    {"replybuffer", 4, 4, debug_replybuffer},
    {"change-repl-id", 2, 2, debug_change_repl_id},
    {"set-disable-deny-scripts", 3, 3, debug_set_disable_deny_scripts},
};

/* DEBUG <subcommand> ... */
static void debug_cmd(cmd_ctx *c) {
    if (!debug_allowed(c)) return;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        const debug_sub *s = &subs[i];
        if (!arg_is(c, 1, s->name)) continue;
        if (c->argc >= s->min && (s->max < 0 || c->argc <= s->max)) {
            s->fn(c);
            return;
        }
        break;
    }
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try DEBUG HELP.",
                 (int)(c->argl[1] > 128 ? 128 : c->argl[1]), c->argv[1]);
}

static const command rows[] = {
    {.name = "debug",
     .proc = debug_cmd,
     .arity = -2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_ALLSHARDS,
     .group = "server",
     .since = "1.0.0",
     .acl = "admin slow dangerous",
     .summary = "A container for debugging commands"},
};

void debug_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
