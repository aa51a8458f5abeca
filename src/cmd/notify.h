/* notify.h - keyspace notifications from command handlers: the event of
 * class `type` about the key at argv[i], in the command's database
 * (shard/notify.h publishes it). Costs one relaxed load while the class is
 * off. */
#ifndef SHOAL_CMD_NOTIFY_H
#define SHOAL_CMD_NOTIFY_H
#include "cmd/cmd.h"
#include "shard/notify.h"

static inline void ctx_notify(cmd_ctx *c, int type, const char *event, int i) {
    notify_key(type, event, c->argv[i], c->argl[i], c->dbid);
}
#endif
