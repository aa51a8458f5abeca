/* evict.c - see evict.h.
 *
 *   shard s, before a command:   mine (own counter) + others (summed <= 1 ms ago)
 *                                  > maxmemory ?  -> evict s's own keys
 *   pool (16 slots, ascending score; the last is the best victim):
 *     [ idle 3 | idle 9 | ... | idle 812 ]  <- refilled from samples of each db
 */
#include "shard/evict.h"
#include "shard/client_evict.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "server/config.h"
#include "shard/latency.h"
#include "shard/lazyfree.h"
#include "shard/pause.h"
#include "shard/watch.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POOL_SIZE 16
#define SAMPLES_MAX 64 /* maxmemory-samples above this samples 64 per database */

typedef struct pool_slot {
    uint64_t score; /* higher goes first: idle ms, 255 - LFU count, or time to the deadline reversed */
    int used;
    int shard, dbid;
    size_t klen, cap;
    char *key;
} pool_slot;

typedef struct evict_pool {
    pool_slot s[POOL_SIZE];
    unsigned next_db; /* random policies: where the round robin over databases resumes */
} evict_pool;

static int policy = EVP_NONE;
static evict_key_fn key_hook;
static evict_pool *global_pool; /* evict_run_all, under every shard's lock */
static evict_pool *pool_new(void);

/* ---- policy ---- */

void evict_policy_load(void) {
    const char *p = cfg.maxmemory_policy_s ? cfg.maxmemory_policy_s : "noeviction";
    int v = EVP_NONE;
    if (!strncmp(p, "volatile-", 9) || !strncmp(p, "allkeys-", 8)) {
        const char *kind = strchr(p, '-') + 1;
        v = !strcmp(kind, "lru")   ? EVP_LRU
            : !strcmp(kind, "lfu") ? EVP_LFU
            : !strcmp(kind, "ttl") ? EVP_TTL
                                   : EVP_RANDOM;
        if (p[0] == 'v') v |= EVP_VOLATILE;
    }
    __atomic_store_n(&policy, v, __ATOMIC_RELAXED);
    __atomic_store_n(&entry_lfu, (v & EVP_LFU) != 0, __ATOMIC_RELAXED);
}

int evict_policy(void) { return __atomic_load_n(&policy, __ATOMIC_RELAXED); }

void evict_set_hook(evict_key_fn fn) { key_hook = fn; }

/* ---- LFU (Redis's counter: logarithmic increments, decay per period) ---- */

static inline uint32_t lfu_minutes(int64_t ms) { return (uint32_t)(ms / 60000) & 0xffff; }

unsigned evict_lfu_count(const entry *e, int64_t now_ms) {
    uint32_t v = entry_lru(e), ldt = v >> 8, counter = v & 255, now = lfu_minutes(now_ms);
    uint32_t elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;
    int64_t decay = cfg_get(lfu_decay_time);
    uint64_t periods = decay > 0 ? elapsed / (uint64_t)decay : 0;
    return periods >= counter ? 0 : counter - (unsigned)periods;
}

void evict_lfu_touch(shard *s, entry *e) {
    unsigned c = evict_lfu_count(e, s->now_ms);
    if (c < 255) {
        double r = (double)(shard_rand(s) >> 11) * 0x1p-53;
        double base = c > LFU_INIT_VAL ? (double)(c - LFU_INIT_VAL) : 0.0;
        if (r < 1.0 / (base * (double)cfg_get(lfu_log_factor) + 1.0)) c++;
    }
    entry_touch(e, (lfu_minutes(s->now_ms) << 8) | c);
}

/* ---- memory ---- */

int64_t (*evict_not_counted_hook)(void);

int64_t evict_not_counted(void) {
    int64_t n = (int64_t)aof_buffered_bytes();
    return evict_not_counted_hook ? n + evict_not_counted_hook() : n;
}

int64_t evict_used_memory(void) { return mem_used() - evict_not_counted() - cevict_excess(); }

static void own_counts(shard *s, uint64_t *keys, uint64_t *vol) {
    uint64_t k = 0, v = 0;
    for (int i = 0; i < (int)cfg.databases_i; i++) {
        k += table_size(s->dbs[i].t);
        v += s->dbs[i].expires;
    }
    *keys = k;
    *vol = v;
}

