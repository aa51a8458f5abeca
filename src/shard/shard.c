/* shard.c - shard threads: the event loop, the inbox, batches, cron.
 *
 * One loop turn:
 *   epoll_wait -> accept / read+run commands -> drain inbox (run batches,
 *   lock requests, results) -> cron when due -> send outboxes -> write
 *   replies -> sleep (announcing it, so peers ring the doorbell only then). */
#include "shard/shard.h"
#include "shard/pause.h"
#include "cmd/dispatch.h"
#include "cmd/persist.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "net/conn.h"
#include "net/tls.h"
#include "persist/aof.h"
#include "server/config.h"
#include "persist/snapshot.h"
#include "shard/block.h"
#include "shard/client_evict.h"
#include "shard/cmdstats.h"
#include "shard/evict.h"
#include "shard/latency.h"
#include "shard/lazyfree.h"
#include "shard/msg.h"
#include "shard/prefetch.h"
#include "shard/pubsub.h"
#include "shard/tracking.h"
#include "shard/tx.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

shard *shards[MAX_SHARDS];
int nshards;
int shards_running;
uint64_t shard_mod_m;
static _Thread_local shard *self;
#define TAG_LISTENER 1
#define TAG_WAKE 2

/* Listener slots; a slot of a closed listener holds -1 and is reused.
 * Slots change only under CONFIG SET (every shard held) or before start. */
static int listeners[MAX_LISTENERS], nlisteners;
static int listener_unix[MAX_LISTENERS];
static int listener_tls[MAX_LISTENERS]; /* tls-port: connections start a TLS handshake (net/tls.c) */
/* Accepted TCP sockets inherit TCP_NODELAY and the keepalive settings of
 * their listener (Linux clones the listening socket), so they are set once
 * there; an accept only sets keepalive again when tcp-keepalive changed
 * since. listener_laddr: "ip:port" when the listener is bound to one IPv4
 * address, which is then every connection's local address. */
static int listener_keepalive = -1;
static char listener_laddr[MAX_LISTENERS][64];
static int listener_owner[MAX_LISTENERS]; /* the one shard that accepts from it, or -1: every shard */
static volatile int stopping;

shard *shard_self(void) { return self; }

uint64_t shard_rand(shard *s) {
    uint64_t x = s->rnd;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->rnd = x;
    /* xorshift64*, with the product's high half folded into its low one.
     * The low bits of a product depend only on the low bits of x, and the
     * low bits of the next x only on a few more of them: a bucket index
     * (low bits) fixed the position drawn right after it, so SPOP emptied
     * each bucket down to "its" position and then found nothing, 100,000
     * tries per call. The high half depends on every bit of x. */
    uint64_t z = x * 0x2545f4914f6cdd1dull;
    return z ^ (z >> 32);
}

int shard_create_all(int n) {
    if (n < 1 || n > MAX_SHARDS) return -1;
    nshards = n;
    shard_mod_m = ~0ull / (uint64_t)n + 1;
    int ndb = (int)cfg.databases_i;
    for (int i = 0; i < n; i++) {
        shard *s = zcalloc(sizeof *s);
        s->id = i;
        s->dbs = zcalloc(sizeof(db) * (size_t)ndb);
        for (int d = 0; d < ndb; d++) db_init(&s->dbs[d], s, d);
        s->rnd = 0x9e3779b97f4a7c15ull ^ ((uint64_t)(i + 1) * 0xbf58476d1ce4e5b9ull) ^ (uint64_t)ustime();
        s->epfd = -1;
        s->wakefd = -1;
        pthread_mutex_init(&s->conns_lock, NULL);
        s->now_ms = mstime();
        shards[i] = s;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) shards[i]->inbox[j] = ring_create(4096);
    self = shards[0]; /* the embedded engine runs on the caller's thread */
    return 0;
}

/* secs 0: keepalive off; else on, probing after secs idle as Redis does. */
static void set_keepalive(int fd, int secs) {
    int on = secs > 0;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    if (!on) return;
    int intvl = secs / 3 ? secs / 3 : 1, cnt = 3;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &secs, sizeof secs);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
}

static void listener_epoll(shard *s, int op, int li) {
    if (listener_owner[li] >= 0 && listener_owner[li] != s->id) return;
    struct epoll_event le = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.u64 = ((uint64_t)li << 3) | TAG_LISTENER};
    epoll_ctl(s->epfd, op, listeners[li], &le);
}

int shard_register_listener(int fd, int tls) { return shard_register_listener_on(fd, tls, -1); }

int shard_register_listener_on(int fd, int tls, int owner) {
    int li = 0;
    while (li < nlisteners && listeners[li] >= 0) li++;
    if (li == MAX_LISTENERS || owner >= nshards) return -1;
    listener_owner[li] = owner;
    listener_unix[li] = 0;
    listener_tls[li] = tls;
    listener_laddr[li][0] = 0;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_UNIX) listener_unix[li] = 1;
    if (!listener_unix[li]) {
        int one = 1, ka = (int)cfg_get(tcp_keepalive);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        set_keepalive(fd, ka);
        listener_keepalive = ka;
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        if (ss.ss_family == AF_INET && a->sin_addr.s_addr != htonl(INADDR_ANY)) {
            char ip[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
            snprintf(listener_laddr[li], sizeof listener_laddr[li], "%s:%d", ip, ntohs(a->sin_port));
        }
    }
    __atomic_store_n(&listeners[li], fd, __ATOMIC_RELEASE);
    if (li == nlisteners) nlisteners++;
    if (shards_running)
        for (int i = 0; i < nshards; i++) listener_epoll(shards[i], EPOLL_CTL_ADD, li);
    return 0;
}

