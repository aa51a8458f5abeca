/* script_lua.c - the per-shard Lua states, their sandbox, and the redis
 * library scripts call (see script.h).
 *
 * Sandbox. The libraries are base, table, string, math (with Redis's
 * random generator), cjson, bit, struct and cmsgpack; io, os, package,
 * debug, dofile, loadfile, print, getfenv, setfenv and newproxy are not
 * there, and loadstring/load refuse binary chunks. Redis 7.0 makes the
 * globals and the library tables read-only inside its own Lua; Debian's
 * Lua has no read-only tables, so here scripts see proxies: an empty table
 * whose metatable reads from the real one and refuses writes, rawset and
 * setmetatable refuse a proxy, next/pairs/rawget look through it, and
 * getmetatable answers a stand-in. Reading a global that does not exist is
 * an error, as in Redis. */
#include "cmd/script.h"
#include "cmd/replicaof.h"
#include "repl/replica.h"
#include "cmd/acl.h"
#include "cmd/dispatch.h"
#include "cmd/monitor.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/sha1.h"
#include "persist/aof.h"
#include "shard/cmdstats.h"
#include "server/config.h"
#include "shard/evict.h"
#include "shard/lock.h"
#include "shard/shard.h"
#include "shard/tracking.h"
#include "shard/tx.h"
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <ctype.h>
#include <math.h>
#include "repl/master.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int luaopen_cjson(lua_State *L);
int luaopen_bit(lua_State *L);
int slua_open_struct(lua_State *L);
int slua_open_cmsgpack(lua_State *L);
uint64_t script_cache_epoch(void);

/* Per state: a size bomb errors instead of taking the host. */
size_t slua_mem_limit = (size_t)1 << 30;
/* Fuzzing: when set, a run stops after about this many Lua instructions. */
long slua_step_budget;
int script_deny_disabled;

typedef struct slua {
    lua_State *L;
    uint64_t epoch;
    size_t mem;
} slua;

static slua states[MAX_SHARDS];
static __thread script_run *cur;
static __thread uint64_t rand_state;

size_t slua_memory(void) {
    size_t n = 0;
    for (int i = 0; i < MAX_SHARDS; i++) n += __atomic_load_n(&states[i].mem, __ATOMIC_RELAXED);
    return n;
}

static void *lalloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    slua *s = ud;
    if (nsize == 0) {
        free(ptr);
        __atomic_store_n(&s->mem, s->mem - osize, __ATOMIC_RELAXED);
        return NULL;
    }
    if (nsize > osize && s->mem + (nsize - osize) > slua_mem_limit) return NULL;
    void *p = realloc(ptr, nsize);
    if (p) __atomic_store_n(&s->mem, s->mem - osize + nsize, __ATOMIC_RELAXED);
    return p;
}

/* ---- Redis's math.random: rand48 seeded with 0 before every script ---- */

static void rand48_seed(int32_t seed) { rand_state = ((uint64_t)(uint32_t)seed << 16) | 0x330E; }

static int32_t rand48_next(void) {
    rand_state = (rand_state * 0x5DEECE66Dull + 0xB) & ((1ull << 48) - 1);
    return (int32_t)(rand_state >> 17);
}

static int l_random(lua_State *L) {
    lua_Number r = (lua_Number)(rand48_next() % 2147483647) / (lua_Number)2147483647;
    switch (lua_gettop(L)) {
    case 0: lua_pushnumber(L, r); break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1), u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        break;
    }
    default: return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int l_randomseed(lua_State *L) {
    rand48_seed(luaL_checkint(L, 1));
    return 0;
}

/* ---- errors raised to the script ---- */

/* Raises {err = msg} (a Redis error reply as a Lua error). */
static int raise_err(lua_State *L, const char *msg) {
    lua_newtable(L);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "err");
    return lua_error(L);
}

/* Raises msg without a position (as Redis's C functions do). */
static int raise_plain(lua_State *L, const char *msg) {
    lua_pushstring(L, msg);
    return lua_error(L);
}

static __thread long steps_left;

static void kill_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    raise_err(L, cur && cur->is_function ? "ERR Script killed by user with FUNCTION KILL..."
                                         : "ERR Script killed by user with SCRIPT KILL...");
}

/* Every HOOK_EVERY instructions of a script: the fuzzing budget, and the
 * busy-script work (script_busy.c). A killed script gets an error at every
 * line from then on, so a pcall inside it cannot swallow the kill. */
enum { HOOK_EVERY = 100000, HOOK_EVERY_BUDGET = 1000 };

static void run_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    if (slua_step_budget) {
        steps_left -= HOOK_EVERY_BUDGET;
        if (steps_left < 0) raise_plain(L, "script exceeded the step budget");
    }
    if (cur && script_busy_check(cur)) {
        lua_sethook(L, kill_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
        kill_hook(L, ar);
    }
}

static void abort_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    raise_err(L, "ERR script aborted");
}

/* ---- redis.call / redis.pcall ---- */

/* The caller's ACL for one redis.call: NULL when allowed, else the error
 * (logged with the Lua context, as Redis). */
static const char *acl_refused(script_run *r, const command *cmd, int argc, const char **argv, const size_t *argl) {
    acl_user *u = r->user;
    if (!u || (u->flags & USER_ALLPERM)) return NULL;
    int pos = 0;
    int why = acl_check(u, cmd, argc, argv, argl, &pos);
    if (why == ACL_OK) return NULL;
    const char *obj = why == ACL_DENIED_CMD ? cmd->name : argv[pos];
    size_t objl = why == ACL_DENIED_CMD ? strlen(cmd->name) : argl[pos];
    if (r->c->sess) acl_log_add(why, ACL_CTX_LUA, r->c->sess, u->name, obj, objl);
    switch (why) {
    case ACL_DENIED_CMD: return "ERR The user executing the script can't run this command or subcommand";
    case ACL_DENIED_KEY: return "ERR The user executing the script can't access at least one of the keys mentioned in the command";
    case ACL_DENIED_CHANNEL: return "ERR The user executing the script can't publish to the channel mentioned in the command";
    default: return "ERR The user executing the script is lacking the permissions for the command";
    }
}


