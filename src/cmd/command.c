/* command.c - COMMAND [COUNT|INFO|DOCS|LIST|GETKEYS|GETKEYSANDFLAGS|HELP]:
 * introspection of the command table, in Redis 7.0's reply shapes.
 *
 * Everything is derived from the command rows (cmd.h): the flags set from
 * row.flags, the ACL categories from row.acl plus the ones Redis implies
 * from the flags, the key specs from the row's (cmd/keyspec.c finds the
 * keys of GETKEYS with them), the tips from row.tips. The table is
 * read-only after start,
 * so these handlers run on any shard without locks.
 *
 * COMMAND itself is a plain row with its own handler, not a container
 * (.nsubs = 0): the dispatcher requires a subcommand for containers, and a
 * bare COMMAND must list every command. command_cmd therefore resolves its
 * subcommands itself, and subs_of() shows them to the introspection code. */
#include "cmd/cmd.h"
#include "cmd/info.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <stdio.h>
#include <string.h>

/* ---- flags and ACL categories ---- */

/* Redis's order of the command flags in COMMAND INFO. */
static const struct {
    uint32_t bit;
    const char *name;
} flag_names[] = {
    {CMD_WRITE, "write"},
    {CMD_READONLY, "readonly"},
    {CMD_DENYOOM, "denyoom"},
    {CMD_ADMIN, "admin"},
    {CMD_PUBSUB, "pubsub"},
    {CMD_NOSCRIPT, "noscript"},
    {CMD_BLOCKING, "blocking"},
    {CMD_LOADING, "loading"},
    {CMD_STALE, "stale"},
    {CMD_SKIP_MONITOR, "skip_monitor"},
    {CMD_SKIP_SLOWLOG, "skip_slowlog"},
    {CMD_FAST, "fast"},
    {CMD_NOAUTH, "no_auth"},
    {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"},
    {CMD_NO_ASYNC_LOADING, "no_async_loading"},
    {CMD_NOMULTI, "no_multi"},
    {CMD_MOVABLEKEYS, "movablekeys"},
    {CMD_ALLOWBUSY, "allow_busy"},
};
#define NFLAGS ((int)(sizeof flag_names / sizeof flag_names[0]))

/* Redis's ACL categories, in its order (the bit is the index). */
static const char *const acl_names[] = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting",
};
#define NACL ((int)(sizeof acl_names / sizeof acl_names[0]))

static int acl_index(const char *s, size_t n) {
    for (int i = 0; i < NACL; i++)
        if (str_eq_ci(s, n, acl_names[i])) return i;
    return -1;
}

static uint32_t acl_bit(const char *name) { return 1u << acl_index(name, strlen(name)); }

static uint32_t visible_flags(const command *cmd) {
    uint32_t f = cmd->flags;
    if (cmd->keys) f |= CMD_MOVABLEKEYS;
    return f;
}

/* The row's categories plus those Redis implies from the flags. */
static uint32_t acl_bits(const command *cmd) {
    uint32_t bits = 0;
    const char *p = cmd->acl ? cmd->acl : "";
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        int i = n ? acl_index(p, n) : -1;
        if (i >= 0) bits |= 1u << i;
        p += n;
    }
    uint32_t f = cmd->flags;
    if (f & CMD_WRITE) bits |= acl_bit("write");
    if ((f & CMD_READONLY) && !(bits & acl_bit("scripting"))) bits |= acl_bit("read");
    if (f & CMD_ADMIN) bits |= acl_bit("admin") | acl_bit("dangerous");
    if (f & CMD_PUBSUB) bits |= acl_bit("pubsub");
    if (f & CMD_FAST) bits |= acl_bit("fast");
    if (f & CMD_BLOCKING) bits |= acl_bit("blocking");
    if (!(bits & acl_bit("fast"))) bits |= acl_bit("slow");
    return bits;
}

uint32_t cmd_acl_cats(const command *cmd) { return acl_bits(cmd); }
int cmd_acl_cat_count(void) { return NACL; }
const char *cmd_acl_cat_name(int i) { return i >= 0 && i < NACL ? acl_names[i] : NULL; }
int cmd_acl_cat_index(const char *s, size_t n) { return acl_index(s, n); }

