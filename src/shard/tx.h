/* tx.h - atomic, isolated work over several shards: per-key intent locks,
 * scheduled on every involved shard in one hop.
 *
 * A transaction has one part per shard it touches. The coordinator (the
 * connection's shard) takes a number from one global sequence (txid) and
 * sends every part at once (SCHED). Each shard keeps the parts it holds in
 * arrival order (its queue) and registers their keys in its intent table
 * (lock.h): shared for reads, exclusive for writes, or the whole shard.
 * A part is granted when no part before it in the queue conflicts with it.
 *
 *   coordinator            shard A                  shard B
 *   txid = seq++
 *   SCHED(A), SCHED(B) --> queue, intents, granted   queue, waits behind T0
 *                          (reads: run now)          ... T0 ends: granted
 *             <-- GRANTED (+ replies)  <-------------- GRANTED (+ replies)
 *   reads:  gather replies, RELEASE(A, B)  (no reply waits for it)
 *   writes: EXEC(A, B) --> run, release      run, release --> EXEC_DONE
 *   whole:  run the command here over the shards' data, RELEASE
 *   hops:   STEP(A) --> run what the coordinator added, keep the locks
 *           <-- STEP_DONE (+ replies) ... then RELEASE(A, B)
 *
 * Deadlock freedom: a part only ever waits for parts with a lower txid. A
 * part that arrives at a shard where it conflicts with a part of a higher
 * txid is refused (FAILED); the coordinator then cancels its other parts
 * and schedules again with a new, higher txid. Every lock is held from its
 * grant until all parts are granted (reads: until the RELEASE; writes:
 * until each shard has run its part, which happens only after every part was
 * granted), so the transaction is one point in every shard's history
 * (two-phase locking).
 *
 * Commands outside transactions (single-key, or all keys on one shard) run
 * when none of their keys has a conflicting intent; otherwise they are
 * held as a part of their own (a "held" part, no coordinator) at the tail of
 * the queue, so they keep their order with the transactions around them.
 * A part that locks the whole shard (commands without a split: RENAME across
 * shards, MULTI/EXEC, FLUSHALL, KEYS, ...) counts in shard->locked_n while
 * granted: the shard then runs nothing else, and the coordinator runs the
 * unchanged handler over every locked shard's data (ctx_db finds them).
 * One coordinator's whole-shard parts are granted together (its thread
 * runs their handlers one at a time).
 *
 * shard/ knows no command by name: cmd/ builds the parts (which keys, which
 * sub-commands) and gathers their replies through the merge callback. */
#ifndef SHOAL_TX_H
#define SHOAL_TX_H
#include "cmd/cmd.h"
#include "net/conn.h"
#include "shard/msg.h"
#include "shard/shard.h"

typedef struct tx_key {
    uint64_t h; /* lock_hash(db, key) */
    uint8_t x;  /* exclusive */
} tx_key;

/* One shard's part of a transaction (or a held command batch). While it is
 * queued on its shard, that shard's thread owns it; the message m moves it
 * between coordinator and shard (one message about a part is in flight at
 * a time), and m's batch holds the part's commands and their replies. */
typedef struct tx_part {
    msg m;              /* first: handle() gets &m back */
    struct tx *t;       /* NULL: a held batch of the shard's own */
    msg *held;          /* a held batch: the batch message (its sender's) */
    struct tx_part *sq_prev, *sq_next;
    uint64_t txid;
    int shard, src;     /* where it runs; a held batch: who sent it */
    int coord;          /* its coordinator's shard (t may be freed before its RELEASE arrives) */
    uint8_t whole;      /* the whole shard: excludes every part but its coordinator's other whole ones */
    uint8_t armed;      /* run m's batch as soon as granted (read-only) */
    uint8_t granted, failed, queued;
    uint8_t deferred;   /* the coordinator's own part, run at the others' grant without locks */
    uint8_t solo;       /* the last lock its transaction takes: it runs and lets its locks go at the grant */
    uint8_t lease_ok;   /* granted whole by an idle shard: the coordinator may keep it (a lease) */
    uint8_t leased;     /* stands for its shard's lease: never sent */
    uint8_t home;       /* the shard whose thread allocated it (and its buffers): its pool takes it back */
    tx_key *keys;
    uint32_t nkeys, capkeys;
} tx_part;

struct tx;
/* Writes the command's reply from the parts' replies (cmd/ provides it). */
typedef void tx_merge_fn(struct tx *t, buf *out);
/* A step of a transaction of several hops (cmd/ provides it): reads the
 * replies so far, and either adds commands to parts (tx_part_add) and
 * returns 1 (each part runs its new ones, its locks held), or writes the
 * reply to out and returns 0 (the locks go). */
