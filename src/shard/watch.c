/* watch.c - see watch.h. */
#include "shard/watch.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "server/config.h"
#include <pthread.h>

int watch_sessions;
static uint64_t *slots;    /* [WATCH_SLOTS] */
static uint64_t *db_vers;  /* [databases] */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void alloc(void) {
    slots = zcalloc(sizeof(uint64_t) * WATCH_SLOTS);
    db_vers = zcalloc(sizeof(uint64_t) * (size_t)cfg.databases_i);
}

void watch_init(void) { pthread_once(&once, alloc); }

uint32_t watch_slot(int dbid, const char *key, size_t klen) {
    return (uint32_t)((hash_bytes(key, klen) ^ ((uint64_t)dbid * 0x9e3779b97f4a7c15ull)) & (WATCH_SLOTS - 1));
}

uint64_t watch_version(uint32_t slot) { return __atomic_load_n(&slots[slot], __ATOMIC_SEQ_CST); }
uint64_t watch_db_version(int dbid) { return __atomic_load_n(&db_vers[dbid], __ATOMIC_SEQ_CST); }

void watch_bump(int dbid, const char *key, size_t klen) {
    if (!__atomic_load_n(&watch_sessions, __ATOMIC_SEQ_CST)) return;
    __atomic_add_fetch(&slots[watch_slot(dbid, key, klen)], 1, __ATOMIC_SEQ_CST);
}

void watch_bump_db(int dbid) {
    if (!__atomic_load_n(&watch_sessions, __ATOMIC_SEQ_CST)) return;
    if (dbid >= 0) {
        __atomic_add_fetch(&db_vers[dbid], 1, __ATOMIC_SEQ_CST);
        return;
    }
    for (int d = 0; d < (int)cfg.databases_i; d++) __atomic_add_fetch(&db_vers[d], 1, __ATOMIC_SEQ_CST);
}
