/* lazyfree.h - freeing big values and whole keyspaces off the shard threads.
 *
 * UNLINK of a value whose allocation passes LAZYFREE_BYTES, and
 * FLUSHDB/FLUSHALL ASYNC, do not free on the shard thread: the shard
 * detaches the value (or the whole table) in O(1) and queues it for one
 * background thread, so the shard's loop turn stays short however big the
 * value is (Redis does the same with its lazyfree thread). DEL, an expiry,
 * an eviction and a delete by the server (an overwrite...) do the same when
 * their directive says so (lazyfree-lazy-user-del, -expire, -eviction,
 * -server-del; all "no" by default, as in Redis), and FLUSHDB/FLUSHALL
 * without ASYNC or SYNC by lazyfree-lazy-user-flush.
 * The queue is a mutex-guarded list: it is off the request path and holds
 * only big things. Before the shard threads start (and in the embedded
 * engine) everything is freed at once. */
#ifndef SHOAL_LAZYFREE_H
#define SHOAL_LAZYFREE_H
#include "core/table.h"
#include <stddef.h>

#define LAZYFREE_BYTES (64 * 1024)

/* Lets later calls hand work to the background thread (started on first use). */
void lazyfree_enable(void);
/* 1 when a value of this size should be freed in the background, for the
 * cause of the free the calling thread set (lazyfree_cause). */
int lazyfree_wanted(size_t bytes);
/* Why the calling thread frees values now; returns the cause it replaces,
 * for the caller to put back. LF_SERVER_DEL when nothing else was set. */
enum { LF_SERVER_DEL, LF_USER_DEL, LF_UNLINK, LF_EXPIRE, LF_EVICT, LF_SYNC };
int lazyfree_cause(int cause);
/* Queues free(obj) for the background thread. */
void lazyfree_obj(void (*free_fn)(void *obj), void *obj);
/* Queues a whole keyspace table (every entry freed with entry_free). */
void lazyfree_table(table *t);
/* Objects and tables queued and not yet freed (INFO lazyfree_pending_objects). */
long lazyfree_pending(void);
/* Freed by the background thread since CONFIG RESETSTAT (INFO lazyfreed_objects). */
long lazyfree_freed(void);
void lazyfree_reset_stats(void);
/* Redis's rule by allocations (LAZYFREE_EFFORT, its threshold), for a type
 * that counts them (type_ops.effort: streams, as Redis counts theirs). */
#define LAZYFREE_EFFORT 64
int lazyfree_wanted_effort(size_t allocations);
#endif
