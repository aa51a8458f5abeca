/* listen.h - opening the TCP (bind/port) and unix (unixsocket) listeners;
 * every shard's loop accepts from all of them (EPOLLEXCLUSIVE). */
#ifndef SHOAL_LISTEN_H
#define SHOAL_LISTEN_H
#include <stddef.h>
int listen_open_all(char *err, size_t errlen);
void listen_close_all(void);
/* CONFIG SET port / bind (every shard held): opens listeners for the new
 * bind and port and puts them in the place of the TCP ones (connections
 * stay). -1 with `reason` in why, the old listeners kept, when one cannot
 * be opened. */
int listen_apply_tcp(char *why, size_t wl, const char *reason);
/* Registers the apply hooks of port and bind with the configuration. */
void listen_config_hooks(void);
#endif
