/* client.h - CLIENT subcommands defined outside connection.c (whose
 * CLIENT table lists them). */
#ifndef SHOAL_CLIENT_H
#define SHOAL_CLIENT_H
#include "cmd/cmd.h"

void client_pause(cmd_ctx *c);
void client_unpause(cmd_ctx *c);
void client_unblock(cmd_ctx *c);
#endif
