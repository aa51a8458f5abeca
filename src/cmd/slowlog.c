/* slowlog.c - SLOWLOG GET [count] | LEN | RESET | HELP.
 *
 * The entries live in each shard's slow log (shard/slowlog.h); these
 * commands hold every shard (CMD_ALLSHARDS) and see the shards' logs as one
 * log, newest first by id, at most slowlog-max-len long. */
#include "cmd/cmd.h"
#include "server/config.h"
#include "shard/shard.h"
#include "shard/slowlog.h"

/* The merged log: walks the shards' logs (each newest first) by id. */
typedef struct merged {
    int ids[MAX_SHARDS], n;
    int pos[MAX_SHARDS];
} merged;

static void merged_start(cmd_ctx *c, merged *m) {
    m->n = ctx_shards(c, m->ids);
    for (int i = 0; i < m->n; i++) m->pos[i] = 0;
}

static const slowlog_entry *merged_next(merged *m) {
    int best = -1;
    const slowlog_entry *be = NULL;
    for (int i = 0; i < m->n; i++) {
        shard *s = shards[m->ids[i]];
        if (m->pos[i] >= slowlog_len(s)) continue;
        const slowlog_entry *e = slowlog_at(s, m->pos[i]);
        if (!be || e->id > be->id) {
            be = e;
            best = i;
        }
    }
    if (best >= 0) m->pos[best]++;
    return be;
}

static long long merged_len(cmd_ctx *c) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    long long total = 0, max = cfg_get(slowlog_max_len);
    for (int i = 0; i < n; i++) total += slowlog_len(shards[ids[i]]);
    return total < max ? total : max;
}

/* SLOWLOG GET [count] */
static void slowlog_get_cmd(cmd_ctx *c) {
    if (c->argc > 3) {
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try SLOWLOG HELP.",
                     (int)(c->argl[1] > 128 ? 128 : c->argl[1]), c->argv[1]);
        return;
    }
    long long count = 10;
    if (c->argc == 3 && (!str2ll(c->argv[2], c->argl[2], &count) || count < -1)) {
        reply_error(c, "ERR count should be greater than or equal to -1");
        return;
    }
    long long len = merged_len(c);
    if (count < 0 || count > len) count = len;
    merged m;
    merged_start(c, &m);
    reply_array(c, count);
    for (long long k = 0; k < count; k++) {
        const slowlog_entry *e = merged_next(&m);
        reply_array(c, 6);
        reply_int(c, (long long)e->id);
        reply_int(c, (long long)e->time);
        reply_int(c, (long long)e->dur_us);
        reply_array(c, e->argc);
        for (int i = 0; i < e->argc; i++) reply_bulk(c, e->argv[i], e->argl[i]);
        reply_cstr(c, e->addr);
        reply_cstr(c, e->name);
    }
}

/* SLOWLOG LEN */
static void slowlog_len_cmd(cmd_ctx *c) { reply_int(c, merged_len(c)); }

/* SLOWLOG RESET */
static void slowlog_reset_cmd(cmd_ctx *c) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    for (int i = 0; i < n; i++) slowlog_reset(shards[ids[i]]);
    reply_ok(c);
}

/* SLOWLOG HELP */
static void slowlog_help_cmd(cmd_ctx *c) {
    static const char *const lines[] = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Prints this help.",
    };
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

#define ADM CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_ALLSHARDS
static command subs[] = {
    {.name = "slowlog|get",
     .proc = slowlog_get_cmd,
     .arity = -2,
     .flags = ADM,
     .group = "server",
     .since = "2.2.12",
     .acl = "admin slow dangerous",
     .summary = "Get the slow log's entries"},
    {.name = "slowlog|len",
     .proc = slowlog_len_cmd,
     .arity = 2,
     .flags = ADM,
     .group = "server",
     .since = "2.2.12",
     .acl = "admin slow dangerous",
     .summary = "Get the slow log's length"},
    {.name = "slowlog|reset",
     .proc = slowlog_reset_cmd,
     .arity = 2,
     .flags = ADM,
     .group = "server",
     .since = "2.2.12",
     .acl = "admin slow dangerous",
     .summary = "Clear all entries from the slow log"},
    {.name = "slowlog|help",
     .proc = slowlog_help_cmd,
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .group = "server",
     .since = "6.2.0",
     .acl = "slow",
     .summary = "Show helpful text about the different subcommands"},
};

static const command rows[] = {
    {.name = "slowlog",
     .arity = -2,
     .group = "server",
     .since = "2.2.12",
     .acl = "slow",
     .summary = "A container for slow log commands",
     .subs = subs,
     .nsubs = (int)(sizeof subs / sizeof subs[0])},
};

void slowlog_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
