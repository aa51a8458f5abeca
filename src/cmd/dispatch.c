/* dispatch.c - see dispatch.h. */
#include "cmd/dispatch.h"
#include "cmd/acl.h"
#include "cmd/aof_log.h"
#include "cmd/maxmemory.h"
#include "cmd/monitor.h"
#include "server/config.h"
#include "cmd/multi.h"
#include "cmd/persist.h"
#include "cmd/replicaof.h"
#include "repl/replica.h"
#include "cmd/pubsub.h"
#include "cmd/script.h"
#include "cmd/split.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "persist/snapshot.h"
#include "shard/block.h"
#include "shard/evict.h"
#include "shard/cmdstats.h"
#include "shard/latency.h"
#include "shard/msg.h"
#include "shard/pause.h"
#include "shard/prefetch.h"
#include "shard/shard.h"
#include "shard/slowlog.h"
#include "net/conn.h"
#include "shard/tracking.h"
#include "shard/tx.h"
#include "repl/master.h"
#include "shard/watch.h"
#include <ctype.h>
#include <stdio.h>

const command *dispatch_resolve(int argc, const char **argv, const size_t *argl, char *err, size_t errlen,
                                const command **named) {
    const command *cmd = cmd_lookup(argv[0], argl[0]);
    if (named) *named = cmd;
    if (!cmd) {
        /* "unknown command 'x', with args beginning with: 'a' 'b' " */
        int n = snprintf(err, errlen, "ERR unknown command '%.*s', with args beginning with: ",
                         (int)(argl[0] > 128 ? 128 : argl[0]), argv[0]);
        size_t used = 0;
        for (int i = 1; i < argc && used < 128 && n > 0 && (size_t)n < errlen - 1; i++) {
            int room = 128 - (int)used;
            int w = snprintf(err + n, errlen - (size_t)n, "'%.*s' ", (int)argl[i] < room ? (int)argl[i] : room,
                             argv[i]);
            if (w < 0) break;
            used += (size_t)w;
            n += w;
            if ((size_t)n >= errlen) break;
        }
        return NULL;
    }
    if (cmd->nsubs) {
        if (argc < 2) {
            snprintf(err, errlen, "ERR wrong number of arguments for '%s' command", cmd->name);
            return NULL;
        }
        const command *sub = cmd_lookup_sub(cmd, argv[1], argl[1]);
        if (!sub) {
            if (named) *named = NULL; /* not a call of the container (Redis knows no command here) */
            char up[64];
            size_t k = 0;
            for (; cmd->name[k] && k < sizeof up - 1; k++) up[k] = (char)toupper((unsigned char)cmd->name[k]);
            up[k] = 0;
            snprintf(err, errlen, "ERR unknown subcommand '%.*s'. Try %s HELP.", (int)(argl[1] > 128 ? 128 : argl[1]),
                     argv[1], up);
            return NULL;
        }
        cmd = sub;
        if (named) *named = cmd;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || (cmd->arity < 0 && argc < -cmd->arity)) {
        snprintf(err, errlen, "ERR wrong number of arguments for '%s' command", cmd->name);
        return NULL;
    }
    return cmd;
}

/* The write hooks that are on, for each key of a write command. */
typedef struct write_hooks {
    cmd_ctx *c;
    int snap, watch, track;
} write_hooks;

/* The shard that owns key in this context (a transaction's coordinator
 * may run a handler over several). */
static shard *key_owner(cmd_ctx *c, const char *key, size_t klen) {
    return c->tx ? shards[shard_of_key(key, klen)] : c->sh;
}

/* A script's calls carry their caller's word in c->client (a fake session). */
static uint64_t client_word(cmd_ctx *c) {
    return c->client ? c->client : c->sess ? tracking_word(c->sess, c->cmd) : 0;
}

static void hook_key(void *ud, const char *key, size_t klen) {
    write_hooks *h = ud;
    if (h->snap) snap_touch_key(ctx_db(h->c, key, klen), key, klen);
    if (h->watch) watch_bump(h->c->dbid, key, klen);
    if (h->track) tracking_key_changed(key_owner(h->c, key, klen), client_word(h->c), key, klen);
}