void shard_unregister_listener(int fd) {
    for (int li = 0; li < nlisteners; li++) {
        if (listeners[li] != fd) continue;
        if (shards_running)
            for (int i = 0; i < nshards; i++) listener_epoll(shards[i], EPOLL_CTL_DEL, li);
        __atomic_store_n(&listeners[li], -1, __ATOMIC_RELEASE);
    }
}

/* ---- messaging ---- */

void shard_wake(shard *to) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&to->sleeping, __ATOMIC_RELAXED) && __atomic_exchange_n(&to->sleeping, 0, __ATOMIC_SEQ_CST)) {
        uint64_t one = 1;
        ssize_t w = write(to->wakefd, &one, 8);
        (void)w;
    }
}

void shard_send(shard *from, int to, msg *m) {
    outbox *ob = &from->out[to];
    if (ob->batch) { /* keep order: the open batch goes first */
        msg *b = ob->batch;
        ob->batch = NULL;
        b->next = NULL;
        if (ob->wait_tail) ob->wait_tail->next = b;
        else ob->wait_head = b;
        ob->wait_tail = b;
    }
    m->next = NULL;
    if (ob->wait_tail) ob->wait_tail->next = m;
    else ob->wait_head = m;
    ob->wait_tail = m;
    from->out_dirty = 1;
}

void shard_flush(shard *s) {
    pubsub_flush(s); /* this turn's Pub/Sub messages join the outboxes */
    if (aof_before_send(s) < 0) return; /* AOF: this shard's log is written before any message leaves */
    if (!s->out_dirty) return;
    int again = 0;
    for (int to = 0; to < nshards; to++) {
        outbox *ob = &s->out[to];
        if (ob->batch) {
            msg *b = ob->batch;
            ob->batch = NULL;
            b->next = NULL;
            if (ob->wait_tail) ob->wait_tail->next = b;
            else ob->wait_head = b;
            ob->wait_tail = b;
        }
        int sent = 0;
        while (ob->wait_head) {
            /* Once pushed, the message belongs to the receiver, which may
             * already have freed it: take the link first. */
            msg *m = ob->wait_head, *next = m->next;
            if (ring_push(shards[to]->inbox[s->id], m) < 0) {
                again = 1;
                break;
            }
            ob->wait_head = next;
            if (!next) ob->wait_tail = NULL;
            sent = 1;
        }
        if (sent) shard_wake(shards[to]);
    }
    s->out_dirty = again;
}

/* The replies a batch built so far count as clients' memory (client
 * eviction goes before key eviction, as in Redis, and these are replies
 * no connection holds yet) until batch_done hands them to their slots. */
static inline void count_replies(msg *m) {
    if (m->replies.cap == m->replies_counted) return;
    __atomic_add_fetch(&shard_replies_in_flight, (int64_t)m->replies.cap - (int64_t)m->replies_counted, __ATOMIC_RELAXED);
    m->replies_counted = m->replies.cap;
}

/* A remote batch's hint for item j (shard/prefetch.h): the key at the
 * command's first key position. The batch's keys are this shard's (its
 * sender routed them here), so no slot is worked out again. */
static void ahead_item(shard *s, const msg *m, uint32_t j, prefetch_ring *r) {
    prefetch_none(r, j);
    if (j >= m->nitems) return;
    const batch_item *it = &m->items[j];
    const command *cmd = it->cmd;
    if (cmd->keys || cmd->first <= 0 || (uint32_t)cmd->first >= it->argc) return;
    size_t klen;
    const char *key = msg_batch_arg(m, it, (uint32_t)cmd->first, &klen);
    prefetch_key_here(r, j, s, it->dbid, key, klen);
}

int shard_run_batch_items(shard *s, msg *m, int check) {
    const char *sargv[16];
    size_t sargl[16];
    cmd_ctx last_exec = {0};
    prefetch_ring pr;
    int ahead = m->nitems - m->done_items > 2 && !s->locked_n; /* (locked: its tables are the holder's) */
    if (ahead)
        for (uint32_t j = m->done_items; j < m->done_items + PREFETCH_AHEAD; j++)
            ahead_item(s, m, j, &pr);
    for (; m->done_items < m->nitems; m->done_items++) {
        batch_item *it = &m->items[m->done_items];
        if (ahead && !s->locked_n) {
            prefetch_entry(&pr, m->done_items + PREFETCH_AHEAD / 2, s);
            ahead_item(s, m, m->done_items + PREFETCH_AHEAD, &pr);
        }
        const char **argv = sargv;
        size_t *argl = sargl;
        if (it->argc > 16) {
            argv = zmalloc(sizeof(char *) * it->argc);
            argl = zmalloc(sizeof(size_t) * it->argc);
        }
        msg_batch_args(m, it, argv, argl);
        int wait = check && tx_must_wait(s, it->cmd, (int)it->argc, argv, argl, (int)it->dbid);
        if (!wait) {
            /* a held command of this shard's own connection runs in its session */
            session *sess = m->from == s->id && it->conn && !it->conn->closed ? &it->conn->s : NULL;
            it->reply = m->replies.len;
            cmd_ctx c = {.sh = s, .sess = sess, .cmd = it->cmd, .argc = (int)it->argc, .argv = argv, .argl = argl,
                         .dbid = it->dbid, .resp = it->resp, .out = &m->replies, .in_exec = it->in_exec,
                         .no_stats = it->no_stats, .client = it->client};
            if (__builtin_expect(cfg_get(maxmemory_clients) != 0, 0)) count_replies(m);
            if (__builtin_expect(it->whole_mask != 0, 0)) { /* handed off (tx.h) */
                it->declined = !tx_run_handed(s, m, it, argv, argl, &m->replies);
            } else {
                exec_command(&c);
                it->slow = (uint8_t)c.slow;
                it->slow_us = c.dur_ns / 1000;
            }
            it->reply_len = m->replies.len - it->reply;
            if (it->in_exec) last_exec = c;
        }
        if (argv != sargv) {
            zfree(argv);
            zfree(argl);
        }
        if (wait) return 0;
    }
    if (last_exec.sh && s->block_ready) { /* EXEC's commands ran: now the clients they made ready */
        last_exec.in_exec = 0;
        last_exec.argv = NULL;
        last_exec.argl = NULL;
        block_serve_ready(&last_exec);
    }
    return 1;
}

