/* cross.h - commands over two keys on different shards as transactions of
 * hops under key locks (shard/tx.h), instead of whole-shard locks: RENAME
 * and RENAMENX move the entry itself from one shard to the other. */
#ifndef SHOAL_CROSS_H
#define SHOAL_CROSS_H
#include "cmd/cmd.h"

cmd_hops_fn cross_rename;
/* Any command whose keys are its arguments (cmd/gather.c): the keys'
 * entries copied to the coordinator, the handler run over the copies, the
 * written keys put back. 0 when it must take whole-shard locks instead. */
cmd_hops_fn cross_gather;
#endif
