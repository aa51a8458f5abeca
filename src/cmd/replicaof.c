/* replicaof.c - REPLICAOF host port | NO ONE (and its old name SLAVEOF),
 * ROLE, and the refusals of a replica's clients, over the link of
 * repl/replica.h.
 *
 * REPLICAOF runs holding every shard (CMD_ALLSHARDS): it stores the
 * `replicaof` directive, which CONFIG GET reads under the same lock. The
 * switch itself is immediate (the role flag commands check); the sync
 * with the new master follows on the link thread. */
#include "cmd/replicaof.h"
#include "cmd/multi.h"
#include "cmd/script.h"
#include "lib/util.h"
#include "repl/replica.h"
#include <stdio.h>
#include <string.h>

int replicaof_refuses(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, char *err,
                      size_t errlen) {
    if (s->conn && s->conn->repl_master) return 0; /* the master is obeyed */
    uint32_t f = cmd->flags;
    int stale_ok = (f & CMD_STALE) != 0;
    if ((f & CMD_EXEC) && s->multi) f |= multi_flags(s);
    if (f & CMD_HOME) { /* a script: its own flags decide, as Redis's evalGetCommandFlags */
        int sf = script_declared_flags(argc, argv, argl);
        if (sf >= 0 && (sf & SF_COMPAT)) {
            stale_ok = 0; /* Redis 6 semantics: writes are refused inside, by the call */
        } else if (sf >= 0) {
            if (!(sf & SF_NO_WRITES)) f |= CMD_WRITE;
            stale_ok = (sf & SF_ALLOW_STALE) != 0;
        }
    }
    const char *e = replica_refusal((f & CMD_WRITE) != 0, stale_ok);
    if (!e) return 0;
    snprintf(err, errlen, "%s", e);
    return 1;
}

const char *replicaof_script_call_refusal(const command *cmd) {
    if ((cmd->flags & CMD_WRITE) && replica_refusal(1, 1))
        return "READONLY You can't write against a read only replica.";
    if (!(cmd->flags & CMD_STALE) && replica_refusal(0, 0)) return "ERR Can not execute the command on a stale replica";
    return NULL;
}

/* The client as CLIENT LIST shows it, for the log line. */
static void describe(cmd_ctx *c, buf *who) {
    if (c->sess && c->sess->conn) {
        conn_describe(c->sess->conn, who, ctx_now(c));
        while (who->len && (who->p[who->len - 1] == '\n' || who->p[who->len - 1] == '\r'))
            who->len--;
    }
    buf_addc(who, 0);
}

static void replicaof_cmd(cmd_ctx *c) {
    buf who = {0};
    if (arg_is(c, 1, "no") && arg_is(c, 2, "one")) {
        if (repl_is_replica()) {
            describe(c, &who);
            replica_set_none(who.p);
        }
        buf_free(&who);
        reply_ok(c);
        return;
    }
    long long port;
    if (!str2ll(c->argv[2], c->argl[2], &port) || port < 0 || port > 65535) {
        reply_error(c, "ERR Invalid master port");
        return;
    }
    char host[256];
    snprintf(host, sizeof host, "%.*s", (int)(c->argl[1] < 255 ? c->argl[1] : 255), c->argv[1]);
    describe(c, &who);
    int same = replica_set_master(host, (int)port, who.p);
    buf_free(&who);
    if (same)
        reply_simple(c, "OK Already connected to specified master");
    else
        reply_ok(c);
}

void (*replicaof_role_master)(cmd_ctx *c);

static void role_cmd(cmd_ctx *c) {
    if (!repl_is_replica() && replicaof_role_master) {
        replicaof_role_master(c);
        return;
    }
    if (!repl_is_replica()) { /* a master with no replicas */
        reply_array(c, 3);
        reply_cstr(c, "master");
        reply_int(c, 0);
        reply_array(c, 0);
        return;
    }
    static const char *const names[] = {"none", "connect", "connecting", "handshake", "sync", "connected"};
    replica_role_info r;
    replica_role(&r);
    reply_array(c, 5);
    reply_cstr(c, "slave");
    reply_cstr(c, r.host);
    reply_int(c, r.port);
    reply_cstr(c, names[r.state]);
    reply_int(c, r.offset);
}

#define REPLICAOF_ROW(nm, summ)                                                                                        \
    {                                                                                                                  \
        .name = nm, .proc = replicaof_cmd, .arity = 3,                                                                 \
        .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE | CMD_NO_ASYNC_LOADING | CMD_ALLSHARDS, .group = "server",       \
        .since = "1.0.0", .acl = "admin slow dangerous", .summary = summ                                               \
    }
static const command rows[] = {
    REPLICAOF_ROW("slaveof", "Make the server a replica of another instance, or promote it as master."),
    REPLICAOF_ROW("replicaof", "Make the server a replica of another instance, or promote it as master."),
    {.name = "role",
     .proc = role_cmd,
     .arity = 1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST,
     .group = "server",
     .since = "2.8.12",
     .acl = "admin fast dangerous",
     .summary = "Return the role of the instance in the context of replication"},
};

void replicaof_register(void) {
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
    replica_flush_hook = function_flush_libraries;
    replica_init();
}
