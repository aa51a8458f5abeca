/* function.c - FUNCTION LOAD|LIST|DELETE|FLUSH|DUMP|RESTORE|STATS|KILL|HELP
 * and FCALL / FCALL_RO (Redis 7.0's functions).
 *
 * The libraries are one registry for the server (name, code, the functions
 * it registered with their flags), under a mutex. FUNCTION LOAD checks a
 * library by running its code in a Lua state of its own, then adds it and
 * bumps the Lua epoch: each shard rebuilds its state and loads every
 * library again the next time it runs a function. FCALL runs as EVAL does
 * (script.h): on the connection's shard, holding its keys' shards. The
 * libraries go into RDB files as Redis 7.0 writes them (opcode 0xf5, the
 * code as a string) through the persist layer's function hooks. */
#include "cmd/script.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "persist/crc64.h"
#include "persist/rdb.h"
#include "shard/shard.h"
#include <ctype.h>
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct flib {
    char *name;
    char *code;
    size_t len;
    slua_lib_info info;
    struct flib *next;
} flib;

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static flib *libs; /* newest first */
static int nlibs, nfuncs;
static char **roaming_fns; /* functions that reached undeclared shards: they take every shard */
static int nroaming;

static void lib_free(flib *l) {
    zfree(l->name);
    zfree(l->code);
    slua_lib_info_free(&l->info);
    zfree(l);
}

/* Under lib_lock. */
static flib *lib_find(const char *name, size_t n) {
    for (flib *l = libs; l; l = l->next)
        if (strlen(l->name) == n && !memcmp(l->name, name, n)) return l;
    return NULL;
}

static void unlink_lib(flib *l) {
    for (flib **pp = &libs; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            nlibs--;
            nfuncs -= l->info.n;
            return;
        }
}

static void flush_libs(void) {
    while (libs) {
        flib *l = libs;
        libs = l->next;
        lib_free(l);
    }
    nlibs = nfuncs = 0;
    for (int i = 0; i < nroaming; i++) zfree(roaming_fns[i]);
    zfree(roaming_fns);
    roaming_fns = NULL;
    nroaming = 0;
}

/* ---- the shebang: "#!lua name=<lib>" ---- */

/* The library name and the shebang's length; 0, or -1 with the error. */
static int parse_meta(const char *code, size_t len, char **name, size_t *skip, char *err, size_t errlen) {
    *name = NULL;
    if (len < 2 || code[0] != '#' || code[1] != '!') {
        snprintf(err, errlen, "ERR Missing library metadata");
        return -1;
    }
    const char *nl = memchr(code, '\n', len);
    const char *end = nl ? nl : code + len;
    *skip = (size_t)(end - code);
    const char *p = code + 2;
    int word = 0;
    while (p < end) {
        if (word) while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
        if (p >= end && word) break;
        const char *w = p;
        while (p < end && *p != ' ' && *p != '\t' && *p != '\r') p++;
        size_t wl = (size_t)(p - w);
        if (word++ == 0) {
            if (wl != 3 || strncasecmp(w, "lua", 3)) {
                snprintf(err, errlen, "ERR Engine '%.*s' not found", (int)(wl > 100 ? 100 : wl), w);
                goto fail;
            }
        } else if (wl >= 5 && !memcmp(w, "name=", 5)) {
            if (*name) {
                snprintf(err, errlen, "ERR Invalid metadata value, name argument was given multiple times");
                goto fail;
            }
            const char *v = w + 5;
            size_t vl = wl - 5;
            if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) { /* a quoted name */
                v++;
                vl -= 2;
            }
            *name = zstrndup(v, vl);
        } else {
            snprintf(err, errlen, "ERR Invalid metadata value given: %.*s", (int)(wl > 100 ? 100 : wl), w);
            goto fail;
        }
    }
    if (!*name) {
        snprintf(err, errlen, "ERR Library name was not given");
        goto fail;
    }
    int ok = **name != 0;
    for (const char *c = *name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_') ok = 0;
    if (!ok) {
        snprintf(err, errlen, "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
                              "least one character long");
        goto fail;
    }
    return 0;
fail:
    zfree(*name);
    *name = NULL;
    return -1;
}

/* Runs a library's code with its shebang line blanked (the line numbers
 * stay). Leaves the functions table on L's stack when it returns 1. */
