/* maxmemory.c - where commands meet the memory limit: the OOM refusals of
 * deny-oom commands (Redis's processCommand rules), and the config hooks
 * that make CONFIG SET maxmemory / maxmemory-policy / maxmemory-clients
 * take effect at once. The eviction itself is shard/evict.c (keys) and
 * shard/client_evict.c (clients). No command rows. */
#include "cmd/maxmemory.h"
#include "cmd/multi.h"
#include "lib/log.h"
#include "persist/aof.h"
#include "server/config.h"
#include "shard/client_evict.h"
#include "shard/cmdstats.h"
#include "shard/evict.h"
#include "shard/notify.h"
#include "shard/shard.h"
#include "shard/tracking.h"
#include <string.h>

static int over(shard *sh) { return evict_run(sh) == EVICT_FAIL; }

/* The dispatcher does not evict: it runs on the connection's shard, and
 * that shard's keys should not pay for writes to other shards' (it would
 * empty itself under a spread write load). With a policy that evicts, the
 * shard that runs the command evicts (and refuses when it cannot). */
static int over_no_evict(shard *sh) { return (evict_policy() & EVP_NONE) && evict_over(sh); }

/* A transaction that holds every shard whole (INFO, DBSIZE, CONFIG...):
 * locked by its coordinator's transactions (a shard grants one
 * coordinator's whole-shard transactions together, and the coordinator
 * runs them one at a time). */
static int holds_every_shard(cmd_ctx *c) {
    for (int i = 0; i < nshards; i++)
        if (!shards[i]->locked_n || shards[i]->locked_coord != c->sh->id) return 0;
    return 1;
}

int maxmemory_exec_refused(cmd_ctx *c) {
    /* A command over every shard evicts from all of them before it runs,
     * as Redis evicts before any command (INFO right after memory grew
     * reports the eviction). */
    if (c->tx && !c->in_exec && !aof_loading && holds_every_shard(c)) {
        int full = evict_run_all() == EVICT_FAIL;
        if (c->sess) tracking_deliver_before(c->sh, c->sess, c->out);
        if (!full || !(c->cmd->flags & CMD_DENYOOM)) return 0;
        reply_error(c, OOM_ERR);
        cmdstats_reject(c->sh, c->cmd);
        return 1;
    }
    /* Inside a transaction, EXEC or a blocked client's serving, the check
     * was made where the call started; a split command's parts are checked
     * by their coordinator. Loading the AOF never refuses. */
    if (c->tx || c->in_exec || c->serve_key || c->no_stats || aof_loading) return 0;
    int full = over(c->sh);
    /* the keys it evicted are invalidated before this command's reply, as
     * Redis evicts before the command runs (this turn's messages so far) */
    tracking_deliver_before(c->sh, c->sess, c->out); /* (the last tracked key may have gone) */
    if (!full || !(c->cmd->flags & CMD_DENYOOM)) return 0;
    reply_error(c, OOM_ERR);
    cmdstats_reject(c->sh, c->cmd);
    return 1;
}

static int is(const command *cmd, const char *name) { return !strcmp(cmd->name, name); }

int maxmemory_dispatch_refused(session *s, const command *cmd, buf *out) {
    int in_multi = s->multi != NULL;
    int exec = in_multi && (cmd->flags & CMD_EXEC);
    int deny = (cmd->flags & CMD_DENYOOM) || (exec && (multi_flags(s) & CMD_DENYOOM));
    /* Inside MULTI anything queued may take memory: only EXEC, DISCARD,
     * QUIT and RESET pass (Redis's rule). */
    if (in_multi && !is(cmd, "exec") && !is(cmd, "discard") && !is(cmd, "quit") && !is(cmd, "reset")) deny = 1;
    if (!deny || !over_no_evict(s->sh)) return 0;
    if (exec) {
        static const char abort_err[] = "EXECABORT Transaction discarded because of: " OOM_ERR;
        multi_discard(s);
        resp_error(out, abort_err);
        cmdstats_error(s->sh, abort_err);
    } else {
        resp_error(out, OOM_ERR);
        cmdstats_error(s->sh, OOM_ERR);
        multi_doom(s);
    }
    cmdstats_reject(s->sh, cmd);
    return 1;
}

/* CONFIG SET maxmemory, under the lock of every shard: evict now, as Redis
 * does, from every shard's keys. */
static int apply_maxmemory(char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    int64_t max = cfg_get(maxmemory), used = evict_used_memory();
    if (cfg_get(maxmemory_clients) < 0) cevict_all(); /* a limit in percent of maxmemory moved */
    if (max <= 0) return 0;
    if (max < used)
        log_msg(LOG_WARNING,
                "WARNING: the new maxmemory value set via CONFIG SET (%lld) is smaller than the current memory usage "
                "(%lld). This will result in key eviction and/or the inability to accept new write commands "
                "depending on the maxmemory-policy.",
                (long long)max, (long long)used);
    if (!multi_executing) evict_run_all(); /* inside EXEC: before the next command, as Redis's */
    return 0;
}

/* CONFIG SET maxmemory-clients, under the lock of every shard: clients
 * over the new limit go now, as Redis evicts before the next command. */
static int apply_clients(char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    cevict_all();
    return 0;
}

static int apply_policy(char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    evict_policy_load();
    return 0;
}

/* An evicted key: its keyspace event, and tracking clients that read it
 * forget it (the evicting shard owns d). */
static void evicted_key(db *d, const char *key, size_t klen) {
    notify_keyspace_event(NOTIFY_EVICTED, "evicted", key, klen, d->id);
    if (d->owner) tracking_key_changed(d->owner, 0, key, klen);
}

void maxmemory_register(void) {
    evict_init();
    evict_set_hook(evicted_key);
    config_on_apply("maxmemory", apply_maxmemory);
    config_on_apply("maxmemory-policy", apply_policy);
    config_on_apply("maxmemory-clients", apply_clients);
}