static int popcount(uint32_t x) { return __builtin_popcount(x); }

/* ---- subcommands (COMMAND's own live here, see the top comment) ---- */

/* COMMAND's own row and subcommands, set by command_register. */
static const command *command_row, *command_subs;
static int ncommand_subs;

static const command *subs_of(const command *cmd, int *n) {
    if (cmd == command_row) {
        *n = ncommand_subs;
        return command_subs;
    }
    *n = cmd->nsubs;
    return cmd->subs;
}

static const command *find_sub(const command *parent, const char *name, size_t len) {
    int n;
    const command *subs = subs_of(parent, &n);
    size_t pl = strlen(parent->name);
    for (int i = 0; i < n; i++) {
        const char *full = subs[i].name; /* "parent|sub" */
        if (strlen(full) == pl + 1 + len && !strncasecmp(full + pl + 1, name, len)) return &subs[i];
    }
    return NULL;
}

/* "get" or "config|get" as COMMAND INFO and DOCS take them. */
static const command *find_by_fullname(const char *name, size_t len) {
    const char *bar = memchr(name, '|', len);
    if (!bar) return cmd_lookup(name, len);
    const command *parent = cmd_lookup(name, (size_t)(bar - name));
    if (!parent) return NULL;
    return find_sub(parent, bar + 1, len - (size_t)(bar - name) - 1);
}

/* ---- COMMAND INFO entries ---- */

static void reply_flag_set(cmd_ctx *c, const command *cmd) {
    uint32_t f = visible_flags(cmd);
    int n = 0;
    for (int i = 0; i < NFLAGS; i++)
        n += (f & flag_names[i].bit) != 0;
    reply_set(c, n);
    for (int i = 0; i < NFLAGS; i++)
        if (f & flag_names[i].bit) reply_simple(c, flag_names[i].name);
}

static void reply_acl_set(cmd_ctx *c, const command *cmd) {
    uint32_t bits = acl_bits(cmd);
    reply_set(c, popcount(bits));
    char tmp[32];
    for (int i = 0; i < NACL; i++)
        if (bits & (1u << i)) {
            snprintf(tmp, sizeof tmp, "@%s", acl_names[i]);
            reply_simple(c, tmp);
        }
}

/* Space-separated words as a set of bulk strings (COMMAND INFO's tips). */
static void reply_words(cmd_ctx *c, const char *words) {
    int n = 0;
    for (const char *p = words ? words : ""; *p;) {
        p += strspn(p, " ");
        size_t w = strcspn(p, " ");
        n += w > 0;
        p += w;
    }
    reply_set(c, n);
    for (const char *p = words ? words : ""; *p;) {
        p += strspn(p, " ");
        size_t w = strcspn(p, " ");
        if (w) reply_bulk(c, p, w);
        p += w;
    }
}

/* A key's KS_* flags, in Redis's order and spelling. */
static void reply_key_flags(cmd_ctx *c, uint16_t flags) {
    static const char *const names[] = {"RO",     "RW",     "OW",      "RM",         "access",        "update",
                                        "insert", "delete", "not_key", "incomplete", "variable_flags"};
    int n = (int)(sizeof names / sizeof names[0]);
    reply_set(c, popcount(flags & ((1u << n) - 1)));
    for (int i = 0; i < n; i++)
        if (flags & (1u << i)) reply_simple(c, names[i]);
}

/* {type, spec: {k1: v1, ...}} with up to three integer fields, or the
 * keyword and its startfrom when kw is set. */
static void reply_search_part(cmd_ctx *c, const char *type, const char *kw, int n, const char *const *keys,
                              const int *vals) {
    reply_map(c, 2);
    reply_cstr(c, "type");
    reply_cstr(c, type);
    reply_cstr(c, "spec");
    reply_map(c, n + (kw != NULL));
    if (kw) {
        reply_cstr(c, "keyword");
        reply_cstr(c, kw);
    }
    for (int i = 0; i < n; i++) {
        reply_cstr(c, keys[i]);
        reply_int(c, vals[i]);
    }
}