static int load_code(lua_State *L, const char *code, size_t len, size_t skip, slua_lib_info *info, char *err,
                     size_t errlen) {
    return slua_load_library(L, code + skip, len - skip, info, err, errlen);
}

/* Checks code in a state of its own and builds its library (not added). */
static flib *check_library(const char *code, size_t len, char *err, size_t errlen) {
    char *name;
    size_t skip;
    if (parse_meta(code, len, &name, &skip, err, errlen)) return NULL;
    lua_State *L = slua_open_temp();
    if (!L) {
        zfree(name);
        snprintf(err, errlen, "ERR Out of memory creating a Lua state");
        return NULL;
    }
    flib *l = zcalloc(sizeof *l);
    l->name = name;
    int ok = load_code(L, code, len, skip, &l->info, err, errlen);
    slua_close_temp(L);
    if (!ok) {
        lib_free(l);
        return NULL;
    }
    l->code = zstrndup(code, len);
    l->len = len;
    return l;
}

/* Whether a library of libs that survives the change (not flushed, not
 * replaced by one of list[0..n)) has the function name. Under lib_lock. */
static int name_taken(const char *fn, flib **list, int n, int flush) {
    if (flush) return 0;
    for (flib *l = libs; l; l = l->next) {
        int replaced = 0;
        for (int k = 0; k < n; k++) replaced |= !strcmp(list[k]->name, l->name);
        if (replaced) continue;
        for (int i = 0; i < l->info.n; i++)
            if (!strcasecmp(l->info.f[i].name, fn)) return 1;
    }
    return 0;
}

/* Adds the checked libraries list[0..n) with a policy: 0 append (a name
 * that exists is an error), 1 replace, 2 flush every library first. All or
 * nothing: 0, or -1 with the error (nothing added, the caller frees list). */
static int restore_libs(flib **list, int n, int policy, int restoring, char *err, size_t errlen) {
    pthread_mutex_lock(&lib_lock);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (policy == 0 && lib_find(list[i]->name, strlen(list[i]->name))) {
            snprintf(err, errlen, n == 1 && !restoring ? "ERR Library '%s' already exists" : "ERR Library %s already exists",
                     list[i]->name);
            rc = -1;
        }
        for (int k = 0; k < i && !rc; k++)
            if (!strcmp(list[k]->name, list[i]->name)) {
                snprintf(err, errlen, "ERR Library '%s' already exists", list[i]->name);
                rc = -1;
            }
        for (int f = 0; f < list[i]->info.n && !rc; f++) {
            const char *fn = list[i]->info.f[f].name;
            int clash = name_taken(fn, list, n, policy == 2);
            for (int k = 0; k < i && !clash; k++)
                for (int g = 0; g < list[k]->info.n && !clash; g++) clash = !strcasecmp(list[k]->info.f[g].name, fn);
            if (clash) {
                snprintf(err, errlen, "ERR Function %s already exists", fn);
                rc = -1;
            }
        }
    }
    if (!rc) {
        if (policy == 2) flush_libs();
        for (int i = 0; i < n; i++) {
            flib *old = lib_find(list[i]->name, strlen(list[i]->name));
            if (old) {
                unlink_lib(old);
                lib_free(old);
            }
            list[i]->next = libs;
            libs = list[i];
            nlibs++;
            nfuncs += list[i]->info.n;
        }
    }
    pthread_mutex_unlock(&lib_lock);
    if (!rc) script_bump_epoch();
    return rc;
}

/* ---- per shard: the functions table of the state ---- */

/* Pushes the registry's functions table of L, loading every library into
 * it after the state was rebuilt. */
