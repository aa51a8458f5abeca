/* script.c - EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT: the script
 * cache shared by every shard, shebang flags, and how a script is routed
 * (script.h has the execution scheme). */
#include "cmd/script.h"
#include "cmd/acl.h"
#include "lib/mem.h"
#include "lib/sha1.h"
#include "lib/util.h"
#include "cmd/dispatch.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include <ctype.h>
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---- the cache: sha -> body, one for the server ---- */

typedef struct centry {
    char sha[41];
    int roams; /* touched a key of a shard it did not declare: runs holding every shard */
    char *body;
    size_t len;
    struct centry *next;
} centry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static centry **tab;
static size_t tab_cap, cache_n, cache_bytes;
static uint64_t lua_epoch = 1; /* atomic: bumped when every state must be rebuilt */
static int roaming;            /* atomic: scripts with roams set */

uint64_t script_cache_epoch(void) { return __atomic_load_n(&lua_epoch, __ATOMIC_ACQUIRE); }
void script_bump_epoch(void) { __atomic_add_fetch(&lua_epoch, 1, __ATOMIC_ACQ_REL); }

static size_t sha_slot(const char *sha, size_t cap) { return (size_t)hash_bytes(sha, 40) & (cap - 1); }

/* Under cache_lock. */
static centry *cache_find(const char *sha) {
    if (!tab_cap) return NULL;
    for (centry *e = tab[sha_slot(sha, tab_cap)]; e; e = e->next)
        if (!memcmp(e->sha, sha, 40)) return e;
    return NULL;
}

static void cache_add(const char *sha, const char *body, size_t len) {
    pthread_mutex_lock(&cache_lock);
    if (!cache_find(sha)) {
        if (cache_n >= tab_cap) {
            size_t ncap = tab_cap ? tab_cap * 2 : 64;
            centry **nt = zcalloc(sizeof(centry *) * ncap);
            for (size_t i = 0; i < tab_cap; i++)
                for (centry *e = tab[i], *nx; e; e = nx) {
                    nx = e->next;
                    size_t s = sha_slot(e->sha, ncap);
                    e->next = nt[s];
                    nt[s] = e;
                }
            zfree(tab);
            tab = nt;
            tab_cap = ncap;
        }
        centry *e = zcalloc(sizeof *e);
        memcpy(e->sha, sha, 41);
        e->body = zmalloc(len + 1);
        memcpy(e->body, body, len);
        e->body[len] = 0;
        e->len = len;
        size_t s = sha_slot(sha, tab_cap);
        e->next = tab[s];
        tab[s] = e;
        cache_n++;
        cache_bytes += len;
    }
    pthread_mutex_unlock(&cache_lock);
}

/* A copy of the body of sha (zfree it), or NULL. */
static char *cache_body(const char *sha, size_t *len) {
    char *b = NULL;
    pthread_mutex_lock(&cache_lock);
    centry *e = cache_find(sha);
    if (e) {
        b = zmalloc(e->len + 1);
        memcpy(b, e->body, e->len + 1);
        *len = e->len;
    }
    pthread_mutex_unlock(&cache_lock);
    return b;
}

static void cache_flush(void) {
    pthread_mutex_lock(&cache_lock);
    for (size_t i = 0; i < tab_cap; i++)
        for (centry *e = tab[i], *nx; e; e = nx) {
            nx = e->next;
            zfree(e->body);
            zfree(e);
        }
    zfree(tab);
    tab = NULL;
    tab_cap = cache_n = cache_bytes = 0;
    __atomic_store_n(&roaming, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&cache_lock);
    script_bump_epoch();
}

static int cache_roams(const char *sha) {
    pthread_mutex_lock(&cache_lock);
    centry *e = cache_find(sha);
    int r = e && e->roams;
    pthread_mutex_unlock(&cache_lock);
    return r;
}

