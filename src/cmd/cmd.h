/* cmd.h - what a command handler sees, and the command table.
 *
 * A handler is `void name(cmd_ctx *c)`. It reads c->argv[0..argc), works on
 * the keyspace through the db_* functions of shard/db.h (getting the right
 * database with ctx_db), and writes exactly one reply with the reply_*
 * helpers below. It runs on one shard thread:
 *   - the connection's own shard, when every key is local;
 *   - the keys' shard, when they all live on one other shard (c->sess is
 *     NULL there: no session state, only c->dbid and c->resp);
 *   - the coordinating shard of a transaction that holds the locks of every
 *     shard involved (c->tx != NULL); ctx_db then finds each key's shard.
 * Handlers never block and never touch a socket, but MIGRATE's (migrate.c),
 * which waits for its target server as Redis does. Each family file
 * (string.c, keys.c, ...) defines <family>_register() which adds its rows to
 * the table with cmd_register. */
#ifndef SHOAL_CMD_H
#define SHOAL_CMD_H
#include "lib/buf.h"
#include "proto/resp.h"
#include <stddef.h>
#include <stdint.h>

struct shard;
struct db;
struct session;
struct tx;

/* Command flags (the COMMAND reply shows the Redis-visible ones). */
enum {
    CMD_WRITE = 1 << 0,
    CMD_READONLY = 1 << 1,
    CMD_FAST = 1 << 2,
    CMD_ALLSHARDS = 1 << 3, /* keyless but needs every shard (DBSIZE, KEYS) */
    CMD_DENYOOM = 1 << 4,
    CMD_ADMIN = 1 << 5,
    CMD_NOSCRIPT = 1 << 6,
    CMD_LOADING = 1 << 7,
    CMD_STALE = 1 << 8,
    CMD_PUBSUB = 1 << 9,
    CMD_NOAUTH = 1 << 10,
    CMD_SESSION = 1 << 11, /* touches connection state: always local */
    CMD_RANDOM = 1 << 12,  /* routed by a custom rule (e.g. SCAN by cursor) */
    CMD_BLOCKING = 1 << 13,
    CMD_ALLOWBUSY = 1 << 14,
    CMD_MOVABLEKEYS = 1 << 15,
    CMD_NOMULTI = 1 << 16,       /* refused inside MULTI */
    CMD_EXEC = 1 << 17,          /* EXEC: routed by its queued commands' keys (multi.h) */
    CMD_SKIP_SLOWLOG = 1 << 18,  /* never in the slow log (EXEC: its commands are) */
    CMD_MAY_REPLICATE = 1 << 19, /* not a write, but CLIENT PAUSE WRITE holds it (PUBLISH, PFCOUNT, EVAL); COMMAND does
                                    not show it, as Redis 7.0 */
    CMD_HOME = 1 << 20,          /* runs on its connection's shard, holding its keys' shards (scripts) */
    CMD_SKIP_MONITOR = 1 << 21,  /* shown only, as Redis 7.0 (scripts); monitor.c decides what MONITOR feeds */
    CMD_NO_MANDATORY_KEYS = 1 << 22, /* keys are optional: GETKEYS of none is an empty list (scripts) */
    CMD_NO_ASYNC_LOADING = 1 << 23,  /* shown only, as Redis 7.0 (SAVE, BGSAVE, CLUSTER ...) */
};

/* Key spec flags (Redis 7.0's): how a command uses one of its keys. One of
 * RO/RW/OW/RM says read-only, read-write, overwrite, remove; the others say
 * what happens to the value (ACCESS: read, UPDATE/INSERT/DELETE: changed);
 * VARIABLE_FLAGS: the call's arguments decide (SET ... GET). */
enum {
    KS_RO = 1 << 0,
    KS_RW = 1 << 1,
    KS_OW = 1 << 2,
    KS_RM = 1 << 3,
    KS_ACCESS = 1 << 4,
    KS_UPDATE = 1 << 5,
    KS_INSERT = 1 << 6,
    KS_DELETE = 1 << 7,
    KS_NOT_KEY = 1 << 8,
    KS_INCOMPLETE = 1 << 9,
    KS_VARIABLE_FLAGS = 1 << 10,
};
enum { KS_BS_INDEX = 1, KS_BS_KEYWORD, KS_BS_UNKNOWN };
enum { KS_FK_RANGE = 1, KS_FK_KEYNUM, KS_FK_UNKNOWN };

/* One key spec, as COMMAND INFO shows it: where the search for keys begins
 * (argv index pos, or after `keyword` searched from argv[pos], from the end
 * when pos < 0) and how the keys are found from there (range: lastkey a,
 * keystep b, limit c; keynum: the count at +a, first key at +b, step c). */
