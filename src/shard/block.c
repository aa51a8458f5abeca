/* block.c - see block.h. */
#include "shard/block.h"
#include "shard/cmdstats.h"
#include "lib/clock.h"
#include "cmd/aof_log.h"
#include "cmd/dispatch.h"
#include "core/smap.h"
#include "lib/mem.h"
#include "persist/snapshot.h"
#include "net/conn.h"
#include "shard/msg.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include <math.h>

enum { B_WAITING = 0, B_SERVING = 1, B_DONE = 2, B_ABANDONED = 4 };

typedef struct blocked {
    int state; /* atomic: B_* */
    int refs;  /* atomic: the home's, one per waiter, one per message */
    int home;
    int type, dbid, resp;
    int64_t deadline;       /* ms, 0 = forever */
    int retry;              /* set by the server: run the command again at home */
    int64_t slow_us;        /* set by the server: how long serving took */
    buf reply;              /* written by the server before it hands over */
    /* home thread only */
    conn *conn;             /* NULL once the client is gone or unblocked */
    slot *slot;             /* where the reply goes */
    struct blocked *tnext, *tprev;
    int linked;
    /* the command, copied */
    const command *cmd;
    int argc;
    const char **argv;
    size_t *argl;
    buf args;
} blocked;

typedef struct waiter {
    struct waiter *next;
    blocked *b;
    int argi; /* position of the key in b's argv */
} waiter;

typedef struct waitq {
    waiter *head, *tail;
    struct waitq *ready_next;
    int ready;
    int dbid;
    size_t klen;
    char key[];
} waitq;

/* Per-shard state lives in the shard struct; these helpers name it. */
#define WAITS(sh) ((sh)->block_waits)

static void release(blocked *b) {
    if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    buf_free(&b->reply);
    buf_free(&b->args);
    zfree(b->argv);
    zfree(b->argl);
    zfree(b);
}

static blocked *blocked_new(cmd_ctx *c) {
    blocked *b = zcalloc(sizeof *b);
    b->refs = 1;
    b->home = c->sh->id;
    b->dbid = c->dbid;
    b->resp = c->resp;
    b->cmd = c->cmd;
    b->argc = c->argc;
    size_t total = 0;
    for (int i = 0; i < c->argc; i++) total += c->argl[i] + 1;
    buf_reserve(&b->args, total);
    b->argv = zmalloc(sizeof(char *) * (size_t)c->argc);
    b->argl = zmalloc(sizeof(size_t) * (size_t)c->argc);
    size_t off = 0;
    for (int i = 0; i < c->argc; i++) {
        buf_add(&b->args, c->argv[i], c->argl[i]);
        buf_addc(&b->args, 0);
        b->argl[i] = c->argl[i];
    }
    for (int i = 0; i < c->argc; i++) {
        b->argv[i] = b->args.p + off;
        off += c->argl[i] + 1;
    }
    return b;
}

/* ---- wait queues (owner side) ---- */

static size_t qname(char *out, size_t cap, int dbid, const char *key, size_t klen, char **heap) {
    size_t n = 4 + klen;
    char *p = out;
    if (n > cap) p = *heap = zmalloc(n);
    uint32_t id = (uint32_t)dbid;
    memcpy(p, &id, 4);
    memcpy(p + 4, key, klen);
    return n;
}

/* The queue of key in database dbid of sh; created when create is set. */
static waitq *queue_get(shard *sh, int dbid, const char *key, size_t klen, int create) {
    if (!WAITS(sh)) {
        if (!create) return NULL;
        WAITS(sh) = smap_create(SMAP_U64);
    }
    char tmp[256], *heap = NULL;
    size_t n = qname(tmp, sizeof tmp, dbid, key, klen, &heap);
    const char *name = heap ? heap : tmp;
    smap_elem *e = smap_find(WAITS(sh), name, n);
    waitq *q = e ? (waitq *)(uintptr_t)smap_elem_u64(e) : NULL;
    if (!q && create) {
        q = zcalloc(sizeof *q + klen);
        q->dbid = dbid;
        q->klen = klen;
        memcpy(q->key, key, klen);
        uint64_t v = (uint64_t)(uintptr_t)q;
        smap_add(WAITS(sh), name, n, (const char *)&v, 8);
    }
    zfree(heap);
    return q;
}