void shard_slowlog_item(shard *s, msg *m, batch_item *it, session *sess) {
    const char *sargv[16];
    size_t sargl[16];
    const char **argv = it->argc > 16 ? zmalloc(sizeof(char *) * it->argc) : sargv;
    size_t *argl = it->argc > 16 ? zmalloc(sizeof(size_t) * it->argc) : sargl;
    msg_batch_args(m, it, argv, argl);
    slowlog_push(s, (int)it->argc, argv, argl, it->slow_us, sess->conn ? sess->conn->addr : NULL, sess->name);
    if (argv != sargv) {
        zfree(argv);
        zfree(argl);
    }
}

static void batch_done(shard *s, msg *m) {
    int own = m->from == s->id; /* held commands of this shard's connections */
    if (m->replies_counted) __atomic_sub_fetch(&shard_replies_in_flight, (int64_t)m->replies_counted, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < m->nitems; i++) {
        batch_item *it = &m->items[i];
        conn *c = it->conn;
        if (it->slow && !c->closed) shard_slowlog_item(s, m, it, &c->s);
        const char *reply = m->replies.p + it->reply;
        if (!c->closed && !it->slot->discard) { /* (else nobody reads it) */
            if (it->slot == c->sq_head) { /* the next reply due: to the output at once, not copied twice */
                if (c->out.len == c->out_pos) c->out.len = c->out_pos = 0;
                buf_add(&c->out, reply, it->reply_len);
            } else {
                buf_add(&it->slot->data, reply, it->reply_len);
            }
        }
        it->slot->ready = 1;
        c->inflight--;
        c->batch_out--;
        if (own) c->held = 0;
        if (!c->closed) {
            conn_slots_flush(c);
            if (own) shard_add_pending(s, c);
        } else {
            conn_release_if_done(c);
        }
    }
    msg_free(m);
}

batch_item *shard_batch_add(msg *m, session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                            int discard) {
    batch_item *it = msg_batch_add(m, cmd, argc, argv, argl);
    it->conn = s->conn;
    it->slot = conn_pending_slot(s->conn);
    it->slot->discard = discard;
    it->dbid = (uint32_t)s->db;
    it->resp = (uint8_t)s->resp;
    it->client = tracking_word(s, cmd);
    s->conn->inflight++;
    s->conn->batch_out++;
    return it;
}

void shard_batch_reply(shard *s, msg *m) {
    if (m->from == s->id) {
        batch_done(s, m);
        return;
    }
    m->type = SM_BATCH_DONE;
    if (__builtin_expect(cfg_get(maxmemory_clients) != 0, 0)) count_replies(m);
    int to = m->from;
    m->from = (uint8_t)s->id;
    shard_send(s, to, m);
}

static void handle(shard *s, msg *m) {
    switch (m->type) {
    case SM_BATCH: tx_batch_arrived(s, m); break;
    case SM_BATCH_DONE: batch_done(s, m); break;
    case SM_UNBLOCK: block_on_message(s, m); break;
    case SM_PUBLISH: pubsub_on_message(s, m); break;
    case SM_CONN_MOVE:
        conn_move_in(s, m->moved);
        msg_free(m);
        break;
    default: tx_on_message(s, m); break;
    }
}

static int drain_deferred(shard *s) {
    int n = 0;
    while (s->busy_deferred) { /* what a busy poll left, in the order it arrived */
        msg *m = s->busy_deferred;
        s->busy_deferred = m->next;
        if (!s->busy_deferred) s->busy_deferred_tail = NULL;
        handle(s, m);
        n++;
    }
    return n;
}

static void close_killed(shard *s);

/* Between two events or messages: connections CLIENT KILL or another
 * shard's eviction marked close before anything later runs, and this
 * shard evicts clients when asked (maxmemory-clients). */
static inline void safe_point(shard *s) {
    if (__atomic_load_n(&s->kill_reqs, __ATOMIC_RELAXED) && __atomic_exchange_n(&s->kill_reqs, 0, __ATOMIC_ACQ_REL))
        close_killed(s);
    cevict_poll(s);
}

/* Lookahead over a ring's queued messages. A message, its items, its
 * arguments, its replies (and a transaction part's keys) were written by
 * the sending shard's CPU, so the first touch of each misses the cache,
 * and the misses came one after another: handle() reading the type, the
 * items, the arguments. When message k is handled, the lines of message
 * k + DRAIN_AHEAD are asked for, and the buffers of message
 * k + DRAIN_AHEAD / 2 (its lines came meanwhile), so several messages'
 * misses overlap. */
