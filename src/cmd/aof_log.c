/* aof_log.c - see aof_log.h. The forms are the ones redis-server 7.0.15
 * writes into its AOF (checked by running it):
 *
 *   EXPIRE k 100 [GT]          -> PEXPIREAT k <ms> [GT]     (DEL k when it expired the key)
 *   SETEX/PSETEX, SET .. EX    -> SET k v PXAT <ms>
 *   GETEX k EX..|PERSIST       -> PEXPIREAT k <ms> | DEL k | PERSIST k
 *   GETDEL k                   -> DEL k
 *   INCRBYFLOAT k x            -> SET k <result> KEEPTTL
 *   HINCRBYFLOAT k f x         -> HSET k f <result>
 *   SPOP k [n]                 -> SREM k <popped...>         (DEL k when it emptied the set)
 *   RESTORE k <ttl> v          -> RESTORE k <ms> v ABSTTL    (DEL k when already expired)
 *   BLPOP/BRPOP k.. t          -> LPOP/RPOP k
 *   BLMOVE / BRPOPLPUSH        -> LMOVE / RPOPLPUSH
 *   (B)LMPOP .. LEFT COUNT n   -> LPOP k <popped>
 *   BZPOPMIN/MAX, (B)ZMPOP     -> ZPOPMIN/ZPOPMAX k [<popped>]
 *   XADD k .. * f v            -> XADD k .. <generated id> f v
 *   MIGRATE ..                 -> DEL <the keys it moved> (written by migrate.c)
 *
 * Departure: XREADGROUP, XCLAIM and XAUTOCLAIM are logged as given (Redis
 * logs each delivery as XCLAIM .. FORCE JUSTID and the group's ID as XGROUP
 * SETID): replaying them delivers the same entries, with delivery times of
 * the replay.
 *
 * Departure: Redis logs SPOP k n as one SREM per member inside MULTI/EXEC;
 * one SREM with every member is the same change in one command.
 *
 * The outcome is read from the reply (the popped members, the new float)
 * and from the key after the command (its deadline), never recomputed. */
#include "cmd/aof_log.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "core/stream.h"
#include "persist/aof.h"
#include "shard/db.h"
#include "shard/shard.h"
#include <stdio.h>
#include <stdlib.h>

enum rule {
    R_ASIS,
    R_SKIP_ZERO, /* ":0" means nothing changed */
    R_SKIP_NIL,  /* a null or an empty array means nothing changed */
    R_EXPIRE,    /* -> PEXPIREAT k <ms> [flags] */
    R_SETEX,     /* value at argv[3] -> SET k v PXAT <ms> */
    R_SET,       /* with EX/PX/EXAT/PXAT -> SET k v PXAT <ms> */
    R_GETEX,
    R_GETDEL,
    R_RESULT,    /* the bulk reply is the new value: as k [field] <reply> [tail] */
    R_SPOP,
    R_RESTORE,
    R_KEY_POP,   /* reply [key, ...] -> as key */
    R_MOVE,      /* as argv[1..n] */
    R_MPOP,      /* numkeys at argv[n]; reply [key, [popped]] -> as|alt key <count> */
    R_XADD,      /* the ID argument (* or ms-*) -> the ID of the reply; "~" trims as below */
    R_XTRIM,     /* ":0" skips; MAXLEN|MINID ~ x -> = and what the stream holds now */
    R_OWN,       /* the handler logs what it did (MIGRATE: DEL of the keys it moved) */
};

/* A command's rule and its words: `as` (and `alt` when the direction word
 * after the keys is not `when`), n as the rule says. */
typedef struct rule_row {
    const char *name;
    enum rule rule;
    const char *as, *alt, *when;
    int n;
} rule_row;

#define ZERO(name) {name, R_SKIP_ZERO, NULL, NULL, NULL, 0}
#define NIL(name) {name, R_SKIP_NIL, NULL, NULL, NULL, 0}

