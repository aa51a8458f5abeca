/* acl.c - AUTH and ACL (CAT DELUSER DRYRUN GENPASS GETUSER HELP LIST LOAD
 * LOG SAVE SETUSER USERS WHOAMI), the dispatcher's gate (NOAUTH, NOPERM),
 * the ACL LOG, requirepass, protected mode and the session hooks.
 *
 * Commands that change users (SETUSER, DELUSER, LOAD) hold every shard
 * (CMD_ALLSHARDS), so no shard checks a command while a user changes (see
 * acl.h). AUTH changes only its own session (CMD_SESSION). Connections of
 * a deleted user, or of users replaced by ACL LOAD, are closed as Redis
 * does: the caller's own after its reply, the others at once (their shard
 * closes them at its next turn, before running anything of theirs). */
#include "cmd/acl.h"
#include "cmd/multi.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "server/config.h"
#include "shard/cmdstats.h"
#include "shard/pubsub.h"
#include "shard/shard.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define NOAUTH_ERR "NOAUTH Authentication required."
#define WRONGPASS_ERR "WRONGPASS invalid username-password pair or user is disabled."

/* ---- authentication ---- */

static int auth_required(void) {
    const acl_user *d = acl_default_user();
    return !(d->flags & USER_NOPASS) || !(d->flags & USER_ON);
}

static int default_open(void) { return !auth_required(); }

/* New connections: the default user, authenticated when it needs no
 * password; refused from outside loopback in protected mode. */
static const char *session_hook(session *s, int is_local) {
    s->user = acl_default_user();
    s->authed = default_open();
    if (!is_local && cfg_get(protected_mode) && (acl_default_user()->flags & USER_NOPASS))
        return "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set "
               "for the default user. In this mode connections are only accepted from the loopback interface. If you "
               "want to connect from external computers to Redis you may adopt one of the following solutions: 1) "
               "Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback "
               "interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is "
               "not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. "
               "2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and "
               "setting the protected mode option to 'no', and then restarting the server. 3) If you started the "
               "server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
               "authentication password for the default user. NOTE: You only need to do one of the above things in "
               "order for the server to start accepting connections from the outside.\r\n";
    return NULL;
}

static const char *user_name_hook(const session *s) { return s->user ? s->user->name : "default"; }

void acl_sess_reset(session *s) {
    if (!s->user) return;
    s->user = acl_default_user();
    s->authed = default_open();
}

int acl_auth(session *s, const char *user, size_t ul, const char *pass, size_t pl) {
    acl_user *u = acl_find(user, ul);
    if (u && acl_user_check_pass(u, pass, pl)) {
        s->user = u;
        s->authed = 1;
        return 1;
    }
    acl_log_add(ACL_DENIED_AUTH, s->multi ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, s, NULL, user, ul);
    return 0;
}

/* AUTH [username] password */
static void auth_cmd(cmd_ctx *c) {
    if (c->argc > 3) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    const char *user = "default", *pass = c->argv[c->argc - 1];
    size_t ul = 7, pl = c->argl[c->argc - 1];
    if (c->argc == 2) {
        if (acl_default_user()->flags & USER_NOPASS) {
            reply_error(c, "ERR AUTH <password> called without any password configured for the default user. Are you "
                           "sure your configuration is correct?");
            return;
        }
    } else {
        user = c->argv[1];
        ul = c->argl[1];
    }
    if (!c->sess || !c->sess->user) { /* the embedded engine: nothing to authenticate */
        reply_ok(c);
        return;
    }
    if (acl_auth(c->sess, user, ul, pass, pl))
        reply_ok(c);
    else
        reply_error(c, WRONGPASS_ERR);
}

/* SORT's BY pattern and GET need read access to every key (they read keys
 * that are not arguments), as Redis checks while parsing. */
