/* engine.h - libshoal's entry points for running commands without sockets
 * (embedding, fuzzing, unit tests), plus the process-wide start-up shared
 * with the server.
 *
 *   engine_init();                      // once: command table, types, seed
 *   engine_open(1);                     // one shard, run on this thread
 *   session *s = engine_session();      // a client's state
 *   engine_exec(s, argc, argv, argl);   // reply appended to *s->out
 *
 * MIGRATE opens no socket here unless migrate_net_enabled is set
 * (cmd/migrate.h): the fuzzers run it without touching the network.
 */
#ifndef SHOAL_ENGINE_H
#define SHOAL_ENGINE_H
#include "net/conn.h"
#include <stddef.h>

#define SHOAL_VERSION "0.1.0"

void engine_init(void);
/* Creates the shards for inline use (no threads, no sockets). 0 ok. */
int engine_open(int nshards);
session *engine_session(buf *out);
void engine_session_free(session *s);
void engine_exec(session *s, int argc, const char **argv, const size_t *argl);
int64_t engine_start_time_ms(void);
#endif