/* Sorted by name (bsearch). */
static const rule_row rules[] = {
    {"blmove", R_MOVE, "LMOVE", NULL, NULL, 4},
    {"blmpop", R_MPOP, "LPOP", "RPOP", "left", 2},
    {"blpop", R_KEY_POP, "LPOP", NULL, NULL, 0},
    {"brpop", R_KEY_POP, "RPOP", NULL, NULL, 0},
    {"brpoplpush", R_MOVE, "RPOPLPUSH", NULL, NULL, 2},
    {"bzmpop", R_MPOP, "ZPOPMIN", "ZPOPMAX", "min", 2},
    {"bzpopmax", R_KEY_POP, "ZPOPMAX", NULL, NULL, 0},
    {"bzpopmin", R_KEY_POP, "ZPOPMIN", NULL, NULL, 0},
    ZERO("copy"),
    ZERO("del"),
    {"expire", R_EXPIRE, NULL, NULL, NULL, 0},
    {"expireat", R_EXPIRE, NULL, NULL, NULL, 0},
    {"getdel", R_GETDEL, NULL, NULL, NULL, 0},
    {"getex", R_GETEX, NULL, NULL, NULL, 0},
    ZERO("hdel"),
    {"hincrbyfloat", R_RESULT, "HSET", NULL, NULL, 1},
    ZERO("hsetnx"),
    {"incrbyfloat", R_RESULT, "SET", NULL, "KEEPTTL", 0},
    NIL("lmove"),
    {"lmpop", R_MPOP, "LPOP", "RPOP", "left", 1},
    NIL("lpop"),
    {"migrate", R_OWN, NULL, NULL, NULL, 0},
    ZERO("lpushx"),
    ZERO("lrem"),
    ZERO("move"),
    ZERO("msetnx"),
    ZERO("persist"),
    {"pexpire", R_EXPIRE, NULL, NULL, NULL, 0},
    {"pexpireat", R_EXPIRE, NULL, NULL, NULL, 0},
    ZERO("pfadd"),
    {"psetex", R_SETEX, NULL, NULL, NULL, 0},
    ZERO("renamenx"),
    {"restore", R_RESTORE, NULL, NULL, NULL, 0},
    NIL("rpop"),
    NIL("rpoplpush"),
    ZERO("rpushx"),
    ZERO("sadd"),
    {"set", R_SET, NULL, NULL, NULL, 0},
    {"setex", R_SETEX, NULL, NULL, NULL, 0},
    ZERO("setnx"),
    ZERO("smove"),
    {"spop", R_SPOP, NULL, NULL, NULL, 0},
    ZERO("srem"),
    ZERO("unlink"),
    ZERO("xack"),
    {"xadd", R_XADD, NULL, NULL, NULL, 0},
    ZERO("xdel"),
    NIL("xreadgroup"),
    {"xtrim", R_XTRIM, NULL, NULL, NULL, 0},
    {"zmpop", R_MPOP, "ZPOPMIN", "ZPOPMAX", "min", 1},
    NIL("zpopmax"),
    NIL("zpopmin"),
    ZERO("zrem"),
    ZERO("zremrangebylex"),
    ZERO("zremrangebyrank"),
    ZERO("zremrangebyscore"),
};

static int row_cmp(const void *k, const void *r) { return strcmp(k, ((const rule_row *)r)->name); }

static const rule_row *rule_of(const command *cmd) {
    return bsearch(cmd->name, rules, sizeof rules / sizeof rules[0], sizeof rules[0], row_cmp);
}

/* ---- reading our own reply ---- */

typedef struct reply_rd {
    const char *p;
    size_t n, i;
} reply_rd;

/* One "<type><number>\r\n" header; 0 ok. */
static int rd_head(reply_rd *r, char *type, long long *v) {
    if (r->i >= r->n) return -1;
    *type = r->p[r->i];
    const char *s = r->p + r->i + 1, *e = memchr(s, '\r', r->n - r->i - 1);
    if (!e) return -1;
    if (!str2ll(s, (size_t)(e - s), v)) *v = 0;
    r->i = (size_t)(e - r->p) + 2;
    return 0;
}

/* A bulk string; 0 ok (null or another type: -1). */
static int rd_bulk(reply_rd *r, const char **s, size_t *len) {
    char t;
    long long v;
    if (rd_head(r, &t, &v) < 0 || t != '$' || v < 0 || r->i + (size_t)v > r->n) return -1;
    *s = r->p + r->i;
    *len = (size_t)v;
    r->i += (size_t)v + 2;
    return 0;
}

/* An aggregate's element count (maps count pairs); -1 for null or not one. */
static long long rd_agg(reply_rd *r) {
    char t;
    long long v;
    if (rd_head(r, &t, &v) < 0) return -1;
    if (t == '*' || t == '~' || t == '>') return v;
    return t == '%' ? v * 2 : -1;
}

/* [key, ...]: the key of a pop reply; 0 ok. */
static int rd_pop_key(reply_rd *r, const char **key, size_t *klen) {
    return rd_agg(r) >= 2 && rd_bulk(r, key, klen) == 0 ? 0 : -1;
}

