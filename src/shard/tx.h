/* tx.h - atomic, isolated work over several shards.
 *
 * Strict two-phase locking at shard granularity: the coordinator (the
 * connection's shard) asks each involved shard for its lock in ascending
 * shard order, one hop each; a shard that grants stops running other work
 * (its connections' commands and incoming batches wait in order) until the
 * UNLOCK. With every lock held, the coordinator runs the command itself over
 * the locked shards' data: the lock transfers ownership, and the ring's
 * release/acquire ordering makes the data visible. Acquiring in one global
 * order means no wait cycle, so no deadlock; holding every lock until the
 * end makes the whole command one point in every shard's history. MULTI/EXEC
 * and scripts reuse this: lock their shards, run their commands, unlock. */
#ifndef SHOAL_TX_H
#define SHOAL_TX_H
#include "cmd/cmd.h"
#include "net/conn.h"
#include "shard/shard.h"

typedef struct tx {
    conn *owner;
    shard *coord;
    int ids[MAX_SHARDS];
    int n, next;
    const command *cmd;
    int argc;
    const char **argv;
    size_t *argl;
    buf args;
    int dbid, resp;
    slot *slot;
    session *sess;
    int blocked; /* the command blocked: its slot waits for the wake-up */
    buf result;  /* the reply of an internal transaction (no connection) */
} tx;

/* Starts a transaction for a command of s over shards ids[0..n) (sorted). */
void tx_begin(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, const int *ids,
              int n, int discard);
/* The server's own transaction over every shard (a save rule firing):
 * no connection, the reply is dropped. */
void tx_begin_internal(shard *sh, const command *cmd, int argc, const char **argv, const size_t *argl);
/* Shard sh received a LOCK request (or its own, from the deferred queue). */
void tx_lock_request(shard *sh, struct msg *m);
/* The coordinator received a GRANT. */
void tx_granted(shard *coord, tx *t);
/* Shard sh received UNLOCK. */
void tx_unlock(shard *sh, tx *t);
#endif
