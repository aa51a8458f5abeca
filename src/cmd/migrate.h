/* migrate.h - MIGRATE's exchange with a target server (migrate_sock.c),
 * used by the command (migrate.c).
 *
 * The exchange is synchronous, as in Redis: the calling shard thread
 * connects, writes AUTH, SELECT and one RESTORE per key in one pipeline,
 * and reads the replies, each step bounded by the command's timeout.
 * Connections are cached per shard (host:port -> socket, the database it
 * last selected), closed after 10 s unused by the shard's cron. */
#ifndef SHOAL_MIGRATE_H
#define SHOAL_MIGRATE_H
#include <stddef.h>
#include <stdint.h>

struct shard;

/* Whether MIGRATE may open sockets: 0 in the library (the embedded engine
 * and the fuzz targets, where MIGRATE answers as for an unreachable target
 * without touching the network); shoal-server's main sets 1 at start. */
extern int migrate_net_enabled;

/* What one MIGRATE sends. Strings are not NUL-terminated. pass NULL: no
 * AUTH; user NULL with pass: AUTH pass, else AUTH user pass. */
typedef struct mig_opts {
    const char *host, *port, *user, *pass;
    size_t hostl, portl, userl, passl;
    long long dbid;
    long long timeout_ms; /* > 0 */
    int replace;
} mig_opts;

/* One key to send: its DUMP payload and deadline (ms, -1: none). done is
 * set when the target acknowledged its RESTORE. */
typedef struct mig_key {
    const char *key, *payload;
    size_t klen, plen;
    int64_t expire;
    int argi; /* the caller's: where the key came from */
    int done;
} mig_key;

/* Sends keys[0..n) to the target with the connection cache of shard
 * `cache` (the calling shard thread's own index). Keys whose deadline has
 * passed by now are left out. Returns NULL when the exchange succeeded
 * (reply +OK), else the error reply's text (no '-'), written to err.
 * Either way done marks the keys the target restored, which the caller
 * deletes (unless COPY). Blocks for at most the timeout per connect, per
 * 64 KB written and per reply line, and retries once on a socket error
 * that is not a timeout, as Redis does. */
const char *migrate_exchange(int cache, const mig_opts *o, mig_key *keys, int n, char *err, size_t errlen);

/* Cached connections over every shard (INFO's migrate_cached_sockets). */
int migrate_cached_sockets(void);
/* Closes shard sh's connections unused for 10 s (its cron, its thread). */
void migrate_cron(struct shard *sh);
#endif
