/* latency.h - the latency monitor's event store (Redis's LATENCY command).
 *
 * Code paths that can stall the server (a command, the active expire
 * cycle, an fsync under appendfsync always) report how long they took;
 * when `latency-monitor-threshold` is on (> 0 ms) and the time reaches it,
 * the sample goes into that event's series: a ring of the last
 * LATENCY_TS_LEN (unix second, ms) samples, one per second (a second
 * sample in the same second keeps the larger of the two), plus the
 * all-time maximum.
 *
 * One store for the process, guarded by a mutex. Any thread may call
 * every function here. Only samples at or over the threshold take the
 * lock, and those are rare and already slow, so shards never contend on
 * it in the common case; one store (rather than one per shard merged at
 * read time) keeps Redis's one-sample-per-second rule exact across shards
 * and lets LATENCY run on any single shard. */
#ifndef SHOAL_LATENCY_H
#define SHOAL_LATENCY_H
#include "lib/clock.h"
#include "server/config.h"
#include <stdint.h>

#define LATENCY_TS_LEN 160  /* samples kept per event, as Redis */
#define LATENCY_EVENTS 32   /* distinct event names (Redis has about 25) */
#define LATENCY_NAME_MAX 48 /* longest event name, with its NUL */

typedef struct latency_sample {
    int64_t time; /* unix time, seconds */
    int64_t ms;
} latency_sample;

/* A copy of one event's series, samples oldest first. */
typedef struct latency_series {
    char name[LATENCY_NAME_MAX];
    int64_t max; /* all-time maximum, ms */
    int n;       /* samples in s[] */
    latency_sample s[LATENCY_TS_LEN];
} latency_series;

/* Records `ms` for `event` (a name such as "command" or "expire-cycle";
 * the string is copied) at the current second, when the threshold is on
 * and ms reaches it. Names longer than LATENCY_NAME_MAX-1 bytes are cut;
 * once LATENCY_EVENTS names exist, new ones are dropped. */
void latency_add_sample_if_needed(const char *event, int64_t ms);
/* The same without the threshold check, at unix second `now`. */
void latency_add_sample_at(const char *event, int64_t ms, int64_t now);

/* Forgets the event named `event` (case-insensitive, as Redis), or every
 * event when NULL; returns how many were forgotten. */
int latency_reset(const char *event);

/* Copies the series of `event` (exact name, case-sensitive as Redis's
 * lookup) into *out; 1 when it exists, else 0. */
int latency_get(const char *event, latency_series *out);
/* Copies up to max series (in the order their events first appeared
 * since the last reset) into out[]; returns how many. */
int latency_snapshot(latency_series *out, int max);

/* For timing a code path cheaply: the monotonic clock in µs when the
 * monitor is on, else 0 (no clock read). Pair with latency_since. */
static inline int64_t latency_clock(void) { return cfg_get(latency_monitor_threshold) > 0 ? mono_us() : 0; }
/* Adds the time since t0 (a nonzero latency_clock value) to `event`. */
static inline void latency_since(const char *event, int64_t t0) {
    latency_add_sample_if_needed(event, (mono_us() - t0) / 1000);
}
#endif
