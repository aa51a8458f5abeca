/* tracking.h - the CLIENT subcommands of client-side caching
 * (cmd/tracking.c), and their rows for CLIENT's table. */
#ifndef SHOAL_CMD_TRACKING_H
#define SHOAL_CMD_TRACKING_H
#include "cmd/cmd.h"

void client_tracking_cmd(cmd_ctx *c);
void client_caching_cmd(cmd_ctx *c);
void client_getredir_cmd(cmd_ctx *c);
void client_trackinginfo_cmd(cmd_ctx *c);

#define TRACKING_CLIENT_ROWS                                                                                           \
    {.name = "client|tracking", .proc = client_tracking_cmd, .arity = -3,                                             \
     .flags = CMD_SESSION | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .group = "connection", .since = "6.0.0",         \
     .acl = "slow connection", .summary = "Enable or disable server assisted client side caching support"},          \
        {.name = "client|caching", .proc = client_caching_cmd, .arity = 3,                                            \
         .flags = CMD_SESSION | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .group = "connection", .since = "6.0.0",     \
         .acl = "slow connection", .summary = "Instruct the server about tracking or not keys in the next request"}, \
        {.name = "client|getredir", .proc = client_getredir_cmd, .arity = 2,                                          \
         .flags = CMD_SESSION | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .group = "connection", .since = "6.0.0",     \
         .acl = "slow connection", .summary = "Get tracking notifications redirection client ID if any"},            \
        {.name = "client|trackinginfo", .proc = client_trackinginfo_cmd, .arity = 2,                                  \
         .flags = CMD_SESSION | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .group = "connection", .since = "6.2.0",     \
         .acl = "slow connection",                                                                                    \
         .summary = "Return information about server assisted client side caching for the current connection"},
#endif