static int sort_patterns_denied(const acl_user *u, const command *cmd, int argc, const char **argv, const size_t *argl,
                                char *err, size_t el) {
    int kind = (u->flags & USER_ALLPERM) ? 0 : acl_sort_kind(cmd); /* (every call of a restricted user) */
    if (!kind) return 0;
    int ro = kind == 2;
    int full = -1;
    for (int j = 2; j < argc; j++) {
        int left = argc - j - 1;
        const char *bad = NULL;
        if (str_eq_ci(argv[j], argl[j], "asc") || str_eq_ci(argv[j], argl[j], "desc") ||
            str_eq_ci(argv[j], argl[j], "alpha")) {
            continue;
        } else if (str_eq_ci(argv[j], argl[j], "limit") && left >= 2) {
            j += 2;
            continue;
        } else if (!ro && str_eq_ci(argv[j], argl[j], "store") && left >= 1) {
            j++;
            continue;
        } else if (str_eq_ci(argv[j], argl[j], "by") && left >= 1) {
            j++;
            if (memchr(argv[j], '*', argl[j])) bad = "BY";
        } else if (str_eq_ci(argv[j], argl[j], "get") && left >= 1) {
            j++;
            bad = "GET";
        } else {
            return 0; /* the command answers the syntax error */
        }
        if (!bad) continue;
        if (full < 0) full = acl_full_key_read(u, cmd, argc, argv, argl);
        if (!full) {
            snprintf(err, el, "ERR %s option of SORT denied due to insufficient ACL permissions.", bad);
            return 1;
        }
    }
    return 0;
}

int acl_redact_arg(const command *cmd, int argc, const char **argv, const size_t *argl, int i) {
    if (!strcmp(cmd->name, "auth")) return i >= 1;
    if (!strcmp(cmd->name, "hello")) {
        for (int j = 2; j + 2 < argc; j++)
            if (str_eq_ci(argv[j], argl[j], "auth")) return i == j + 1 || i == j + 2;
        return 0;
    }
    if (!strcmp(cmd->name, "migrate")) { /* AUTH's password, AUTH2's user and password */
        for (int j = 6; j < argc && !str_eq_ci(argv[j], argl[j], "keys"); j++) {
            if (str_eq_ci(argv[j], argl[j], "auth") && j + 1 < argc) {
                if (i == ++j) return 1;
            } else if (str_eq_ci(argv[j], argl[j], "auth2") && j + 2 < argc) {
                if (i == j + 1 || i == j + 2) return 1;
                j += 2;
            }
        }
        return 0;
    }
    if (!strcmp(cmd->name, "config|set") && i >= 3 && i % 2 == 1)
        return str_eq_ci(argv[i - 1], argl[i - 1], "requirepass");
    return 0;
}

int acl_gate(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, char *err, size_t el) {
    acl_user *u = s->user;
    if (!u) return 0;
    if (!s->authed && auth_required()) {
        if (cmd->flags & CMD_NOAUTH) return 0;
        snprintf(err, el, "%s", NOAUTH_ERR);
        return 1;
    }
    int pos = 0;
    int why = acl_check(u, cmd, argc, argv, argl, &pos);
    if (why == ACL_OK) return sort_patterns_denied(u, cmd, argc, argv, argl, err, el);
    const char *obj = why == ACL_DENIED_CMD ? cmd->name : argv[pos];
    size_t objl = why == ACL_DENIED_CMD ? strlen(cmd->name) : argl[pos];
    acl_log_add(why, s->multi ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, s, u->name, obj, objl);
    acl_denied_text(why, cmd, obj, objl, err, el);
    return 1;
}

/* ---- the log ---- */

typedef struct log_entry {
    long long count;
    int reason, context;
    char *object, *username, *cinfo;
    size_t objl, userl;
    int64_t ctime_ms;
} log_entry;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static log_entry *entries; /* newest first */
static int nentries, capentries;

static void log_entry_free(log_entry *e) {
    zfree(e->object);
    zfree(e->username);
    zfree(e->cinfo);
}

