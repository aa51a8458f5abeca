/* memory.c - the MEMORY container: USAGE, STATS, DOCTOR, MALLOC-STATS,
 * PURGE and HELP, with Redis 7.0's replies.
 *
 * STATS, DOCTOR and PURGE carry CMD_ALLSHARDS: they run holding every
 * shard, so each shard's keyspace and connections are read while it is
 * still. The figures are shoal's own (lib/mem.h sums every thread's
 * allocations); where Redis reads jemalloc internals that mimalloc does not
 * give, the closest figure stands in (see stats_gather and
 * docs/architecture.md "MEMORY"). */
#include "cmd/cmd.h"
#include "cmd/script.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "server/config.h"
#include "shard/client_evict.h"
#include "shard/db.h"
#include "shard/shard.h"
#include <stdio.h>

/* MEMORY USAGE key [SAMPLES count] (the whole value is always measured) */
static void memory_usage(cmd_ctx *c) {
    for (int i = 3; i < c->argc; i += 2) {
        long long n;
        if (!arg_is(c, i, "samples") || i + 1 >= c->argc) {
            reply_status(c, ST_SYNTAX);
            return;
        }
        if (!arg_ll(c, i + 1, &n)) return;
        if (n < 0) {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    entry *e = db_find(ctx_db(c, c->argv[2], c->argl[2]), c->argv[2], c->argl[2], ctx_now(c));
    if (e)
        reply_int(c, (long long)entry_usage(e));
    else
        reply_null(c);
}

/* ---- the figures of STATS and DOCTOR ---- */

typedef struct db_over {
    int id;
    long long main, expires;
} db_over;

typedef struct mem_figures {
    long long peak, total, startup, clients, aof, lua, funcs, over_total, keys, per_key, dataset;
    double dataset_perc, peak_perc;
    long long alloc, active, resident;
    double alloc_frag, alloc_rss, rss_extra, frag;
    long long alloc_frag_b, alloc_rss_b, rss_extra_b, frag_b;
    int nclients;
    int ndbs;
    db_over *dbs; /* the non-empty databases, zmalloc'd */
} mem_figures;

static double ratio(long long a, long long b) { return b > 0 ? (double)(float)((double)a / (double)b) : 0.0; }

/* Redis's replication backlog, replica buffers and cluster links have no
 * counterpart here: 0, as on a Redis without them. */
static void stats_gather(cmd_ctx *c, mem_figures *m) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids), ndb = (int)cfg.databases_i;
    *m = (mem_figures){0};
    m->total = mem_used();
    m->peak = mem_peak();
    m->startup = mem_startup();
    for (int i = 0; i < n; i++) {
        m->clients += cevict_clients_mem(shards[ids[i]]);
        for (const struct conn *k = shards[ids[i]]->conns; k; k = k->all_next) m->nclients++;
    }
    m->aof = (long long)aof_buffered_bytes();
    m->lua = (long long)script_cache_bytes();
    m->funcs = (long long)function_cache_bytes();
    m->over_total = m->startup + m->clients + m->aof + m->lua + m->funcs;
    m->dbs = zcalloc(sizeof(db_over) * (size_t)(ndb ? ndb : 1));
    for (int d = 0; d < ndb; d++) {
        long long keys = 0, main = 0, expires = 0;
        for (int i = 0; i < n; i++) {
            db *x = ctx_shard_db(c, ids[i], d);
            keys += (long long)db_size(x);
            /* the bucket arrays, and each key's chain link (the part of
             * Redis's dictEntry an entry here carries) */
            main += (long long)(table_overhead(x->t) + db_size(x) * sizeof(entry *));
            /* no expires table: an expire is 8 bytes inside its entry */
            expires += (long long)(x->expires * sizeof(int64_t));
        }
        if (!keys) continue;
        m->keys += keys;
        m->dbs[m->ndbs++] = (db_over){d, main, expires};
        m->over_total += main + expires;
    }
    long long net = m->total > m->startup ? m->total - m->startup : 1;
    m->dataset = m->total > m->over_total ? m->total - m->over_total : 0;
    m->dataset_perc = (double)(float)((double)m->dataset * 100 / (double)net);
    m->per_key = m->keys ? net / m->keys : 0;
    m->peak_perc = (double)(float)(m->peak ? (double)m->total * 100 / (double)m->peak : 0.0);
    /* mimalloc gives no allocated/active/resident split as jemalloc does:
     * allocated is the engine's own sum of block sizes; active the pages
     * mimalloc has committed, but no more than the process's RSS (committed
     * pages never touched are not resident on Linux); resident the process's
     * RSS (mimalloc does not say how much of it is its own), so rss-overhead
     * is always 1. Without a committed figure (libc builds) active is the
     * allocated one. */
    long long rss = (long long)mem_rss();
    m->alloc = m->total;
    m->active = (long long)mem_committed();
    if (m->active <= 0) m->active = m->alloc;
    if (m->active > rss && rss > 0) m->active = rss;
    m->resident = rss > 0 ? rss : m->active;
    m->alloc_frag = ratio(m->active, m->alloc);
    m->alloc_frag_b = m->active - m->alloc;
    m->alloc_rss = ratio(m->resident, m->active);
    m->alloc_rss_b = m->resident - m->active;
    m->rss_extra = ratio(rss, m->resident);
    m->rss_extra_b = rss - m->resident;
    m->frag = ratio(rss, m->total);
    m->frag_b = rss - m->total;
}

