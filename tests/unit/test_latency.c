/* test_latency.c - unit tests of the latency event store (src/shard/latency.c):
 * one sample per second keeping the larger, the 160-sample ring, the
 * all-time maximum, the threshold, lookups (exact) and resets (any case,
 * counted), the order of events. No sockets. */
#include "server/config.h"
#include "shard/latency.h"
#include <string.h>

#include "check.h"

static latency_series s;

static void test_same_second_keeps_max(void) {
    latency_reset(NULL);
    latency_add_sample_at("command", 300, 1000);
    latency_add_sample_at("command", 200, 1000);
    latency_add_sample_at("command", 500, 1000);
    CHECK(latency_get("command", &s) == 1);
    CHECK(s.n == 1 && s.s[0].time == 1000 && s.s[0].ms == 500 && s.max == 500);
    latency_add_sample_at("command", 100, 1001);
    CHECK(latency_get("command", &s) && s.n == 2 && s.s[1].time == 1001 && s.s[1].ms == 100 && s.max == 500);
}

static void test_ring_keeps_last_160(void) {
    latency_reset(NULL);
    for (int i = 0; i < 400; i++)
        latency_add_sample_at("expire-cycle", 10 + i, 2000 + i);
    CHECK(latency_get("expire-cycle", &s) && s.n == LATENCY_TS_LEN);
    CHECK(s.s[0].time == 2000 + 400 - LATENCY_TS_LEN && s.s[LATENCY_TS_LEN - 1].time == 2399);
    int ordered = 1;
    for (int i = 1; i < s.n; i++)
        ordered &= s.s[i].time == s.s[i - 1].time + 1;
    CHECK(ordered);
    CHECK(s.max == 409);
}

static void test_lookup_and_reset(void) {
    latency_reset(NULL);
    latency_add_sample_at("command", 5, 10);
    latency_add_sample_at("fast-command", 6, 10);
    latency_add_sample_at("aof-fsync-always", 7, 10);
    CHECK(latency_get("COMMAND", &s) == 0); /* lookups are exact, as Redis's */
    CHECK(latency_get("nosuch", &s) == 0);
    latency_series all[LATENCY_EVENTS];
    CHECK(latency_snapshot(all, LATENCY_EVENTS) == 3);
    CHECK(!strcmp(all[0].name, "command") && !strcmp(all[1].name, "fast-command"));
    CHECK(latency_reset("nosuch") == 0);
    CHECK(latency_reset("FAST-Command") == 1); /* resets ignore case */
    CHECK(latency_snapshot(all, LATENCY_EVENTS) == 2);
    CHECK(!strcmp(all[0].name, "command") && !strcmp(all[1].name, "aof-fsync-always"));
    CHECK(latency_reset(NULL) == 2 && latency_snapshot(all, LATENCY_EVENTS) == 0);
}

static void test_limits(void) {
    latency_reset(NULL);
    char name[80];
    for (int i = 0; i < LATENCY_EVENTS + 5; i++) {
        snprintf(name, sizeof name, "event-%d", i);
        latency_add_sample_at(name, 1, 10);
    }
    latency_series all[LATENCY_EVENTS];
    CHECK(latency_snapshot(all, LATENCY_EVENTS) == LATENCY_EVENTS);
    latency_reset(NULL);
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = 0;
    latency_add_sample_at(name, 1, 10);
    CHECK(latency_snapshot(all, LATENCY_EVENTS) == 1 && strlen(all[0].name) == LATENCY_NAME_MAX - 1);
}

static void test_threshold(void) {
    latency_reset(NULL);
    cfg.latency_monitor_threshold_i = 0;
    latency_add_sample_if_needed("command", 1000);
    CHECK(latency_get("command", &s) == 0);
    CHECK(latency_clock() == 0);
    cfg.latency_monitor_threshold_i = 100;
    latency_add_sample_if_needed("command", 99);
    CHECK(latency_get("command", &s) == 0);
    latency_add_sample_if_needed("command", 100);
    CHECK(latency_get("command", &s) == 1 && s.n == 1 && s.s[0].ms == 100);
    CHECK(latency_clock() > 0);
    cfg.latency_monitor_threshold_i = 0;
    latency_reset(NULL);
}

int main(void) {
    test_same_second_keeps_max();
    test_ring_keeps_last_160();
    test_lookup_and_reset();
    test_limits();
    test_threshold();
    return check_report();
}