static int is_nil(const char *p, size_t n) {
    return (n >= 3 && (!memcmp(p, "$-1", 3) || !memcmp(p, "*-1", 3) || !memcmp(p, "*0\r", 3))) || p[0] == '_';
}

/* ---- building the logged command ---- */

/* The words of one logged command; up to 8 inline, more on the heap. The
 * words point at the caller's strings, or into num (formatted numbers). */
typedef struct logcmd {
    int argc, cap;
    const char **argv;
    size_t *argl;
    const char *v[8];
    size_t l[8];
    char num[2][24];
    int nnum;
} logcmd;

static void lc_init(logcmd *lc) {
    lc->argc = lc->nnum = 0;
    lc->cap = 8;
    lc->argv = lc->v;
    lc->argl = lc->l;
}

static void lc_add(logcmd *lc, const char *s, size_t n) {
    if (lc->argc == lc->cap) {
        int cap = lc->cap * 2;
        const char **v = zmalloc(sizeof(char *) * (size_t)cap);
        size_t *l = zmalloc(sizeof(size_t) * (size_t)cap);
        memcpy(v, lc->argv, sizeof(char *) * (size_t)lc->argc);
        memcpy(l, lc->argl, sizeof(size_t) * (size_t)lc->argc);
        if (lc->argv != lc->v) {
            zfree(lc->argv);
            zfree(lc->argl);
        }
        lc->argv = v;
        lc->argl = l;
        lc->cap = cap;
    }
    lc->argv[lc->argc] = s;
    lc->argl[lc->argc++] = n;
}

static void lc_word(logcmd *lc, const char *s) { lc_add(lc, s, strlen(s)); }
static void lc_arg(logcmd *lc, cmd_ctx *c, int i) { lc_add(lc, c->argv[i], c->argl[i]); }

static void lc_ll(logcmd *lc, long long v) {
    char *p = lc->num[lc->nnum++ & 1];
    lc_add(lc, p, (size_t)ll2str(p, v));
}

/* Logs the command and releases lc. */
static void lc_feed(logcmd *lc, cmd_ctx *c) {
    if (lc->argc) aof_feed(c->sh, c->dbid, lc->argc, lc->argv, lc->argl);
    if (lc->argv != lc->v) {
        zfree(lc->argv);
        zfree(lc->argl);
    }
}

/* "cmd argv[1]" (DEL k, PERSIST k). */
static void feed_key(cmd_ctx *c, const char *cmd) {
    logcmd lc;
    lc_init(&lc);
    lc_word(&lc, cmd);
    lc_arg(&lc, c, 1);
    lc_feed(&lc, c);
}

static void feed_asis(cmd_ctx *c) { aof_feed(c->sh, c->dbid, c->argc, c->argv, c->argl); }

/* The key argv[1] after the command, without expiring it. */
static entry *key_now(cmd_ctx *c) {
    db *d = ctx_db(c, c->argv[1], c->argl[1]);
    entry **l = table_link(d->t, c->argv[1], c->argl[1]);
    return l ? *l : NULL;
}

/* PEXPIREAT k <deadline of k> [argv[from..]]; DEL k when the key is gone. */
static void feed_deadline(cmd_ctx *c, int from) {
    entry *e = key_now(c);
    if (!e) feed_key(c, "DEL");
    if (!e || !entry_has_ttl(e)) return;
    logcmd lc;
    lc_init(&lc);
    lc_word(&lc, "PEXPIREAT");
    lc_arg(&lc, c, 1);
    lc_ll(&lc, entry_expire(e));
    for (int i = from; i < c->argc; i++)
        lc_arg(&lc, c, i);
    lc_feed(&lc, c);
}

/* SET k v PXAT <deadline of k>, when k now holds the string v with a
 * deadline (else the SET did not happen: NX/XX, or its reply was GET's). */
static void feed_set_pxat(cmd_ctx *c, int vi) {
    entry *e = key_now(c);
    if (!e || entry_type(e) != T_STRING || !entry_has_ttl(e)) return;
    char tmp[24];
    size_t vl;
    const char *v = entry_str(e, tmp, &vl);
    if (vl != c->argl[vi] || memcmp(v, c->argv[vi], vl)) return;
    logcmd lc;
    lc_init(&lc);
    lc_word(&lc, "SET");
    lc_arg(&lc, c, 1);
    lc_arg(&lc, c, vi);
    lc_word(&lc, "PXAT");
    lc_ll(&lc, entry_expire(e));
    lc_feed(&lc, c);
}

static int has_expire_option(cmd_ctx *c, int from) {
    for (int i = from; i + 1 < c->argc; i++)
        if (arg_is(c, i, "ex") || arg_is(c, i, "px") || arg_is(c, i, "exat") || arg_is(c, i, "pxat")) return 1;
    return 0;
}