/* MEMORY STATS: a map in Redis's order; a non-empty database is "db.N",
 * a map of its three overheads. */
static void memory_stats(cmd_ctx *c) {
    mem_figures m;
    stats_gather(c, &m);
    static const char *const head[] = {"peak.allocated", "total.allocated", "startup.allocated",
                                       "replication.backlog", "clients.slaves", "clients.normal",
                                       "cluster.links", "aof.buffer", "lua.caches", "functions.caches"};
    long long hv[] = {m.peak, m.total, m.startup, 0, 0, m.clients, 0, m.aof, m.lua, m.funcs};
    reply_map(c, 27 + m.ndbs);
    for (int i = 0; i < 10; i++) {
        reply_cstr(c, head[i]);
        reply_int(c, hv[i]);
    }
    for (int i = 0; i < m.ndbs; i++) {
        char name[32];
        snprintf(name, sizeof name, "db.%d", m.dbs[i].id);
        reply_cstr(c, name);
        reply_map(c, 3);
        reply_cstr(c, "overhead.hashtable.main");
        reply_int(c, m.dbs[i].main);
        reply_cstr(c, "overhead.hashtable.expires");
        reply_int(c, m.dbs[i].expires);
        reply_cstr(c, "overhead.hashtable.slot-to-keys"); /* cluster mode's index: shoal has none */
        reply_int(c, 0);
    }
    zfree(m.dbs);
    struct {
        const char *name;
        int dbl;
        long long v;
        double d;
    } tail[] = {
        {"overhead.total", 0, m.over_total, 0},
        {"keys.count", 0, m.keys, 0},
        {"keys.bytes-per-key", 0, m.per_key, 0},
        {"dataset.bytes", 0, m.dataset, 0},
        {"dataset.percentage", 1, 0, m.dataset_perc},
        {"peak.percentage", 1, 0, m.peak_perc},
        {"allocator.allocated", 0, m.alloc, 0},
        {"allocator.active", 0, m.active, 0},
        {"allocator.resident", 0, m.resident, 0},
        {"allocator-fragmentation.ratio", 1, 0, m.alloc_frag},
        {"allocator-fragmentation.bytes", 0, m.alloc_frag_b, 0},
        {"allocator-rss.ratio", 1, 0, m.alloc_rss},
        {"allocator-rss.bytes", 0, m.alloc_rss_b, 0},
        {"rss-overhead.ratio", 1, 0, m.rss_extra},
        {"rss-overhead.bytes", 0, m.rss_extra_b, 0},
        {"fragmentation", 1, 0, m.frag},
        {"fragmentation.bytes", 0, m.frag_b, 0},
    };
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++) {
        reply_cstr(c, tail[i].name);
        if (tail[i].dbl)
            reply_double(c, tail[i].d);
        else
            reply_int(c, tail[i].v);
    }
}