static void push_functions(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "functions");
    if (!lua_isnil(L, -1)) return;
    lua_pop(L, 1);
    lua_newtable(L);
    int all = lua_gettop(L);
    pthread_mutex_lock(&lib_lock);
    int n = nlibs;
    char **codes = zmalloc(sizeof(char *) * (size_t)(n ? n : 1));
    size_t *lens = zmalloc(sizeof(size_t) * (size_t)(n ? n : 1));
    int i = 0;
    for (flib *l = libs; l; l = l->next, i++) {
        codes[i] = zstrndup(l->code, l->len);
        lens[i] = l->len;
    }
    pthread_mutex_unlock(&lib_lock);
    for (i = 0; i < n; i++) {
        char *name, err[256];
        size_t skip;
        if (!parse_meta(codes[i], lens[i], &name, &skip, err, sizeof err) &&
            load_code(L, codes[i], lens[i], skip, NULL, err, sizeof err)) {
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                size_t kl;
                const char *k = lua_tolstring(L, -2, &kl);
                char low[256];
                size_t ll = kl < sizeof low ? kl : sizeof low;
                for (size_t j = 0; j < ll; j++) low[j] = (char)tolower((unsigned char)k[j]);
                lua_pushlstring(L, low, ll); /* function names are case-insensitive */
                lua_insert(L, -2);
                lua_settable(L, all);
            }
            lua_pop(L, 1);
        }
        zfree(name);
        zfree(codes[i]);
    }
    zfree(codes);
    zfree(lens);
    lua_pushvalue(L, all);
    lua_setfield(L, LUA_REGISTRYINDEX, "functions");
}

static int fn_roams(const char *name) {
    int r = 0;
    pthread_mutex_lock(&lib_lock);
    for (int i = 0; i < nroaming && !r; i++) r = !strcmp(roaming_fns[i], name);
    pthread_mutex_unlock(&lib_lock);
    return r;
}

static void fn_set_roams(const char *name) {
    if (fn_roams(name)) return;
    pthread_mutex_lock(&lib_lock);
    roaming_fns = zrealloc(roaming_fns, sizeof(char *) * (size_t)(nroaming + 1));
    roaming_fns[nroaming] = zstrndup(name, strlen(name));
    __atomic_store_n(&nroaming, nroaming + 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lib_lock);
}

int function_flags(const char *name, size_t len) {
    int flags = -1;
    pthread_mutex_lock(&lib_lock);
    for (flib *l = libs; l && flags < 0; l = l->next)
        for (int i = 0; i < l->info.n && flags < 0; i++)
            if (strlen(l->info.f[i].name) == len && !memcmp(l->info.f[i].name, name, len)) flags = l->info.f[i].flags;
    pthread_mutex_unlock(&lib_lock);
    return flags;
}

/* ---- FCALL ---- */

