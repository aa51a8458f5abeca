/* watch.h - what WATCH compares: version counters that every write bumps.
 *
 * A key's counter is one of WATCH_SLOTS atomic counters, picked by a hash
 * of (database, key). While any session watches (watch_sessions > 0), a
 * write command bumps the counters of the keys it names before it runs
 * (the dispatcher, the blocked-client serve path), so a WATCH that read a
 * counter and an EXEC that finds it unchanged bracket no write to that key
 * on any shard. Two keys sharing a counter can make an EXEC fail that Redis
 * would run: the conservative side of optimistic locking, rare with 2^16
 * slots.
 *
 * Expiry is told apart, as Redis 7.0 does: deleting a key that was already
 * expired when it was watched is no change. A deletion by expiry (lazy or
 * active) does not bump the key's counter; it raises the slot's
 * `expired_after` to the key's deadline, and EXEC fails when that is later
 * than the WATCH (the key was live then). FLUSHDB, FLUSHALL and SWAPDB bump
 * only keys that are live (watch_touch_live): a flushed absent or stale key
 * is no change either. */
#ifndef SHOAL_WATCH_H
#define SHOAL_WATCH_H
#include <stddef.h>
#include <stdint.h>

#define WATCH_SLOTS (1u << 16)

struct db;
extern int watch_sessions; /* atomic: sessions holding watches */

/* The counter slot of key in database dbid, and its current value. */
uint32_t watch_slot(int dbid, const char *key, size_t klen);
uint64_t watch_version(uint32_t slot);
/* The latest deadline (ms) of a key of this slot deleted by expiry. */
int64_t watch_expired_after(uint32_t slot);
/* A write to the key. */
void watch_bump(int dbid, const char *key, size_t klen);
/* Takes back a watch_bump of this same call for a key it did not change
 * after all (SMOVE of a member the destination has): the version comes
 * back unless another write moved it meanwhile. */
void watch_unbump(int dbid, const char *key, size_t klen);
/* The key, whose deadline was `deadline`, was deleted by expiry. */
void watch_expired(int dbid, const char *key, size_t klen, int64_t deadline);
/* Every key of d that is live at `now` changes (FLUSHDB, SWAPDB): bumps
 * it in d's database and, when other_dbid >= 0, in that one too (SWAPDB
 * moves it there). Nothing while no session watches. The caller owns d. */
void watch_touch_live(struct db *d, int other_dbid, int64_t now);
/* Allocates the counters (before the first WATCH; any thread). */
void watch_init(void);
#endif
