/* watch.h - what WATCH compares: version counters that every write bumps.
 *
 * A key's counter is one of WATCH_SLOTS atomic counters, picked by a hash
 * of (database, key); each database also has one counter for FLUSHDB,
 * FLUSHALL and SWAPDB. While any session watches (watch_sessions > 0), a
 * write command bumps the counters of the keys it names before it runs
 * (the dispatcher, the blocked-client serve path, expiry deletions), so a
 * WATCH that read a counter and an EXEC that finds it unchanged bracket no
 * write to that key on any shard. Two keys sharing a counter can make an
 * EXEC fail that Redis would run: the conservative side of optimistic
 * locking, rare with 2^16 slots. */
#ifndef SHOAL_WATCH_H
#define SHOAL_WATCH_H
#include <stddef.h>
#include <stdint.h>

#define WATCH_SLOTS (1u << 16)

extern int watch_sessions; /* atomic: sessions holding watches */

/* The counter slot of key in database dbid, and its current value. */
uint32_t watch_slot(int dbid, const char *key, size_t klen);
uint64_t watch_version(uint32_t slot);
uint64_t watch_db_version(int dbid);
/* A write to the key / to the whole database (-1: every database). */
void watch_bump(int dbid, const char *key, size_t klen);
void watch_bump_db(int dbid);
/* Allocates the counters (before the first WATCH; any thread). */
void watch_init(void);
#endif