void dispatch_before_write(cmd_ctx *c) {
    write_hooks h = {.c = c,
                     .snap = __atomic_load_n(&snap_parts_running, __ATOMIC_RELAXED) != 0,
                     .watch = __atomic_load_n(&watch_sessions, __ATOMIC_RELAXED) != 0,
                     .track = tracking_active()};
    if (h.snap || h.watch || h.track) cmd_each_key(c->cmd, c->argc, c->argv, c->argl, hook_key, &h);
    c->watch_bumped = h.watch;
}

static void remember_key(void *ud, const char *key, size_t klen) {
    cmd_ctx *c = ud;
    tracking_remember(key_owner(c, key, klen), client_word(c), key, klen);
}

/* The slow log never shows a password (acl_redact_arg). */
static void slowlog_push_redacted(cmd_ctx *c) {
    const char **argv = c->argv;
    size_t *argl = (size_t *)c->argl, lens[32];
    const char *vals[32];
    int n = c->argc < 32 ? c->argc : 32;
    for (int i = 1; i < n; i++) {
        if (!acl_redact_arg(c->cmd, c->argc, c->argv, c->argl, i)) continue;
        if (argv == c->argv) {
            memcpy(vals, c->argv, sizeof(char *) * (size_t)n);
            memcpy(lens, c->argl, sizeof(size_t) * (size_t)n);
            argv = vals;
            argl = lens;
        }
        vals[i] = "(redacted)";
        lens[i] = 10;
    }
    session *s = c->sess;
    slowlog_push(c->sh, argv == c->argv ? c->argc : n, argv, argl, c->dur_ns / 1000, s->conn ? s->conn->addr : NULL,
                 s->name);
}

__thread int64_t dispatch_frozen_ms;

/* A command over two or more keys by its first/last/step: its keys' table
 * lines, before it looks them up (shard/prefetch.h). A pipeline's
 * lookahead hints only each command's first key. (Commands with a keys
 * function are left out: the function's cost on every call is not
 * measured.) */
static void prefetch_cmd_keys(cmd_ctx *c) {
    const command *cmd = c->cmd;
    if (cmd->keys || cmd->last == cmd->first || c->argc < 3) return; /* a key at most */
    int pos[PREFETCH_MANY];
    int n = cmd_key_positions(cmd, c->argc, c->argv, c->argl, pos, PREFETCH_MANY);
    if (n > 1) prefetch_keys(c->sh, (uint32_t)c->dbid, c->argv, c->argl, pos, n);
}

void exec_command(cmd_ctx *c) {
    shard *sh = c->sh;
    int64_t t0 = clock_ns();
    sh->now_ms = dispatch_frozen_ms ? dispatch_frozen_ms : t0 / 1000000;
    if (__builtin_expect(cfg_get(maxmemory) > 0, 0) && maxmemory_exec_refused(c)) return; /* OOM */
    sh->stat_commands++;
    db_write_lookup = (c->cmd->flags & CMD_WRITE) != 0; /* a replica's reads leave expired keys (shard/db.h) */
    if ((c->cmd->flags & CMD_WRITE) && !c->scratch) dispatch_before_write(c); /* scratch: its places do it */
    size_t reply_at = c->out->len;
    prefetch_cmd_keys(c);
    c->cmd->proc(c);
    /* CLIENT TRACKING: the keys it read (a script's: slua's calls do it) */
    if ((c->cmd->flags & (CMD_READONLY | CMD_HOME)) == CMD_READONLY && (client_word(c) & 1))
        cmd_each_key(c->cmd, c->argc, c->argv, c->argl, remember_key, c);
    c->dur_ns = clock_ns() - t0;
    if (!c->no_stats) {
        cmdstats_call(sh, c->cmd, c->dur_ns, c->blocked);
        if (!c->blocked && !(c->cmd->flags & CMD_SKIP_SLOWLOG) && slowlog_wanted(c->dur_ns / 1000)) {
            if (c->sess)
                slowlog_push_redacted(c);
            else
                c->slow = 1; /* its connection's shard logs it (batch_item.slow) */
        }
    }
    latency_add_sample_if_needed(c->cmd->flags & CMD_FAST ? "fast-command" : "command", c->dur_ns / 1000000);
    aof_log(c, reply_at); /* AOF: log the command as it propagates (before waking blocked clients) */
    if ((c->cmd->flags & CMD_WRITE) && !c->unchanged) __atomic_store_n(&sh->dirty, sh->dirty + 1, __ATOMIC_RELAXED);
    if ((sh->block_ready || c->tx) && !c->in_exec && !c->scratch && !c->serve_later) block_serve_ready(c);
}