void acl_log_add(int why, int context, const session *s, const char *username, const char *obj, size_t objl) {
    const char *ob = why == ACL_DENIED_AUTH ? "AUTH" : obj;
    size_t obl = why == ACL_DENIED_AUTH ? 4 : objl;
    const char *un = why == ACL_DENIED_AUTH ? obj : username;
    size_t unl = why == ACL_DENIED_AUTH ? objl : strlen(username);
    buf ci = {0};
    if (s->conn) conn_describe(s->conn, &ci, mstime());
    if (ci.len && ci.p[ci.len - 1] == '\n') ci.len--;
    int64_t now = mstime();
    pthread_mutex_lock(&log_lock);
    int found = -1;
    for (int i = 0; i < nentries; i++) {
        log_entry *e = &entries[i];
        if (e->reason == why && e->context == context && e->objl == obl && !memcmp(e->object, ob, obl) &&
            e->userl == unl && !memcmp(e->username, un, unl) && now - e->ctime_ms < 60000) {
            found = i;
            break;
        }
    }
    log_entry ne;
    if (found >= 0) {
        ne = entries[found];
        memmove(entries + 1, entries, sizeof *entries * (size_t)found);
        ne.count++;
        ne.ctime_ms = now;
        zfree(ne.cinfo);
    } else {
        if (nentries == capentries) {
            capentries = capentries ? capentries * 2 : 16;
            entries = zrealloc(entries, sizeof *entries * (size_t)capentries);
        }
        memmove(entries + 1, entries, sizeof *entries * (size_t)nentries);
        nentries++;
        ne = (log_entry){.count = 1,
                         .reason = why,
                         .context = context,
                         .object = zstrndup(ob, obl),
                         .objl = obl,
                         .username = zstrndup(un, unl),
                         .userl = unl,
                         .ctime_ms = now};
    }
    ne.cinfo = zstrndup(ci.p ? ci.p : "", ci.len);
    entries[0] = ne;
    long long max = cfg_get(acllog_max_len);
    while (nentries > max && nentries > 0)
        log_entry_free(&entries[--nentries]);
    pthread_mutex_unlock(&log_lock);
    buf_free(&ci);
}

static const char *reason_name(int r) {
    return r == ACL_DENIED_CMD ? "command" : r == ACL_DENIED_KEY ? "key" : r == ACL_DENIED_AUTH ? "auth" : "channel";
}

static const char *context_name(int c) {
    return c == ACL_CTX_TOPLEVEL ? "toplevel" : c == ACL_CTX_MULTI ? "multi" : c == ACL_CTX_LUA ? "lua" : "module";
}

/* ACL LOG [count | RESET] */
static void acl_log_cmd(cmd_ctx *c) {
    long long count = 10;
    if (c->argc > 3) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (c->argc == 3) {
        if (arg_is(c, 2, "reset")) {
            pthread_mutex_lock(&log_lock);
            while (nentries > 0)
                log_entry_free(&entries[--nentries]);
            pthread_mutex_unlock(&log_lock);
            reply_ok(c);
            return;
        }
        if (!str2ll(c->argv[2], c->argl[2], &count) || count < 0) {
            reply_status(c, ST_NOTINT);
            return;
        }
    }
    int64_t now = mstime();
    pthread_mutex_lock(&log_lock);
    long long n = count < nentries ? count : nentries;
    reply_array(c, n);
    for (long long i = 0; i < n; i++) {
        log_entry *e = &entries[i];
        reply_map(c, 7);
        reply_cstr(c, "count");
        reply_int(c, e->count);
        reply_cstr(c, "reason");
        reply_cstr(c, reason_name(e->reason));
        reply_cstr(c, "context");
        reply_cstr(c, context_name(e->context));
        reply_cstr(c, "object");
        reply_bulk(c, e->object, e->objl);
        reply_cstr(c, "username");
        reply_bulk(c, e->username, e->userl);
        reply_cstr(c, "age-seconds");
        reply_double(c, (double)(now - e->ctime_ms) / 1000.0);
        reply_cstr(c, "client-info");
        reply_cstr(c, e->cinfo);
    }
    pthread_mutex_unlock(&log_lock);
}