static const command *find_cmd(int argc, const char **argv, const size_t *argl, const char **err) {
    char tmp[256];
    const command *named;
    const command *cmd = dispatch_resolve(argc, argv, argl, tmp, sizeof tmp, &named);
    if (cmd) return cmd;
    const command *top = cmd_lookup(argv[0], argl[0]);
    if (top && (!top->nsubs || (argc >= 2 && named)))
        *err = "ERR Wrong number of args calling Redis command from script";
    else if (top && argc < 2)
        *err = "ERR Wrong number of args calling Redis command from script";
    else
        *err = "ERR Unknown Redis command called from script";
    return NULL;
}

/* A remote run holds only its declared keys on this shard: whether the
 * command names another key that some transaction here holds. */
typedef struct key_check {
    script_run *r;
    int x, hit;
} key_check;

static void declared_cmp(void *ud, const char *key, size_t klen) {
    const char **k = ud;
    if (k[0] && (size_t)(uintptr_t)k[1] == klen && !memcmp(k[0], key, klen)) k[0] = NULL;
}

static void check_key(void *ud, const char *key, size_t klen) {
    key_check *k = ud;
    if (k->hit) return;
    cmd_ctx *c = k->r->c;
    const char *probe[2] = {key, (const char *)(uintptr_t)klen};
    cmd_each_key(c->cmd, c->argc, c->argv, c->argl, declared_cmp, probe);
    if (probe[0]) k->hit = lock_conflicts(&c->sh->locks, lock_hash(k->r->fake.db, key, klen), k->x);
}

static int undeclared_locked(script_run *r, const command *cmd, int argc, const char **argv, const size_t *argl) {
    key_check k = {.r = r, .x = (cmd->flags & CMD_WRITE) != 0};
    cmd_each_key(cmd, argc, argv, argl, check_key, &k);
    return k.hit;
}

/* CLIENT TRACKING of a script's caller: a read inside remembers the keys
 * the script declared, on the shard that owns each (the run holds it). */
static void remember_declared(void *ud, const char *key, size_t klen) {
    script_run *r = ud;
    shard *owner = r->c->tx ? shards[shard_of_key(key, klen)] : r->c->sh;
    tracking_remember(owner, r->track, key, klen);
}

/* The field of an error table whose error errorstats counted already. */
#define COUNTED "ignore_error_stats_update"

