/* mem.c - see mem.h. Counters are written only by their owning thread with
 * relaxed atomic stores (no lock prefix) and read by anyone. */
#include "lib/mem.h"
#include <mimalloc.h>
#include <pthread.h>
#ifdef SHOAL_LIBC_MALLOC
/* Sanitizer builds: AddressSanitizer only sees libc's allocator, so route
 * every block through it to have overflows and use-after-free caught. */
#include <malloc.h>
#define mi_malloc malloc
#define mi_zalloc(n) calloc(1, (n))
#define mi_realloc realloc
#define mi_free free
#define mi_usable_size(p) malloc_usable_size((void *)(p))
#endif
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <string.h>
#include <unistd.h>

/* One cache line per slot: a shard's counter moves on every allocation, and
 * counters packed eight to a line made shards on different cores write the
 * same line. Readers sum only the slots bound so far (slot_hi) and the
 * fixed ones at the top (AOF writer, lazyfree). */
typedef struct {
    int64_t v;
    char pad[64 - sizeof(int64_t)];
} mem_slot;
static mem_slot used_slots[MEM_MAX_THREADS] __attribute__((aligned(64)));
static int slot_hi; /* highest slot below MEM_MAX_THREADS - 8 bound so far */
static _Thread_local int64_t *my_used = &used_slots[0].v;

static void oom(size_t n) {
    fprintf(stderr, "shoal: out of memory allocating %zu bytes\n", n);
    abort();
}

static inline void account(int64_t d) {
    int64_t v = __atomic_load_n(my_used, __ATOMIC_RELAXED);
    __atomic_store_n(my_used, v + d, __ATOMIC_RELAXED);
}

void *zmalloc(size_t n) {
    void *p = mi_malloc(n);
    if (!p) oom(n);
    account((int64_t)mi_usable_size(p));
    return p;
}

void *zcalloc(size_t n) {
    void *p = mi_zalloc(n);
    if (!p) oom(n);
    account((int64_t)mi_usable_size(p));
    return p;
}

void *zrealloc(void *p, size_t n) {
    if (!p) return zmalloc(n);
    size_t old = mi_usable_size(p);
    void *q = mi_realloc(p, n);
    if (!q) oom(n);
    account((int64_t)mi_usable_size(q) - (int64_t)old);
    return q;
}

void zfree(void *p) {
    if (!p) return;
    account(-(int64_t)mi_usable_size(p));
    mi_free(p);
}

char *zstrndup(const char *s, size_t n) {
    char *p = zmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

size_t zmalloc_size(const void *p) { return mi_usable_size(p); }

void mem_thread_init(int slot) {
    if (slot < 0 || slot >= MEM_MAX_THREADS) slot = 0;
    my_used = &used_slots[slot].v;
    int hi = __atomic_load_n(&slot_hi, __ATOMIC_RELAXED);
    while (slot < MEM_MAX_THREADS - 8 && slot > hi &&
           !__atomic_compare_exchange_n(&slot_hi, &hi, slot, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

int64_t mem_used(void) {
    int64_t s = 0;
    int hi = __atomic_load_n(&slot_hi, __ATOMIC_RELAXED);
    for (int i = 0; i <= hi; i++) s += __atomic_load_n(&used_slots[i].v, __ATOMIC_RELAXED);
    for (int i = MEM_MAX_THREADS - 8; i < MEM_MAX_THREADS; i++) s += __atomic_load_n(&used_slots[i].v, __ATOMIC_RELAXED);
    return s;
}

int64_t mem_used_mine(void) { return __atomic_load_n(my_used, __ATOMIC_RELAXED);
}

int64_t mem_used_slot(int slot) {
    if (slot < 0 || slot >= MEM_MAX_THREADS) return 0;
    return __atomic_load_n(&used_slots[slot].v, __ATOMIC_RELAXED);
}

size_t mem_rss(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, res = 0;
    if (fscanf(f, "%lu %lu", &size, &res) != 2) res = 0;
    fclose(f);
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

void mem_huge_pages(int on) {
    prctl(PR_SET_THP_DISABLE, on ? 0 : 1, 0, 0, 0);
#ifndef SHOAL_LIBC_MALLOC
    mi_option_set(mi_option_large_os_pages, on ? 1 : 0);
#endif
}

#ifndef SHOAL_LIBC_MALLOC
/* mimalloc 2.0 gives back the pages freed inside a segment the thread
 * still uses (the free spans between live pages: buffers of a burst that
 * went) only when it next takes a page from that segment; mi_collect does
 * not visit them. A fresh heap has no pages, so each of its allocations
 * takes a page from the thread's segments, best fitting free span first:
 * one block of each small size class, a few medium and large ones, then
 * the heap is destroyed. With the decommit delay at 0 (the caller's), the
 * spans taken go straight back, and each segment visited gives back what
 * it was waiting to. */
static void purge_segments(void) {
    mi_heap_t *h = mi_heap_new();
    if (!h) return;
    /* (the blocks go with the heap; a failed allocation ends the walk) */
    int ok = 1;
    for (size_t sz = 8; ok && sz <= 16 * 1024; sz += sz < 128 ? 8 : sz / 8) ok = mi_heap_malloc(h, sz) != NULL;
    for (int i = 0; ok && i < 4; i++) ok = mi_heap_malloc(h, 100 * 1024) != NULL;
    for (size_t sz = 1 << 20; ok && sz <= 8 << 20; sz *= 2) ok = mi_heap_malloc(h, sz) != NULL;
    mi_heap_destroy(h);
}
#endif

void mem_release(void) {
#ifndef SHOAL_LIBC_MALLOC
    /* the delay is global: one thread at a time zeroes and restores it */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    long delay = mi_option_get(mi_option_decommit_delay);
    mi_option_set(mi_option_decommit_delay, 0);
    mi_collect(true);
    purge_segments();
    mi_option_set(mi_option_decommit_delay, delay);
    pthread_mutex_unlock(&lock);
#endif
}

size_t mem_huge_bytes(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %zu kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

static int64_t peak_used, startup_used; /* atomics */

int64_t mem_peak(void) {
    int64_t used = mem_used();
    int64_t old = __atomic_load_n(&peak_used, __ATOMIC_RELAXED);
    while (used > old && !__atomic_compare_exchange_n(&peak_used, &old, used, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return used > old ? used : old;
}

void mem_mark_startup(void) { __atomic_store_n(&startup_used, mem_used(), __ATOMIC_RELAXED); }

int64_t mem_startup(void) { return __atomic_load_n(&startup_used, __ATOMIC_RELAXED); }

size_t mem_committed(void) {
#ifndef SHOAL_LIBC_MALLOC
    size_t elapsed, utime, stime, rss, peak_rss, commit = 0, peak_commit, faults;
    mi_process_info(&elapsed, &utime, &stime, &rss, &peak_rss, &commit, &peak_commit, &faults);
    return commit;
#else
    return 0;
#endif
}

int mem_stats_text(void (*out)(const char *msg, void *arg), void *arg) {
#ifndef SHOAL_LIBC_MALLOC
    mi_stats_merge(); /* the calling thread's figures join the process's */
    mi_stats_print_out(out, arg);
    return 1;
#else
    (void)out;
    (void)arg;
    return 0;
#endif
}