typedef int tx_step_fn(struct tx *t, buf *out);

typedef struct tx {
    conn *owner;
    shard *coord;
    int ids[MAX_SHARDS]; /* shards involved; parts[i] runs on ids[i] */
    tx_part *parts[MAX_SHARDS];
    int n;
    const command *cmd;
    int argc;
    const char **argv; /* whole-shard mode: the command, copied */
    size_t *argl;
    buf args;
    int dbid, resp;
    slot *slot;
    session *sess;
    int blocked; /* the command blocked: its slot waits for the wake-up */
    buf result;  /* the reply of an internal transaction (no connection) */
    /* scheduling (coordinator thread) */
    uint64_t txid;
    int whole;        /* whole-shard locks: the coordinator runs cmd */
    int armed;        /* read-only split: parts run when granted */
    int phase;        /* TXP_* */
    int outstanding;  /* parts whose answer this phase has not come */
    int fails;        /* parts refused in the scheduling phase */
    int retries;
    tx_merge_fn *merge;
    tx_step_fn *step; /* several hops: called after the grant and each step */
    void *plan;       /* cmd/'s data for merge (freed with zfree) */
    /* a split transaction: the connection does not wait for it */
    struct tx *conn_next; /* owner->txs, oldest first */
    uint64_t bloom[4];    /* bit h >> 56 of each key's lock hash (with 64 bits, a key of a pipeline's next
                           * MSET of 10 keys passed the filter of one in-flight MSET in seven, and scanned its keys) */
    int writes;           /* some key is locked exclusive */
    int64_t start_ns;     /* when it began (commandstats) */
    int parts_count;      /* its parts count the call (a script run on its keys' shard) */
    int rerun_whole;      /* set by merge: run the command again holding every shard (tx_keep_args first) */
    struct tx *chain_next; /* the connection's next whole-shard transaction, sent before this one ended */
    int park;              /* PARK_*: a chained transaction granted before its turn (tx_begin_chained) */
    uint64_t client;       /* without a session: the client's tracking word */
    tx_part *adopted;      /* a handed-off command's part, answered with the reply at the end (tx.c) */
} tx;

/* Starts a whole-shard transaction for a command of s over shards
 * ids[0..n): the coordinator runs the command once it holds them all. */
void tx_begin(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, const int *ids,
              int n, int discard);
/* The same, where the connection may go on sending its next whole-shard
 * transactions before this one ends (a pipeline of scripts over keys of
 * several shards): they chain (owner->waiting, chain_next), so a turn's
 * grants bring a pipeline's worth of them, not one per connection. They
 * run in the connection's order: one granted before its predecessor ran
 * lets its locks go (cancels) and is scheduled again once that one ended,
 * as holding them could wait in a cycle with the predecessor's queue. The
 * connection reads only such commands meanwhile (cmd/ decides which). */
void tx_begin_chained(session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                      const int *ids, int n, int discard);
/* The server's own whole-shard transaction over every shard (a save rule
 * firing): no connection, the reply is dropped. */
void tx_begin_internal(shard *sh, const command *cmd, int argc, const char **argv, const size_t *argl);

/* Split transactions (cmd/ plans them): create, add a part per shard with
 * its keys and commands, then run. The connection goes on reading
 * commands meanwhile (its replies keep their order in its slots): the next
 * ones run unless tx_conn_must_wait says they touch a key of one of its
 * transactions in flight. So one connection's commands on each key still
 * take effect in the order it sent them, even when a transaction is
 * refused and scheduled again. */
tx *tx_create(session *s, const command *cmd, int discard);
/* The same, but the connection reads nothing more until t ends (its merge
 * may ask for a run over every shard, which must come before them). */
tx *tx_create_waited(session *s, const command *cmd, int discard);
tx_part *tx_part_of(tx *t, int shard); /* the part on shard (created on first use) */
void tx_part_key(tx_part *p, int dbid, const char *key, size_t klen, int exclusive);
batch_item *tx_part_add(tx_part *p, const command *cmd, int argc, const char **argv, const size_t *argl, int dbid,
                        int resp);
/* Runs t; armed: the parts only read (they run as soon as granted). merge
 * writes the reply once every part has run. */
void tx_run_split(tx *t, int armed, tx_merge_fn *merge);
/* Runs t as several hops: the parts' first commands run when granted
 * (they should only read), then step decides what each hop does. */
