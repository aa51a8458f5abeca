/* client_evict.h - maxmemory-clients: disconnecting the clients that use
 * the most memory when all clients together use more than the limit.
 *
 * Each shard keeps the memory of its own connections (conn_mem: query and
 * reply buffers, MULTI queue, watched keys, subscriptions...) in one sum
 * that only its thread writes, and its evictable clients (not CLIENT
 * NO-EVICT) in size buckets, Redis's: up to 32 KB, then one per power of
 * two. The server's figure is the sum of the shards' sums, read by summing
 * them (at most once per millisecond on the request path, as evict.c sums
 * used memory).
 *
 * When a client's memory grew and the figure reaches the limit, its shard
 * evicts at its next safe point (between events and messages): the shard
 * whose largest evictable client is in the highest bucket of all closes
 * that client, reads the sums again and goes on until the figure is under
 * the limit; a shard whose clients are smaller asks the one with the
 * largest ones to evict (ce_poke) instead of closing its own. So clients go
 * from the largest down, as in Redis, and shards do not all disconnect
 * clients for the same excess. CONFIG SET maxmemory-clients (and
 * maxmemory, when the limit is a percentage) evicts at once over every
 * shard (cevict_all). docs/architecture.md ("Client eviction") has the
 * reasoning. */
#ifndef SHOAL_CLIENT_EVICT_H
#define SHOAL_CLIENT_EVICT_H
#include "shard/shard.h"
#include <stdint.h>

struct conn;

/* The limit in bytes (a percentage of maxmemory resolved, never under
 * 128 KB), or 0 when client eviction is off. Any thread. */
int64_t cevict_limit(void);
/* Clients' memory over the limit while some client can be evicted: what
 * client eviction is about to give back, which key eviction leaves to it
 * (Redis evicts clients before keys). 0 when off. Any thread. */
int64_t cevict_excess(void);
/* After c's memory may have changed (its thread): updates the shard's sum
 * and c's bucket, closes c when its unwritten replies pass the hard output
 * buffer limit (that limit goes first, as in Redis), and asks for an
 * eviction (s->ce_check) when the server may be over the limit. Costs one
 * relaxed load while maxmemory-clients is 0. */
void cevict_update(struct conn *c);
/* Evicts when asked (ce_check, ce_poke); the shard's thread, at a point
 * where closing any of its connections is safe. */
void cevict_run(shard *s);
static inline void cevict_poll(shard *s) {
    if (s->ce_check || __atomic_load_n(&s->ce_poke, __ATOMIC_RELAXED)) cevict_run(s);
}
/* Rebuilds s's sums when CONFIG SET changed the limit since (its thread,
 * each loop turn). */
void cevict_sync(shard *s);
/* c is closing (its thread, after it left the shard's list). */
void cevict_conn_closed(struct conn *c);
/* Under a lock of every shard (CONFIG SET maxmemory-clients, maxmemory):
 * evicts over every shard until the clients' memory is under the limit,
 * largest first; the chosen clients are marked (CLIENT KILL's way) and
 * their shards close them before their next message. */
void cevict_all(void);
/* Memory of s's clients (MEMORY STATS clients.normal): its sum while
 * maxmemory-clients keeps one, else conn_mem over its connections. Under a
 * hold of s or on its thread. */
int64_t cevict_clients_mem(shard *s);
/* INFO evicted_clients (any thread, approximate). */
uint64_t cevict_evicted_total(void);
#endif