static void reply_key_spec(cmd_ctx *c, const key_spec *s) {
    reply_map(c, 3 + (s->notes != NULL));
    if (s->notes) {
        reply_cstr(c, "notes");
        reply_cstr(c, s->notes);
    }
    reply_cstr(c, "flags");
    reply_key_flags(c, s->flags);
    static const char *const index_k[] = {"index"}, *const startfrom_k[] = {"startfrom"};
    static const char *const range_k[] = {"lastkey", "keystep", "limit"};
    static const char *const keynum_k[] = {"keynumidx", "firstkey", "keystep"};
    int v[3] = {s->pos};
    reply_cstr(c, "begin_search");
    if (s->bs == KS_BS_INDEX)
        reply_search_part(c, "index", NULL, 1, index_k, v);
    else if (s->bs == KS_BS_KEYWORD)
        reply_search_part(c, "keyword", s->keyword, 1, startfrom_k, v);
    else
        reply_search_part(c, "unknown", NULL, 0, NULL, NULL);
    v[0] = s->a, v[1] = s->b, v[2] = s->c;
    reply_cstr(c, "find_keys");
    if (s->fk == KS_FK_RANGE)
        reply_search_part(c, "range", NULL, 3, range_k, v);
    else if (s->fk == KS_FK_KEYNUM)
        reply_search_part(c, "keynum", NULL, 3, keynum_k, v);
    else
        reply_search_part(c, "unknown", NULL, 0, NULL, NULL);
}

static void reply_key_specs(cmd_ctx *c, const command *cmd) {
    key_spec one;
    const key_spec *specs;
    int n = cmd_key_specs(cmd, &one, &specs);
    reply_set(c, n);
    for (int i = 0; i < n; i++)
        reply_key_spec(c, &specs[i]);
}

/* [name, arity, flags, first, last, step, acl, tips, key specs, subcommands] */
static void reply_info(cmd_ctx *c, const command *cmd) {
    reply_array(c, 10);
    reply_cstr(c, cmd->name);
    reply_int(c, cmd->arity);
    reply_flag_set(c, cmd);
    reply_int(c, cmd->first);
    reply_int(c, cmd->last);
    reply_int(c, cmd->step);
    reply_acl_set(c, cmd);
    reply_words(c, cmd->tips);
    reply_key_specs(c, cmd);
    int n;
    const command *subs = subs_of(cmd, &n);
    if (n == 0) {
        reply_set(c, 0);
        return;
    }
    reply_array(c, n);
    for (int i = 0; i < n; i++)
        reply_info(c, &subs[i]);
}

/* ---- COMMAND DOCS entries ---- */

static void reply_docs(cmd_ctx *c, const command *cmd) {
    int n;
    const command *subs = subs_of(cmd, &n);
    reply_map(c, (cmd->summary != NULL) + (cmd->since != NULL) + (cmd->group != NULL) + (n > 0));
    if (cmd->summary) {
        reply_cstr(c, "summary");
        reply_cstr(c, cmd->summary);
    }
    if (cmd->since) {
        reply_cstr(c, "since");
        reply_cstr(c, cmd->since);
    }
    if (cmd->group) {
        reply_cstr(c, "group");
        reply_cstr(c, cmd->group);
    }
    if (n > 0) {
        reply_cstr(c, "subcommands");
        reply_map(c, n);
        for (int i = 0; i < n; i++) {
            reply_cstr(c, subs[i].name);
            reply_docs(c, &subs[i]);
        }
    }
}

/* ---- walking the table ---- */

typedef struct walk {
    cmd_ctx *c;
    long long count;
    int what;            /* W_INFO, W_DOCS, W_NAMES */
    const char *pattern; /* LIST FILTERBY PATTERN */
    size_t plen;
    int aclcat; /* LIST FILTERBY ACLCAT: bit index, -1 none, -2 unknown */
} walk;

enum { W_INFO, W_DOCS, W_NAMES };

