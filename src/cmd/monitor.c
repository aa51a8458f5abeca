/* monitor.c - MONITOR, and the lines its clients get.
 *
 * A MONITOR client is registered with Pub/Sub's registry under PS_MONITOR
 * (shard/pubsub.h), so a line reaches monitors on every shard the way a
 * message does: delivered at once on the feeding shard, forwarded in one
 * message per destination and loop turn to the others.
 *
 * The dispatcher feeds every command a client runs (not the ones refused
 * or queued by MULTI, nor CMD_ADMIN ones, as Redis) from the client's own
 * shard once it is routed, so one client's lines come in the order it sent
 * them. EXEC feeds the commands it runs, then itself, as Redis 7.0 shows
 * them. The line is Redis's: `+<sec>.<usec> [<db> <addr>] "arg" ...`, with
 * the arguments quoted as sdscatrepr does and the secrets of AUTH, HELLO
 * AUTH and MIGRATE AUTH/AUTH2 shown as "(redacted)". monitor_feed takes
 * any origin, so scripts can show as "lua". */
#include "cmd/monitor.h"
#include "cmd/multi.h"
#include "lib/clock.h"
#include "lib/util.h"
#include "net/conn.h"
#include "server/config.h"
#include "shard/pubsub.h"
#include "shard/shard.h"
#include <ctype.h>
#include <stdio.h>
#include <sys/time.h>

int monitor_active(void) { return pubsub_kind_total(PS_MONITOR) != 0; }

static void repr(buf *b, const char *p, size_t n) {
    buf_addc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        switch (ch) {
        case '\\': buf_add(b, "\\\\", 2); break;
        case '"': buf_add(b, "\\\"", 2); break;
        case '\n': buf_add(b, "\\n", 2); break;
        case '\r': buf_add(b, "\\r", 2); break;
        case '\t': buf_add(b, "\\t", 2); break;
        case '\a': buf_add(b, "\\a", 2); break;
        case '\b': buf_add(b, "\\b", 2); break;
        default:
            if (isprint(ch)) buf_addc(b, (char)ch);
            else buf_printf(b, "\\x%02x", ch);
        }
    }
    buf_addc(b, '"');
}

/* Whether argument i of this command is a secret MONITOR must not show. */
static int redacted(int argc, const char **argv, const size_t *argl, int i) {
    if (str_eq_ci(argv[0], argl[0], "auth")) return i >= 1;
    if (str_eq_ci(argv[0], argl[0], "hello")) {
        for (int j = 2; j + 2 < argc; j++)
            if (str_eq_ci(argv[j], argl[j], "auth") && (i == j + 1 || i == j + 2)) return 1;
        return 0;
    }
    if (str_eq_ci(argv[0], argl[0], "migrate")) {
        for (int j = 6; j < argc; j++) {
            if (str_eq_ci(argv[j], argl[j], "keys")) return 0;
            if (str_eq_ci(argv[j], argl[j], "auth")) return i == j + 1;
            if (str_eq_ci(argv[j], argl[j], "auth2")) return i == j + 1 || i == j + 2;
        }
    }
    return 0;
}

void monitor_feed(shard *sh, const char *origin, int dbid, int argc, const char **argv, const size_t *argl) {
    if (!monitor_active() || !sh || argc < 1) return;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    buf line = {0};
    buf_printf(&line, "+%ld.%06ld [%d %s] ", (long)tv.tv_sec, (long)tv.tv_usec, dbid, origin);
    for (int i = 0; i < argc; i++) {
        if (redacted(argc, argv, argl, i)) repr(&line, "(redacted)", 10);
        else repr(&line, argv[i], argl[i]);
        if (i != argc - 1) buf_addc(&line, ' ');
    }
    buf_add(&line, "\r\n", 2);
    pubsub_publish(sh, PS_MONITOR, "", 0, line.p, line.len);
    buf_free(&line);
}

/* Where a session's lines say they come from. */
static const char *origin_of(session *s, char *tmp, size_t n) {
    if (!s->conn) return "";
    if (s->conn->is_unix) {
        snprintf(tmp, n, "unix:%s", cfg.unixsocket_s ? cfg.unixsocket_s : "");
        return tmp;
    }
    return s->conn->addr;
}

typedef struct feed_ctx {
    session *s;
    const char *origin;
} feed_ctx;

static void feed_queued(void *ud, int argc, const char **argv, const size_t *argl) {
    feed_ctx *f = ud;
    monitor_feed(f->s->sh, f->origin, f->s->db, argc, argv, argl);
}

void monitor_feed_command(session *s, const command *cmd, int argc, const char **argv, const size_t *argl) {
    if (cmd->flags & CMD_ADMIN) return;
    char tmp[256];
    feed_ctx f = {.s = s, .origin = origin_of(s, tmp, sizeof tmp)};
    if (cmd->flags & CMD_EXEC) multi_each_queued(s, feed_queued, &f);
    monitor_feed(s->sh, f.origin, s->db, argc, argv, argl);
}

/* MONITOR */
static void monitor_cmd(cmd_ctx *c) {
    if (!c->sess || c->in_exec) {
        reply_error(c, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (pubsub_count(c->sess, PS_MONITOR)) return; /* already one: no reply, as Redis */
    pubsub_subscribe(c->sess, PS_MONITOR, "", 0); /* RESET and closing end it with the subscriptions */
    reply_ok(c);
}

static const command rows[] = {
    {.name = "monitor", .proc = monitor_cmd, .arity = 1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SESSION, .group = "server", .since = "1.0.0",
     .acl = "admin slow dangerous", .summary = "Listen for all requests received by the server in real time"},
};

void monitor_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
