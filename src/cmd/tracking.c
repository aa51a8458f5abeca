/* tracking.c - CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO: the
 * client-side caching commands, over shard/tracking.h. Their rows are
 * CLIENT's subcommands (connection.c lists them from tracking.h). */
#include "cmd/tracking.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "shard/tracking.h"
#include <stdio.h>

/* CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP] */
void client_tracking_cmd(cmd_ctx *c) {
    long long redir = 0;
    int opts = 0, np = 0;
    const char **prefix = zmalloc(sizeof(char *) * (size_t)c->argc);
    size_t *plen = zmalloc(sizeof(size_t) * (size_t)c->argc);
    char err[512];
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(c, j, "redirect") && more) {
            j++;
            if (redir != 0) {
                reply_error(c, "ERR A client can only redirect to a single other client");
                goto out;
            }
            if (!arg_ll(c, j, &redir)) goto out;
            if (redir <= 0 || !tracking_client_exists((uint64_t)redir)) {
                reply_error(c, "ERR The client ID you want redirect to does not exist");
                goto out;
            }
        } else if (arg_is(c, j, "bcast")) {
            opts |= TRK_BCAST;
        } else if (arg_is(c, j, "optin")) {
            opts |= TRK_OPTIN;
        } else if (arg_is(c, j, "optout")) {
            opts |= TRK_OPTOUT;
        } else if (arg_is(c, j, "noloop")) {
            opts |= TRK_NOLOOP;
        } else if (arg_is(c, j, "prefix") && more) {
            j++;
            prefix[np] = c->argv[j];
            plen[np++] = c->argl[j];
        } else {
            reply_status(c, ST_SYNTAX);
            goto out;
        }
    }
    if (arg_is(c, 2, "on")) {
        if (tracking_enable(c->sess, (uint64_t)redir, opts, prefix, plen, np, err, sizeof err) < 0) {
            reply_error(c, err);
            goto out;
        }
    } else if (arg_is(c, 2, "off")) {
        tracking_disable(c->sess);
    } else {
        reply_status(c, ST_SYNTAX);
        goto out;
    }
    reply_ok(c);
out:
    zfree(prefix);
    zfree(plen);
}

/* CLIENT CACHING YES|NO */
void client_caching_cmd(cmd_ctx *c) {
    char err[256];
    int yes = arg_is(c, 2, "yes");
    if (!tracking_on(c->sess)) {
        tracking_caching(c->sess, 1, err, sizeof err); /* the "not in tracking mode" text */
        reply_error(c, err);
        return;
    }
    if (!yes && !arg_is(c, 2, "no")) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (tracking_caching(c->sess, yes, err, sizeof err) < 0) {
        reply_error(c, err);
        return;
    }
    reply_ok(c);
}

/* CLIENT GETREDIR */
void client_getredir_cmd(cmd_ctx *c) { reply_int(c, tracking_getredir(c->sess)); }

/* CLIENT TRACKINGINFO */
void client_trackinginfo_cmd(cmd_ctx *c) { tracking_info(c->sess, c->resp, c->out); }
