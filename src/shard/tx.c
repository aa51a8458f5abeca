/* tx.c - see tx.h. Two sides: the coordinator (the connection's shard),
 * which sends a transaction's parts and gathers their answers, and each
 * shard's queue of parts, which grants them. A part on the coordinator's
 * own shard is handed over by a direct call instead of a message. */
#include "shard/tracking.h"
#include "shard/tx.h"
#include "shard/block.h"
#include "cmd/dispatch.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "lib/clock.h"
#include "shard/cmdstats.h"
#include "shard/lock.h"

enum { TXP_SCHED, TXP_CANCEL, TXP_EXEC, TXP_STEP };

static uint64_t tx_seq = 1; /* atomic: the global order */

static void coord_on(shard *sh, tx_part *p);
static void part_on(shard *sh, tx_part *p);

/* ---- moving a part between coordinator and shard ---- */

static void to_part(tx *t, tx_part *p, int type) {
    shard *sh = t->coord;
    p->m.type = (uint8_t)type;
    p->m.from = (uint8_t)sh->id;
    if (p->shard == sh->id) part_on(sh, p);
    else shard_send(sh, p->shard, &p->m); /* the part is the receiver's now */
}

static void to_coord(shard *sh, tx_part *p, int type) {
    p->m.type = (uint8_t)type;
    p->m.from = (uint8_t)sh->id;
    /* p->coord, not p->t->coord: the transaction is the coordinator's
     * memory, and reading it here missed the cache (96 % of solo_answer) */
    if (p->coord == sh->id) coord_on(sh, p);
    else shard_send(sh, p->coord, &p->m);
}

/* Parts are made and ended at a high rate, and mostly on different
 * shards: the coordinator makes them, the shards where they ran end them.
 * A part goes back to the pool of the shard that made it, with its
 * buffers: on its own shard at once, from another through that shard's
 * return stack (part_back: others push, the owner takes the whole stack
 * when its pool is empty). Kept on the shard where it ended, as it was,
 * the parts piled up in the pools of shards that coordinate little, up to
 * their bound, and the rest were freed there, while the shard holding
 * most connections made every part anew: at 4 shards an MGET of 10 keys
 * spent 11-24 % of the server's CPU in the allocator (perf), its frees
 * all across threads.
 * The pool holds a loop turn's worth of parts (50 connections pipelining
 * 8 MGETs each end 800 parts in a turn), each with small buffers: at most
 * a few MB, which the shard gives back with its free pages (tx_pool_trim). */
enum { POOL_MAX = 2048, POOL_BUF_MAX = 1024 };

static void part_destroy(tx_part *p) {
    zfree(p->m.items);
    buf_free(&p->m.args);
    buf_free(&p->m.replies);
    zfree(p->keys);
    zfree(p);
}

void tx_pool_trim(shard *sh) {
    tx_part *back = __atomic_exchange_n(&sh->part_back, NULL, __ATOMIC_ACQUIRE);
    while (back) {
        tx_part *p = back;
        back = p->sq_next;
        part_destroy(p);
    }
    while (sh->part_pool) {
        tx_part *p = sh->part_pool;
        sh->part_pool = p->sq_next;
        part_destroy(p);
    }
    sh->part_pool_n = 0;
}

