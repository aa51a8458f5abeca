/* latency.c - LATENCY LATEST, HISTORY, RESET, GRAPH, DOCTOR and HELP over
 * the latency monitor's store (shard/latency.h), with Redis 7.0's replies.
 *
 * The store is one for the process, so these run on the connection's own
 * shard like any keyless command and see every shard's samples. Each
 * handler copies what it needs out of the store and formats the copy.
 *
 * GRAPH draws Redis's sparkline: per band of 80 samples, 4 rows of 3
 * levels each (a cell is ' ', '_', 'o' or '#', and '|' below a full one),
 * a blank row, then each sample's age ("12s", "3m", "1h", "2d") written
 * downwards. DOCTOR prints per event its statistics, then the advice that
 * Redis gives for the events seen. */
#include "shard/latency.h"
#include "cmd/cmd.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/cmdstats.h"
#include "shard/shard.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* argv[i] as a NUL-terminated event name (Redis compares up to the first
 * NUL); 0 when it is too long to name an event. */
static int arg_event(cmd_ctx *c, int i, char *name) {
    size_t n = strnlen(c->argv[i], c->argl[i]);
    if (n >= LATENCY_NAME_MAX) return 0;
    memcpy(name, c->argv[i], n);
    name[n] = 0;
    return 1;
}

/* LATENCY LATEST */
static void latency_latest_cmd(cmd_ctx *c) {
    latency_series *all = zmalloc(sizeof(latency_series) * LATENCY_EVENTS);
    int n = latency_snapshot(all, LATENCY_EVENTS);
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        const latency_sample *last = &all[i].s[all[i].n - 1];
        reply_array(c, 4);
        reply_cstr(c, all[i].name);
        reply_int(c, last->time);
        reply_int(c, last->ms);
        reply_int(c, all[i].max);
    }
    zfree(all);
}

/* LATENCY HISTORY event */
static void latency_history_cmd(cmd_ctx *c) {
    char name[LATENCY_NAME_MAX];
    latency_series *e = zmalloc(sizeof *e);
    if (!arg_event(c, 2, name) || !latency_get(name, e)) e->n = 0;
    reply_array(c, e->n);
    for (int i = 0; i < e->n; i++) {
        reply_array(c, 2);
        reply_int(c, e->s[i].time);
        reply_int(c, e->s[i].ms);
    }
    zfree(e);
}

/* LATENCY RESET [event ...] */
static void latency_reset_cmd(cmd_ctx *c) {
    int n = 0;
    char name[LATENCY_NAME_MAX];
    if (c->argc == 2) n = latency_reset(NULL);
    for (int i = 2; i < c->argc; i++)
        if (arg_event(c, i, name)) n += latency_reset(name);
    reply_int(c, n);
}

/* ---- GRAPH ---- */

#define GRAPH_COLS 80
#define GRAPH_ROWS 4

/* The sparkline of samples [from, from+len) of e, scaled to [lo, hi]. */
static void graph_band(buf *o, const latency_series *e, int from, int len, int64_t lo, int64_t hi, int64_t now) {
    static const char level[] = "_o#";
    int64_t span = hi > lo ? hi - lo : 1;
    int steps = 3 * GRAPH_ROWS;
    char label[GRAPH_COLS][24];
    int step[GRAPH_COLS], tallest = 0;
    for (int j = 0; j < len; j++) {
        const latency_sample *s = &e->s[from + j];
        int64_t v = (s->ms - lo) * steps / span;
        step[j] = v < 0 ? 0 : v >= steps ? steps - 1 : (int)v;
        int64_t age = now - s->time;
        if (age < 60)
            snprintf(label[j], sizeof label[j], "%llds", (long long)age);
        else if (age < 3600)
            snprintf(label[j], sizeof label[j], "%lldm", (long long)(age / 60));
        else if (age < 86400)
            snprintf(label[j], sizeof label[j], "%lldh", (long long)(age / 3600));
        else
            snprintf(label[j], sizeof label[j], "%lldd", (long long)(age / 86400));
        int l = (int)strlen(label[j]);
        if (l > tallest) tallest = l;
    }
    for (int row = 0; row < GRAPH_ROWS; row++) {
        for (int j = 0; j < len; j++) {
            int k = step[j] - (GRAPH_ROWS - 1 - row) * 3; /* this row's share of the bar */
            buf_addc(o, k < 0 ? ' ' : k < 3 ? level[k] : '|');
        }
        buf_addc(o, '\n');
    }
    for (int j = 0; j < len; j++)
        buf_addc(o, ' ');
    buf_addc(o, '\n');
    for (int k = 0; k < tallest; k++) {
        for (int j = 0; j < len; j++)
            buf_addc(o, k < (int)strlen(label[j]) ? label[j][k] : ' ');
        buf_addc(o, '\n');
    }
}