static int do_call(lua_State *L, int raise) {
    script_run *r = cur;
    int argc = lua_gettop(L);
    if (!r) return luaL_error(L, "redis.call is only available while a script runs");
    if (r->abort) return raise_err(L, "ERR script aborted");
    if (argc == 0) return raise_err(L, "ERR Please specify at least one argument for this redis lib call");
    const char *sargv[16];
    size_t sargl[16];
    char numbuf[16][32];
    const char **argv = argc > 16 ? zmalloc(sizeof(char *) * (size_t)argc) : sargv;
    size_t *argl = argc > 16 ? zmalloc(sizeof(size_t) * (size_t)argc) : sargl;
    buf nums = {0};
    size_t *numoff = NULL;
    const char *err = NULL;
    for (int i = 0; i < argc && !err; i++) {
        int t = lua_type(L, i + 1);
        if (t == LUA_TSTRING) {
            argv[i] = lua_tolstring(L, i + 1, &argl[i]);
        } else if (t == LUA_TNUMBER) {
            if (i < 16) {
                argl[i] = (size_t)sconv_number(numbuf[i], lua_tonumber(L, i + 1));
                argv[i] = numbuf[i];
            } else {
                if (!numoff) numoff = zcalloc(sizeof(size_t) * (size_t)argc);
                char tmp[32];
                argl[i] = (size_t)sconv_number(tmp, lua_tonumber(L, i + 1));
                numoff[i] = nums.len + 1;
                buf_add(&nums, tmp, argl[i]);
                argv[i] = NULL;
            }
        } else {
            err = "ERR Lua redis lib command arguments must be strings or integers";
        }
    }
    for (int i = 16; numoff && i < argc; i++)
        if (numoff[i]) argv[i] = nums.p + numoff[i] - 1;
    const command *cmd = NULL;
    int args_ok = !err; /* from here an error is a rejected call, counted as Redis counts one */
    if (!err) cmd = find_cmd(argc, argv, argl, &err);
    if (cmd && (cmd->flags & CMD_NOSCRIPT) && !__atomic_load_n(&script_deny_disabled, __ATOMIC_RELAXED))
        err = "ERR This Redis command is not allowed from script";
    if (cmd && !err && (cmd->flags & CMD_BLOCKING) && !strncmp(cmd->name, "xread", 5))
        for (int i = 1; i < argc && !err; i++) {
            if (str_eq_ci(argv[i], argl[i], "streams")) break;
            if (str_eq_ci(argv[i], argl[i], "block"))
                err = !strcmp(cmd->name, "xread") ? "ERR xread command is not allowed with BLOCK option from scripts"
                                                   : "ERR xreadgroup command is not allowed with BLOCK option from scripts";
        }
    if (cmd && !err) err = acl_refused(r, cmd, argc, argv, argl);
    if (cmd && !err && (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) && r->ro) /* as Redis: may-replicate counts */
        err = "ERR Write commands are not allowed from read-only scripts.";
    if (cmd && !err && __builtin_expect(repl_is_replica(), 0)) err = replicaof_script_call_refusal(cmd);
    if (cmd && !err && (cmd->flags & CMD_WRITE) && !repl_enough_good_replicas())
        err = NOREPLICAS_ERR; /* a script without flags: its write (one with flags never started) */
    if (cmd && !err && r->oom && !r->wrote && (cmd->flags & CMD_DENYOOM) && !(r->flags & SF_ALLOW_OOM)) {
        err = OOM_ERR; /* over maxmemory at its start, and nothing written yet: it can still stop (Redis) */
    }
    if (cmd && !err && nshards > 1) {
        r->fake.db = r->c->dbid;
        uint64_t need = dispatch_route_mask(&r->fake, cmd, argc, argv, argl);
        if (r->remote && !(need & ~r->held) && undeclared_locked(r, cmd, argc, argv, argl))
            need = ~0ull; /* an undeclared key another transaction holds here: holding every shard, in order */
        if (need & ~r->held) {
            if (r->may_rerun) {
                r->abort = 1;
                lua_sethook(L, abort_hook, LUA_MASKCOUNT, 1);
                err = "ERR script aborted";
            } else {
                err = "ERR Script accessed a key of another shard that it did not declare, after writing "
                      "(declare every key in KEYS)";
            }
        }
    }
    int pushed = 0;
    if (!err) {
        r->reply.len = 0;
        r->fake.db = r->c->dbid;
        r->fake.resp = r->resp;
        cmd_ctx sub = {.sh = r->c->sh, .sess = &r->fake, .tx = r->c->tx, .cmd = cmd, .argc = argc, .argv = argv,
                       .argl = argl, .dbid = r->c->dbid, .resp = r->resp, .out = &r->reply, .in_exec = 1,
                       .client = r->track & ~1ull};
        if (cmd->flags & CMD_WRITE) {
            if (r->may_rerun && !sundo_save(r, &sub)) r->may_rerun = 0;
            r->wrote = 1;
        }
        if (__builtin_expect(monitor_active(), 0) && !(cmd->flags & CMD_ADMIN))
            monitor_feed(r->c->sh, "lua", r->c->dbid, argc, argv, argl);
        exec_command(&sub);
        if ((cmd->flags & CMD_READONLY) && (r->track & 1) && !r->tracked) { /* as Redis: the script's keys */
            r->tracked = 1;
            cmd_each_key(r->c->cmd, r->c->argc, r->c->argv, r->c->argl, remember_declared, r);
        }
        r->c->dbid = r->fake.db; /* SELECT inside the script */
        lua_settop(L, 0); /* the arguments are done with: room for the reply (unpack of 7999 values) */
        if (!sconv_push_reply(L, r->reply.p, r->reply.len)) {
            lua_pop(L, 1);
            lua_pushboolean(L, 0);
        }
        pushed = 1;
    }
    if (argv != sargv) {
        zfree(argv);
        zfree(argl);
    }
    buf_free(&nums);
    zfree(numoff);
    if (!pushed) {
        if (r->abort) return raise_err(L, err);
        lua_newtable(L);
        lua_pushstring(L, err);
        lua_setfield(L, -2, "err");
        if (args_ok) { /* a rejected call: counted now, tagged so the script's reply does not count it again */
            cmdstats_error(r->c->sh, err);
            cmdstats_reject(r->c->sh, cmd);
            lua_pushboolean(L, 1);
            lua_setfield(L, -2, COUNTED);
        }
        if (raise) return lua_error(L);
        return 1;
    }
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_getfield(L, -1, "err");
        int is_err = lua_type(L, -1) == LUA_TSTRING;
        lua_pop(L, 1);
        if (is_err) { /* the command's error reply: counted when it was written */
            lua_pushboolean(L, 1);
            lua_setfield(L, -2, COUNTED);
        }
        if (is_err && raise) return lua_error(L);
    }
    return 1;
}

static int l_call(lua_State *L) { return do_call(L, 1); }
static int l_pcall(lua_State *L) { return do_call(L, 0); }

static int l_sha1hex(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_plain(L, "wrong number of arguments");
    size_t n;
    const char *s = lua_tolstring(L, 1, &n);
    char hex[41];
    sha1_text(s ? s : "", s ? n : 0, hex);
    lua_pushstring(L, hex);
    return 1;
}

/* redis.error_reply(s) / redis.status_reply(s): {err=s} / {ok=s} */
static int reply_table(lua_State *L, const char *field) {
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) return raise_plain(L, "wrong number or type of arguments");
    lua_newtable(L);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, field);
    return 1;
}
static int l_error_reply(lua_State *L) {
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) return raise_plain(L, "wrong number or type of arguments");
    size_t n;
    const char *s = lua_tolstring(L, 1, &n);
    if (n && s[0] == '-') { /* Redis keeps the text after the dash */
        s++;
        n--;
    }
    lua_newtable(L);
    if (n) lua_pushlstring(L, s, n);
    else lua_pushstring(L, "ERR ");
    lua_setfield(L, -2, "err");
    return 1;
}
static int l_status_reply(lua_State *L) { return reply_table(L, "ok"); }