static void queue_drop(shard *sh, waitq *q) {
    char tmp[256], *heap = NULL;
    size_t n = qname(tmp, sizeof tmp, q->dbid, q->key, q->klen, &heap);
    smap_delete(WAITS(sh), heap ? heap : tmp, n);
    zfree(heap);
    zfree(q);
}

static int finished(const blocked *b) {
    return (__atomic_load_n(&b->state, __ATOMIC_ACQUIRE) & (B_DONE | B_ABANDONED)) != 0;
}

/* Unlinks the waiter at *pw (the caller moves on to *pw afterwards). */
static waiter *unlink_waiter(waitq *q, waiter **pw, waiter *prev) {
    waiter *w = *pw;
    *pw = w->next;
    if (q->tail == w) q->tail = prev;
    return w;
}

static void purge(waitq *q) {
    waiter **pw = &q->head, *prev = NULL;
    while (*pw) {
        waiter *w = *pw;
        if (finished(w->b)) {
            unlink_waiter(q, pw, prev);
            release(w->b);
            zfree(w);
        } else {
            prev = w;
            pw = &w->next;
        }
    }
}

/* ---- home side ---- */

static void deadline_link(shard *sh, blocked *b) {
    blocked **pp = &sh->block_head, *prev = NULL;
    while (*pp && (*pp)->deadline && (!b->deadline || (*pp)->deadline <= b->deadline)) {
        prev = *pp;
        pp = &(*pp)->tnext;
    }
    b->tnext = *pp;
    b->tprev = prev;
    if (*pp) (*pp)->tprev = b;
    *pp = b;
    b->linked = 1;
    __atomic_add_fetch(&sh->block_count, 1, __ATOMIC_RELAXED);
}

static void deadline_unlink(shard *sh, blocked *b) {
    if (!b->linked) return;
    if (b->tprev) b->tprev->tnext = b->tnext;
    else sh->block_head = b->tnext;
    if (b->tnext) b->tnext->tprev = b->tprev;
    b->linked = 0;
    __atomic_sub_fetch(&sh->block_count, 1, __ATOMIC_RELAXED);
}

/* The client is served (reply in b->reply), handed back (b->retry) or timed
 * out (reply written here): the connection goes on with its input. */
static void home_finish_as(shard *sh, blocked *b, int timed_out, const char *error);
static void home_finish(shard *sh, blocked *b, int timed_out) { home_finish_as(sh, b, timed_out, NULL); }

/* timed_out with error: that error reply instead of the timeout's. */
static void home_finish_as(shard *sh, blocked *b, int timed_out, const char *error) {
    deadline_unlink(sh, b);
    conn *cn = b->conn;
    if (!cn) return;
    b->conn = NULL;
    cn->blocked = NULL;
    if (timed_out || !b->retry) { /* the call ends: the slow log has it as Redis logs it, at the end */
        if (timed_out) b->slow_us = 0;
        if (slowlog_wanted(b->slow_us))
            slowlog_push(sh, b->argc, b->argv, b->argl, b->slow_us, cn->addr, cn->s.name);
    }
    if (timed_out && error) {
        resp_error(&b->slot->data, error);
        cmdstats_error(sh, error);
    } else if (timed_out) { /* a null array for every blocking command, BLMOVE too (as Redis) */
        resp_null_array(&b->slot->data, b->resp);
        cmdstats_served(sh, b->cmd, 0, 0);
    } else if (b->retry) {
        __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
        cn->rerun = b;
    } else {
        buf_add(&b->slot->data, b->reply.p, b->reply.len);
    }
    b->slot->ready = 1;
    conn_slots_flush(cn);
    shard_add_pending(sh, cn);
    release(b); /* the home's reference */
}

/* The server finished b; its reference travels with the hand-over. */
static void deliver(shard *from, blocked *b) {
    if (from->id == b->home) {
        home_finish(from, b, 0);
        release(b);
        return;
    }
    msg *m = msg_new(SM_UNBLOCK, from->id);
    m->blk = b;
    shard_send(from, b->home, m);
}

