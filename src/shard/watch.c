/* watch.c - see watch.h. */
#include "shard/watch.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "shard/db.h"
#include <pthread.h>

int watch_sessions;
static uint64_t *slots;       /* [WATCH_SLOTS] */
static int64_t *expired_max;  /* [WATCH_SLOTS] */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void alloc(void) {
    slots = zcalloc(sizeof(uint64_t) * WATCH_SLOTS);
    expired_max = zcalloc(sizeof(int64_t) * WATCH_SLOTS);
}

void watch_init(void) { pthread_once(&once, alloc); }

static int watching(void) { return __atomic_load_n(&watch_sessions, __ATOMIC_SEQ_CST) != 0; }

uint32_t watch_slot(int dbid, const char *key, size_t klen) {
    return (uint32_t)((hash_bytes(key, klen) ^ ((uint64_t)dbid * 0x9e3779b97f4a7c15ull)) & (WATCH_SLOTS - 1));
}

uint64_t watch_version(uint32_t slot) { return __atomic_load_n(&slots[slot], __ATOMIC_SEQ_CST); }
int64_t watch_expired_after(uint32_t slot) { return __atomic_load_n(&expired_max[slot], __ATOMIC_SEQ_CST); }

void watch_bump(int dbid, const char *key, size_t klen) {
    if (!watching()) return;
    __atomic_add_fetch(&slots[watch_slot(dbid, key, klen)], 1, __ATOMIC_SEQ_CST);
}

void watch_unbump(int dbid, const char *key, size_t klen) {
    __atomic_sub_fetch(&slots[watch_slot(dbid, key, klen)], 1, __ATOMIC_SEQ_CST);
}

void watch_expired(int dbid, const char *key, size_t klen, int64_t deadline) {
    if (!watching()) return;
    int64_t *m = &expired_max[watch_slot(dbid, key, klen)];
    int64_t cur = __atomic_load_n(m, __ATOMIC_SEQ_CST);
    while (cur < deadline && !__atomic_compare_exchange_n(m, &cur, deadline, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
}

typedef struct touch_walk {
    int dbid, other;
    int64_t now;
} touch_walk;

static void touch_one(void *ud, entry *e) {
    touch_walk *w = ud;
    if (entry_has_ttl(e) && w->now > entry_expire(e)) return; /* stale: no logical change */
    size_t kl;
    const char *k = (const char *)entry_keyp(e, &kl);
    __atomic_add_fetch(&slots[watch_slot(w->dbid, k, kl)], 1, __ATOMIC_SEQ_CST);
    if (w->other >= 0) __atomic_add_fetch(&slots[watch_slot(w->other, k, kl)], 1, __ATOMIC_SEQ_CST);
}

void watch_touch_live(db *d, int other_dbid, int64_t now) {
    if (!watching() || db_size(d) == 0) return;
    touch_walk w = {d->id, other_dbid, now};
    uint64_t cur = 0;
    do cur = table_scan(d->t, cur, touch_one, &w);
    while (cur);
}
