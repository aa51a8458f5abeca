/* prefetch.h - lookahead over a batch of key commands.
 *
 * A lookup in a large keyspace waits for two cache misses, the bucket and
 * then the entry, one lookup after another. A batch that knows its next
 * commands (a pipeline's in the read buffer, a remote batch's items) gives
 * the hints PREFETCH_AHEAD commands ahead: the bucket of command j when
 * command j - PREFETCH_AHEAD runs, the first entry of its chain (the
 * bucket is in cache by then) when command j - PREFETCH_AHEAD / 2 runs,
 * so that the misses of several commands overlap. Only hints: a wrong key
 * (a command whose first argument is not its key) costs a hash and a
 * cache line, nothing else. */
#ifndef SHOAL_SHARD_PREFETCH_H
#define SHOAL_SHARD_PREFETCH_H

#include "shard/shard.h"
#include "shard/db.h"
#include "server/config.h"

#define PREFETCH_AHEAD 8

typedef struct prefetch_ring {
    uint64_t h[PREFETCH_AHEAD];
    /* the database plus one, 0: no hint for that command. Not the table:
     * a command between the two hints may replace it (FLUSHDB, SWAPDB) */
    uint32_t db1[PREFETCH_AHEAD];
} prefetch_ring;

static inline void prefetch_none(prefetch_ring *r, uint32_t j) { r->db1[j % PREFETCH_AHEAD] = 0; }

/* Command j names key in database dbid, a key of s's: its bucket. */
static inline void prefetch_key_here(prefetch_ring *r, uint32_t j, shard *s, uint32_t dbid, const char *key,
                                     size_t klen) {
    prefetch_none(r, j);
    if (dbid >= (uint32_t)cfg.databases_i) return;
    const table *t = s->dbs[dbid].t;
    if (!t || !table_size(t)) return;
    r->h[j % PREFETCH_AHEAD] = hash_bytes(key, klen);
    r->db1[j % PREFETCH_AHEAD] = dbid + 1;
    table_prefetch_bucket(t, r->h[j % PREFETCH_AHEAD]);
}

/* Command j names key in database dbid, a key of shard owner's: its
 * bucket, if that is s. */
static inline void prefetch_key(prefetch_ring *r, uint32_t j, shard *s, uint32_t dbid, const char *key, size_t klen,
                                int owner) {
    if (owner == s->id) prefetch_key_here(r, j, s, dbid, key, klen);
    else prefetch_none(r, j);
}

/* Command j's chain entry (its bucket hint went out earlier). */
static inline void prefetch_entry(const prefetch_ring *r, uint32_t j, shard *s) {
    uint32_t d = r->db1[j % PREFETCH_AHEAD];
    if (!d) return;
    const table *t = s->dbs[d - 1].t;
    if (t && table_size(t)) table_prefetch_entry(t, r->h[j % PREFETCH_AHEAD]);
}

/* One command over several keys (MGET, MSET, DEL, EXISTS ...): the
 * buckets of its keys at argv[pos[0..n)] (n <= PREFETCH_MANY), then their
 * chains' first entries, before it runs, so that the misses of its
 * lookups overlap. A multi-key command's keys are all this shard's (a
 * part carries only its shard's); a key that is not costs a hash and a
 * line. */
#define PREFETCH_MANY 16
static inline void prefetch_keys(shard *s, uint32_t dbid, const char *const *argv, const size_t *argl, const int *pos,
                                 int n) {
    if (dbid >= (uint32_t)cfg.databases_i || n > PREFETCH_MANY) return;
    const table *t = s->dbs[dbid].t;
    if (!t || !table_size(t)) return;
    uint64_t h[PREFETCH_MANY];
    for (int k = 0; k < n; k++) {
        h[k] = hash_bytes(argv[pos[k]], argl[pos[k]]);
        table_prefetch_bucket(t, h[k]);
    }
    for (int k = 0; k < n; k++) table_prefetch_entry(t, h[k]);
}

#endif