static void run_local(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, buf *out,
                      int discard) {
    cmd_ctx c = {.sh = s->sh, .sess = s, .cmd = cmd, .argc = argc, .argv = argv, .argl = argl,
                 .dbid = s->db, .resp = s->resp, .out = out};
    exec_command(&c);
    if (c.reroute) { /* it needs every shard after all (a script's undeclared keys) */
        int ids[MAX_SHARDS];
        for (int i = 0; i < nshards; i++) ids[i] = i;
        tx_begin(s, cmd, argc, argv, argl, ids, nshards, discard);
    }
}

static void send_batch(session *s, int dst, const command *cmd, int argc, const char **argv, const size_t *argl,
                       int discard) {
    shard *sh = s->sh;
    outbox *ob = &sh->out[dst];
    if (ob->batch && ob->batch->args.len > (1u << 20)) {
        msg *full = ob->batch;
        ob->batch = NULL;
        shard_send(sh, dst, full);
    }
    tx_lease_yield(sh, dst); /* (the batch would wait behind it) */
    if (!ob->batch) ob->batch = msg_new(SM_BATCH, sh->id);
    shard_batch_add(ob->batch, s, cmd, argc, argv, argl, discard);
    sh->out_dirty = 1;
    sh->stat_remote_batches++;
}

