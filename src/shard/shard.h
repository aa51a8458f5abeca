/* shard.h - a shard: one thread that owns a slice of the keyspace (the keys
 * whose slot maps to it, in every database), the connections it accepted,
 * and an inbox of single-producer/single-consumer rings, one per peer.
 *
 * Shards talk only through messages (msg.h). A connection's commands on
 * local keys run inline; commands whose keys all live on one other shard go
 * there in a batch (one message per destination per loop turn); commands
 * spanning shards run as transactions (tx.h). */
#ifndef SHOAL_SHARD_H
#define SHOAL_SHARD_H
#include "shard/slowlog.h"
#include "lib/ring.h"
#include "lib/util.h"
#include "shard/db.h"
#include "shard/lock.h"
#include <pthread.h>
#include <stdint.h>

#define MAX_SHARDS 64
/* Client eviction's size buckets, as Redis's: up to 32 KB, then one per
 * power of two, the last for 4 GB and more (shard/client_evict.h). */
#define CEVICT_BUCKETS 19

struct msg;
struct tx;
struct tx_part;
struct conn;
struct snap_part;

typedef struct outbox {
    struct msg *batch;           /* batch being filled this loop turn */
    struct msg *wait_head, *wait_tail; /* messages the ring had no room for */
} outbox;