static int list_wants(const walk *w, const command *cmd) {
    if (w->aclcat == -2) return 0;
    if (w->aclcat >= 0 && !(acl_bits(cmd) & (1u << w->aclcat))) return 0;
    if (w->pattern && !glob_match(w->pattern, w->plen, cmd->name, strlen(cmd->name), 1)) return 0;
    return 1;
}

static void walk_one(const command *cmd, void *ud) {
    walk *w = ud;
    if (w->what == W_INFO) {
        reply_info(w->c, cmd);
        w->count++;
    } else if (w->what == W_DOCS) {
        reply_cstr(w->c, cmd->name);
        reply_docs(w->c, cmd);
        w->count++;
    } else {
        if (list_wants(w, cmd)) {
            reply_cstr(w->c, cmd->name);
            w->count++;
        }
        int n;
        const command *subs = subs_of(cmd, &n);
        for (int i = 0; i < n; i++)
            if (list_wants(w, &subs[i])) {
                reply_cstr(w->c, subs[i].name);
                w->count++;
            }
    }
}

static void reply_all(cmd_ctx *c, int what) {
    walk w = {.c = c, .what = what, .aclcat = -1};
    size_t at = reply_defer(c);
    cmd_foreach(walk_one, &w);
    if (what == W_DOCS)
        reply_defer_map(c, at, w.count);
    else
        reply_defer_array(c, at, w.count);
}

/* ---- handlers ---- */

/* COMMAND COUNT */
static void command_count(cmd_ctx *c) { reply_int(c, cmd_count()); }

/* COMMAND INFO [command-name ...] */
static void command_info(cmd_ctx *c) {
    if (c->argc == 2) {
        reply_all(c, W_INFO);
        return;
    }
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        const command *cmd = find_by_fullname(c->argv[i], c->argl[i]);
        if (cmd)
            reply_info(c, cmd);
        else
            reply_null(c);
    }
}

/* COMMAND DOCS [command-name ...] */
static void command_docs(cmd_ctx *c) {
    if (c->argc == 2) {
        reply_all(c, W_DOCS);
        return;
    }
    size_t at = reply_defer(c);
    long long n = 0;
    for (int i = 2; i < c->argc; i++) {
        const command *cmd = find_by_fullname(c->argv[i], c->argl[i]);
        if (!cmd) continue;
        reply_cstr(c, cmd->name);
        reply_docs(c, cmd);
        n++;
    }
    reply_defer_map(c, at, n);
}

/* COMMAND LIST [FILTERBY MODULE module-name | ACLCAT category | PATTERN pattern] */
static void command_list(cmd_ctx *c) {
    walk w = {.c = c, .what = W_NAMES, .aclcat = -1};
    if (c->argc == 5 && arg_is(c, 2, "filterby")) {
        if (arg_is(c, 3, "module")) {
            reply_array(c, 0); /* no modules */
            return;
        } else if (arg_is(c, 3, "aclcat")) {
            int i = acl_index(c->argv[4], c->argl[4]);
            w.aclcat = i >= 0 ? i : -2;
        } else if (arg_is(c, 3, "pattern")) {
            w.pattern = c->argv[4];
            w.plen = c->argl[4];
        } else {
            reply_status(c, ST_SYNTAX);
            return;
        }
    } else if (c->argc != 2) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    size_t at = reply_defer(c);
    cmd_foreach(walk_one, &w);
    reply_defer_array(c, at, w.count);
}

/* The command described by argv[2..]: resolves subcommands and checks the
 * arity as Redis's GETKEYS does. Returns NULL after replying an error. */
static const command *getkeys_target(cmd_ctx *c) {
    const command *cmd = cmd_lookup(c->argv[2], c->argl[2]);
    int n = 0;
    if (cmd) subs_of(cmd, &n);
    if (cmd && n > 0) cmd = c->argc > 3 ? find_sub(cmd, c->argv[3], c->argl[3]) : NULL;
    if (!cmd) {
        reply_error(c, "ERR Invalid command specified");
        return NULL;
    }
    if (!cmd_has_keys(cmd)) {
        reply_error(c, "ERR The command has no key arguments");
        return NULL;
    }
    int argc = c->argc - 2;
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_error(c, "ERR Invalid number of arguments specified for command");
        return NULL;
    }
    return cmd;
}