static void cache_set_roams(const char *sha) {
    pthread_mutex_lock(&cache_lock);
    centry *e = cache_find(sha);
    if (e && !e->roams) {
        e->roams = 1;
        __atomic_add_fetch(&roaming, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&cache_lock);
}

size_t script_cache_count(void) { return __atomic_load_n(&cache_n, __ATOMIC_RELAXED); }
size_t script_cache_bytes(void) { return __atomic_load_n(&cache_bytes, __ATOMIC_RELAXED); }

void script_info_memory(buf *o) {
    size_t lua = slua_memory(), scripts = script_cache_bytes();
    buf_printf(o,
               "used_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\nused_memory_scripts_eval:%zu\r\n"
               "number_of_cached_scripts:%zu\r\nnumber_of_functions:%d\r\nnumber_of_libraries:%d\r\n"
               "used_memory_vm_total:%zu\r\nused_memory_scripts:%zu\r\n",
               lua, lua, scripts, script_cache_count(), function_count(), function_lib_count(), lua, scripts);
}

/* ---- shebang ---- */

int script_parse_flag(const char *s, size_t n, int *flags) {
    static const struct {
        const char *name;
        int bit;
    } names[] = {{"no-writes", SF_NO_WRITES},
                 {"allow-oom", SF_ALLOW_OOM},
                 {"allow-stale", SF_ALLOW_STALE},
                 {"no-cluster", SF_NO_CLUSTER},
                 {"allow-cross-slot-keys", SF_CROSS_SLOT}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == n && !memcmp(s, names[i].name, n)) {
            *flags |= names[i].bit;
            return 0;
        }
    return -1;
}

static int parse_shebang(const char *body, size_t len, int *flags, size_t *skip, char *err, size_t errlen);

int script_declared_flags(int argc, const char **argv, const size_t *argl) {
    if (argc < 2) return -1;
    int flags = 0;
    size_t skip;
    char err[256];
    if (str_eq_ci(argv[0], argl[0], "fcall") || str_eq_ci(argv[0], argl[0], "fcall_ro"))
        return function_flags(argv[1], argl[1]);
    if (str_eq_ci(argv[0], argl[0], "evalsha") || str_eq_ci(argv[0], argl[0], "evalsha_ro")) {
        if (argl[1] != 40) return -1;
        char sha[41];
        for (int i = 0; i < 40; i++) sha[i] = (char)tolower((unsigned char)argv[1][i]);
        sha[40] = 0;
        size_t len;
        char *body = cache_body(sha, &len);
        int r = body && !parse_shebang(body, len, &flags, &skip, err, sizeof err) ? flags : -1;
        zfree(body);
        return r;
    }
    return !parse_shebang(argv[1], argl[1], &flags, &skip, err, sizeof err) ? flags : -1;
}

int script_declares_no_writes(int argc, const char **argv, const size_t *argl) {
    int flags = script_declared_flags(argc, argv, argl);
    return flags >= 0 && (flags & SF_NO_WRITES);
}

/* The flags of an EVAL body and the length of its shebang line (kept out
 * of the compiled text, its newline kept so line numbers stay). 0 ok, else
 * -1 with the error reply in err. */
static int parse_shebang(const char *body, size_t len, int *flags, size_t *skip, char *err, size_t errlen) {
    *flags = SF_COMPAT;
    *skip = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!') return 0;
    const char *nl = memchr(body, '\n', len);
    if (!nl) {
        snprintf(err, errlen, "ERR Invalid script shebang");
        return -1;
    }
    *flags = 0;
    *skip = (size_t)(nl - body);
    const char *p = body, *end = nl;
    int word = 0;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
        if (p >= end) break;
        const char *w = p;
        while (p < end && *p != ' ' && *p != '\t' && *p != '\r') p++;
        size_t wl = (size_t)(p - w);
        if (word++ == 0) {
            if (wl != 5 || memcmp(w, "#!lua", 5)) {
                snprintf(err, errlen, "ERR Unexpected engine in script shebang: %.*s", (int)(wl > 200 ? 200 : wl), w);
                return -1;
            }
        } else if (wl >= 6 && !memcmp(w, "flags=", 6)) {
            const char *f = w + 6, *fe = p;
            while (f < fe) {
                const char *c = memchr(f, ',', (size_t)(fe - f));
                if (!c) c = fe;
                if (c > f && script_parse_flag(f, (size_t)(c - f), flags)) {
                    snprintf(err, errlen, "ERR Unexpected flag in script shebang: %.*s", (int)(c - f > 200 ? 200 : c - f), f);
                    return -1;
                }
                f = c + 1;
            }
        } else {
            snprintf(err, errlen, "ERR Unknown lua shebang option: %.*s", (int)(wl > 200 ? 200 : wl), w);
            return -1;
        }
    }
    return 0;
}

