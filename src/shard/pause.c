/* pause.c - see pause.h. The type and end are set together under a mutex
 * (CLIENT PAUSE and UNPAUSE are rare); readers load them without it. */
#include "shard/pause.h"
#include "lib/clock.h"
#include "shard/shard.h"
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int cur_type;
static int64_t cur_end;
static uint64_t epoch;

static void changed(void) {
    __atomic_add_fetch(&epoch, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < nshards; i++) shard_wake(shards[i]);
}

void pause_start(int type, int64_t end_ms) {
    pthread_mutex_lock(&lock);
    int64_t now = mstime();
    if (pause_type(now) == PAUSE_OFF) {
        __atomic_store_n(&cur_type, type, __ATOMIC_SEQ_CST);
        __atomic_store_n(&cur_end, end_ms, __ATOMIC_SEQ_CST);
    } else {
        if (type > cur_type) __atomic_store_n(&cur_type, type, __ATOMIC_SEQ_CST);
        if (end_ms > cur_end) __atomic_store_n(&cur_end, end_ms, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_unlock(&lock);
    changed();
}

void pause_stop(void) {
    pthread_mutex_lock(&lock);
    __atomic_store_n(&cur_type, PAUSE_OFF, __ATOMIC_SEQ_CST);
    __atomic_store_n(&cur_end, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&lock);
    changed();
}

int pause_type(int64_t now_ms) {
    int t = __atomic_load_n(&cur_type, __ATOMIC_ACQUIRE);
    if (t == PAUSE_OFF || now_ms >= __atomic_load_n(&cur_end, __ATOMIC_ACQUIRE)) return PAUSE_OFF;
    return t;
}

int64_t pause_left(int64_t now_ms) {
    if (pause_type(now_ms) == PAUSE_OFF) return -1;
    return __atomic_load_n(&cur_end, __ATOMIC_ACQUIRE) - now_ms;
}

uint64_t pause_epoch(void) { return __atomic_load_n(&epoch, __ATOMIC_ACQUIRE); }