static int l_log(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc < 2) return raise_plain(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) return raise_plain(L, "First argument must be a number (log level).");
    int level = (int)lua_tonumber(L, 1);
    if (level < LOG_DEBUG || level > LOG_WARNING) return raise_plain(L, "Invalid debug level.");
    buf b = {0};
    for (int i = 2; i <= argc; i++) {
        size_t n;
        const char *s = lua_tolstring(L, i, &n);
        if (!s) continue;
        if (i > 2) buf_addc(&b, ' ');
        buf_add(&b, s, n);
    }
    buf_addc(&b, 0);
    log_msg(level, "%s", b.p);
    buf_free(&b);
    return 0;
}

static int l_setresp(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_plain(L, "redis.setresp() requires one argument.");
    int v = (int)lua_tonumber(L, 1);
    if (v != 2 && v != 3) return raise_plain(L, "RESP version must be 2 or 3.");
    if (cur) cur->resp = v;
    return 0;
}

static int l_set_repl(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_plain(L, "redis.set_repl() requires two arguments.");
    int v = (int)lua_tonumber(L, 1);
    if (v < 0 || v > 3) return raise_plain(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    return 0;
}

static int l_true(lua_State *L) {
    lua_pushboolean(L, 1);
    return 1;
}
static int l_nothing(lua_State *L) { return 0; }

/* redis.acl_check_cmd(cmd, arg...): may the script's user run it? */
static int l_acl_check_cmd(lua_State *L) {
    script_run *r = cur;
    int argc = lua_gettop(L);
    if (argc == 0) return raise_plain(L, "Please specify at least one argument for this redis lib call");
    const char *sargv[16];
    size_t sargl[16];
    char numbuf[16][32];
    const char **argv = argc > 16 ? zmalloc(sizeof(char *) * (size_t)argc) : sargv;
    size_t *argl = argc > 16 ? zmalloc(sizeof(size_t) * (size_t)argc) : sargl;
    const char *err = NULL;
    for (int i = 0; i < argc && !err; i++) {
        int t = lua_type(L, i + 1);
        if (t == LUA_TNUMBER && i < 16) {
            argl[i] = (size_t)sconv_number(numbuf[i], lua_tonumber(L, i + 1));
            argv[i] = numbuf[i];
        } else if (t == LUA_TSTRING || t == LUA_TNUMBER) {
            argv[i] = lua_tolstring(L, i + 1, &argl[i]); /* (a number past 16 becomes its string in place) */
        } else {
            err = "Lua redis lib command arguments must be strings or integers";
        }
    }
    const command *cmd = NULL;
    if (!err) {
        cmd = cmd_lookup(argv[0], argl[0]);
        if (cmd && cmd->nsubs && argc >= 2) cmd = cmd_lookup_sub(cmd, argv[1], argl[1]);
        if (!cmd) err = "Invalid command passed to redis.acl_check_cmd()";
    }
    int pos = 0, ok = 0;
    if (!err) ok = !r || !r->user || acl_check(r->user, cmd, argc, argv, argl, &pos) == ACL_OK;
    if (argv != sargv) {
        zfree(argv);
        zfree(argl);
    }
    if (err) return raise_plain(L, err);
    lua_pushboolean(L, ok);
    return 1;
}

static int build(lua_State *L);
static int l_log(lua_State *L);

/* ---- libraries: redis.register_function while a library loads ---- */

typedef struct lib_load {
    slua_lib_info *info; /* the table name -> {fn, flags} is the registry's "loading" */
} lib_load;

static __thread lib_load *loading;

static int valid_name(const char *s, size_t n) {
    if (!n) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_') return 0;
    return 1;
}

static int l_register_function(lua_State *L) {
    lib_load *ld = loading;
    if (!ld) return raise_plain(L, "redis.register_function can only be called on FUNCTION LOAD command");
    int argc = lua_gettop(L);
    const char *name = NULL, *desc = NULL;
    size_t nl = 0, dl = 0;
    int flags = 0, fn = 0;
    if (argc == 1) {
        if (!lua_istable(L, 1))
            return raise_plain(L, "calling redis.register_function with a single argument is only applicable to Lua "
                                  "table (representing named arguments).");
        lua_pushnil(L);
        while (lua_next(L, 1)) {
            const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
            if (!strcmp(k, "function_name")) {
                if (lua_type(L, -1) != LUA_TSTRING) return raise_plain(L, "function_name argument given to redis.register_function must be a string");
                name = lua_tolstring(L, -1, &nl);
            } else if (!strcmp(k, "description")) {
                if (lua_type(L, -1) != LUA_TSTRING) return raise_plain(L, "description argument given to redis.register_function must be a string");
                desc = lua_tolstring(L, -1, &dl);
            } else if (!strcmp(k, "callback")) {
                if (!lua_isfunction(L, -1)) return raise_plain(L, "callback argument given to redis.register_function must be a function");
                fn = 1;
            } else if (!strcmp(k, "flags")) {
                if (!lua_istable(L, -1)) return raise_plain(L, "flags argument to redis.register_function must be a table representing function flags");
                for (int i = 1;; i++) {
                    lua_rawgeti(L, -1, i);
                    if (lua_isnil(L, -1)) {
                        lua_pop(L, 1);
                        break;
                    }
                    size_t fl;
                    const char *f = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &fl) : NULL;
                    if (!f || script_parse_flag(f, fl, &flags)) return raise_plain(L, "unknown flag given");
                    lua_pop(L, 1);
                }
            } else {
                return raise_plain(L, "unknown argument given to redis.register_function");
            }
            lua_pop(L, 1);
        }
        if (!name) return raise_plain(L, "redis.register_function must get a function name argument");
        if (!fn) return raise_plain(L, "redis.register_function must get a callback argument");
        lua_getfield(L, 1, "callback");
    } else if (argc == 2) {
        if (lua_type(L, 1) != LUA_TSTRING) return raise_plain(L, "first argument to redis.register_function must be a string");
        if (!lua_isfunction(L, 2)) return raise_plain(L, "second argument to redis.register_function must be a function");
        name = lua_tolstring(L, 1, &nl);
        lua_pushvalue(L, 2);
    } else {
        return raise_plain(L, "wrong number of arguments to redis.register_function");
    }
    if (!valid_name(name, nl))
        return raise_plain(L, "Library names can only contain letters, numbers, or underscores(_) and must be at least one "
                              "character long");
    lua_getfield(L, LUA_REGISTRYINDEX, "loading");
    int tab = lua_gettop(L);
    lua_insert(L, -2); /* under the callback */
    tab = lua_gettop(L) - 1;
    lua_getfield(L, tab, name);
    int dup = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (dup) return raise_plain(L, "Function already exists in the library");
    lua_createtable(L, 2, 0); /* {fn, flags} */
    lua_insert(L, -2);
    lua_rawseti(L, -2, 1);
    lua_pushnumber(L, flags);
    lua_rawseti(L, -2, 2);
    lua_setfield(L, tab, name);
    slua_lib_info *in = ld->info;
    if (in) {
        in->f = zrealloc(in->f, sizeof(in->f[0]) * (size_t)(in->n + 1));
        in->f[in->n].name = zstrndup(name, nl);
        in->f[in->n].desc = desc ? zstrndup(desc, dl) : NULL;
        in->f[in->n].flags = flags;
        in->n++;
    }
    return 0;
}