void block_on_message(shard *sh, msg *m) {
    blocked *b = m->blk;
    msg_free(m);
    home_finish(sh, b, 0);
    release(b);
}

void block_conn_closed(conn *cn) {
    if (cn->rerun) {
        release(cn->rerun);
        cn->rerun = NULL;
    }
    blocked *b = cn->blocked;
    if (!b) return;
    __atomic_fetch_or(&b->state, B_ABANDONED, __ATOMIC_ACQ_REL);
    deadline_unlink(cn->sh, b);
    b->conn = NULL;
    cn->blocked = NULL;
    release(b);
}

int64_t block_check_timeouts(shard *sh, int64_t now) {
    while (sh->block_head && sh->block_head->deadline && sh->block_head->deadline <= now) {
        blocked *b = sh->block_head;
        int expect = B_WAITING;
        if (!__atomic_compare_exchange_n(&b->state, &expect, B_DONE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 1; /* a server holds it right now: look again soon */
        home_finish(sh, b, 1);
    }
    if (!sh->block_head || !sh->block_head->deadline) return -1;
    return sh->block_head->deadline - now;
}

int block_count(shard *sh) { return sh->block_count; }

int block_request_unblock(conn *c, int mode) {
    if (!__atomic_load_n(&c->blocked, __ATOMIC_ACQUIRE)) return 0;
    __atomic_store_n(&c->unblock_req, mode, __ATOMIC_RELEASE);
    __atomic_store_n(&c->sh->unblock_reqs, 1, __ATOMIC_RELEASE);
    shard_wake(c->sh);
    return 1;
}

void block_serve_unblocks(shard *sh) {
    if (!__atomic_exchange_n(&sh->unblock_reqs, 0, __ATOMIC_ACQ_REL)) return;
    for (conn *c = sh->conns; c; c = c->all_next) {
        int mode = __atomic_exchange_n(&c->unblock_req, 0, __ATOMIC_ACQ_REL);
        blocked *b = c->blocked;
        if (!mode || !b) continue;
        int expect = B_WAITING;
        if (!__atomic_compare_exchange_n(&b->state, &expect, B_DONE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            if (expect & B_SERVING) { /* a server holds it right now: look again next turn */
                __atomic_store_n(&c->unblock_req, mode, __ATOMIC_RELEASE);
                __atomic_store_n(&sh->unblock_reqs, 1, __ATOMIC_RELEASE);
            }
            continue;
        }
        home_finish_as(sh, b, 1, mode == BLOCK_UNBLOCK_ERROR ? "UNBLOCKED client unblocked via CLIENT UNBLOCK" : NULL);
    }
}

int64_t block_next_deadline(shard *sh) {
    return sh->block_head && sh->block_head->deadline ? sh->block_head->deadline : -1;
}

void block_rerun(session *s, blocked *b) {
    dispatch_command(s, b->argc, b->argv, b->argl);
    release(b);
}

/* ---- the blocking command's side ---- */

void block_client(cmd_ctx *c, const int *kpos, int nk, int type, int64_t deadline_ms, int on_timeout) {
    if (c->serve_key) return; /* serve mode: nothing to serve, stays blocked */
    conn *cn = c->sess ? c->sess->conn : NULL;
    if (!cn || c->in_exec) { /* inside EXEC (or no connection): the timeout reply now */
        if (on_timeout == BLOCK_NULL_BULK) reply_null(c);
        else reply_null_array(c);
        return;
    }
    blocked *b = blocked_new(c);
    b->type = type;
    b->deadline = deadline_ms;
    for (int k = 0; k < nk; k++) {
        const char *key = c->argv[kpos[k]];
        size_t klen = c->argl[kpos[k]];
        db *d = ctx_db(c, key, klen);
        waitq *q = queue_get(d->owner, c->dbid, key, klen, 1);
        purge(q);
        waiter *w = zcalloc(sizeof *w);
        w->b = b;
        w->argi = kpos[k];
        if (q->tail) q->tail->next = w;
        else q->head = w;
        q->tail = w;
        __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
    }
    if (c->tx) {
        b->slot = c->tx->slot;
        c->tx->blocked = 1;
    } else {
        b->slot = conn_pending_slot(cn);
        b->slot->discard = (c->sess->flags & (SESS_REPLY_OFF | SESS_REPLY_SKIP)) != 0;
    }
    b->conn = cn;
    cn->blocked = b;
    deadline_link(c->sh, b);
    c->blocked = 1;
}

int block_key_wanted(cmd_ctx *c, int i) { return !c->serve_key || c->serve_key == i; }

/* 1 when the context may touch key's shard. */
static int ctx_owns(cmd_ctx *c, const char *key, size_t klen) {
    int s = shard_of_key(key, klen);
    if (!c->tx) return s == c->sh->id;
    for (int i = 0; i < c->tx->n; i++)
        if (c->tx->ids[i] == s) return 1;
    return 0;
}

int block_needs_home(cmd_ctx *c, const char *key, size_t klen) {
    if (!c->serve_key || ctx_owns(c, key, klen)) return 0;
    c->serve_home = 1;
    return 1;
}

int block_parse_timeout(cmd_ctx *c, int i, int64_t *deadline_ms) {
    long double t;
    if (!str2ld(c->argv[i], c->argl[i], &t) || isnan(t)) {
        reply_error(c, "ERR timeout is not a float or out of range");
        return 0;
    }
    /* Redis 7.0 converts with a plain cast: on x86 a value past the range
     * of long long (inf included) becomes LLONG_MIN, hence "negative". */
    t = ceill(t * 1000.0L);
    if (t < 0 || t >= 9223372036854775808.0L) {
        reply_error(c, "ERR timeout is negative");
        return 0;
    }
    int64_t ms = (int64_t)t;
    if (ms == 0) *deadline_ms = 0;
    else *deadline_ms = ms > INT64_MAX - ctx_now(c) ? INT64_MAX : ctx_now(c) + ms;
    return 1;
}

/* ---- serving (owner side) ---- */

/* Puts q on sh's ready list (once). Served in the order the keys got
 * their values, as Redis does: a client blocked on two keys gets the one
 * pushed first. */
static void mark_ready(shard *sh, waitq *q) {
    if (q->ready) return;
    q->ready = 1;
    q->ready_next = NULL;
    if (sh->block_ready)
        sh->block_ready_tail->ready_next = q;
    else
        sh->block_ready = q;
    sh->block_ready_tail = q;
}

void block_signal(db *d, const char *key, size_t klen, int type) {
    (void)type;
    shard *sh = d->owner;
    if (!sh || !WAITS(sh) || smap_size(WAITS(sh)) == 0) return;
    waitq *q = queue_get(sh, d->id, key, klen, 0);
    if (q) mark_ready(sh, q);
}

void block_signal_db(db *d) {
    shard *sh = d->owner;
    if (!sh || !WAITS(sh) || smap_size(WAITS(sh)) == 0) return;
    smap_iter it;
    smap_iter_start(&it, WAITS(sh));
    for (smap_elem *e; (e = smap_iter_next(&it));) {
        waitq *q = (waitq *)(uintptr_t)smap_elem_u64(e);
        if (q->dbid == d->id) mark_ready(sh, q); /* stream readers also learn of a key that went away */
    }
    smap_iter_stop(&it);
}

/* Runs b's command in serve mode for the key of w; returns 1 when b is
 * finished (served or handed back), 0 when nothing could be served. */
static int serve_one(cmd_ctx *outer, blocked *b, waiter *w) {
    b->reply.len = 0;
    cmd_ctx sc = {.sh = outer->sh, .tx = outer->tx, .cmd = b->cmd, .argc = b->argc, .argv = b->argv,
                  .argl = b->argl, .dbid = b->dbid, .resp = b->resp, .out = &b->reply, .serve_key = w->argi};
    dispatch_before_write(&sc);
    int64_t t0 = clock_ns();
    b->cmd->proc(&sc);
    if (!sc.serve_home) aof_log(&sc, 0); /* AOF: the served pop (BLPOP -> LPOP) */
    if (!sc.serve_home && b->reply.len > 0) {
        int64_t ns = clock_ns() - t0;
        cmdstats_served(outer->sh, b->cmd, ns, b->reply.p[0] == '-'); /* served an error (NOGROUP): failed, as Redis */
        b->slow_us = ns / 1000; /* the home logs it, knowing the client */
    }
    if (sc.serve_home) {
        b->reply.len = 0;
        b->retry = 1;
        return 1;
    }
    return b->reply.len > 0;
}

static void serve_queue(cmd_ctx *outer, shard *sh, waitq *q) {
    db *d = &sh->dbs[q->dbid];
    waiter **pw = &q->head, *prev = NULL;
    while (*pw) {
        waiter *w = *pw;
        blocked *b = w->b;
        int st = __atomic_load_n(&b->state, __ATOMIC_ACQUIRE);
        if (st & (B_DONE | B_ABANDONED)) {
            unlink_waiter(q, pw, prev);
            release(b);
            zfree(w);
            continue;
        }
        entry *e = db_find(d, q->key, q->klen, outer->sh->now_ms);
        if (!e && b->type != T_STREAM) break;
        int expect = B_WAITING;
        /* A stream reader runs even when the key is gone or of another type:
         * XREADGROUP then answers an error, XREAD goes on waiting. */
        if ((b->type != T_STREAM && entry_type(e) != b->type) || st != B_WAITING ||
            !__atomic_compare_exchange_n(&b->state, &expect, B_SERVING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            prev = w; /* another type, or another shard serves it now */
            pw = &w->next;
            continue;
        }
        if (!serve_one(outer, b, w)) {
            expect = B_SERVING;
            if (!__atomic_compare_exchange_n(&b->state, &expect, B_WAITING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                __atomic_store_n(&b->state, B_DONE | B_ABANDONED, __ATOMIC_RELEASE);
            if (b->type != T_STREAM) break; /* the key is empty again */
            prev = w; /* a stream reader may wait after a later ID than the next one */
            pw = &w->next;
            continue;
        }
        __atomic_fetch_or(&b->state, B_DONE, __ATOMIC_ACQ_REL);
        unlink_waiter(q, pw, prev);
        zfree(w);
        deliver(outer->sh, b);
    }
}

static int serve_shard(cmd_ctx *c, shard *sh) {
    int any = 0;
    while (sh->block_ready) {
        waitq *q = sh->block_ready;
        sh->block_ready = q->ready_next;
        q->ready = 0;
        serve_queue(c, sh, q);
        any = 1;
        if (!q->head && !q->ready) queue_drop(sh, q);
    }
    return any;
}

void block_serve_ready(cmd_ctx *c) {
    if (c->serve_key) return; /* the outer loop goes on */
    int any = c->sh->block_ready != NULL;
    for (int i = 0; c->tx && !any && i < c->tx->n; i++) any = shards[c->tx->ids[i]]->block_ready != NULL;
    if (!any) return;
    /* The clock moves on first, as Redis's before it serves: a key that
     * expired while the command ran (DEBUG SLEEP inside EXEC) is gone for
     * its waiters, and its DEL is logged. */
    int64_t now = mstime();
    if (now > c->sh->now_ms) c->sh->now_ms = now;
    int again = 1;
    while (again) {
        again = 0;
        if (!c->tx) {
            again = serve_shard(c, c->sh);
            continue;
        }
        for (int i = 0; i < c->tx->n; i++) again |= serve_shard(c, shards[c->tx->ids[i]]);
    }
}

void block_sweep(shard *sh) {
    if (!WAITS(sh) || smap_size(WAITS(sh)) == 0) return;
    smap_iter it;
    smap_iter_start(&it, WAITS(sh));
    smap_elem *e;
    while ((e = smap_iter_next(&it))) {
        waitq *q = (waitq *)(uintptr_t)smap_elem_u64(e);
        purge(q);
        if (!q->head && !q->ready) {
            smap_remove(WAITS(sh), e);
            zfree(q);
        }
    }
    smap_iter_stop(&it);
}
