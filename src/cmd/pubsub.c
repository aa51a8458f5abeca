/* pubsub.c - Pub/Sub commands: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE
 * PUNSUBSCRIBE PUBLISH SSUBSCRIBE SUNSUBSCRIBE SPUBLISH and PUBSUB
 * (CHANNELS NUMSUB NUMPAT SHARDCHANNELS SHARDNUMSUB HELP).
 *
 * The registry and delivery are shard/pubsub.c's. Subscription commands
 * touch session state and run on the connection's shard; PUBLISH runs
 * there too (it has no key), and the registry forwards the message to the
 * shards that have receivers. Shard channels are a namespace of their own
 * with the same delivery (there is one node: every shard serves them).
 *
 * Confirmations are push replies, as in Redis 7.0: RESP3 '>' frames, and
 * they reach the client even under CLIENT REPLY OFF/SKIP. A RESP2
 * connection with any subscription accepts only the commands that
 * pubsub_refuses lets through. */
#include "cmd/pubsub.h"
#include "cmd/cmd.h"
#include "net/conn.h"
#include "shard/pubsub.h"
#include "shard/shard.h"
#include <stdio.h>

int pubsub_refuses(session *s, const command *cmd, char *err, size_t errlen) {
    if (s->resp != 2 || !pubsub_total(s)) return 0;
    static const char *const ok[] = {"ping",         "subscribe",   "ssubscribe", "unsubscribe", "sunsubscribe",
                                     "psubscribe",   "punsubscribe", "quit",      "reset"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (!strcmp(cmd->name, ok[i])) return 0;
    snprintf(err, errlen,
             "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
             "this context",
             cmd->name);
    return 1;
}

/* Where a confirmation goes: the client gets it even when replies are off. */
static buf *push_out(cmd_ctx *c) {
    if (c->sess->flags & (SESS_REPLY_OFF | SESS_REPLY_SKIP)) return session_reply_buf(c->sess);
    return c->out;
}

/* The count a confirmation carries: channels and patterns together, shard
 * channels apart (Redis's clientSubscriptionsCount / ...ShardSubscriptionsCount). */
static long long sub_count(session *s, int kind) {
    if (kind == PS_SHARD) return (long long)pubsub_count(s, PS_SHARD);
    return (long long)(pubsub_count(s, PS_CHANNEL) + pubsub_count(s, PS_PATTERN));
}

static void confirm(cmd_ctx *c, buf *o, const char *word, const char *name, size_t len, int kind) {
    resp_push(o, c->resp, 3);
    resp_bulk(o, word, strlen(word));
    if (name)
        resp_bulk(o, name, len);
    else
        resp_null(o, c->resp);
    resp_int(o, sub_count(c->sess, kind));
}

static void subscribe_generic(cmd_ctx *c, int kind, const char *word) {
    buf *o = push_out(c);
    for (int j = 1; j < c->argc; j++) {
        pubsub_subscribe(c->sess, kind, c->argv[j], c->argl[j]);
        confirm(c, o, word, c->argv[j], c->argl[j], kind);
    }
}

static void unsubscribe_generic(cmd_ctx *c, int kind, const char *word) {
    buf *o = push_out(c);
    if (c->argc > 1) {
        for (int j = 1; j < c->argc; j++) {
            pubsub_unsubscribe(c->sess, kind, c->argv[j], c->argl[j]);
            confirm(c, o, word, c->argv[j], c->argl[j], kind);
        }
        return;
    }
    char **names;
    size_t *lens;
    size_t n = pubsub_names(c->sess, kind, &names, &lens);
    for (size_t i = 0; i < n; i++) {
        pubsub_unsubscribe(c->sess, kind, names[i], lens[i]);
        confirm(c, o, word, names[i], lens[i], kind);
    }
    if (!n) confirm(c, o, word, NULL, 0, kind);
    pubsub_names_free(names, lens, n);
}

/* SUBSCRIBE channel [channel ...] */
static void subscribe_cmd(cmd_ctx *c) { subscribe_generic(c, PS_CHANNEL, "subscribe"); }
/* UNSUBSCRIBE [channel ...] */
static void unsubscribe_cmd(cmd_ctx *c) { unsubscribe_generic(c, PS_CHANNEL, "unsubscribe"); }
/* PSUBSCRIBE pattern [pattern ...] */
static void psubscribe_cmd(cmd_ctx *c) { subscribe_generic(c, PS_PATTERN, "psubscribe"); }
/* PUNSUBSCRIBE [pattern ...] */
static void punsubscribe_cmd(cmd_ctx *c) { unsubscribe_generic(c, PS_PATTERN, "punsubscribe"); }
/* SSUBSCRIBE shardchannel [shardchannel ...] */
static void ssubscribe_cmd(cmd_ctx *c) { subscribe_generic(c, PS_SHARD, "ssubscribe"); }
/* SUNSUBSCRIBE [shardchannel ...] */
static void sunsubscribe_cmd(cmd_ctx *c) { unsubscribe_generic(c, PS_SHARD, "sunsubscribe"); }

/* PUBLISH channel message */
static void publish_cmd(cmd_ctx *c) {
    reply_int(c, pubsub_publish(c->sh, PS_CHANNEL, c->argv[1], c->argl[1], c->argv[2], c->argl[2]));
}

/* SPUBLISH shardchannel message */
static void spublish_cmd(cmd_ctx *c) {
    reply_int(c, pubsub_publish(c->sh, PS_SHARD, c->argv[1], c->argl[1], c->argv[2], c->argl[2]));
}

static void syntax_error(cmd_ctx *c) {
    int n = c->argl[1] > 128 ? 128 : (int)c->argl[1];
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try PUBSUB HELP.", n,
                 c->argv[1]);
}