static void fcall_generic(cmd_ctx *c, int ro) {
    char name[256];
    size_t nl = c->argl[1] < sizeof name - 1 ? c->argl[1] : sizeof name - 1;
    for (size_t i = 0; i < nl; i++) name[i] = (char)tolower((unsigned char)c->argv[1][i]);
    name[nl] = 0;
    lua_State *L = slua_state(c->sh->id);
    push_functions(L);
    lua_pushlstring(L, name, nl);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (!lua_istable(L, -1) || nl != c->argl[1]) {
        lua_pop(L, 1);
        reply_error(c, "ERR Function not found");
        return;
    }
    long long nk;
    if (!str2ll(c->argv[2], c->argl[2], &nk)) {
        lua_pop(L, 1);
        reply_error(c, "ERR Bad number of keys provided");
        return;
    }
    if (nk < 0) {
        lua_pop(L, 1);
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    if (nk > c->argc - 3) {
        lua_pop(L, 1);
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    memcpy(name, c->argv[1], nl); /* error messages name it as called */
    lua_rawgeti(L, -1, 2);
    int flags = (int)lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (ro && !(flags & SF_NO_WRITES)) {
        lua_pop(L, 1);
        reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
    slua_push_array(L, c->argv + 3, c->argl + 3, (int)nk);
    slua_push_array(L, c->argv + 3 + nk, c->argl + 3 + nk, c->argc - 3 - (int)nk);
    script_run r = {.c = c, .name = name, .source = "@user_function", .ro = ro || (flags & SF_NO_WRITES),
                    .flags = flags};
    slua_run(L, &r, 2);
    if (c->reroute) fn_set_roams(name);
}

static void fcall_cmd(cmd_ctx *c) { fcall_generic(c, 0); }
static void fcall_ro_cmd(cmd_ctx *c) { fcall_generic(c, 1); }

static int fcall_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    long long nk;
    if (argc < 3 || !str2ll(argv[2], argl[2], &nk) || nk < 0 || nk > argc - 3) return 0;
    int n = 0;
    for (long long i = 0; i < nk && n < max; i++) pos[n++] = 3 + (int)i;
    return n;
}

static int fcall_route(int argc, const char **argv, const size_t *argl, int n) {
    if (!__atomic_load_n(&nroaming, __ATOMIC_RELAXED) || argc < 2 || argl[1] > 255) return ROUTE_KEYS;
    char name[256];
    memcpy(name, argv[1], argl[1]);
    name[argl[1]] = 0;
    return fn_roams(name) ? ROUTE_ALL : ROUTE_KEYS;
}

/* ---- FUNCTION ---- */

static void function_load(cmd_ctx *c) {
    int replace = 0, at = c->argc - 1;
    for (int i = 2; i < at; i++) {
        if (!arg_is(c, i, "replace")) {
            reply_errorf(c, "ERR Unknown option given: %.*s", (int)(c->argl[i] > 100 ? 100 : c->argl[i]), c->argv[i]);
            return;
        }
        replace = 1;
    }
    char err[1024], *lname;
    size_t skip;
    if (parse_meta(c->argv[at], c->argl[at], &lname, &skip, err, sizeof err)) {
        reply_error(c, err);
        return;
    }
    pthread_mutex_lock(&lib_lock);
    int exists = lib_find(lname, strlen(lname)) != NULL;
    pthread_mutex_unlock(&lib_lock);
    if (exists && !replace) {
        reply_errorf(c, "ERR Library '%s' already exists", lname);
        zfree(lname);
        return;
    }
    zfree(lname);
    flib *l = check_library(c->argv[at], c->argl[at], err, sizeof err);
    if (!l) {
        reply_error(c, err);
        return;
    }
    char *name = zstrndup(l->name, strlen(l->name)); /* once added, another shard may delete l */
    if (restore_libs(&l, 1, replace, 0, err, sizeof err)) {
        lib_free(l);
        reply_error(c, err);
    } else {
        reply_cstr(c, name);
    }
    zfree(name);
}

static void function_delete(cmd_ctx *c) {
    pthread_mutex_lock(&lib_lock);
    flib *l = lib_find(c->argv[2], c->argl[2]);
    if (l) {
        unlink_lib(l);
        lib_free(l);
    }
    pthread_mutex_unlock(&lib_lock);
    if (!l) {
        reply_error(c, "ERR Library not found");
        return;
    }
    script_bump_epoch();
    reply_ok(c);
}

static void function_flush(cmd_ctx *c) {
    if (c->argc > 3) {
        reply_error(c, "ERR unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP.");
        return;
    }
    if (c->argc == 3 && !arg_is(c, 2, "sync") && !arg_is(c, 2, "async")) {
        reply_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    pthread_mutex_lock(&lib_lock);
    flush_libs();
    pthread_mutex_unlock(&lib_lock);
    script_bump_epoch();
    reply_ok(c);
}

static void function_list(cmd_ctx *c) {
    int withcode = 0;
    const char *pat = NULL;
    size_t pl = 0;
    for (int i = 2; i < c->argc; i++) {
        if (arg_is(c, i, "withcode") && !withcode) {
            withcode = 1;
        } else if (arg_is(c, i, "libraryname") && !pat) {
            if (i + 1 >= c->argc) {
                reply_error(c, "ERR library name argument was not given");
                return;
            }
            pat = c->argv[++i];
            pl = c->argl[i];
        } else {
            reply_errorf(c, "ERR Unknown argument %.*s", (int)(c->argl[i] > 100 ? 100 : c->argl[i]), c->argv[i]);
            return;
        }
    }
    pthread_mutex_lock(&lib_lock);
    size_t at = reply_defer(c);
    long long n = 0;
    for (flib *l = libs; l; l = l->next) {
        if (pat && !glob_match(pat, pl, l->name, strlen(l->name), 1)) continue;
        n++;
        reply_map(c, withcode ? 4 : 3);
        reply_cstr(c, "library_name");
        reply_cstr(c, l->name);
        reply_cstr(c, "engine");
        reply_cstr(c, "LUA");
        reply_cstr(c, "functions");
        reply_array(c, l->info.n);
        for (int i = 0; i < l->info.n; i++) {
            reply_map(c, 3);
            reply_cstr(c, "name");
            reply_cstr(c, l->info.f[i].name);
            reply_cstr(c, "description");
            if (l->info.f[i].desc) reply_cstr(c, l->info.f[i].desc);
            else reply_null(c);
            reply_cstr(c, "flags");
            int f = l->info.f[i].flags;
            static const char *const names[] = {"no-writes", "allow-oom", "allow-stale", "no-cluster",
                                                "allow-cross-slot-keys"};
            int cnt = 0;
            for (int b = 0; b < 5; b++) cnt += (f >> b) & 1;
            reply_set(c, cnt);
            for (int b = 0; b < 5; b++)
                if ((f >> b) & 1) reply_cstr(c, names[b]);
        }
        if (withcode) {
            reply_cstr(c, "library_code");
            reply_bulk(c, l->code, l->len);
        }
    }
    pthread_mutex_unlock(&lib_lock);
    reply_defer_array(c, at, n);
}

/* The libraries as FUNCTION DUMP's payload (and the RDB's records). */
static void put_libs(buf *o) {
    for (flib *l = libs; l; l = l->next) {
        buf_addc(o, (char)0xf5);
        rdb_put_str(o, l->code, l->len);
    }
}

static void function_dump(cmd_ctx *c) {
    buf o = {0};
    pthread_mutex_lock(&lib_lock);
    put_libs(&o);
    pthread_mutex_unlock(&lib_lock);
    uint8_t ver[2] = {10, 0};
    buf_add(&o, ver, 2);
    uint64_t crc = crc64(0, o.p, o.len);
    buf_add(&o, &crc, 8);
    reply_bulk(c, o.p, o.len);
    buf_free(&o);
}

static void function_restore(cmd_ctx *c) {
    int policy = 0;
    if (c->argc == 4) {
        if (arg_is(c, 3, "append")) policy = 0;
        else if (arg_is(c, 3, "replace")) policy = 1;
        else if (arg_is(c, 3, "flush")) policy = 2;
        else {
            reply_error(c, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    } else if (c->argc > 4) {
        reply_error(c, "ERR unknown subcommand or wrong number of arguments for 'restore'. Try FUNCTION HELP.");
        return;
    }
    const uint8_t *p = (const uint8_t *)c->argv[2];
    size_t n = c->argl[2];
    uint64_t crc;
    if (n < 10 || (p[n - 10] | p[n - 9] << 8) > 10 || (memcpy(&crc, p + n - 8, 8), crc != crc64(0, p, n - 8))) {
        reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    rdb_in in = {p, n - 10, 0};
    flib **list = NULL;
    int nl = 0;
    char err[1024] = "";
    while (in.pos < in.n && !err[0]) {
        const uint8_t *op;
        rdb_str s = {0};
        if (rdb_get_bytes(&in, 1, &op) || *op != 0xf5) {
            snprintf(err, sizeof err, "ERR given type is not a function");
            break;
        }
        if (rdb_get_str(&in, &s)) {
            snprintf(err, sizeof err, "ERR payload is not valid");
            break;
        }
        flib *l = check_library(s.s, s.len, err, sizeof err);
        rdb_str_free(&s);
        if (!l) break;
        list = zrealloc(list, sizeof(flib *) * (size_t)(nl + 1));
        list[nl++] = l;
    }
    if (!err[0] && restore_libs(list, nl, policy, 1, err, sizeof err) == 0) {
        zfree(list);
        reply_ok(c);
        return;
    }
    for (int i = 0; i < nl; i++) lib_free(list[i]);
    zfree(list);
    reply_error(c, err);
}

static void function_stats(cmd_ctx *c) {
    if (script_busy_kind() == 0) { /* an EVAL script is busy: as Redis, not for FUNCTION commands */
        char err[160];
        script_busy_error(err, sizeof err);
        reply_error(c, err);
        return;
    }
    reply_map(c, 2);
    reply_cstr(c, "running_script");
    script_running_reply(c);
    reply_cstr(c, "engines");
    reply_map(c, 1);
    reply_cstr(c, "LUA");
    reply_map(c, 2);
    pthread_mutex_lock(&lib_lock);
    reply_cstr(c, "libraries_count");
    reply_int(c, nlibs);
    reply_cstr(c, "functions_count");
    reply_int(c, nfuncs);
    pthread_mutex_unlock(&lib_lock);
}

static void function_kill(cmd_ctx *c) { script_kill_reply(c, 1); }

static void function_help(cmd_ctx *c) {
    static const char *const lines[] = {
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        ("    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE "
         "command"),
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
        "HELP",
        "    Prints this help.",
    };
    reply_help_lines(c, lines, (int)(sizeof lines / sizeof lines[0]));
}

/* ---- RDB hooks (persist/rdb.h) ---- */

static void rdb_write_functions(buf *o) {
    pthread_mutex_lock(&lib_lock);
    put_libs(o);
    pthread_mutex_unlock(&lib_lock);
}

static int rdb_read_function(const char *code, size_t len, char *err, size_t errlen) {
    flib *l = check_library(code, len, err, errlen);
    if (!l) return -1;
    if (restore_libs(&l, 1, rdb_load_allow_dup ? 1 : 0, 1, err, errlen)) { /* a library already there: an error, unless merging */
        lib_free(l);
        return -1;
    }
    return 0;
}

void function_flush_libraries(void) {
    pthread_mutex_lock(&lib_lock);
    flush_libs();
    pthread_mutex_unlock(&lib_lock);
    script_bump_epoch();
}

int function_count(void) { return __atomic_load_n(&nfuncs, __ATOMIC_RELAXED); }
int function_lib_count(void) { return __atomic_load_n(&nlibs, __ATOMIC_RELAXED); }

size_t function_cache_bytes(void) {
    size_t n = 0;
    pthread_mutex_lock(&lib_lock);
    for (const flib *l = libs; l; l = l->next) n += zmalloc_size(l) + zmalloc_size(l->name) + zmalloc_size(l->code);
    pthread_mutex_unlock(&lib_lock);
    return n;
}

#define FSUB(nm, fn, ar, fl, sum)                                                                                      \
    {.name = "function|" nm, .proc = fn, .arity = ar, .flags = fl, .group = "scripting", .since = "7.0.0",            \
     .acl = "slow scripting", .summary = sum}

static command function_subs[] = {
    FSUB("load", function_load, -3, CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT, "Create a function with the given arguments (name, code, description)"),
    FSUB("delete", function_delete, 3, CMD_WRITE | CMD_NOSCRIPT, "Delete a function by name"),
    FSUB("flush", function_flush, -2, CMD_WRITE | CMD_NOSCRIPT, "Deleting all functions"),
    FSUB("list", function_list, -2, CMD_NOSCRIPT, "List information about all the functions"),
    FSUB("dump", function_dump, 2, CMD_NOSCRIPT, "Dump all functions into a serialized binary payload"),
    FSUB("restore", function_restore, -3, CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT, "Restore all the functions on the given payload"),
    FSUB("stats", function_stats, 2, CMD_NOSCRIPT | CMD_ALLOWBUSY, "Return information about the function currently running (name, description, duration)"),
    FSUB("kill", function_kill, 2, CMD_NOSCRIPT | CMD_ALLOWBUSY, "Kill the function currently in execution."),
    FSUB("help", function_help, 2, CMD_LOADING | CMD_STALE, "Show helpful text about the different subcommands"),
};

#define FCALL_ROW(nm, fn, extra, sum, ...)                                                                             \
    {                                                                                                                  \
        .name = nm, .proc = fn, .arity = -3,                                                                           \
        .flags = CMD_NOSCRIPT | CMD_STALE | CMD_SKIP_MONITOR | CMD_NO_MANDATORY_KEYS | CMD_HOME | (extra),             \
        .keys = fcall_keys, .route = fcall_route, .hops = script_hops, .group = "scripting", .since = "7.0.0",         \
        .acl = "slow scripting", .summary = sum, __VA_ARGS__                                                           \
    }

static const command rows[] = {
    FCALL_ROW("fcall", fcall_cmd, CMD_MAY_REPLICATE, "Invoke a function",
              KEY_SPECS({KS_RW | KS_ACCESS | KS_UPDATE, KS_INDEX(2), KS_KEYNUM(0, 1, 1),
                         .notes = "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"})),
    FCALL_ROW("fcall_ro", fcall_ro_cmd, CMD_READONLY, "Invoke a read-only function",
              KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(2), KS_KEYNUM(0, 1, 1),
                         .notes = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"})),
    {.name = "function",
     .arity = -2,
     .group = "scripting",
     .since = "7.0.0",
     .acl = "slow",
     .summary = "A container for function commands",
     .subs = function_subs,
     .nsubs = (int)(sizeof function_subs / sizeof function_subs[0])},
};

void function_register(void) {
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
    rdb_functions_writer = rdb_write_functions;
    rdb_function_reader = rdb_read_function;
}
