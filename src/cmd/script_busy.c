/* script_busy.c - scripts past busy-reply-threshold (alias lua-time-limit),
 * SCRIPT KILL and FUNCTION KILL.
 *
 * A script checks the clock from its instruction hook. Past the threshold
 * it publishes its shard in shards_busy (shard.h): from then on, every
 * shard's dispatcher answers BUSY to a command that needs that shard
 * (except the allow-busy ones), and the script, between instructions,
 * serves the busy shard's other connections (shard_busy_poll) so that
 * their commands get that answer too. SCRIPT KILL / FUNCTION KILL, on any
 * shard, set the kill flag of a script that has not written; the script
 * ends with an error at its next hook. Unrelated shards keep serving all
 * along: only the busy shard's own keys and connections are affected. */
#include "cmd/script.h"
#include "lib/clock.h"
#include "server/config.h"
#include "shard/shard.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct busy_info {
    int is_function, wrote, kill; /* kill: atomic, set by SCRIPT/FUNCTION KILL on any shard */
    int64_t start_ms;
    char name[128];
    int argc;
    char argv[8][64];
} busy_info;

static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static busy_info infos[MAX_SHARDS];
static uint64_t runners; /* atomic: shards whose thread runs a busy script (shards_busy also has the shards it holds) */

/* The busy shard whose script KILL looks at (the first), or -1. */
static int busy_shard(void) {
    uint64_t b = __atomic_load_n(&runners, __ATOMIC_ACQUIRE);
    return b ? __builtin_ctzll(b) : -1;
}

int script_busy_runs_on(int shard) { return (__atomic_load_n(&runners, __ATOMIC_RELAXED) >> shard) & 1; }

void script_busy_error(char *err, size_t errlen) {
    pthread_mutex_lock(&busy_lock);
    int s = busy_shard();
    int fn = s >= 0 && infos[s].is_function;
    pthread_mutex_unlock(&busy_lock);
    snprintf(err, errlen, "BUSY Redis is busy running a script. You can only call %s KILL or SHUTDOWN NOSAVE.",
             fn ? "FUNCTION" : "SCRIPT");
}

void script_kill_reply(cmd_ctx *c, int function) {
    char err[256];
    pthread_mutex_lock(&busy_lock);
    int s = busy_shard();
    if (s < 0) {
        pthread_mutex_unlock(&busy_lock);
        reply_error(c, "NOTBUSY No scripts in execution right now.");
        return;
    }
    busy_info *b = &infos[s];
    if (b->is_function != function) {
        pthread_mutex_unlock(&busy_lock);
        snprintf(err, sizeof err, "BUSY Redis is busy running a script. You can only call %s KILL or SHUTDOWN NOSAVE.",
                 b->is_function ? "FUNCTION" : "SCRIPT");
        reply_error(c, err);
        return;
    }
    if (__atomic_load_n(&b->wrote, __ATOMIC_RELAXED)) {
        pthread_mutex_unlock(&busy_lock);
        reply_error(c, "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
                       "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
                       "NOSAVE command.");
        return;
    }
    __atomic_store_n(&b->kill, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&busy_lock);
    reply_ok(c);
}

int script_busy_kind(void) {
    pthread_mutex_lock(&busy_lock);
    int s = busy_shard();
    int k = s < 0 ? -1 : infos[s].is_function;
    pthread_mutex_unlock(&busy_lock);
    return k;
}

void script_running_reply(cmd_ctx *c) {
    pthread_mutex_lock(&busy_lock);
    int s = busy_shard();
    if (s < 0 || !infos[s].is_function) {
        pthread_mutex_unlock(&busy_lock);
        reply_null(c);
        return;
    }
    busy_info *b = &infos[s];
    reply_map(c, 3);
    reply_cstr(c, "name");
    reply_cstr(c, b->name);
    reply_cstr(c, "command");
    reply_array(c, b->argc);
    for (int i = 0; i < b->argc; i++) reply_cstr(c, b->argv[i]);
    reply_cstr(c, "duration_ms");
    reply_int(c, clock_ns() / 1000000 - b->start_ms);
    pthread_mutex_unlock(&busy_lock);
}

int script_busy_check(script_run *r) {
    shard *sh = r->c->sh;
    busy_info *b = &infos[sh->id];
    if (!r->busy) {
        int64_t thr = cfg_get(busy_reply_threshold);
        if (thr <= 0 || clock_ns() / 1000000 - r->start_ms < thr) return 0;
        pthread_mutex_lock(&busy_lock);
        b->is_function = r->is_function;
        b->wrote = r->wrote;
        b->kill = 0;
        b->start_ms = r->start_ms;
        snprintf(b->name, sizeof b->name, "%s", r->name);
        b->argc = r->c->argc < 8 ? r->c->argc : 8;
        for (int i = 0; i < b->argc; i++)
            snprintf(b->argv[i], sizeof b->argv[i], "%.*s", (int)(r->c->argl[i] > 63 ? 63 : r->c->argl[i]),
                     r->c->argv[i]);
        snprintf(shards_busy_err, sizeof shards_busy_err,
                 "BUSY Redis is busy running a script. You can only call %s KILL or SHUTDOWN NOSAVE.",
                 r->is_function ? "FUNCTION" : "SCRIPT");
        __atomic_or_fetch(&runners, 1ull << sh->id, __ATOMIC_RELEASE);
        __atomic_or_fetch(&shards_busy, r->held | 1ull << sh->id, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&busy_lock);
        r->busy = 1;
    }
    __atomic_store_n(&b->wrote, r->wrote, __ATOMIC_RELAXED);
    int stopping = shard_busy_poll(sh, r->c->sess ? r->c->sess->conn : NULL);
    return stopping || __atomic_load_n(&b->kill, __ATOMIC_ACQUIRE);
}

void script_busy_end(script_run *r) {
    if (!r->busy) return;
    pthread_mutex_lock(&busy_lock);
    __atomic_and_fetch(&runners, ~(1ull << r->c->sh->id), __ATOMIC_RELEASE);
    __atomic_and_fetch(&shards_busy, ~(r->held | 1ull << r->c->sh->id), __ATOMIC_RELEASE);
    infos[r->c->sh->id].kill = 0;
    pthread_mutex_unlock(&busy_lock);
    r->busy = 0;
}
