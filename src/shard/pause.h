/* pause.h - CLIENT PAUSE: one server-wide pause, read by every shard.
 *
 * While a pause is on, a client's command that it covers (every command
 * under PAUSE_ALL; under PAUSE_WRITE writes and commands that may
 * replicate) is postponed: the connection stops at that command and counts
 * as blocked until the pause ends (CLIENT UNPAUSE or its end time), then
 * runs it. Keys are not deleted by expiry meanwhile, lazily or actively
 * (they read as missing), so the dataset does not change under a pause, as
 * in Redis. The state is two atomics; any thread may read it. */
#ifndef SHOAL_PAUSE_H
#define SHOAL_PAUSE_H
#include <stdint.h>

struct shard;

enum { PAUSE_OFF = 0, PAUSE_WRITE = 1, PAUSE_ALL = 2 };

/* Starts a pause of `type` until end_ms, or widens the running one (the
 * stricter type, the later end, as Redis). Wakes every shard. */
void pause_start(int type, int64_t end_ms);
/* Ends the pause now. Wakes every shard. */
void pause_stop(void);
/* The pause type in force at now_ms (PAUSE_OFF when none or past its end). */
int pause_type(int64_t now_ms);
/* ms until the running pause ends (-1: none). */
int64_t pause_left(int64_t now_ms);
/* A counter that changes whenever the pause changes (shards compare it to
 * know when to look at their postponed connections again). */
uint64_t pause_epoch(void);
#endif
