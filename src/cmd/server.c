/* server.c - server commands: CONFIG (GET SET RESETSTAT REWRITE HELP), TIME,
 * SHUTDOWN, DEBUG; server_register() also registers INFO (info.c) and
 * COMMAND (command.c).
 *
 * Every CONFIG subcommand but HELP holds every shard (CMD_ALLSHARDS): a
 * change is seen by all shards at one point, and GET/REWRITE never read a
 * string that a concurrent SET frees. DEBUG SLEEP holds every shard too, so
 * it stalls the whole server as it does in Redis. */
#include "cmd/cmd.h"
#include "cmd/script.h"
#include "cmd/persist.h"
#include "cmd/info.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "persist/snapshot.h"
#include "lib/mem.h"
#include "net/conn.h"
#include "persist/aof.h"
#include "server/config.h"
#include "shard/tracking.h"
#include "shard/cmdstats.h"
#include "shard/lazyfree.h"
#include "shard/shard.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A client on a Unix socket, 127.0.0.1 or ::1 (the embedded engine too). */
static int is_local(const session *s) { return !s || !s->conn || s->conn->is_local; }

/* ---- CONFIG ---- */

/* Marks the names (directives and aliases, config.h) that CONFIG GET's
 * argument a selects in from[] (-1: not selected, else the argument
 * index). A name without glob characters is looked up directly, and the
 * reply shows it as given (as Redis does); a glob shows the name itself
 * (from = 0) and passes over hidden directives. A name selected once is
 * not selected again, whatever the case of the later argument. */
static void config_match(cmd_ctx *c, int a, int *from) {
    const char *pat = c->argv[a];
    size_t plen = c->argl[a];
    if (!memchr(pat, '*', plen) && !memchr(pat, '?', plen) && !memchr(pat, '[', plen)) {
        char name[128];
        if (plen >= sizeof name) return;
        memcpy(name, pat, plen);
        name[plen] = 0;
        int i = config_find(name);
        if (i >= 0 && from[i] < 0) from[i] = a;
        return;
    }
    for (int i = 0; i < config_count(); i++) {
        const char *name = config_name(i);
        if (from[i] < 0 && !config_hidden(i) && glob_match(pat, plen, name, strlen(name), 1)) from[i] = 0;
    }
}

/* CONFIG GET parameter [parameter ...] */
static void config_get_cmd(cmd_ctx *c) {
    int n = config_count(), count = 0;
    int *from = zmalloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        from[i] = -1;
    for (int a = 2; a < c->argc; a++)
        config_match(c, a, from);
    for (int i = 0; i < n; i++)
        count += from[i] >= 0;
    reply_map(c, count);
    buf v = {0};
    for (int i = 0; i < n; i++) {
        if (from[i] < 0) continue;
        if (from[i] > 0)
            reply_bulk(c, c->argv[from[i]], c->argl[from[i]]);
        else
            reply_cstr(c, config_name(i));
        v.len = 0;
        config_value(i, &v);
        reply_bulk(c, v.p ? v.p : "", v.len);
    }
    buf_free(&v);
    zfree(from);
}

/* CONFIG SET appendonly: the AOF goes on or off (config.c calls this,
 * every shard held, when the value changed; on failure it puts the old
 * value back). */
static int apply_appendonly(char *err, size_t errlen) {
    if (!cfg_get(appendonly)) {
        aof_disable();
        return 0;
    }
    return aof_enable(err, errlen);
}

/* CONFIG SET parameter value [parameter value ...] */
static void config_set_cmd(cmd_ctx *c) {
    if ((c->argc - 2) % 2) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    int n = (c->argc - 2) / 2;
    char **names = zmalloc(sizeof(char *) * (size_t)n), **values = zmalloc(sizeof(char *) * (size_t)n);
    size_t *lens = zmalloc(sizeof(size_t) * (size_t)n);
    for (int k = 0; k < n; k++) {
        names[k] = zstrndup(c->argv[2 + 2 * k], c->argl[2 + 2 * k]);
        values[k] = zstrndup(c->argv[3 + 2 * k], c->argl[3 + 2 * k]);
        lens[k] = c->argl[3 + 2 * k];
    }
    char err[512];
    config_caller_remote = !is_local(c->sess); /* enable-protected-configs local */
    int rc = config_set_many_n(n, (const char *const *)names, (const char *const *)values, lens, err, sizeof err);
    config_caller_remote = 0;
    if (rc < 0) {
        reply_error(c, err);
    } else {
        tracking_limit_all();
        reply_ok(c);
    }
    for (int k = 0; k < n; k++) {
        zfree(names[k]);
        zfree(values[k]);
    }
    zfree(names);
    zfree(values);
    zfree(lens);
}