/* ---- sessions of changed users ---- */

/* Closes connection x of shard sh (ctx holds every shard): the caller's
 * own after its reply, another at once (its shard closes it first thing
 * in its next turn; CLIENT LIST no longer shows it), as CLIENT KILL does. */
static void close_conn(cmd_ctx *c, shard *sh, conn *x) {
    if (&x->s == c->sess) {
        __atomic_fetch_or(&x->s.flags, SESS_CLOSE_AFTER_REPLY, __ATOMIC_RELAXED);
        return;
    }
    conn_mark_killed(x);
    __atomic_store_n(&sh->kill_reqs, 1, __ATOMIC_RELEASE);
    shard_wake(sh);
}

/* Closes every connection authenticated as u (ctx holds every shard). */
static void kill_sessions(acl_user *u, void *ud) {
    cmd_ctx *c = ud;
    int sids[MAX_SHARDS], n = ctx_shards(c, sids);
    for (int k = 0; k < n; k++) {
        shard *sh = shards[sids[k]];
        pthread_mutex_lock(&sh->conns_lock);
        for (conn *x = sh->conns; x; x = x->all_next) {
            if (x->s.user != u) continue;
            x->s.user = acl_default_user();
            x->s.authed = 0;
            close_conn(c, sh, x);
        }
        pthread_mutex_unlock(&sh->conns_lock);
    }
    if (c->sess && c->sess->user == u) { /* the embedded engine's session */
        c->sess->user = acl_default_user();
        c->sess->authed = 0;
    }
}

/* May u keep every subscription of session s (patterns literally)? */
static int subscriptions_allowed(const acl_user *u, const session *s) {
    static const int kinds[] = {PS_PATTERN, PS_CHANNEL, PS_SHARD};
    int ok = 1;
    for (size_t k = 0; ok && k < sizeof kinds / sizeof kinds[0]; k++) {
        if (!pubsub_count(s, kinds[k])) continue;
        char **names;
        size_t *lens;
        size_t n = pubsub_names(s, kinds[k], &names, &lens);
        for (size_t i = 0; ok && i < n; i++)
            ok = acl_channel_ok(u, names[i], lens[i], kinds[k] == PS_PATTERN);
        pubsub_names_free(names, lens, n);
    }
    return ok;
}

/* After u's rules changed (ACL SETUSER): its connections subscribed to a
 * channel, shard channel or pattern that u may no longer use are closed,
 * the others stay (Redis's ACLKillPubsubClientsIfNeeded). ctx holds every
 * shard, so each session's subscriptions stand still while read here. */
static void kill_revoked_subscribers(acl_user *u, cmd_ctx *c) {
    if (!pubsub_any()) return;
    for (int k = 0; k < u->nsels; k++)
        if (u->sels[k]->flags & SEL_ALLCHANNELS) return;
    int sids[MAX_SHARDS], n = ctx_shards(c, sids);
    for (int k = 0; k < n; k++) {
        shard *sh = shards[sids[k]];
        pthread_mutex_lock(&sh->conns_lock);
        for (conn *x = sh->conns; x; x = x->all_next)
            if (x->s.user == u && pubsub_total(&x->s) && !subscriptions_allowed(u, &x->s)) close_conn(c, sh, x);
        pthread_mutex_unlock(&sh->conns_lock);
    }
}

/* ---- ACL subcommands ---- */

