/* replicaof.h - REPLICAOF / SLAVEOF / ROLE, and what a replica refuses
 * (cmd/replicaof.c over repl/replica.h). */
#ifndef SHOAL_CMD_REPLICAOF_H
#define SHOAL_CMD_REPLICAOF_H
#include "cmd/cmd.h"
#include "net/conn.h"

/* While a replica: 1 with err set (READONLY, MASTERDOWN) when session s
 * may not run cmd now. The master's own link is never refused. */
int replicaof_refuses(session *s, const command *cmd, char *err, size_t errlen);
#endif
