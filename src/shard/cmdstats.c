/* cmdstats.c - per-shard command and error statistics (see cmdstats.h).
 *
 * Histogram buckets: a duration v in ns below 32 has bucket v; above, with
 * e = floor(log2 v) >= 5, bucket (e - 4) * 32 + the 5 bits of v after its
 * leading one. Bucket b's durations end at bucket_high(b). */
#include "shard/cmdstats.h"
#include "cmd/cmd.h"
#include "lib/mem.h"
#include "proto/resp.h"
#include "server/config.h"
#include "shard/shard.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bucket_of(uint64_t v) {
    if (v < 32) return (int)v;
    int e = 63 - __builtin_clzll(v);
    int b = (e - 4) * 32 + (int)((v >> (e - 5)) & 31);
    return b < CMDSTATS_BUCKETS ? b : CMDSTATS_BUCKETS - 1;
}

static uint64_t bucket_high(int b) {
    if (b < 32) return (uint64_t)b;
    int e = b / 32 + 4, sub = b % 32;
    uint64_t low = (uint64_t)(32 + sub) << (e - 5);
    return low + (1ull << (e - 5)) - 1;
}

static cmdstats *stats_of(shard *sh) {
    if (!sh->cstats) {
        sh->cstats = zcalloc(sizeof(cmdstats));
        sh->cstats->cmds = zcalloc(sizeof(cmd_stat) * (size_t)(cmd_index_count() + 1));
    }
    return sh->cstats;
}

void cmdstats_prepare(shard *sh) { stats_of(sh); }

static cmd_stat *stat_of(shard *sh, const command *cmd) {
    int i = cmd_index(cmd);
    return i < 0 ? NULL : &stats_of(sh)->cmds[i];
}

static void hist_add(cmd_stat *cs, int64_t ns) {
    if (!cfg_get(latency_tracking)) return;
    if (!cs->hist) cs->hist = zcalloc(sizeof(uint64_t) * CMDSTATS_BUCKETS);
    cs->hist[bucket_of((uint64_t)ns)]++;
    cs->hist_total++;
}

void cmdstats_call(shard *sh, const command *cmd, int64_t ns, int blocked) {
    cmdstats *st = stats_of(sh);
    cmd_stat *cs = stat_of(sh, cmd);
    if (cs) {
        if (ns < 0) ns = 0;
        cs->calls++;
        cs->ns += (uint64_t)ns;
        if (st->errors != st->err_mark) cs->failed++;
        if (!blocked) hist_add(cs, ns);
    }
    st->err_mark = st->errors;
}

void cmdstats_served(shard *sh, const command *cmd, int64_t ns, int failed) {
    cmd_stat *cs = stat_of(sh, cmd);
    if (!cs) return;
    if (ns < 0) ns = 0;
    cs->ns += (uint64_t)ns;
    if (failed) cs->failed++;
    hist_add(cs, ns);
}

void cmdstats_reject(shard *sh, const command *cmd) {
    cmdstats *st = stats_of(sh);
    cmd_stat *cs = cmd ? stat_of(sh, cmd) : NULL;
    if (cs) cs->rejected++;
    st->err_mark = st->errors;
}

void cmdstats_mark_failed(shard *sh) {
    cmdstats *st = stats_of(sh);
    st->err_mark = st->errors - 1;
}

void cmdstats_error(shard *sh, const char *msg) {
    if (!sh) return;
    cmdstats *st = stats_of(sh);
    st->errors++;
    /* the code is the first word, when a space comes within 32 bytes */
    size_t n = 0;
    while (n < 32 && msg[n] && msg[n] != ' ') n++;
    const char *code = msg;
    if (n == 0 || n >= 32 || msg[n] != ' ') {
        code = "ERR";
        n = 3;
    }
    for (int i = 0; i < st->nerrs; i++) {
        if (strlen(st->errs[i].code) == n && !memcmp(st->errs[i].code, code, n)) {
            st->errs[i].count++;
            return;
        }
    }
    if (st->nerrs == CMDSTATS_MAX_ERRORS) return; /* Redis stops adding codes too */
    err_stat *e = &st->errs[st->nerrs++];
    memcpy(e->code, code, n);
    e->code[n] = 0;
    e->count = 1;
}

void cmdstats_reset(shard *sh) {
    cmdstats *st = sh->cstats;
    if (!st) return;
    int n = cmd_index_count();
    for (int i = 0; i < n; i++) {
        zfree(st->cmds[i].hist);
        memset(&st->cmds[i], 0, sizeof st->cmds[i]);
    }
    st->nerrs = 0;
    st->errors = st->err_mark = 0;
}

/* ---- readers ---- */

/* The sum over the shards of command index ci; hist (when given, zeroed
 * [CMDSTATS_BUCKETS]) gets the summed histogram. 0 when no shard has it. */
static int sum_cmd(int ci, const int *ids, int n, cmd_stat *sum, uint64_t *hist) {
    memset(sum, 0, sizeof *sum);
    int any = 0;
    for (int k = 0; k < n; k++) {
        cmdstats *st = shards[ids[k]]->cstats;
        if (!st) continue;
        cmd_stat *cs = &st->cmds[ci];
        sum->calls += cs->calls;
        sum->ns += cs->ns;
        sum->rejected += cs->rejected;
        sum->failed += cs->failed;
        sum->hist_total += cs->hist_total;
        if (cs->hist && hist) {
            for (int b = 0; b < CMDSTATS_BUCKETS; b++) hist[b] += cs->hist[b];
        }
        if (cs->hist) any = 1;
    }
    if (hist) return any;
    return sum->calls || sum->rejected || sum->failed;
}

