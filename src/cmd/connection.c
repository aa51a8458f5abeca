/* connection.c - connection commands: PING ECHO SELECT HELLO QUIT RESET
 * CLIENT (ID SETNAME GETNAME INFO LIST KILL REPLY NO-EVICT HELP).
 *
 * Everything but PING/ECHO touches session state, so those run on the
 * connection's own shard (CMD_SESSION). CLIENT LIST/KILL see every shard's
 * connections under a transaction (CMD_ALLSHARDS). CLIENT KILL only marks
 * another connection (SESS_CLOSE_ASAP): it may belong to another thread,
 * whose shard closes it at its next turn or cron tick (within ~100 ms).
 * Session flags are changed with atomic operations for that reason. */
#include "cmd/acl.h"
#include "cmd/client.h"
#include "cmd/cmd.h"
#include "cmd/multi.h"
#include "cmd/tracking.h"
#include "lib/mem.h"
#include "net/conn.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/pubsub.h"
#include "shard/tracking.h"
#include "shard/shard.h"
#include <limits.h>
#include <stdio.h>

/* PING [message] */
static void ping_cmd(cmd_ctx *c) {
    if (c->argc > 2) {
        reply_arity(c);
        return;
    }
    if (c->sess && c->resp == 2 && pubsub_total(c->sess)) { /* RESP2 subscribed mode: [pong, message] */
        reply_array(c, 2);
        reply_bulk(c, "pong", 4);
        reply_bulk(c, c->argc == 2 ? c->argv[1] : "", c->argc == 2 ? c->argl[1] : 0);
        return;
    }
    if (c->argc == 2)
        reply_bulk(c, c->argv[1], c->argl[1]);
    else
        reply_simple(c, "PONG");
}

/* ECHO message */
static void echo_cmd(cmd_ctx *c) { reply_bulk(c, c->argv[1], c->argl[1]); }

/* SELECT index */
static void select_cmd(cmd_ctx *c) {
    long long id;
    if (!str2ll(c->argv[1], c->argl[1], &id)) {
        reply_status(c, ST_NOTINT);
        return;
    }
    if (id < INT_MIN || id > INT_MAX) {
        reply_error(c, "ERR value is out of range, value must between -2147483648 and 2147483647");
        return;
    }
    if (id < 0 || id >= cfg.databases_i) {
        reply_status(c, ST_DBRANGE);
        return;
    }
    c->sess->db = (int)id;
    reply_ok(c);
}

static int valid_name(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] < '!' || s[i] > '~') return 0;
    return 1;
}

static void set_name(session *s, const char *name, size_t n) {
    zfree(s->name);
    s->name = n ? zstrndup(name, n) : NULL;
}

static void hello_reply(cmd_ctx *c) {
    session *s = c->sess;
    reply_map(c, 7);
    reply_cstr(c, "server");
    reply_cstr(c, "redis");
    reply_cstr(c, "version");
    reply_cstr(c, "7.0.15");
    reply_cstr(c, "proto");
    reply_int(c, s->resp);
    reply_cstr(c, "id");
    reply_int(c, (long long)s->id);
    reply_cstr(c, "mode");
    reply_cstr(c, "standalone");
    reply_cstr(c, "role");
    reply_cstr(c, "master");
    reply_cstr(c, "modules");
    reply_array(c, 0);
}

