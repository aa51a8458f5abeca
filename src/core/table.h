/* table.h - the per-shard, per-database keyspace: a chained hash table of
 * entries (the chain link lives inside each entry, so a key costs one
 * allocation plus one bucket pointer).
 *
 * Growth never stops the world: the table doubles into a second bucket
 * array and moves a few buckets on every operation (and in
 * table_rehash_step from the shard's loop) until the old array is empty.
 * table_scan uses the reverse-binary cursor, so a cursor stays valid across
 * growth and shrinking: every key present for the whole scan is returned at
 * least once. Only the owning shard's thread (or a transaction that holds
 * the shard's lock) may call these functions. */
#ifndef SHOAL_TABLE_H
#define SHOAL_TABLE_H
#include "core/entry.h"
#include <stddef.h>
#include <stdint.h>

typedef struct table table;

table *table_create(void);
/* Frees the table and, through free_entry, every entry. */
void table_destroy(table **t, void (*free_entry)(entry *e));
size_t table_size(const table *t);
size_t table_buckets(const table *t);
/* The link (bucket slot or a predecessor's next field) that points at the
 * entry holding key, or NULL. Valid until the next call on this table. */
entry **table_link(table *t, const char *key, size_t klen);
/* Prefetch hints for a lookup soon of a key whose hash_bytes() is h: its
 * bucket first, then, once that is in cache, the first entry of its chain.
 * A batch of lookups that gives these hints a few lookups ahead waits for
 * several cache misses at once instead of one after another. */
void table_prefetch_bucket(const table *t, uint64_t h);
void table_prefetch_entry(const table *t, uint64_t h);
/* Adds e; its key must not be in the table. */
void table_insert(table *t, entry *e);
/* Removes the entry at link (from table_link) and returns it. */
entry *table_unlink(table *t, entry **link);
/* Puts n in the place of the entry at link (same key); returns the old one.
 * n must be a different block than the old entry. */
entry *table_replace(table *t, entry **link, entry *n);
/* Calls fn for the entries of one cursor step; returns the next cursor
 * (0 when done). fn must not change the table. */
uint64_t table_scan(table *t, uint64_t cursor, void (*fn)(void *ud, entry *e), void *ud);
/* A random entry, or NULL when empty. */
entry *table_random(table *t, uint64_t (*rnd)(void));
/* Up to max entries from consecutive buckets after a random one (seed), for
 * eviction's sampling: cheaper than max table_random calls, and as Redis's
 * dictGetSomeKeys it jumps elsewhere after a run of empty buckets. At
 * most 10 * max buckets are visited, so fewer may come back. */
int table_sample(table *t, uint64_t seed, entry **out, int max);
/* Called before a table doubles, with the bytes the new bucket array takes
 * and the fill (entries per bucket); returning 0 postpones the growth until
 * the fill passes 1.618 (maxmemory: a rehash must not push the server over
 * its limit). NULL: always grow. Set before the shards start. */
extern int (*table_grow_allowed)(size_t bytes, double fill);
/* Moves up to n buckets of an ongoing rehash; returns 1 while more remain. */
int table_rehash_step(table *t, int n);
/* An empty table takes buckets for n entries at once (loading a file
 * whose RESIZEDB says how many keys follow). */
void table_reserve(table *t, size_t n);
/* Shrinks when the fill dropped below 1/8 (called from the shard's cron). */
void table_maybe_shrink(table *t);
/* Bytes used by the bucket arrays. */
size_t table_overhead(const table *t);
#endif
