/* info.c - INFO [section ...] with Redis's field names, summed over every
 * shard (CMD_ALLSHARDS: the counters are read while their shards are held),
 * plus a per-shard breakdown in section "shards"; and COMMAND. */
#include "cmd/cmd.h"
#include "cmd/info.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/shard.h"
#include <stdio.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

extern int conn_count_total;

static int want(cmd_ctx *c, const char *sec, int dflt) {
    if (c->argc == 1) return dflt;
    for (int i = 1; i < c->argc; i++) {
        if (arg_is(c, i, sec) || arg_is(c, i, "all") || arg_is(c, i, "everything")) return 1;
        if (arg_is(c, i, "default") && dflt) return 1;
    }
    return 0;
}

static void human(char *out, size_t n, double b) {
    const char *u = "BKMGTP";
    int i = 0;
    while (b >= 1024 && i < 5) {
        b /= 1024;
        i++;
    }
    if (i == 0) snprintf(out, n, "%.0fB", b);
    else snprintf(out, n, "%.2f%c", b, u[i]);
}

static void info_cmd(cmd_ctx *c) {
    buf o = {0};
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    int64_t now = mstime();
    if (want(c, "server", 1)) {
        struct utsname un;
        uname(&un);
        int64_t up = (now - engine_start_time_ms()) / 1000;
        buf_printf(&o,
                   "# Server\r\nredis_version:7.0.15\r\nshoal_version:%s\r\nredis_git_sha1:00000000\r\n"
                   "redis_git_dirty:0\r\nredis_mode:standalone\r\nos:%s %s %s\r\narch_bits:64\r\n"
                   "multiplexing_api:epoll\r\ngcc_version:%d.%d.%d\r\nprocess_id:%d\r\nrun_id:%016llx%016llx%08x\r\n"
                   "tcp_port:%lld\r\nserver_time_usec:%lld\r\nuptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\n"
                   "hz:%lld\r\nconfigured_hz:%lld\r\nlru_clock:%u\r\nexecutable:shoal-server\r\nconfig_file:%s\r\n"
                   "io_threads_active:0\r\nshards:%d\r\n\r\n",
                   SHOAL_VERSION, un.sysname, un.release, un.machine, __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
                   (int)getpid(), (unsigned long long)engine_start_time_ms() * 2654435761ull,
                   (unsigned long long)getpid() * 11400714819323198485ull, 0u, (long long)cfg.port_i,
                   (long long)ustime(), (long long)up, (long long)(up / 86400), (long long)cfg_get(hz),
                   (long long)cfg_get(hz), (unsigned)((now / 1000) & LRU_CLOCK_MAX),
                   cfg.config_file ? cfg.config_file : "", nshards);
    }
    if (want(c, "clients", 1)) {
        buf_printf(&o,
                   "# Clients\r\nconnected_clients:%d\r\ncluster_connections:0\r\nmaxclients:%lld\r\n"
                   "client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:0\r\n"
                   "tracking_clients:0\r\nclients_in_timeout_table:0\r\n\r\n",
                   __atomic_load_n(&conn_count_total, __ATOMIC_RELAXED), (long long)cfg_get(maxclients));
    }
    if (want(c, "memory", 1)) {
        int64_t used = mem_used();
        size_t rss = mem_rss();
        char h1[32], h2[32], h3[32];
        human(h1, sizeof h1, (double)used);
        human(h2, sizeof h2, (double)rss);
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        human(h3, sizeof h3, (double)pages * (double)psz);
        buf_printf(&o,
                   "# Memory\r\nused_memory:%lld\r\nused_memory_human:%s\r\nused_memory_rss:%zu\r\n"
                   "used_memory_rss_human:%s\r\nused_memory_peak:%lld\r\nused_memory_dataset:%lld\r\n"
                   "total_system_memory:%lld\r\ntotal_system_memory_human:%s\r\nmaxmemory:%lld\r\n"
                   "maxmemory_policy:%s\r\nmem_fragmentation_ratio:%.2f\r\nmem_allocator:mimalloc\r\n"
                   "lazyfree_pending_objects:0\r\n",
                   (long long)used, h1, rss, h2, (long long)used, (long long)used, (long long)pages * psz, h3,
                   (long long)cfg_get(maxmemory), cfg.maxmemory_policy_s, used > 0 ? (double)rss / (double)used : 0.0);
        for (int i = 0; i < n; i++)
            buf_printf(&o, "shard%d_used_memory:%lld\r\n", ids[i], (long long)mem_used_slot(ids[i] + 1));
        buf_adds(&o, "\r\n");
    }
    uint64_t cmds = 0, conns = 0, rej = 0, exp = 0, hits = 0, miss = 0, nin = 0, nout = 0, ops = 0;
    for (int i = 0; i < n; i++) {
        shard *s = shards[ids[i]];
        cmds += s->stat_commands;
        conns += s->stat_conns;
        rej += s->stat_rejected;
        exp += s->stat_expired;
        hits += s->stat_hits;
        miss += s->stat_misses;
        nin += s->stat_net_in;
        nout += s->stat_net_out;
        uint64_t sum = 0;
        int k = s->ops_idx < 16 ? s->ops_idx : 16;
        for (int j = 0; j < k; j++) sum += s->ops_samples[j];
        ops += k ? sum / (uint64_t)k : 0;
    }
    if (want(c, "stats", 1)) {
        buf_printf(&o,
                   "# Stats\r\ntotal_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
                   "instantaneous_ops_per_sec:%llu\r\ntotal_net_input_bytes:%llu\r\ntotal_net_output_bytes:%llu\r\n"
                   "rejected_connections:%llu\r\nexpired_keys:%llu\r\nevicted_keys:0\r\nkeyspace_hits:%llu\r\n"
                   "keyspace_misses:%llu\r\npubsub_channels:0\r\npubsub_patterns:0\r\n\r\n",
                   (unsigned long long)conns, (unsigned long long)cmds, (unsigned long long)ops,
                   (unsigned long long)nin, (unsigned long long)nout, (unsigned long long)rej,
                   (unsigned long long)exp, (unsigned long long)hits, (unsigned long long)miss);
    }
    if (want(c, "cpu", 1)) {
        struct rusage self, kids;
        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_CHILDREN, &kids);
        buf_printf(&o,
                   "# CPU\r\nused_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\nused_cpu_sys_children:%ld.%06ld\r\n"
                   "used_cpu_user_children:%ld.%06ld\r\n\r\n",
                   (long)self.ru_stime.tv_sec, (long)self.ru_stime.tv_usec, (long)self.ru_utime.tv_sec,
                   (long)self.ru_utime.tv_usec, (long)kids.ru_stime.tv_sec, (long)kids.ru_stime.tv_usec,
                   (long)kids.ru_utime.tv_sec, (long)kids.ru_utime.tv_usec);
    }
    if (want(c, "shards", 1)) {
        buf_adds(&o, "# Shards\r\n");
        for (int i = 0; i < n; i++) {
            shard *s = shards[ids[i]];
            size_t keys = 0;
            for (int d = 0; d < (int)cfg.databases_i; d++) keys += db_size(&s->dbs[d]);
            buf_printf(&o, "shard%d:keys=%zu,commands=%llu,connections=%d,remote_batches=%llu,transactions=%llu\r\n",
                       ids[i], keys, (unsigned long long)s->stat_commands, s->nconns,
                       (unsigned long long)s->stat_remote_batches, (unsigned long long)s->stat_tx);
        }
        buf_adds(&o, "\r\n");
    }
    if (want(c, "keyspace", 1)) {
        buf_adds(&o, "# Keyspace\r\n");
        for (int d = 0; d < (int)cfg.databases_i; d++) {
            size_t keys = 0, expires = 0;
            for (int i = 0; i < n; i++) {
                keys += db_size(&shards[ids[i]]->dbs[d]);
                expires += shards[ids[i]]->dbs[d].expires;
            }
            if (keys) buf_printf(&o, "db%d:keys=%zu,expires=%zu,avg_ttl=0\r\n", d, keys, expires);
        }
        buf_adds(&o, "\r\n");
    }
    /* Redis ends without the last blank line */
    if (o.len >= 2 && o.p[o.len - 2] == '\r') o.len -= 2;
    reply_verbatim(c, o.p ? o.p : "", o.len);
    buf_free(&o);
}

static const command rows[] = {
    {.name = "info", .proc = info_cmd, .arity = -1, .flags = CMD_LOADING | CMD_STALE | CMD_ALLSHARDS,
     .group = "server", .since = "1.0.0", .acl = "slow dangerous",
     .summary = "Get information and statistics about the server"},
};

void info_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
