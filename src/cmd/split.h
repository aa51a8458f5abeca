/* split.h - multi-key commands that run as one part per shard (the command
 * on each shard's own keys, all at once) with their replies combined: the
 * rows with a `split` kind (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH). */
#ifndef SHOAL_SPLIT_H
#define SHOAL_SPLIT_H
#include "cmd/cmd.h"
#include "net/conn.h"

/* Starts cmd of session s as a split transaction; 0 when it does not split
 * (then it runs under whole-shard locks). */
int split_route(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, int discard);
#endif
