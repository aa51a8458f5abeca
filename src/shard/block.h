/* block.h - clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN, ...).
 *
 * A blocking command first runs like any other (inline, or as a
 * transaction when its keys live elsewhere, so it always runs on the
 * client's own shard, its "home"). When every key is empty it calls
 * block_client: that creates one `blocked` record and puts a waiter for it
 * in the wait queue of each key, in the key owner's shard:
 *
 *   home shard                       owner shard of key k
 *   conn --> blocked (state, refs) <-- waiter <-- waitq "k" (FIFO)
 *             |  deadline list                      ^ ready list
 *             '- reply slot                         '- db_add of a list/zset
 *
 * Registration happens while the context owns every key's shard (inline or
 * under the transaction's locks), so a push cannot slip in between "empty"
 * and "waiting". When db_add creates a list or sorted set key that has a
 * queue, the queue joins its shard's ready list; after each command the
 * executing context serves the ready queues of the shards it owns: for each
 * waiter in FIFO order it claims the record (CAS WAITING -> SERVING), runs
 * the blocking command again in "serve mode" restricted to that key, and
 * hands the reply to the home shard (directly, or in an SM_UNBLOCK
 * message). The home times out and abandons (disconnect) records with the
 * same CAS, so exactly one side finishes each record. A served command
 * that needs a shard the server does not own (BLMOVE into a key of another
 * shard) is handed back to the home, which runs it again as a transaction.
 *
 * Waiters of finished records are dropped lazily (when met, and by the
 * owner's cron). A record is freed when its last reference goes. */
#ifndef SHOAL_BLOCK_H
#define SHOAL_BLOCK_H
#include "cmd/cmd.h"
#include <stdint.h>

struct shard;
struct conn;
struct db;
struct msg;
struct session;
struct blocked;

/* What a command that cannot block answers (no connection). A client that
 * blocked and timed out always gets a null array, as from Redis. */
enum { BLOCK_NULL_ARRAY = 0, BLOCK_NULL_BULK = 1 };

/* Called by a blocking handler after it found every key empty: blocks the
 * client on argv[kpos[0..nk)] waiting for a value of `type` (T_LIST or
 * T_ZSET) until deadline_ms (0 = forever). Replies the timeout reply now
 * instead when the context cannot block (no connection: the embedded
 * engine; or serve mode, where it only notes that nothing was served). */
void block_client(cmd_ctx *c, const int *kpos, int nk, int type, int64_t deadline_ms, int on_timeout);
/* In serve mode: 1 when argv[i] is the key being served. Outside serve
 * mode every key qualifies. */
int block_key_wanted(cmd_ctx *c, int i);
/* In serve mode: the command needs a key the context does not own; the
 * home runs it again (as a transaction). Outside serve mode a no-op. */
int block_needs_home(cmd_ctx *c, const char *key, size_t klen);

/* Parses a blocking timeout (seconds, fractions allowed) at argv[i] into an
 * absolute deadline in ms (0 = forever). Replies Redis's error and returns
 * 0 when it is bad. */
int block_parse_timeout(cmd_ctx *c, int i, int64_t *deadline_ms);

/* Hooks of the keyspace and the runtime. */
/* db_add created key in d with a value of type: wake its waiters. */
void block_signal(struct db *d, const char *key, size_t klen, int type);
/* SWAPDB gave d another table: every waited-for key of d that now has a
 * value wakes its waiters (as Redis scans a swapped database). */
void block_signal_db(struct db *d);
/* After a command: serve every ready queue of the shards ctx owns. */
void block_serve_ready(cmd_ctx *c);
/* Home side: SM_UNBLOCK arrived. */
void block_on_message(struct shard *sh, struct msg *m);
/* Home side: runs a handed-back command again (conn_process does). */
void block_rerun(struct session *s, struct blocked *b);
/* Home side: the earliest deadline of this shard's blocked clients, -1 if none. */
int64_t block_next_deadline(struct shard *sh);
/* Home side: the connection goes away while blocked. */
void block_conn_closed(struct conn *c);
/* CLIENT UNBLOCK (any thread; c found under its shard's conns_lock):
 * asks c's home shard to end c's blocking command as if it timed out
 * (BLOCK_UNBLOCK_TIMEOUT) or with the UNBLOCKED error. 1 when c was
 * blocked. */
enum { BLOCK_UNBLOCK_TIMEOUT = 1, BLOCK_UNBLOCK_ERROR = 2 };
int block_request_unblock(struct conn *c, int mode);
/* Home side: carries out the CLIENT UNBLOCK requests (the shard's loop). */
void block_serve_unblocks(struct shard *sh);
/* Home side: timeouts due now; returns ms until the next one (-1: none). */
int64_t block_check_timeouts(struct shard *sh, int64_t now_ms);
/* Owner side, from cron: drop waiters of finished records. */
void block_sweep(struct shard *sh);
/* Number of clients blocked on this shard (INFO blocked_clients). */
int block_count(struct shard *sh);
#endif
