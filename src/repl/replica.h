/* replica.h - the replica side of replication: the link to a master
 * (replica.c: state, REPLICAOF, shard 0's side, INFO; replica_link.c: the
 * link thread; replica_proto.c: the handshake replies it parses).
 *
 * One link thread connects to the master, runs Redis 7.0's handshake
 * (PING, AUTH, REPLCONF listening-port and capa, PSYNC ? -1) and reads the
 * RDB payload ($<len> or the diskless $EOF:<mark> form) into memory, with
 * blocking calls in slices of 100 ms so a REPLICAOF meanwhile stops it.
 * It never touches the keyspace. Shard 0's cron then runs an internal
 * transaction that holds every shard, empties the databases, loads the
 * payload (persist/rdb.h's rdb_load_mem) and turns the socket into a
 * connection of shard 0 marked repl_master (net/conn.h): its commands go
 * through the ordinary dispatch with replies dropped, and its bytes count
 * in the replication offset. The link thread then waits until the
 * connection closes (the master went away, repl-timeout, REPLICAOF) and
 * starts again with a full sync.
 *
 *   link thread:  CONNECT -> CONNECTING -> HANDSHAKE -> TRANSFER (payload read)
 *   shard 0:      TRANSFER (load, adopt the socket) -> CONNECTED
 *   conn closed:  CONNECTED -> CONNECT (retried once a second)
 *
 * Every function may be called from any thread unless it says otherwise. */
#ifndef SHOAL_REPLICA_H
#define SHOAL_REPLICA_H
#include "lib/buf.h"
#include <stddef.h>
#include <stdint.h>

/* Link states, as ROLE names them (none connect connecting handshake sync
 * connected). */
enum { REPL_NONE, REPL_CONNECT, REPL_CONNECTING, REPL_HANDSHAKE, REPL_TRANSFER, REPL_CONNECTED };

/* 1 while the server is a replica (a master is configured); atomic. */
extern int repl_replica;
static inline int repl_is_replica(void) { return __atomic_load_n(&repl_replica, __ATOMIC_RELAXED); }
/* The link state (REPL_*). */
int repl_state(void);

/* Registers the link's hooks (connection, cron, masterauth); before the
 * shards start. */
void replica_init(void);
/* Startup, after the shards run: follows the `replicaof` directive when
 * it is set. 0, or -1 when its value is not "host port". */
int replica_start(void);

/* REPLICAOF host port. Returns 1 when already a replica of that master
 * (nothing changes), else 0 (the old link, if any, is closed and a full
 * sync with the new master starts). `who` describes the client for the
 * log line. The caller holds every shard (the `replicaof` directive is
 * stored). */
int replica_set_master(const char *host, int port, const char *who);
/* REPLICAOF NO ONE: stops replicating and keeps the data. The caller holds
 * every shard. */
void replica_set_none(const char *who);

/* What ROLE shows of a replica. */
typedef struct replica_role_info {
    char host[256];
    int port;
    int state;      /* REPL_* */
    int64_t offset; /* the processed offset, -1 while the link is down */
} replica_role_info;
void replica_role(replica_role_info *out);
/* INFO replication's fields while a replica (from role:slave on). */
void replica_info(buf *o);

/* Refusals of ordinary clients' commands while a replica: the READONLY
 * error for writes under replica-read-only, MASTERDOWN for commands that
 * need fresh data while the link is down under replica-serve-stale-data
 * no. is_write: the command (or EXEC's queue) writes; stale_ok: the
 * command has the stale flag. NULL when it may run. */
const char *replica_refusal(int is_write, int stale_ok);

/* Set by the command layer: what a full sync flushes besides the keys
 * (Functions' libraries, as Redis's emptyData). */
extern void (*replica_flush_hook)(void);

/* ---- the replication protocol's replies (replica_proto.c): pure
 * functions over bytes from the master, fuzzed by fuzz_repl ---- */

/* "+FULLRESYNC <40-char replid> <offset>" (the ID alphanumeric, the
 * offset >= 0): 0 and the fields, else -1. */
int repl_parse_fullresync(const char *line, size_t n, char replid[41], int64_t *offset);
/* The payload's header line without "\r\n": "$<len>" gives 0 and *len;
 * "$EOF:<40 bytes>" gives 1 and the mark; anything else -1. */
int repl_parse_bulk_header(const char *line, size_t n, int64_t *len, char mark[40]);
/* Finds the end of a line ("\n", a "\r" before it dropped) in p[0..n):
 * its length, or -1 when no "\n" came yet; *used gets the bytes to
 * consume. */
long repl_line_end(const char *p, size_t n, size_t *used);
#endif
