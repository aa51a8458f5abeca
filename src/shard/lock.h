/* lock.h - a shard's key intents: for each (database, key) that a
 * transaction part queued or running on this shard names, how many parts
 * want it shared (reads) and exclusive (writes). A command outside any
 * transaction may run when its keys have no conflicting intent (a write:
 * none at all; a read: no exclusive one); tx.c decides when a part runs.
 *
 * Keys are known by a 64-bit hash of (database, key) only. Two keys with one
 * hash share their counts, which can only make something wait that need
 * not, never the reverse. Open addressing with linear probing; a cell is in
 * use while one of its counts is not zero. Owned by one shard thread. */
#ifndef SHOAL_LOCK_H
#define SHOAL_LOCK_H
#include <stddef.h>
#include <stdint.h>

typedef struct lock_cell {
    uint64_t h;
    uint32_t s, x; /* parts wanting the key shared / exclusive */
} lock_cell;

typedef struct lock_tab {
    lock_cell *cells;
    uint32_t cap, n; /* cap: a power of two (0 before the first add) */
} lock_tab;

/* The hash that names key of database dbid. */
uint64_t lock_hash(int dbid, const char *key, size_t klen);
/* Adds one intent (x: exclusive) on h / removes one added before. */
void lock_add(lock_tab *t, uint64_t h, int x);
void lock_del(lock_tab *t, uint64_t h, int x);
/* 1 when an access to h (x: a write) conflicts with an intent. */
int lock_conflicts(const lock_tab *t, uint64_t h, int x);
void lock_tab_free(lock_tab *t);
#endif