/* Runs cmd inline, sends it to its shard, or starts a transaction. */
static void route(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, int discard,
                  buf *out) {
    size_t nl = strlen(cmd->name);
    if (nl >= sizeof s->lastcmd) nl = sizeof s->lastcmd - 1;
    memcpy(s->lastcmd, cmd->name, nl);
    s->lastcmd[nl] = 0;
    if (__builtin_expect(__atomic_load_n(&shards_busy, __ATOMIC_RELAXED) != 0, 0) && (cmd->flags & CMD_ALLOWBUSY)) {
        run_local(s, cmd, argc, argv, argl, out, discard); /* SCRIPT KILL, SHUTDOWN NOSAVE...: a busy shard takes no locks */
        return;
    }
    if (s->conn && nshards > 1) {
        if ((cmd->flags & CMD_EXEC) && multi_squash(s, discard)) return;
        int one = cmd->split ? split_route(s, cmd, argc, argv, argl, discard) : SPLIT_ROUTE_NONE;
        if (one == SPLIT_STARTED) return;
        uint64_t mask = one >= 0 ? 1ull << one : dispatch_route_mask(s, cmd, argc, argv, argl);
        int ids[MAX_SHARDS], n = 0;
        for (int i = 0; i < nshards; i++)
            if (mask & (1ull << i)) ids[n++] = i;
        if (__builtin_expect(cfg_get(maxmemory) > 0, 0) && !(cmd->flags & (CMD_EXEC | CMD_BLOCKING | CMD_HOME)) &&
            evict_wants_all(mask)) { /* over maxmemory, and only other shards have keys to evict */
            for (n = 0; n < nshards; n++) ids[n] = n;
            tx_begin(s, cmd, argc, argv, argl, ids, n, discard);
            return;
        }
        if (n == 1 && ids[0] != s->sh->id && !(cmd->flags & (CMD_BLOCKING | CMD_EXEC | CMD_HOME))) {
            send_batch(s, ids[0], cmd, argc, argv, argl, discard); /* blocking ones run at home (block.h) */
            return;
        }
        if ((n > 1 || (n == 1 && ids[0] != s->sh->id && (cmd->flags & CMD_HOME)) || tx_hand_off_to(s->sh) >= 0) &&
            cmd->hops && cmd->hops(s, cmd, argc, argv, argl, discard))
            return; /* (a script on its keys' shard, or handed off by a locked shard: script.h, tx.h) */
        if (n > 1) {
            int again = 0;
            if (!s->conn->waiting && tx_run_leased_here(s, cmd, argc, argv, argl, mask, out, &again)) {
                s->conn->handoffs = 0; /* (its shard holds the others: its place, net/conn.h) */
                if (again) { /* (a script's undeclared keys) */
                    for (n = 0; n < nshards; n++) ids[n] = n;
                    tx_begin(s, cmd, argc, argv, argl, ids, n, discard);
                }
                return;
            }
            s->conn->handoffs++; /* (as a hand-off would count: net/conn.h) */
            tx_begin_chained(s, cmd, argc, argv, argl, ids, n, discard); /* (chains_on says what may follow) */
            return;
        }
        if (n == 1 && ids[0] != s->sh->id) {
            tx_begin(s, cmd, argc, argv, argl, ids, n, discard);
            return;
        }
        if (__builtin_expect(s->sh->sq_head != NULL, 0)) { /* transactions hold keys here */
            if (cmd->flags & (CMD_EXEC | CMD_BLOCKING | CMD_HOME)) {
                /* EXEC's and a blocking command's keys are known only as they
                 * run: they take this whole shard in the queue's order */
                int self = s->sh->id;
                tx_begin(s, cmd, argc, argv, argl, &self, 1, discard);
                return;
            }
            if (tx_must_wait(s->sh, cmd, argc, argv, argl, s->db)) {
                tx_hold_local(s->sh, s, cmd, argc, argv, argl, discard);
                return;
            }
        }
    }
    if (s->conn) s->conn->handoffs = 0; /* a command of its own shard's: it stays */
    run_local(s, cmd, argc, argv, argl, out, discard);
}

static void add_shard_of(void *ud, const char *key, size_t klen) { *(uint64_t *)ud |= 1ull << shard_of_key(key, klen); }

uint64_t dispatch_route_mask(session *s, const command *cmd, int argc, const char **argv, const size_t *argl) {
    if (cmd->flags & CMD_EXEC) return multi_shards(s);
    if (cmd->flags & CMD_SESSION) return 0;
    int to = cmd->route ? cmd->route(argc, argv, argl, nshards) : ROUTE_KEYS;
    if ((cmd->flags & CMD_ALLSHARDS) || to == ROUTE_ALL) return nshards >= 64 ? ~0ull : (1ull << nshards) - 1;
    if (to != ROUTE_KEYS) return to >= 0 && to < nshards ? 1ull << to : 0;
    if (s->hint_key && cmd->first == 1 && cmd->last == 1 && !cmd->keys && argc > 1 && argv[1] == s->hint_key)
        return 1ull << s->hint_owner; /* its one key: the lookahead hashed it (net/conn.c) */
    uint64_t mask = 0;
    cmd_each_key(cmd, argc, argv, argl, add_shard_of, &mask);
    return mask;
}

/* 1 when CLIENT PAUSE holds cmd back (shard/pause.h): every command under
 * ALL; under WRITE writes and what may replicate, EXEC by its queued
 * commands. Syntax errors are answered first, as Redis does. */
static int postponed(session *s, const command *cmd, int argc, const char **argv, const size_t *argl) {
    int t = pause_type(s->sh->now_ms);
    if (__builtin_expect(t == PAUSE_OFF, 1) || s->conn->rerunning) return 0;
    if (t == PAUSE_ALL) return 1;
    uint32_t f = cmd->flags;
    if (f & CMD_EXEC) f |= multi_flags(s);
    if (!(f & (CMD_WRITE | CMD_MAY_REPLICATE))) return 0;
    return !(f & CMD_HOME) || !script_declares_no_writes(argc, argv, argl);
}