typedef struct key_spec {
    uint16_t flags; /* KS_* */
    uint8_t bs, fk; /* KS_BS_*, KS_FK_* */
    int16_t pos;
    int16_t a, b, c;
    const char *keyword;
    const char *notes;
} key_spec;

/* Spelling key specs in a row:
 *   KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
 *             {KS_RW | KS_INSERT, KS_INDEX(2), KS_RANGE(0, 1, 0), .notes = "..."})
 * A row with one spec that its first/last/step describe gives only the
 * flags: .kflags = KS_RO | KS_ACCESS. */
#define KS_INDEX(i) .bs = KS_BS_INDEX, .pos = (i)
#define KS_KEYWORD(kw, from) .bs = KS_BS_KEYWORD, .keyword = (kw), .pos = (from)
#define KS_RANGE(last, step, limit) .fk = KS_FK_RANGE, .a = (last), .b = (step), .c = (limit)
#define KS_KEYNUM(idx, first, step) .fk = KS_FK_KEYNUM, .a = (idx), .b = (first), .c = (step)
#define KS_UNKNOWN .bs = KS_BS_UNKNOWN, .fk = KS_FK_UNKNOWN
#define KEY_SPECS(...)                                                                                                 \
    .specs = (const key_spec[]){__VA_ARGS__},                                                                          \
    .nspecs = (int)(sizeof((const key_spec[]){__VA_ARGS__}) / sizeof(key_spec))

typedef struct cmd_ctx cmd_ctx;
typedef void cmd_proc(cmd_ctx *c);
/* Returns the number of key positions written to pos (at most max);
 * used when keys are not a first/last/step range (SORT, ZUNIONSTORE...). */
typedef int cmd_keys_fn(int argc, const char **argv, const size_t *argl, int *pos, int max);
/* For keyless commands that still belong to one shard (SCAN: the shard is
 * in the cursor). Returns a shard index in [0, nshards), or -1 to run on the
 * connection's own shard, ROUTE_ALL for every shard (SORT with BY/GET
 * patterns: the pattern keys may live anywhere), ROUTE_KEYS to route by
 * the key positions as if there were no route function. */
/* The keys of a call and each one's KS_* flags, for commands whose flags
 * depend on the arguments (SET ... GET, SORT ... STORE): as cmd_keys_fn,
 * with flags[i] for pos[i]. */
typedef int cmd_keyflags_fn(int argc, const char **argv, const size_t *argl, int *pos, uint16_t *flags, int max);
typedef int cmd_route_fn(int argc, const char **argv, const size_t *argl, int nshards);
enum { ROUTE_ALL = -2, ROUTE_KEYS = -3 };
/* How a multi-key command splits over shards (cmd/split.c): each shard runs
 * the command on its own keys (with their values, for step 2), and the
 * replies combine into one. */
enum { SPLIT_NONE, SPLIT_SUM /* integers added */, SPLIT_OK /* +OK */, SPLIT_ARRAY /* elements in key order */ };

/* A command whose keys are on several shards runs as a transaction of
 * hops that cmd/ plans (cmd/cross.c); returns 1 when it started one, 0 to
 * run the command under whole-shard locks instead. */
struct command;
typedef int cmd_hops_fn(struct session *s, const struct command *cmd, int argc, const char **argv, const size_t *argl,
                        int discard);

typedef struct command {
    const char *name;  /* lowercase; subcommands "config|get" */
    cmd_proc *proc;
    int arity;         /* Redis convention: -N means at least N */
    uint32_t flags;
    int first, last, step; /* key positions; last < 0 counts from the end */
    cmd_keys_fn *keys;     /* overrides first/last/step when set */
    uint16_t kflags;       /* KS_* of the one key spec first/last/step describe */
    const key_spec *specs; /* or every key spec, when they are more than that */
    int nspecs;
    cmd_keyflags_fn *keyflags; /* keys and flags by the arguments (VARIABLE_FLAGS specs) */
    cmd_route_fn *route;   /* keyless single-shard routing (see above) */
    int split;             /* SPLIT_*: runs as one part per shard */
    cmd_hops_fn *hops;     /* keys on several shards: a transaction of hops */
    const char *tips;      /* COMMAND INFO's tips, space separated (NULL: none) */
    const char *group;     /* COMMAND DOCS group: string, generic, server... */
    const char *summary;
    const char *since;
    const char *acl;       /* ACL categories, space separated, without '@' */
    struct command *subs;  /* subcommand rows (container commands) */
    int nsubs;
} command;

