/* conn.h - a client connection and the session state commands see.
 *
 * Replies keep request order even when some commands run on other shards:
 *
 *   out (ready bytes) <- slot(ready) <- slot(pending: remote) <- slot(ready)
 *
 * A command that runs locally appends to `out` when no slot is pending, else
 * to a ready slot at the tail; a command sent to another shard gets a
 * pending slot that its result fills. Ready slots at the head move into
 * `out`, which is written with one write(2) per loop turn. */
#ifndef SHOAL_CONN_H
#define SHOAL_CONN_H
#include "lib/buf.h"
#include "proto/resp.h"
#include <stdint.h>

struct shard;
struct tx;

enum {
    SESS_CLOSE_AFTER_REPLY = 1 << 0,
    SESS_REPLY_OFF = 1 << 1,
    SESS_REPLY_SKIP_NEXT = 1 << 2, /* CLIENT REPLY SKIP was just run */
    SESS_REPLY_SKIP = 1 << 3,      /* skip the reply of this command */
    SESS_NO_EVICT = 1 << 4,
    SESS_CLOSE_ASAP = 1 << 5,
    SESS_REPLICA = 1 << 6, /* an attached replica (repl/master.c): no replies, never evicted or timed out */
};

typedef struct multi_state multi_state; /* cmd/multi.c */
typedef struct watch_state watch_state; /* cmd/multi.c */

typedef struct session {
    uint64_t id;
    int db, resp;
    char *name;
    uint32_t flags;
    int killed;        /* atomic: 1 once marked (conn_mark_killed, any thread); the owner closes; 2 closed */
    struct conn *conn; /* NULL in the embedded engine */
    buf *out;          /* embedded engine: where replies go */
    struct shard *sh;
    int64_t ctime_ms;
    char lastcmd[32];
    multi_state *multi; /* between MULTI and EXEC/DISCARD */
    watch_state *watch; /* keys WATCHed, until EXEC, DISCARD, UNWATCH */
    size_t multi_mem;  /* bytes of the commands queued by MULTI (cmd/multi.c; CLIENT LIST multi-mem) */
    size_t watch_mem;  /* bytes of the WATCHed keys (cmd/multi.c) */
    struct acl_user *user; /* cmd/acl.h; NULL: no ACL checks (embedded engine) */
    int authed;            /* authenticated (or the default user needed no password) */
    struct ps_sess *pubsub; /* Pub/Sub subscriptions (shard/pubsub.h) */
    struct trk_sess *tracking; /* CLIENT TRACKING state (shard/tracking.h) */
    /* while its command is dispatched: argv[1], when the pipeline's
     * lookahead already worked out which shard owns it as a key */
    const char *hint_key;
    int hint_owner;
} session;

typedef struct slot {
    struct slot *next;
    buf data;
    int ready, discard;
} slot;