void evict_publish(shard *s) {
    uint64_t k, v;
    own_counts(s, &k, &v);
    __atomic_store_n(&s->ev_keys, k, __ATOMIC_RELAXED);
    __atomic_store_n(&s->ev_volatile, v, __ATOMIC_RELAXED);
}

static void sum_counts(shard *s) {
    uint64_t ak = 0, av = 0;
    for (int i = 0; i < nshards; i++) {
        ak += __atomic_load_n(&shards[i]->ev_keys, __ATOMIC_RELAXED);
        av += __atomic_load_n(&shards[i]->ev_volatile, __ATOMIC_RELAXED);
    }
    s->ev_all_keys = ak;
    s->ev_all_volatile = av;
}

/* The candidate keys of this shard and of all (published), for the policy. */
static void shares(shard *s, int pol, uint64_t *own, uint64_t *all) {
    uint64_t k, v;
    own_counts(s, &k, &v);
    int vol = (pol & EVP_VOLATILE) != 0;
    *own = vol ? v : k;
    *all = vol ? s->ev_all_volatile : s->ev_all_keys;
    if (*all < *own) *all = *own;
}

/* At most once per millisecond a shard sums every thread's counter (reading
 * them on each command would cost a cache miss per thread), publishes its
 * key counts, and, when the sum is over the limit, takes on its share of
 * the excess (by its share of the candidate keys) as a debt it pays by
 * evicting before its commands in that millisecond. Paying the whole
 * excess, or measuring the payment with its own counter, made some shards
 * evict far more than others: a thread's counter is not its data (the
 * connection's shard frees the reply buffers the other shards grew, so its
 * counter drifts down and theirs up), and their heaps grew apart. */
static void refresh(shard *s) {
    int64_t mine = mem_used_mine(), max = cfg_get(maxmemory);
    s->ev_others = evict_used_memory() - mine;
    s->ev_others_ms = s->now_ms;
    s->ev_mine_at = mine;
    evict_publish(s);
    sum_counts(s);
    int64_t excess = mine + s->ev_others - max;
    if (excess <= 0) {
        s->ev_debt = 0;
        return;
    }
    /* A key evicted pays more than a small share: the rest is kept as a
     * credit against the next shares, so N shards over by one key do not
     * evict N keys. */
    uint64_t own, all;
    shares(s, evict_policy(), &own, &all);
    int64_t share = all ? (int64_t)((double)excess * (double)own / (double)all) : excess;
    s->ev_debt = (s->ev_debt < 0 ? s->ev_debt : 0) + (share > 0 ? share : 1);
}

static int64_t estimate(shard *s) {
    if (s->ev_others_ms != s->now_ms) refresh(s);
    return mem_used_mine() + s->ev_others;
}

/* Own growth that makes a shard look again within the millisecond (one
 * large value written, then a command right after it, as Redis evicts
 * before that command). */
#define REFRESH_GROWTH (16 * 1024)

/* 1 while the shard owes evictions in this millisecond. */
static int owes(shard *s) {
    if (s->ev_others_ms != s->now_ms || mem_used_mine() > s->ev_mine_at + REFRESH_GROWTH) refresh(s);
    return s->ev_debt > 0;
}

/* Redis's evictionTimeLimitUs: linear to 500 us at 10, then 15 % steps;
 * 100 is unlimited. */
static int64_t time_limit_us(void) {
    int64_t t = cfg_get(maxmemory_eviction_tenacity);
    if (t <= 10) return 50 * t;
    if (t < 100) return (int64_t)(500.0 * pow(1.15, (double)t - 10.0));
    return INT64_MAX;
}

static int table_grow_check(size_t bytes, double fill) {
    (void)fill;
    int64_t max = cfg_get(maxmemory);
    return max <= 0 || evict_used_memory() + (int64_t)bytes <= max;
}

void evict_init(void) {
    evict_policy_load();
    if (!global_pool) global_pool = pool_new();
    table_grow_allowed = table_grow_check;
}

/* ---- candidates ---- */

