/* maxmemory.h - the OOM refusals of deny-oom commands (shard/evict.h does
 * the eviction). Both run only while maxmemory is set. */
#ifndef SHOAL_CMD_MAXMEMORY_H
#define SHOAL_CMD_MAXMEMORY_H
#include "cmd/cmd.h"
#include "net/conn.h"

/* In exec_command, on the executing shard, before the handler: evicts when
 * the server is over maxmemory; 1 after replying OOM when the command is
 * deny-oom and nothing more could go (not counted as a call). */
int maxmemory_exec_refused(cmd_ctx *c);
/* In the dispatcher, on the connection's shard, before routing: the same
 * for a deny-oom command (so a command over several shards is refused
 * whole, before any part runs), for anything queued inside MULTI (which
 * dooms the block), and for EXEC of deny-oom commands (EXECABORT, the
 * block discarded). 1 after writing the error to out. */
int maxmemory_dispatch_refused(session *s, const command *cmd, buf *out);
#endif