/* HELLO [protover [AUTH username password] [SETNAME clientname]] */
static void hello_cmd(cmd_ctx *c) {
    long long ver = 0;
    int i = 1;
    if (c->argc >= 2) {
        if (!str2ll(c->argv[1], c->argl[1], &ver)) {
            reply_error(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        i = 2;
        if (ver < 2 || ver > 3) {
            reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    const char *name = NULL;
    size_t namel = 0;
    int auth = 0;
    for (; i < c->argc; i++) {
        int more = c->argc - i - 1;
        if (arg_is(c, i, "auth") && more >= 2) {
            auth = i + 1;
            i += 2;
        } else if (arg_is(c, i, "setname") && more >= 1) {
            name = c->argv[i + 1];
            namel = c->argl[i + 1];
            if (!valid_name(name, namel)) {
                reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
                return;
            }
            i++;
        } else {
            reply_errorf(c, "ERR Syntax error in HELLO option '%.*s'", (int)c->argl[i], c->argv[i]);
            return;
        }
    }
    if (auth && c->sess->user &&
        !acl_auth(c->sess, c->argv[auth], c->argl[auth], c->argv[auth + 1], c->argl[auth + 1])) {
        reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
        return;
    }
    if (c->sess->user && !c->sess->authed) {
        reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
                       "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP "
                       "protocol version at the same time");
        return;
    }
    if (name) set_name(c->sess, name, namel);
    if (ver) c->sess->resp = (int)ver;
    c->resp = c->sess->resp;
    hello_reply(c);
}

/* QUIT */
static void quit_cmd(cmd_ctx *c) {
    reply_ok(c);
    __atomic_fetch_or(&c->sess->flags, SESS_CLOSE_AFTER_REPLY, __ATOMIC_RELAXED);
}

/* While replies are off (CLIENT REPLY OFF/SKIP) the dispatcher gives the
 * command a scratch buffer. CLIENT REPLY ON and RESET turn them back on and
 * reply anyway, as in Redis: given the flags from before the command, this
 * writes the simple-string reply where the client will get it. */
static void reply_after_quiet(cmd_ctx *c, uint32_t old_flags, const char *status) {
    if (old_flags & (SESS_REPLY_OFF | SESS_REPLY_SKIP))
        resp_simple(session_reply_buf(c->sess), status);
    else
        reply_simple(c, status);
}

/* RESET */
static void reset_cmd(cmd_ctx *c) {
    session *s = c->sess;
    uint32_t old = s->flags;
    s->db = 0;
    s->resp = 2;
    c->resp = 2;
    set_name(s, NULL, 0);
    multi_discard(s);
    acl_sess_reset(s);
    pubsub_session_free(s);
    tracking_disable(s);
    __atomic_fetch_and(&s->flags, ~(uint32_t)(SESS_REPLY_OFF | SESS_REPLY_SKIP | SESS_REPLY_SKIP_NEXT | SESS_NO_EVICT),
                       __ATOMIC_RELAXED);
    reply_after_quiet(c, old, "RESET");
}

/* ---- CLIENT ---- */

/* CLIENT ID */
static void client_id(cmd_ctx *c) { reply_int(c, (long long)c->sess->id); }

/* CLIENT SETNAME connection-name */
static void client_setname(cmd_ctx *c) {
    if (!valid_name(c->argv[2], c->argl[2])) {
        reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    set_name(c->sess, c->argv[2], c->argl[2]);
    reply_ok(c);
}

/* CLIENT GETNAME */
static void client_getname(cmd_ctx *c) {
    if (c->sess->name)
        reply_cstr(c, c->sess->name);
    else
        reply_null(c);
}

static void describe_session(cmd_ctx *c, session *s, buf *o, int64_t now) {
    if (s->conn) {
        if (s == c->sess)
            conn_describe_args(s->conn, o, now, c->argc, c->argl);
        else
            conn_describe(s->conn, o, now);
        return;
    }
    buf_printf(o, "id=%llu addr= laddr= fd=-1 name=%s age=0 idle=0 flags=N db=%d cmd=%s user=%s resp=%d\n",
               (unsigned long long)s->id, s->name ? s->name : "", s->db, s->lastcmd, s->user ? s->user->name : "default",
               s->resp);
}

/* CLIENT INFO */
static void client_info(cmd_ctx *c) {
    buf o = {0};
    describe_session(c, c->sess, &o, ctx_now(c));
    reply_verbatim(c, o.p, o.len);
    buf_free(&o);
}

static int id_listed(const long long *ids, int nids, uint64_t id) {
    for (int j = 0; j < nids; j++)
        if ((unsigned long long)ids[j] == id) return 1;
    return 0;
}

/* Redis's client types (getClientType): the link to our master, a replica
 * attached to us, a subscriber, or a normal client. */
enum { CT_ANY = -1, CT_NORMAL, CT_MASTER, CT_REPLICA, CT_PUBSUB };

static int client_type(conn *x) {
    if (x->repl_master) return CT_MASTER;
    if (x->s.flags & SESS_REPLICA) return CT_REPLICA;
    return pubsub_total(&x->s) > 0 ? CT_PUBSUB : CT_NORMAL; /* (MONITOR is a normal client, as in Redis) */
}

/* A TYPE argument; -2 (after the error reply) when it names no type. */
static int type_arg(cmd_ctx *c, int i) {
    if (arg_is(c, i, "normal")) return CT_NORMAL;
    if (arg_is(c, i, "master")) return CT_MASTER;
    if (arg_is(c, i, "replica") || arg_is(c, i, "slave")) return CT_REPLICA;
    if (arg_is(c, i, "pubsub")) return CT_PUBSUB;
    reply_errorf(c, "ERR Unknown client type '%.*s'", (int)c->argl[i], c->argv[i]);
    return -2;
}

/* Parses CLIENT LIST's options into *type (CT_*) and ids (zmalloc'd, *nids
 * entries, NULL when no ID filter). Returns 0, or -1 after an error reply. */
static int client_list_args(cmd_ctx *c, int *type, long long **ids, int *nids) {
    *type = CT_ANY;
    *ids = NULL;
    *nids = 0;
    for (int i = 2; i < c->argc; i++) {
        if (arg_is(c, i, "type") && i + 1 < c->argc) {
            i++;
            if ((*type = type_arg(c, i)) == -2) return -1;
        } else if (arg_is(c, i, "id") && i + 1 < c->argc && !*ids) {
            *ids = zmalloc(sizeof(long long) * (size_t)(c->argc - i - 1));
            for (i++; i < c->argc; i++) {
                if (!str2ll(c->argv[i], c->argl[i], &(*ids)[*nids])) {
                    reply_error(c, "ERR Invalid client ID");
                    return -1;
                }
                (*nids)++;
            }
        } else {
            reply_status(c, ST_SYNTAX);
            return -1;
        }
    }
    return 0;
}

/* CLIENT LIST [TYPE normal|master|replica|pubsub] [ID client-id [client-id ...]] */
static void client_list(cmd_ctx *c) {
    int type, nids;
    long long *ids;
    if (client_list_args(c, &type, &ids, &nids) < 0) {
        zfree(ids);
        return;
    }
    buf o = {0};
    int sids[MAX_SHARDS], n = ctx_shards(c, sids);
    for (int k = 0; k < n; k++) {
        shard *sh = shards[sids[k]];
        pthread_mutex_lock(&sh->conns_lock);
        for (conn *x = sh->conns; x; x = x->all_next) {
            if (__atomic_load_n(&x->s.killed, __ATOMIC_RELAXED)) continue; /* gone already (its shard closes it next) */
            if ((!ids || id_listed(ids, nids, x->s.id)) && (type == CT_ANY || type == client_type(x)))
                describe_session(c, &x->s, &o, ctx_now(c));
        }
        pthread_mutex_unlock(&sh->conns_lock);
    }
    if (!c->sess->conn && (type == CT_ANY || type == CT_NORMAL) && (!ids || id_listed(ids, nids, c->sess->id)))
        describe_session(c, c->sess, &o, ctx_now(c));
    reply_verbatim(c, o.p ? o.p : "", o.len);
    buf_free(&o);
    zfree(ids);
}

/* CLIENT KILL ip:port | CLIENT KILL [ID id] [ADDR a] [LADDR a] [SKIPME yes|no] ... */
static void client_kill(cmd_ctx *c) {
    long long id = 0;
    int type = CT_ANY;
    const char *addr = NULL, *laddr = NULL;
    size_t addrl = 0, laddrl = 0;
    int skipme = 1, legacy = c->argc == 3;
    const acl_user *user = NULL;
    if (legacy) {
        addr = c->argv[2];
        addrl = c->argl[2];
        skipme = 0;
    } else {
        if ((c->argc - 2) % 2) {
            reply_status(c, ST_SYNTAX);
            return;
        }
        for (int i = 2; i < c->argc; i += 2) {
            if (arg_is(c, i, "id")) {
                if (!str2ll(c->argv[i + 1], c->argl[i + 1], &id) || id <= 0) {
                    reply_error(c, "ERR client-id should be greater than 0");
                    return;
                }
            } else if (arg_is(c, i, "addr")) {
                addr = c->argv[i + 1];
                addrl = c->argl[i + 1];
            } else if (arg_is(c, i, "laddr")) {
                laddr = c->argv[i + 1];
                laddrl = c->argl[i + 1];
            } else if (arg_is(c, i, "skipme")) {
                if (arg_is(c, i + 1, "yes"))
                    skipme = 1;
                else if (arg_is(c, i + 1, "no"))
                    skipme = 0;
                else {
                    reply_status(c, ST_SYNTAX);
                    return;
                }
            } else if (arg_is(c, i, "type")) {
                if ((type = type_arg(c, i + 1)) == -2) return;
            } else if (arg_is(c, i, "user")) {
                user = acl_find(c->argv[i + 1], c->argl[i + 1]);
                if (!user) {
                    reply_errorf(c, "ERR No such user '%.*s'", (int)c->argl[i + 1], c->argv[i + 1]);
                    return;
                }
            } else {
                reply_status(c, ST_SYNTAX);
                return;
            }
        }
    }
    long long killed = 0;
    int sids[MAX_SHARDS], n = ctx_shards(c, sids);
    for (int k = 0; k < n; k++) {
        shard *sh = shards[sids[k]];
        pthread_mutex_lock(&sh->conns_lock);
        for (conn *x = sh->conns; x; x = x->all_next) {
            if (id && (id < 0 || x->s.id != (unsigned long long)id)) continue;
            if (type != CT_ANY && type != client_type(x)) continue;
            if (addr && (strlen(x->addr) != addrl || memcmp(x->addr, addr, addrl))) continue;
            if (laddr && (strlen(x->laddr) != laddrl || memcmp(x->laddr, laddr, laddrl))) continue;
            if (user && x->s.user != user) continue;
            if (&x->s == c->sess) {
                if (skipme) continue;
                /* This thread owns it: reply first, then close. */
                __atomic_fetch_or(&x->s.flags, SESS_CLOSE_AFTER_REPLY, __ATOMIC_RELAXED);
            } else {
                /* The owning shard closes it (it may be another thread),
                 * first thing in its next turn; to clients it is gone now
                 * (one killed already is not counted again). */
                if (!conn_mark_killed(x)) continue;
                __atomic_store_n(&sh->kill_reqs, 1, __ATOMIC_RELEASE);
                shard_wake(sh);
            }
            killed++;
        }
        pthread_mutex_unlock(&sh->conns_lock);
    }
    if (legacy) {
        if (killed)
            reply_ok(c);
        else
            reply_error(c, "ERR No such client");
        return;
    }
    reply_int(c, killed);
}

/* CLIENT REPLY ON|OFF|SKIP */
static void client_reply(cmd_ctx *c) {
    session *s = c->sess;
    const uint32_t quiet = SESS_REPLY_OFF | SESS_REPLY_SKIP_NEXT | SESS_REPLY_SKIP;
    if (arg_is(c, 2, "on")) {
        uint32_t old = s->flags;
        __atomic_fetch_and(&s->flags, ~quiet, __ATOMIC_RELAXED);
        reply_after_quiet(c, old, "OK");
    } else if (arg_is(c, 2, "off")) {
        __atomic_fetch_or(&s->flags, SESS_REPLY_OFF, __ATOMIC_RELAXED);
    } else if (arg_is(c, 2, "skip")) {
        if (!(s->flags & SESS_REPLY_OFF)) __atomic_fetch_or(&s->flags, SESS_REPLY_SKIP_NEXT, __ATOMIC_RELAXED);
    } else {
        reply_status(c, ST_SYNTAX);
    }
}

/* CLIENT NO-EVICT ON|OFF */
static void client_noevict(cmd_ctx *c) {
    if (arg_is(c, 2, "on"))
        __atomic_fetch_or(&c->sess->flags, SESS_NO_EVICT, __ATOMIC_RELAXED);
    else if (arg_is(c, 2, "off"))
        __atomic_fetch_and(&c->sess->flags, ~(uint32_t)SESS_NO_EVICT, __ATOMIC_RELAXED);
    else {
        reply_status(c, ST_SYNTAX);
        return;
    }
    reply_ok(c);
}

/* CLIENT HELP */
static void client_help(cmd_ctx *c) {
    static const char *lines[] = {
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CACHING (YES|NO)",
        "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR",
        "    Return the client ID we are redirecting to when tracking is enabled.",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are: ID, ADDR, LADDR, SKIPME, TYPE, USER.",
        "LIST [options ...]",
        "    Return information about client connections. Options: TYPE, ID.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        "         [OPTIN] [OPTOUT] [NOLOOP]",
        "    Control server assisted client side caching.",
        "TRACKINGINFO",
        "    Report tracking status for the current connection.",
        "HELP",
        "    Print this help.",
    };
    int n = (int)(sizeof lines / sizeof lines[0]);
    reply_array(c, n);
    for (int i = 0; i < n; i++)
        reply_simple(c, lines[i]);
}

#define SESS CMD_SESSION
#define NLS CMD_NOSCRIPT | CMD_LOADING | CMD_STALE
#define CONN_ACL "slow connection"
#define ADMIN_ACL "admin slow dangerous connection"
static command client_subs[] = {
    TRACKING_CLIENT_ROWS /* CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO: cmd/tracking.c */
    {.name = "client|id",
     .proc = client_id,
     .arity = 2,
     .flags = SESS | NLS,
     .group = "connection",
     .since = "5.0.0",
     .acl = CONN_ACL,
     .summary = "Returns the client ID for the current connection"},
    {.name = "client|setname",
     .proc = client_setname,
     .arity = 3,
     .flags = SESS | NLS,
     .group = "connection",
     .since = "2.6.9",
     .acl = CONN_ACL,
     .summary = "Set the current connection name"},
    {.name = "client|getname",
     .proc = client_getname,
     .arity = 2,
     .flags = SESS | NLS,
     .group = "connection",
     .since = "2.6.9",
     .acl = CONN_ACL,
     .summary = "Get the current connection name"},
    {.name = "client|info",
     .proc = client_info,
     .arity = 2,
     .flags = SESS | NLS,
     .group = "connection",
     .since = "6.2.0",
     .acl = CONN_ACL,
     .summary = "Returns information about the current client connection."},
    {.name = "client|list",
     .proc = client_list,
     .arity = -2,
     .flags = CMD_ADMIN | NLS | CMD_ALLSHARDS,
     .group = "connection",
     .since = "2.4.0",
     .acl = ADMIN_ACL,
     .summary = "Get the list of client connections"},
    {.name = "client|kill",
     .proc = client_kill,
     .arity = -3,
     .flags = CMD_ADMIN | NLS | CMD_ALLSHARDS,
     .group = "connection",
     .since = "2.4.0",
     .acl = ADMIN_ACL,
     .summary = "Kill the connection of a client"},
    {.name = "client|reply",
     .proc = client_reply,
     .arity = 3,
     .flags = SESS | NLS,
     .group = "connection",
     .since = "3.2.0",
     .acl = CONN_ACL,
     .summary = "Instruct the server whether to reply to commands"},
    {.name = "client|no-evict",
     .proc = client_noevict,
     .arity = 3,
     .flags = SESS | CMD_ADMIN | NLS,
     .group = "connection",
     .since = "7.0.0",
     .acl = ADMIN_ACL,
     .summary = "Set client eviction mode for the current connection"},
    {.name = "client|pause",
     .proc = client_pause,
     .arity = -3,
     .flags = CMD_ADMIN | NLS,
     .group = "connection",
     .since = "2.9.50",
     .acl = ADMIN_ACL,
     .summary = "Stop processing commands from clients for some time"},
    {.name = "client|unpause",
     .proc = client_unpause,
     .arity = 2,
     .flags = CMD_ADMIN | NLS,
     .group = "connection",
     .since = "6.2.0",
     .acl = ADMIN_ACL,
     .summary = "Resume processing of clients that were paused"},
    {.name = "client|unblock",
     .proc = client_unblock,
     .arity = -3,
     .flags = CMD_ADMIN | NLS | CMD_ALLSHARDS,
     .group = "connection",
     .since = "5.0.0",
     .acl = ADMIN_ACL,
     .summary = "Unblock a client blocked in a blocking command from a different connection"},
    {.name = "client|help",
     .proc = client_help,
     .arity = 2,
     .flags = SESS | CMD_LOADING | CMD_STALE,
     .group = "connection",
     .since = "5.0.0",
     .acl = CONN_ACL,
     .summary = "Show helpful text about the different subcommands"},
};

#define HANDSHAKE SESS | NLS | CMD_FAST | CMD_NOAUTH | CMD_ALLOWBUSY
static const command rows[] = {
    {.name = "ping",
     .proc = ping_cmd,
     .arity = -1,
     .flags = CMD_FAST,
     .group = "connection",
     .since = "1.0.0",
     .acl = "fast connection",
     .summary = "Ping the server"},
    {.name = "echo",
     .proc = echo_cmd,
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .group = "connection",
     .since = "1.0.0",
     .acl = "fast connection",
     .summary = "Echo the given string"},
    {.name = "select",
     .proc = select_cmd,
     .arity = 2,
     .flags = SESS | CMD_LOADING | CMD_STALE | CMD_FAST,
     .group = "connection",
     .since = "1.0.0",
     .acl = "fast connection",
     .summary = "Change the selected database for the current connection"},
    {.name = "hello",
     .proc = hello_cmd,
     .arity = -1,
     .flags = HANDSHAKE,
     .group = "connection",
     .since = "6.0.0",
     .acl = "fast connection",
     .summary = "Handshake with Redis"},
    {.name = "quit",
     .proc = quit_cmd,
     .arity = -1,
     .flags = HANDSHAKE,
     .group = "connection",
     .since = "1.0.0",
     .acl = "fast connection",
     .summary = "Close the connection"},
    {.name = "reset",
     .proc = reset_cmd,
     .arity = 1,
     .flags = HANDSHAKE,
     .group = "connection",
     .since = "6.2.0",
     .acl = "fast connection",
     .summary = "Reset the connection"},
    {.name = "client",
     .arity = -2,
     .group = "connection",
     .since = "2.4.0",
     .acl = "slow",
     .summary = "A container for client connection commands",
     .subs = client_subs,
     .nsubs = (int)(sizeof client_subs / sizeof client_subs[0])},
};

void connection_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