/* LATENCY GRAPH event */
static void latency_graph_cmd(cmd_ctx *c) {
    char name[LATENCY_NAME_MAX];
    latency_series *e = zmalloc(sizeof *e);
    if (!arg_event(c, 2, name) || !latency_get(name, e)) {
        int n = (int)strnlen(c->argv[2], c->argl[2]);
        reply_errorf(c, "ERR No samples available for event '%.*s'", n > 400 ? 400 : n, c->argv[2]);
        zfree(e);
        return;
    }
    int64_t lo = e->s[0].ms, hi = e->s[0].ms, now = (int64_t)time(NULL);
    for (int i = 1; i < e->n; i++) {
        if (e->s[i].ms < lo) lo = e->s[i].ms;
        if (e->s[i].ms > hi) hi = e->s[i].ms;
    }
    buf o = {0};
    buf_printf(&o, "%s - high %lld ms, low %lld ms (all time high %lld ms)\n", e->name, (long long)hi, (long long)lo,
               (long long)e->max);
    for (int i = 0; i < GRAPH_COLS; i++)
        buf_addc(&o, '-');
    buf_addc(&o, '\n');
    for (int from = 0; from < e->n; from += GRAPH_COLS) {
        if (from) buf_addc(&o, '\n');
        graph_band(&o, e, from, e->n - from < GRAPH_COLS ? e->n - from : GRAPH_COLS, lo, hi, now);
    }
    reply_verbatim(c, o.p, o.len);
    buf_free(&o);
    zfree(e);
}

/* ---- DOCTOR ---- */

/* Redis's pieces of advice, in the order the report prints them. */
enum {
    ADV_SLOWLOG_ENABLE,
    ADV_SLOWLOG_TUNE,
    ADV_SLOWLOG_INSPECT,
    ADV_SCHEDULER,
    ADV_LOCAL_DISK,
    ADV_SSD,
    ADV_WRITEBACK,
    ADV_DISK_CONTENTION,
    ADV_NO_APPENDFSYNC,
    ADV_RELAX_FSYNC,
    ADV_WRITE_LOAD,
    ADV_HZ,
    ADV_LARGE_OBJECTS,
    ADV_MASS_EVICTION,
    ADV_THP,
};
#define A(x) (1u << ADV_##x)

/* What each event calls for ("command" adds the slow log ones by config). */
static const struct {
    const char *event;
    unsigned advice;
} event_advice[] = {
    {"command", A(SLOWLOG_INSPECT) | A(LARGE_OBJECTS)},
    {"fast-command", A(SCHEDULER)},
    {"aof-write-pending-fsync", A(LOCAL_DISK) | A(DISK_CONTENTION) | A(SSD) | A(WRITEBACK)},
    {"aof-write-active-child", A(NO_APPENDFSYNC) | A(WRITEBACK) | A(SSD)},
    {"aof-write-alone", A(LOCAL_DISK) | A(WRITEBACK) | A(SSD)},
    {"aof-fsync-always", A(RELAX_FSYNC)},
    {"aof-fstat", A(DISK_CONTENTION) | A(LOCAL_DISK)},
    {"rdb-unlink-temp-file", A(DISK_CONTENTION) | A(LOCAL_DISK)},
    {"aof-rewrite-diff-write", A(WRITE_LOAD) | A(WRITEBACK) | A(SSD) | A(LOCAL_DISK)},
    {"aof-rename", A(WRITE_LOAD) | A(WRITEBACK) | A(SSD) | A(LOCAL_DISK)},
    {"expire-cycle", A(HZ) | A(LARGE_OBJECTS)},
    {"eviction-del", A(LARGE_OBJECTS)},
    {"eviction-cycle", A(MASS_EVICTION)},
};