static uint64_t score(const entry *e, int pol, int64_t now_ms) {
    if (pol & EVP_LRU) {
        uint32_t now = (uint32_t)(now_ms / 1000) & LRU_CLOCK_MAX, then = entry_lru(e);
        return (uint64_t)(now >= then ? now - then : now + (LRU_CLOCK_MAX - then)) * 1000;
    }
    if (pol & EVP_LFU) return 255 - evict_lfu_count(e, now_ms);
    return UINT64_MAX - (uint64_t)entry_expire(e); /* TTL: the nearest deadline first */
}

/* Into the pool, kept in ascending score, as Redis's evictionPoolPopulate:
 * a worse candidate than all 16 is dropped; a better one pushes out the
 * worst. The slot buffer that leaves is reused for the key. */
static void pool_insert(evict_pool *p, uint64_t sc, int sh, int dbid, const entry *e) {
    pool_slot *s = p->s;
    int k = 0;
    while (k < POOL_SIZE && s[k].used && s[k].score < sc)
        k++;
    if (k == 0 && s[POOL_SIZE - 1].used) return;
    if (k == POOL_SIZE || s[k].used) {
        pool_slot spare;
        if (!s[POOL_SIZE - 1].used) { /* room on the right: shift right from k */
            spare = s[POOL_SIZE - 1];
            memmove(s + k + 1, s + k, sizeof *s * (size_t)(POOL_SIZE - k - 1));
        } else { /* full: drop the worst (slot 0), shift left up to k - 1 */
            k--;
            spare = s[0];
            memmove(s, s + 1, sizeof *s * (size_t)k);
        }
        s[k] = spare;
    }
    size_t klen;
    const uint8_t *key = entry_keyp(e, &klen);
    if (s[k].cap < klen) {
        s[k].cap = klen < 255 ? 255 : klen;
        s[k].key = zrealloc(s[k].key, s[k].cap);
    }
    memcpy(s[k].key, key, klen);
    s[k].klen = klen;
    s[k].score = sc;
    s[k].shard = sh;
    s[k].dbid = dbid;
    s[k].used = 1;
}

/* Up to `want` sampled entries of d (only ones with an expire when
 * volatile). Keys with an expire live in the one table, so volatile
 * sampling draws more rounds when they are a small share. */
static _Thread_local shard *rnd_shard;
static uint64_t rnd_fn(void) { return shard_rand(rnd_shard); }

static int sample(shard *self, db *d, int volatile_only, entry **out, int want) {
    if (!volatile_only) {
        int n = table_sample(d->t, shard_rand(self), out, want);
        if (n == 0 && table_size(d->t)) { /* a sparse table: the buckets visited were empty */
            rnd_shard = self;
            out[0] = table_random(d->t, rnd_fn);
            n = 1;
        }
        return n;
    }
    size_t size = table_size(d->t);
    int rounds = d->expires ? (int)(1 + 2 * size / d->expires) : 0, got = 0;
    if (rounds > 64) rounds = 64;
    entry *tmp[SAMPLES_MAX];
    for (int r = 0; r < rounds && got < want; r++) {
        int n = table_sample(d->t, shard_rand(self), tmp, want);
        for (int i = 0; i < n && got < want; i++)
            if (entry_has_ttl(tmp[i])) out[got++] = tmp[i];
    }
    return got;
}

static int samples_wanted(void) {
    int64_t n = cfg_get(maxmemory_samples);
    return n < 1 ? 1 : n > SAMPLES_MAX ? SAMPLES_MAX : (int)n;
}

/* Databases to take candidates from: shard `from`..`to`-1, every db. */
static db *db_at(int sh, int dbid) { return &shards[sh]->dbs[dbid]; }

static size_t candidates(const db *d, int volatile_only) { return volatile_only ? d->expires : table_size(d->t); }

