/* split.h - multi-key commands that run as one part per shard (the command
 * on each shard's own keys, all at once) with their replies combined: the
 * rows with a `split` kind (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH). */
#ifndef SHOAL_SPLIT_H
#define SHOAL_SPLIT_H
#include "cmd/cmd.h"
#include "net/conn.h"

enum { SPLIT_ROUTE_NONE = -1, SPLIT_STARTED = -2 };
/* Looks up the shard of each key of cmd (a row with a split kind, several
 * shards) once: when they are all on one shard, returns it (the caller
 * routes the command there as it is); else starts the split transaction
 * (SPLIT_STARTED). SPLIT_ROUTE_NONE: the command does not split (one key, a
 * write while the AOF is on, arguments the handler refuses): route it as
 * any other command. */
int split_route(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, int discard);
#endif