typedef struct shard {
    int id;
    pthread_t thread;
    int epfd, wakefd;
    int sleeping; /* atomic: set before epoll_wait, cleared by a waker */
    db *dbs;      /* [databases] */
    ring *inbox[MAX_SHARDS]; /* inbox[s]: from shard s */
    outbox out[MAX_SHARDS];
    int out_dirty;           /* some outbox has something to send */

    /* transaction parts queued here, in arrival order (shard/tx.c) */
    struct tx_part *sq_head, *sq_tail;
    int sq_waiting, sq_whole; /* parts not granted yet / locking the whole shard */
    int sq_waiting_by[MAX_SHARDS]; /* parts not granted yet, per coordinator (held batches: per sender) */
    uint64_t sq_max;          /* highest txid queued since the queue was last empty */
    int sched_dirty;          /* a part left: something may be granted */
    int pending_ran;          /* this loop turn ran its pending connections (tx.c: whole_waits) */
    int held_from[MAX_SHARDS]; /* held batches per sender */
    lock_tab locks;           /* the queued parts' key intents */
    int locked_n;             /* whole-shard parts granted here, all of one coordinator (tx.c) */
    int locked_coord;         /* that coordinator's shard, while locked_n */
    /* leases (tx.c): whole-shard grants a coordinator keeps between its
     * transactions, and the shards that offered them */
    struct tx_part *lease[MAX_SHARDS]; /* holder: the kept grant of each shard */
    int64_t lease_ms[MAX_SHARDS];      /* holder: when it was kept */
    uint8_t lease_refused[MAX_SHARDS]; /* holder: that shard recalled one it did not have yet */
    int nleases;
    int whole_out[MAX_SHARDS];         /* coordinator: its whole-shard parts sent to each shard, not released yet */
    uint64_t lease_busy, lease_drop_after; /* holder: used by the running transaction / to go when it ends */
    uint64_t lease_offered;  /* granter: coordinators granted a part it may keep, while locked */
    int recall_sent;         /* granter: RECALL went to them since the last offer */
    struct tx_part *part_pool; /* this shard's parts, kept with their buffers for reuse (tx.c) */
    int part_pool_n;
    struct tx_part *part_back; /* its parts that ended on other shards: a stack they push to (tx.c) */
    struct conn *pending_head, *pending_tail;  /* connections with unprocessed input */
    struct conn *write_head;                   /* connections with replies to write */
    struct conn *conns;                        /* every connection of this shard */
    pthread_mutex_t conns_lock; /* guards the conns list against readers on other threads */
    struct conn *grave;                        /* closed, freed at the end of the turn */
    struct conn *moving;                       /* to move to another shard once written (net/conn.h) */
    int nconns;
    int nreplicas; /* its connections that are replicas (repl/master.c; atomic) */
    uint64_t pub_keys; /* keys in all its databases as its last loop turn left them (atomic; SCAN's routing) */
    int repl_more; /* a replica has more to send right away: no sleep */

    uint64_t rnd;
    int64_t now_ms;      /* cached at each loop turn */
    int turn_events, nap_backoff; /* wake-up coalescing (shard.c) */
    int polls;                    /* pinned to a CPU of its own: may busy-poll (shard.c) */
    int64_t poll_off_until;       /* no busy polling before this ms */
    int readers_now, readers_prev; /* connections read in this and the previous millisecond */
    uint32_t lru_clock;

    /* statistics (owned by this thread; read under a lock or approximately) */
    uint64_t stat_commands, stat_conns, stat_rejected, stat_expired;
    uint64_t stat_hits, stat_misses, stat_net_in, stat_net_out;
    uint64_t stat_remote_batches, stat_tx, stat_evicted;
    uint64_t stat_tx_retries, stat_tx_parked; /* transactions scheduled again; chained ones granted before their turn */
    uint64_t stat_tx_leased; /* transactions run on leases alone (tx.c) */
    uint64_t stat_conns_moved; /* connections moved to another shard (net/conn.h) */
    uint64_t stat_tx_handed, stat_tx_adopted; /* commands handed off to a lease's holder, and those it coordinated instead (tx.c) */
    struct cmdstats *cstats; /* per-command and error statistics (cmdstats.h) */
    slowlog slowlog;         /* this shard's connections' slow commands (slowlog.h) */
    uint64_t dirty;       /* write commands so far (atomic stores; others read it) */
    uint64_t dirty_saved; /* dirty as of the last good save (INFO rdb_changes_since_last_save) */
    struct snap_part *snap; /* this shard's part of a running background save */
    uint64_t ops_samples[16], ops_sample_cmds;
    int64_t ops_sample_time;
    int ops_idx;
    int64_t next_cron;
    struct msg *busy_deferred, *busy_deferred_tail; /* inbox messages a busy poll put aside (shard_busy_poll) */

    /* maxmemory (shard/evict.c) */
    int64_t ev_others;    /* every other thread's memory, as last summed */
    int64_t ev_others_ms; /* now_ms of that sum */
    int64_t ev_mine_at;   /* its own counter then */
    int64_t ev_debt;      /* bytes it still evicts in this millisecond (evict.c) */
    uint64_t ev_keys, ev_volatile;     /* this shard's keys / keys with an expire, published at that time */
    uint64_t ev_all_keys, ev_all_volatile; /* every shard's published counts, summed at that time */
    int ev_pending;       /* an eviction ran out of time: the loop goes on with it */
    struct evict_pool *ev_pool;

    /* client eviction, maxmemory-clients (shard/client_evict.c) */
    int64_t ce_sum;       /* memory of this shard's clients (owner's atomic stores) */
    int64_t ce_dying;     /* atomic: of which chosen for eviction by another thread, not yet closed */
    int ce_top;           /* atomic: size bucket of its largest evictable client + 1; 0: none */
    int ce_check;         /* a client grew while the server may be over: evict at the next safe point */
    int ce_poke;          /* atomic: another shard asks this one to evict (it holds the largest clients) */
    uint64_t ce_epoch;    /* cevict_epoch when the sums were last rebuilt */
    int64_t ce_others;    /* the other shards' sums, as last read */
    int64_t ce_others_ms; /* now_ms of that read */
    struct conn *ce_head[CEVICT_BUCKETS], *ce_tail[CEVICT_BUCKETS]; /* evictable clients by size */
    uint64_t stat_evicted_clients;

    /* blocked clients (shard/block.c) */
    struct smap *block_waits;          /* key -> wait queue, for keys this shard owns */
    struct waitq *block_ready;         /* queues whose key just got a value, oldest first */
    struct waitq *block_ready_tail;    /* the last of them (valid while block_ready is set) */
    struct blocked *block_head;        /* this shard's blocked clients by deadline */
    int block_count;
    int npaused;         /* connections postponed by CLIENT PAUSE (shard/pause.h) */
    int unblock_reqs;    /* atomic: some connection has a CLIENT UNBLOCK request */
    int kill_reqs;       /* atomic: some connection was killed by CLIENT KILL */
    uint64_t pause_seen; /* pause_epoch() when they were postponed */
    int64_t next_block_sweep;
    uint64_t release_cmds; /* stat_commands at the last check for mem_release */
    int release_state;     /* 1, 2: give free pages back this tick; 3: given */
    int64_t release_mine;  /* mem_used_mine() after that */
    int64_t release_peak;  /* its highest mem_used_mine() since */
    int64_t release_all, release_all_peak; /* the same for mem_used(), the whole process */
} shard;

extern shard *shards[MAX_SHARDS];
/* MEMORY PURGE: s gives its free pages back at its next cron tick (its
 * heap is its own thread's). Under a hold of s or on its thread. */
void shard_purge_request(shard *s);
/* DEBUG's switches (any thread, relaxed atomics): the active expire cycle
 * runs while shard_active_expire is 1; the cron does nothing while
 * shard_cron_paused is 1. */
extern int shard_active_expire;
extern int shard_cron_paused;
extern int nshards;
extern int shards_running; /* shard threads were started (else: inline use) */
extern uint64_t shard_mod_m; /* ~0 / nshards + 1, for shard_of_slot */

