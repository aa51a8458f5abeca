/* script.h - Lua scripting: what EVAL (script.c) and FUNCTION/FCALL
 * (function.c) share with the Lua engine (script_lua.c, script_conv.c).
 *
 * Each shard thread has its own Lua state (created on first use), so
 * scripts on different shards run in parallel. The script cache and the
 * function libraries are global (one logical server); a shard compiles a
 * body into its state the first time it runs it there.
 *
 * A script runs as one command:
 *   - inline, when its declared keys are all on its connection's shard;
 *   - on the shard of its keys when they are all on one other shard, as
 *     the one part of a transaction holding them (script_hops);
 *   - else on its connection's shard under whole-shard locks of the shards
 *     its keys are on (a transaction, shard/tx.h), reaching their data as
 *     EXEC does.
 * A redis.call on a key of a shard the run does not hold (an undeclared
 * key), or on an undeclared key another transaction holds, stops the script
 * (its writes undone, script_undo.c): it runs again under the locks of every
 * shard, and its name is remembered so later calls take every shard at
 * once. Past the undo limits, such a call is an error. */
#ifndef SHOAL_SCRIPT_H
#define SHOAL_SCRIPT_H
#include "cmd/cmd.h"
#include "net/conn.h"

struct lua_State;

/* Script flags (the shebang's flags=, register_function's flags). */
enum {
    SF_NO_WRITES = 1 << 0,
    SF_ALLOW_OOM = 1 << 1,
    SF_ALLOW_STALE = 1 << 2,
    SF_NO_CLUSTER = 1 << 3,
    SF_CROSS_SLOT = 1 << 4,
    SF_COMPAT = 1 << 5, /* EVAL without a shebang: Redis 6 semantics */
};

/* One run of a script or function. */
typedef struct script_run {
    cmd_ctx *c;         /* the EVAL/FCALL being executed */
    session fake;       /* the session the script's commands see (its own db) */
    const char *name;   /* sha or function name, for error messages */
    const char *source; /* "@user_script" or "@user_function" */
    int ro;             /* writes refused */
    int flags;          /* SF_* */
    int resp;           /* redis.setresp */
    int wrote;          /* a write command ran */
    int abort;          /* reached a shard it does not hold before writing */
    uint64_t held;      /* shards this run may touch (bit per shard) */
    buf reply;          /* scratch: one inner command's reply */
    int may_rerun;      /* it could still start again holding every shard */
    int remote;         /* runs on its keys' shard for a connection of another (script_hops) */
    struct undo_rec *undo; /* the keys it wrote, as they were (script_undo.c) */
    int nundo, capundo;
    size_t reply_at; /* where the script's reply starts in c->out */
    int64_t start_ms;
    int busy;        /* past busy-reply-threshold: the shard is published busy */
    int is_function;
    int oom;         /* over maxmemory when it started (Redis's pre_command_oom_state) */
    uint64_t track;  /* the caller's tracking word (shard/tracking.h) */
    int tracked;     /* its declared keys were remembered for CLIENT TRACKING */
    struct acl_user *user; /* whose ACL its calls pass (NULL: no checks) */
} script_run;

/* The executing shard's Lua state (created, or recreated after SCRIPT
 * FLUSH / a library change, on demand). */
struct lua_State *slua_state(int shard_id);
/* Runs the function on top of L's stack with nargs arguments below it
 * pushed by the caller (KEYS/ARGV already set for EVAL), writes the reply
 * (or error) to r->c->out. On abort writes nothing and sets c->reroute. */
void slua_run(struct lua_State *L, script_run *r, int nargs);
/* Compiles body as a chunk named source; leaves the function on the stack
 * and returns 1, or writes the error text (Lua's message) to err and
 * returns 0. Binary chunks are refused. */
int slua_compile(struct lua_State *L, const char *body, size_t len, const char *chunkname, char *err, size_t errlen);
/* Sets the KEYS and ARGV globals from argv[0..nkeys) and argv[nkeys..n). */
void slua_set_keys_args(struct lua_State *L, const char **argv, const size_t *argl, int nkeys, int n);
/* Pushes a Lua table of the strings argv[0..n). */
void slua_push_array(struct lua_State *L, const char **argv, const size_t *argl, int n);
/* Functions a library registered (names, descriptions, flags). */
typedef struct slua_lib_info {
    int n;
    struct {
        char *name, *desc;
        int flags;
    } *f;
} slua_lib_info;
void slua_lib_info_free(slua_lib_info *in);
/* Runs a library's code (shebang line blanked by the caller) in its
 * loading environment: on success leaves a table name -> {fn, flags} on
 * the stack, fills info (when given) and returns 1; else the error reply
 * text in err and 0. */
int slua_load_library(struct lua_State *L, const char *code, size_t len, slua_lib_info *info, char *err,
                      size_t errlen);