static void part_free(shard *sh, tx_part *p) {
    if (p->m.args.cap > POOL_BUF_MAX || p->m.replies.cap > POOL_BUF_MAX || p->m.cap > 32 || p->capkeys > 64 ||
        (p->home == sh->id && sh->part_pool_n >= POOL_MAX)) {
        part_destroy(p);
        return;
    }
    if (p->home != sh->id) { /* back to its maker's pool */
        shard *home = shards[p->home];
        tx_part *top = __atomic_load_n(&home->part_back, __ATOMIC_RELAXED);
        do
            p->sq_next = top;
        while (!__atomic_compare_exchange_n(&home->part_back, &top, p, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
        return;
    }
    p->sq_next = sh->part_pool;
    sh->part_pool = p;
    sh->part_pool_n++;
}

/* The parts other shards gave back become the pool (it is empty). They
 * are not counted: walking them would take a cache miss on each, as they
 * come from other CPUs' caches. So the pool's bound counts only the parts
 * that ended here; those given back are bounded by what this shard had
 * in flight at once. */
static void take_back(shard *sh) {
    if (!__atomic_load_n(&sh->part_back, __ATOMIC_RELAXED)) return;
    sh->part_pool = __atomic_exchange_n(&sh->part_back, NULL, __ATOMIC_ACQUIRE);
    sh->part_pool_n = 0;
}

/* (always inlined: GCC may drop calls to a function that only prefetches) */
static inline __attribute__((always_inline)) void prefetch_part(const tx_part *p) {
    for (int i = 0; i < (int)sizeof *p; i += 64) __builtin_prefetch((const char *)p + i, 1);
}

static tx_part *part_new(shard *sh) {
    if (!sh->part_pool) take_back(sh);
    tx_part *p = sh->part_pool;
    if (!p) {
        p = zcalloc(sizeof *p);
        p->home = (uint8_t)sh->id;
        return p;
    }
    sh->part_pool = p->sq_next;
    if (sh->part_pool_n > 0) sh->part_pool_n--;
    tx_part *n = sh->part_pool;
    if (n) { /* maybe in another CPU's cache: the next one's buffers (its
              * own lines were asked for at the last call), and the one after */
        if (n->m.items) {
            __builtin_prefetch(n->m.items, 1);
            __builtin_prefetch((const char *)n->m.items + 64, 1);
        }
        if (n->m.args.p) {
            __builtin_prefetch(n->m.args.p, 1);
            __builtin_prefetch(n->m.args.p + 64, 1);
        }
        __builtin_prefetch(n->keys, 1);
        if (n->sq_next) prefetch_part(n->sq_next);
    }
    tx_part keep = *p; /* the buffers */
    memset(p, 0, sizeof *p);
    p->home = keep.home;
    p->m.items = keep.m.items;
    p->m.cap = keep.m.cap;
    p->m.args = keep.m.args;
    p->m.args.len = 0;
    p->m.replies = keep.m.replies;
    p->m.replies.len = 0;
    p->keys = keep.keys;
    p->capkeys = keep.capkeys;
    return p;
}

/* ---- a shard's queue ---- */

/* Whole-shard parts of one coordinator do not exclude each other: that
 * shard runs their handlers one after another on its own thread, and the
 * locked shard stays inert while any is granted. So a shard grants a
 * coordinator's whole-shard transactions together (shard->locked_n), and
 * a turn's worth of them (scripts over keys of two shards) costs one
 * exchange of messages, where one at a time cost a sleep and a doorbell
 * on each side for every one. */
static int same_whole(const tx_part *a, const tx_part *b) {
    return a->whole && b->whole && a->coord == b->coord;
}

static int parts_conflict(const tx_part *a, const tx_part *b) {
    if (a->whole || b->whole) return !same_whole(a, b);
    if (!a->t && !b->t && a->src == b->src) return 1; /* one sender's held batches keep their order */
    for (uint32_t i = 0; i < a->nkeys; i++)
        for (uint32_t j = 0; j < b->nkeys; j++)
            if (a->keys[i].h == b->keys[j].h && (a->keys[i].x || b->keys[j].x)) return 1;
    return 0;
}

/* Conflicts with some part already queued. */
static int conflicts_now(const shard *sh, const tx_part *p) {
    if (!sh->sq_head) return 0;
    if (p->whole) {
        for (const tx_part *q = sh->sq_head; q; q = q->sq_next)
            if (!same_whole(q, p)) return 1;
        return 0;
    }
    if (sh->sq_whole) return 1;
    if (!p->t && sh->held_from[p->src]) return 1;
    for (uint32_t i = 0; i < p->nkeys; i++)
        if (lock_conflicts(&sh->locks, p->keys[i].h, p->keys[i].x)) return 1;
    return 0;
}

/* Whether the coordinator's own deferred part, run in this instant, would
 * break a lock: a granted part that conflicts with it. A whole-shard one
 * may go before parts that wait here (another coordinator's whole-shard
 * part waiting for this turn's connections, whole_waits): those hold
 * nothing yet, and this one waits for nothing. Counted as a conflict,
 * every script of this shard that met one failed and went round again. */
static int own_conflicts(const shard *sh, const tx_part *p) {
    if (!p->whole) return conflicts_now(sh, p);
    for (const tx_part *q = sh->sq_head; q; q = q->sq_next)
        if (q->granted && !same_whole(q, p)) return 1;
    return 0;
}

static int grantable(const shard *sh, const tx_part *p) {
    for (const tx_part *q = sh->sq_head; q && q != p; q = q->sq_next)
        if (parts_conflict(q, p)) return 0;
    return 1;
}

/* Who a queued part is from: its coordinator, or a held batch's sender. */
static inline int part_src(const tx_part *p) { return p->t ? p->coord : p->src; }

static void enqueue(shard *sh, tx_part *p) {
    p->sq_next = NULL;
    p->sq_prev = sh->sq_tail;
    if (sh->sq_tail) sh->sq_tail->sq_next = p;
    else sh->sq_head = p;
    sh->sq_tail = p;
    for (uint32_t i = 0; i < p->nkeys; i++) lock_add(&sh->locks, p->keys[i].h, p->keys[i].x);
    if (p->whole) sh->sq_whole++;
    if (!p->t) sh->held_from[p->src]++;
    if (p->txid > sh->sq_max) sh->sq_max = p->txid;
    sh->sq_waiting++;
    sh->sq_waiting_by[part_src(p)]++;
    p->queued = 1;
}

static void dequeue(shard *sh, tx_part *p) {
    if (!p->queued) return;
    p->queued = 0;
    if (p->sq_prev) p->sq_prev->sq_next = p->sq_next;
    else sh->sq_head = p->sq_next;
    if (p->sq_next) p->sq_next->sq_prev = p->sq_prev;
    else sh->sq_tail = p->sq_prev;
    for (uint32_t i = 0; i < p->nkeys; i++) lock_del(&sh->locks, p->keys[i].h, p->keys[i].x);
    if (p->whole) {
        sh->sq_whole--;
        if (p->granted && --sh->locked_n == 0) sh->lease_offered = 0;
    }
    if (!p->t) sh->held_from[p->src]--;
    if (!p->granted) sh->sq_waiting--;
    if (!p->granted) sh->sq_waiting_by[part_src(p)]--;
    if (!sh->sq_head) sh->sq_max = 0;
    sh->sched_dirty = 1;
}

/* ---- leases ----
 *
 * A coordinator whose transactions take a whole shard again and again
 * (scripts over keys of two shards, from a pipeline that comes in a few
 * commands a turn) paid a round trip for each turn: SCHED, GRANTED,
 * RELEASE, with a sleep and a doorbell on each side, several times the
 * CPU of the scripts themselves. A shard with nothing of its own to do
 * (no pending connection, no part waiting) marks such a grant lease_ok,
 * and the coordinator keeps it when the transaction ends instead of
 * releasing it: one lease per shard. Its next transactions whose other
 * shards are all leased to it run at once, with no message (the shard is
 * still locked to this coordinator, and stays inert). Each loop turn, the
 * granter sends RECALL once it has work (connections, parts waiting, its
 * cron, a blocked client's timeout) and the holder releases at once: a
 * lease is never held by a transaction that waits, so letting it go waits
 * for nothing but a script running on it. The holder also lets go of a
 * lease after LEASE_MS. Not with the AOF on: a busy script's poll sends no
 * message then, and a lease could not go back while it runs. */
#define LEASE_MS 10

static tx lease_owner[MAX_SHARDS]; /* p->t of a kept part (a held batch's is NULL) */

static void leased_run_end(shard *sh);
static tx *tx_alloc(shard *sh, const command *cmd);
static void run_whole_tx(tx *t, const int *ids, int n);

/* Nothing of its own, nor of others than coord, to do. */
static int lease_idle(const shard *sh, int coord) {
    return !sh->pending_head && sh->sq_waiting == sh->sq_waiting_by[coord] && !aof_active() &&
           sh->now_ms < sh->next_cron;
}

static void lease_drop(shard *sh, int b) {
    tx_part *p = sh->lease[b];
    sh->lease[b] = NULL;
    sh->nleases--;
    p->m.type = SM_RELEASE;
    p->m.from = (uint8_t)sh->id;
    shard_send(sh, b, &p->m);
}

static void lease_keep(shard *sh, tx_part *p) {
    lease_owner[sh->id].coord = sh;
    p->t = &lease_owner[sh->id];
    sh->lease[p->shard] = p;
    sh->lease_ms[p->shard] = sh->now_ms;
    sh->nleases++;
}

static void lease_recalled(shard *sh, int b) {
    if (!sh->lease[b]) sh->lease_refused[b] = 1; /* one on its way back: not kept */
    else if (sh->lease_busy >> b & 1) sh->lease_drop_after |= 1ull << b;
    else lease_drop(sh, b);
}

static int lease_wanted(shard *sh) {
    /* (the holder's own parts waiting here are granted beside its lease) */
    if (sh->pending_head || sh->sq_waiting != sh->sq_waiting_by[sh->locked_coord] || sh->now_ms >= sh->next_cron ||
        sh->snap || sh->ev_pending || __atomic_load_n(&sh->unblock_reqs, __ATOMIC_RELAXED))
        return 1;
    int64_t d = sh->block_head ? block_next_deadline(sh) : -1;
    return d >= 0 && d <= sh->now_ms;
}

void tx_lease_turn(shard *sh) {
    if (sh->nleases)
        for (int b = 0; b < nshards; b++)
            if (sh->lease[b] && (sh->now_ms - sh->lease_ms[b] >= LEASE_MS || aof_active())) lease_drop(sh, b);
    if (!sh->locked_n || !sh->lease_offered || sh->recall_sent || !lease_wanted(sh)) return;
    sh->recall_sent = 1;
    for (int c = 0; c < nshards; c++)
        if (sh->lease_offered >> c & 1) shard_send(sh, c, msg_new(SM_RECALL, sh->id));
}

int64_t tx_lease_deadline(const shard *sh) {
    int64_t d = -1;
    for (int b = 0; sh->nleases && b < nshards; b++)
        if (sh->lease[b] && (d < 0 || sh->lease_ms[b] + LEASE_MS < d)) d = sh->lease_ms[b] + LEASE_MS;
    return d;
}

int tx_lock_holds_timeouts(const shard *sh) { return sh->locked_n && !sh->lease_offered; }

int tx_leases(const shard *sh, int b) { return sh->lease[b] || sh->whole_out[b]; }

void tx_lease_yield(shard *sh, int b) {
    if (sh->lease[b] && !(sh->lease_busy >> b & 1)) lease_drop(sh, b);
}

/* ---- hand-off (tx.h) ----
 *
 * With a benchmark's connections on both shards, scripts over keys of the
 * two had both shards coordinate: each took the other's whole shard in
 * turn, a round trip per turn each way, and the lease went back at the
 * other's next command (1.8-2.3x the CPU per call of one shard). Handed
 * off, the locked shard's scripts run where the lease is, and the lease
 * stays while they come: the locked shard only reads, parses and forwards
 * meanwhile. A holder without every lease the script needs, or with a
 * part of some other transaction granted on its own shard (it could hold
 * a key the script reaches), adopts the script instead (adopt). */
int tx_hand_off_to(const shard *sh) {
    if (!sh->locked_n || sh->locked_coord == sh->id || sh->recall_sent) return -1;
    return sh->lease_offered >> sh->locked_coord & 1 ? sh->locked_coord : -1;
}

/* Runs cmd now, holding every shard of mask whole: this one, and the
 * others on its leases. 0 (nothing ran) when a lease is missing or in use,
 * or when a part some other transaction was granted here (skip aside)
 * could hold what the command reaches. */
static int run_on_leases(shard *sh, cmd_ctx *proto, uint64_t mask, const msg *skip) {
    uint64_t others = mask & ~(1ull << sh->id);
    if (sh->lease_busy || !(mask >> sh->id & 1)) return 0;
    for (int b = 0; b < nshards; b++)
        if ((others >> b & 1) && !sh->lease[b]) return 0;
    for (const tx_part *q = sh->sq_head; q; q = q->sq_next)
        if (&q->m != skip && q->granted && !(q->whole && q->coord == sh->id)) return 0;
    tx t = {.coord = sh, .cmd = proto->cmd, .whole = 1, .sess = proto->sess};
    tx_part parts[MAX_SHARDS];
    for (int b = 0; b < nshards; b++) {
        if (!(mask >> b & 1)) continue;
        tx_part *p = &parts[t.n];
        memset(p, 0, sizeof *p);
        p->t = &t;
        p->coord = sh->id;
        p->shard = b;
        p->whole = p->granted = 1;
        p->leased = b != sh->id;
        t.ids[t.n] = b;
        t.parts[t.n++] = p;
    }
    sh->stat_tx++;
    sh->stat_tx_leased++;
    sh->lease_busy = others;
    sh->locked_coord = sh->id; /* this shard held for the run, as run_whole_here */
    sh->locked_n++;
    proto->tx = &t;
    proto->serve_later = 1;
    aof_tx_begin(sh);
    exec_command(proto);
    aof_tx_end(sh);
    if (!proto->reroute) block_serve_ready(proto);
    proto->tx = NULL;
    sh->locked_n--;
    for (int b = 0; b < nshards; b++)
        if (others >> b & 1) shard_publish_counts(shards[b]); /* it stays locked */
    leased_run_end(sh);
    return 1;
}

int tx_run_handed(shard *sh, const msg *m, batch_item *it, const char **argv, const size_t *argl, buf *out) {
    cmd_ctx c = {.sh = sh, .cmd = it->cmd, .argc = (int)it->argc, .argv = argv, .argl = argl, .dbid = (int)it->dbid,
                 .resp = it->resp, .out = out, .client = it->client, .handed = 1};
    if (!run_on_leases(sh, &c, it->whole_mask, m)) return 0;
    it->slow = (uint8_t)c.slow;
    it->slow_us = c.dur_ns / 1000;
    return 1;
}

int tx_run_leased_here(session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                       uint64_t mask, buf *out, int *reroute) {
    shard *sh = s->sh;
    if (!sh->nleases || (cmd->flags & (CMD_BLOCKING | CMD_EXEC))) return 0;
    cmd_ctx c = {.sh = sh, .sess = s, .cmd = cmd, .argc = argc, .argv = argv, .argl = argl, .dbid = s->db,
                 .resp = s->resp, .out = out};
    if (!run_on_leases(sh, &c, mask, NULL)) return 0;
    *reroute = c.reroute;
    return 1;
}

/* A handed-off command this shard could not run on its leases at once
 * (tx_run_handed): it coordinates it as a whole-shard transaction of its
 * own, and the part goes back with the reply when that ends (tx_done).
 * The part holds nothing meanwhile. */
static void adopt(shard *sh, tx_part *p) {
    batch_item *it = &p->m.items[0];
    it->declined = 0;
    tx *t = tx_alloc(sh, it->cmd);
    tx_keep_item_args(t, &p->m, it);
    t->dbid = (int)it->dbid;
    t->resp = it->resp;
    t->client = it->client;
    t->adopted = p;
    sh->stat_tx_adopted++;
    int ids[MAX_SHARDS], n = 0;
    for (int b = 0; b < nshards; b++)
        if (it->whole_mask >> b & 1) ids[n++] = b;
    run_whole_tx(t, ids, n);
}

/* A solo part ran: its answer goes back, or its handed-off item is adopted. */
static void solo_answer(shard *sh, tx_part *p) {
    if (p->m.nitems == 1 && p->m.items[0].declined) adopt(sh, p);
    else to_coord(sh, p, SM_GRANTED);
}

static void grant(shard *sh, tx_part *p) {
    p->granted = 1;
    sh->sq_waiting--;
    sh->sq_waiting_by[part_src(p)]--;
    if (!p->t) { /* a held batch: run it, leave, answer its sender */
        msg *m = p->held;
        shard_run_batch_items(sh, m, 0);
        dequeue(sh, p);
        part_free(sh, p);
        shard_batch_reply(sh, m);
        return;
    }
    if (p->whole) {
        sh->locked_coord = p->coord;
        sh->locked_n++;
        if (p->coord != sh->id && lease_idle(sh, p->coord)) {
            p->lease_ok = 1;
            sh->lease_offered |= 1ull << p->coord;
            sh->recall_sent = 0;
        }
    }
    if (p->armed || p->solo) shard_run_batch_items(sh, &p->m, 0);
    if (p->solo) {
        dequeue(sh, p); /* its transaction's lock point: no EXEC or RELEASE comes */
        solo_answer(sh, p);
        return;
    }
    to_coord(sh, p, SM_GRANTED);
}

/* Another shard's transaction that wants this whole shard waits, while this
 * shard's own connections have commands pending, until the turn ran them.
 * Granted at once, it left the shard locked from one RELEASE to the next
 * grant: a coordinator with a stream of whole-shard transactions (scripts
 * over keys of two shards) kept the other shard locked for good, and that
 * shard's own connections ran 29 transactions in 2 s against the first's
 * 174,631. Delayed, those connections run (their keys may be here alone)
 * or join the queue, which grants in order. */
static int whole_waits(const shard *sh, const tx_part *p) {
    return p->whole && p->coord != sh->id && sh->pending_head && !sh->pending_ran;
}

/* SCHED: queue the part, or refuse it when it would wait for a part with a
 * higher txid (that order of waiting is the one that cannot cycle). */
static void arrive(shard *sh, tx_part *p) {
    int conflict = conflicts_now(sh, p);
    if (conflict && p->txid < sh->sq_max) {
        p->failed = 1;
        to_coord(sh, p, SM_GRANTED);
        return;
    }
    if (!conflict && p->solo) { /* granted, run and let go in one instant: no queue, no intents */
        p->granted = 1;
        shard_run_batch_items(sh, &p->m, 0);
        solo_answer(sh, p);
        return;
    }
    enqueue(sh, p);
    if (conflict) return;
    if (whole_waits(sh, p)) sh->sched_dirty = 1; /* tx_settle, after the pending connections */
    else grant(sh, p);
}

static void part_on(shard *sh, tx_part *p) {
    switch (p->m.type) {
    case SM_SCHED: arrive(sh, p); break;
    case SM_EXEC:
        shard_run_batch_items(sh, &p->m, 0);
        dequeue(sh, p);
        to_coord(sh, p, SM_EXEC_DONE);
        break;
    case SM_RELEASE:
        dequeue(sh, p);
        part_free(sh, p);
        break;
    case SM_CANCEL:
        dequeue(sh, p);
        to_coord(sh, p, SM_CANCELLED);
        break;
    case SM_STEP:
        shard_run_batch_items(sh, &p->m, 0);
        to_coord(sh, p, SM_STEP_DONE);
        break;
    }
}

void tx_settle(shard *sh) {
    int later = 0;
    while (sh->sched_dirty) {
        sh->sched_dirty = 0;
        if (!sh->sq_waiting) break;
        tx_part *p = sh->sq_head;
        while (p) {
            if (!p->granted && grantable(sh, p)) {
                if (!whole_waits(sh, p)) {
                    grant(sh, p); /* may change the queue: start over */
                    p = sh->sq_head;
                    continue;
                }
                later = 1;
            }
            p = p->sq_next;
        }
    }
    if (later) sh->sched_dirty = 1; /* again once the turn ran its pending connections */
}

/* ---- held commands (outside transactions) ---- */

typedef struct key_sink {
    tx_part *p;
    int dbid, x;
} key_sink;

static void add_key(tx_part *p, uint64_t h, int x) {
    if (p->nkeys == p->capkeys) {
        p->capkeys = p->capkeys ? p->capkeys * 2 : 16;
        p->keys = zrealloc(p->keys, sizeof(tx_key) * p->capkeys);
    }
    p->keys[p->nkeys].h = h;
    p->keys[p->nkeys].x = (uint8_t)x;
    p->nkeys++;
}

static void sink_key(void *ud, const char *key, size_t klen) {
    key_sink *k = ud;
    add_key(k->p, lock_hash(k->dbid, key, klen), k->x);
}

typedef struct key_probe {
    const shard *sh;
    int dbid, x, hit;
} key_probe;

static void probe_key(void *ud, const char *key, size_t klen) {
    key_probe *k = ud;
    if (!k->hit) k->hit = lock_conflicts(&k->sh->locks, lock_hash(k->dbid, key, klen), k->x);
}

int tx_must_wait(shard *sh, const command *cmd, int argc, const char **argv, const size_t *argl, int dbid) {
    if (!sh->sq_head) return 0;
    if (sh->locked_n) return 1;
    if (cmd->flags & CMD_SESSION) return 0;
    key_probe k = {.sh = sh, .dbid = dbid, .x = (cmd->flags & CMD_WRITE) != 0};
    cmd_each_key(cmd, argc, argv, argl, probe_key, &k);
    return k.hit;
}

/* Queues what is left of batch m (its items from m->done_items on) as a
 * held part whose keys are every key those items name. */
static void hold_batch(shard *sh, msg *m) {
    tx_part *p = part_new(sh);
    p->held = m;
    p->src = m->from;
    p->shard = sh->id;
    p->txid = sh->sq_max;
    const char *sargv[16];
    size_t sargl[16];
    for (uint32_t i = m->done_items; i < m->nitems; i++) {
        batch_item *it = &m->items[i];
        if (it->cmd->flags & CMD_SESSION) continue;
        const char **argv = it->argc > 16 ? zmalloc(sizeof(char *) * it->argc) : sargv;
        size_t *argl = it->argc > 16 ? zmalloc(sizeof(size_t) * it->argc) : sargl;
        msg_batch_args(m, it, argv, argl);
        key_sink k = {.p = p, .dbid = (int)it->dbid, .x = (it->cmd->flags & CMD_WRITE) != 0};
        cmd_each_key(it->cmd, (int)it->argc, argv, argl, sink_key, &k);
        if (argv != sargv) {
            zfree(argv);
            zfree(argl);
        }
    }
    enqueue(sh, p);
    sh->sched_dirty = 1; /* tx_settle grants it when nothing before it conflicts */
}

void tx_batch_arrived(shard *sh, msg *m) {
    int free_path = !sh->sq_head || (!sh->held_from[m->from] && !sh->locked_n);
    if (free_path && shard_run_batch_items(sh, m, sh->sq_head != NULL)) {
        shard_batch_reply(sh, m);
        return;
    }
    hold_batch(sh, m);
}

void tx_refuse_held(shard *sh, const char *err) {
    tx_part *p = sh->sq_head;
    while (p) {
        tx_part *next = p->sq_next;
        if (!p->t && !p->granted) {
            msg *m = p->held;
            for (; m->done_items < m->nitems; m->done_items++) {
                batch_item *it = &m->items[m->done_items];
                it->reply = m->replies.len;
                resp_error(&m->replies, err);
                it->reply_len = m->replies.len - it->reply;
            }
            dequeue(sh, p);
            part_free(sh, p);
            shard_batch_reply(sh, m);
        }
        p = next;
    }
}

void tx_hold_local(shard *sh, session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                   int discard) {
    msg *m = msg_new(SM_BATCH, sh->id);
    shard_batch_add(m, s, cmd, argc, argv, argl, discard);
    s->conn->held = 1;
    hold_batch(sh, m);
}

/* ---- the coordinator ---- */

static void schedule(tx *t);

/* Phases send to every part, and a part on this shard may answer at once;
 * one extra count held while sending keeps the phase from ending early. */
static void phase_start(tx *t, int phase) {
    t->phase = phase;
    t->outstanding = 1;
}

static void phase_send(tx *t, tx_part *p, int type) {
    t->outstanding++;
    to_part(t, p, type);
}

static void phase_step(tx *t);
static void phase_end(tx *t) {
    if (--t->outstanding == 0) phase_step(t);
}

static buf *tx_out(tx *t) { return t->slot ? &t->slot->data : &t->result; }

static void unlink_split(conn *o, tx *t) {
    tx **pp = &o->txs;
    while (*pp && *pp != t) pp = &(*pp)->conn_next;
    if (*pp) *pp = t->conn_next;
    if (t->writes) o->tx_writes--;
    o->tx_stalled = 0; /* its next command looks again */
}

/* A chained transaction's state: granted before its turn, it cancels
 * (PARK_CANCELLING), then waits unscheduled (PARK_IDLE) until it is the
 * connection's head. */
enum { PARK_NONE, PARK_CANCELLING, PARK_IDLE };

/* The connection's next chained transaction is its head now: it runs
 * when granted, and is scheduled again if it waits parked. */
static void chain_next(conn *o, tx *t) {
    tx *next = t->chain_next;
    o->waiting = next;
    if (!next) {
        o->wait_tail = NULL;
        o->chain_n = 0;
        return;
    }
    if (o->chain_n) o->chain_n--;
    if (next->park == PARK_IDLE) {
        next->park = PARK_NONE;
        next->retries++;
        schedule(next);
    }
}

/* The transaction's reply is written: the connection goes on. */
static void tx_done(tx *t) {
    shard *sh = t->coord;
    conn *o = t->owner;
    if (!t->whole && !t->parts_count) cmdstats_call(sh, t->cmd, clock_ns() - t->start_ns, 0); /* split or hops: one call */
    if (o) {
        if (!t->blocked) t->slot->ready = 1;
        if (o->waiting == t) chain_next(o, t);
        else unlink_split(o, t);
        o->inflight--;
        if (!o->closed) {
            conn_slots_flush(o);
            shard_add_pending(sh, o);
        }
    }
    if (t->adopted) { /* the reply goes back in the handed-off part */
        tx_part *p = t->adopted;
        batch_item *it = &p->m.items[0];
        it->reply = p->m.replies.len;
        buf_add(&p->m.replies, t->result.p, t->result.len);
        it->reply_len = t->result.len;
        to_coord(sh, p, SM_GRANTED);
    }
    for (int i = 0; i < t->n; i++)
        if (t->parts[i]) part_free(sh, t->parts[i]);
    buf_free(&t->result);
    buf_free(&t->args);
    zfree(t->argv);
    zfree(t->argl);
    zfree(t->plan);
    zfree(t);
    if (o) conn_release_if_done(o);
}

static void release_all(tx *t) {
    shard *sh = t->coord;
    for (int i = 0; i < t->n; i++) {
        tx_part *p = t->parts[i];
        if (p->deferred) continue; /* never queued: tx_done frees it */
        t->parts[i] = NULL;
        if (p->whole && !p->leased) sh->whole_out[p->shard]--;
        int keep = !p->leased && p->whole && p->lease_ok && p->granted && p->shard != sh->id &&
                   !sh->lease[p->shard] && !sh->lease_refused[p->shard];
        if (p->leased || keep) shard_publish_counts(shards[p->shard]); /* it stays locked: its loop does not */
        if (keep) lease_keep(sh, p);
        else if (p->solo || p->leased) part_free(sh, p); /* already out of its shard's queue / never in it */
        else to_part(t, p, SM_RELEASE);
    }
    leased_run_end(sh);
}

/* Returns 1 when the handler asked to run again holding every shard. */
static int run_whole(tx *t) {
    shard *sh = t->coord;
    cmd_ctx c = {.sh = sh, .sess = t->sess, .tx = t, .cmd = t->cmd, .argc = t->argc,
                 .argv = t->argv, .argl = t->argl, .dbid = t->dbid, .resp = t->resp, .out = tx_out(t),
                 .serve_later = 1, .client = t->client, .handed = t->adopted != NULL};
    aof_tx_begin(sh); /* AOF: what this runs is one MULTI/EXEC block, written before the RELEASEs leave */
    exec_command(&c);
    aof_tx_end(sh);
    /* then the clients it woke, as Redis: what they log (a pop, the DEL of
     * a key found expired) follows the block */
    if (!c.reroute) block_serve_ready(&c);
    return c.reroute;
}

/* A transaction that starts again over every shard: the own part that
 * was never queued (release_all leaves it) goes with the rest. */
static void drop_deferred(tx *t) {
    for (int i = 0; i < t->n; i++)
        if (t->parts[i] && t->parts[i]->deferred) {
            part_free(t->coord, t->parts[i]);
            t->parts[i] = NULL;
        }
}

/* The part on the coordinator's own shard, when its scheduling waits for
 * the others' grants (schedule); NULL otherwise. */
static tx_part *deferred_part(tx *t) {
    for (int i = 0; i < t->n; i++)
        if (t->parts[i]->deferred) return t->parts[i];
    return NULL;
}

/* run_whole, with the coordinator's own shard held for the run when its
 * part was deferred (granted in that instant, as the handler sees it). */
static int run_whole_here(tx *t, tx_part *own) {
    shard *sh = t->coord;
    if (own) {
        sh->locked_coord = sh->id; /* (any others holding it are this shard's own too) */
        sh->locked_n++;
    }
    int again = run_whole(t);
    if (own) sh->locked_n--;
    return again;
}

/* A run on leases ended, or did not happen (its turn in a chain had not
 * come): the leases are no longer in use, and those recalled meanwhile go
 * back (the parts standing for them are freed with their transaction). */
static void leased_run_end(shard *sh) {
    if (!sh->lease_busy) return;
    sh->lease_busy = 0;
    for (int b = 0; b < nshards; b++)
        if ((sh->lease_drop_after >> b & 1) && sh->lease[b]) lease_drop(sh, b);
    sh->lease_drop_after = 0;
}

/* A transaction of hops: its step reads the replies so far and either
 * gives parts more to run (each in one STEP) or writes the reply. */
static void next_hop(tx *t) {
    if (!t->step(t, tx_out(t))) {
        release_all(t);
        tx_done(t);
        return;
    }
    phase_start(t, TXP_STEP);
    for (int i = 0; i < t->n; i++)
        if (t->parts[i]->m.done_items < t->parts[i]->m.nitems) phase_send(t, t->parts[i], SM_STEP);
    phase_end(t);
}

static void phase_step(tx *t) {
    tx_part *own = deferred_part(t);
    switch (t->phase) {
    case TXP_SCHED:
        /* every other part is granted and holds its keys: the own part runs
         * now, in that instant, if nothing here holds its keys (as if it
         * took and dropped its locks at once), else all is tried again */
        if (!t->fails && own && own_conflicts(t->coord, own)) t->fails++;
        if (!t->fails && t->whole && t->owner && t->owner->waiting != t) { /* not its turn in a chain */
            t->park = PARK_CANCELLING;
            t->coord->stat_tx_parked++;
        }
        if (t->fails || t->park) {
            phase_start(t, TXP_CANCEL);
            for (int i = 0; i < t->n; i++)
                if (!t->parts[i]->failed && !t->parts[i]->deferred && !t->parts[i]->leased)
                    phase_send(t, t->parts[i], SM_CANCEL);
            phase_end(t);
        } else if (t->whole) {
            if (run_whole_here(t, own) && t->n < nshards) { /* again, over every shard */
                release_all(t);
                drop_deferred(t);
                t->n = 0;
                for (int i = 0; i < nshards; i++) tx_part_of(t, i);
                t->retries++;
                schedule(t);
                break;
            }
            release_all(t);
            tx_done(t);
        } else if (t->step) {
            next_hop(t);
        } else if (t->armed) {
            if (own) shard_run_batch_items(t->coord, &own->m, 0);
            t->merge(t, tx_out(t));
            release_all(t);
            if (t->rerun_whole && t->n < nshards) { /* again, over every shard, as the whole-shard mode does */
                drop_deferred(t);
                t->rerun_whole = t->armed = 0;
                t->whole = 1;
                t->n = 0;
                for (int i = 0; i < nshards; i++) tx_part_of(t, i);
                t->retries++;
                schedule(t);
                break;
            }
            tx_done(t);
        } else {
            phase_start(t, TXP_EXEC);
            for (int i = 0; i < t->n; i++) {
                if (t->parts[i] == own) shard_run_batch_items(t->coord, &own->m, 0);
                else if (!t->parts[i]->solo) phase_send(t, t->parts[i], SM_EXEC); /* (a solo part ran at its grant) */
            }
            phase_end(t);
        }
        break;
    case TXP_CANCEL:
        leased_run_end(t->coord);
        if (t->park && t->owner->waiting != t) {
            t->park = PARK_IDLE; /* chain_next schedules it */
            break;
        }
        t->park = PARK_NONE;
        t->retries++;
        schedule(t);
        break;
    case TXP_EXEC:
        t->merge(t, tx_out(t));
        tx_done(t);
        break;
    case TXP_STEP:
        next_hop(t);
        break;
    }
}

static void coord_on(shard *sh, tx_part *p) {
    tx *t = p->t;
    if (p->whole && (p->m.type == SM_CANCELLED || (p->m.type == SM_GRANTED && p->failed))) sh->whole_out[p->shard]--;
    if (p->m.type == SM_GRANTED && p->failed) t->fails++;
    if (p->lease_ok) sh->lease_refused[p->shard] = 0; /* offered after its recall */
    phase_end(t);
}

/* Sends every part its SCHED.
 *
 * Two parts, one of them on the coordinator's shard (a split over two
 * shards): the own part is queued first, by a direct call. When it is
 * granted there and then, the other part is the last lock the transaction
 * takes, so it is sent solo: it runs at its grant (reads and writes alike)
 * and lets its keys go at once, while the own part still holds its keys
 * (two-phase locking: every lock is held at the other part's grant). That
 * is two messages instead of SCHED, GRANTED, RELEASE (reads) or SCHED,
 * GRANTED, EXEC, EXEC_DONE (writes).
 *
 * Otherwise a transaction's first try keeps the part on the coordinator's
 * own shard back (deferred): it runs without taking locks once the others
 * are granted (phase_step), which spares that shard's queue and intent
 * table. A retry queues it as any other part, so that it cannot be refused
 * for ever. A whole-shard transaction too: its handler runs on this
 * thread, so this shard is held for that run alone (run_whole_here), and
 * the shard goes on serving its connections while the grants come; held
 * from the start, it stopped at its first such command of the turn, so
 * the other shards saw one whole-shard transaction of it at a time. */
static void schedule(tx *t) {
    shard *sh = t->coord;
    t->txid = __atomic_fetch_add(&tx_seq, 1, __ATOMIC_RELAXED);
    if (t->retries) sh->stat_tx_retries++;
    t->fails = 0;
    phase_start(t, TXP_SCHED);
    int pair = !t->whole && !t->step && t->n == 2;
    int leased = t->whole && !t->retries && sh->nleases;
    tx_part *own = NULL;
    for (int i = 0; i < t->n; i++) {
        tx_part *p = t->parts[i];
        p->txid = t->txid;
        p->whole = (uint8_t)t->whole;
        p->armed = (uint8_t)t->armed;
        p->granted = p->failed = p->leased = p->lease_ok = 0;
        p->deferred = !pair && !t->step && !t->retries && t->n > 1 && p->shard == sh->id;
        p->solo = !t->whole && !t->step && t->armed && t->n == 1;
        p->m.done_items = 0;
        p->m.replies.len = 0;
        if (pair && p->shard == sh->id) own = p;
        if (p->shard == sh->id ? !p->deferred : !sh->lease[p->shard]) leased = 0;
    }
    /* every other shard leased, and nothing here holds what the own part
     * needs: it runs now, and never waits holding a lease */
    if (leased && (!deferred_part(t) || !own_conflicts(sh, deferred_part(t)))) {
        for (int i = 0; i < t->n; i++)
            if (t->parts[i]->shard != sh->id) {
                t->parts[i]->leased = t->parts[i]->granted = 1;
                sh->lease_busy |= 1ull << t->parts[i]->shard;
            }
        sh->stat_tx_leased++;
        phase_end(t);
        return;
    }
    if (!t->whole && sh->nleases) /* (its parts would wait behind them) */
        for (int i = 0; i < t->n; i++) tx_lease_yield(sh, t->parts[i]->shard);
    if (own) phase_send(t, own, SM_SCHED);
    for (int i = 0; i < t->n; i++) {
        tx_part *p = t->parts[i];
        if (p == own || p->deferred) continue;
        if (p->whole) sh->whole_out[p->shard]++;
        p->solo |= own && own->granted;
        phase_send(t, p, SM_SCHED);
    }
    phase_end(t);
}

static tx *tx_alloc(shard *sh, const command *cmd) {
    tx *t = zcalloc(sizeof *t);
    t->coord = sh;
    t->cmd = cmd;
    t->resp = 2;
    t->start_ns = clock_ns();
    sh->stat_tx++;
    return t;
}

/* wait: the connection waits for t (else t joins its split ones); one
 * that waits already for a chain (tx_begin_chained) waits for t after it.
 * chain: t takes successors. */
static void attach(tx *t, session *s, int discard, int wait, int chain) {
    conn *c = s->conn;
    t->owner = c;
    t->sess = s;
    t->dbid = s->db;
    t->resp = s->resp;
    t->slot = conn_pending_slot(c);
    t->slot->discard = discard;
    c->inflight++;
    if (wait) {
        if (c->waiting) c->wait_tail->chain_next = t;
        else c->waiting = t;
        c->wait_tail = t;
        c->chain_n = chain && (c->waiting == t || c->chain_n) ? c->chain_n + 1 : 0;
        return;
    }
    tx **pp = &c->txs;
    while (*pp) pp = &(*pp)->conn_next;
    *pp = t;
}

tx_part *tx_part_of(tx *t, int shard) {
    for (int i = 0; i < t->n; i++)
        if (t->ids[i] == shard) return t->parts[i];
    tx_part *p = part_new(t->coord);
    p->t = t;
    p->coord = t->coord->id;
    p->shard = shard;
    t->ids[t->n] = shard;
    t->parts[t->n++] = p;
    return p;
}

void tx_part_key(tx_part *p, int dbid, const char *key, size_t klen, int exclusive) {
    uint64_t h = lock_hash(dbid, key, klen);
    p->t->bloom[h >> 62] |= 1ull << (h >> 56 & 63);
    p->t->writes |= exclusive != 0;
    add_key(p, h, exclusive);
}

typedef struct conn_probe {
    const conn *c;
    int dbid, x, hit, nkeys;
} conn_probe;

static int tx_names(const tx *t, uint64_t h, int x) {
    if (!(t->bloom[h >> 62] & (1ull << (h >> 56 & 63)))) return 0;
    for (int i = 0; i < t->n; i++) {
        const tx_part *p = t->parts[i];
        for (uint32_t k = 0; k < p->nkeys; k++)
            if (p->keys[k].h == h && (x || p->keys[k].x)) return 1;
    }
    return 0;
}

static void conn_probe_key(void *ud, const char *key, size_t klen) {
    conn_probe *k = ud;
    k->nkeys++;
    if (k->hit) return;
    uint64_t h = lock_hash(k->dbid, key, klen);
    for (const tx *t = k->c->txs; t && !k->hit; t = t->conn_next) k->hit = tx_names(t, h, k->x);
}

int tx_conn_must_wait(session *s, const command *cmd, int argc, const char **argv, const size_t *argl) {
    if (cmd->flags & (CMD_SESSION | CMD_EXEC | CMD_BLOCKING | CMD_ALLSHARDS | CMD_HOME)) return 1;
    if (cmd->route && cmd->route(argc, argv, argl, nshards) != ROUTE_KEYS) return 1;
    int x = (cmd->flags & CMD_WRITE) != 0;
    if (!x && !s->conn->tx_writes && cmd->first > 0) return 0; /* a read after reads: no key can conflict */
    conn_probe k = {.c = s->conn, .dbid = s->db, .x = x};
    cmd_each_key(cmd, argc, argv, argl, conn_probe_key, &k);
    return k.hit || k.nkeys == 0;
}

batch_item *tx_part_add(tx_part *p, const command *cmd, int argc, const char **argv, const size_t *argl, int dbid,
                        int resp) {
    batch_item *it = msg_batch_add(&p->m, cmd, argc, argv, argl);
    it->dbid = (uint32_t)dbid;
    it->resp = (uint8_t)resp;
    if (p->t && p->t->sess) it->client = tracking_word(p->t->sess, cmd);
    return it;
}

const char *tx_part_reply(const tx *t, int i, int k, size_t *len) {
    const msg *m = &t->parts[i]->m;
    *len = m->items[k].reply_len;
    return m->replies.p + m->items[k].reply;
}

tx *tx_create(session *s, const command *cmd, int discard) {
    tx *t = tx_alloc(s->sh, cmd);
    attach(t, s, discard, 0, 0);
    return t;
}

tx *tx_create_waited(session *s, const command *cmd, int discard) {
    tx *t = tx_alloc(s->sh, cmd);
    attach(t, s, discard, 1, 0);
    return t;
}

void tx_run_steps(tx *t, tx_step_fn *step) {
    t->step = step;
    tx_run_split(t, 1, NULL);
}

void tx_run_split(tx *t, int armed, tx_merge_fn *merge) {
    if (t->writes && t->owner && t->owner->waiting != t) t->owner->tx_writes++;
    t->armed = armed;
    t->merge = merge;
    schedule(t);
}

/* Whole-shard mode keeps the command itself, copied (the query buffer may
 * move while the locks are being taken). */
void tx_keep_args(tx *t, int argc, const char **argv, const size_t *argl) {
    t->argc = argc;
    size_t total = 0;
    for (int i = 0; i < argc; i++) total += argl[i] + 1;
    buf_reserve(&t->args, total);
    t->argv = zmalloc(sizeof(char *) * (size_t)argc);
    t->argl = zmalloc(sizeof(size_t) * (size_t)argc);
    size_t *offs = zmalloc(sizeof(size_t) * (size_t)argc);
    for (int i = 0; i < argc; i++) {
        offs[i] = t->args.len;
        buf_add(&t->args, argv[i], argl[i]);
        buf_addc(&t->args, 0);
        t->argl[i] = argl[i];
    }
    for (int i = 0; i < argc; i++) t->argv[i] = t->args.p + offs[i];
    zfree(offs);
}

void tx_keep_item_args(tx *t, const msg *m, const batch_item *it) {
    const char *sargv[16];
    size_t sargl[16];
    const char **argv = it->argc > 16 ? zmalloc(sizeof(char *) * it->argc) : sargv;
    size_t *argl = it->argc > 16 ? zmalloc(sizeof(size_t) * it->argc) : sargl;
    msg_batch_args(m, it, argv, argl);
    tx_keep_args(t, (int)it->argc, argv, argl);
    if (argv != sargv) {
        zfree(argv);
        zfree(argl);
    }
}

static void run_whole_tx(tx *t, const int *ids, int n) {
    t->whole = 1;
    for (int i = 0; i < n; i++) tx_part_of(t, ids[i]);
    schedule(t);
}

static void begin(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, const int *ids,
                  int n, int discard, int chain) {
    tx *t = tx_alloc(s->sh, cmd);
    tx_keep_args(t, argc, argv, argl);
    attach(t, s, discard, 1, chain);
    run_whole_tx(t, ids, n);
}

void tx_begin(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, const int *ids,
              int n, int discard) {
    begin(s, cmd, argc, argv, argl, ids, n, discard, 0);
}

void tx_begin_chained(session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                      const int *ids, int n, int discard) {
    begin(s, cmd, argc, argv, argl, ids, n, discard, 1);
}

void tx_begin_internal(shard *sh, const command *cmd, int argc, const char **argv, const size_t *argl) {
    int ids[MAX_SHARDS];
    for (int i = 0; i < nshards; i++) ids[i] = i;
    tx *t = tx_alloc(sh, cmd);
    tx_keep_args(t, argc, argv, argl);
    run_whole_tx(t, ids, nshards);
}

void tx_on_message(shard *sh, msg *m) {
    tx_part *p = (tx_part *)m;
    switch (m->type) {
    case SM_RECALL:
        lease_recalled(sh, m->from);
        msg_free(m);
        break;
    case SM_GRANTED:
    case SM_EXEC_DONE:
    case SM_CANCELLED:
    case SM_STEP_DONE: coord_on(sh, p); break;
    default: part_on(sh, p); break;
    }
}