static unsigned advice_for(const char *event, int64_t threshold) {
    unsigned a = 0;
    for (size_t i = 0; i < sizeof event_advice / sizeof event_advice[0]; i++)
        if (!strcasecmp(event, event_advice[i].event)) a |= event_advice[i].advice;
    if (!strcasecmp(event, "command")) {
        int64_t slower = cfg_get(slowlog_log_slower_than);
        if (slower < 0)
            a |= A(SLOWLOG_ENABLE);
        else if (slower / 1000 > threshold)
            a |= A(SLOWLOG_TUNE);
    }
    return a;
}

/* Whether the process has anonymous transparent huge pages (smaps). */
static int thp_in_use(void) {
    static const char *const files[] = {"/proc/self/smaps_rollup", "/proc/self/smaps"};
    for (int f = 0; f < 2; f++) {
        FILE *fp = fopen(files[f], "r");
        if (!fp) continue;
        char line[256];
        long long kb, total = 0;
        while (fgets(line, sizeof line, fp))
            if (sscanf(line, "AnonHugePages: %lld", &kb) == 1) total += kb;
        fclose(fp);
        return total > 0;
    }
    return 0;
}

/* One event's line of statistics (without its newline). */
static void doctor_event(buf *o, int num, const latency_series *e, int64_t now) {
    int64_t sum = 0, oldest = e->s[0].time, mad = 0;
    for (int i = 0; i < e->n; i++) {
        sum += e->s[i].ms;
        if (e->s[i].time < oldest) oldest = e->s[i].time;
    }
    int64_t avg = sum / e->n, period = now - oldest;
    if (period == 0) period = 1;
    for (int i = 0; i < e->n; i++)
        mad += e->s[i].ms > avg ? e->s[i].ms - avg : avg - e->s[i].ms;
    mad /= e->n;
    buf_printf(o,
               "%d. %s: %d latency spikes (average %lldms, mean deviation %lldms, period %.2f sec). Worst all time "
               "event %lldms.",
               num, e->name, e->n, (long long)avg, (long long)mad, (double)period / e->n, (long long)e->max);
}

