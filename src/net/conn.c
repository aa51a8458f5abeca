/* conn.c - connection input, command execution order and output; see
 * conn.h. Reads go straight into the query buffer (one read(2) per
 * readiness event); every complete command in it runs before the loop moves
 * on; output is written once per loop turn in conn_write_all. */
#include "net/conn.h"
#include "net/tls.h"
#include "cmd/dispatch.h"
#include "cmd/multi.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "server/config.h"
#include "shard/block.h"
#include "shard/client_evict.h"
#include "shard/cmdstats.h"
#include "shard/pause.h"
#include "shard/prefetch.h"
#include "shard/pubsub.h"
#include "shard/tracking.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include <errno.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

/* A big argument (Redis's PROTO_MBULK_BIG_ARG): the query buffer is sized
 * for it when its header is parsed, and CLIENT LIST's qbuf shows only it
 * while it is read (Redis keeps the arguments before it in argv). */
#define CONN_BIG_ARG (32 * 1024)

static uint64_t next_id = 1;
uint64_t session_next_id(void) { return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED); }
int conn_count_total = 0;     /* atomic: every shard's connections */
static int killed_pending = 0; /* atomic: of those, marked killed and not closed yet */

/* Connections as clients see them: a killed one is gone at once (as in
 * Redis, which frees it in CLIENT KILL), though its shard closes it later. */
int conn_count_live(void) {
    return __atomic_load_n(&conn_count_total, __ATOMIC_RELAXED) - __atomic_load_n(&killed_pending, __ATOMIC_RELAXED);
}

