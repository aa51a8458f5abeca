/* master.h - the master side of replication: the replication stream, its
 * backlog, and the replicas attached to it (Redis 7.0's SYNC/PSYNC).
 *
 * The stream is the AOF writer's stream (persist/aof.h, as a sink): every
 * shard's logged commands, committed in serialization order under the
 * writer's lock, with a SELECT where the database changes. It goes into
 * one buffer of blocks that every replica reads at its own offset; the
 * buffer keeps what the slowest replica has not read and at least
 * repl-backlog-size bytes of history (Redis 7.0's shared replication
 * buffer), which PSYNC continues from.
 *
 *   shard 0 --.
 *   shard 1 --+-> [writer lock] -> file          (appendonly yes)
 *   shard 2 --'                 -> stream blocks -> replica A (on its shard)
 *                                                -> replica B
 *
 * A full sync takes the cut under a lock of every shard (SYNC/PSYNC are
 * CMD_ALLSHARDS): a fork-free background save to dbfilename starts there
 * (persist/snapshot.h) and the stream is fed from that point. The replica's
 * own shard sends "$<size>" and the file once the save ends, then the
 * stream from the cut. Nothing here blocks a shard: each replica's shard
 * copies what its socket can take, a bounded amount per loop turn. */
#ifndef SHOAL_REPL_MASTER_H
#define SHOAL_REPL_MASTER_H
#include "lib/buf.h"
#include <stdint.h>

struct shard;
struct conn;

/* PSYNC/SYNC on connection c (the caller holds every shard). psync: the
 * PSYNC form (replid, offset: what the replica asks to continue from;
 * replid "?" for a full sync). Writes the reply's first line into out
 * (+FULLRESYNC / +CONTINUE, nothing for SYNC) and turns c into a replica;
 * -1 with an error reply in err when it can't. */
int repl_attach(struct conn *c, const int *ids, int n, int psync, const char *replid, int64_t offset, int64_t now_ms,
                buf *out, char *err, size_t errlen);
/* REPLCONF GETACK from our own master (the replica side sets it). */
struct session;
extern void (*repl_getack_hook)(struct session *s);
/* REPLCONF from a replica: listening-port, ip-address, capa, ack. */
void repl_set_listening_port(struct conn *c, int port);
void repl_set_ip(struct conn *c, const char *ip);
void repl_set_capa_psync2(struct conn *c);
void repl_ack(struct conn *c, int64_t offset, int64_t now_ms);
/* 1 when c is an attached replica. */
int repl_conn_attached(const struct conn *c);

/* The shard loop, each turn on every shard with replicas: copies stream
 * bytes (and the RDB payload) into its replicas' output. */
void repl_pump(struct shard *sh);
/* A replica connection closed (the owner's thread). */
void repl_conn_closed(struct conn *c);
/* Shard 0's cron: PING into the stream every repl-ping-replica-period,
 * the backlog freed after repl-backlog-ttl without replicas. */
void repl_cron(struct shard *sh);

/* min-replicas-to-write: 1 when writes may go on (enough replicas acked
 * within min-replicas-max-lag seconds, or the option is off). */
int repl_enough_good_replicas(void);
#define NOREPLICAS_ERR "NOREPLICAS Not enough good replicas to write."

/* ROLE's master form: the stream's offset and the online replicas (at most
 * max) with their ip, listening port and acknowledged offset. */
typedef struct repl_peer_info {
    char ip[64];
    int port;
    int64_t ack;
} repl_peer_info;
int repl_peers(repl_peer_info *out, int max, int64_t *offset);
/* Memory of replication (INFO memory; eviction leaves not_counted out). */
typedef struct repl_mem {
    int64_t total_buffers; /* the stream's blocks (mem_total_replication_buffers) */
    int64_t backlog;       /* of those, the backlog's part (mem_replication_backlog) */
    int64_t replicas;      /* the replicas' part and their connections (mem_clients_slaves) */
    int64_t replica_conns; /* the replicas' connections (conn_mem's measure) */
    int64_t not_counted;   /* mem_not_counted_for_evict's replication part */
} repl_mem;
void repl_memory(repl_mem *m);
/* The master lines of INFO replication. */
void repl_info(buf *out);
/* At startup: a new replication id. */
void repl_init(void);
#endif