static void doctor_advice(buf *o, unsigned a, int64_t threshold) {
    unsigned long long us = (unsigned long long)threshold * 1000;
    buf_adds(o, "\nI have a few advices for you:\n\n");
    if (a & A(SLOWLOG_ENABLE))
        buf_printf(o,
                   "- There are latency issues with potentially slow commands you are using. Try to enable the Slow "
                   "Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %llu'. If the Slow log "
                   "is disabled Redis is not able to log slow commands execution for you.\n",
                   us);
    if (a & A(SLOWLOG_TUNE))
        buf_printf(o,
                   "- Your current Slow Log configuration only logs events that are slower than your configured "
                   "latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %llu'.\n",
                   us);
    if (a & A(SLOWLOG_INSPECT))
        buf_adds(o, "- Check your Slow Log to understand what are the commands you are running which are too slow "
                    "to execute. Please check https://redis.io/commands/slowlog for more information.\n");
    if (a & A(SCHEDULER))
        buf_adds(o, "- The system is slow to execute Redis code paths not containing system calls. This usually "
                    "means the system does not provide Redis CPU time to run for long periods. You should try to:\n"
                    "  1) Lower the system load.\n"
                    "  2) Use a computer / VM just for Redis if you are running other software in the same system.\n"
                    "  3) Check if you have a \"noisy neighbour\" problem.\n"
                    "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your "
                    "system.\n"
                    "  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you "
                    "are using Jemalloc. However this may create fragmentation problems.\n");
    if (a & A(LOCAL_DISK))
        buf_adds(o, "- It is strongly advised to use local disks for persistence, especially if you are using AOF. "
                    "Remote disks provided by platform-as-a-service providers are known to be slow.\n");
    if (a & A(SSD))
        buf_adds(o, "- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF "
                    "log rewriting (resulting in smaller memory usage and smaller final AOF rewrite buffer "
                    "flushes). With extremely high write load SSD disks can be a good option. However Redis should "
                    "perform reasonably with high load using normal disks. Use this advice as a last resort.\n");
    if (a & A(WRITEBACK))
        buf_adds(o, "- Mounting ext3/4 filesystems with data=writeback can provide a performance boost compared to "
                    "data=ordered, however this mode of operation provides less guarantees, and sometimes it can "
                    "happen that after a hard crash the AOF file will have a half-written command at the end and "
                    "will require to be repaired before Redis restarts.\n");
    if (a & A(DISK_CONTENTION))
        buf_adds(o, "- Try to lower the disk contention. This is often caused by other disk intensive processes "
                    "running in the same computer (including other Redis instances).\n");
    if (a & A(NO_APPENDFSYNC))
        buf_adds(o, "- Assuming from the point of view of data safety this is viable in your environment, you could "
                    "try to enable the 'no-appendfsync-on-rewrite' option, so that fsync will not be performed "
                    "while there is a child rewriting the AOF file or producing an RDB file (the moment where there "
                    "is high disk contention).\n");
    if ((a & A(RELAX_FSYNC)) && cfg_get(appendfsync) == CFG_FSYNC_ALWAYS)
        buf_adds(o, "- Your fsync policy is set to 'always'. It is very hard to get good performances with such a "
                    "setup, if possible try to relax the fsync policy to 'onesec'.\n");
    if (a & A(WRITE_LOAD))
        buf_adds(o, "- Latency during the AOF atomic rename operation or when the final difference is flushed to "
                    "the AOF file at the end of the rewrite, sometimes is caused by very high write load, causing "
                    "the AOF buffer to get very large. If possible try to send less commands to accomplish the same "
                    "work, or use Lua scripts to group multiple operations into a single EVALSHA call.\n");
    if ((a & A(HZ)) && cfg_get(hz) < 100)
        buf_adds(o, "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' "
                    "configuration parameter to 100 using 'CONFIG SET hz 100'.\n");
    if (a & A(LARGE_OBJECTS))
        buf_adds(o, "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking "
                    "operation. If you have very large objects that are often deleted, expired, or evicted, try to "
                    "fragment those objects into multiple smaller objects.\n");
    if (a & A(MASS_EVICTION))
        buf_adds(o, "- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects "
                    "via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys "
                    "migrations (RESTORE command), may create sudden memory pressure forcing the server to block "
                    "trying to evict keys. \n");
    if (a & A(THP))
        buf_adds(o, "- I detected a non zero amount of anonymous huge pages used by your process. This creates very "
                    "serious latency events in different conditions, especially when Redis is persisting on disk. "
                    "To disable THP support use the command 'echo never > "
                    "/sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so "
                    "that the command will be executed again after a reboot. Note that even if you have already "
                    "disabled THP, you still need to restart the Redis process to get rid of the huge pages already "
                    "created.\n");
}

/* LATENCY DOCTOR */
static void latency_doctor_cmd(cmd_ctx *c) {
    latency_series *all = zmalloc(sizeof(latency_series) * LATENCY_EVENTS);
    int n = latency_snapshot(all, LATENCY_EVENTS);
    int64_t threshold = cfg_get(latency_monitor_threshold), now = (int64_t)time(NULL);
    buf o = {0};
    if (n == 0 && threshold == 0) {
        buf_adds(&o, "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You "
                     "may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we "
                     "weren't in a deep space mission I'd suggest to take a look at "
                     "https://redis.io/topics/latency-monitor.\n");
    } else {
        unsigned advice = 0;
        for (int i = 0; i < n; i++) {
            if (i == 0)
                buf_adds(&o, "Dave, I have observed latency spikes in this Redis instance. You don't mind talking "
                             "about it, do you Dave?\n\n");
            doctor_event(&o, i + 1, &all[i], now);
            buf_addc(&o, '\n');
            advice |= advice_for(all[i].name, threshold);
        }
        if (thp_in_use()) advice |= A(THP);
        if (!advice && n == 0)
            buf_adds(&o, "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the "
                         "slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and "
                         "think things over.\n");
        else if (!advice)
            buf_adds(&o, "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use "
                         "the Redis community to get some help, providing this report in your help request.\n");
        else
            doctor_advice(&o, advice, threshold);
    }
    reply_verbatim(c, o.p, o.len);
    buf_free(&o);
    zfree(all);
}

