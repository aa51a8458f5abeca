/* info.c - INFO [section ...] with Redis's section and field names.
 *
 * One row per section in `sections` (Redis's order) gives its name, whether
 * INFO without arguments (or "default") shows it, and the function that
 * writes it. INFO is CMD_ALLSHARDS: it runs under a lock of every shard, so
 * the per-shard counters it sums are read while their shards are held.
 * Besides Redis's sections there is shoal's "shards": a line per shard. */
#include "shard/evict.h"
#include "shard/lazyfree.h"
#include "cmd/info.h"
#include "repl/master.h"
#include "persist/aof.h"
#include "shard/client_evict.h"
#include "repl/replica.h"
#include "cmd/migrate.h"
#include "cmd/cmd.h"
#include "cmd/script.h"
#include "cmd/persist.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/cmdstats.h"
#include "shard/pubsub.h"
#include "shard/tracking.h"
#include "shard/shard.h"
#include <stdio.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>


typedef struct info_src {
    int ids[MAX_SHARDS]; /* the shards this INFO sees (all of them under a tx) */
    int n;
    int64_t now_ms;
} info_src;

/* "1.09M" as Redis's bytesToHuman. */
static void human(char *out, size_t n, double b) {
    const char *u = "BKMGTP";
    int i = 0;
    while (b >= 1024 && i < 5) {
        b /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(out, n, "%.0fB", b);
    else
        snprintf(out, n, "%.2f%c", b, u[i]);
}

static void sec_server(buf *o, const info_src *src) {
    struct utsname un;
    uname(&un);
    int64_t start = engine_start_time_ms();
    int64_t up = (src->now_ms - start) / 1000;
    buf_printf(o,
               "redis_version:7.0.15\r\nshoal_version:%s\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\n"
               "redis_mode:standalone\r\nos:%s %s %s\r\narch_bits:64\r\nmultiplexing_api:epoll\r\n"
               "gcc_version:%d.%d.%d\r\nprocess_id:%d\r\nrun_id:%016llx%016llx%08x\r\ntcp_port:%lld\r\n"
               "server_time_usec:%lld\r\nuptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\nhz:%lld\r\n"
               "configured_hz:%lld\r\nlru_clock:%u\r\nexecutable:shoal-server\r\nconfig_file:%s\r\n"
               "io_threads_active:0\r\nshards:%d\r\n",
               SHOAL_VERSION, un.sysname, un.release, un.machine, __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
               (int)getpid(), (unsigned long long)start * 2654435761ull,
               (unsigned long long)getpid() * 11400714819323198485ull, 0u, (long long)cfg.port_i, (long long)ustime(),
               (long long)up, (long long)(up / 86400), (long long)cfg_get(hz), (long long)cfg_get(hz),
               (unsigned)((src->now_ms / 1000) & LRU_CLOCK_MAX), cfg.config_file ? cfg.config_file : "", nshards);
}

static void sec_clients(buf *o, const info_src *src) {
    int blocked = 0;
    for (int i = 0; i < nshards; i++)
        blocked += __atomic_load_n(&shards[i]->block_count, __ATOMIC_RELAXED) +
                   __atomic_load_n(&shards[i]->npaused, __ATOMIC_RELAXED);
    long long tk[4];
    tracking_stats(&tk[0], &tk[1], &tk[2], &tk[3]);
    buf_printf(o,
               "connected_clients:%d\r\ncluster_connections:0\r\nmaxclients:%lld\r\n"
               "client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:%d\r\n"
               "tracking_clients:%lld\r\nclients_in_timeout_table:%d\r\n",
               conn_count_live(), (long long)cfg_get(maxclients), blocked, tk[3],
               blocked);
}

static const char *hugepage_mode(void) {
    static const char *const names[] = {"never", "madvise", "always"};
    int64_t m = cfg_get(hugepages);
    return m >= 0 && m <= 2 ? names[m] : "never";
}

static void sec_memory(buf *o, const info_src *src) {
    int64_t pk = mem_peak(), used = mem_used();
    if (pk < used) pk = used;
    size_t rss = mem_rss();
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    int64_t maxmem = cfg_get(maxmemory);
    repl_mem rm;
    repl_memory(&rm);
    int64_t clients = 0; /* every connection's memory, as CLIENT LIST's tot-mem */
    for (int i = 0; i < src->n; i++) clients += cevict_clients_mem(shards[src->ids[i]]);
    char hu[32], hr[32], hp[32], hs[32], hm[32];
    human(hu, sizeof hu, (double)used);
    human(hr, sizeof hr, (double)rss);
    human(hp, sizeof hp, (double)pk);
    human(hs, sizeof hs, (double)pages * (double)psz);
    human(hm, sizeof hm, (double)maxmem);
    buf_printf(o,
               "used_memory:%lld\r\nused_memory_human:%s\r\nused_memory_rss:%zu\r\nused_memory_rss_human:%s\r\n"
               "used_memory_peak:%lld\r\nused_memory_peak_human:%s\r\nused_memory_peak_perc:%.2f%%\r\n"
               "used_memory_dataset:%lld\r\ntotal_system_memory:%lld\r\ntotal_system_memory_human:%s\r\n"
               "maxmemory:%lld\r\nmaxmemory_human:%s\r\nmaxmemory_policy:%s\r\nmem_fragmentation_ratio:%.2f\r\n"
               "mem_fragmentation_bytes:%lld\r\nmem_not_counted_for_evict:%lld\r\nmem_replication_backlog:%lld\r\n"
               "mem_total_replication_buffers:%lld\r\nmem_clients_slaves:%lld\r\nmem_clients_normal:%lld\r\n"
               "mem_cluster_links:0\r\nmem_aof_buffer:%zu\r\n"
               "mem_allocator:mimalloc\r\nlazyfree_pending_objects:%ld\r\nlazyfreed_objects:%ld\r\n"
               "hugepages:%s\r\nhuge_pages_bytes:%zu\r\n",
               (long long)used, hu, rss, hr, (long long)pk, hp, pk > 0 ? (double)used * 100.0 / (double)pk : 0.0,
               (long long)used, (long long)pages * psz, hs, (long long)maxmem, hm, cfg.maxmemory_policy_s,
               used > 0 ? (double)rss / (double)used : 0.0, (long long)rss - (long long)used,
               (long long)evict_not_counted(), (long long)rm.backlog, (long long)rm.total_buffers,
               (long long)rm.replicas, (long long)(clients - rm.replica_conns), aof_buffered_bytes(),
               lazyfree_pending(), lazyfree_freed(),
               hugepage_mode(), mem_huge_bytes());
    script_info_memory(o);
    for (int i = 0; i < src->n; i++)
        buf_printf(o, "shard%d_used_memory:%lld\r\n", src->ids[i], (long long)mem_used_slot(src->ids[i] + 1));
}

static void sec_persistence(buf *o, const info_src *src) { persist_info(o, src->ids, src->n); }

static void sec_stats(buf *o, const info_src *src) {
    long long tk[4];
    tracking_stats(&tk[0], &tk[1], &tk[2], &tk[3]);
    uint64_t cmds = 0, conns = 0, rej = 0, exp = 0, evicted = 0, evicted_clients = 0, hits = 0, miss = 0, nin = 0, nout = 0, ops = 0;
    for (int i = 0; i < src->n; i++) {
        shard *s = shards[src->ids[i]];
        cmds += s->stat_commands;
        conns += s->stat_conns;
        rej += s->stat_rejected;
        exp += s->stat_expired;
        evicted += s->stat_evicted;
        evicted_clients += s->stat_evicted_clients;
        hits += s->stat_hits;
        miss += s->stat_misses;
        nin += s->stat_net_in;
        nout += s->stat_net_out;
        uint64_t sum = 0;
        int k = s->ops_idx < 16 ? s->ops_idx : 16;
        for (int j = 0; j < k; j++)
            sum += s->ops_samples[j];
        ops += k ? sum / (uint64_t)k : 0;
    }
    buf_printf(o,
               "total_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
               "instantaneous_ops_per_sec:%llu\r\ntotal_net_input_bytes:%llu\r\ntotal_net_output_bytes:%llu\r\n"
               "rejected_connections:%llu\r\nexpired_keys:%llu\r\nevicted_keys:%llu\r\nevicted_clients:%llu\r\n"
               "keyspace_hits:%llu\r\n"
               "keyspace_misses:%llu\r\npubsub_channels:%lld\r\npubsub_patterns:%lld\r\npubsubshard_channels:%lld\r\n"
               "migrate_cached_sockets:%d\r\n"
               "tracking_total_keys:%lld\r\ntracking_total_items:%lld\r\ntracking_total_prefixes:%lld\r\n"
               "unexpected_error_replies:0\r\ntotal_error_replies:%llu\r\n",
               (unsigned long long)conns, (unsigned long long)cmds, (unsigned long long)ops, (unsigned long long)nin,
               (unsigned long long)nout, (unsigned long long)rej, (unsigned long long)exp, (unsigned long long)evicted,
               (unsigned long long)evicted_clients, (unsigned long long)hits, (unsigned long long)miss,
               pubsub_active(PS_CHANNEL), pubsub_active(PS_PATTERN), pubsub_active(PS_SHARD), migrate_cached_sockets(),
               tk[0], tk[1], tk[2], (unsigned long long)cmdstats_total_errors(src->ids, src->n));
}

static void sec_replication(buf *o, const info_src *src) {
    if (repl_is_replica()) {
        replica_info(o);
        return;
    }
    repl_info(o);
}

static void sec_cpu(buf *o, const info_src *src) {
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    buf_printf(o,
               "used_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\nused_cpu_sys_children:%ld.%06ld\r\n"
               "used_cpu_user_children:%ld.%06ld\r\n",
               (long)self.ru_stime.tv_sec, (long)self.ru_stime.tv_usec, (long)self.ru_utime.tv_sec,
               (long)self.ru_utime.tv_usec, (long)kids.ru_stime.tv_sec, (long)kids.ru_stime.tv_usec,
               (long)kids.ru_utime.tv_sec, (long)kids.ru_utime.tv_usec);
}

static void sec_empty(buf *o, const info_src *src) {}

static void sec_commandstats(buf *o, const info_src *src) { cmdstats_info_commands(o, src->ids, src->n); }
static void sec_errorstats(buf *o, const info_src *src) { cmdstats_info_errors(o, src->ids, src->n); }
static void sec_latencystats(buf *o, const info_src *src) { cmdstats_info_latency(o, src->ids, src->n); }

static void sec_cluster(buf *o, const info_src *src) { buf_adds(o, "cluster_enabled:0\r\n"); }

static void sec_shards(buf *o, const info_src *src) {
    for (int i = 0; i < src->n; i++) {
        shard *s = shards[src->ids[i]];
        size_t keys = 0;
        for (int d = 0; d < (int)cfg.databases_i; d++)
            keys += db_size(&s->dbs[d]);
        buf_printf(o, "shard%d:keys=%zu,commands=%llu,connections=%d,remote_batches=%llu,transactions=%llu,"
                   "tx_retries=%llu,tx_parked=%llu,tx_leased=%llu,tx_handed=%llu,tx_adopted=%llu,conns_moved=%llu\r\n",
                   src->ids[i], keys, (unsigned long long)s->stat_commands, s->nconns,
                   (unsigned long long)s->stat_remote_batches, (unsigned long long)s->stat_tx,
                   (unsigned long long)s->stat_tx_retries, (unsigned long long)s->stat_tx_parked,
                   (unsigned long long)s->stat_tx_leased, (unsigned long long)s->stat_tx_handed,
                   (unsigned long long)s->stat_tx_adopted, (unsigned long long)s->stat_conns_moved);
    }
}

static void sec_keyspace(buf *o, const info_src *src) {
    for (int d = 0; d < (int)cfg.databases_i; d++) {
        size_t keys = 0, expires = 0;
        for (int i = 0; i < src->n; i++) {
            keys += db_size(&shards[src->ids[i]]->dbs[d]);
            expires += shards[src->ids[i]]->dbs[d].expires;
        }
        if (keys) buf_printf(o, "db%d:keys=%zu,expires=%zu,avg_ttl=0\r\n", d, keys, expires);
    }
}

static const struct section {
    const char *name;  /* lowercase, as INFO takes it */
    const char *title; /* the "# Title" line */
    int dflt;          /* shown by INFO, INFO default */
    void (*write)(buf *o, const info_src *src);
} sections[] = {
    {"server", "Server", 1, sec_server},
    {"clients", "Clients", 1, sec_clients},
    {"memory", "Memory", 1, sec_memory},
    {"persistence", "Persistence", 1, sec_persistence},
    {"stats", "Stats", 1, sec_stats},
    {"replication", "Replication", 1, sec_replication},
    {"cpu", "CPU", 1, sec_cpu},
    {"modules", "Modules", 1, sec_empty},
    {"commandstats", "Commandstats", 0, sec_commandstats},
    {"errorstats", "Errorstats", 1, sec_errorstats},
    {"latencystats", "Latencystats", 0, sec_latencystats},
    {"cluster", "Cluster", 1, sec_cluster},
    {"shards", "Shards", 1, sec_shards},
    {"keyspace", "Keyspace", 1, sec_keyspace},
};
#define NSECTIONS ((int)(sizeof sections / sizeof sections[0]))

/* Whether INFO's arguments ask for section s. */
static int wanted(cmd_ctx *c, const struct section *s) {
    if (c->argc == 1) return s->dflt;
    for (int i = 1; i < c->argc; i++) {
        if (arg_is(c, i, s->name) || arg_is(c, i, "all") || arg_is(c, i, "everything")) return 1;
        if (arg_is(c, i, "default") && s->dflt) return 1;
    }
    return 0;
}

/* INFO [section [section ...]] */
static void info_cmd(cmd_ctx *c) {
    info_src src = {.now_ms = mstime()};
    src.n = ctx_shards(c, src.ids);
    buf o = {0};
    for (int i = 0; i < NSECTIONS; i++) {
        if (!wanted(c, &sections[i])) continue;
        if (o.len) buf_adds(&o, "\r\n"); /* a blank line between sections, none at the end */
        buf_printf(&o, "# %s\r\n", sections[i].title);
        sections[i].write(&o, &src);
    }
    reply_verbatim(c, o.p ? o.p : "", o.len);
    buf_free(&o);
}

static const command rows[] = {
    {.name = "info",
     .proc = info_cmd,
     .arity = -1,
     .flags = CMD_LOADING | CMD_STALE | CMD_ALLSHARDS,
     .group = "server",
     .since = "1.0.0",
     .acl = "slow dangerous",
     .summary = "Get information and statistics about the server"},
};

void info_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
