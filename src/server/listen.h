/* listen.h - opening the TCP (bind/port) and unix (unixsocket) listeners;
 * every shard's loop accepts from all of them (EPOLLEXCLUSIVE). */
#ifndef SHOAL_LISTEN_H
#define SHOAL_LISTEN_H
#include <stddef.h>
int listen_open_all(char *err, size_t errlen);
void listen_close_all(void);
#endif
