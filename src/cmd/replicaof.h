/* replicaof.h - REPLICAOF / SLAVEOF / ROLE, and what a replica refuses
 * (cmd/replicaof.c over repl/replica.h). */
#ifndef SHOAL_CMD_REPLICAOF_H
#define SHOAL_CMD_REPLICAOF_H
#include "cmd/cmd.h"
#include "net/conn.h"

/* While a replica: 1 with err set (READONLY, MASTERDOWN) when session s
 * may not run cmd (argv) now; a script's own flags count (its shebang or
 * function: writes, allow-stale), as Redis's evalGetCommandFlags. The
 * master's own link is never refused. */
int replicaof_refuses(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, char *err,
                      size_t errlen);
/* A script's call of cmd while a replica: READONLY for a write under
 * replica-read-only, the stale-replica error while the link is down
 * under replica-serve-stale-data no; NULL when it may run. */
const char *replicaof_script_call_refusal(const command *cmd);
/* ROLE's master form, set by the master side of replication to list its
 * replicas; NULL: "master", offset 0, no replicas. */
extern void (*replicaof_role_master)(cmd_ctx *c);
#endif
