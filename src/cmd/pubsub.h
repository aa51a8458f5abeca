/* pubsub.h - what the dispatcher asks the Pub/Sub family (cmd/pubsub.c). */
#ifndef SHOAL_CMD_PUBSUB_H
#define SHOAL_CMD_PUBSUB_H
#include "cmd/cmd.h"
#include "net/conn.h"

/* A RESP2 connection with subscriptions runs only (P|S)SUBSCRIBE,
 * (P|S)UNSUBSCRIBE, PING, QUIT and RESET: 1 with Redis's error text in err
 * when cmd is refused, else 0. */
int pubsub_refuses(session *s, const command *cmd, char *err, size_t errlen);
#endif