static __thread int64_t load_deadline; /* ms: a library's loading code is stopped after 500 ms */

static void load_timeout_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    if (clock_ns() / 1000000 > load_deadline) raise_plain(L, "FUNCTION LOAD timeout");
}

void slua_lib_info_free(slua_lib_info *in) {
    for (int i = 0; i < in->n; i++) {
        zfree(in->f[i].name);
        zfree(in->f[i].desc);
    }
    zfree(in->f);
    in->f = NULL;
    in->n = 0;
}

int slua_load_library(lua_State *L, const char *code, size_t len, slua_lib_info *info, char *err, size_t errlen) {
    char cerr[512];
    if (!slua_compile(L, code, len, "@user_function", cerr, sizeof cerr)) {
        snprintf(err, errlen, "ERR Error compiling function: %s", cerr);
        return 0;
    }
    int fn = lua_gettop(L);
    lua_newtable(L); /* name -> {fn, flags} */
    int tab = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, "libenv");
    lua_getfield(L, LUA_REGISTRYINDEX, "loadredis");
    lua_call(L, 1, 1);
    int env = lua_gettop(L);
    lua_pushvalue(L, env);
    lua_setfenv(L, fn);
    lua_pushvalue(L, tab);
    lua_setfield(L, LUA_REGISTRYINDEX, "loading");
    lib_load ld = {.info = info};
    lib_load *outer = loading;
    loading = &ld;
    load_deadline = clock_ns() / 1000000 + 500;
    lua_sethook(L, load_timeout_hook, LUA_MASKCOUNT, 100000);
    lua_pushvalue(L, fn);
    int rc = lua_pcall(L, 0, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    loading = outer;
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "loading");
    if (rc) {
        const char *m = lua_tostring(L, -1);
        snprintf(err, errlen, "ERR Error registering functions: ERR %s", m ? m : "unknown error");
        lua_settop(L, fn - 1);
        return 0;
    }
    lua_pushnil(L);
    int any = lua_next(L, tab);
    if (any) lua_pop(L, 2);
    if (!any) {
        snprintf(err, errlen, "ERR No functions registered");
        lua_settop(L, fn - 1);
        return 0;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "libfinish");
    lua_pushvalue(L, env);
    lua_call(L, 1, 0);
    lua_settop(L, tab);
    lua_remove(L, fn);
    return 1;
}

lua_State *slua_open_temp(void) {
    slua *s = calloc(1, sizeof *s);
    lua_State *L = lua_newstate(lalloc, s);
    if (!L || lua_cpcall(L, build, NULL)) {
        if (L) lua_close(L);
        free(s);
        return NULL;
    }
    lua_settop(L, 0);
    return L;
}

void slua_close_temp(lua_State *L) {
    void *ud;
    lua_getallocf(L, &ud);
    lua_close(L);
    free(ud);
}

/* ---- building a state ---- */

static void set_fn(lua_State *L, const char *name, lua_CFunction f) {
    lua_pushcfunction(L, f);
    lua_setfield(L, -2, name);
}

