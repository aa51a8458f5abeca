/* latency.c - see latency.h.
 *
 * The events sit in one array in the order they first appeared; a reset
 * closes the gap, so that order holds. Each event's ring writes at `next`
 * and an empty slot has time 0:
 *
 *     s[]:  [t=105 40ms][t=106 250ms][   empty   ] ... [t=101 30ms]
 *                                      ^ next (oldest sample is here or after)
 */
#include "shard/latency.h"
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct event {
    char name[LATENCY_NAME_MAX];
    int64_t max;
    int next;
    latency_sample s[LATENCY_TS_LEN];
} event;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static event events[LATENCY_EVENTS];
static int nevents;

void latency_add_sample_if_needed(const char *event, int64_t ms) {
    int64_t threshold = cfg_get(latency_monitor_threshold);
    if (threshold > 0 && ms >= threshold) latency_add_sample_at(event, ms, (int64_t)time(NULL));
}

/* The event named exactly `name`, or NULL (lock held). */
static event *find(const char *name) {
    for (int i = 0; i < nevents; i++)
        if (!strcmp(events[i].name, name)) return &events[i];
    return NULL;
}

void latency_add_sample_at(const char *name, int64_t ms, int64_t now) {
    char cut[LATENCY_NAME_MAX];
    size_t len = strlen(name);
    if (len >= sizeof cut) len = sizeof cut - 1;
    memcpy(cut, name, len);
    cut[len] = 0;
    pthread_mutex_lock(&lock);
    event *e = find(cut);
    if (!e && nevents < LATENCY_EVENTS) {
        e = &events[nevents++];
        memset(e, 0, sizeof *e);
        memcpy(e->name, cut, len + 1);
    }
    if (e) {
        if (ms > e->max) e->max = ms;
        latency_sample *last = &e->s[(e->next + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN];
        if (last->time == now) { /* one sample per second: the larger */
            if (ms > last->ms) last->ms = ms;
        } else {
            e->s[e->next] = (latency_sample){now, ms};
            e->next = (e->next + 1) % LATENCY_TS_LEN;
        }
    }
    pthread_mutex_unlock(&lock);
}

int latency_reset(const char *name) {
    int n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nevents;) {
        if (name && strcasecmp(events[i].name, name)) {
            i++;
            continue;
        }
        memmove(&events[i], &events[i + 1], sizeof(event) * (size_t)(nevents - i - 1));
        nevents--;
        n++;
    }
    pthread_mutex_unlock(&lock);
    return n;
}

/* Copies e into out, samples oldest first (lock held). */
static void copy_series(const event *e, latency_series *out) {
    memcpy(out->name, e->name, sizeof out->name);
    out->max = e->max;
    out->n = 0;
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        const latency_sample *s = &e->s[(e->next + j) % LATENCY_TS_LEN];
        if (s->time) out->s[out->n++] = *s;
    }
}

int latency_get(const char *name, latency_series *out) {
    pthread_mutex_lock(&lock);
    const event *e = find(name);
    if (e) copy_series(e, out);
    pthread_mutex_unlock(&lock);
    return e != NULL;
}

int latency_snapshot(latency_series *out, int max) {
    pthread_mutex_lock(&lock);
    int n = nevents < max ? nevents : max;
    for (int i = 0; i < n; i++)
        copy_series(&events[i], &out[i]);
    pthread_mutex_unlock(&lock);
    return n;
}
