/* aof_log.h - which commands go to the AOF, and in what form. */
#ifndef SHOAL_AOF_LOG_H
#define SHOAL_AOF_LOG_H
#include "cmd/cmd.h"

/* After the handler of c ran (its reply starts at c->out->p[at]): logs the
 * command to the executing shard's AOF buffer as Redis 7.0 propagates it.
 * Nothing for read commands, error replies, commands with no reply yet
 * (blocked) and the common "nothing changed" replies; relative times and
 * random choices are logged as their outcome (PEXPIREAT, SET .. PXAT,
 * SREM of the popped members, LPOP for a served BLPOP, ...). The state
 * after the command tells the outcome: the handlers are untouched. */
void aof_log(cmd_ctx *c, size_t at);
#endif