/* The victim's link and database, or NULL when there is none. */
static entry **pick(shard *self, evict_pool *p, int from, int to, int pol, db **dp) {
    int ndb = (int)cfg.databases_i, vol = (pol & EVP_VOLATILE) != 0, want = samples_wanted();
    entry *got[SAMPLES_MAX];
    int64_t now = self->now_ms;
    if (pol & EVP_RANDOM) {
        unsigned total = (unsigned)((to - from) * ndb);
        for (unsigned i = 0; i < total; i++) {
            unsigned j = (++p->next_db) % total;
            db *d = db_at(from + (int)(j / (unsigned)ndb), (int)(j % (unsigned)ndb));
            if (!candidates(d, vol)) continue;
            int n = sample(self, d, vol, got, want);
            if (!n) continue;
            entry *e = got[shard_rand(self) % (uint64_t)n];
            size_t klen;
            const char *key = (const char *)entry_keyp(e, &klen);
            *dp = d;
            return table_link(d->t, key, klen);
        }
        return NULL;
    }
    /* LRU, LFU, TTL: refill the pool from every database until a listed key
     * still exists (Redis loops the same way). Volatile sampling may find
     * nothing though keys with expires exist; after 8 empty refills the
     * eviction gives up this time. */
    for (int tries = 0; tries < 8; tries++) {
        size_t total = 0;
        for (int sh = from; sh < to; sh++)
            for (int dbid = 0; dbid < ndb; dbid++) {
                db *d = db_at(sh, dbid);
                size_t c = candidates(d, vol);
                if (!c) continue;
                total += c;
                int n = sample(self, d, vol, got, want);
                for (int i = 0; i < n; i++)
                    pool_insert(p, score(got[i], pol, now), sh, dbid, got[i]);
            }
        if (!total) return NULL;
        for (int k = POOL_SIZE - 1; k >= 0; k--) {
            pool_slot *s = &p->s[k];
            if (!s->used) continue;
            s->used = 0;
            db *d = db_at(s->shard, s->dbid);
            entry **l = table_link(d->t, s->key, s->klen);
            if (l && (!vol || entry_has_ttl(*l))) {
                *dp = d;
                return l;
            }
        }
    }
    return NULL;
}

/* Deletes the victim; returns the bytes handed to the lazyfree thread
 * (they leave the counters later). */
/* Deletes the key at l; returns the bytes its deletion alone gave back
 * (lazily freed values counted at their size). What telling about it
 * costs (invalidation messages, the logged DEL) is left out, as Redis
 * leaves it out: counting it, the loop would chase its own messages. */
static int64_t evict_key(db *d, entry **l) {
    entry *e = *l;
    size_t klen;
    const char *key = (const char *)entry_keyp(e, &klen);
    if (key_hook) key_hook(d, key, klen);
    aof_feed_expired(d, key, klen); /* AOF: logged as DEL, as Redis propagates an eviction */
    watch_bump(d->id, key, klen);
    int64_t before = mem_used_mine(), lazy = 0;
    int was = lazyfree_cause(LF_EVICT);
    if (entry_kind(e) == EK_OBJ) {
        const type_ops *o = db_type_ops(entry_type(e));
        size_t u = o && o->usage ? o->usage(entry_obj(e)) : 0;
        if (lazyfree_wanted(u)) lazy = (int64_t)u;
    }
    db_delete_link(d, l);
    lazyfree_cause(was);
    if (d->owner) d->owner->stat_evicted++;
    return before - mem_used_mine() + lazy;
}

/* Evicts from shards from..to-1 until the usage is under the limit.
 * global: under every shard's lock, exact usage each time. */