/* LATENCY HELP */
static void latency_help_cmd(cmd_ctx *c) {
    static const char *const lines[] = {
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        ("    Return a cumulative distribution of latencies in the format of a histogram for the specified command "
         "names."),
        "    If no commands are specified then all histograms are replied.",
        "HELP",
        "    Prints this help.",
    };
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

/* The row of a name as LATENCY HISTOGRAM takes it: "get", "config|get". */
static const command *histogram_lookup(const char *name, size_t len) {
    const char *bar = memchr(name, '|', len);
    if (!bar) return cmd_lookup(name, len);
    const command *parent = cmd_lookup(name, (size_t)(bar - name));
    return parent ? cmd_lookup_sub(parent, bar + 1, len - (size_t)(bar - name) - 1) : NULL;
}

typedef struct hist_reply {
    cmd_ctx *c;
    int ids[MAX_SHARDS], n;
    long long entries;
} hist_reply;

/* Adds cmd's histogram, and its subcommands', to the reply. */
static void histogram_of(hist_reply *h, const command *cmd) {
    h->entries += cmdstats_histogram_reply(h->c->out, h->c->resp, cmd_index(cmd), h->ids, h->n);
    for (int i = 0; i < cmd->nsubs; i++)
        h->entries += cmdstats_histogram_reply(h->c->out, h->c->resp, cmd_index(&cmd->subs[i]), h->ids, h->n);
}

static void histogram_row(const command *cmd, void *ud) { histogram_of(ud, cmd); }

/* LATENCY HISTOGRAM [command ...]: every shard's histograms, summed;
 * names that are no command, or have no calls, are left out. */
static void latency_histogram_cmd(cmd_ctx *c) {
    hist_reply h = {.c = c};
    h.n = ctx_shards(c, h.ids);
    size_t at = reply_defer(c);
    if (c->argc == 2) {
        cmd_foreach(histogram_row, &h);
    } else {
        for (int i = 2; i < c->argc; i++) {
            const command *cmd = histogram_lookup(c->argv[i], c->argl[i]);
            if (cmd) histogram_of(&h, cmd);
        }
    }
    reply_defer_map(c, at, h.entries);
}

#define ADM CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE
#define SUB(sub, fn, ar, fl, acl_, text)                                                                               \
    {                                                                                                                  \
        .name = "latency|" sub, .proc = fn, .arity = ar, .flags = fl, .group = "server", .since = "2.8.13",            \
        .acl = acl_, .summary = text                                                                                   \
    }
static command latency_subs[] = {
    SUB("latest", latency_latest_cmd, 2, ADM, "admin slow dangerous",
        "Return the latest latency samples for all events."),
    SUB("history", latency_history_cmd, 3, ADM, "admin slow dangerous",
        "Return timestamp-latency samples for the event."),
    SUB("reset", latency_reset_cmd, -2, ADM, "admin slow dangerous", "Reset latency data for one or more events."),
    SUB("graph", latency_graph_cmd, 3, ADM, "admin slow dangerous", "Return a latency graph for the event."),
    SUB("doctor", latency_doctor_cmd, 2, ADM, "admin slow dangerous",
        "Return a human readable latency analysis report."),
    SUB("histogram", latency_histogram_cmd, -2, ADM | CMD_ALLSHARDS, "admin slow dangerous",
        "Return the cumulative distribution of latencies of a subset of commands or all."),
    SUB("help", latency_help_cmd, 2, CMD_LOADING | CMD_STALE, "slow",
        "Show helpful text about the different subcommands."),
};

static const command rows[] = {
    {.name = "latency",
     .arity = -2,
     .group = "server",
     .since = "2.8.13",
     .acl = "slow",
     .summary = "A container for latency diagnostics commands",
     .subs = latency_subs,
     .nsubs = (int)(sizeof latency_subs / sizeof latency_subs[0])},
};

void latency_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