#define DRAIN_AHEAD 4

/* (always inlined: a function that only prefetches counts as one with no
 * effect, and GCC dropped the calls to its outlined copies) */
static inline __attribute__((always_inline)) void prefetch_lines(const void *p, int lines) {
    for (int i = 0; i < lines; i++) __builtin_prefetch((const char *)p + 64 * i);
}

/* The lines n bytes span, at most DRAIN_LINES (a long batch's later
 * items come with the batch's own lookahead, shard_run_batch_items). */
#define DRAIN_LINES 4
static inline int span_lines(size_t n) { return n >= DRAIN_LINES * 64 ? DRAIN_LINES : (int)((n + 63) / 64); }

static inline __attribute__((always_inline)) void drain_hint_head(const msg *m) {
    if (m) prefetch_lines(m, 3); /* a transaction part is three lines, a message two */
}

static inline __attribute__((always_inline)) void drain_hint_body(const msg *m) {
    if (!m) return;
    if (m->items) prefetch_lines(m->items, span_lines(m->nitems * sizeof(batch_item)));
    if (m->args.p) prefetch_lines(m->args.p, span_lines(m->args.len));
    if (m->replies.p) prefetch_lines(m->replies.p, span_lines(m->replies.len));
    if (m->type >= SM_SCHED && m->type <= SM_STEP_DONE) tx_part_hint(m);
}

int shard_drain_inbox(shard *s) {
    int n = drain_deferred(s);
    for (int from = 0; from < nshards; from++) {
        ring *r = s->inbox[from];
        if (!r) continue;
        msg *m;
        for (int i = 0; i < DRAIN_AHEAD; i++) drain_hint_head(ring_peek(r, (uint64_t)i));
        while ((m = ring_pop(r))) {
            drain_hint_head(ring_peek(r, DRAIN_AHEAD - 1));
            drain_hint_body(ring_peek(r, DRAIN_AHEAD / 2 - 1));
            safe_point(s);
            handle(s, m);
            safe_point(s);
            n++;
            /* a long command in that message (a script on its keys' shard)
             * set messages aside: they came before what the rings hold now */
            if (s->busy_deferred) n += drain_deferred(s);
        }
    }
    return n;
}

static int inbox_empty(shard *s) {
    for (int from = 0; from < nshards; from++)
        if (s->inbox[from] && !ring_empty(s->inbox[from])) return 0;
    return 1;
}

/* ---- cron ---- */

int shard_active_expire = 1;
int shard_cron_paused;

static void (*cron_hooks[SHARD_CRON_HOOKS])(shard *s);
int64_t shard_replies_in_flight;
void (*shard_replica_pump)(shard *s);
static int ncron_hooks;

void shard_add_cron_hook(void (*fn)(shard *s)) {
    if (ncron_hooks < SHARD_CRON_HOOKS) cron_hooks[ncron_hooks++] = fn;
}

void shard_purge_request(shard *s) {
    s->release_cmds = s->stat_commands; /* the idle check below keeps the request */
    s->release_state = 1;
}

/* Memory fell by an eighth and 1 MB from its top. */
static int fell_much(int64_t now, int64_t peak) { return now + (1 << 20) < peak && now < peak - peak / 8; }

