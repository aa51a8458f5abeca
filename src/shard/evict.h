/* evict.h - maxmemory: which keys go when the server uses more memory than
 * `maxmemory`, and the per-key access data that choice is made on.
 *
 * The limit is for the whole server; each shard enforces it on its own
 * keys, with no lock: it compares its own allocation counter (exact, its
 * thread's slot) plus the other threads' counters as it last summed them
 * (at most once per millisecond) against the limit, and evicts from its own
 * databases until that sum is under it. docs/architecture.md ("maxmemory")
 * has the reasoning and the measurements.
 *
 * Choosing a key follows Redis 7.0's policies: LRU and LFU pick the best of
 * a pool of 16 candidates refilled from `maxmemory-samples` sampled keys per
 * database, TTL the nearest deadline, random a random key; volatile-*
 * consider only keys with an expire. The access data lives in the entry's
 * 24-bit lru field (entry.h): a seconds clock, or under LFU minutes + a
 * logarithmic counter, so eviction adds no bytes per key.
 *
 * An evicted key is logged to the AOF as DEL, bumps WATCH, and is passed
 * to the hook set with evict_set_hook (keyspace notifications). */
#ifndef SHOAL_EVICT_H
#define SHOAL_EVICT_H
#include "shard/shard.h"
#include <stdint.h>

/* Policy bits (evict_policy). */
enum {
    EVP_LRU = 1,
    EVP_LFU = 2,
    EVP_TTL = 4,
    EVP_RANDOM = 8,
    EVP_VOLATILE = 16, /* only keys with an expire; else all keys */
    EVP_NONE = 32,     /* noeviction */
};
/* evict_run's answers, as Redis's performEvictions. */
enum { EVICT_OK = 0, EVICT_RUNNING = 1, EVICT_FAIL = -1 };

#define OOM_ERR "OOM command not allowed when used memory > 'maxmemory'."

/* Reads maxmemory-policy from cfg (startup, and CONFIG SET's apply hook,
 * under every shard's lock). */
void evict_policy_load(void);
/* The current policy bits. Any thread. */
int evict_policy(void);

/* Access: a lookup of e on shard s updates its LRU clock or LFU counter. */
void evict_lfu_touch(shard *s, entry *e);
static inline void evict_touch(shard *s, entry *e) {
    if (__atomic_load_n(&entry_lfu, __ATOMIC_RELAXED))
        evict_lfu_touch(s, e);
    else
        entry_touch(e, s->lru_clock);
}
/* The LFU counter of e after the decay lfu-decay-time asks for (OBJECT
 * FREQ); meaningful only while the field holds LFU data. */
unsigned evict_lfu_count(const entry *e, int64_t now_ms);

/* Before a command on shard s's own thread (not inside a transaction):
 * when the server is over maxmemory, evicts s's keys until it is not, for
 * at most the time maxmemory-eviction-tenacity allows (the rest continues
 * in later loop turns: EVICT_RUNNING). EVICT_FAIL: still over and nothing
 * may go (noeviction, no candidate key): deny-oom commands get OOM_ERR. */
int evict_run(shard *s);
/* 1 when the server is over maxmemory (the shard's estimate), without
 * evicting. */
int evict_over(shard *s);
/* The same, under a lock of every shard (CONFIG SET maxmemory): candidates
 * from every shard's databases, the exact usage, no time limit. */
int evict_run_all(void);
/* 1 when the server is over maxmemory and the shards of mask (those a
 * command would run on) have no key the policy may evict while another
 * shard has (published counts): the command then takes every shard and
 * evicts with evict_run_all before it runs, as Redis evicts any key before
 * any command (the keys' invalidations precede its reply). */
int evict_wants_all(uint64_t mask);
/* From the shard's loop: continues an eviction that ran out of time, and
 * (cron) catches up when other shards' keys filled the memory. */
void evict_step(shard *s);
/* Publishes s's key counts for the other shards (its thread, each loop
 * turn while maxmemory is set, before its replies leave). */
void evict_publish(shard *s);
/* used_memory minus what eviction does not count (AOF buffers), exact
 * (sums every thread's counter). Any thread. */
int64_t evict_used_memory(void);
/* INFO mem_not_counted_for_evict. */
int64_t evict_not_counted(void);
/* The replication buffers' part of it (repl/master.c sets it). */
extern int64_t (*evict_not_counted_hook)(void);
/* The hook for each evicted key, before it is deleted (NULL: none). Set at
 * startup; called on the thread that evicts, for a key of database d. */
typedef void (*evict_key_fn)(db *d, const char *key, size_t klen);
void evict_set_hook(evict_key_fn fn);
/* The shard's eviction pool, made when its thread starts (not at its first
 * eviction, when the memory it takes would make one more). */
void evict_prepare(shard *s);
/* Registers the table growth check (table.h) for maxmemory. */
void evict_init(void);
#endif
