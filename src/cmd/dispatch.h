/* dispatch.h - from a parsed command to its execution: lookup, arity,
 * routing by the keys' shards (inline, batch to one other shard, or a
 * transaction over several), and the reply-suppression of CLIENT REPLY. */
#ifndef SHOAL_DISPATCH_H
#define SHOAL_DISPATCH_H
#include "cmd/cmd.h"
#include "net/conn.h"

enum { DISPATCH_DONE, DISPATCH_LATER };
/* Runs (or routes) one command of session s. Any shard thread; in the
 * embedded engine (s->conn == NULL) everything runs inline. DISPATCH_LATER:
 * nothing was done; the command must wait for the connection's split
 * transactions in flight (tx_conn_must_wait), and the connection gets
 * pending again when one ends. */
int dispatch_command(session *s, int argc, const char **argv, const size_t *argl);
/* Whether s's command may run while its shard is locked to another's
 * lease, handed off to the holder (shard/tx.h): a script over keys of the
 * holder's shard and others (cmd->hops says which commands hand off), from
 * a connection with no state that its shard would have to see (MULTI,
 * tracking, subscriptions, ACL limits), with no busy script, pause,
 * maxmemory or replication in the way. Anything else waits for the unlock. */
int dispatch_may_hand_off(session *s, int argc, const char **argv, const size_t *argl);
/* Shards a command touches (bit i: shard i); 0: the connection's own. */
uint64_t dispatch_route_mask(session *s, const command *cmd, int argc, const char **argv, const size_t *argl);
/* A write command is about to run (or a blocked one to be served): the
 * running background save keeps its keys' old values, WATCH sees them
 * change. */
void dispatch_before_write(cmd_ctx *c);
/* Executes a resolved command in ctx (counts statistics). */
void exec_command(cmd_ctx *c);
/* Set while a script runs on this thread: the time (ms) its commands see,
 * frozen at the script's start as Redis does (a key cannot expire in the
 * middle of a script). */
extern __thread int64_t dispatch_frozen_ms;
/* Whether the command runs from a script (redis.call). */
static inline int dispatch_in_script(void) { return dispatch_frozen_ms != 0; }
/* Resolves container subcommands; NULL when none (the error text in err).
 * *named (when given) gets the row the name found even when the arguments
 * were refused (for rejected_calls), NULL for an unknown command. */
const command *dispatch_resolve(int argc, const char **argv, const size_t *argl, char *err, size_t errlen,
                                const command **named);
#endif