static void set_num(lua_State *L, const char *name, double v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

static void open_lib(lua_State *L, lua_CFunction f, const char *name) {
    lua_pushcfunction(L, f);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (lua_istable(L, -1) && *name) lua_setglobal(L, name);
    else lua_pop(L, 1);
}

/* Runs in protected mode while the state is built. The Lua part installs
 * the error handler and the read-only proxies (see the file comment). */
static const char sandbox_lua[] =
    "local real, dbg = ...\n"
    "local rawset, rawget, rawnext, setmeta, getmeta, type, error, tostring, loadstr, concat ="
    " rawset, rawget, next, setmetatable, getmetatable, type, error, tostring, loadstring, table.concat\n"
    "local backing = {}\n"
    "local function ro() error('Attempt to modify a readonly table', 0) end\n"
    "local function stand_in()\n" /* what getmetatable answers for a protected table: read-only too */
    "  local s = {}\n"
    "  setmeta(s, {__newindex = function() error('Attempt to modify a readonly table', 2) end, __metatable = false})\n"
    "  return s\n"
    "end\n"
    "local function protect(t)\n"
    "  local p = {}\n"
    "  backing[p] = t\n"
    "  setmeta(p, {__index = t, __newindex = function() error('Attempt to modify a readonly table', 2) end,"
    " __metatable = stand_in()})\n"
    "  return p\n"
    "end\n"
    "local function is_protected(t) return backing[t] ~= nil end\n"
    "real.__redis__err__handler = function(err)\n"
    "  local lv = 2\n"
    "  local i = dbg.getinfo(lv, 'nSl')\n"
    "  while i and (i.what == 'C' or i.source == '=sandbox') do lv = lv + 1; i = dbg.getinfo(lv, 'nSl') end\n"
    "  if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end\n"
    "  if i then err['source'] = i.source; err['line'] = i.currentline end\n"
    "  return err\n"
    "end\n"
    "real.next = function(t, k) return rawnext(backing[t] or t, k) end\n"
    "local mynext = real.next\n"
    "real.pairs = function(t) return mynext, t, nil end\n"
    "real.rawget = function(t, k) return rawget(backing[t] or t, k) end\n"
    "real.rawset = function(t, k, v) if is_protected(t) then ro() end return rawset(t, k, v) end\n"
    "real.setmetatable = function(t, m) if is_protected(t) then ro() end return setmeta(t, m) end\n"
    "real.loadstring = function(s, name)\n"
    "  if type(s) == 'string' and s:byte(1) == 27 then return nil, 'binary chunks are not allowed' end\n"
    "  return loadstr(s, name)\n"
    "end\n"
    "real.load = function(f, name)\n"
    "  local parts = {}\n"
    "  while true do local p = f(); if p == nil or p == '' then break end; parts[#parts + 1] = p end\n"
    "  return real.loadstring(concat(parts), name)\n"
    "end\n"
    "for _, name in ipairs({'string', 'table', 'math', 'coroutine', 'redis', 'cjson', 'bit', 'struct', 'cmsgpack'}) do\n"
    "  if real[name] then real[name] = protect(real[name]) end\n"
    "end\n"
    "local smeta = getmeta('')\n"
    "smeta.__metatable = protect({__index = real.string})\n"
    "local G = {}\n"
    "backing[G] = real\n"
    "real._G = G\n"
    "setmeta(real, {__index = function(_, k)"
    " error(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2) end})\n"
    "local Gmeta = {__index = real, __newindex = function() error('Attempt to modify a readonly table', 2) end,"
    " __metatable = stand_in()}\n"
    "setmeta(G, Gmeta)\n"
    /* a library's code runs in an environment that has only the loading
     * API; once loaded, its functions see the globals */

    "local nonexistent = function(_, k, lvl)"
    " error(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", lvl or 2) end\n"
    "local freal = {}\n" /* what functions see: the globals without KEYS and ARGV */
    "for k, v in rawnext, real do freal[k] = v end\n"
    "setmeta(freal, {__index = nonexistent})\n"
    "local Fmeta = {__index = freal, __newindex = function() error('Attempt to modify a readonly table', 2) end,"
    " __metatable = stand_in()}\n"
    "local function libenv(loadredis)\n"
    "  local rp = {}\n"
    "  backing[rp] = loadredis\n"
    "  setmeta(rp, {__index = function(_, k) local v = loadredis[k]; if v == nil then nonexistent(_, k, 3) end; return v end,"
    " __newindex = function() error('Attempt to modify a readonly table', 2) end, __metatable = stand_in()})\n"
    "  local lg = {redis = rp}\n"
    "  local env = {}\n"
    "  setmeta(env, {__index = function(_, k) local v = lg[k]; if v == nil then"
    " error(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2) end; return v end,"
    " __newindex = function() error('Attempt to modify a readonly table', 2) end, __metatable = stand_in()})\n"
    "  return env\n"
    "end\n"
    "local function libfinish(env) dbg.setmetatable(env, Fmeta) end\n"
    "return G, libenv, libfinish\n";