static int run(shard *self, int from, int to, evict_pool *p, int global) {
    int64_t max = cfg_get(maxmemory);
    if (max <= 0) {
        self->ev_pending = 0;
        return EVICT_OK;
    }
    int pol = evict_policy();
    int64_t tofree;
    if (global) {
        int64_t used = evict_used_memory();
        if (used <= max) {
            self->ev_pending = 0;
            return EVICT_OK;
        }
        if (pol & EVP_NONE) return EVICT_FAIL;
        tofree = used - max;
    } else {
        if (pol & EVP_NONE) return estimate(self) > max ? EVICT_FAIL : EVICT_OK;
        if (!owes(self)) {
            self->ev_pending = 0;
            return EVICT_OK;
        }
        uint64_t own, all;
        shares(self, pol, &own, &all);
        if (own == 0) { /* others' keys, if any, go in their turn (their next command or cron) */
            evict_publish(self);
            sum_counts(self);
            shares(self, pol, &own, &all);
            return all ? EVICT_OK : EVICT_FAIL;
        }
        tofree = self->ev_debt;
    }
    int64_t freed = 0, limit = time_limit_us();
    int64_t t0 = mono_us(), lat = latency_clock();
    long keys = 0;
    int result = EVICT_OK;
    for (;;) {
        db *d;
        entry **l = pick(self, p, from, to, pol, &d);
        if (!l) {
            result = EVICT_FAIL;
            break;
        }
        if (!global) self->ev_debt -= (int64_t)entry_usage(*l);
        freed += evict_key(d, l);
        keys++;
        if (global ? freed >= tofree : self->ev_debt <= 0) break;
        if (keys % 16 == 0) {
            if (global && evict_used_memory() <= max) break;
            if (mono_us() - t0 > limit) {
                result = EVICT_RUNNING; /* the shards' loops go on with it */
                break;
            }
        }
    }
    if (lat) latency_add_sample_if_needed("eviction-cycle", (mono_us() - lat) / 1000);
    if (result == EVICT_FAIL && !global) {
        /* This shard ran out of candidates: when others have some, they go
         * in the others' turn (their next command or cron tick). */
        uint64_t own, all;
        evict_publish(self);
        sum_counts(self);
        shares(self, pol, &own, &all);
        if (all > own) result = EVICT_OK;
    }
    if (result == EVICT_FAIL && lazyfree_pending() > 0) {
        /* Out of candidates while big values are still being freed: wait a
         * little for them, as Redis does. */
        usleep((useconds_t)(limit < 1000 ? limit : 1000));
        if (global ? evict_used_memory() <= max : estimate(self) <= max) result = EVICT_OK;
    }
    if (global) {
        for (int i = from; i < to; i++)
            shards[i]->ev_pending = result == EVICT_RUNNING;
    } else {
        self->ev_pending = result == EVICT_RUNNING;
    }
    return result;
}

static evict_pool *pool_new(void) {
    evict_pool *p = zcalloc(sizeof(evict_pool));
    for (int k = 0; k < POOL_SIZE; k++) {
        p->s[k].cap = 255;
        p->s[k].key = zmalloc(255);
    }
    return p;
}

void evict_prepare(shard *s) {
    if (!s->ev_pool) s->ev_pool = pool_new();
}

static evict_pool *pool_of(shard *s) {
    evict_prepare(s);
    return s->ev_pool;
}

int evict_run(shard *s) {
    if (cfg_get(maxmemory) <= 0) return EVICT_OK;
    if (pause_type(s->now_ms) != PAUSE_OFF) return EVICT_OK; /* CLIENT PAUSE: the dataset stays still, as Redis */
    if (!(evict_policy() & EVP_NONE) && !owes(s)) return EVICT_OK; /* the common case, before anything else */
    return run(s, s->id, s->id + 1, pool_of(s), 0);
}

int evict_over(shard *s) {
    int64_t max = cfg_get(maxmemory);
    return max > 0 && estimate(s) > max;
}

int evict_run_all(void) {
    shard *self = shard_self();
    if (!self) self = shards[0];
    if (pause_type(mstime()) != PAUSE_OFF) return EVICT_OK;
    return run(self, 0, nshards, global_pool, 1);
}

int evict_wants_all(uint64_t mask) {
    int pol = evict_policy();
    int64_t max = cfg_get(maxmemory);
    if (!mask || max <= 0 || (pol & EVP_NONE)) return 0;
    int vol = (pol & EVP_VOLATILE) != 0;
    uint64_t in = 0, out = 0;
    for (int i = 0; i < nshards; i++) {
        uint64_t n = __atomic_load_n(vol ? &shards[i]->ev_volatile : &shards[i]->ev_keys, __ATOMIC_RELAXED);
        if (mask >> i & 1) in += n;
        else out += n;
    }
    return !in && out && evict_used_memory() > max;
}

void evict_step(shard *s) {
    if (cfg_get(maxmemory) <= 0) {
        s->ev_pending = 0;
        return;
    }
    if (pause_type(s->now_ms) != PAUSE_OFF) return;
    run(s, s->id, s->id + 1, pool_of(s), 0);
}