void shard_cron(shard *s) {
    int64_t now = s->now_ms;
    int64_t used = mem_used_mine(), all = mem_used();
    if (used > s->release_peak) s->release_peak = used; /* the tops since the last release (below) */
    if (all > s->release_all_peak) s->release_all_peak = all;
    s->lru_clock = (uint32_t)(now / 1000) & LRU_CLOCK_MAX;
    if (__atomic_load_n(&shard_cron_paused, __ATOMIC_RELAXED)) return;
    /* instantaneous ops/sec: one sample per cron tick */
    if (s->ops_sample_time) {
        int64_t dt = now - s->ops_sample_time;
        if (dt > 0) {
            s->ops_samples[s->ops_idx++ % 16] = (s->stat_commands - s->ops_sample_cmds) * 1000 / (uint64_t)dt;
        }
    }
    s->ops_sample_time = now;
    s->ops_sample_cmds = s->stat_commands;
    if (s->locked_n) return;
    for (int i = 0; i < ncron_hooks; i++)
        cron_hooks[i](s);
    tracking_cron(s);
    persist_cron(s);
    evict_step(s); /* maxmemory: other shards' keys may have filled the memory */
    if (now >= s->next_block_sweep) {
        block_sweep(s);
        /* a shard that ran no command for a second gives its free pages
         * back, over two ticks (what the first frees is decommitted after
         * the allocator's delay), then again only when it freed another
         * 256 KB meanwhile (idle buffers go after 2 s) or ran commands. A
         * busy shard mostly reuses its pages, but the allocator's own
         * delayed decommit only runs inside its calls, which a shard
         * serving a few commands a second hardly makes: so a busy shard
         * gives pages back too once its memory fell by an eighth and 1 MB
         * from its top since the last time (buffers of a burst that went).
         * The whole process's figure counts too: what a shard frees of
         * another's memory (a connection accepted there, buffers moved
         * with a part) lowers the freeing shard's count, but the pages
         * are the owner's, and only the owner's release gives them back */
        int64_t mine = mem_used_mine();
        if (s->stat_commands != s->release_cmds)
            s->release_state = fell_much(mine, s->release_peak) || fell_much(all, s->release_all_peak);
        else if (s->release_state == 0 || mine + (256 << 10) < s->release_mine || all + (256 << 10) < s->release_all)
            s->release_state = 1;
        s->release_cmds = s->stat_commands;
        s->next_block_sweep = now + 1000;
    }
    if (s->release_state == 1 || s->release_state == 2) {
        if (s->release_state == 1) {
            tx_pool_trim(s);
            conn_slot_pool_trim();
        }
        mem_release();
        s->release_mine = s->release_peak = mem_used_mine();
        s->release_all = s->release_all_peak = mem_used();
        s->release_state++;
    }
    int ndb = (int)cfg.databases_i;
    /* At most 1 ms of keyspace work per tick at active-expire-effort 1;
     * each step of effort adds 0.1 ms, 50 keys per expiry round and one
     * point off the share of expired keys that calls for another round
     * (10 %), as Redis's effort raises its budget and lowers its
     * tolerated staleness. activerehashing no: tables grow and shrink
     * only by the steps that lookups and inserts take. */
    int effort = (int)cfg_get(active_expire_effort) - 1;
    int budget = 200 + 50 * effort, again = budget * (10 - effort) / 100;
    int64_t deadline = mono_us() + 1000 + 100 * effort;
    int rehash = cfg_get(activerehashing) != 0;
    int64_t expire_us = 0; /* for the latency monitor's "expire-cycle" */
    for (int d = 0; d < ndb; d++) {
        db *x = &s->dbs[d];
        if (table_size(x->t) == 0 && table_buckets(x->t) == 0) continue;
        while (rehash && table_rehash_step(x->t, 100) && mono_us() < deadline) {
        }
        table_maybe_shrink(x->t);
        if (x->expires && __atomic_load_n(&shard_active_expire, __ATOMIC_RELAXED) && pause_type(now) == PAUSE_OFF &&
            !__atomic_load_n(&db_keep_expired, __ATOMIC_RELAXED)) { /* a replica: its master expires keys */
            int rounds = 0;
            int64_t t0 = latency_clock();
            while (db_expire_cycle(x, budget, now) > again && ++rounds < 16 && mono_us() < deadline) {
            }
            if (t0) expire_us += mono_us() - t0;
        }
    }
    if (expire_us) latency_add_sample_if_needed("expire-cycle", expire_us / 1000);
    for (conn *c = s->conns; c;) {
        conn *next = c->all_next;
        if (__atomic_load_n(&c->s.killed, __ATOMIC_RELAXED)) {
            conn_close(c);
        } else {
            conn_cron(c, now);
            cevict_update(c); /* the cron resized its buffers */
        }
        c = next;
    }
    cevict_poll(s);
    int64_t tmo = cfg_get(timeout);
    if (tmo > 0) {
        for (conn *c = s->conns; c;) {
            conn *next = c->all_next;
            if (!c->waiting && !c->inflight && !(c->s.flags & SESS_REPLICA) && !c->repl_master &&
                now - c->last_io_ms > tmo * 1000) {
                log_msg(LOG_VERBOSE, "Closing idle client");
                conn_close(c);
            }
            c = next;
        }
    }
}

/* ---- accept ---- */

static void accept_on(shard *s, int li) {
    int lfd = __atomic_load_n(&listeners[li], __ATOMIC_ACQUIRE);
    if (lfd < 0) return; /* closed by CONFIG SET port/bind after the event */
    for (int k = 0; k < 16; k++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        s->stat_conns++;
        if (conn_count_live() >= cfg_get(maxclients)) {
            const char *e = "-ERR max number of clients reached\r\n";
            ssize_t w = listener_tls[li] ? 0 : write(fd, e, strlen(e)); /* TLS: no session to say it in, as Redis */
            (void)w;
            close(fd);
            s->stat_rejected++;
            continue;
        }
        int is_unix = listener_unix[li];
        if (!is_unix) {
            int ka = (int)cfg_get(tcp_keepalive);
            if (ka != listener_keepalive) set_keepalive(fd, ka);
        }
        conn *c = conn_create(s, fd, is_unix);
        if (is_unix) {
            snprintf(c->addr, sizeof c->addr, "%s:0", cfg.unixsocket_s);
            snprintf(c->laddr, sizeof c->laddr, "%s:0", cfg.unixsocket_s);
        } else {
            char ip[INET6_ADDRSTRLEN] = "?";
            int port = 0;
            if (ss.ss_family == AF_INET) {
                struct sockaddr_in *a = (struct sockaddr_in *)&ss;
                inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
                port = ntohs(a->sin_port);
            } else if (ss.ss_family == AF_INET6) {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
                inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
                port = ntohs(a->sin6_port);
            }
            snprintf(c->addr, sizeof c->addr, "%s:%d", ip, port);
            struct sockaddr_storage ls;
            socklen_t ll = sizeof ls;
            if (listener_laddr[li][0]) {
                memcpy(c->laddr, listener_laddr[li], sizeof listener_laddr[li]);
            } else if (getsockname(fd, (struct sockaddr *)&ls, &ll) == 0 && ls.ss_family == AF_INET) {
                struct sockaddr_in *a = (struct sockaddr_in *)&ls;
                inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
                snprintf(c->laddr, sizeof c->laddr, "%s:%d", ip, ntohs(a->sin_port));
            }
        }
        /* loopback as Redis 7.0 sees it: 127.0.0.1 or ::1 only (127.0.0.2 is outside) */
        int local = is_unix || (ss.ss_family == AF_INET && !strncmp(c->addr, "127.0.0.1:", 10)) ||
                    (ss.ss_family == AF_INET6 && !strncmp(c->addr, "::1:", 4));
        if (conn_admit(c, local) < 0) continue;
        if (listener_tls[li] && tls_conn_start(c) < 0) conn_close(c);
    }
}

