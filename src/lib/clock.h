/* clock.h - wall and monotonic clocks in ms/us. Any thread. */
#ifndef SHOAL_CLOCK_H
#define SHOAL_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline int64_t ustime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
static inline int64_t mstime(void) { return ustime() / 1000; }
static inline int64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
/* Wall-clock ns, for durations (a clock step back makes one negative). */
static inline int64_t clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
#endif