/* A shard the command needs is busy with a long script: the BUSY error. */
static int busy_refused(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, char *err,
                        size_t errlen) {
    uint64_t busy = __atomic_load_n(&shards_busy, __ATOMIC_RELAXED);
    if (!strcmp(cmd->name, "shutdown")) { /* only SHUTDOWN NOSAVE stops a busy server */
        for (int i = 1; i < argc; i++)
            if (str_eq_ci(argv[i], argl[i], "nosave")) return 0;
        script_busy_error(err, errlen);
        return 1;
    }
    /* a connection of the busy shard gets BUSY for everything (its shard
     * neither runs its commands nor sends them elsewhere meanwhile), and so
     * does one inside MULTI (as in Redis: the block is then doomed) */
    uint64_t mask = script_busy_runs_on(s->sh->id) || s->multi ? busy : dispatch_route_mask(s, cmd, argc, argv, argl);
    if (!mask) mask = busy; /* keyless (PING, SELECT...): BUSY as in Redis; only keys of other shards go on */
    if (!(mask & busy)) return 0;
    script_busy_error(err, errlen);
    return 1;
}

/* Whether a command of a connection that waits for a chain of whole-shard
 * transactions may join it: one that route() certainly starts as another
 * (keys on two shards or more, none of the paths before: busy, EXEC,
 * split, a gather). Any other command waits for the chain's end. */
static int chains_on(session *s, const command *cmd, int argc, const char **argv, const size_t *argl) {
    if (!cmd || s->multi || nshards < 2 || __atomic_load_n(&shards_busy, __ATOMIC_RELAXED)) return 0;
    if (cmd->split || (cmd->hops && cmd->hops != script_hops)) return 0;
    if (cmd->flags & (CMD_SESSION | CMD_EXEC | CMD_BLOCKING | CMD_ALLSHARDS | CMD_ALLOWBUSY)) return 0;
    uint64_t mask = dispatch_route_mask(s, cmd, argc, argv, argl);
    return (mask & (mask - 1)) != 0;
}

int dispatch_may_hand_off(session *s, int argc, const char **argv, const size_t *argl) {
    int to = tx_hand_off_to(s->sh);
    if (to < 0 || !s->conn || s->multi || s->tracking || s->pubsub || !acl_sess_free_pass(s)) return 0;
    if (__atomic_load_n(&shards_busy, __ATOMIC_RELAXED) || cfg_get(maxmemory) > 0 || aof_active() ||
        pause_type(s->sh->now_ms) != PAUSE_OFF || repl_is_replica())
        return 0;
    char err[256];
    const command *cmd = dispatch_resolve(argc, argv, argl, err, sizeof err, NULL);
    return cmd && cmd->hops == script_hops; /* (one on this shard's keys too: the holder holds them) */
}