/* COMMAND GETKEYS command [arg ...], and GETKEYSANDFLAGS when with_flags. */
static void getkeys(cmd_ctx *c, int with_flags) {
    const command *cmd = getkeys_target(c);
    if (!cmd) return;
    key_refs r;
    int nk = cmd_key_refs(cmd, c->argc - 2, c->argv + 2, c->argl + 2, &r);
    if (nk <= 0) {
        if (cmd->flags & CMD_NO_MANDATORY_KEYS)
            reply_array(c, 0);
        else
            reply_error(c, "ERR Invalid arguments specified for command");
    } else {
        reply_array(c, nk);
        for (int i = 0; i < nk; i++) {
            int p = r.v[i].pos + 2;
            if (with_flags) reply_array(c, 2);
            reply_bulk(c, c->argv[p], c->argl[p]);
            if (with_flags) reply_key_flags(c, r.v[i].flags);
        }
    }
    key_refs_free(&r);
}

static void command_getkeys(cmd_ctx *c) { getkeys(c, 0); }
static void command_getkeysandflags(cmd_ctx *c) { getkeys(c, 1); }

/* COMMAND HELP */
static void command_help(cmd_ctx *c) {
    static const char *lines[] = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        "HELP",
        "    Prints this help.",
    };
    int n = (int)(sizeof lines / sizeof lines[0]);
    reply_array(c, n);
    for (int i = 0; i < n; i++)
        reply_simple(c, lines[i]);
}

/* COMMAND [subcommand [arg ...]] */
static void command_cmd(cmd_ctx *c) {
    if (c->argc == 1) {
        reply_all(c, W_INFO);
        return;
    }
    const command *sub = find_sub(c->cmd, c->argv[1], c->argl[1]);
    if (!sub) {
        reply_errorf(c, "ERR unknown subcommand '%.*s'. Try COMMAND HELP.", (int)(c->argl[1] > 128 ? 128 : c->argl[1]),
                     c->argv[1]);
        return;
    }
    if ((sub->arity > 0 && c->argc != sub->arity) || (sub->arity < 0 && c->argc < -sub->arity)) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", sub->name);
        return;
    }
    cmd_ctx sc = *c;
    sc.cmd = sub;
    sub->proc(&sc);
    c->cmd = sub; /* counted as the subcommand (commandstats), as Redis counts it */
}

#define LS CMD_LOADING | CMD_STALE
#define ROW(sub, fn, ar, ver, text)                                                                                    \
    {                                                                                                                  \
        .name = "command|" sub, .proc = fn, .arity = ar, .flags = LS, .group = "server", .since = ver,                 \
        .acl = "slow connection", .summary = text                                                                      \
    }
static const command subs[] = {
    ROW("count", command_count, 2, "2.8.13", "Get total number of Redis commands"),
    ROW("info", command_info, -2, "2.8.13",
        "Get array of specific Redis command details, or all when no argument is given."),
    ROW("docs", command_docs, -2, "7.0.0", "Get array of specific Redis command documentation"),
    ROW("list", command_list, -2, "7.0.0", "Get an array of Redis command names"),
    ROW("getkeys", command_getkeys, -4, "2.8.13", "Extract keys given a full Redis command"),
    ROW("getkeysandflags", command_getkeysandflags, -4, "7.0.0",
        "Extract keys and access flags given a full Redis command"),
    ROW("help", command_help, 2, "5.0.0", "Show helpful text about the different subcommands"),
};
#undef ROW

static const command rows[] = {
    {.name = "command",
     .proc = command_cmd,
     .arity = -1,
     .flags = LS,
     .group = "server",
     .since = "2.8.13",
     .acl = "slow connection",
     .summary = "Get array of Redis command details"},
};

void command_register(void) {
    command_row = &rows[0];
    command_subs = subs;
    ncommand_subs = (int)(sizeof subs / sizeof subs[0]);
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
}