typedef struct conn {
    session s;
    int fd;
    struct shard *sh;
    buf qbuf;
    uint32_t qgen; /* changes whenever bytes in qbuf may move (conn_process's lookahead hints) */
    resp_parser rp;
    const char **argv;
    size_t *argl;
    int argcap;
    int argc_peak;     /* most arguments of a command since the last cron tick */
    size_t qbuf_peak;  /* most query bytes held since the last cron tick */
    buf out;
    size_t out_pos;
    slot *sq_head, *sq_tail;
    int inflight;          /* remote commands and transactions outstanding */
    int batch_out;         /* of those, commands in remote batches */
    struct tx *waiting;    /* transaction this connection waits for */
    struct tx *wait_tail;  /* the last of waiting's chain (shard/tx.h, tx_begin_chained) */
    int chain_n;           /* transactions in that chain while it takes more; 0: it takes none */
    struct tx *txs;        /* split transactions in flight, which it does not wait for (shard/tx.h) */
    int tx_writes;         /* how many of txs write */
    int tx_stalled;        /* its next command waits for one of txs to end */
    int held;              /* its command waits for key locks (shard/tx.h) */
    struct blocked *blocked; /* blocking command waiting for a key (shard/block.h) */
    struct blocked *rerun;   /* blocked command handed back: run it again first */
    struct conn *all_next, *all_prev;
    struct conn *pend_next;
    struct conn *write_next;
    int in_pending, in_write, closed, epout, in_grave;
    struct repl_peer *repl; /* an attached replica (repl/master.c) */
    int64_t last_io_ms;
    int64_t last_out_ms; /* the last write that sent bytes */
    char addr[128], laddr[128];
    int is_unix;
    int is_local; /* unix socket, 127.0.0.1 or ::1 (Redis's local client: protected mode, "local" options) */
    uint64_t cmds;
    int postponed;             /* its next command waits for CLIENT PAUSE to end (shard/pause.h) */
    int unblock_req;           /* atomic: CLIENT UNBLOCK asked (shard/block.h) */
    int rerunning;             /* running a blocked command handed back (never postponed) */
    int handoff_stuck;         /* its shard is locked, and its next command may not be handed off (tx.h): it waits for the unlock */
    int handoffs;              /* commands handed off in a row (tx.h): CONN_MOVE_AFTER of them move it */
    int move_to;               /* in its shard's moving list: the shard it goes to, plus one */
    struct conn *move_next;
    size_t rbuf_keep;          /* reply buffer kept between replies (CLIENT LIST rbs) */
    size_t rbuf_peak;          /* most reply bytes held at once since the last reset (rbp) */
    int64_t rbuf_peak_reset;   /* when rbuf_peak was last reset (ms) */
    int cur_argc;              /* arguments of the command running now (CLIENT LIST argv-mem) */
    /* client eviction (shard/client_evict.c); the owner's thread writes them */
    int64_t ce_mem;            /* memory as counted in the shard's sum (atomic stores) */
    int ce_bucket;             /* its size bucket while evictable, else -1 */
    struct conn *ce_prev, *ce_next;
    int64_t ce_marked;         /* atomic: counted in the shard's ce_dying by the thread that chose it */
    int ce_evicted;            /* atomic: chosen for eviction (INFO evicted_clients when it closes) */
    struct ssl_st *ssl; /* TLS session (net/tls.c); NULL on a plain connection */
    int tls_flags;      /* tls.c's state of the session */
    int tls_want_out;   /* the session waits for the socket to be writable */
    /* The link from this replica's master (repl/replica.c): replies are
     * dropped, bytes count in the replication offset. */
    int repl_master;
    uint64_t repl_read;    /* offset of the last byte read */
    uint64_t repl_applied; /* offset of the last command run (Redis's reploff) */
    uint64_t repl_multi;   /* bytes of a MULTI block not counted yet (Redis counts it at EXEC) */
} conn;

/* Moving a connection. A shard locked to another's lease hands its
 * connections' scripts to the holder (shard/tx.h): a message each way per
 * script, and the locked shard sleeps and wakes for each. A connection
 * that handed off CONN_MOVE_AFTER commands in a row, and holds no state
 * tied to its shard (nothing in flight, no MULTI, WATCH, subscriptions,
 * tracking, blocked command, TLS, replication link, client eviction), is
 * moved to the holder once its replies are written: its socket leaves
 * this shard's epoll and joins the holder's, and its commands run there,
 * on the leases, as the holder's own. In the instant between the two
 * lists, CLIENT LIST does not show it. */
#define CONN_MOVE_AFTER 8
/* The loop, after its writes: the connections marked to move go (or stay,
 * pending, when they wrote only part of their replies or took state). */
void conn_moves_out(struct shard *sh);
/* The receiving side (SM_CONN_MOVE). */
void conn_move_in(struct shard *sh, conn *c);

/* How many whole-shard transactions one connection may have in flight,
 * chained (tx_begin_chained). */
#define CONN_CHAIN_MAX 64

/* Whether the connection reads no command for now: it waits for a
 * transaction whose chain takes no more. */
static inline int conn_waits(const conn *c) {
    return c->waiting && !(c->chain_n > 0 && c->chain_n < CONN_CHAIN_MAX);
}
/* The master link's hooks (repl/ sets them): a command of the master that
 * the link answers itself (REPLCONF GETACK) returns 1 and is not
 * dispatched; the close hook runs when the link closes, on its thread. */
extern int (*conn_master_cmd_hook)(conn *c, int argc, const char **argv, const size_t *argl);
extern void (*conn_master_closed_hook)(conn *c);

/* Reply buffer sizing, as Redis's clients cron: a drained buffer keeps at
 * most rbuf_keep bytes; conn_cron halves rbuf_keep (not below 1 KB) when
 * the peak stayed under half of it and doubles it (up to 16 KB) when the
 * peak filled it. The peak restarts every conn_rbuf_peak_reset_ms (-1:
 * never). DEBUG REPLYBUFFER changes both (any thread, relaxed atomics). */
