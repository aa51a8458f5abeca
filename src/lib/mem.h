/* mem.h - allocation wrappers over mimalloc with per-thread accounting.
 *
 * Every allocation of the engine goes through zmalloc & co. Each thread
 * (main, shard i) registers a slot once; allocations and frees made by that
 * thread move that slot's counter, and mem_used() sums every slot. A block
 * freed by another thread than the one that allocated it moves the freeing
 * thread's counter, so per-thread figures are approximate while the sum is
 * exact. mimalloc's default heap is thread-local, so each shard allocates
 * from its own heap. Out of memory aborts with a message, as Redis does. */
#ifndef SHOAL_MEM_H
#define SHOAL_MEM_H
#include <stddef.h>
#include <stdint.h>

#define MEM_MAX_THREADS 260

void *zmalloc(size_t n);
void *zcalloc(size_t n);
void *zrealloc(void *p, size_t n);
void zfree(void *p);
char *zstrndup(const char *s, size_t n);
size_t zmalloc_size(const void *p);

/* Bind the calling thread to accounting slot `slot` (0 = main; slots
 * from MEM_MAX_THREADS - 8 up are for the fixed background threads). */
void mem_thread_init(int slot);
/* Bytes currently allocated, summed over all threads. Any thread. */
int64_t mem_used(void);
/* The calling thread's own slot: cheap (no other thread writes it). */
int64_t mem_used_mine(void);
/* Bytes allocated minus freed by the threads bound to `slot`. */
int64_t mem_used_slot(int slot);
/* Resident set size of the process in bytes (from /proc). */
size_t mem_rss(void);
/* Huge pages for the process, before the first shard allocates: 0 turns
 * transparent huge pages off (prctl), 1 has mimalloc madvise its segments
 * for them. */
void mem_huge_pages(int on);
/* Bytes of anonymous memory backed by huge pages now (smaps_rollup). */
size_t mem_huge_bytes(void);
/* Hands the calling thread's free pages back to the system (the
 * allocator otherwise does that only inside its own calls, which an idle
 * thread does not make, and 25 ms after the free: the pages this call
 * frees are decommitted at once). */
void mem_release(void);
/* The highest mem_used() seen so far, after counting the current figure
 * (INFO used_memory_peak, MEMORY STATS peak.allocated). Any thread. */
int64_t mem_peak(void);
/* Records mem_used() as the startup figure (before data loads), and reads
 * it back (MEMORY STATS startup.allocated). */
void mem_mark_startup(void);
int64_t mem_startup(void);
/* Bytes the allocator has committed from the system over the process (0
 * when the build's allocator does not say). */
size_t mem_committed(void);
/* The allocator's own statistics as text, given to out in pieces; returns 0
 * when the build's allocator has none (sanitizer builds use libc's). */
int mem_stats_text(void (*out)(const char *msg, void *arg), void *arg);
#endif