/* ---- the loop ---- */


/* Wake-up coalescing. A shard blocked in epoll_wait is woken by the first
 * request any client sends, and the sending thread pays for that wake-up
 * inside its write (on a VM: an IPI to a halted vCPU, about 10 % of
 * redis-benchmark's CPU per request at -c 50). When many connections are
 * busy (NAP_READERS read in this or the last millisecond) but the last turn
 * served only a few events (the shard is ahead of its clients), the shard
 * first takes a short timer sleep, with no epoll waiter for senders to
 * wake: the clients' requests gather meanwhile, and the wait that follows
 * returns them at once. A nap that gathered fewer than NAP_YIELD events
 * costs more latency than it saves wake-ups, so the shard then skips the
 * next NAP_BACKOFF chances: at a moderate rate (20 connections at 1 request
 * per ms each) one turn in nine naps. With few connections the shard never
 * naps, since their round trips would carry the whole pause; after a large
 * turn it does not either, since the shard is then the busy side.
 * The nap: 20 µs asked, about 42 µs slept on this VM (10 µs asked: 30,
 * with 5 % more CPU per request from the extra sleeps).
 * One of 1 µs never leaves the CPU here: the timer fires while it is being
 * armed, and the shard pays the wait as kernel time (+20 % CPU per request
 * at -c 50). */
#define NAP_NS 20000
#define NAP_READERS 32
#define NAP_TURN_MAX 16
#define NAP_YIELD 4
#define NAP_BACKOFF 8
#define MAX_EVENTS 256

/* Connections read in this or the last millisecond, whichever is more. */
static int recent_readers(const shard *s) {
    return s->readers_now > s->readers_prev ? s->readers_now : s->readers_prev;
}

static int nap_wanted(shard *s) {
    if (s->turn_events <= 0 || s->turn_events >= NAP_TURN_MAX) return 0;
    if (nshards > 1 && !inbox_empty(s)) return 0;
    if (recent_readers(s) < NAP_READERS) return 0;
    if (s->nap_backoff > 0) {
        s->nap_backoff--;
        return 0;
    }
    return 1;
}

/* Busy polling, for the load the nap does not serve. A shard that read
 * from POLL_READERS or more connections in this or the last millisecond
 * but will not nap (fewer than NAP_READERS, a large turn, or the nap
 * backing off) polls for up to POLL_US before it sleeps, so that the next
 * request finds it awake and its sender pays no wake-up. That is the case
 * of long replies: at LRANGE_600's 20,000-25,000 requests a second the
 * shard idles two thirds of the time and slept 0.25-0.35 times per
 * request, against 0.1 with the poll. The poll checks epoll every
 * POLL_PAUSE_US, not back to back: each check takes the epoll lock that
 * the sender's wake-up callback takes too.
 * The spin is CPU the shard would otherwise idle, so only a shard pinned
 * to a CPU no other shard has (cpu-affinity) polls. Unpinned, it would
 * take the CPU from the threads it shares it with: shoal --threads 2 and
 * redis-benchmark unpinned on 2 CPUs ran GET at 0.5x with the poll. When a
 * pinned shard still shares its CPU, a gap of POLL_GAP_US inside the loop
 * shows that another thread ran for a time slice, and the shard stops
 * polling for POLL_OFF_MS. (Shorter gaps, about ten a second here, are
 * interrupts and kernel threads.) */
#define POLL_READERS 8
#define POLL_US 100
#define POLL_PAUSE_US 4
#define POLL_GAP_US 500
#define POLL_OFF_MS 100

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

static int poll_wanted(shard *s) {
    if (!s->polls || s->turn_events <= 0 || s->now_ms < s->poll_off_until) return 0;
    return recent_readers(s) >= POLL_READERS;
}

/* Events the poll found; 0 when it gave up or a peer's message came. */
static int poll_events(shard *s, struct epoll_event *evs) {
    int64_t t = mono_us(), until = t + POLL_US;
    for (;;) {
        int n = epoll_wait(s->epfd, evs, MAX_EVENTS, 0);
        if (n > 0) return n;
        if (nshards > 1 && !inbox_empty(s)) return 0;
        int64_t now = mono_us();
        if (now - t >= POLL_GAP_US) {
            s->poll_off_until = s->now_ms + POLL_OFF_MS;
            return 0;
        }
        if (now >= until) return 0;
        while (mono_us() - now < POLL_PAUSE_US) cpu_relax();
        t = now; /* the next gap spans this pause and the next check */
    }
}

/* Wait for events, after a nap or a poll when wanted. With peers the shard first
 * says it sleeps, so that a sender rings its doorbell (shard_send); a
 * message already in a ring cancels the sleep. */
static int wait_events(shard *s, struct epoll_event *evs, int timeout) {
    int napped = timeout != 0 && nap_wanted(s);
    if (napped) {
        struct timespec ts = {0, NAP_NS};
        nanosleep(&ts, NULL);
    } else if (timeout != 0 && poll_wanted(s)) {
        int n = poll_events(s, evs);
        if (n > 0) return n;
    }
    if (nshards > 1 && timeout > 0) {
        __atomic_store_n(&s->sleeping, 1, __ATOMIC_SEQ_CST);
        if (!inbox_empty(s)) timeout = 0;
    }
    int n = epoll_wait(s->epfd, evs, MAX_EVENTS, timeout);
    if (nshards > 1) __atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
    if (napped && n < NAP_YIELD) s->nap_backoff = NAP_BACKOFF;
    return n;
}