/* ---- EVAL ---- */

/* numkeys at argv[2]: 1 with *nk set, else replies the error. */
static int numkeys(cmd_ctx *c, long long *nk) {
    if (!str2ll(c->argv[2], c->argl[2], nk)) {
        reply_status(c, ST_NOTINT);
        return 0;
    }
    if (*nk < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return 0;
    }
    if (*nk > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return 0;
    }
    return 1;
}

/* Pushes the compiled script sha ({fn, flags}) of this shard's state,
 * compiling body (or the cached body when body is NULL). 0 after replying
 * the error. */
static int push_script(cmd_ctx *c, lua_State *L, const char *sha, const char *body, size_t len) {
    lua_getfield(L, LUA_REGISTRYINDEX, "scripts");
    lua_getfield(L, -1, sha);
    if (!lua_isnil(L, -1)) {
        lua_remove(L, -2);
        return 1;
    }
    lua_pop(L, 1);
    char *copy = NULL;
    if (!body) {
        body = copy = cache_body(sha, &len);
        if (!body) {
            lua_pop(L, 1);
            reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
            return 0;
        }
    }
    char err[512];
    int flags;
    size_t skip;
    if (parse_shebang(body, len, &flags, &skip, err, sizeof err)) {
        zfree(copy);
        lua_pop(L, 1);
        reply_error(c, err);
        return 0;
    }
    if (!slua_compile(L, body + skip, len - skip, "@user_script", err, sizeof err)) {
        zfree(copy);
        lua_pop(L, 1);
        reply_errorf(c, "ERR Error compiling script (new function): %s", err);
        return 0;
    }
    lua_createtable(L, 2, 0);
    lua_insert(L, -2);
    lua_rawseti(L, -2, 1);
    lua_pushnumber(L, flags);
    lua_rawseti(L, -2, 2);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, sha);
    lua_remove(L, -2);
    if (!copy) cache_add(sha, body, len);
    zfree(copy);
    return 1;
}

static void eval_generic(cmd_ctx *c, int by_sha, int ro) {
    long long nk;
    if (!numkeys(c, &nk)) return;
    char sha[41];
    if (by_sha) {
        if (c->argl[1] != 40) {
            reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
            return;
        }
        for (int i = 0; i < 40; i++) sha[i] = (char)tolower((unsigned char)c->argv[1][i]);
        sha[40] = 0;
    } else {
        sha1_text(c->argv[1], c->argl[1], sha);
    }
    lua_State *L = slua_state(c->sh->id);
    if (!push_script(c, L, sha, by_sha ? NULL : c->argv[1], by_sha ? 0 : c->argl[1])) return;
    lua_rawgeti(L, -1, 2);
    int flags = (int)lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (ro && !(flags & SF_COMPAT) && !(flags & SF_NO_WRITES)) {
        lua_pop(L, 1);
        reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
    slua_set_keys_args(L, c->argv + 3, c->argl + 3, (int)nk, c->argc - 3);
    script_run r = {.c = c, .name = sha, .source = "@user_script", .ro = ro || (flags & SF_NO_WRITES), .flags = flags};
    slua_run(L, &r, 0);
    if (c->reroute) cache_set_roams(sha);
}

static void eval_cmd(cmd_ctx *c) { eval_generic(c, 0, 0); }
static void evalsha_cmd(cmd_ctx *c) { eval_generic(c, 1, 0); }
static void eval_ro_cmd(cmd_ctx *c) { eval_generic(c, 0, 1); }
static void evalsha_ro_cmd(cmd_ctx *c) { eval_generic(c, 1, 1); }

/* KEYS: argv[3 .. 3+numkeys) */
static int eval_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    long long nk;
    if (argc < 3 || !str2ll(argv[2], argl[2], &nk) || nk < 0 || nk > argc - 3) return 0;
    int n = 0;
    for (long long i = 0; i < nk && n < max; i++) pos[n++] = 3 + (int)i;
    return n;
}

