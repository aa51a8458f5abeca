/* cmdstats.h - per-shard statistics of commands and error replies: what
 * INFO commandstats, errorstats, latencystats, the total_error_replies
 * field and LATENCY HISTOGRAM show.
 *
 * Each shard counts the commands it executes and the error replies it
 * writes, on its own thread, without atomics. Readers on other threads
 * (INFO and LATENCY HISTOGRAM run holding every shard) add the shards up.
 *
 * A call that wrote an error reply since the previous counted call is a
 * failed call, as Redis decides it: so EXEC is not failed by an error of
 * one of its commands, which counts to that command. A command refused
 * before it ran (arity, MULTI queueing errors, MISCONF) is a rejected call.
 * A blocking command is a call when it first runs, as in Redis 7.0; its
 * serving adds time only. Latency is kept in a histogram per command with 32
 * buckets per power of two of nanoseconds (3 % precision), allocated on a
 * command's first timed call while latency-tracking is on. */
#ifndef SHOAL_CMDSTATS_H
#define SHOAL_CMDSTATS_H
#include "lib/buf.h"
#include <stdint.h>

struct shard;
struct command;

#define CMDSTATS_BUCKETS 1184 /* 32 per power of two up to 2^41 ns */
#define CMDSTATS_MAX_ERRORS 128 /* distinct error codes kept per shard, as Redis keeps */

typedef struct cmd_stat {
    uint64_t calls, ns, rejected, failed;
    uint64_t *hist; /* [CMDSTATS_BUCKETS] or NULL */
    uint64_t hist_total;
} cmd_stat;

typedef struct err_stat {
    char code[32];
    uint64_t count;
} err_stat;

/* The statistics of one shard (struct shard's `cstats`). */
typedef struct cmdstats {
    cmd_stat *cmds; /* [cmd_index_count()] */
    err_stat errs[CMDSTATS_MAX_ERRORS];
    int nerrs;
    uint64_t errors;   /* error replies (total_error_replies) */
    uint64_t err_mark; /* `errors` at the end of the last counted call */
} cmdstats;

/* Shard thread of sh, at its start: the statistics are allocated now
 * rather than at the shard's first command, so used_memory does not jump
 * then (a maxmemory set just above used_memory would be passed at once). */
void cmdstats_prepare(struct shard *sh);
/* Shard thread of sh. A call of cmd ran for ns nanoseconds; blocked: it
 * blocked, its latency is known when it is served. */
void cmdstats_call(struct shard *sh, const struct command *cmd, int64_t ns, int blocked);
/* Shard thread of sh. A blocked call of cmd was served (or timed out)
 * after ns more nanoseconds of work: its time and latency, not a call;
 * failed when what it was served is an error (its error is counted). */
void cmdstats_served(struct shard *sh, const struct command *cmd, int64_t ns, int failed);
/* Shard thread of sh. cmd (NULL: unknown command) was refused before it
 * ran; its error reply was already counted with cmdstats_error. */
void cmdstats_reject(struct shard *sh, const struct command *cmd);
/* Shard thread of sh. An error reply with text msg ("ERR ...", no '-'). */
void cmdstats_error(struct shard *sh, const char *msg);
/* The running call failed with an error already counted (a script's
 * error raised from a rejected call): failed, no second count. */
void cmdstats_mark_failed(struct shard *sh);
/* Under a lock of the shards: forgets every count of shard sh (CONFIG
 * RESETSTAT). */
void cmdstats_reset(struct shard *sh);

/* Readers, holding the shards ids[0..n). */
/* "# Commandstats" lines, one per command called or rejected. */
void cmdstats_info_commands(buf *o, const int *ids, int n);
/* "# Errorstats" lines in code order. */
void cmdstats_info_errors(buf *o, const int *ids, int n);
/* "# Latencystats" lines at latency-tracking-info-percentiles. */
void cmdstats_info_latency(buf *o, const int *ids, int n);
/* The sum of total_error_replies. */
uint64_t cmdstats_total_errors(const int *ids, int n);
/* LATENCY HISTOGRAM's entry of command index ci into out as RESP (resp
 * 2 or 3): its name => {calls, histogram_usec}. 0 when cmd has no
 * histogram (nothing written). */
int cmdstats_histogram_reply(buf *out, int resp, int ci, const int *ids, int n);
#endif