/* CLIENT KILL from any thread marks connections; the owner closes them. */
static void close_killed(shard *s) {
    for (conn *c = s->conns; c;) {
        conn *next = c->all_next;
        if (__atomic_load_n(&c->s.killed, __ATOMIC_RELAXED)) conn_close(c);
        c = next;
    }
}

/* Its key count for other threads (a hint: SCAN's routing). */
static inline void publish_keys(shard *s) {
    uint64_t n = 0;
    for (int d = 0; d < (int)cfg.databases_i; d++) n += db_size(&s->dbs[d]);
    if (n != s->pub_keys) __atomic_store_n(&s->pub_keys, n, __ATOMIC_RELAXED);
}

void shard_publish_counts(shard *s) {
    if (cfg_get(maxmemory) > 0) evict_publish(s); /* key counts, for other shards' share of an eviction */
    publish_keys(s);
}

static void *shard_main(void *arg) {
    shard *s = arg;
    self = s;
    mem_thread_init(s->id + 1);
    cmdstats_prepare(s);
    evict_prepare(s);
    char name[16];
    snprintf(name, sizeof name, "shard-%d", s->id);
    pthread_setname_np(pthread_self(), name);
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* the nap and the timeouts as asked, not 50 µs later */
    struct epoll_event evs[MAX_EVENTS];
    int64_t period = 1000 / cfg_get(hz);
    s->next_cron = mstime() + period;
    while (!stopping) {
        int timeout = 0;
        int walking = s->snap && !s->locked_n; /* a background save wants turns */
        if (!s->out_dirty && !s->write_head && !s->sched_dirty && !shard_pending_movable(s) && !s->busy_deferred &&
            !(walking && !snap_backlogged(s)) && !(s->ev_pending && !s->locked_n) && !s->repl_more) {
            int64_t now = mstime();
            int64_t left = s->next_cron - now;
            int64_t b = tx_lock_holds_timeouts(s) ? -1 : block_next_deadline(s); /* (timeouts wait for the unlock) */
            if (b >= 0 && b - now < left) left = b - now;
            int64_t l = tx_lease_deadline(s); /* a lease kept too long goes back then (tx_lease_turn) */
            if (l >= 0 && l - now < left) left = l - now;
            int64_t p = s->npaused ? pause_left(now) : -1; /* postponed clients run when the pause ends */
            if (p >= 0 && p < left) left = p;
            timeout = left < 0 ? 0 : (int)left;
            if (walking && timeout > 1) timeout = 1; /* the writer drains the queue meanwhile */
        }
        int n = wait_events(s, evs, timeout);
        int64_t was = s->now_ms;
        s->now_ms = mstime();
        if (s->now_ms != was) {
            s->readers_prev = s->now_ms == was + 1 ? s->readers_now : 0;
            s->readers_now = 0;
            /* every turn, not only at the cron: keys touched on different
             * shards in the same second get the same clock (INFO's
             * lru_clock shows this one) */
            s->lru_clock = (uint32_t)(s->now_ms / 1000) & LRU_CLOCK_MAX;
        }
        s->turn_events = n;
        s->pending_ran = 0;
        for (int i = 0; i < n; i++) {
            uint64_t tag = evs[i].data.u64;
            if ((tag & 7) == TAG_LISTENER) {
                accept_on(s, (int)(tag >> 3));
            } else if (tag == TAG_WAKE) {
                uint64_t v;
                ssize_t r = read(s->wakefd, &v, 8);
                (void)r;
            } else {
                conn *c = (conn *)evs[i].data.ptr;
                if (c->closed) continue;
                if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) conn_on_readable(c);
                if (!c->closed && (evs[i].events & EPOLLOUT)) conn_on_writable(c);
                cevict_poll(s); /* a client that grew past maxmemory-clients goes before the next event */
            }
        }
        cevict_sync(s); /* CONFIG SET changed the limit */
        safe_point(s);
        if (nshards > 1) shard_drain_inbox(s);
        if (__builtin_expect(__atomic_load_n(&shards_busy, __ATOMIC_ACQUIRE) >> s->id & 1, 0) && s->sq_waiting)
            tx_refuse_held(s, shards_busy_err); /* held behind a busy script: BUSY, as Redis answers */
        if (s->sched_dirty) tx_settle(s);
        if (!s->locked_n) { /* (a locked shard's blocked clients are the coordinator's to serve meanwhile) */
            if (s->block_head) block_check_timeouts(s, s->now_ms);
            if (s->unblock_reqs) block_serve_unblocks(s);
        }
        if (s->npaused && (pause_epoch() != s->pause_seen || pause_type(s->now_ms) == PAUSE_OFF))
            conn_resume_postponed(s);
        shard_run_pending(s); /* (a busy shard answers its clients, mostly BUSY; a locked one hands off, tx.h) */
        s->pending_ran = 1;
        tx_lease_turn(s);
        cevict_poll(s);
        if (s->now_ms >= s->next_cron) {
            shard_cron(s);
            s->next_cron = s->now_ms + period;
            period = 1000 / cfg_get(hz);
        }
        if (s->sched_dirty) tx_settle(s);
        if (!s->locked_n) shard_publish_counts(s); /* (a locked shard's tables are the coordinator's: FLUSHALL may be replacing them) */
        shard_flush(s);
        if (__atomic_load_n(&s->nreplicas, __ATOMIC_RELAXED)) shard_replica_pump(s);
        else s->repl_more = 0;
        conn_write_all(s);
        if (s->moving) conn_moves_out(s);
        cevict_poll(s);
        if (s->snap && !s->locked_n) snap_step(s); /* after the replies, which it would hold back a step */
        if (s->ev_pending && !s->locked_n) evict_step(s); /* maxmemory: an eviction that ran out of time */
        conn_free_closed(s);
    }
    return NULL;
}