void tx_run_steps(tx *t, tx_step_fn *step);
/* t keeps its own copy of the command (t->argc, t->argv, t->argl). */
void tx_keep_args(tx *t, int argc, const char **argv, const size_t *argl);
/* The same, from item it of batch m. */
void tx_keep_item_args(tx *t, const msg *m, const batch_item *it);
/* The reply of part i's k-th command (valid until the merge returns). */
const char *tx_part_reply(const tx *t, int i, int k, size_t *len);

/* Whether a command of s must wait for the connection's split
 * transactions in flight: it names a key one of them names (and one of the
 * two writes it), or it is not a plain key command (session state, EXEC,
 * blocking, every shard), whose effects are not known by keys. */
int tx_conn_must_wait(session *s, const command *cmd, int argc, const char **argv, const size_t *argl);

/* Receiving side, from the inbox (m is a part's message). */
void tx_on_message(shard *sh, msg *m);
/* A prefetch hint for the keys of a part's message soon handled here. */
static inline __attribute__((always_inline)) void tx_part_hint(const msg *m) {
    const tx_part *p = (const tx_part *)m;
    if (p->keys) {
        __builtin_prefetch(p->keys);
        if (p->nkeys > 4) __builtin_prefetch((const char *)p->keys + 64);
    }
}
/* A command batch from shard src (BATCH): runs now, or what cannot run yet
 * is held behind the parts it conflicts with. */
void tx_batch_arrived(shard *sh, msg *m);
/* Whether a command outside transactions must wait (its keys have
 * conflicting intents, or the shard is locked). */
int tx_must_wait(shard *sh, const command *cmd, int argc, const char **argv, const size_t *argl, int dbid);
/* Holds a local command of connection c (its arguments copied) until it
 * can run; c stops reading commands until then. */
void tx_hold_local(shard *sh, session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                   int discard);
/* A busy shard (shard.h): every held command (a batch or a local command
 * waiting behind the long one) is answered err at once. */
void tx_refuse_held(shard *sh, const char *err);
/* Frees the parts kept for reuse (the cron, when the shard gives its free pages back). */
void tx_pool_trim(shard *sh);
/* Leases, once a loop turn: the holder lets go those kept too long, the
 * granter recalls its own when it has work. */
void tx_lease_turn(shard *sh);
/* When the first lease this shard holds is due back (ms), or -1. */
int64_t tx_lease_deadline(const shard *sh);
/* Whether the shard's blocked clients' timeouts wait for its unlock (a
 * lease's holder may keep it until recalled: then they do not). */
int tx_lock_holds_timeouts(const shard *sh);
/* Whether the shard holds shard b's lease or has whole-shard transactions
 * there: its transactions over b alone then go whole-shard too (on the
 * lease they run at once; beside the others they are granted with them,
 * where a part of another kind would wait behind them). */
int tx_leases(const shard *sh, int b);
/* Gives shard b's lease back before sending b what would wait behind it
 * (a command, a part that is not whole-shard). */
void tx_lease_yield(shard *sh, int b);
/* Hand-off. A shard locked to another's lease cannot run its connections'
 * commands. A command that would take the whole of the holder's shard and
 * of this one (a script over keys of both) is handed to the holder
 * instead, as a one-part transaction there whose item carries the shards
 * (batch_item.whole_mask), and the holder runs it on its leases as one of
 * its own. A holder that does not hold every lease it needs then (one
 * that timed out, or a part granted on its own shard) coordinates the
 * command as a whole-shard transaction of its own instead, and answers
 * when it ends.
 * tx_hand_off_to: the holder a locked shard hands off to, or -1 (not
 * locked, or not to a lease, or the lease is being recalled).
 * tx_run_handed: the receiver's side, for item it of batch m; returns 0
 * (nothing ran, the item is then adopted) when it does not hold the
 * shards whole. */
int tx_hand_off_to(const shard *sh);
int tx_run_handed(shard *sh, const msg *m, batch_item *it, const char **argv, const size_t *argl, buf *out);
/* A command of s over the shards of mask (this one among them), when this
 * shard holds the others' leases: it runs now, in s's reply buffer out,
 * with no transaction to keep (1), or 0 when it cannot (a lease missing or
 * in use, a part granted here, a blocking command or EXEC). *reroute: the
 * handler asks to run again holding every shard. */
int tx_run_leased_here(session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                       uint64_t mask, buf *out, int *reroute);
/* Grants what the last releases made runnable (called by the loop). */
void tx_settle(shard *sh);
#endif
