/* slowlog.h - the slow log: commands that ran at least
 * slowlog-log-slower-than microseconds, the newest slowlog-max-len kept.
 *
 * Each shard keeps the entries of the commands its connections ran, on its
 * own thread: a command run locally is logged where it ran; one that ran on
 * another shard comes back with its duration (batch_item.slow_us) and is
 * logged by its connection's shard, which knows the client's address and
 * name. Entry ids come from one counter for the whole server, so SLOWLOG
 * GET (which runs holding every shard) merges the shards' logs by id into
 * one log newest first, as Redis's. Arguments are kept as Redis keeps
 * them: at most 32 (the last one says how many more there were), each at
 * most 128 bytes (then how many more bytes). */
#ifndef SHOAL_SLOWLOG_H
#define SHOAL_SLOWLOG_H
#include <stddef.h>
#include <stdint.h>

struct shard;

typedef struct slowlog_entry {
    uint64_t id;
    int64_t time;   /* unix seconds */
    int64_t dur_us;
    int argc;
    char **argv;    /* argc strings, each with its length in argl */
    size_t *argl;
    char *addr, *name; /* "" when unknown */
} slowlog_entry;

typedef struct slowlog {
    slowlog_entry **e; /* ring, oldest first from head */
    int head, n, cap;
} slowlog;

/* 1 when a command that took dur_us must be logged (threshold >= 0 and
 * dur_us >= threshold). Any thread. */
int slowlog_wanted(int64_t dur_us);
/* Shard thread of sh: logs a command. addr and name may be NULL. */
void slowlog_push(struct shard *sh, int argc, const char *const *argv, const size_t *argl, int64_t dur_us,
                  const char *addr, const char *name);
/* Holding sh: forgets its entries. */
void slowlog_reset(struct shard *sh);
/* Holding sh: its entries, newest first (i < slowlog_len). */
int slowlog_len(struct shard *sh);
const slowlog_entry *slowlog_at(struct shard *sh, int i);
#endif
