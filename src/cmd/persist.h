/* persist.h - persistence helpers other command files use (DEBUG RELOAD in
 * server.c, INFO persistence in info.c). Both run under a lock of every
 * shard (CMD_ALLSHARDS). */
#ifndef SHOAL_CMD_PERSIST_H
#define SHOAL_CMD_PERSIST_H
#include "cmd/cmd.h"
#include "lib/buf.h"

/* Saves every shard's keys to dbfilename; 0 ok, else -1 (logged). */
int persist_save(cmd_ctx *c);
/* The same for shards ids[0..n), which the caller holds (or whose threads
 * stopped: the final save at shutdown). */
int persist_save_shards(const int *ids, int n, int64_t now_ms);
/* SHUTDOWN already saved (main() then does not save again). */
extern int shutdown_saved;
/* Shard cron: shard 0 starts a background save when a save rule holds. */
struct shard;
void persist_cron(struct shard *sh);
/* Writes are refused (MISCONF): the last save failed, save rules exist and
 * stop-writes-on-bgsave-error is on. */
int persist_misconf(void);
#define MISCONF_ERR                                                                                                    \
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands "     \
    "that may modify the data set are disabled, because this instance is configured to report errors during "        \
    "writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details " \
    "about the RDB error."
/* DEBUG RELOAD [NOSAVE] [NOFLUSH]: save, empty every database, load the
 * file back; replies. */
void persist_debug_reload(cmd_ctx *c);
/* The INFO "persistence" section body. */
void persist_info(buf *o, const int *ids, int n);
#endif
