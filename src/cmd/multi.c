/* multi.c - see multi.h. */
#include "cmd/multi.h"
#include "cmd/acl.h"
#include "cmd/dispatch.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "persist/aof.h"
#include "shard/cmdstats.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include "shard/watch.h"
#include <stdio.h>

__thread int multi_executing;

typedef struct queued {
    const command *cmd;
    int argc;
    const char **argv; /* argv, argl and the bytes share one block */
    size_t *argl;
} queued;

struct multi_state {
    queued *q;
    int n, cap;
    int doomed;
};

/* One watched key: the counter it had at WATCH (watch.h), and when. */
typedef struct watched {
    uint32_t slot;
    int dbid;
    uint64_t version;
    int64_t at_ms;
    char *key;
    size_t klen;
} watched;

struct watch_state {
    watched *w;
    int n, cap;
};

static void unwatch(session *s) {
    watch_state *ws = s->watch;
    if (!ws) return;
    for (int i = 0; i < ws->n; i++) zfree(ws->w[i].key);
    zfree(ws->w);
    zfree(ws);
    s->watch = NULL;
    s->watch_mem = 0;
    __atomic_sub_fetch(&watch_sessions, 1, __ATOMIC_SEQ_CST);
}

/* 1 when a watched key changed since WATCH: written, deleted by expiry
 * after being live at WATCH, or still there but expired since (Redis's
 * isWatchedKeyExpired). c holds the shards of every watched key. */
static int watch_broken(cmd_ctx *c) {
    watch_state *ws = c->sess->watch;
    for (int i = 0; ws && i < ws->n; i++) {
        watched *w = &ws->w[i];
        if (watch_version(w->slot) != w->version || watch_expired_after(w->slot) > w->at_ms) return 1;
        db *d = ctx_shard_db(c, shard_of_key(w->key, w->klen), w->dbid);
        entry **l = table_link(d->t, w->key, w->klen);
        if (l && entry_has_ttl(*l) && ctx_now(c) > entry_expire(*l) && entry_expire(*l) > w->at_ms) return 1;
    }
    return 0;
}