struct cmd_ctx {
    struct shard *sh;      /* executing shard */
    struct session *sess;  /* NULL when run remotely */
    struct tx *tx;         /* set when run under a multi-shard lock */
    const command *cmd;
    int argc;
    const char **argv;
    const size_t *argl;
    int dbid;
    int resp; /* 2 or 3 */
    buf *out;
    int serve_key;  /* serve mode of a blocked command: argv index of the ready key */
    int serve_home; /* serve mode: the command must run again at home */
    int in_exec;    /* one of EXEC's commands: never blocks, serving waits for the end */
    int blocked;    /* set by block_client: the call goes on later */
    int no_stats;   /* a part of a call counted elsewhere (a split command's part) */
    int64_t dur_ns; /* set by exec_command: how long the handler ran */
    int slow;       /* set by exec_command: slow, and run without its connection: the caller logs it */
    int unchanged;  /* set by a write handler whose call changed nothing (SETBIT of the same bit): no dirty count */
    struct db *scratch; /* every key's database (cmd/gather.c runs commands over copies) */
    int reroute;    /* set by the handler, which wrote nothing: run it again holding every shard */
    uint64_t client; /* without a session: the client's tracking word (shard/tracking.h) */
    int watch_bumped; /* set by exec_command: its keys' WATCH versions moved before the handler */
    int serve_later;  /* exec_command leaves the blocked clients it made ready to its caller */
    int handed;       /* a command another shard's connection handed off (shard/tx.h, tx_run_handed) */
};

/* The database holding key in this context (the scratch one when set). */
struct db *ctx_db(cmd_ctx *c, const char *key, size_t klen);
/* Database `dbid` of shard index s (for commands that walk every shard). */
struct db *ctx_shard_db(cmd_ctx *c, int s, int dbid);
/* Shards this context may touch: every shard under a transaction, else only
 * the executing shard. Fills ids, returns the count. */
int ctx_shards(cmd_ctx *c, int *ids);
/* The link of the live key argv[i], or NULL when it is missing; touches its
 * LRU clock. Reading lookups count a keyspace hit or miss, as Redis's read
 * lookups do (a key of another type is a hit). *dp (when dp) gets the
 * database. The link stays valid until the next call on that database. */
struct entry **ctx_lookup(cmd_ctx *c, int i, int reading, struct db **dp);
/* 1, after replying WRONGTYPE, when e is set and holds another type. */
int ctx_wrong_type(cmd_ctx *c, const struct entry *e, int type);
/* Current time in ms, stable within a command (as Redis's cached time). */
int64_t ctx_now(cmd_ctx *c);

/* Registration and lookup. */
void cmd_register(const command *rows, int n);
const command *cmd_lookup(const char *name, size_t len);
const command *cmd_lookup_sub(const command *parent, const char *name, size_t len);
void cmd_table_init(void); /* calls every family's register function */
int cmd_count(void);
/* Every command and subcommand has a number in [0, cmd_index_count()),
 * fixed after cmd_table_init: cmd_index(row) (-1 for a row that is not
 * in the table) and back. Any thread. */
int cmd_index(const command *c);
int cmd_index_count(void);
const command *cmd_by_index(int i);
void cmd_foreach(void (*fn)(const command *c, void *ud), void *ud);
/* ACL categories (command.c): a row's set (bit i: category i, in Redis's
 * order, the ones its flags imply included), and the names. */
uint32_t cmd_acl_cats(const command *c);
int cmd_acl_cat_count(void);
const char *cmd_acl_cat_name(int i);
int cmd_acl_cat_index(const char *s, size_t n); /* -1 when unknown */
/* Key positions of a parsed command; returns count (<= max). */
int cmd_key_positions(const command *cmd, int argc, const char **argv, const size_t *argl, int *pos, int max);
/* The keys of a call with each one's KS_* flags, found as Redis's
 * COMMAND GETKEYSANDFLAGS and ACL checks find them (cmd/keyspec.c): by the
 * key specs, or when they cannot say (variable flags, an unknown or
 * incomplete spec, a bad key count) by the keyflags or keys function
 * (flags 0 from the latter). Returns the count, 0 for none or invalid. */
typedef struct key_ref {
    int pos;
    uint16_t flags;
} key_ref;
typedef struct key_refs {
    int n, cap;
    key_ref *v; /* buf, or zmalloc'd when more */
    key_ref buf[16];
} key_refs;
int cmd_key_refs(const command *cmd, int argc, const char **argv, const size_t *argl, key_refs *r);
void key_refs_free(key_refs *r);
/* Does the command take keys at all (Redis's doesCommandHaveKeys)? */
int cmd_has_keys(const command *cmd);
/* The command's key specs: its own, or the one its first/last/step and
 * kflags describe (written to *one). Returns the count. */