/* CONFIG RESETSTAT */
static void config_resetstat_cmd(cmd_ctx *c) {
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    for (int i = 0; i < n; i++) {
        shard *s = shards[ids[i]];
        s->stat_commands = s->stat_conns = s->stat_rejected = s->stat_expired = s->stat_evicted = 0;
        s->stat_evicted_clients = 0;
        s->stat_hits = s->stat_misses = s->stat_net_in = s->stat_net_out = 0;
        s->stat_remote_batches = s->stat_tx = s->stat_tx_retries = s->stat_tx_parked = s->stat_tx_leased = 0;
        s->stat_tx_handed = s->stat_tx_adopted = s->stat_conns_moved = 0;
        s->ops_sample_cmds = 0;
        memset(s->ops_samples, 0, sizeof s->ops_samples);
        s->ops_idx = 0;
        cmdstats_reset(s);
    }
    lazyfree_reset_stats();
    reply_ok(c);
}

/* CONFIG REWRITE */
static void config_rewrite_cmd(cmd_ctx *c) {
    char err[512];
    if (config_rewrite(err, sizeof err) < 0)
        reply_error(c, err);
    else
        reply_ok(c);
}


/* CONFIG HELP */
static void config_help_cmd(cmd_ctx *c) {
    static const char *const lines[] = {
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
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

/* ---- TIME SHUTDOWN DEBUG ---- */

/* TIME */
static void time_cmd(cmd_ctx *c) {
    int64_t us = ustime();
    reply_array(c, 2);
    reply_bulk_ll(c, us / 1000000);
    reply_bulk_ll(c, us % 1000000);
}

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] */
static void shutdown_cmd(cmd_ctx *c) {
    int nosave = 0, save = 0, abort_ = 0;
    for (int i = 1; i < c->argc; i++) {
        if (arg_is(c, i, "nosave"))
            nosave = 1;
        else if (arg_is(c, i, "save"))
            save = 1;
        else if (arg_is(c, i, "abort"))
            abort_ = 1;
        else if (!arg_is(c, i, "now") && !arg_is(c, i, "force")) {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    if ((nosave && save) || (abort_ && c->argc > 2)) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (abort_) {
        reply_error(c, "ERR No shutdown in progress.");
        return;
    }
    if (save || (!nosave && cfg.save_s && *cfg.save_s)) {
        if (snap_running()) {
            log_msg(LOG_WARNING, "There is a background save in progress. Aborting it!");
            snap_abort();
        }
        log_msg(LOG_NOTICE, "Saving the final RDB snapshot before exiting.");
        if (persist_save(c) < 0) {
            log_msg(LOG_WARNING, "Error trying to save the DB, can't exit.");
            reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
            return;
        }
    }
    /* No reply, as Redis: main() exits on SIGTERM and the socket closes. */
    __atomic_store_n(&shutdown_saved, 1, __ATOMIC_RELEASE);
    kill(getpid(), SIGTERM);
}

#define ADM CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE
#define ADMIN_ACL "admin slow dangerous"
static command config_subs[] = {
    {.name = "config|get",
     .proc = config_get_cmd,
     .arity = -3,
     .flags = ADM | CMD_ALLSHARDS,
     .group = "server",
     .since = "2.0.0",
     .acl = ADMIN_ACL,
     .summary = "Get the values of configuration parameters"},
    {.name = "config|set",
     .proc = config_set_cmd,
     .arity = -4,
     .flags = ADM | CMD_ALLSHARDS,
     .group = "server",
     .since = "2.0.0",
     .acl = ADMIN_ACL,
     .summary = "Set configuration parameters to the given values"},
    {.name = "config|resetstat",
     .proc = config_resetstat_cmd,
     .arity = 2,
     .flags = ADM | CMD_ALLSHARDS,
     .group = "server",
     .since = "2.0.0",
     .acl = ADMIN_ACL,
     .summary = "Reset the stats returned by INFO"},
    {.name = "config|rewrite",
     .proc = config_rewrite_cmd,
     .arity = 2,
     .flags = ADM | CMD_ALLSHARDS,
     .group = "server",
     .since = "2.8.0",
     .acl = ADMIN_ACL,
     .summary = "Rewrite the configuration file with the in memory configuration"},
    {.name = "config|help",
     .proc = config_help_cmd,
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .group = "server",
     .since = "5.0.0",
     .acl = "slow",
     .summary = "Show helpful text about the different subcommands"},
};

static const command rows[] = {
    {.name = "config",
     .arity = -2,
     .group = "server",
     .since = "2.0.0",
     .acl = "slow",
     .summary = "A container for server configuration commands",
     .subs = config_subs,
     .nsubs = (int)(sizeof config_subs / sizeof config_subs[0])},
    {.name = "time",
     .proc = time_cmd,
     .arity = 1,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .group = "server",
     .since = "2.6.0",
     .acl = "fast",
     .summary = "Return the current server time"},
    {.name = "shutdown",
     .proc = shutdown_cmd,
     .arity = -1,
     .flags = ADM | CMD_ALLOWBUSY | CMD_ALLSHARDS | CMD_NOMULTI, /* the final save holds every shard */
     .group = "server",
     .since = "1.0.0",
     .acl = ADMIN_ACL,
     .summary = "Synchronously save the dataset to disk and then shut down the server"},
};

void server_register(void) {
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
    config_on_apply("appendonly", apply_appendonly);
    info_register();
    command_register();
}