/* The shard that owns a slot: slot mod nshards, by a multiplication
 * (Lemire's fastmod) instead of a division or a table: a 32 KB table
 * indexed by random slots missed the first-level cache, and its load was
 * 1.6 % of the CPU of GET -P 32 at two shards (perf). */
static inline int shard_of_slot(unsigned slot) {
    return (int)(((__uint128_t)(shard_mod_m * slot) * (unsigned)nshards) >> 64);
}

/* Index of the shard that owns key. */
static inline int shard_of_key(const char *key, size_t klen) {
    if (nshards == 1) return 0;
    return shard_of_slot(key_slot(key, klen));
}

/* Creates n shards (threads are started by shard_start). */
int shard_create_all(int n);
/* Starts every shard's thread; with_threads=0 keeps them for inline use
 * (the embedded engine and the fuzzers). */
int shard_start_all(void);
void shard_stop_all(void);
/* Returns the calling thread's shard (NULL on the main thread). */
shard *shard_self(void);
uint64_t shard_rand(shard *s);

/* Wakes `to` if it sleeps (any thread). */
void shard_wake(shard *to);
/* Messaging, from the calling shard `from` to shard `to`. */
void shard_send(shard *from, int to, struct msg *m);
/* Publishes s's key counts (eviction shares, SCAN's routing): its loop
 * does at each turn while unlocked; a lease's holder does for the shard it
 * keeps locked, after running on it (shard/tx.c). */
void shard_publish_counts(shard *s);
/* Sends every outbox and rings doorbells. */
void shard_flush(shard *s);
/* Runs batch m's items from m->done_items on; with check, stops before the
 * first whose keys are locked (tx_must_wait) and returns 0, else 1. */
int shard_run_batch_items(shard *s, struct msg *m, int check);
struct session;
struct command;
/* Appends cmd of session s to batch m with a pending reply slot of its
 * connection (discard: the reply is dropped, CLIENT REPLY). */
struct batch_item *shard_batch_add(struct msg *m, struct session *s, const struct command *cmd, int argc, const char **argv,
                                   const size_t *argl, int discard);
/* A batch has run: back to its sender (or, from this shard itself, into
 * its connections' reply slots). */
void shard_batch_reply(shard *s, struct msg *m);
/* Bytes of replies on their way back to their connections' shards
 * (atomic): clients' memory no connection counts yet (client eviction). */
extern int64_t shard_replies_in_flight;
struct batch_item;
/* Logs item it of batch m (it->slow is set: it ran elsewhere) in s's slow
 * log as a command of session sess. */
void shard_slowlog_item(shard *s, struct msg *m, struct batch_item *it, struct session *sess);
/* Inbox processing: executes batches, grants locks, delivers results. */
int shard_drain_inbox(shard *s);
/* Periodic work: active expiry, rehash, client timeouts, stats. */
void shard_cron(shard *s);
/* Adds fn to the functions every shard's cron calls on its own thread
 * (cmd/ registers them at start: the scripting engine drops a Lua state
 * that SCRIPT FLUSH made stale, MIGRATE closes idle cached connections).
 * At most SHARD_CRON_HOOKS; before the shards start. */
#define SHARD_CRON_HOOKS 8
void shard_add_cron_hook(void (*fn)(shard *s));
/* Each loop turn of a shard with replicas, after its log is committed and
 * before replies are written: the replication stream's sender (repl/). */
extern void (*shard_replica_pump)(shard *s);

/* A shard busy with one long command (a script past busy-reply-threshold):
 * bit i set while shard i is. Atomic; the dispatcher answers BUSY to
 * commands that need a busy shard. */
extern uint64_t shards_busy;
/* The error commands held on a busy shard get (set before shards_busy). */
extern char shards_busy_err[160];
/* Called by the long command from time to time: serves shard s's
 * connections (commands the dispatcher refuses with BUSY, and the few it
 * lets run: SCRIPT KILL, SHUTDOWN NOSAVE...) except `skip`, whose command is
 * the long one, and writes their replies at once. Returns 1 when the server
 * is stopping (the long command should end). */
int shard_busy_poll(shard *s, struct conn *skip);
/* Called by the accept path on the listening shard. */
/* Listening sockets: 16 bind addresses for port and for tls-port, the
 * unix socket, and room for CONFIG SET to open new ones before it closes
 * old ones. */
#define MAX_LISTENERS 40
/* Every shard accepts from fd from now on (before the shards start, or
 * while CONFIG SET holds them all); tls: connections begin with a TLS
 * handshake. -1 when all listener slots are taken. */
int shard_register_listener(int fd, int tls);
/* The same, but only shard `owner` accepts from fd (every shard when -1):
 * a test harness gives each shard a listener of its own to choose which
 * shard serves a connection. */
int shard_register_listener_on(int fd, int tls, int owner);
/* No shard accepts from fd any more (the caller closes it). */
void shard_unregister_listener(int fd);
#endif
