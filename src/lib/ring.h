/* ring.h - a bounded lock-free single-producer/single-consumer queue of
 * pointers, one per (sender shard, receiver shard) pair.
 *
 *   head (written by consumer)      tail (written by producer)
 *   v                                v
 *   [ m0 | m1 | m2 | .. free .. ]    capacity is a power of two
 *
 * Only the producer thread may call ring_push, only the consumer ring_pop.
 * A push publishes the message with release order, a pop reads it with
 * acquire order, so everything the producer wrote before the push is
 * visible to the consumer after the pop. */
#ifndef SHOAL_RING_H
#define SHOAL_RING_H
#include <stddef.h>
#include <stdint.h>

typedef struct ring {
    _Alignas(64) uint64_t head;
    _Alignas(64) uint64_t tail;
    _Alignas(64) uint64_t mask;
    void **slot;
} ring;

ring *ring_create(size_t capacity_pow2);
void ring_destroy(ring **r);

/* 0 on success, -1 when full. */
static inline int ring_push(ring *r, void *m) {
    uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
    uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    if (t - h > r->mask) return -1;
    r->slot[t & r->mask] = m;
    __atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
    return 0;
}

/* The oldest message, or NULL when empty. */
static inline void *ring_pop(ring *r) {
    uint64_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    if (h == t) return NULL;
    void *m = r->slot[h & r->mask];
    __atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
    return m;
}

/* The message i places behind the oldest (0: the one ring_pop returns
 * next), or NULL when fewer are queued. Consumer only; it stays queued. */
static inline void *ring_peek(ring *r, uint64_t i) {
    uint64_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    return t - h > i ? r->slot[(h + i) & r->mask] : NULL;
}

static inline int ring_empty(ring *r) {
    return __atomic_load_n(&r->head, __ATOMIC_RELAXED) == __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
}
#endif
