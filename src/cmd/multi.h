/* multi.h - MULTI, EXEC, DISCARD: a session's queued commands, run as one
 * isolated step.
 *
 * Between MULTI and EXEC the dispatcher hands every command to
 * multi_intercept, which queues a copy ("+QUEUED") or refuses it (an error
 * that also dooms the transaction: EXEC then answers EXECABORT). EXEC is
 * routed like one command whose keys are the union of the queued commands'
 * keys: inline when they all live on the connection's shard, else as a
 * multi-shard transaction (tx.h), so the whole block is one point in every
 * shard's history. Blocking commands inside run without blocking, and
 * blocked clients are served after the whole block, as in Redis. */
#ifndef SHOAL_MULTI_H
#define SHOAL_MULTI_H
#include "cmd/cmd.h"
#include "net/conn.h"

/* During MULTI: 1 when the command was queued or refused (reply written to
 * out), 0 when it runs now (EXEC, DISCARD, MULTI, RESET, QUIT). */
int multi_intercept(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, buf *out);
/* During MULTI: a command that could not even be resolved dooms EXEC. */
void multi_doom(session *s);
/* Shards EXEC needs (bit i: shard i); 0 when nothing would run. */
uint64_t multi_shards(session *s);
/* The flags of the queued commands, ORed (CLIENT PAUSE WRITE looks at an
 * EXEC's commands). */
uint32_t multi_flags(session *s);
/* EXEC of a session whose queued commands each have their keys on one
 * shard, over several shards, and no WATCH: starts it as one split
 * transaction (tx.h) whose part on each shard runs that shard's commands
 * in queue order as one batch, and returns 1 (the reply comes as EXEC's).
 * 0: EXEC runs as a whole-shard transaction instead. */
int multi_squash(session *s, int discard);
/* Drops the queue and the watches (RESET, the connection closing). */
void multi_discard(session *s);
/* Calls fn with each command queued since MULTI, in order; none when the
 * block is doomed (EXEC will run nothing). For MONITOR. */
void multi_each_queued(session *s, void (*fn)(void *ud, int argc, const char **argv, const size_t *argl), void *ud);
/* Set on the thread running EXEC's queued commands (CONFIG SET's hooks
 * leave eviction to the next command then, as Redis does). */
extern __thread int multi_executing;
#endif