/* A script known to touch keys of shards it does not declare takes every
 * shard; others go by their keys. */
static int route_by_sha(const char *sha) { return cache_roams(sha) ? ROUTE_ALL : ROUTE_KEYS; }

static int eval_route(int argc, const char **argv, const size_t *argl, int n) {
    if (!__atomic_load_n(&roaming, __ATOMIC_RELAXED) || argc < 2) return ROUTE_KEYS;
    char sha[41];
    sha1_text(argv[1], argl[1], sha);
    return route_by_sha(sha);
}

static int evalsha_route(int argc, const char **argv, const size_t *argl, int n) {
    if (!__atomic_load_n(&roaming, __ATOMIC_RELAXED) || argc < 2 || argl[1] != 40) return ROUTE_KEYS;
    char sha[41];
    for (int i = 0; i < 40; i++) sha[i] = (char)tolower((unsigned char)argv[1][i]);
    sha[40] = 0;
    return route_by_sha(sha);
}

/* ---- a script on the shard of its keys ---- */

typedef struct key_reg {
    tx_part *p;
    int dbid, x;
} key_reg;

static void reg_key(void *ud, const char *key, size_t klen) {
    key_reg *k = ud;
    tx_part_key(k->p, k->dbid, key, klen, k->x);
}

/* The reply of the run on the keys' shard, or (empty) the sign that it
 * reached a key of another shard: then again, holding every shard. */
static void remote_merge(tx *t, buf *out) {
    size_t len;
    const char *rep = tx_part_reply(t, 0, 0, &len);
    msg *m = &t->parts[0]->m;
    batch_item *it = &m->items[0];
    if (len) {
        buf_add(out, rep, len);
        if (it->slow && t->sess) shard_slowlog_item(t->coord, m, it, t->sess); /* the slow log is the connection's shard's */
        return;
    }
    tx_keep_item_args(t, m, it);
    t->rerun_whole = 1;
}

int script_hops(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, int discard) {
    /* a run on another shard has no session: a user with limits runs at home, where its calls are checked */
    if (!acl_sess_free_pass(s)) return 0;
    int self = s->sh->id, hand = tx_hand_off_to(s->sh);
    uint64_t mask = dispatch_route_mask(s, cmd, argc, argv, argl), whole = 0;
    if (!mask) mask = 1ull << self;
    int to = __builtin_ctzll(mask);
    if (hand >= 0 && ((mask & (mask - 1)) || to == self)) { /* this shard is locked: its holder runs it (tx.h) */
        to = hand;
        whole = mask | 1ull << hand;
    } else if ((mask & (mask - 1)) || to == self || tx_leases(s->sh, to)) {
        return 0; /* whole-shard here (on a lease it takes no message), or inline */
    }
    tx *t = tx_create_waited(s, cmd, discard);
    t->parts_count = 1;
    tx_part *p = tx_part_of(t, to);
    key_reg k = {.p = p, .dbid = s->db, .x = !(cmd->flags & CMD_READONLY)};
    cmd_each_key(cmd, argc, argv, argl, reg_key, &k);
    batch_item *it = tx_part_add(p, cmd, argc, argv, argl, s->db, s->resp);
    it->whole_mask = whole;
    if (whole) {
        s->sh->stat_tx_handed++;
        s->conn->handoffs++; /* (net/conn.h: enough in a row move it to the holder) */
    }
    tx_run_split(t, 1, remote_merge);
    return 1;
}

/* ---- SCRIPT ---- */

static void script_load(cmd_ctx *c) {
    char sha[41];
    sha1_text(c->argv[2], c->argl[2], sha);
    lua_State *L = slua_state(c->sh->id);
    if (!push_script(c, L, sha, c->argv[2], c->argl[2])) return;
    lua_pop(L, 1);
    reply_bulk(c, sha, 40);
}