int shard_start_all(void) {
    shards_running = 1;
    lazyfree_enable();
    const char *aff = cfg.cpu_affinity_s;
    int cpus[MAX_SHARDS], ncpus = 0;
    if (aff && *aff) {
        char *copy = strdup(aff), *save = NULL;
        for (char *t = strtok_r(copy, ", ", &save); t && ncpus < MAX_SHARDS; t = strtok_r(NULL, ", ", &save))
            cpus[ncpus++] = atoi(t);
        free(copy);
    }
    for (int i = 0; i < nshards; i++) {
        shard *s = shards[i];
        s->epfd = epoll_create1(EPOLL_CLOEXEC);
        s->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG_WAKE};
        epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->wakefd, &ev);
        for (int l = 0; l < nlisteners; l++)
            if (listeners[l] >= 0) listener_epoll(s, EPOLL_CTL_ADD, l);
    }
    for (int i = 0; i < nshards; i++) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        int cpu = ncpus > 0 ? cpus[i % ncpus] : -1, sharers = 0;
        for (int j = 0; j < nshards && cpu >= 0; j++) sharers += cpus[j % ncpus] == cpu;
        shards[i]->polls = sharers == 1; /* a CPU of its own (busy polling) */
        if (ncpus > 0) { /* pinned from its first instruction */
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpus[i % ncpus], &set);
            pthread_attr_setaffinity_np(&attr, sizeof set, &set);
        }
        int rc = pthread_create(&shards[i]->thread, &attr, shard_main, shards[i]);
        pthread_attr_destroy(&attr);
        if (rc != 0) return -1;
    }
    return 0;
}

uint64_t shards_busy;
char shards_busy_err[160];

int shard_busy_poll(shard *s, conn *skip) {
    struct epoll_event evs[64];
    int n = epoll_wait(s->epfd, evs, 64, 0);
    s->now_ms = mstime();
    for (int i = 0; i < n; i++) {
        uint64_t tag = evs[i].data.u64;
        if ((tag & 7) == TAG_LISTENER) {
            accept_on(s, (int)(tag >> 3));
        } else if (tag == TAG_WAKE) {
            uint64_t v;
            ssize_t r = read(s->wakefd, &v, 8);
            (void)r;
        } else {
            conn *c = (conn *)evs[i].data.ptr;
            if (c == skip || c->closed) continue;
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) conn_on_readable(c);
            if (!c->closed && (evs[i].events & EPOLLOUT)) conn_on_writable(c);
        }
    }
    if (s->sq_waiting) tx_refuse_held(s, shards_busy_err);

    /* replies of commands this shard's clients sent elsewhere before it
     * became busy, and of their blocked commands served elsewhere, go out;
     * everything else waits for the loop, in order */
    for (int from = 0; from < nshards; from++) {
        ring *r = s->inbox[from];
        msg *m;
        while (r && (m = ring_pop(r))) {
            int mine = 0; /* replies for the long command's own connection: its slots wait */
            for (uint32_t i = 0; m->type == SM_BATCH_DONE && i < m->nitems && skip; i++) mine |= m->items[i].conn == skip;
            if (m->type == SM_BATCH_DONE && !mine) {
                batch_done(s, m);
                continue;
            }
            if (m->type == SM_RECALL) { /* a lease the long command may not use: back at once */
                tx_on_message(s, m);
                continue;
            }
            if (m->type == SM_UNBLOCK) { /* (one that must run again at home waits: conn_serve_busy) */
                block_on_message(s, m);
                continue;
            }
            if (m->type == SM_BATCH) { /* sent before the sender saw this shard busy */
                for (; m->done_items < m->nitems; m->done_items++) {
                    batch_item *it = &m->items[m->done_items];
                    it->reply = m->replies.len;
                    resp_error(&m->replies, shards_busy_err);
                    it->reply_len = m->replies.len - it->reply;
                }
                shard_batch_reply(s, m);
                continue;
            }
            m->next = NULL;
            if (s->busy_deferred_tail) s->busy_deferred_tail->next = m;
            else s->busy_deferred = m;
            s->busy_deferred_tail = m;
        }
    }
    conn_serve_busy(s, skip); /* BUSY answers, and replies the turn had made before the command */
    /* commands this shard's clients sent elsewhere just before, and the
     * BUSY answers above, leave now (with the AOF on they wait: the log goes
     * first, and the long command's own block is not finished) */
    if (s->out_dirty && !aof_active()) shard_flush(s);
    return stopping;
}

void shard_stop_all(void) {
    stopping = 1;
    for (int i = 0; i < nshards; i++) {
        uint64_t one = 1;
        ssize_t w = write(shards[i]->wakefd, &one, 8);
        (void)w;
    }
    for (int i = 0; i < nshards; i++) pthread_join(shards[i]->thread, NULL);
}