#define CONN_RBUF_MIN 1024
#define CONN_RBUF_CHUNK (16 * 1024)
#define CONN_RBUF_PEAK_RESET_MS 5000
extern int64_t conn_rbuf_peak_reset_ms;
extern int conn_rbuf_resizing;
/* What one read(2) of a connection asks for (Redis's PROTO_IOBUF_LEN). */
#define CONN_READ_LEN (16 * 1024)
/* CLIENT PAUSE: c stops before its next command until the pause changes
 * (it counts as a blocked client meanwhile). */
void conn_postpone(conn *c);
/* The pause changed: every postponed connection of sh tries again. */
void conn_resume_postponed(struct shard *sh);
/* The per-connection part of the shard's cron (reply buffer sizing). */
void conn_cron(conn *c, int64_t now_ms);

uint64_t session_next_id(void);
/* Set by the command layer (cmd/acl.c): gives a new session its user and
 * says whether the peer may stay (NULL) or gets this reply and is closed
 * (protected mode); and the user name CLIENT LIST shows. */
extern const char *(*conn_session_hook)(session *s, int is_local);
extern const char *(*conn_user_name_hook)(const session *s);
/* Accept path, once c->addr is known: runs conn_session_hook; -1 when the
 * connection was refused and closed. */
int conn_admit(conn *c, int is_local);
/* Where the reply of a command run locally goes right now. */
buf *session_reply_buf(session *s);
/* A pending slot for a command that runs elsewhere. */
slot *conn_pending_slot(conn *c);
/* Frees the calling thread's pool of reply slots (a shard giving its
 * memory back). */
void conn_slot_pool_trim(void);
/* Moves ready head slots into out and schedules a write. */
void conn_slots_flush(conn *c);
/* Accept path: wraps a connected socket. */
conn *conn_create(struct shard *sh, int fd, int is_unix);
/* Reads what is available and runs every complete command. */
void conn_on_readable(conn *c);
void conn_on_writable(conn *c);
/* Watches the socket for writability too (on), or not. */
void conn_set_epout(conn *c, int on);
/* Runs commands buffered in qbuf (after a lock is released or a
 * transaction of this connection ended). */
void conn_process(conn *c);
/* Writes c's pending output now (a shard busy with a long command). */
void conn_write_now(conn *c);
/* Writes pending output of every connection in the shard's write list. */
void conn_write_all(struct shard *sh);
/* From a long command's poll (shard_busy_poll): runs the pending
 * connections and writes the replies waiting for the end of the turn,
 * every connection's but skip's (the one running the command). */
void conn_serve_busy(struct shard *sh, conn *skip);
/* Closes now (the memory goes when nothing is in flight). */
void conn_close(conn *c);
/* Marks c killed, from any thread; its shard closes it at its next safe
 * point (the caller sets the shard's kill_reqs and wakes it). Returns 0 if
 * it was marked or closed already. */
int conn_mark_killed(conn *c);
/* connected_clients: connections not closed and not marked killed */
int conn_count_live(void);
/* Called by conn_close for a connection that is a replica (repl/). */
extern void (*conn_replica_closed_hook)(conn *c);
void conn_release_if_done(conn *c);
/* Frees the connections closed during this loop turn. */
void conn_free_closed(struct shard *sh);
/* Cron (through conn_cron): frees the query buffer of a connection with
 * no input for 2 s, so memory a burst grew returns. */
void conn_shrink_idle(conn *c, int64_t now_ms);
/* Memory c uses as client eviction counts it, in bytes (Redis's tot-mem
 * without the running command's arguments): the struct, the query buffer,
 * the reply buffer (at least its kept size, as Redis counts its fixed
 * buffer), the reply slots, MULTI's queue, WATCHed keys, subscriptions and
 * tracking prefixes. The owner's thread, or another one holding the
 * shard's conns_lock (the figures are then approximate). */
size_t conn_mem(const conn *c);
/* Reply bytes not written yet (out and the ready slots). */
size_t conn_obuf_pending(const conn *c);
/* One CLIENT LIST line. */
void conn_describe(conn *c, buf *out, int64_t now);
/* The same for the connection whose command (nargs arguments of lengths
 * argl) asks: they count in argv-mem and tot-mem, as Redis shows them. */
void conn_describe_args(conn *c, buf *out, int64_t now, int nargs, const size_t *argl);
void shard_add_pending(struct shard *sh, conn *c);
void shard_run_pending(struct shard *sh);
/* Whether the loop has pending connections to run now (not those of a
 * locked shard that wait for its unlock). */
int shard_pending_movable(const struct shard *sh);
#endif
