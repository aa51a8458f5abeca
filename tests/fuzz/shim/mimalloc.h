/* mimalloc.h (fuzz builds only) - maps the few mimalloc calls that
 * src/lib/mem.c makes onto libc malloc, so AddressSanitizer sees every
 * engine allocation (it cannot check memory from mimalloc's own heaps).
 * tests/fuzz/build.sh puts this directory first on the include path. */
#ifndef SHOAL_FUZZ_MIMALLOC_SHIM_H
#define SHOAL_FUZZ_MIMALLOC_SHIM_H
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>

static inline void *mi_malloc(size_t n) { return malloc(n ? n : 1); }
static inline void *mi_zalloc(size_t n) { return calloc(1, n ? n : 1); }
static inline void *mi_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }
static inline void mi_free(void *p) { free(p); }
static inline size_t mi_usable_size(const void *p) { return p ? malloc_usable_size((void *)p) : 0; }
/* Options have no effect on libc malloc (mem_huge_pages). */
typedef enum { mi_option_large_os_pages, mi_option_decommit_delay } mi_option_t;
static inline void mi_option_set(mi_option_t o, long v) {
    (void)o;
    (void)v;
}
static inline long mi_option_get(mi_option_t o) {
    (void)o;
    return 0;
}
/* libc keeps its free pages itself (mem_release); no heap of its own to
 * take pages with either (purge_segments gives up at once). */
static inline void mi_collect(bool force) { (void)force; }
typedef struct mi_heap_s mi_heap_t;
static inline mi_heap_t *mi_heap_new(void) { return NULL; }
static inline void *mi_heap_malloc(mi_heap_t *h, size_t n) {
    (void)h;
    (void)n;
    return NULL;
}
static inline void mi_heap_destroy(mi_heap_t *h) { (void)h; }
/* libc gives no allocator figures (mem_committed, mem_stats_text): zeros
 * and an empty report. */
typedef void mi_output_fun(const char *msg, void *arg);
static inline void mi_process_info(size_t *elapsed, size_t *utime, size_t *stime, size_t *rss, size_t *peak_rss,
                                   size_t *commit, size_t *peak_commit, size_t *faults) {
    *elapsed = *utime = *stime = *rss = *peak_rss = *commit = *peak_commit = *faults = 0;
}
static inline void mi_stats_merge(void) {}
static inline void mi_stats_print_out(mi_output_fun *out, void *arg) {
    (void)out;
    (void)arg;
}
#endif
