/* server.c - server commands: CONFIG TIME SHUTDOWN DEBUG INFO COMMAND.
 * CONFIG SET and DEBUG SLEEP hold every shard (CMD_ALLSHARDS): a config
 * change is seen by all shards at one point, and DEBUG SLEEP stalls the
 * whole server as it does in Redis. */
#include "cmd/cmd.h"
#include "cmd/info.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/shard.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* CONFIG GET parameter [parameter ...] */
static void config_get_cmd(cmd_ctx *c) {
    int n = config_count();
    char *hit = zcalloc((size_t)n);
    int count = 0;
    for (int a = 2; a < c->argc; a++)
        for (int i = 0; i < n; i++) {
            const char *name = config_name(i);
            if (!hit[i] && glob_match(c->argv[a], c->argl[a], name, strlen(name), 1)) {
                hit[i] = 1;
                count++;
            }
        }
    reply_map(c, count);
    buf v = {0};
    for (int i = 0; i < n; i++) {
        if (!hit[i]) continue;
        v.len = 0;
        config_value(i, &v);
        reply_cstr(c, config_name(i));
        reply_bulk(c, v.p ? v.p : "", v.len);
    }
    buf_free(&v);
    zfree(hit);
}

/* CONFIG SET parameter value [parameter value ...] */
static void config_set_cmd(cmd_ctx *c) {
    if ((c->argc - 2) % 2) {
        reply_arity(c);
        return;
    }
    for (int i = 2; i < c->argc; i += 2) {
        char name[128], err[512];
        char *val = zstrndup(c->argv[i + 1], c->argl[i + 1]);
        snprintf(name, sizeof name, "%.*s", (int)c->argl[i], c->argv[i]);
        int rc = config_set(name, val, err, sizeof err);
        zfree(val);
        if (rc < 0) {
            reply_error(c, err);
            return;
        }
    }
    reply_ok(c);
}

/* CONFIG RESETSTAT */
static void config_resetstat_cmd(cmd_ctx *c) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    for (int i = 0; i < n; i++) {
        shard *s = shards[ids[i]];
        s->stat_commands = s->stat_conns = s->stat_rejected = s->stat_expired = 0;
        s->stat_hits = s->stat_misses = s->stat_net_in = s->stat_net_out = 0;
        s->stat_remote_batches = s->stat_tx = 0;
        s->ops_sample_cmds = 0;
    }
    reply_ok(c);
}

/* CONFIG REWRITE */
static void config_rewrite_cmd(cmd_ctx *c) {
    char err[512];
    if (config_rewrite(err, sizeof err) < 0) reply_error(c, err);
    else reply_ok(c);
}

static void config_help_cmd(cmd_ctx *c) {
    static const char *lines[] = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Print this help.",
    };
    int n = (int)(sizeof lines / sizeof lines[0]);
    reply_array(c, n);
    for (int i = 0; i < n; i++) reply_simple(c, lines[i]);
}

/* TIME */
static void time_cmd(cmd_ctx *c) {
    int64_t us = ustime();
    reply_array(c, 2);
    reply_bulk_ll(c, us / 1000000);
    reply_bulk_ll(c, us % 1000000);
}

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] */
static void shutdown_cmd(cmd_ctx *c) {
    for (int i = 1; i < c->argc; i++) {
        if (!arg_is(c, i, "nosave") && !arg_is(c, i, "save") && !arg_is(c, i, "now") && !arg_is(c, i, "force") &&
            !arg_is(c, i, "abort")) {
            reply_status(c, ST_SYNTAX);
            return;
        }
        if (arg_is(c, i, "abort")) {
            reply_error(c, "ERR No shutdown in progress.");
            return;
        }
    }
    /* The main thread exits on SIGTERM; this client's connection just closes. */
    kill(getpid(), SIGTERM);
}

/* DEBUG SLEEP seconds | DEBUG JMAP... (only what tests and tools use) */
static void debug_cmd(cmd_ctx *c) {
    if (arg_is(c, 1, "sleep") && c->argc == 3) {
        double secs;
        if (!arg_double(c, 2, &secs)) return;
        if (secs > 0) {
            struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
            nanosleep(&ts, NULL);
        }
        reply_ok(c);
        return;
    }
    if (arg_is(c, 1, "help")) {
        reply_array(c, 2);
        reply_simple(c, "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
        reply_simple(c, "SLEEP <seconds>");
        return;
    }
    reply_errorf(c, "ERR unknown subcommand '%.*s'. Try DEBUG HELP.", (int)c->argl[1], c->argv[1]);
}

static command config_subs[] = {
    {.name = "config|get", .proc = config_get_cmd, .arity = -3, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .group = "server", .since = "2.0.0", .acl = "admin slow dangerous", .summary = "Get the values of configuration parameters"},
    {.name = "config|set", .proc = config_set_cmd, .arity = -4,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_ALLSHARDS, .group = "server", .since = "2.0.0",
     .acl = "admin slow dangerous", .summary = "Set configuration parameters to the given values"},
    {.name = "config|resetstat", .proc = config_resetstat_cmd, .arity = 2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_ALLSHARDS, .group = "server", .since = "2.0.0",
     .acl = "admin slow dangerous", .summary = "Reset the stats returned by INFO"},
    {.name = "config|rewrite", .proc = config_rewrite_cmd, .arity = 2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .group = "server", .since = "2.8.0",
     .acl = "admin slow dangerous", .summary = "Rewrite the configuration file with the in memory configuration"},
    {.name = "config|help", .proc = config_help_cmd, .arity = 2, .flags = CMD_LOADING | CMD_STALE, .group = "server",
     .since = "5.0.0", .acl = "slow", .summary = "Show helpful text about the different subcommands"},
};

static const command rows[] = {
    {.name = "config", .arity = -2, .group = "server", .since = "2.0.0", .acl = "slow",
     .summary = "A container for server configuration commands", .subs = config_subs,
     .nsubs = (int)(sizeof config_subs / sizeof config_subs[0])},
    {.name = "time", .proc = time_cmd, .arity = 1, .flags = CMD_LOADING | CMD_STALE | CMD_FAST, .group = "server",
     .since = "2.6.0", .acl = "fast", .summary = "Return the current server time"},
    {.name = "shutdown", .proc = shutdown_cmd, .arity = -1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SESSION, .group = "server", .since = "1.0.0",
     .acl = "admin slow dangerous", .summary = "Synchronously save the dataset to disk and then shut down the server"},
    {.name = "debug", .proc = debug_cmd, .arity = -2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_ALLSHARDS,
     .group = "server", .since = "1.0.0", .acl = "admin slow dangerous", .summary = "A container for debugging commands"},
};

void server_register(void) {
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
    info_register();
}
