/* persist.h - persistence helpers other command files use (DEBUG RELOAD in
 * server.c, INFO persistence in info.c). Both run under a lock of every
 * shard (CMD_ALLSHARDS). */
#ifndef SHOAL_CMD_PERSIST_H
#define SHOAL_CMD_PERSIST_H
#include "cmd/cmd.h"
#include "lib/buf.h"

/* Saves every shard's keys to dbfilename; 0 ok, else -1 (logged). */
int persist_save(cmd_ctx *c);
/* DEBUG RELOAD [NOSAVE] [NOFLUSH]: save, empty every database, load the
 * file back; replies. */
void persist_debug_reload(cmd_ctx *c);
/* The INFO "persistence" section body. */
void persist_info(buf *o, const int *ids, int n);
#endif