/* A command whose new value is its bulk reply: cmd k [f] <value> [tail]. */
static void feed_result(cmd_ctx *c, reply_rd *r, const char *cmd, int with_field, const char *tail) {
    const char *v;
    size_t vl;
    if (rd_bulk(r, &v, &vl) < 0) return;
    logcmd lc;
    lc_init(&lc);
    lc_word(&lc, cmd);
    lc_arg(&lc, c, 1);
    if (with_field) lc_arg(&lc, c, 2);
    lc_add(&lc, v, vl);
    if (tail) lc_word(&lc, tail);
    lc_feed(&lc, c);
}

/* SPOP: SREM k <members of the reply>, or DEL k when the set is gone. */
static void feed_spop(cmd_ctx *c, reply_rd *r) {
    if (!key_now(c)) {
        feed_key(c, "DEL");
        return;
    }
    long long n = c->argc > 2 ? rd_agg(r) : 1;
    logcmd lc;
    lc_init(&lc);
    lc_word(&lc, "SREM");
    lc_arg(&lc, c, 1);
    const char *m;
    size_t ml;
    for (long long k = 0; k < n && rd_bulk(r, &m, &ml) == 0; k++)
        lc_add(&lc, m, ml);
    if (lc.argc == 2) lc.argc = 0; /* nothing popped */
    lc_feed(&lc, c);
}

/* RESTORE with a relative ttl: RESTORE k <deadline> v [options] ABSTTL. */
static void feed_restore(cmd_ctx *c) {
    int abs = 0;
    for (int i = 4; i < c->argc; i++)
        abs |= arg_is(c, i, "absttl");
    if (abs || (c->argl[2] == 1 && c->argv[2][0] == '0')) {
        feed_asis(c);
        return;
    }
    entry *e = key_now(c);
    if (!e) feed_key(c, "DEL");
    if (!e || !entry_has_ttl(e)) return;
    logcmd lc;
    lc_init(&lc);
    for (int i = 0; i < c->argc; i++) {
        if (i == 2)
            lc_ll(&lc, entry_expire(e));
        else
            lc_arg(&lc, c, i);
    }
    lc_word(&lc, "ABSTTL");
    lc_feed(&lc, c);
}

/* A served pop of key k: cmd k [count] (count < 0: none). */
static void feed_pop(cmd_ctx *c, const char *cmd, const char *key, size_t klen, long long count) {
    logcmd lc;
    lc_init(&lc);
    lc_word(&lc, cmd);
    lc_add(&lc, key, klen);
    if (count >= 0) lc_ll(&lc, count);
    lc_feed(&lc, c);
}

/* LMPOP/ZMPOP and their blocking forms: numkeys at argv[nk], the
 * direction word after the keys; the reply is [key, [popped...]]. */
static void feed_mpop(cmd_ctx *c, reply_rd *r, int nk, const char *first, const char *second, const char *w) {
    long long n;
    const char *key;
    size_t klen;
    if (!str2ll(c->argv[nk], c->argl[nk], &n) || nk + 1 + n >= c->argc || rd_pop_key(r, &key, &klen) < 0) return;
    long long popped = rd_agg(r);
    if (popped <= 0) return;
    feed_pop(c, arg_is(c, nk + 1 + (int)n, w) ? first : second, key, klen, popped);
}

static void feed_key_pop(cmd_ctx *c, reply_rd *r, const char *cmd) {
    const char *key;
    size_t klen;
    if (rd_pop_key(r, &key, &klen) == 0) feed_pop(c, cmd, key, klen, -1);
}

/* BLMOVE src dst from to -> LMOVE src dst from to; BRPOPLPUSH -> RPOPLPUSH. */
static void feed_move(cmd_ctx *c, const char *cmd, int nargs) {
    logcmd lc;
    lc_init(&lc);
    lc_word(&lc, cmd);
    for (int i = 1; i <= nargs; i++)
        lc_arg(&lc, c, i);
    lc_feed(&lc, c);
}

/* The trimming options of XADD / XTRIM from argv[2]: *tilde gets the index
 * of a "~" (else -1), *minid whether it is MINID; returns the index of the
 * first argument past them (XADD's ID). */