/* WATCH key [key ...] */
static void watch_cmd(cmd_ctx *c) {
    session *s = c->sess;
    if (s->multi) {
        reply_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    watch_init();
    if (!s->watch) {
        s->watch = zcalloc(sizeof *s->watch);
        __atomic_add_fetch(&watch_sessions, 1, __ATOMIC_SEQ_CST); /* before reading versions */
    }
    watch_state *ws = s->watch;
    s->watch_mem -= sizeof(watched) * (size_t)ws->cap;
    for (int i = 1; i < c->argc; i++) {
        if (ws->n == ws->cap) {
            ws->cap = ws->cap ? ws->cap * 2 : 4;
            ws->w = zrealloc(ws->w, sizeof(watched) * (size_t)ws->cap);
        }
        watched *w = &ws->w[ws->n++];
        w->slot = watch_slot(s->db, c->argv[i], c->argl[i]);
        w->dbid = s->db;
        w->version = watch_version(w->slot);
        w->at_ms = mstime();
        w->key = zmalloc(c->argl[i] ? c->argl[i] : 1);
        memcpy(w->key, c->argv[i], c->argl[i]);
        w->klen = c->argl[i];
        s->watch_mem += zmalloc_size(w->key);
    }
    s->watch_mem += sizeof(watched) * (size_t)ws->cap; /* (CLIENT LIST multi-mem, client eviction) */
    reply_ok(c);
}

/* UNWATCH */
static void unwatch_cmd(cmd_ctx *c) {
    unwatch(c->sess);
    reply_ok(c);
}

void multi_discard(session *s) {
    unwatch(s);
    multi_state *m = s->multi;
    if (!m) return;
    for (int i = 0; i < m->n; i++) zfree(m->q[i].argv);
    zfree(m->q);
    zfree(m);
    s->multi = NULL;
    s->multi_mem = 0;
}

void multi_doom(session *s) {
    if (s->multi) s->multi->doomed = 1;
}

/* s->multi_mem counts the queue and its commands (Redis's multi-mem). */
static void enqueue(session *s, const command *cmd, int argc, const char **argv, const size_t *argl) {
    multi_state *m = s->multi;
    if (m->n == m->cap) {
        s->multi_mem -= sizeof(queued) * (size_t)m->cap;
        m->cap = m->cap ? m->cap * 2 : 8;
        m->q = zrealloc(m->q, sizeof(queued) * (size_t)m->cap);
        s->multi_mem += sizeof(queued) * (size_t)m->cap;
    }
    size_t bytes = 0;
    for (int i = 0; i < argc; i++) bytes += argl[i] + 1;
    size_t head = (sizeof(char *) + sizeof(size_t)) * (size_t)argc;
    char *blk = zmalloc(head + bytes);
    s->multi_mem += head + bytes; /* what was asked for, as Redis counts argument lengths */
    queued *q = &m->q[m->n++];
    q->cmd = cmd;
    q->argc = argc;
    q->argv = (const char **)blk;
    q->argl = (size_t *)(blk + sizeof(char *) * (size_t)argc);
    char *p = blk + head;
    for (int i = 0; i < argc; i++) {
        memcpy(p, argv[i], argl[i]);
        p[argl[i]] = 0;
        q->argv[i] = p;
        q->argl[i] = argl[i];
        p += argl[i] + 1;
    }
}

/* Commands that run at once even inside MULTI (Redis's list). */
static int runs_now(const command *cmd) {
    static const char *const names[] = {"exec", "discard", "multi", "watch", "reset", "quit"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(cmd->name, names[i])) return 1;
    return 0;
}

int multi_intercept(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, buf *out) {
    if (runs_now(cmd)) return 0;
    if (cmd->flags & CMD_NOMULTI) {
        resp_error(out, "ERR Command not allowed inside a transaction");
        cmdstats_error(s->sh, "ERR");
        cmdstats_reject(s->sh, cmd);
        s->multi->doomed = 1;
        return 1;
    }
    enqueue(s, cmd, argc, argv, argl);
    buf_add(out, "+QUEUED\r\n", 9);
    return 1;
}

uint32_t multi_flags(session *s) {
    multi_state *m = s->multi;
    uint32_t f = 0;
    for (int i = 0; m && i < m->n; i++) f |= m->q[i].cmd->flags;
    return f;
}

uint64_t multi_shards(session *s) {
    multi_state *m = s->multi;
    if (!m || m->doomed) return 0;
    uint64_t mask = 0;
    for (int i = 0; i < m->n; i++) {
        if ((m->q[i].cmd->flags & CMD_HOME) && nshards > 1) /* a script may reach any key, and cannot start again here */
            return nshards >= 64 ? ~0ull : (1ull << nshards) - 1;
        mask |= dispatch_route_mask(s, m->q[i].cmd, m->q[i].argc, m->q[i].argv, m->q[i].argl);
    }
    for (int i = 0; s->watch && i < s->watch->n; i++) /* EXEC looks at the watched keys */
        mask |= 1ull << shard_of_key(s->watch->w[i].key, s->watch->w[i].klen);
    return mask;
}

/* ---- EXEC over several shards, each shard's commands as one batch ---- */

/* Where each queued command's reply is: part, item. */
typedef struct exec_plan {
    int n;
    struct {
        uint8_t part;
        uint32_t item;
    } at[];
} exec_plan;

static void merge_exec(tx *t, buf *out) {
    exec_plan *pl = t->plan;
    resp_array(out, pl->n);
    for (int i = 0; i < pl->n; i++) {
        size_t len;
        const char *r = tx_part_reply(t, pl->at[i].part, (int)pl->at[i].item, &len);
        buf_add(out, r, len);
        msg *m = &t->parts[pl->at[i].part]->m;
        batch_item *it = &m->items[pl->at[i].item];
        if (it->slow && t->owner && !t->owner->closed) shard_slowlog_item(t->coord, m, it, &t->owner->s); /* EXEC's order */
    }
}

typedef struct one_shard {
    int shard; /* -1 before the first key, -2 when keys are on several */
} one_shard;

static void note_shard(void *ud, const char *key, size_t klen) {
    one_shard *o = ud;
    int sh = shard_of_key(key, klen);
    o->shard = o->shard == -1 || o->shard == sh ? sh : -2;
}

/* The shard every key of q lives on; the connection's own for a command
 * without keys; -1 when q cannot run as part of a batch (keys on several
 * shards, session state, every shard, its own routing). */
static int queued_shard(session *s, const queued *q) {
    const command *cmd = q->cmd;
    if (cmd->flags & (CMD_SESSION | CMD_EXEC | CMD_ALLSHARDS | CMD_HOME)) return -1;
    if (cmd->route && cmd->route(q->argc, q->argv, q->argl, nshards) != ROUTE_KEYS) return -1;
    one_shard o = {-1};
    cmd_each_key(cmd, q->argc, q->argv, q->argl, note_shard, &o);
    return o.shard == -1 ? s->sh->id : o.shard;
}

typedef struct key_lock {
    tx_part *p;
    int dbid, x;
} key_lock;

static void lock_key(void *ud, const char *key, size_t klen) {
    key_lock *k = ud;
    tx_part_key(k->p, k->dbid, key, klen, k->x);
}

/* EXEC checks each queued command's permissions again (the rules may have
 * changed since it was queued): 1 and the error written when refused. */
static int acl_refused(session *s, const queued *q, buf *out) {
    if (acl_sess_free_pass(s)) return 0;
    int pos = 0, why = acl_check(s->user, q->cmd, q->argc, q->argv, q->argl, &pos);
    if (why == ACL_OK) return 0;
    const char *obj = why == ACL_DENIED_CMD ? q->cmd->name : q->argv[pos];
    size_t objl = why == ACL_DENIED_CMD ? strlen(obj) : q->argl[pos];
    acl_log_add(why, ACL_CTX_MULTI, s, s->user->name, obj, objl);
    char msg[320];
    snprintf(msg, sizeof msg,
             "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This "
             "command is no longer allowed for the following reason: %s",
             why == ACL_DENIED_CMD   ? "no permission to execute the command or subcommand"
             : why == ACL_DENIED_KEY ? "no permission to touch the specified keys"
                                     : "no permission to access one of the channels used as arguments");
    resp_error(out, msg);
    cmdstats_error(s->sh, msg);
    return 1;
}

static int any_refused(session *s, multi_state *m) {
    if (acl_sess_free_pass(s)) return 0;
    int pos;
    for (int i = 0; i < m->n; i++)
        if (acl_check(s->user, m->q[i].cmd, m->q[i].argc, m->q[i].argv, m->q[i].argl, &pos) != ACL_OK) return 1;
    return 0;
}

int multi_squash(session *s, int discard) {
    multi_state *m = s->multi;
    if (!m || m->doomed || m->n == 0 || s->watch) return 0; /* WATCH: checked under every shard's lock */
    if (any_refused(s, m)) return 0; /* the whole-shard path answers the refused ones */
    int *where = zmalloc(sizeof(int) * (size_t)m->n);
    int ok = 1, writes = 0;
    uint64_t mask = 0;
    for (int i = 0; i < m->n && ok; i++) {
        where[i] = queued_shard(s, &m->q[i]);
        ok = where[i] >= 0;
        if (ok) mask |= 1ull << where[i];
        writes |= (m->q[i].cmd->flags & CMD_WRITE) != 0;
    }
    /* AOF: the batches would reach the log as separate commands; one
     * shard of its own: the inline path is cheaper */
    if (!ok || (writes && aof_active()) || mask == 1ull << s->sh->id) {
        zfree(where);
        return 0;
    }
    tx *t = tx_create(s, cmd_lookup("exec", 4), discard);
    exec_plan *pl = zmalloc(sizeof *pl + sizeof pl->at[0] * (size_t)m->n);
    pl->n = m->n;
    t->plan = pl;
    for (int i = 0; i < m->n; i++) {
        queued *q = &m->q[i];
        tx_part *p = tx_part_of(t, where[i]);
        key_lock k = {.p = p, .dbid = s->db, .x = (q->cmd->flags & CMD_WRITE) != 0};
        cmd_each_key(q->cmd, q->argc, q->argv, q->argl, lock_key, &k);
        batch_item *it = tx_part_add(p, q->cmd, q->argc, q->argv, q->argl, s->db, s->resp);
        it->in_exec = 1;
        for (int j = 0; j < t->n; j++)
            if (t->parts[j] == p) pl->at[i].part = (uint8_t)j;
        pl->at[i].item = p->m.nitems - 1;
    }
    zfree(where);
    multi_discard(s);
    tx_run_split(t, !writes, merge_exec);
    return 1;
}

/* MULTI */
static void multi_cmd(cmd_ctx *c) {
    session *s = c->sess;
    if (s->multi) {
        reply_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    s->multi = zcalloc(sizeof *s->multi);
    reply_ok(c);
}

/* DISCARD */
static void discard_cmd(cmd_ctx *c) {
    if (!c->sess->multi) {
        reply_error(c, "ERR DISCARD without MULTI");
        return;
    }
    multi_discard(c->sess);
    reply_ok(c);
}

/* EXEC: runs where the dispatcher routed it, holding every shard the
 * queued commands touch. */
static void exec_cmd(cmd_ctx *c) {
    session *s = c->sess;
    multi_state *m = s->multi;
    if (!m) {
        reply_error(c, "ERR EXEC without MULTI");
        return;
    }
    if (m->doomed) {
        reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        multi_discard(s);
        return;
    }
    if (watch_broken(c)) { /* a watched key changed: nothing runs */
        reply_null_array(c);
        multi_discard(s);
        return;
    }
    unwatch(s);
    s->multi = NULL; /* commands inside see a session outside MULTI */
    reply_array(c, m->n);
    if (!c->tx) aof_tx_begin(c->sh); /* one MULTI ... EXEC block in the AOF (tx_finish does it under a tx) */
    multi_executing = 1;
    for (int i = 0; i < m->n; i++) {
        queued *q = &m->q[i];
        if (acl_refused(s, q, c->out)) continue;
        cmd_ctx sub = {.sh = c->sh, .sess = s, .tx = c->tx, .cmd = q->cmd, .argc = q->argc,
                       .argv = q->argv, .argl = q->argl, .dbid = s->db, .resp = s->resp, .out = c->out,
                       .in_exec = 1};
        exec_command(&sub);
    }
    multi_executing = 0;
    if (!c->tx) aof_tx_end(c->sh);
    s->multi = m;
    multi_discard(s);
}

static const command rows[] = {
    {.name = "multi",
     .proc = multi_cmd,
     .arity = 1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOWBUSY | CMD_SESSION,
     .group = "transactions",
     .since = "1.2.0",
     .acl = "fast transaction",
     .summary = "Mark the start of a transaction block"},
    {.name = "exec",
     .proc = exec_cmd,
     .arity = 1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SKIP_SLOWLOG | CMD_EXEC,
     .group = "transactions",
     .since = "1.2.0",
     .acl = "slow transaction",
     .summary = "Execute all commands issued after MULTI"},
    {.name = "discard",
     .proc = discard_cmd,
     .arity = 1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOWBUSY | CMD_SESSION,
     .group = "transactions",
     .since = "2.0.0",
     .acl = "fast transaction",
     .summary = "Discard all commands issued after MULTI"},
};

static const command watch_rows[] = {
    {.name = "watch",
     .kflags = KS_RO,
     .proc = watch_cmd,
     .arity = -2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOWBUSY | CMD_SESSION,
     .first = 1,
     .last = -1,
     .step = 1,
     .group = "transactions",
     .since = "2.2.0",
     .acl = "fast transaction",
     .summary = "Watch the given keys to determine execution of the MULTI/EXEC block"},
    {.name = "unwatch",
     .proc = unwatch_cmd,
     .arity = 1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOWBUSY | CMD_SESSION,
     .group = "transactions",
     .since = "2.2.0",
     .acl = "fast transaction",
     .summary = "Forget about all watched keys"},
};

void multi_register(void) {
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
    cmd_register(watch_rows, (int)(sizeof watch_rows / sizeof watch_rows[0]));
}

void multi_each_queued(session *s, void (*fn)(void *ud, int argc, const char **argv, const size_t *argl), void *ud) {
    multi_state *m = s->multi;
    if (!m || m->doomed) return;
    for (int i = 0; i < m->n; i++) fn(ud, m->q[i].argc, m->q[i].argv, m->q[i].argl);
}