static int build(lua_State *L) {
    open_lib(L, luaopen_base, "");
    open_lib(L, luaopen_table, LUA_TABLIBNAME);
    open_lib(L, luaopen_string, LUA_STRLIBNAME);
    open_lib(L, luaopen_math, LUA_MATHLIBNAME);
    open_lib(L, luaopen_debug, LUA_DBLIBNAME);
    open_lib(L, luaopen_cjson, "cjson");
    open_lib(L, luaopen_bit, "bit");
    open_lib(L, slua_open_struct, "struct");
    open_lib(L, slua_open_cmsgpack, "cmsgpack");
    static const char *const drop[] = {"dofile", "loadfile", "print", "getfenv", "setfenv", "newproxy", "module",
                                       "require", "package", "io", "os"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, drop[i]);
    }
    lua_getglobal(L, "math");
    set_fn(L, "random", l_random);
    set_fn(L, "randomseed", l_randomseed);
    lua_pop(L, 1);

    lua_newtable(L); /* redis */
    set_fn(L, "call", l_call);
    set_fn(L, "pcall", l_pcall);
    set_fn(L, "sha1hex", l_sha1hex);
    set_fn(L, "error_reply", l_error_reply);
    set_fn(L, "status_reply", l_status_reply);
    set_fn(L, "log", l_log);
    set_fn(L, "setresp", l_setresp);
    set_fn(L, "set_repl", l_set_repl);
    set_fn(L, "replicate_commands", l_true);
    set_fn(L, "breakpoint", l_nothing);
    set_fn(L, "debug", l_nothing);
    set_fn(L, "acl_check_cmd", l_acl_check_cmd);
    set_num(L, "LOG_DEBUG", LOG_DEBUG);
    set_num(L, "LOG_VERBOSE", LOG_VERBOSE);
    set_num(L, "LOG_NOTICE", LOG_NOTICE);
    set_num(L, "LOG_WARNING", LOG_WARNING);
    set_num(L, "REPL_NONE", 0);
    set_num(L, "REPL_AOF", 1);
    set_num(L, "REPL_SLAVE", 2);
    set_num(L, "REPL_REPLICA", 2);
    set_num(L, "REPL_ALL", 3);
    lua_pushstring(L, "7.0.15");
    lua_setfield(L, -2, "REDIS_VERSION");
    set_num(L, "REDIS_VERSION_NUM", 0x07000f);
    lua_setglobal(L, "redis");

    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "scripts");

    lua_newtable(L); /* the redis table a library's loading code sees */
    set_fn(L, "register_function", l_register_function);
    set_fn(L, "log", l_log);
    set_num(L, "LOG_DEBUG", LOG_DEBUG);
    set_num(L, "LOG_VERBOSE", LOG_VERBOSE);
    set_num(L, "LOG_NOTICE", LOG_NOTICE);
    set_num(L, "LOG_WARNING", LOG_WARNING);
    lua_pushstring(L, "7.0.15");
    lua_setfield(L, -2, "REDIS_VERSION");
    set_num(L, "REDIS_VERSION_NUM", 0x07000f);
    lua_setfield(L, LUA_REGISTRYINDEX, "loadredis");

    if (luaL_loadbuffer(L, sandbox_lua, sizeof sandbox_lua - 1, "=sandbox")) return lua_error(L);
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_getglobal(L, "debug");
    lua_pushnil(L);
    lua_setglobal(L, "debug");
    lua_call(L, 2, 3);
    lua_setfield(L, LUA_REGISTRYINDEX, "libfinish");
    lua_setfield(L, LUA_REGISTRYINDEX, "libenv");
    lua_getglobal(L, "__redis__err__handler");
    lua_setfield(L, LUA_REGISTRYINDEX, "errh");
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_setfield(L, LUA_REGISTRYINDEX, "real_globals");
    lua_replace(L, LUA_GLOBALSINDEX); /* scripts see the proxy */
    return 0;
}

void slua_cron(shard *sh) {
    slua *s = &states[sh->id];
    if (s->L && !cur && s->epoch != script_cache_epoch()) { /* stale: built again on the next script */
        lua_close(s->L);
        s->L = NULL;
    }
}

lua_State *slua_state(int id) {
    slua *s = &states[id];
    uint64_t epoch = script_cache_epoch();
    if (s->L && s->epoch == epoch) return s->L;
    if (s->L) lua_close(s->L);
    s->L = lua_newstate(lalloc, s);
    s->epoch = epoch;
    if (!s->L || lua_cpcall(s->L, build, NULL)) {
        log_msg(LOG_WARNING, "Lua state could not be built: %s", s->L ? lua_tostring(s->L, -1) : "out of memory");
        abort();
    }
    lua_settop(s->L, 0);
    if (!rand_state) rand48_seed((int32_t)(clock_ns() ^ (uint64_t)id << 20)); /* Redis 7.0 does not reseed per script */
    return s->L;
}