void cmdstats_info_commands(buf *o, const int *ids, int n) {
    int nc = cmd_index_count();
    for (int ci = 0; ci < nc; ci++) {
        cmd_stat s;
        if (!sum_cmd(ci, ids, n, &s, NULL)) continue;
        uint64_t us = s.ns / 1000;
        buf_printf(o, "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
                   cmd_by_index(ci)->name, (unsigned long long)s.calls, (unsigned long long)us,
                   s.calls ? (double)us / (double)s.calls : 0.0, (unsigned long long)s.rejected,
                   (unsigned long long)s.failed);
    }
}

static int err_cmp(const void *a, const void *b) {
    return strcmp(((const err_stat *)a)->code, ((const err_stat *)b)->code);
}

void cmdstats_info_errors(buf *o, const int *ids, int n) {
    err_stat all[CMDSTATS_MAX_ERRORS];
    int na = 0;
    for (int k = 0; k < n; k++) {
        cmdstats *st = shards[ids[k]]->cstats;
        if (!st) continue;
        for (int i = 0; i < st->nerrs; i++) {
            int j = 0;
            while (j < na && strcmp(all[j].code, st->errs[i].code)) j++;
            if (j == na) {
                if (na == CMDSTATS_MAX_ERRORS) continue;
                all[na] = st->errs[i];
                all[na++].count = 0;
            }
            all[j].count += st->errs[i].count;
        }
    }
    qsort(all, (size_t)na, sizeof all[0], err_cmp);
    for (int i = 0; i < na; i++)
        buf_printf(o, "errorstat_%s:count=%llu\r\n", all[i].code, (unsigned long long)all[i].count);
}

uint64_t cmdstats_total_errors(const int *ids, int n) {
    uint64_t t = 0;
    for (int k = 0; k < n; k++)
        if (shards[ids[k]]->cstats) t += shards[ids[k]]->cstats->errors;
    return t;
}

/* The duration (ns) at percentile p of hist: the end of the bucket that
 * holds the ceil(p% of total)-th duration, at least the first. */
static uint64_t value_at(const uint64_t *hist, uint64_t total, double p) {
    uint64_t want = (uint64_t)(p / 100.0 * (double)total + 0.5);
    if (want < 1) want = 1;
    uint64_t seen = 0;
    for (int b = 0; b < CMDSTATS_BUCKETS; b++) {
        seen += hist[b];
        if (seen >= want) return bucket_high(b);
    }
    return 0;
}

void cmdstats_info_latency(buf *o, const int *ids, int n) {
    double pct[64];
    int np = 0;
    const char *p = cfg.latency_tracking_info_percentiles_s ? cfg.latency_tracking_info_percentiles_s : "";
    while (*p && np < 64) {
        char *end;
        double d = strtod(p, &end);
        if (end == p) break;
        pct[np++] = d;
        p = end;
    }
    uint64_t *hist = zmalloc(sizeof(uint64_t) * CMDSTATS_BUCKETS);
    int nc = cmd_index_count();
    for (int ci = 0; ci < nc; ci++) {
        cmd_stat s;
        memset(hist, 0, sizeof(uint64_t) * CMDSTATS_BUCKETS);
        if (!sum_cmd(ci, ids, n, &s, hist)) continue;
        buf_printf(o, "latency_percentiles_usec_%s:", cmd_by_index(ci)->name);
        for (int j = 0; j < np; j++) {
            char f[64];
            snprintf(f, sizeof f, "%f", pct[j]);
            char *dot = strchr(f, '.');
            if (dot) { /* "99.900000" -> "99.9", "50.000000" -> "50" */
                char *e = f + strlen(f) - 1;
                while (e > dot && *e == '0') *e-- = 0;
                if (e == dot) *e = 0;
            }
            buf_printf(o, "%sp%s=%.3f", j ? "," : "", f, (double)value_at(hist, s.hist_total, pct[j]) / 1000.0);
        }
        buf_adds(o, "\r\n");
    }
    zfree(hist);
}

int cmdstats_histogram_reply(buf *out, int resp, int ci, const int *ids, int n) {
    cmd_stat s;
    uint64_t *hist = zcalloc(sizeof(uint64_t) * CMDSTATS_BUCKETS);
    if (!sum_cmd(ci, ids, n, &s, hist)) {
        zfree(hist);
        return 0;
    }
    /* Redis reports cumulative counts at steps of 1024 ns * 2^k where the
     * count grew, each step named in us by the highest duration its
     * histogram (2 significant digits: buckets 2^(e-7) ns wide at 2^e)
     * does not tell apart from the step */
    uint64_t steps[64];
    uint64_t cum[64];
    int ns = 0, b = 0;
    uint64_t seen = 0, prev = 0;
    for (int k = 0; k < 40 && seen < s.hist_total; k++) {
        uint64_t bound = 1024ull << k;
        while (b < CMDSTATS_BUCKETS && bucket_high(b) < bound) seen += hist[b++];
        if (k == 39) {
            while (b < CMDSTATS_BUCKETS) seen += hist[b++];
        }
        if (seen > prev) {
            int e = 10 + k;
            uint64_t width = e > 7 ? 1ull << (e - 7) : 1;
            steps[ns] = (bound + width - 1) / 1000;
            cum[ns++] = seen;
        }
        prev = seen;
    }
    const char *name = cmd_by_index(ci)->name;
    resp_bulk(out, name, strlen(name));
    resp_map(out, resp, 2);
    resp_bulk(out, "calls", 5);
    resp_int(out, (long long)s.calls);
    resp_bulk(out, "histogram_usec", 14);
    resp_map(out, resp, ns);
    for (int i = 0; i < ns; i++) {
        resp_int(out, (long long)steps[i]);
        resp_int(out, (long long)cum[i]);
    }
    zfree(hist);
    return 1;
}
