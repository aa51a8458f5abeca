/* replication.c - the master's side of the replication protocol: SYNC,
 * PSYNC and REPLCONF (repl/master.h does the work).
 *
 * SYNC and PSYNC hold every shard (CMD_ALLSHARDS): that is the cut the
 * replica's RDB file shows and the point its stream starts from. Once a
 * connection is a replica it gets no replies (REPLCONF ACK answers
 * nothing, as in Redis); its shard writes the payload and the stream. */
#include "cmd/cmd.h"
#include "cmd/replicaof.h"
#include "lib/util.h"
#include "net/conn.h"
#include "repl/master.h"
#include "shard/shard.h"
#include <stdio.h>
#include <string.h>

static conn *own_conn(cmd_ctx *c) { return c->sess ? c->sess->conn : NULL; }

/* SYNC, and PSYNC <replid> <offset> */
static void sync_cmd(cmd_ctx *c) {
    conn *cn = own_conn(c);
    if (!cn) {
        reply_error(c, "ERR SYNC needs a client connection");
        return;
    }
    if (repl_conn_attached(cn)) return; /* already a replica: ignored, as Redis */
    if (conn_obuf_pending(cn) > 0) {
        reply_error(c, "ERR SYNC and PSYNC are invalid with pending output");
        return;
    }
    int psync = arg_is(c, 0, "psync");
    long long offset = -1;
    char replid[41] = "?";
    if (psync) {
        if (c->argl[1] < sizeof replid) {
            memcpy(replid, c->argv[1], c->argl[1]);
            replid[c->argl[1]] = 0;
        }
        if (!str2ll(c->argv[2], c->argl[2], &offset)) offset = -1; /* not a number: a full sync, as Redis */
    }
    int ids[MAX_SHARDS], n = ctx_shards(c, ids);
    char err[256];
    if (repl_attach(cn, ids, n, psync, replid, offset, ctx_now(c), c->out, err, sizeof err) < 0) {
        reply_error(c, err);
        return;
    }
    c->sess->flags |= SESS_REPLY_OFF; /* what it sends from now on gets no reply */
}

/* REPLCONF <option> <value> [<option> <value> ...] */
static void replconf_cmd(cmd_ctx *c) {
    if (c->argc % 2 == 0) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    conn *cn = own_conn(c);
    for (int j = 1; j < c->argc; j += 2) {
        if (arg_is(c, j, "listening-port")) {
            long long port;
            if (!arg_ll(c, j + 1, &port)) return;
            if (cn) repl_set_listening_port(cn, (int)port);
        } else if (arg_is(c, j, "ip-address")) {
            if (c->argl[j + 1] >= 46) { /* Redis's NET_HOST_STR_LEN */
                char e[128];
                snprintf(e, sizeof e, "ERR REPLCONF ip-address provided by replica instance is too long: %zu bytes",
                         c->argl[j + 1]);
                reply_error(c, e);
                return;
            }
            char ip[64];
            memcpy(ip, c->argv[j + 1], c->argl[j + 1]);
            ip[c->argl[j + 1]] = 0;
            if (cn) repl_set_ip(cn, ip);
        } else if (arg_is(c, j, "capa")) {
            /* eof: the payload is always sent with its length, which every replica reads */
            if (cn && arg_is(c, j + 1, "psync2")) repl_set_capa_psync2(cn);
        } else if (arg_is(c, j, "ack")) {
            long long off;
            if (!repl_conn_attached(cn) || !str2ll(c->argv[j + 1], c->argl[j + 1], &off)) return;
            repl_ack(cn, off, ctx_now(c));
            return; /* no reply, as Redis */
        } else if (arg_is(c, j, "getack")) {
            if (repl_getack_hook && c->sess) repl_getack_hook(c->sess); /* a replica answers its master */
            return;
        } else {
            char e[600];
            snprintf(e, sizeof e, "ERR Unrecognized REPLCONF option: %.*s", (int)(c->argl[j] > 500 ? 500 : c->argl[j]),
                     c->argv[j]);
            reply_error(c, e);
            return;
        }
    }
    reply_ok(c);
}

/* ROLE as a master: its offset and online replicas (ip, port, acked offset). */
static void role_master(cmd_ctx *c) {
    repl_peer_info peers[64];
    int64_t offset;
    int n = repl_peers(peers, 64, &offset);
    char num[24];
    reply_array(c, 3);
    reply_cstr(c, "master");
    reply_int(c, offset);
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        reply_array(c, 3);
        reply_cstr(c, peers[i].ip);
        reply_bulk(c, num, (size_t)ll2str(num, peers[i].port));
        reply_bulk(c, num, (size_t)ll2str(num, peers[i].ack));
    }
}

static const command rows[] = {
    {.name = "sync",
     .proc = sync_cmd,
     .arity = 1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_ALLSHARDS | CMD_NOMULTI | CMD_NO_ASYNC_LOADING,
     .group = "server",
     .since = "1.0.0",
     .acl = "admin slow dangerous",
     .summary = "Internal command used for replication"},
    {.name = "psync",
     .proc = sync_cmd,
     .arity = -3,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_ALLSHARDS | CMD_NOMULTI | CMD_NO_ASYNC_LOADING,
     .group = "server",
     .since = "2.8.0",
     .acl = "admin slow dangerous",
     .summary = "Internal command used for replication"},
    {.name = "replconf",
     .proc = replconf_cmd,
     .arity = -1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_ALLOWBUSY | CMD_SESSION,
     .group = "server",
     .since = "3.0.0",
     .acl = "admin slow dangerous",
     .summary = "An internal command for configuring the replication stream"},
};

void replication_register(void) {
    repl_init();
    replicaof_role_master = role_master;
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
}