int slua_compile(lua_State *L, const char *body, size_t len, const char *chunkname, char *err, size_t errlen) {
    if (len && body[0] == 27) {
        snprintf(err, errlen, "%s: binary chunks are not allowed", chunkname + 1);
        return 0;
    }
    if (luaL_loadbuffer(L, body, len, chunkname)) {
        snprintf(err, errlen, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "unknown error");
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

void slua_push_array(lua_State *L, const char **argv, const size_t *argl, int n) {
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, argv[i], argl[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

void slua_set_keys_args(lua_State *L, const char **argv, const size_t *argl, int nkeys, int n) {
    lua_getfield(L, LUA_REGISTRYINDEX, "real_globals");
    slua_push_array(L, argv, argl, nkeys);
    lua_setfield(L, -2, "KEYS");
    slua_push_array(L, argv + nkeys, argl + nkeys, n - nkeys);
    lua_setfield(L, -2, "ARGV");
    lua_pop(L, 1);
}

/* The error object on top of L as the script's error reply. */
static void reply_script_error(lua_State *L, script_run *r) {
    buf *out = r->c->out;
    const char *msg = NULL, *source = NULL;
    size_t ml = 0;
    long line = -1;
    int counted = 0;
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "err");
        if (lua_type(L, -1) == LUA_TSTRING) msg = lua_tolstring(L, -1, &ml);
        lua_pop(L, 1);
        lua_getfield(L, -1, "source");
        if (lua_type(L, -1) == LUA_TSTRING) source = lua_tostring(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, -1, "line");
        if (lua_isnumber(L, -1) && lua_tonumber(L, -1) >= 0 && lua_tonumber(L, -1) < 1e9) line = (long)lua_tonumber(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, -1, COUNTED);
        counted = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    buf b = {0};
    if (msg) {
        buf_add(&b, msg, ml);
    } else {
        const char *s = lua_tostring(L, -1);
        buf_printf(&b, "ERR %s", s ? s : "unknown error");
    }
    if (msg && source && line >= 0) buf_printf(&b, " script: %s, on %s:%ld.", r->name, source, line);
    buf_addc(&b, 0);
    for (char *p = b.p; *p; p++)
        if (*p == '\r' || *p == '\n') *p = ' ';
    resp_error(out, b.p);
    if (!counted) cmdstats_error(r->c->sh, b.p);
    else cmdstats_mark_failed(r->c->sh); /* failed, counted when its call was refused */
    buf_free(&b);
}

/* Whether the script's result (argument 1) is an error table of a rejected
 * call, counted when it was rejected. */
static int counted_table(lua_State *L) {
    if (!lua_istable(L, 1)) return 0;
    lua_pushstring(L, COUNTED);
    lua_rawget(L, 1);
    int yes = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return yes;
}

/* The script's result (argument 1) to its reply, in protected mode (a
 * table's metamethods run and may fail). */
static int conv_protected(lua_State *L) {
    script_run *r = lua_touserdata(L, lua_upvalueindex(1));
    if (sconv_reply(L, 1, r->c->out, r->c->resp, r->resp)) {
        resp_error(r->c->out, "ERR reached lua stack limit");
        cmdstats_error(r->c->sh, "ERR");
    } else if (r->c->out->len > r->reply_at && r->c->out->p[r->reply_at] == '-' && counted_table(L)) {
        cmdstats_mark_failed(r->c->sh);
    } else if (r->c->out->len > r->reply_at && r->c->out->p[r->reply_at] == '-') {
        const char *e = r->c->out->p + r->reply_at + 1; /* an error table returned: counted as Redis counts it */
        size_t n = r->c->out->len - r->reply_at - 1;
        char tmp[128];
        size_t k = 0;
        while (k < n && k < sizeof tmp - 1 && e[k] != '\r') tmp[k] = e[k], k++; /* cmdstats_error takes the code */
        tmp[k] = 0;
        cmdstats_error(r->c->sh, tmp);
    }
    return 0;
}

void slua_run(lua_State *L, script_run *r, int nargs) {
    int base = lua_gettop(L) - nargs - 1; /* the function's slot */
    lua_getfield(L, LUA_REGISTRYINDEX, "errh");
    lua_insert(L, base + 1);
    int errh = base + 1;
    script_run *outer = cur;
    cur = r;
    if (!r->resp) r->resp = 2;
    r->fake.sh = r->c->sh;
    r->fake.db = r->c->dbid;
    r->fake.resp = r->resp;
    r->fake.id = r->c->sess ? r->c->sess->id : 0;
    r->track = r->c->sess ? tracking_word(r->c->sess, r->c->cmd) : r->c->client;
    r->tracked = 0;
    r->user = r->c->sess ? acl_sess_user(r->c->sess) : NULL; /* a run away from home: script_hops kept it free */
    int held[MAX_SHARDS];
    int n = 0;
    if (r->c->tx) {
        tx *t = r->c->tx;
        for (int i = 0; i < t->n; i++) held[n++] = t->ids[i];
    } else {
        held[n++] = r->c->sh->id;
    }
    r->held = 0;
    for (int i = 0; i < n; i++) r->held |= 1ull << held[i];
    shard *sh = r->c->sh;
    r->oom = cfg_get(maxmemory) > 0 && !aof_loading &&
             ((evict_policy() & EVP_NONE) ? evict_over(sh) : evict_run(sh) == EVICT_FAIL);
    if (!(r->flags & (SF_COMPAT | SF_NO_WRITES)) && !repl_enough_good_replicas()) { /* min-replicas-to-write */
        resp_error(r->c->out, NOREPLICAS_ERR);
        cmdstats_error(sh, NOREPLICAS_ERR);
        cur = outer;
        lua_settop(L, base);
        return;
    }
    if (r->oom && !(r->flags & (SF_COMPAT | SF_ALLOW_OOM | SF_NO_WRITES))) { /* a script with flags says so */
        /* Redis refuses it as a deny-oom command before it starts; inside EXEC it says why */
        const char *e = r->c->in_exec ? "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
                                      : OOM_ERR;
        resp_error(r->c->out, e);
        cmdstats_error(sh, e);
        cur = outer;
        lua_settop(L, base);
        return;
    }
    /* a remote run (script_hops: no session, no transaction) answers with nothing to start again */
    r->remote = !r->c->sess && !r->c->tx && !r->c->in_exec;
    r->may_rerun = nshards > 1 && n < nshards && !r->c->in_exec && (r->c->sess ? r->c->sess->conn != NULL : r->remote || r->c->handed);
    aof_tx_begin(r->c->sh); /* the commands it runs: one MULTI/EXEC block in the AOF */
    steps_left = slua_step_budget;
    r->start_ms = clock_ns() / 1000000;
    r->is_function = !strcmp(r->source, "@user_function");
    lua_sethook(L, run_hook, LUA_MASKCOUNT, slua_step_budget ? HOOK_EVERY_BUDGET : HOOK_EVERY);
    int64_t frozen = dispatch_frozen_ms;
    dispatch_frozen_ms = r->c->sh->now_ms; /* its commands see the time it started */
    int rc = lua_pcall(L, nargs, 1, errh);
    dispatch_frozen_ms = frozen;
    script_busy_end(r);
    if (r->abort) { /* it runs again from the start: nothing it did stays */
        sundo_restore(r);
        aof_tx_discard(r->c->sh);
    }
    aof_tx_end(r->c->sh);
    sundo_free(r);
    lua_sethook(L, NULL, 0, 0);
    cur = outer;
    if (r->abort) {
        r->c->reroute = 1;
        r->c->no_stats = 1;
    } else if (rc) {
        reply_script_error(L, r);
    } else {
        r->reply_at = r->c->out->len;
        cur = r;
        lua_pushlightuserdata(L, r);
        lua_pushcclosure(L, conv_protected, 1);
        lua_insert(L, -2);
        if (lua_pcall(L, 1, 0, 0)) {
            r->c->out->len = r->reply_at;
            reply_script_error(L, r);
        }
        cur = outer;
    }
    lua_settop(L, base);
    buf_free(&r->reply);
    lua_gc(L, LUA_GCSTEP, 1);
}
