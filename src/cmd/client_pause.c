/* client_pause.c - CLIENT PAUSE, CLIENT UNPAUSE and CLIENT UNBLOCK: the
 * CLIENT subcommands that act on other clients' waiting. Their rows live
 * in connection.c's CLIENT table. */
#include "cmd/client.h"
#include "lib/clock.h"
#include "lib/util.h"
#include "net/conn.h"
#include "shard/block.h"
#include "shard/pause.h"
#include "shard/shard.h"
#include <pthread.h>

/* CLIENT PAUSE timeout [WRITE|ALL] */
void client_pause(cmd_ctx *c) {
    long long ms;
    if (!str2ll(c->argv[2], c->argl[2], &ms)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return;
    }
    int type = PAUSE_ALL;
    if (c->argc == 4) {
        if (arg_is(c, 3, "write"))
            type = PAUSE_WRITE;
        else if (!arg_is(c, 3, "all")) {
            reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    } else if (c->argc > 4) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    int64_t now = mstime();
    pause_start(type, ms > INT64_MAX - now ? INT64_MAX : now + ms);
    reply_ok(c);
}

/* CLIENT UNPAUSE */
void client_unpause(cmd_ctx *c) {
    pause_stop();
    reply_ok(c);
}

/* CLIENT UNBLOCK client-id [TIMEOUT|ERROR]: 1 when that client was blocked
 * in a blocking command (it gets the timeout reply or the UNBLOCKED error). */
void client_unblock(cmd_ctx *c) {
    long long id;
    if (!str2ll(c->argv[2], c->argl[2], &id)) {
        reply_error(c, "ERR value is not an integer or out of range");
        return;
    }
    int mode = BLOCK_UNBLOCK_TIMEOUT;
    if (c->argc == 4) {
        if (arg_is(c, 3, "error"))
            mode = BLOCK_UNBLOCK_ERROR;
        else if (!arg_is(c, 3, "timeout")) {
            reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    }
    int done = 0, sids[MAX_SHARDS], n = ctx_shards(c, sids);
    for (int k = 0; k < n && !done; k++) {
        shard *sh = shards[sids[k]];
        pthread_mutex_lock(&sh->conns_lock);
        for (conn *x = sh->conns; x; x = x->all_next)
            if (x->s.id == (unsigned long long)id) {
                done = block_request_unblock(x, mode);
                break;
            }
        pthread_mutex_unlock(&sh->conns_lock);
    }
    reply_int(c, done);
}