/* ACL SETUSER username [rule ...] */
static void acl_setuser(cmd_ctx *c) {
    const char *name = c->argv[2];
    size_t nl = c->argl[2];
    if (!acl_name_ok(name, nl)) {
        reply_error(c, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    /* selectors over several words must close */
    int open = -1;
    for (int i = 3; i < c->argc; i++) {
        if (open < 0 && c->argl[i] && c->argv[i][0] == '(' && c->argv[i][c->argl[i] - 1] != ')')
            open = i;
        else if (open >= 0 && c->argl[i] && c->argv[i][c->argl[i] - 1] == ')')
            open = -1;
    }
    if (open >= 0) {
        reply_errorf(c, "ERR Unmatched parenthesis in acl selector starting at '%.*s'.", (int)c->argl[open],
                     c->argv[open]);
        return;
    }
    acl_user *old = acl_find(name, nl);
    acl_user *u = old ? acl_user_copy(old) : acl_user_new(name, nl);
    char why[512];
    int bad = 0;
    if (acl_user_rules(u, c->argc - 3, c->argv + 3, c->argl + 3, &bad, why, sizeof why) < 0) {
        /* the failing rule as given (a selector over several words: joined) */
        buf op = {0};
        int i = 3 + bad;
        buf_add(&op, c->argv[i], c->argl[i]);
        if (c->argl[i] && c->argv[i][0] == '(' && c->argv[i][c->argl[i] - 1] != ')')
            for (int j = i + 1; j < c->argc; j++) {
                buf_addc(&op, ' ');
                buf_add(&op, c->argv[j], c->argl[j]);
                if (c->argl[j] && c->argv[j][c->argl[j] - 1] == ')') break;
            }
        reply_errorf(c, "ERR Error in ACL SETUSER modifier '%.*s': %s", (int)op.len, op.p, why);
        buf_free(&op);
        acl_user_free(u);
        return;
    }
    acl_put(u); /* an existing user takes u's content and keeps its address */
    if (old) kill_revoked_subscribers(old, c);
    reply_ok(c);
}

/* ACL DELUSER username [username ...] */
static void acl_deluser(cmd_ctx *c) {
    for (int i = 2; i < c->argc; i++)
        if (str_eq_ci(c->argv[i], c->argl[i], "default") && c->argl[i] == 7 && !memcmp(c->argv[i], "default", 7)) {
            reply_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    long long n = 0;
    for (int i = 2; i < c->argc; i++) {
        acl_user *u = acl_find(c->argv[i], c->argl[i]);
        if (!u || acl_remove(c->argv[i], c->argl[i]) < 0) continue;
        kill_sessions(u, c);
        acl_user_free(u);
        n++;
    }
    reply_int(c, n);
}

static void reply_sel(cmd_ctx *c, const acl_sel *s) {
    buf b = {0};
    reply_cstr(c, "commands");
    acl_sel_commands(s, &b);
    reply_bulk(c, b.p ? b.p : "", b.len);
    b.len = 0;
    reply_cstr(c, "keys");
    acl_sel_keys(s, &b);
    reply_bulk(c, b.p ? b.p : "", b.len);
    b.len = 0;
    reply_cstr(c, "channels");
    acl_sel_channels(s, &b);
    reply_bulk(c, b.p ? b.p : "", b.len);
    buf_free(&b);
}

/* ACL GETUSER username */
static void acl_getuser(cmd_ctx *c) {
    acl_user *u = acl_find(c->argv[2], c->argl[2]);
    if (!u) {
        reply_null(c);
        return;
    }
    reply_map(c, 6);
    reply_cstr(c, "flags");
    int nf = 1 + ((u->flags & USER_NOPASS) != 0) + ((u->flags & USER_SKIP_SANITIZE) != 0) +
             ((u->flags & USER_SANITIZE) != 0);
    reply_set(c, nf);
    reply_cstr(c, u->flags & USER_ON ? "on" : "off");
    if (u->flags & USER_NOPASS) reply_cstr(c, "nopass");
    if (u->flags & USER_SKIP_SANITIZE) reply_cstr(c, "skip-sanitize-payload");
    if (u->flags & USER_SANITIZE) reply_cstr(c, "sanitize-payload");
    reply_cstr(c, "passwords");
    reply_array(c, u->npass);
    for (int i = 0; i < u->npass; i++)
        reply_bulk(c, u->pass[i], 64);
    reply_sel(c, u->sels[0]);
    reply_cstr(c, "selectors");
    reply_array(c, u->nsels - 1);
    for (int i = 1; i < u->nsels; i++) {
        reply_map(c, 3);
        reply_sel(c, u->sels[i]);
    }
}

/* ACL USERS */
static void acl_users(cmd_ctx *c) {
    int n = acl_count();
    reply_array(c, n);
    for (int i = 0; i < n; i++)
        reply_bulk(c, acl_at(i)->name, acl_at(i)->namelen);
}

void acl_describe_line(const acl_user *u, buf *b) {
    buf_adds(b, "user ");
    buf_add(b, u->name, u->namelen);
    buf_addc(b, ' ');
    acl_user_describe(u, b);
}

/* ACL LIST */
static void acl_list(cmd_ctx *c) {
    int n = acl_count();
    reply_array(c, n);
    buf b = {0};
    for (int i = 0; i < n; i++) {
        b.len = 0;
        acl_describe_line(acl_at(i), &b);
        reply_bulk(c, b.p, b.len);
    }
    buf_free(&b);
}

/* ACL WHOAMI */
static void acl_whoami(cmd_ctx *c) {
    const acl_user *u = c->sess && c->sess->user ? c->sess->user : acl_default_user();
    reply_bulk(c, u->name, u->namelen);
}

typedef struct cat_list {
    cmd_ctx *c;
    uint32_t mask;
    long long n;
} cat_list;

static void cat_row(const command *cmd, void *ud) {
    cat_list *w = ud;
    if (cmd_acl_cats(cmd) & w->mask) {
        reply_cstr(w->c, cmd->name);
        w->n++;
    }
    for (int i = 0; i < cmd->nsubs; i++)
        if (cmd_acl_cats(&cmd->subs[i]) & w->mask) {
            reply_cstr(w->c, cmd->subs[i].name);
            w->n++;
        }
}

/* ACL CAT [category] */
static void acl_cat(cmd_ctx *c) {
    if (c->argc > 3) {
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL HELP.",
                     (int)(c->argl[1] > 128 ? 128 : c->argl[1]), c->argv[1]);
        return;
    }
    if (c->argc == 2) {
        int n = cmd_acl_cat_count();
        reply_array(c, n);
        for (int i = 0; i < n; i++)
            reply_cstr(c, cmd_acl_cat_name(i));
        return;
    }
    int cat = cmd_acl_cat_index(c->argv[2], c->argl[2]);
    if (cat < 0) {
        reply_errorf(c, "ERR Unknown category '%.*s'", (int)c->argl[2], c->argv[2]);
        return;
    }
    cat_list w = {.c = c, .mask = 1u << cat};
    size_t at = reply_defer(c);
    cmd_foreach(cat_row, &w);
    reply_defer_array(c, at, w.n);
}

/* ACL GENPASS [bits] */
static void acl_genpass(cmd_ctx *c) {
    long long bits = 256;
    if (c->argc > 3) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (c->argc == 3 && (!str2ll(c->argv[2], c->argl[2], &bits) || bits <= 0 || bits > 4096)) {
        reply_error(c, "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
                       "number up to 4096");
        return;
    }
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[512];
    size_t need = (chars + 1) / 2, got = 0;
    while (got < need) {
        ssize_t r = getrandom(raw + got, need - got, 0);
        if (r <= 0) break;
        got += (size_t)r;
    }
    char out[1025];
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < chars; i++)
        out[i] = hex[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    reply_bulk(c, out, chars);
}

/* ACL DRYRUN username command [arg ...] */
static void acl_dryrun(cmd_ctx *c) {
    acl_user *u = acl_find(c->argv[2], c->argl[2]);
    if (!u) {
        reply_errorf(c, "ERR User '%.*s' not found", (int)c->argl[2], c->argv[2]);
        return;
    }
    int argc = c->argc - 3;
    const char **argv = c->argv + 3;
    const size_t *argl = c->argl + 3;
    const command *cmd = cmd_lookup(argv[0], argl[0]);
    if (cmd && cmd->nsubs) cmd = argc >= 2 ? cmd_lookup_sub(cmd, argv[1], argl[1]) : NULL;
    if (!cmd) {
        reply_errorf(c, "ERR Command '%.*s' not found", (int)argl[0], argv[0]);
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->name);
        return;
    }
    int pos = 0, why = acl_check(u, cmd, argc, argv, argl, &pos);
    if (why == ACL_OK) {
        reply_ok(c);
        return;
    }
    char msg[512];
    if (why == ACL_DENIED_CMD)
        snprintf(msg, sizeof msg, "This user has no permissions to run the '%s' command", cmd->name);
    else
        snprintf(msg, sizeof msg, "This user has no permissions to access the '%.*s' %s", (int)argl[pos], argv[pos],
                 why == ACL_DENIED_KEY ? "key" : "channel");
    reply_cstr(c, msg);
}

#define NO_ACLFILE                                                                                                     \
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "         \
    "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order "     \
    "to store users in the Redis configuration."

/* ACL LOAD */
static void acl_load(cmd_ctx *c) {
    if (!cfg.aclfile_s || !*cfg.aclfile_s) {
        reply_error(c, NO_ACLFILE);
        return;
    }
    char err[1024];
    if (acl_file_load(cfg.aclfile_s, kill_sessions, c, err, sizeof err) < 0) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    reply_ok(c);
}

/* ACL SAVE */
static void acl_save(cmd_ctx *c) {
    if (!cfg.aclfile_s || !*cfg.aclfile_s) {
        reply_error(c, NO_ACLFILE);
        return;
    }
    char err[1024];
    if (acl_file_save(cfg.aclfile_s, err, sizeof err) < 0) {
        reply_errorf(c, "ERR There was an error trying to save the ACLs. Please check the server logs for more "
                        "information");
        log_msg(LOG_WARNING, "%s", err);
        return;
    }
    reply_ok(c);
}

/* ACL HELP */
static void acl_help(cmd_ctx *c) {
    static const char *lines[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Print this help.",
    };
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

/* ---- startup and configuration ---- */

/* CONFIG SET requirepass: the default user's password (none: nopass). */
static int requirepass_apply(char *err, size_t el) {
    acl_user *d = acl_default_user();
    const char *p = cfg.requirepass_s ? cfg.requirepass_s : "";
    size_t pl = config_value_len("requirepass"); /* it may hold NUL bytes */
    if (!pl) {
        acl_user_rule(d, "nopass", 6, err, el);
    } else {
        acl_user_rule(d, "resetpass", 9, err, el);
        buf b = {0};
        buf_addc(&b, '>');
        buf_add(&b, p, pl);
        acl_user_rule(d, b.p, b.len, err, el);
        buf_free(&b);
    }
    return 0;
}

int acl_startup(char *err, size_t el) {
    acl_init();
    acl_check_init();
    int nlines = config_user_count();
    int has_file = cfg.aclfile_s && *cfg.aclfile_s;
    if (nlines && has_file) {
        snprintf(err, el,
                 "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is "
                 "invalid. This setup is very likely to lead to configuration errors and security holes, please "
                 "define either an ACL file or declare users directly in your redis.conf, but not both.");
        return -1;
    }
    for (int i = 0; i < nlines; i++) {
        int argc;
        const char **argv;
        const size_t *argl;
        config_user_line(i, &argc, &argv, &argl);
        if (argc < 1 || !acl_name_ok(argv[0], argl[0])) {
            snprintf(err, el, "Error in user declaration '%.*s': Usernames can't contain spaces or null characters",
                     argc ? (int)argl[0] : 0, argc ? argv[0] : "");
            return -1;
        }
        for (int j = 0; j < i; j++) {
            int ac;
            const char **av;
            const size_t *al;
            config_user_line(j, &ac, &av, &al);
            if (al[0] == argl[0] && !memcmp(av[0], argv[0], argl[0])) {
                snprintf(err, el,
                         "Error in user declaration '%.*s': Duplicate user found. A user can only be defined "
                         "once in config files",
                         (int)argl[0], argv[0]);
                return -1;
            }
        }
        acl_user *u = acl_user_new(argv[0], argl[0]);
        if (argl[0] == 7 && !memcmp(argv[0], "default", 7)) acl_user_rule(u, "reset", 5, NULL, 0); /* as Redis */
        char why[512];
        int bad = 0;
        if (acl_user_rules(u, argc - 1, argv + 1, argl + 1, &bad, why, sizeof why) < 0) {
            snprintf(err, el, "Error in user declaration '%.*s': %s", (int)argl[0], argv[0], why);
            acl_user_free(u);
            return -1;
        }
        acl_put(u);
    }
    if (has_file) {
        char why[2048];
        if (acl_file_load(cfg.aclfile_s, NULL, NULL, why, sizeof why) < 0) {
            snprintf(err, el, "Aborting Redis startup because of ACL errors: %s", why);
            return -1;
        }
    }
    if (cfg.requirepass_s && *cfg.requirepass_s) requirepass_apply(err, el);
    return 0;
}

#define ADM CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE
#define SUB(nm, fn, ar, fl, summ)                                                                                      \
    {                                                                                                                  \
        .name = "acl|" nm, .proc = fn, .arity = ar, .flags = fl, .group = "server", .since = "6.0.0", .acl = "slow",   \
        .summary = summ                                                                                                \
    }
static command acl_subs[] = {
    SUB("cat", acl_cat, -2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
        "List the ACL categories or the commands inside a category"),
    SUB("deluser", acl_deluser, -3, ADM | CMD_ALLSHARDS, "Remove the specified ACL users and the associated rules"),
    SUB("dryrun", acl_dryrun, -4, ADM,
        "Returns whether the user can execute the given command without executing the command."),
    SUB("genpass", acl_genpass, -2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
        "Generate a pseudorandom secure password to use for ACL users"),
    SUB("getuser", acl_getuser, 3, ADM, "Get the rules for a specific ACL user"),
    SUB("list", acl_list, 2, ADM, "List the current ACL rules in ACL config file format"),
    SUB("load", acl_load, 2, ADM | CMD_ALLSHARDS, "Reload the ACLs from the configured ACL file"),
    SUB("log", acl_log_cmd, -2, ADM, "List latest events denied because of ACLs in place"),
    SUB("save", acl_save, 2, ADM, "Save the current ACL rules in the configured ACL file"),
    SUB("setuser", acl_setuser, -3, ADM | CMD_ALLSHARDS, "Modify or create the rules for a specific ACL user"),
    SUB("users", acl_users, 2, ADM, "List the username of all the configured ACL rules"),
    SUB("whoami", acl_whoami, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SESSION,
        "Return the name of the user associated to the current connection"),
    SUB("help", acl_help, 2, CMD_LOADING | CMD_STALE, "Show helpful text about the different subcommands"),
};

static const command rows[] = {
    {.name = "auth",
     .proc = auth_cmd,
     .arity = -2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NOAUTH | CMD_ALLOWBUSY | CMD_SESSION,
     .group = "connection",
     .since = "1.0.0",
     .acl = "fast connection",
     .summary = "Authenticate to the server"},
    {.name = "acl",
     .arity = -2,
     .group = "server",
     .since = "6.0.0",
     .acl = "slow",
     .summary = "A container for Access List Control commands ",
     .subs = acl_subs,
     .nsubs = (int)(sizeof acl_subs / sizeof acl_subs[0])},
};

/* CONFIG REWRITE: the users as `user` lines, unless they live in an aclfile. */
static void rewrite_users(buf *o) {
    if (cfg.aclfile_s && *cfg.aclfile_s) return;
    for (int i = 0; i < acl_count(); i++) {
        acl_describe_line(acl_at(i), o);
        buf_addc(o, '\n');
    }
}

void acl_register(void) {
    config_users_hook = rewrite_users;
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
    conn_session_hook = session_hook;
    conn_user_name_hook = user_name_hook;
    config_on_apply("requirepass", requirepass_apply);
}