static int trim_options(cmd_ctx *c, int *tilde, int *minid) {
    *tilde = -1;
    *minid = 0;
    int i = 2;
    for (; i < c->argc; i++) {
        if (arg_is(c, i, "nomkstream")) continue;
        if (arg_is(c, i, "maxlen") || arg_is(c, i, "minid")) {
            *minid = arg_is(c, i, "minid");
            if (i + 2 < c->argc && c->argl[i + 1] == 1 && (c->argv[i + 1][0] == '~' || c->argv[i + 1][0] == '=')) {
                if (c->argv[i + 1][0] == '~') *tilde = i + 1;
                i++;
            }
            i++;
            continue;
        }
        if (arg_is(c, i, "limit")) {
            i++;
            continue;
        }
        break;
    }
    return i;
}

/* A trim given with "~" is logged as "=" and the stream's length (MAXLEN)
 * or first ID (MINID) after the command, as Redis rewrites it: loading the
 * log then trims what the command trimmed, whatever the node sizes. */
static void trim_exact(cmd_ctx *c, int minid, char *out, size_t *n) {
    entry **l = ctx_lookup(c, 1, 0, NULL);
    const stream *s = l ? entry_obj(*l) : NULL;
    if (!minid) {
        *n = (size_t)snprintf(out, 64, "%llu", s ? (unsigned long long)s->length : 0ull);
        return;
    }
    sid first = {UINT64_MAX, UINT64_MAX}; /* none left: Redis's edge of an empty stream */
    if (s) stream_first(s, &first);
    *n = (size_t)sid_fmt(out, &first);
}

/* XADD: the ID argument (found as XADD's parser finds it) becomes the one
 * generated, the bulk reply; XTRIM as it came. Both with trim_exact. */
static void feed_xadd_xtrim(cmd_ctx *c, reply_rd *r, int xadd) {
    const char *id = NULL;
    size_t idl = 0;
    if (xadd && rd_bulk(r, &id, &idl) < 0) return;
    int tilde, minid;
    int idpos = trim_options(c, &tilde, &minid);
    char thr[64];
    size_t thrl = 0;
    if (tilde >= 0) trim_exact(c, minid, thr, &thrl);
    logcmd lc;
    lc_init(&lc);
    for (int k = 0; k < c->argc; k++) {
        if (xadd && k == idpos) lc_add(&lc, id, idl);
        else if (tilde >= 0 && k == tilde) lc_word(&lc, "=");
        else if (tilde >= 0 && k == tilde + 1) lc_add(&lc, thr, thrl);
        else lc_arg(&lc, c, k);
    }
    lc_feed(&lc, c);
}

static void feed_getex(cmd_ctx *c) {
    for (int i = 2; i < c->argc; i++) {
        if (arg_is(c, i, "persist")) {
            feed_key(c, "PERSIST");
            return;
        }
    }
    if (has_expire_option(c, 2)) feed_deadline(c, c->argc);
}

void aof_log(cmd_ctx *c, size_t at) {
    if (!aof_active() || !(c->cmd->flags & CMD_WRITE) || c->out->len <= at) return;
    const char *rp = c->out->p + at;
    size_t rn = c->out->len - at;
    const rule_row *row = rule_of(c->cmd);
    if (rp[0] == '-' || (row && row->rule == R_OWN)) return;
    if (!row) {
        feed_asis(c);
        return;
    }
    if ((row->rule == R_SKIP_ZERO || row->rule == R_XTRIM) && rn >= 3 && !memcmp(rp, ":0\r", 3)) return;
    if (is_nil(rp, rn) && row->rule != R_SKIP_ZERO && row->rule != R_SET) return;
    reply_rd r = {rp, rn, 0};
    switch (row->rule) {
    case R_EXPIRE:
        if (rp[0] == ':' && rp[1] == '1') feed_deadline(c, 3);
        return;
    case R_SETEX: feed_set_pxat(c, 3); return;
    case R_SET:
        if (has_expire_option(c, 3)) feed_set_pxat(c, 2);
        else feed_asis(c);
        return;
    case R_GETEX: feed_getex(c); return;
    case R_GETDEL: feed_key(c, "DEL"); return;
    case R_RESULT: feed_result(c, &r, row->as, row->n, row->when); return;
    case R_SPOP: feed_spop(c, &r); return;
    case R_RESTORE: feed_restore(c); return;
    case R_KEY_POP: feed_key_pop(c, &r, row->as); return;
    case R_MOVE: feed_move(c, row->as, row->n); return;
    case R_MPOP: feed_mpop(c, &r, row->n, row->as, row->alt, row->when); return;
    case R_XADD: feed_xadd_xtrim(c, &r, 1); return;
    case R_XTRIM: feed_xadd_xtrim(c, &r, 0); return;
    default: feed_asis(c); return;
    }
}