int cmd_key_specs(const command *cmd, key_spec *one, const key_spec **specs);
/* Calls fn with each key argument of a parsed command, in order. */
void cmd_each_key(const command *cmd, int argc, const char **argv, const size_t *argl,
                  void (*fn)(void *ud, const char *key, size_t klen), void *ud);

/* ---- replies (exactly one top-level reply per command) ---- */
static inline void reply_ok(cmd_ctx *c) { buf_add(c->out, "+OK\r\n", 5); }
static inline void reply_simple(cmd_ctx *c, const char *s) { resp_simple(c->out, s); }
static inline void reply_int(cmd_ctx *c, long long v) { resp_int(c->out, v); }
static inline void reply_bulk(cmd_ctx *c, const char *s, size_t n) { resp_bulk(c->out, s, n); }
static inline void reply_bulk_ll(cmd_ctx *c, long long v) { resp_bulk_ll(c->out, v); }
static inline void reply_cstr(cmd_ctx *c, const char *s) { resp_bulk(c->out, s, strlen(s)); }
static inline void reply_null(cmd_ctx *c) { resp_null(c->out, c->resp); }
static inline void reply_null_array(cmd_ctx *c) { resp_null_array(c->out, c->resp); }
static inline void reply_array(cmd_ctx *c, long long n) { resp_array(c->out, n); }
static inline void reply_map(cmd_ctx *c, long long pairs) { resp_map(c->out, c->resp, pairs); }
static inline void reply_set(cmd_ctx *c, long long n) { resp_set(c->out, c->resp, n); }
static inline void reply_double(cmd_ctx *c, double d) { resp_double(c->out, c->resp, d); }
static inline void reply_bool(cmd_ctx *c, int v) { resp_bool(c->out, c->resp, v); }
static inline void reply_verbatim(cmd_ctx *c, const char *s, size_t n) { resp_verbatim(c->out, c->resp, s, n); }
/* Error text without the leading '-': "ERR syntax error". */
void reply_error(cmd_ctx *c, const char *msg);
void reply_errorf(cmd_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Array of unknown length: remember the position, then fill the count. */
static inline size_t reply_defer(cmd_ctx *c) { return c->out->len; }
void reply_defer_array(cmd_ctx *c, size_t at, long long n);
void reply_defer_map(cmd_ctx *c, size_t at, long long pairs);
void reply_defer_set(cmd_ctx *c, size_t at, long long n);

/* Statuses that several families share become error text here only. */
enum {
    ST_OK = 0,
    ST_WRONGTYPE = -1,
    ST_NOTINT = -2,
    ST_OVERFLOW = -3,
    ST_SYNTAX = -4,
    ST_NOTFLOAT = -5,
    ST_NOKEY = -6,
    ST_RANGE = -7,    /* index out of range */
    ST_TOOBIG = -8,   /* string exceeds maximum allowed size */
    ST_BADBIT = -9,   /* bit offset is not an integer or out of range */
    ST_DBRANGE = -10, /* DB index is out of range */
    ST_NAN = -11,     /* increment would produce NaN or Infinity */
    ST_NOTINT_TIMEOUT = -12,
};
void reply_status(cmd_ctx *c, int status);
void reply_arity(cmd_ctx *c); /* wrong number of arguments for '<cmd>' */
/* A HELP reply: an array of simple strings. */
void reply_help_lines(cmd_ctx *c, const char *const *lines, int n);

/* Argument helpers: return 1 on success, else reply the error and return 0. */
int arg_ll(cmd_ctx *c, int i, long long *v);            /* "value is not an integer or out of range" */
int arg_double(cmd_ctx *c, int i, double *v);           /* "value is not a valid float" */
int arg_ld(cmd_ctx *c, int i, long double *v);
/* The cursor of HSCAN/SSCAN/ZSCAN at argv[i] ("ERR invalid cursor"). */
int arg_cursor(cmd_ctx *c, int i, uint64_t *cur);
/* MATCH and COUNT from argv[from] on; *pat = NULL when the pattern is "*"
 * or absent. Syntax errors and COUNT < 1 reply the error and return 0. */
int arg_scan_options(cmd_ctx *c, int from, const char **pat, size_t *plen, long long *count);
/* The trailing "COUNT n" (n >= 1) of LMPOP, ZMPOP and their blocking forms,
 * from argv[from] on: sets *count when present, leaves it otherwise. Anything
 * else is a syntax error; 0 after replying the error. */
int arg_count_option(cmd_ctx *c, int from, long long *count);
static inline int arg_is(cmd_ctx *c, int i, const char *lit);
#include "lib/util.h"
static inline int arg_is(cmd_ctx *c, int i, const char *lit) {
    return i < c->argc && str_eq_ci(c->argv[i], c->argl[i], lit);
}
#endif