int conn_mark_killed(conn *c) {
    int free_ = 0;
    if (!__atomic_compare_exchange_n(&c->s.killed, &free_, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return 0;
    __atomic_fetch_add(&killed_pending, 1, __ATOMIC_RELAXED);
    return 1;
}
const char *(*conn_session_hook)(session *s, int is_local);
void (*conn_replica_closed_hook)(conn *c);
const char *(*conn_user_name_hook)(const session *s);
int (*conn_master_cmd_hook)(conn *c, int argc, const char **argv, const size_t *argl);
void (*conn_master_closed_hook)(conn *c);

/* The master link ran (or answered) the command spanning rp.start ..
 * rp.cur: its bytes join the offset, a MULTI block's at its end. */
static __attribute__((noinline, cold)) void master_count(conn *c) {
    c->repl_multi += c->rp.cur - c->rp.start;
    if (c->s.multi) return;
    c->repl_applied += c->repl_multi;
    c->repl_multi = 0;
}

int conn_admit(conn *c, int is_local) {
    c->is_local = is_local;
    const char *deny = conn_session_hook ? conn_session_hook(&c->s, is_local) : NULL;
    if (!deny) return 0;
    ssize_t w = write(c->fd, deny, strlen(deny));
    (void)w;
    conn_close(c);
    return -1;
}

static void schedule_write(conn *c) {
    if (c->in_write || c->closed) return;
    c->in_write = 1;
    c->write_next = c->sh->write_head;
    c->sh->write_head = c;
}

/* Reply slots (a command whose reply comes later, from another shard or a
 * blocked wait, and the replies queued behind it) come from a pool of the
 * thread's, with their buffers when small: at two shards half the
 * commands of a pipeline on random keys take two slots each, and their
 * allocations and frees were a third of what the shards cost SET -P 32
 * over one shard. Slots are taken and given back on the connection's
 * thread (the pool is per thread, so one that moves is only a pool's). */
#ifdef __SANITIZE_ADDRESS__
#define SLOT_POOL_MAX 0 /* every slot freed: the sanitizer sees a use after the free */
#else
#define SLOT_POOL_MAX 2048
#endif
#define SLOT_KEEP_CAP 512
static __thread slot *slot_pool;
static __thread int slot_pool_n;

static slot *slot_get(void) {
    slot *sl = slot_pool;
    if (!sl) return zcalloc(sizeof *sl);
    slot_pool = sl->next;
    slot_pool_n--;
    sl->next = NULL;
    sl->ready = sl->discard = 0;
    return sl;
}

static void slot_put(slot *sl) {
    if (slot_pool_n >= SLOT_POOL_MAX) {
        buf_free(&sl->data);
        zfree(sl);
        return;
    }
    if (sl->data.cap > SLOT_KEEP_CAP) buf_free(&sl->data);
    sl->data.len = 0;
    sl->next = slot_pool;
    slot_pool = sl;
    slot_pool_n++;
}

void conn_slot_pool_trim(void) {
    while (slot_pool) {
        slot *sl = slot_pool;
        slot_pool = sl->next;
        buf_free(&sl->data);
        zfree(sl);
    }
    slot_pool_n = 0;
}

buf *session_reply_buf(session *s) {
    conn *c = s->conn;
    if (!c) return s->out;
    if (!c->sq_tail) {
        schedule_write(c);
        return &c->out;
    }
    if (c->sq_tail->ready) return &c->sq_tail->data;
    slot *sl = slot_get();
    sl->ready = 1;
    c->sq_tail->next = sl;
    c->sq_tail = sl;
    return &sl->data;
}

slot *conn_pending_slot(conn *c) {
    slot *sl = slot_get();
    if (c->sq_tail) c->sq_tail->next = sl;
    else c->sq_head = sl;
    c->sq_tail = sl;
    return sl;
}

void conn_slots_flush(conn *c) {
    while (c->sq_head && c->sq_head->ready) {
        slot *sl = c->sq_head;
        if (!sl->discard && sl->data.len) {
            if (c->out.len == c->out_pos && (sl->data.cap > SLOT_KEEP_CAP || c->out.cap < sl->data.len)) {
                /* Nothing unwritten and a big reply: take the slot's buffer as it is. */
                buf_free(&c->out);
                c->out = sl->data;
                c->out_pos = 0;
                sl->data = (buf){0};
            } else {
                if (c->out.len == c->out_pos) c->out.len = c->out_pos = 0;
                buf_add(&c->out, sl->data.p, sl->data.len);
            }
        }
        c->sq_head = sl->next;
        if (!c->sq_head) c->sq_tail = NULL;
        slot_put(sl);
    }
    if (c->out.len > c->out_pos) schedule_write(c);
    cevict_update(c);
}

int64_t conn_rbuf_peak_reset_ms = CONN_RBUF_PEAK_RESET_MS;
int conn_rbuf_resizing = 1;

/* Gives back what a drained reply buffer holds beyond rbuf_keep. */
static void rbuf_trim(conn *c) {
    if (c->out.len || c->out.cap <= c->rbuf_keep) return;
    c->out.p = zrealloc(c->out.p, c->rbuf_keep);
    c->out.cap = c->rbuf_keep;
}

void conn_cron(conn *c, int64_t now) {
    conn_shrink_idle(c, now);
    if (!__atomic_load_n(&conn_rbuf_resizing, __ATOMIC_RELAXED)) return;
    size_t keep = c->rbuf_keep;
    if (keep / 2 >= CONN_RBUF_MIN && c->rbuf_peak < keep / 2)
        c->rbuf_keep = c->rbuf_peak + 1 > CONN_RBUF_MIN ? c->rbuf_peak + 1 : CONN_RBUF_MIN;
    else if (keep * 2 <= CONN_RBUF_CHUNK * 2 && c->rbuf_peak >= keep)
        c->rbuf_keep = keep * 2 < CONN_RBUF_CHUNK ? keep * 2 : CONN_RBUF_CHUNK;
    int64_t reset = __atomic_load_n(&conn_rbuf_peak_reset_ms, __ATOMIC_RELAXED);
    if (reset >= 0 && now - c->rbuf_peak_reset >= reset) {
        c->rbuf_peak = c->out.len - c->out_pos;
        c->rbuf_peak_reset = now;
    }
    rbuf_trim(c);
}


/* The shard's list of its connections (readers on other threads take
 * conns_lock). */
static void conns_link(shard *sh, conn *c) {
    pthread_mutex_lock(&sh->conns_lock);
    c->all_prev = NULL;
    c->all_next = sh->conns;
    if (sh->conns) sh->conns->all_prev = c;
    sh->conns = c;
    sh->nconns++;
    pthread_mutex_unlock(&sh->conns_lock);
}

static void conns_unlink(shard *sh, conn *c) {
    pthread_mutex_lock(&sh->conns_lock);
    if (c->all_prev) c->all_prev->all_next = c->all_next;
    else sh->conns = c->all_next;
    if (c->all_next) c->all_next->all_prev = c->all_prev;
    sh->nconns--;
    pthread_mutex_unlock(&sh->conns_lock);
}

conn *conn_create(shard *sh, int fd, int is_unix) {
    conn *c = zcalloc(sizeof *c);
    c->fd = fd;
    c->sh = sh;
    c->rbuf_keep = CONN_RBUF_CHUNK;
    c->ce_bucket = -1;
    c->is_unix = is_unix;
    c->s.id = session_next_id();
    c->s.resp = 2;
    c->s.conn = c;
    c->s.sh = sh;
    c->s.ctime_ms = mstime();
    c->last_io_ms = c->s.ctime_ms;
    strcpy(c->s.lastcmd, "NULL");
    resp_parser_init(&c->rp, cfg_get(proto_max_bulk_len));
    conns_link(sh, c);
    __atomic_fetch_add(&conn_count_total, 1, __ATOMIC_RELAXED);
    tracking_conn_open(&c->s);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(sh->epfd, EPOLL_CTL_ADD, fd, &ev);
    return c;
}

/* Memory of closed connections is released at the end of the loop turn
 * (conn_free_closed): epoll events of this turn may still name them. */
void conn_release_if_done(conn *c) {
    if (!c->closed || c->inflight > 0 || c->waiting || c->in_pending || c->in_write || c->in_grave || c->move_to) return;
    c->in_grave = 1;
    c->all_next = c->sh->grave;
    c->sh->grave = c;
}

void conn_free_closed(shard *sh) {
    while (sh->grave) {
        conn *c = sh->grave;
        sh->grave = c->all_next;
        while (c->sq_head) {
            slot *sl = c->sq_head;
            c->sq_head = sl->next;
            slot_put(sl);
        }
        buf_free(&c->qbuf);
        buf_free(&c->out);
        resp_parser_free(&c->rp);
        zfree(c->argv);
        zfree(c->argl);
        zfree(c->s.name);
        multi_discard(&c->s);
        zfree(c);
    }
}

void conn_close(conn *c) {
    if (c->closed) return;
    c->closed = 1;
    shard *sh = c->sh;
    block_conn_closed(c);
    if (c->postponed) {
        c->postponed = 0;
        sh->npaused--;
    }
    pubsub_session_free(&c->s);
    tracking_conn_close(&c->s);
    if (c->repl) conn_replica_closed_hook(c);
    if (__builtin_expect(c->repl_master, 0) && conn_master_closed_hook) conn_master_closed_hook(c);
    epoll_ctl(sh->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    if (c->ssl) tls_conn_close(c);
    close(c->fd);
    c->fd = -1;
    conns_unlink(sh, c);
    cevict_conn_closed(c);
    /* 2: closed, so no one marks it killed from now on */
    if (__atomic_exchange_n(&c->s.killed, 2, __ATOMIC_ACQ_REL) == 1)
        __atomic_fetch_sub(&killed_pending, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&conn_count_total, 1, __ATOMIC_RELAXED);
    /* its unwritten replies go now, not at the end of the turn: a client
     * evicted for its output must not leave that memory counted while the
     * next commands of the turn decide whether keys must go */
    buf_free(&c->out);
    c->out_pos = 0;
    conn_release_if_done(c);
}

void conn_postpone(conn *c) {
    if (c->postponed) return;
    c->postponed = 1;
    c->sh->npaused++;
    c->sh->pause_seen = pause_epoch();
}

void conn_resume_postponed(shard *sh) {
    sh->pause_seen = pause_epoch();
    for (conn *c = sh->conns; c && sh->npaused; c = c->all_next) {
        if (!c->postponed) continue;
        c->postponed = 0;
        sh->npaused--;
        shard_add_pending(sh, c); /* its command is dispatched again: it may be postponed again */
    }
}

void shard_add_pending(shard *sh, conn *c) {
    if (c->in_pending || c->closed) return;
    c->in_pending = 1;
    c->pend_next = NULL;
    if (sh->pending_tail) sh->pending_tail->pend_next = c;
    else sh->pending_head = c;
    sh->pending_tail = c;
}

static int conn_movable(const conn *c);

/* A shard locked to another's lease runs its pending connections once
 * (each may hand its next commands off, tx.h); those that wait for the
 * unlock stay pending, and are not looked at again until it comes. */
static void run_pending_locked(shard *sh) {
    int to = tx_hand_off_to(sh);
    if (to < 0) return;
    /* toward the shard with more connections (the lower one on a tie):
     * the holder changes now and then, and connections moving toward
     * whichever holds the lease would cross each other for ever */
    int here = __atomic_load_n(&sh->nconns, __ATOMIC_RELAXED), there = __atomic_load_n(&shards[to]->nconns, __ATOMIC_RELAXED);
    int toward = there > here || (there == here && to < sh->id);
    conn *c = sh->pending_head;
    sh->pending_head = sh->pending_tail = NULL;
    while (c) {
        conn *next = c->pend_next;
        c->in_pending = 0;
        if (c->closed) {
            conn_release_if_done(c);
        } else if (c->handoff_stuck) {
            shard_add_pending(sh, c);
        } else if (c->handoffs >= CONN_MOVE_AFTER && toward && conn_movable(c)) { /* to the holder, once written */
            c->move_to = to + 1;
            c->move_next = sh->moving;
            sh->moving = c;
        } else {
            conn_process(c);
        }
        c = next;
    }
}

/* Nothing of it is tied to its shard but the lists and the epoll. */
static int conn_movable(const conn *c) {
    return !c->closed && !c->inflight && !c->waiting && !c->txs && !c->sq_head && !c->held && !c->blocked &&
           !c->rerun && !c->postponed && !c->tx_stalled && !c->epout && !c->ssl && !c->repl && !c->repl_master &&
           !c->s.multi && !c->s.watch && !c->s.pubsub && !c->s.tracking && !c->unblock_req &&
           !__atomic_load_n(&c->s.killed, __ATOMIC_RELAXED) &&
           !(c->s.flags & (SESS_CLOSE_AFTER_REPLY | SESS_CLOSE_ASAP | SESS_REPLICA)) && !cfg_get(maxmemory_clients);
}

void conn_moves_out(shard *sh) {
    conn *c = sh->moving;
    sh->moving = NULL;
    while (c) {
        conn *next = c->move_next;
        int to = c->move_to - 1;
        c->move_to = 0;
        c->handoffs = 0;
        if (!conn_movable(c) || c->in_write || c->in_pending || c->out.len != c->out_pos || to == sh->id) {
            if (c->closed) conn_release_if_done(c);
            else shard_add_pending(sh, c);
            c = next;
            continue;
        }
        epoll_ctl(sh->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        conns_unlink(sh, c);
        sh->stat_conns_moved++;
        msg *m = msg_new(SM_CONN_MOVE, sh->id);
        m->moved = c;
        shard_send(sh, to, m);
        c = next;
    }
}

void conn_move_in(shard *sh, conn *c) {
    c->sh = sh;
    c->s.sh = sh;
    conns_link(sh, c);
    tracking_conn_moved(&c->s);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(sh->epfd, EPOLL_CTL_ADD, c->fd, &ev);
    shard_add_pending(sh, c); /* what it sent meanwhile */
}

int shard_pending_movable(const shard *sh) {
    if (!sh->locked_n || (__atomic_load_n(&shards_busy, __ATOMIC_RELAXED) >> sh->id & 1)) return sh->pending_head != NULL;
    if (tx_hand_off_to(sh) < 0) return 0;
    for (const conn *c = sh->pending_head; c; c = c->pend_next)
        if (!c->handoff_stuck) return 1;
    return 0;
}

void shard_run_pending(shard *sh) {
    if (sh->locked_n && !(__atomic_load_n(&shards_busy, __ATOMIC_RELAXED) >> sh->id & 1)) {
        run_pending_locked(sh);
        return;
    }
    while (sh->pending_head && (!sh->locked_n || (__atomic_load_n(&shards_busy, __ATOMIC_RELAXED) >> sh->id & 1))) {
        conn *c = sh->pending_head;
        sh->pending_head = c->pend_next;
        if (!sh->pending_head) sh->pending_tail = NULL;
        c->in_pending = 0;
        if (c->closed) {
            conn_release_if_done(c);
            continue;
        }
        conn_process(c);
    }
}

/* The pipeline's lookahead (shard/prefetch.h): hints for the commands up
 * to PREFETCH_AHEAD past the one about to run (command `i` of this call),
 * read from the buffer past what is parsed. */
typedef struct conn_ahead {
    prefetch_ring r;
    size_t at;     /* where in qbuf the next command to look at starts */
    int on;        /* 0 once it stopped */
    uint32_t seen; /* commands looked at */
    uint32_t qgen; /* the query buffer's qgen when they were */
    /* each command's second argument (NULL: none) and the shard that owns
     * it as a key: dispatch takes it from here (session.hint_key) */
    const char *key[PREFETCH_AHEAD];
    size_t klen[PREFETCH_AHEAD];
    int owner[PREFETCH_AHEAD];
} conn_ahead;

static void conn_look_ahead(conn *c, conn_ahead *a, uint32_t i) {
    while (a->on && a->seen < i + PREFETCH_AHEAD) {
        const char *key;
        size_t klen, used;
        if (a->at >= c->qbuf.len || !resp_peek(c->qbuf.p + a->at, c->qbuf.len - a->at, &used, &key, &klen)) {
            a->on = 0;
            break;
        }
        a->at += used;
        uint32_t k = a->seen % PREFETCH_AHEAD;
        a->key[k] = key;
        if (key) {
            a->klen[k] = klen;
            a->owner[k] = shard_of_key(key, klen);
            prefetch_key(&a->r, a->seen, c->sh, (uint32_t)c->s.db, key, klen, a->owner[k]);
        } else {
            prefetch_none(&a->r, a->seen);
        }
        a->seen++;
    }
    if (a->seen > i + PREFETCH_AHEAD / 2) prefetch_entry(&a->r, i + PREFETCH_AHEAD / 2, c->sh);
}

void conn_process(conn *c) {
    shard *sh = c->sh;
    if (__atomic_load_n(&c->s.killed, __ATOMIC_RELAXED)) {
        conn_close(c);
        return;
    }
    /* the lookahead, for a pipeline (more than a command or two in); none
     * while the shard is locked (its tables are the holder's then) */
    conn_ahead ahead = {.at = c->rp.start, .on = c->qbuf.len > c->rp.start + 256, .qgen = c->qgen};
    uint32_t ran = 0;
    while (!c->closed && !conn_waits(c) && !c->tx_stalled && !c->held && !c->blocked && !c->postponed &&
           !(c->s.flags & SESS_CLOSE_AFTER_REPLY)) {
        int handing = 0;
        if (sh->locked_n && !(__atomic_load_n(&shards_busy, __ATOMIC_RELAXED) & (1ull << sh->id))) {
            if (c->rerun || c->handoff_stuck || tx_hand_off_to(sh) < 0) {
                shard_add_pending(sh, c); /* (a busy shard answers, mostly BUSY) */
                break;
            }
            handing = 1; /* only what may be handed off runs (tx.h) */
        } else {
            c->handoff_stuck = 0;
        }
        if (c->rerun) { /* a blocked command handed back by the serving shard */
            struct blocked *b = c->rerun;
            c->rerun = NULL;
            c->rerunning = 1; /* a command already under way: never postponed */
            block_rerun(&c->s, b);
            c->rerunning = 0;
            continue;
        }
        if ((ahead.on || ahead.seen > ran) && !sh->locked_n) conn_look_ahead(c, &ahead, ran);
        ran++;
        c->rp.unauth = !c->s.authed && c->s.user;
        int r = resp_parse(&c->rp, &c->qbuf);
        if (r == RESP_MORE) break;
        if (r == RESP_EMPTY) {
            if (__builtin_expect(c->repl_master, 0)) master_count(c);
            resp_next(&c->rp);
            continue;
        }
        if (r == RESP_ERROR) {
            char msg[128];
            snprintf(msg, sizeof msg, "ERR %s", c->rp.err);
            resp_error(session_reply_buf(&c->s), msg);
            cmdstats_error(c->s.sh, msg);
            log_msg(LOG_VERBOSE, "Protocol error (%s) from client: id=%llu addr=%s", c->rp.err,
                    (unsigned long long)c->s.id, c->addr);
            c->s.flags |= SESS_CLOSE_AFTER_REPLY;
            break;
        }
        int argc = c->rp.argc;
        if (argc > c->argc_peak) c->argc_peak = argc;
        if (argc > c->argcap) {
            c->argcap = argc;
            c->argv = zrealloc(c->argv, sizeof(char *) * (size_t)argc);
            c->argl = zrealloc(c->argl, sizeof(size_t) * (size_t)argc);
        }
        resp_args(&c->rp, &c->qbuf, c->argv, c->argl);
        if (__builtin_expect(c->repl_master, 0) && conn_master_cmd_hook(c, argc, c->argv, c->argl)) {
            master_count(c); /* answered by the link itself (REPLCONF GETACK) */
            resp_next(&c->rp);
            continue;
        }
        if (handing && (c->repl_master || !dispatch_may_hand_off(&c->s, argc, c->argv, c->argl))) {
            resp_rewind(&c->rp); /* parsed again after the unlock */
            c->handoff_stuck = 1;
            shard_add_pending(sh, c);
            break;
        }
        c->cur_argc = argc;
        /* the key's shard as the lookahead worked it out: when the peeked
         * bytes are this command's second argument, unmoved since */
        uint32_t k = (ran - 1) % PREFETCH_AHEAD;
        if (ahead.seen >= ran && ahead.qgen == c->qgen && argc > 1 && ahead.key[k] == c->argv[1] &&
            ahead.klen[k] == c->argl[1]) {
            c->s.hint_key = c->argv[1];
            c->s.hint_owner = ahead.owner[k];
        }
        int later = dispatch_command(&c->s, argc, c->argv, c->argl) == DISPATCH_LATER;
        c->s.hint_key = NULL;
        c->cur_argc = 0;
        if (later) {
            resp_rewind(&c->rp); /* parsed again when it may run */
            break;
        }
        c->cmds++;
        if (__builtin_expect(c->repl_master, 0)) master_count(c);
        resp_next(&c->rp);
        if (__builtin_expect(cfg_get(maxmemory_clients) != 0, 0) && !c->closed) {
            /* Redis evicts clients before each command: what this one's
             * replies added counts now, and when the server is over the
             * limit its next command waits for the eviction (the pending
             * list brings it back after the shard's next safe point) */
            cevict_update(c);
            if (sh->ce_check) {
                shard_add_pending(sh, c);
                break;
            }
        }
    }
    if (c->rp.start > 0 && (!c->waiting || c->chain_n)) { /* (a chain's transactions keep copies) */
        size_t n = c->rp.start;
        buf_consume(&c->qbuf, n);
        c->qgen++;
        resp_shift(&c->rp, n);
    }
    /* A big argument's header is in: room for exactly the rest of it now,
     * as Redis sizes its query buffer when it parses the header (not to
     * the next power of two at the next read). */
    if (c->rp.bulk >= CONN_BIG_ARG && c->qbuf.len >= c->rp.cur) {
        size_t have = c->qbuf.len - c->rp.cur, need = (size_t)c->rp.bulk + 2;
        if (need > have && c->qbuf.cap - c->qbuf.len < need - have) {
            buf_grow_exact(&c->qbuf, need - have);
            c->qgen++;
        }
    }
    cevict_update(c); /* its buffers, replies, MULTI queue... may have grown */
}

/* What follows a read of n bytes into qbuf (read(2) or tls_read). */
static inline __attribute__((always_inline)) void read_done(conn *c, ssize_t n) {
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        conn_close(c);
        return;
    }
    c->qbuf.len += (size_t)n;
    c->repl_read += (uint64_t)n; /* (meaningful on the master link only) */
    if (c->qbuf.len > c->qbuf_peak) c->qbuf_peak = c->qbuf.len;
    c->sh->stat_net_in += (uint64_t)n;
    if (c->last_io_ms != c->sh->now_ms) {
        c->last_io_ms = c->sh->now_ms;
        c->sh->readers_now++;
    }
    if ((int64_t)c->qbuf.len > cfg_get(client_query_buffer_limit)) {
        log_msg(LOG_WARNING, "Closing client that reached max query buffer length: id=%llu addr=%s qbuf=%zu",
                (unsigned long long)c->s.id, c->addr, c->qbuf.len);
        conn_close(c);
        return;
    }
    if (conn_waits(c) || c->tx_stalled || c->held || c->blocked || c->in_pending) {
        cevict_update(c); /* the query buffer grew */
        return;
    }
    conn_process(c);
}

/* TLS connections read here, out of the plain path's way. */
static __attribute__((noinline, cold)) void read_tls(conn *c) { read_done(c, tls_read(c, &c->qbuf)); }

/* A connection with nothing buffered and a query buffer under the 16 KB
 * a read asks for reads into its thread's scratch, and its buffer keeps
 * only what came. So the 10,000 quiet subscribers of a fan-out (whose
 * buffers went back after 2 s idle, conn_shrink_idle) hold a few bytes each
 * when they send UNSUBSCRIBE, not 16 KB each that the allocator keeps
 * afterwards. A read that brings 1 KB or more sizes the buffer for a whole
 * read: a pipelining client reads straight into it from then on. */
static __thread char rscratch[CONN_READ_LEN];

static void read_small(conn *c) {
    ssize_t n = read(c->fd, rscratch, sizeof rscratch);
    if (n > 0) {
        size_t want = (size_t)n >= 1024 ? sizeof rscratch : (size_t)n;
        if (c->qbuf.cap < want) buf_grow_exact(&c->qbuf, want);
        memcpy(c->qbuf.p, rscratch, (size_t)n);
        c->qgen++;
    }
    read_done(c, n);
}

void conn_on_readable(conn *c) {
    size_t want = CONN_READ_LEN;
    if (c->rp.bulk > 0 && (size_t)c->rp.bulk + 2 > want) {
        size_t have = c->qbuf.len - c->rp.cur;
        if ((size_t)c->rp.bulk + 2 > have) want = (size_t)c->rp.bulk + 2 - have;
    }
    if (!c->qbuf.len && c->qbuf.cap < want && want == CONN_READ_LEN && !c->ssl) {
        read_small(c);
        return;
    }
    buf_reserve(&c->qbuf, want);
    c->qgen++;
    if (__builtin_expect(c->ssl != NULL, 0)) {
        read_tls(c);
        return;
    }
    read_done(c, read(c->fd, c->qbuf.p + c->qbuf.len, c->qbuf.cap - c->qbuf.len));
}

void conn_set_epout(conn *c, int on) {
    if (c->epout == on || c->closed) return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(c->sh->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->epout = on;
}

static void write_out(conn *c) {
    if (c->out.len - c->out_pos > c->rbuf_peak) c->rbuf_peak = c->out.len - c->out_pos;
    while (c->out.len > c->out_pos) {
        ssize_t n = __builtin_expect(c->ssl != NULL, 0) ? tls_write(c, c->out.p + c->out_pos, c->out.len - c->out_pos)
                                                        : write(c->fd, c->out.p + c->out_pos, c->out.len - c->out_pos);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) break;
            conn_close(c);
            return;
        }
        c->sh->stat_net_out += (uint64_t)n;
        c->out_pos += (size_t)n;
        c->last_out_ms = c->sh->now_ms;
    }
    if (c->out_pos == c->out.len) {
        c->out.len = c->out_pos = 0;
        rbuf_trim(c);
        conn_set_epout(c, c->tls_want_out);
        if ((c->s.flags & SESS_CLOSE_AFTER_REPLY) && !c->sq_head) conn_close(c);
    } else {
        int64_t hard = cfg.obuf_limits[0][0];
        if (hard > 0 && (int64_t)(c->out.len - c->out_pos) > hard) {
            log_msg(LOG_WARNING, "Client id=%llu addr=%s scheduled to be closed for overcoming of output buffer limits.",
                    (unsigned long long)c->s.id, c->addr);
            conn_close(c);
            return;
        }
        conn_set_epout(c, 1);
    }
}

void conn_shrink_idle(conn *c, int64_t now) {
    /* (the reply buffer keeps at most rbuf_keep: conn_cron, rbuf_trim) */
    if (c->qbuf.cap && !c->qbuf.len && !c->in_pending && now - c->last_io_ms >= 2000) {
        buf_free(&c->qbuf);
        c->qgen++;
    }
    /* an empty reply buffer of a connection idle both ways (a subscriber
     * whose channels went quiet): its next reply allocates rbuf_keep again */
    if (c->out.cap && !c->out.len && !c->sq_head && now - c->last_io_ms >= 2000 && now - c->last_out_ms >= 2000)
        buf_free(&c->out);
    /* Buffers grown by one big command shrink back once the last tick saw
     * no more than half of them used (Redis's clientsCron rule). The
     * argument arrays point into the query buffer: nothing may be in
     * flight on them. */
    int quiet = !c->in_pending && !c->waiting && !c->held && !c->blocked && !c->tx_stalled && !c->postponed;
    if (quiet && c->qbuf.cap > 32 * 1024 && c->qbuf_peak < c->qbuf.cap / 2) {
        size_t want = c->qbuf_peak > c->qbuf.len ? c->qbuf_peak : c->qbuf.len;
        c->qgen++;
        if (want == 0) {
            buf_free(&c->qbuf);
        } else {
            c->qbuf.p = zrealloc(c->qbuf.p, want);
            c->qbuf.cap = want;
        }
    }
    /* (an idle connection keeps none: the subscribers of a big fan-out
     * that went quiet hold no per-command memory) */
    int idle = !c->qbuf.cap && now - c->last_io_ms >= 2000;
    if (quiet && c->argcap && (idle || (c->argcap > 1024 && c->argc_peak < c->argcap / 2))) {
        zfree(c->argv);
        zfree(c->argl);
        c->argv = NULL;
        c->argl = NULL;
        c->argcap = 0;
        resp_parser_trim(&c->rp, idle ? 0 : 1024);
    }
    c->qbuf_peak = c->qbuf.len;
    c->argc_peak = 0;
}

/* The write waits for conn_write_all at the end of the turn, after the
 * AOF write of the replies produced meanwhile. */
void conn_on_writable(conn *c) {
    if (c->ssl && tls_wants_write(c)) { /* the handshake or a read waited for this */
        conn_on_readable(c);
        if (c->closed) return;
    }
    schedule_write(c);
}

void conn_write_now(conn *c) {
    conn_slots_flush(c);
    if (!c->closed && c->out.len > c->out_pos) write_out(c);
}

void conn_write_all(shard *sh) {
    if (aof_holding(sh)) return; /* AOF: under appendfsync always, no reply before its log is on disk */
    while (sh->write_head) {
        conn *c = sh->write_head;
        sh->write_head = c->write_next;
        c->in_write = 0;
        /* in the middle of a pipeline that waits for one of its commands
         * (a transaction): the replies go out with the next ones, as Redis
         * writes a pipeline's replies once (the command's end schedules
         * the write again) */
        if (c->waiting && c->qbuf.len > c->rp.start && c->out.len - c->out_pos < CONN_RBUF_CHUNK) continue;
        /* replies of a pipeline wait for its commands out on other shards
         * (in a batch or a split transaction: neither blocks), so the
         * pipeline's replies go in one write, not one before the remote
         * replies and one after (the answer's arrival schedules it again) */
        if ((c->batch_out || c->txs) && !c->closed && c->out.len - c->out_pos < CONN_RBUF_CHUNK) continue;
        if (!c->closed) {
            write_out(c);
            cevict_update(c); /* what the socket did not take still counts */
        }
        conn_release_if_done(c);
    }
}

void conn_serve_busy(shard *sh, conn *skip) {
    conn *list = sh->pending_head; /* commands queued before: BUSY now */
    sh->pending_head = sh->pending_tail = NULL;
    while (list) {
        conn *c = list;
        list = c->pend_next;
        c->in_pending = 0;
        if (c == skip || c->rerun) shard_add_pending(sh, c); /* a blocked command to run again: after */
        else if (c->closed) conn_release_if_done(c);
        else conn_process(c);
    }
    if (aof_active() && aof_before_send_outer(sh)) return; /* their log first */
    conn *w = sh->write_head;
    sh->write_head = NULL;
    while (w) {
        conn *c = w;
        w = c->write_next;
        c->in_write = 0;
        if (c == skip) {
            schedule_write(c);
            continue;
        }
        if (!c->closed) write_out(c);
        conn_release_if_done(c);
    }
}

/* CLIENT LIST's flags, in Redis's order; "N" when none. */
static void conn_flags(conn *c, char *f) {
    char *p = f;
    if (c->repl_master) *p++ = 'M';
    if (pubsub_count(&c->s, PS_MONITOR)) *p++ = 'O';
    else if (c->s.flags & SESS_REPLICA) *p++ = 'S';
    if (pubsub_total(&c->s)) *p++ = 'P';
    if (c->s.multi) *p++ = 'x';
    if (c->blocked) *p++ = 'b';
    if (tracking_on(&c->s)) *p++ = 't';
    if (tracking_broken(&c->s)) *p++ = 'R';
    if (tracking_bcast(&c->s)) *p++ = 'B';
    if (c->is_unix) *p++ = 'U';
    if ((c->s.flags & SESS_NO_EVICT) && !(c->s.flags & SESS_REPLICA) && !c->repl_master) *p++ = 'e'; /* (replicas and the master are never evicted, and not flagged) */
    if (p == f) *p++ = 'N';
    *p = 0;
}

size_t conn_obuf_pending(const conn *c) {
    size_t n = c->out.len - c->out_pos;
    for (const slot *sl = c->sq_head; sl; sl = sl->next) n += sl->data.len;
    return n;
}

/* Per subscription, what Redis counts for one (a list node or a dict
 * entry and its bucket). */
#define CONN_SUB_MEM 32

size_t conn_mem(const conn *c) {
    size_t m = sizeof(conn) + c->qbuf.cap + (c->out.cap > c->rbuf_keep ? c->out.cap : c->rbuf_keep);
    /* reply slots only on the owner's thread: it frees them while another
     * thread's CLIENT LIST holds the shard */
    if (shard_self() == c->sh)
        for (const slot *sl = c->sq_head; sl; sl = sl->next) m += sizeof(slot) + sl->data.cap;
    m += c->s.multi_mem + c->s.watch_mem + tracking_mem(&c->s);
    m += pubsub_total(&c->s) * CONN_SUB_MEM;
    return m;
}

void conn_describe(conn *c, buf *o, int64_t now) {
    conn_describe_args(c, o, now, c->cur_argc, c->argl);
}

void conn_describe_args(conn *c, buf *o, int64_t now, int nargs, const size_t *argl) {
    char flags[16];
    conn_flags(c, flags);
    size_t qbuf = c->qbuf.len, argv_mem = 0, argc = 0;
    if (nargs > 0) { /* describing itself: its command's arguments */
        argc = (size_t)nargs;
        for (size_t i = 0; i < argc; i++) argv_mem += argl[i];
    } else if (c->rp.bulk >= CONN_BIG_ARG && c->qbuf.len >= c->rp.cur && c->qbuf.len - c->rp.cur <= (size_t)c->rp.bulk + 2) {
        qbuf = c->qbuf.len - c->rp.cur;
        argc = (size_t)c->rp.argc;
        for (size_t i = 0; i < argc; i++) argv_mem += c->rp.len[i];
    }
    size_t tot = conn_mem(c) + argv_mem + argc * sizeof(char *);
    buf_printf(o,
               "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%zu psub=%zu "
               "ssub=%zu multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%zu rbp=%zu obl=%zu "
               "oll=0 omem=0 tot-mem=%zu events=r cmd=%s user=%s redir=%lld resp=%d\n",
               (unsigned long long)c->s.id, c->addr, c->laddr, c->fd, c->s.name ? c->s.name : "",
               (long long)((now - c->s.ctime_ms) / 1000), (long long)((now - c->last_io_ms) / 1000), flags, c->s.db,
               pubsub_count(&c->s, PS_CHANNEL), pubsub_count(&c->s, PS_PATTERN), pubsub_count(&c->s, PS_SHARD),
               qbuf, c->qbuf.cap - c->qbuf.len, argv_mem, c->s.multi_mem + c->s.watch_mem,
               c->rbuf_keep, c->rbuf_peak, c->out.len - c->out_pos, tot, c->s.lastcmd,
               conn_user_name_hook ? conn_user_name_hook(&c->s) : "default", tracking_getredir(&c->s), c->s.resp);
}