static void script_exists(cmd_ctx *c) {
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        int found = 0;
        if (c->argl[i] == 40) {
            char sha[41];
            for (int k = 0; k < 40; k++) sha[k] = (char)tolower((unsigned char)c->argv[i][k]);
            sha[40] = 0;
            pthread_mutex_lock(&cache_lock);
            found = cache_find(sha) != NULL;
            pthread_mutex_unlock(&cache_lock);
        }
        reply_int(c, found);
    }
}

static void script_flush(cmd_ctx *c) {
    if (c->argc > 3 || (c->argc == 3 && !arg_is(c, 2, "sync") && !arg_is(c, 2, "async"))) {
        reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    cache_flush();
    reply_ok(c);
}

static void script_kill(cmd_ctx *c) { script_kill_reply(c, 0); }

static void script_help(cmd_ctx *c) {
    static const char *const lines[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
    };
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

#define EVAL_ROW(nm, fn, rt, extra, sum, ...)                                                                          \
    {                                                                                                                  \
        .name = nm, .proc = fn, .arity = -3,                                                                           \
        .flags = CMD_NOSCRIPT | CMD_STALE | CMD_SKIP_MONITOR | CMD_NO_MANDATORY_KEYS | CMD_HOME | (extra),             \
        .keys = eval_keys, .route = rt, .hops = script_hops, .group = "scripting", .since = "2.6.0",                   \
        .acl = "slow scripting", .summary = sum, __VA_ARGS__                                                           \
    }

static command script_subs[] = {
    {.name = "script|load", .proc = script_load, .arity = 3, .flags = CMD_NOSCRIPT | CMD_STALE, .group = "scripting",
     .since = "2.6.0", .acl = "slow scripting", .summary = "Load the specified Lua script into the script cache."},
    {.name = "script|exists", .proc = script_exists, .arity = -3, .flags = CMD_NOSCRIPT, .group = "scripting",
     .since = "2.6.0", .acl = "slow scripting", .summary = "Check existence of scripts in the script cache."},
    {.name = "script|flush", .proc = script_flush, .arity = -2, .flags = CMD_NOSCRIPT, .group = "scripting",
     .since = "2.6.0", .acl = "slow scripting", .summary = "Remove all the scripts from the script cache."},
    {.name = "script|kill", .proc = script_kill, .arity = 2, .flags = CMD_NOSCRIPT | CMD_ALLOWBUSY,
     .group = "scripting", .since = "2.6.0", .acl = "slow scripting",
     .summary = "Kill the script currently in execution."},
    {.name = "script|help", .proc = script_help, .arity = 2, .flags = CMD_LOADING | CMD_STALE, .group = "scripting",
     .since = "5.0.0", .acl = "slow scripting", .summary = "Show helpful text about the different subcommands"},
};

static const command rows[] = {
    EVAL_ROW("eval", eval_cmd, eval_route, CMD_MAY_REPLICATE, "Execute a Lua script server side",
             KEY_SPECS({KS_RW | KS_ACCESS | KS_UPDATE, KS_INDEX(2), KS_KEYNUM(0, 1, 1),
                        .notes = "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"})),
    EVAL_ROW("evalsha", evalsha_cmd, evalsha_route, CMD_MAY_REPLICATE, "Execute a Lua script server side",
             KEY_SPECS({KS_RW | KS_ACCESS | KS_UPDATE, KS_INDEX(2), KS_KEYNUM(0, 1, 1)})),
    EVAL_ROW("eval_ro", eval_ro_cmd, eval_route, CMD_READONLY, "Execute a read-only Lua script server side",
             KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(2), KS_KEYNUM(0, 1, 1),
                        .notes = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"})),
    EVAL_ROW("evalsha_ro", evalsha_ro_cmd, evalsha_route, CMD_READONLY, "Execute a read-only Lua script server side",
             KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(2), KS_KEYNUM(0, 1, 1)})),
    {.name = "script",
     .arity = -2,
     .group = "scripting",
     .since = "2.6.0",
     .acl = "slow scripting",
     .summary = "A container for Lua scripts management commands",
     .subs = script_subs,
     .nsubs = (int)(sizeof script_subs / sizeof script_subs[0])},
};

void script_register(void) {
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
    shard_add_cron_hook(slua_cron);
}