/* A sandboxed state of its own (library checks off the shard threads). */
struct lua_State *slua_open_temp(void);
void slua_close_temp(struct lua_State *L);
/* Bumps the epoch: every shard rebuilds its state on its next script. */
void script_bump_epoch(void);
/* From every shard's cron: frees the shard's Lua state once SCRIPT FLUSH
 * or a library change made it stale (INFO counts only what is in use). */
struct shard;
void slua_cron(struct shard *sh);
/* Bytes the Lua states hold (INFO used_memory_lua). */
size_t slua_memory(void);
/* The EVAL script cache: scripts held and the bytes of their bodies. */
size_t script_cache_count(void);
size_t script_cache_bytes(void);
/* Limits for tests and fuzzing: bytes per Lua state (default 1 GB), and
 * Lua instructions per script run (0: no limit). */
extern size_t slua_mem_limit;
extern long slua_step_budget;
/* DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call noscript commands. */
extern int script_deny_disabled;

/* Undo (script_undo.c): a run that may still have to start again over
 * every shard keeps a copy of each key before its first write to it. */
/* Before a write command runs: saves its keys. 0 when they cannot be kept
 * (too many or too big): the run can no longer start again. */
int sundo_save(script_run *r, cmd_ctx *sub);
/* Puts every saved key back as it was, newest first. */
void sundo_restore(script_run *r);
void sundo_free(script_run *r);

/* Conversions (script_conv.c). */
/* Pushes the RESP reply at p[0..n) as Lua values (Redis's rules); returns
 * the bytes consumed (0 on malformed input: pushes nil). */
size_t sconv_push_reply(struct lua_State *L, const char *p, size_t n);
/* Writes the Lua value at idx as a RESP reply to out (caller protocol
 * proto, script protocol sresp). 0 on success, -1 when too deep (out is
 * left as it was). Reading a table's fields runs its metamethods: call it
 * in protected mode. */
int sconv_reply(struct lua_State *L, int idx, buf *out, int proto, int sresp);
/* A Lua number as redis.call passes it ("%.17g", as Redis 7.0). dst >= 32
 * bytes; returns the length. */
int sconv_number(char *dst, double d);

/* Busy scripts (script_busy.c): a script running past busy-reply-threshold
 * makes its shard busy; SCRIPT KILL / FUNCTION KILL stop it from any shard. */
/* The BUSY error text for the script running now. */
void script_busy_error(char *err, size_t errlen);
/* SCRIPT KILL (function 0) or FUNCTION KILL (1): replies. */
void script_kill_reply(cmd_ctx *c, int function);
/* Whether shard's thread is the one running a busy script. */
int script_busy_runs_on(int shard);
/* What runs busy: -1 nothing, 0 a script (EVAL), 1 a function. */
int script_busy_kind(void);
/* FUNCTION STATS's running_script value (null when none runs). */
void script_running_reply(cmd_ctx *c);
/* From the script's instruction hook: publishes the shard as busy once the
 * threshold passed, serves its other connections, and tells (1) whether
 * the script must stop (killed, or the server is stopping). */
int script_busy_check(script_run *r);
/* At the end of a run: the shard is not busy any more. */
void script_busy_end(script_run *r);

/* EVAL's and FCALL's hops (cmd.h): when the declared keys are all on one
 * shard that is not the connection's, the script runs there, as the one
 * part of a transaction holding those keys (the connection waits for it);
 * 0 otherwise (whole-shard locks, or inline). */
int script_hops(struct session *s, const command *cmd, int argc, const char **argv, const size_t *argl, int discard);

/* INFO memory's scripting fields (used_memory_lua, number_of_cached_scripts,
 * number_of_functions, ...). */
void script_info_memory(buf *o);
int function_count(void);
/* Removes every function library (DEBUG RELOAD empties them with the data). */
void function_flush_libraries(void);
int function_lib_count(void);
/* Bytes the function libraries take: names, code (MEMORY STATS functions.caches). */
size_t function_cache_bytes(void);

/* Whether the script an EVAL, EVALSHA or FCALL (argv) names declares
 * no-writes (shebang or register_function flags): CLIENT PAUSE WRITE lets
 * it through, as Redis takes a script's command flags from its own. */
int script_declares_no_writes(int argc, const char **argv, const size_t *argl);
/* The SF_* flags of that script (SF_COMPAT: an EVAL without a shebang), or
 * -1 when they are not known yet (no such function or cached script, a
 * bad shebang: the command's own error comes when it runs). */
int script_declared_flags(int argc, const char **argv, const size_t *argl);
/* A function's flags, or -1 when there is no function of that name. */
int function_flags(const char *name, size_t len);

/* Script flags from a shebang's first line (EVAL) or register_function's
 * flags table: parses "flags=a,b" words. 0 ok, else -1 with err set. */
int script_parse_flag(const char *s, size_t n, int *flags);
#endif