/* MEMORY DOCTOR: Redis's report, from the same conditions (its texts are
 * what clients match). */
static void memory_doctor(cmd_ctx *c) {
    mem_figures m;
    stats_gather(c, &m);
    zfree(m.dbs);
    const long long mb10 = 10ll << 20;
    int empty = m.total < (5ll << 20);
    int big_peak = 0, high_frag = 0, high_alloc_frag = 0, high_alloc_rss = 0, high_proc_rss = 0, big_client_buf = 0,
        many_scripts = 0;
    if (!empty) {
        big_peak = m.total > 0 && (double)m.peak / (double)m.total > 1.5;
        high_frag = m.frag > 1.4 && m.frag_b > mb10;
        high_alloc_frag = m.alloc_frag > 1.1 && m.alloc_frag_b > mb10;
        high_alloc_rss = m.alloc_rss > 1.1 && m.alloc_rss_b > mb10;
        high_proc_rss = m.rss_extra > 1.1 && m.rss_extra_b > mb10;
        big_client_buf = m.nclients > 0 && m.clients / m.nclients > 200 * 1024;
        many_scripts = script_cache_count() > 1000;
    }
    int issues = empty + big_peak + high_frag + high_alloc_frag + high_alloc_rss + high_proc_rss + big_client_buf +
                 many_scripts;
    buf o = {0};
    if (!issues) {
        buf_printf(&o, "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs "
                       "on this base.\n");
    } else if (empty) {
        buf_printf(&o, "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be "
                       "used in these conditions. Please, leave for your mission on Earth and fill it with some data. "
                       "The new Sam and I will be back to our programming as soon as I finished rebooting.\n");
    } else {
        buf_printf(&o, "Sam, I detected a few issues in this Redis instance memory implants:\n\n");
        if (big_peak)
            buf_printf(&o, " * Peak memory: In the past this instance used more than 150%% the memory that is "
                           "currently using. The allocator is normally not able to release memory after a peak, so "
                           "you can expect to see a big fragmentation ratio, however this is actually harmless and is "
                           "only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is "
                           "currently bigger than expected, the memory will be used as soon as you fill the Redis "
                           "instance with more data. If the memory peak was only occasional and you want to try to "
                           "reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is "
                           "to shutdown and restart the instance.\n\n");
        if (high_frag)
            buf_printf(&o, " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than "
                           "1.4 (this means that the Resident Set Size of the Redis process is much larger than the "
                           "sum of the logical allocations Redis performed). This problem is usually due either to a "
                           "large peak memory (check if there is a peak memory entry above in the report) or may "
                           "result from a workload that causes the allocator to fragment memory a lot. If the problem "
                           "is a large peak memory, then there is no issue. Otherwise, make sure you are using the "
                           "Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is "
                           "\"%s\".\n\n",
                       "mimalloc");
        if (high_alloc_frag)
            buf_printf(&o, " * High allocator fragmentation: This instance has an allocator external fragmentation "
                           "greater than 1.1. This problem is usually due either to a large peak memory (check if "
                           "there is a peak memory entry above in the report) or may result from a workload that "
                           "causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config "
                           "option.\n\n");
        if (high_alloc_rss)
            buf_printf(&o, " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than "
                           "1.1 (this means that the Resident Set Size of the allocator is much larger than the sum "
                           "what the allocator actually holds). This problem is usually due to a large peak memory "
                           "(check if there is a peak memory entry above in the report), you can try the MEMORY PURGE "
                           "command to reclaim it.\n\n");
        if (high_proc_rss)
            buf_printf(&o, " * High process RSS overhead: This instance has non-allocator RSS memory overhead is "
                           "greater than 1.1 (this means that the Resident Set Size of the Redis process is much "
                           "larger than the RSS the allocator holds). This problem may be due to Lua scripts or "
                           "Modules.\n\n");
        if (big_client_buf)
            buf_printf(&o, " * Big client buffers: The clients output buffers in this instance are greater than 200K "
                           "per client (on average). This may result from different causes, like Pub/Sub clients "
                           "subscribed to channels bot not receiving data fast enough, so that data piles on the Redis "
                           "instance output buffer, or clients sending commands with large replies or very large "
                           "sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to "
                           "investigate the issue if it causes problems in your instance, or to understand better why "
                           "certain clients are using a big amount of memory.\n\n");
        if (many_scripts)
            buf_printf(&o, " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). "
                           "This may be because scripts are generated and `EVAL`ed, instead of being parameterized "
                           "(with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called "
                           "periodically, the scripts' caches may end up consuming most of your memory.\n\n");
        buf_printf(&o, "I'm here to keep you safe, Sam. I want to help you.\n");
    }
    reply_verbatim(c, o.p, o.len);
    buf_free(&o);
}