int dispatch_command(session *s, int argc, const char **argv, const size_t *argl) {
    char err[512];
    const command *named;
    const command *cmd = dispatch_resolve(argc, argv, argl, err, sizeof err, &named);
    if (s->conn && s->conn->waiting && !chains_on(s, cmd, argc, argv, argl)) return DISPATCH_LATER;
    if (cmd && s->conn && s->conn->txs && !(s->multi && !(cmd->flags & (CMD_EXEC | CMD_SESSION))) &&
        tx_conn_must_wait(s, cmd, argc, argv, argl)) {
        s->conn->tx_stalled = 1;
        return DISPATCH_LATER;
    }
    if (cmd && __builtin_expect(!acl_sess_free_pass(s), 0) && acl_gate(s, cmd, argc, argv, argl, err, sizeof err))
        cmd = NULL; /* NOAUTH or NOPERM (named stays the row: a rejected call) */
    if (cmd && s->conn && postponed(s, cmd, argc, argv, argl)) {
        conn_postpone(s->conn);
        return DISPATCH_LATER;
    }
    if (cmd && aof_deny(cmd, err, sizeof err)) cmd = NULL; /* AOF: MISCONF after a write error */
    if (cmd && __builtin_expect(repl_is_replica(), 0) && replicaof_refuses(s, cmd, argc, argv, argl, err, sizeof err))
        cmd = NULL; /* a replica: READONLY, MASTERDOWN (cmd/replicaof.c) */
    if (s->flags & SESS_REPLY_SKIP_NEXT) {
        s->flags &= ~SESS_REPLY_SKIP_NEXT;
        s->flags |= SESS_REPLY_SKIP;
    }
    int discard = (s->flags & (SESS_REPLY_OFF | SESS_REPLY_SKIP)) != 0;
    buf scratch = {0};
    buf *out = discard ? &scratch : session_reply_buf(s);
    if (!cmd) {
        resp_error(out, err);
        cmdstats_error(s->sh, err);
        cmdstats_reject(s->sh, named);
        multi_doom(s);
    } else if (__builtin_expect(!__atomic_load_n(&snap_last_ok, __ATOMIC_RELAXED), 0) && persist_misconf() &&
               ((cmd->flags & CMD_WRITE) || !strcmp(cmd->name, "ping"))) {
        resp_error(out, MISCONF_ERR);
        cmdstats_error(s->sh, MISCONF_ERR);
        cmdstats_reject(s->sh, cmd);
        multi_doom(s);
    } else if (__builtin_expect(cfg_get(min_replicas_to_write) > 0, 0) && (cmd->flags & CMD_WRITE) &&
               !repl_enough_good_replicas()) {
        resp_error(out, NOREPLICAS_ERR);
        cmdstats_error(s->sh, NOREPLICAS_ERR);
        cmdstats_reject(s->sh, cmd);
        multi_doom(s);
    } else if (s->pubsub && pubsub_refuses(s, cmd, err, sizeof err)) { /* RESP2 subscribed mode */
        resp_error(out, err);
        cmdstats_error(s->sh, err);
        cmdstats_reject(s->sh, cmd);
        multi_doom(s);
    } else if (__builtin_expect(cfg_get(maxmemory) > 0, 0) && maxmemory_dispatch_refused(s, cmd, out)) {
        /* OOM: refused before routing */
    } else if (__builtin_expect(__atomic_load_n(&shards_busy, __ATOMIC_RELAXED) != 0, 0) &&
               (!(cmd->flags & CMD_ALLOWBUSY) || !strcmp(cmd->name, "shutdown")) &&
               busy_refused(s, cmd, argc, argv, argl, err, sizeof err)) {
        cmdstats_error(s->sh, err);
        cmdstats_reject(s->sh, cmd);
        if (s->multi && (cmd->flags & CMD_EXEC)) { /* the block ends, as Redis's execCommandAbort */
            char abort_err[600];
            snprintf(abort_err, sizeof abort_err, "EXECABORT Transaction discarded because of: %s", err);
            resp_error(out, abort_err);
            multi_discard(s);
        } else {
            resp_error(out, err);
            multi_doom(s);
        }
    } else if (!s->multi || !multi_intercept(s, cmd, argc, argv, argl, out)) {
        /* EXEC before its queue goes, a script before the lines of its calls */
        int fed = __builtin_expect(monitor_active(), 0) && (cmd->flags & (CMD_EXEC | CMD_HOME));
        if (fed) monitor_feed_command(s, cmd, argc, argv, argl);
        route(s, cmd, argc, argv, argl, discard, out);
        if (!fed && __builtin_expect(monitor_active(), 0)) monitor_feed_command(s, cmd, argc, argv, argl);
        if (s->tracking) tracking_after_command(s, cmd);
    }
    buf_free(&scratch);
    s->flags &= ~SESS_REPLY_SKIP;
    return DISPATCH_DONE;
}
