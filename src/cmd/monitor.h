/* monitor.h - feeding MONITOR clients (cmd/monitor.c). */
#ifndef SHOAL_MONITOR_H
#define SHOAL_MONITOR_H
#include "cmd/cmd.h"
#include "net/conn.h"

struct shard;

/* Whether any client is in MONITOR mode (a relaxed read). */
int monitor_active(void);
/* Shows one command, run in database dbid by `origin` (a client address,
 * "unix:<path>", or "lua" for a script), to every monitor, from shard sh
 * (the calling thread's). */
void monitor_feed(struct shard *sh, const char *origin, int dbid, int argc, const char **argv, const size_t *argl);
/* The dispatcher: session s ran cmd (EXEC: also the commands it queued). */
void monitor_feed_command(session *s, const command *cmd, int argc, const char **argv, const size_t *argl);
#endif