static void stats_out(const char *msg, void *arg) { buf_printf(arg, "%s", msg); }

/* MEMORY MALLOC-STATS: mimalloc's own report (its figures are those
 * merged into the process's so far). */
static void memory_malloc_stats(cmd_ctx *c) {
    buf o = {0};
    if (!mem_stats_text(stats_out, &o)) {
        reply_cstr(c, "Stats not supported for the current allocator");
        return;
    }
    reply_verbatim(c, o.p ? o.p : "", o.len);
    buf_free(&o);
}

/* MEMORY PURGE: this thread gives its free pages back now; every other
 * shard's heap is its own thread's, so each does at its next cron tick. */
static void memory_purge(cmd_ctx *c) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    mem_release();
    for (int i = 0; i < n; i++)
        if (shards[ids[i]] != c->sh) shard_purge_request(shards[ids[i]]);
    reply_ok(c);
}

/* MEMORY HELP */
static void memory_help(cmd_ctx *c) {
    static const char *const lines[] = {
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP",
        "    Prints this help.",
    };
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

#define MEMSUB(nm, fn, tp, sum)                                                                                        \
    {.name = "memory|" nm, .proc = fn, .arity = 2, .flags = CMD_ALLSHARDS, .tips = tp, .group = "server",           \
     .since = "4.0.0", .acl = "slow", .summary = sum}
#define SPECIAL "nondeterministic_output request_policy:all_shards response_policy:special"
static command memory_subs[] = {
    MEMSUB("doctor", memory_doctor, SPECIAL, "Outputs memory problems report"),
    MEMSUB("malloc-stats", memory_malloc_stats, SPECIAL, "Show allocator internal stats"),
    MEMSUB("purge", memory_purge, "request_policy:all_shards response_policy:all_succeeded",
           "Ask the allocator to release memory"),
    MEMSUB("stats", memory_stats, SPECIAL, "Show memory usage details"),
    {.name = "memory|usage", .proc = memory_usage, .arity = -3, .flags = CMD_READONLY, .first = 2, .last = 2,
     .step = 1, .kflags = KS_RO, .group = "server", .since = "4.0.0", .acl = "read slow",
     .summary = "Estimate the memory usage of a key"},
    {.name = "memory|help", .proc = memory_help, .arity = 2, .flags = CMD_LOADING | CMD_STALE, .group = "server",
     .since = "4.0.0", .acl = "slow", .summary = "Show helpful text about the different subcommands"},
};

static const command rows[] = {
    {.name = "memory", .arity = -2, .group = "server", .since = "4.0.0", .acl = "slow",
     .summary = "A container for memory diagnostics commands", .subs = memory_subs,
     .nsubs = (int)(sizeof memory_subs / sizeof memory_subs[0])},
};

void memory_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