static void list_generic(cmd_ctx *c, int kind) {
    if (c->argc > 3) {
        syntax_error(c);
        return;
    }
    buf names = {0};
    long long n = c->argc == 3 ? pubsub_list(kind, c->argv[2], c->argl[2], &names) : pubsub_list(kind, NULL, 0, &names);
    reply_array(c, n);
    buf_add(c->out, names.p, names.len);
    buf_free(&names);
}

static void numsub_generic(cmd_ctx *c, int kind) {
    reply_array(c, (long long)(c->argc - 2) * 2);
    for (int j = 2; j < c->argc; j++) {
        reply_bulk(c, c->argv[j], c->argl[j]);
        reply_int(c, pubsub_numsub(kind, c->argv[j], c->argl[j]));
    }
}

/* PUBSUB CHANNELS [pattern] */
static void pubsub_channels_cmd(cmd_ctx *c) { list_generic(c, PS_CHANNEL); }
/* PUBSUB SHARDCHANNELS [pattern] */
static void pubsub_shardchannels_cmd(cmd_ctx *c) { list_generic(c, PS_SHARD); }
/* PUBSUB NUMSUB [channel ...] */
static void pubsub_numsub_cmd(cmd_ctx *c) { numsub_generic(c, PS_CHANNEL); }
/* PUBSUB SHARDNUMSUB [shardchannel ...] */
static void pubsub_shardnumsub_cmd(cmd_ctx *c) { numsub_generic(c, PS_SHARD); }
/* PUBSUB NUMPAT: distinct patterns with a subscriber */
static void pubsub_numpat_cmd(cmd_ctx *c) { reply_int(c, pubsub_active(PS_PATTERN)); }

/* PUBSUB HELP */
static void pubsub_help_cmd(cmd_ctx *c) {
    static const char *const lines[] = {
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        "HELP",
        "    Prints this help.",
    };
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

/* Shard channels are keys to COMMAND GETKEYS (as Redis's key specs say),
 * but the command runs on the connection's shard. */
static int here(int argc, const char **argv, const size_t *argl, int n) { return -1; }

#define SUBFLAGS CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SESSION
#define PUBFLAGS CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_MAY_REPLICATE /* CLIENT PAUSE WRITE holds it */
#define INTRO CMD_PUBSUB | CMD_LOADING | CMD_STALE
static command pubsub_subs[] = {
    {.name = "pubsub|channels", .proc = pubsub_channels_cmd, .arity = -2, .flags = INTRO, .group = "pubsub",
     .since = "2.8.0", .acl = "pubsub slow", .summary = "List active channels"},
    {.name = "pubsub|numpat", .proc = pubsub_numpat_cmd, .arity = 2, .flags = INTRO, .group = "pubsub",
     .since = "2.8.0", .acl = "pubsub slow", .summary = "Get the count of unique patterns pattern subscriptions"},
    {.name = "pubsub|numsub", .proc = pubsub_numsub_cmd, .arity = -2, .flags = INTRO, .group = "pubsub",
     .since = "2.8.0", .acl = "pubsub slow", .summary = "Get the count of subscribers for channels"},
    {.name = "pubsub|shardchannels", .proc = pubsub_shardchannels_cmd, .arity = -2, .flags = INTRO,
     .group = "pubsub", .since = "7.0.0", .acl = "pubsub slow", .summary = "List active shard channels"},
    {.name = "pubsub|shardnumsub", .proc = pubsub_shardnumsub_cmd, .arity = -2, .flags = INTRO, .group = "pubsub",
     .since = "7.0.0", .acl = "pubsub slow", .summary = "Get the count of subscribers for shard channels"},
    {.name = "pubsub|help", .proc = pubsub_help_cmd, .arity = 2, .flags = CMD_LOADING | CMD_STALE, .group = "pubsub",
     .since = "6.2.0", .acl = "slow", .summary = "Show helpful text about the different subcommands"},
};

static const command rows[] = {
    {.name = "subscribe", .proc = subscribe_cmd, .arity = -2, .flags = SUBFLAGS, .group = "pubsub", .since = "2.0.0",
     .acl = "pubsub slow", .summary = "Listen for messages published to the given channels"},
    {.name = "unsubscribe", .proc = unsubscribe_cmd, .arity = -1, .flags = SUBFLAGS, .group = "pubsub",
     .since = "2.0.0", .acl = "pubsub slow", .summary = "Stop listening for messages posted to the given channels"},
    {.name = "psubscribe", .proc = psubscribe_cmd, .arity = -2, .flags = SUBFLAGS, .group = "pubsub",
     .since = "2.0.0", .acl = "pubsub slow",
     .summary = "Listen for messages published to channels matching the given patterns"},
    {.name = "punsubscribe", .proc = punsubscribe_cmd, .arity = -1, .flags = SUBFLAGS, .group = "pubsub",
     .since = "2.0.0", .acl = "pubsub slow",
     .summary = "Stop listening for messages posted to channels matching the given patterns"},
    {.name = "publish", .proc = publish_cmd, .arity = 3, .flags = PUBFLAGS, .group = "pubsub", .since = "2.0.0",
     .acl = "pubsub fast", .summary = "Post a message to a channel"},
    {.name = "ssubscribe", .proc = ssubscribe_cmd, .arity = -2, .flags = SUBFLAGS, .first = 1, .last = -1,
     .step = 1, .kflags = KS_NOT_KEY, .group = "pubsub", .since = "7.0.0", .acl = "pubsub slow",
     .summary = "Listen for messages published to the given shard channels"},
    {.name = "sunsubscribe", .proc = sunsubscribe_cmd, .arity = -1, .flags = SUBFLAGS, .first = 1, .last = -1,
     .step = 1, .kflags = KS_NOT_KEY, .group = "pubsub", .since = "7.0.0", .acl = "pubsub slow",
     .summary = "Stop listening for messages posted to the given shard channels"},
    {.name = "spublish", .proc = spublish_cmd, .arity = 3, .flags = PUBFLAGS, .first = 1, .last = 1, .step = 1,
     .kflags = KS_NOT_KEY,
     .route = here, .group = "pubsub", .since = "7.0.0", .acl = "pubsub fast",
     .summary = "Post a message to a shard channel"},
    {.name = "pubsub", .arity = -2, .group = "pubsub", .since = "2.8.0", .acl = "slow",
     .summary = "A container for Pub/Sub commands", .subs = pubsub_subs,
     .nsubs = (int)(sizeof pubsub_subs / sizeof pubsub_subs[0])},
};

void pubsub_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
