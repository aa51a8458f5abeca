/* string.c - the string commands: GET SET and their variants (SETNX SETEX
 * PSETEX GETSET GETDEL GETEX), MGET MSET MSETNX, the counters (INCR DECR
 * INCRBY DECRBY INCRBYFLOAT), byte ranges (APPEND STRLEN GETRANGE SUBSTR
 * SETRANGE) and LCS.
 *
 * Values live inline in the keyspace entry (entry.h), and the entry kind is
 * what OBJECT ENCODING reports, so each command picks the kind Redis's
 * object would have: SET (and APPEND on a new key) store a canonical integer
 * as EK_INT, the integer counters keep EK_INT, INCRBYFLOAT stores its text,
 * and APPEND/SETRANGE on an existing key leave EK_RAW. Rewriting a value
 * keeps the key's expire, except SET without KEEPTTL, SETEX, PSETEX and
 * GETSET, which replace it. Lengths are bounded by proto-max-bulk-len before
 * anything is allocated. */
#include "cmd/cross.h"
#include "cmd/string.h"
#include "cmd/cmd.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "server/config.h"
#include "shard/shard.h"
#include "cmd/notify.h"
#include <limits.h>
#include <math.h>

/* ---- helpers shared by the handlers ---- */

void string_set(db *d, const char *key, size_t klen, const char *val, size_t vlen, int64_t ttl, int keep_ttl,
                int64_t now) {
    entry **link = db_find_link(d, key, klen, now);
    if (!link) {
        db_add(d, entry_new_str(key, klen, val, vlen, keep_ttl ? -1 : ttl, 1));
        return;
    }
    entry *old = *link;
    if (keep_ttl) ttl = entry_expire(old);
    long long iv;
    int is_int = vlen <= 20 && str2ll(val, vlen, &iv);
    int kind = entry_kind(old);
    if (entry_type(old) == T_STRING && entry_has_ttl(old) == (ttl >= 0)) {
        if (is_int && kind == EK_INT) {
            entry_set_int(old, iv);
            if (ttl >= 0) entry_put_expire(old, ttl);
            return;
        }
        if (!is_int && (kind == EK_EMB || kind == EK_RAW)) {
            uint8_t *v = entry_valp(old);
            uint64_t l;
            size_t h = varint_get(v, &l);
            if (l == vlen && (kind == EK_EMB) == (vlen <= EMBSTR_MAX)) {
                memcpy(v + h, val, vlen);
                if (ttl >= 0) entry_put_expire(old, ttl);
                return;
            }
        }
    }
    db_replace(d, link, entry_new_str(key, klen, val, vlen, ttl, 1), 0);
}

void string_replace_raw(db *d, entry **link, const char *val, size_t vlen) {
    size_t kl;
    const uint8_t *k = entry_keyp(*link, &kl);
    entry *n = entry_new_raw((const char *)k, kl, val, vlen, entry_expire(*link));
    db_replace(d, link, n, 0);
}

/* See ctx_lookup (cmd.h). */
static entry **lookup(cmd_ctx *c, int i, int reading, db **dp) { return ctx_lookup(c, i, reading, dp); }

/* 1, after replying WRONGTYPE, when the key at l holds another type. */
static int not_string(cmd_ctx *c, entry **l) { return ctx_wrong_type(c, l ? *l : NULL, T_STRING); }

static void reply_entry_str(cmd_ctx *c, const entry *e) {
    char tmp[24];
    size_t n;
    const char *p = entry_str(e, tmp, &n);
    reply_bulk(c, p, n);
}

static size_t value_len(const entry *e) {
    char tmp[24];
    size_t n;
    entry_str(e, tmp, &n);
    return n;
}

/* 1 when a string of off + n bytes would exceed proto-max-bulk-len. */
static int too_long(unsigned long long off, unsigned long long n) {
    unsigned long long max = (unsigned long long)cfg_get(proto_max_bulk_len);
    return off > max || n > max - off;
}

/* ---- GET and its variants ---- */

/* GET key */
static void get_cmd(cmd_ctx *c) {
    entry **l = lookup(c, 1, 1, NULL);
    if (not_string(c, l)) return;
    if (l)
        reply_entry_str(c, *l);
    else
        reply_null(c);
}

/* GETDEL key */
static void getdel_cmd(cmd_ctx *c) {
    db *d;
    entry **l = lookup(c, 1, 1, &d);
    if (not_string(c, l)) return;
    if (!l) {
        reply_null(c);
        return;
    }
    reply_entry_str(c, *l);
    db_delete_link(d, l);
    ctx_notify(c, NOTIFY_GENERIC, "del", 1);
}

/* GETSET key value */
static void getset_cmd(cmd_ctx *c) {
    db *d;
    entry **l = lookup(c, 1, 1, &d);
    if (not_string(c, l)) return;
    if (l)
        reply_entry_str(c, *l);
    else
        reply_null(c);
    string_set(d, c->argv[1], c->argl[1], c->argv[2], c->argl[2], -1, 0, ctx_now(c));
    ctx_notify(c, NOTIFY_STRING, "set", 1);
}

/* STRLEN key */
static void strlen_cmd(cmd_ctx *c) {
    entry **l = lookup(c, 1, 1, NULL);
    if (not_string(c, l)) return;
    reply_int(c, l ? (long long)value_len(*l) : 0);
}

/* Which of EX, PX, EXAT, PXAT argv[i] is (0..3), or -1. */
static int expire_opt(cmd_ctx *c, int i) {
    static const char *const names[] = {"ex", "px", "exat", "pxat"};
    for (int k = 0; k < 4; k++)
        if (arg_is(c, i, names[k])) return k;
    return -1;
}

/* May argv[i] be the expire option at this point? An option may repeat
 * (the last time wins, as in Redis) but not mix with another one. Sets
 * *kind and *at (the time's index) when it is one. */
static int take_expire_opt(cmd_ctx *c, int i, int *kind, int *at) {
    int k = expire_opt(c, i);
    if (k < 0 || i + 1 >= c->argc || (*kind >= 0 && *kind != k)) return 0;
    *kind = k;
    *at = i + 1;
    return 1;
}

/* Parses the time at argv[i] of expire option kind (expire_opt) into an
 * absolute ms deadline; replies the error and returns 0 on a bad value. */
static int parse_expire(cmd_ctx *c, int i, int kind, int64_t *out) {
    int unit_sec = (kind & 1) == 0, absolute = kind >= 2;
    long long v;
    if (!arg_ll(c, i, &v)) return 0;
    if (v <= 0 || (unit_sec && v > LLONG_MAX / 1000)) {
        reply_errorf(c, "ERR invalid expire time in '%s' command", c->cmd->name);
        return 0;
    }
    if (unit_sec) v *= 1000;
    if (!absolute) {
        if (v > LLONG_MAX - ctx_now(c)) {
            reply_errorf(c, "ERR invalid expire time in '%s' command", c->cmd->name);
            return 0;
        }
        v += ctx_now(c);
    }
    *out = v;
    return 1;
}

/* GETEX key [EX s|PX ms|EXAT ts|PXAT ms|PERSIST] */
static void getex_cmd(cmd_ctx *c) {
    int kind = -1, exp_at = 0, persist = 0;
    for (int i = 2; i < c->argc; i++) {
        if (!persist && take_expire_opt(c, i, &kind, &exp_at))
            i++;
        else if (kind < 0 && arg_is(c, i, "persist"))
            persist = 1;
        else {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    db *d;
    entry **l = lookup(c, 1, 1, &d);
    if (not_string(c, l)) return;
    if (!l) {
        reply_null(c);
        return;
    }
    int64_t when = -1;
    if (exp_at && !parse_expire(c, exp_at, kind, &when)) return;
    reply_entry_str(c, *l);
    if (exp_at && kind >= 2 && when <= ctx_now(c) && !aof_loading) { /* AOF: replay keeps it */
        db_delete_link(d, l);
        ctx_notify(c, NOTIFY_GENERIC, "del", 1);
    } else if (exp_at) {
        db_set_expire(d, l, when);
        ctx_notify(c, NOTIFY_GENERIC, "expire", 1);
    } else if (persist) {
        int had = entry_has_ttl(*l);
        db_set_expire(d, l, -1);
        if (had) ctx_notify(c, NOTIFY_GENERIC, "persist", 1);
    }
}

/* ---- SET and its variants ---- */

enum { SET_NX = 1, SET_XX = 2, SET_GET = 4, SET_KEEPTTL = 8 };

/* SET's key is read too when a GET is among its options (Redis looks at
 * every argument after the value, as its setGetKeys). */
static int set_keyflags(int argc, const char **argv, const size_t *argl, int *pos, uint16_t *flags, int max) {
    if (argc < 2 || max < 1) return 0;
    pos[0] = 1;
    flags[0] = KS_OW | KS_UPDATE;
    for (int i = 3; i < argc; i++)
        if (str_eq_ci(argv[i], argl[i], "get")) flags[0] = KS_RW | KS_ACCESS | KS_UPDATE;
    return 1;
}

/* SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms|KEEPTTL] */
static void set_cmd(cmd_ctx *c) {
    int flags = 0, kind = -1, exp_at = 0;
    int64_t when = -1;
    for (int i = 3; i < c->argc; i++) {
        if (arg_is(c, i, "nx") && !(flags & SET_XX))
            flags |= SET_NX;
        else if (arg_is(c, i, "xx") && !(flags & SET_NX))
            flags |= SET_XX;
        else if (arg_is(c, i, "get"))
            flags |= SET_GET;
        else if (arg_is(c, i, "keepttl") && kind < 0)
            flags |= SET_KEEPTTL;
        else if (!(flags & SET_KEEPTTL) && take_expire_opt(c, i, &kind, &exp_at))
            i++;
        else {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    if (exp_at && !parse_expire(c, exp_at, kind, &when)) return;
    db *d;
    entry **l = lookup(c, 1, (flags & SET_GET) != 0, &d);
    if ((flags & SET_GET) && not_string(c, l)) return;
    int skip = ((flags & SET_NX) && l) || ((flags & SET_XX) && !l);
    if (flags & SET_GET) {
        if (l)
            reply_entry_str(c, *l);
        else
            reply_null(c);
    }
    if (skip) {
        if (!(flags & SET_GET)) reply_null(c);
        return;
    }
    string_set(d, c->argv[1], c->argl[1], c->argv[2], c->argl[2], when, (flags & SET_KEEPTTL) != 0, ctx_now(c));
    if (!(flags & SET_GET)) reply_ok(c);
    ctx_notify(c, NOTIFY_STRING, "set", 1);
    if (exp_at) ctx_notify(c, NOTIFY_GENERIC, "expire", 1);
}

/* SETNX key value */
static void setnx_cmd(cmd_ctx *c) {
    db *d;
    if (lookup(c, 1, 0, &d)) {
        reply_int(c, 0);
        return;
    }
    string_set(d, c->argv[1], c->argl[1], c->argv[2], c->argl[2], -1, 0, ctx_now(c));
    reply_int(c, 1);
    ctx_notify(c, NOTIFY_STRING, "set", 1);
}

/* SETEX key seconds value, PSETEX key milliseconds value */
static void setex_generic(cmd_ctx *c, int kind) {
    int64_t when;
    if (!parse_expire(c, 2, kind, &when)) return;
    db *d = ctx_db(c, c->argv[1], c->argl[1]);
    string_set(d, c->argv[1], c->argl[1], c->argv[3], c->argl[3], when, 0, ctx_now(c));
    reply_ok(c);
    ctx_notify(c, NOTIFY_STRING, "set", 1);
    ctx_notify(c, NOTIFY_GENERIC, "expire", 1);
}
static void setex_cmd(cmd_ctx *c) { setex_generic(c, 0); }  /* as EX */
static void psetex_cmd(cmd_ctx *c) { setex_generic(c, 1); } /* as PX */

/* MGET key [key ...] */
static void mget_cmd(cmd_ctx *c) {
    reply_array(c, c->argc - 1);
    for (int i = 1; i < c->argc; i++) {
        entry **l = lookup(c, i, 1, NULL);
        if (l && entry_type(*l) == T_STRING)
            reply_entry_str(c, *l);
        else
            reply_null(c);
    }
}

/* MSET key value [key value ...] */
static void mset_cmd(cmd_ctx *c) {
    if (c->argc % 2 == 0) {
        reply_arity(c);
        return;
    }
    for (int i = 1; i < c->argc; i += 2) {
        db *d = ctx_db(c, c->argv[i], c->argl[i]);
        string_set(d, c->argv[i], c->argl[i], c->argv[i + 1], c->argl[i + 1], -1, 0, ctx_now(c));
        ctx_notify(c, NOTIFY_STRING, "set", i);
    }
    reply_ok(c);
}

/* MSETNX key value [key value ...] */
static void msetnx_cmd(cmd_ctx *c) {
    if (c->argc % 2 == 0) {
        reply_arity(c);
        return;
    }
    for (int i = 1; i < c->argc; i += 2)
        if (lookup(c, i, 0, NULL)) {
            reply_int(c, 0);
            return;
        }
    for (int i = 1; i < c->argc; i += 2) {
        db *d = ctx_db(c, c->argv[i], c->argl[i]);
        string_set(d, c->argv[i], c->argl[i], c->argv[i + 1], c->argl[i + 1], -1, 0, ctx_now(c));
        ctx_notify(c, NOTIFY_STRING, "set", i);
    }
    reply_int(c, 1);
}

/* ---- counters ---- */

/* The value of a string entry as an integer; 0 when it is not one. */
static int value_ll(const entry *e, long long *v) {
    if (entry_kind(e) == EK_INT) {
        *v = entry_int(e);
        return 1;
    }
    char tmp[24];
    size_t n;
    const char *s = entry_str(e, tmp, &n);
    return str2ll(s, n, v);
}

/* Adds by to the integer at argv[1] (a missing key counts as 0) and replies
 * the sum. The value stays, or becomes, EK_INT; the expire is kept. */
static void incr_generic(cmd_ctx *c, long long by) {
    db *d;
    entry **l = lookup(c, 1, 0, &d);
    if (not_string(c, l)) return;
    long long v = 0;
    if (l && !value_ll(*l, &v)) {
        reply_status(c, ST_NOTINT);
        return;
    }
    if ((by > 0 && v > LLONG_MAX - by) || (by < 0 && v < LLONG_MIN - by)) {
        reply_status(c, ST_OVERFLOW);
        return;
    }
    v += by;
    if (!l)
        db_add(d, entry_new_int(c->argv[1], c->argl[1], v, -1));
    else if (entry_kind(*l) == EK_INT)
        entry_set_int(*l, v);
    else
        db_replace(d, l, entry_new_int(c->argv[1], c->argl[1], v, entry_expire(*l)), 0);
    reply_int(c, v);
    ctx_notify(c, NOTIFY_STRING, "incrby", 1);
}

/* INCR key */
static void incr_cmd(cmd_ctx *c) { incr_generic(c, 1); }
/* DECR key */
static void decr_cmd(cmd_ctx *c) { incr_generic(c, -1); }

/* INCRBY key increment */
static void incrby_cmd(cmd_ctx *c) {
    long long by;
    if (arg_ll(c, 2, &by)) incr_generic(c, by);
}

/* DECRBY key decrement */
static void decrby_cmd(cmd_ctx *c) {
    long long by;
    if (!arg_ll(c, 2, &by)) return;
    if (by == LLONG_MIN) { /* -by does not exist */
        reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, -by);
}

/* The value of a string entry as a long double; 0 when it is not one. */
static int value_ld(const entry *e, long double *v) {
    if (entry_kind(e) == EK_INT) {
        *v = (long double)entry_int(e);
        return 1;
    }
    char tmp[24];
    size_t n;
    const char *s = entry_str(e, tmp, &n);
    return str2ld(s, n, v);
}

/* INCRBYFLOAT key increment */
static void incrbyfloat_cmd(cmd_ctx *c) {
    db *d;
    entry **l = lookup(c, 1, 0, &d);
    if (not_string(c, l)) return;
    long double v = 0, by;
    if (l && !value_ld(*l, &v)) {
        reply_status(c, ST_NOTFLOAT);
        return;
    }
    if (!arg_ld(c, 2, &by)) return;
    v += by;
    if (isnan(v) || isinf(v)) {
        reply_status(c, ST_NAN);
        return;
    }
    char text[5120]; /* Redis's MAX_LONG_DOUBLE_CHARS */
    size_t n = (size_t)ld2str(text, sizeof text, v);
    /* Stored as text (embstr or raw), never as an integer, as Redis does. */
    entry *e = entry_new_str(c->argv[1], c->argl[1], text, n, l ? entry_expire(*l) : -1, 0);
    if (l)
        db_replace(d, l, e, 0);
    else
        db_add(d, e);
    reply_bulk(c, text, n);
    ctx_notify(c, NOTIFY_STRING, "incrbyfloat", 1);
}

/* ---- byte ranges ---- */

/* A new EK_RAW entry for key whose value is old (olen bytes) with src (n
 * bytes) written at offset off, zeros filling any gap between the two.
 * entry.c has no constructor for a value it does not copy, so this grows an
 * empty raw entry while it is still unlinked: the value is the last field of
 * the block (entry.h), so only its length varint and bytes change. One copy
 * of the old value, no transient buffer. */
static entry *spliced_entry(const char *key, size_t klen, const char *old, size_t olen, size_t off, const char *src,
                            size_t n, int64_t ttl) {
    size_t len = off + n > olen ? off + n : olen;
    entry *e = entry_new_raw(key, klen, "", 0, ttl);
    size_t at = (size_t)(entry_valp(e) - (uint8_t *)e);
    e = zrealloc(e, at + varint_len(len) + len);
    uint8_t *v = (uint8_t *)e + at;
    v += varint_put(v, len);
    memcpy(v, old, olen);
    if (off > olen) memset(v + olen, 0, off - olen);
    memcpy(v + off, src, n);
    return e;
}

/* Writes src (n bytes) at offset off of the string at l (bounds already
 * checked); the value becomes EK_RAW and keeps its expire. A raw value that
 * does not grow is changed in place. */
static void string_splice(cmd_ctx *c, db *d, entry **l, size_t off, const char *src, size_t n) {
    entry *e = *l;
    char tmp[24];
    size_t olen;
    const char *old = entry_str(e, tmp, &olen);
    if (entry_kind(e) == EK_RAW && off + n <= olen) {
        uint8_t *v = entry_valp(e);
        uint64_t vl;
        v += varint_get(v, &vl);
        memcpy(v + off, src, n);
        return;
    }
    entry *ne = spliced_entry(c->argv[1], c->argl[1], old, olen, off, src, n, entry_expire(e));
    db_replace(d, l, ne, 0);
}

/* APPEND key value */
static void append_cmd(cmd_ctx *c) {
    db *d;
    entry **l = lookup(c, 1, 0, &d);
    if (not_string(c, l)) return;
    const char *val = c->argv[2];
    size_t n = c->argl[2];
    if (!l) { /* a new key is encoded as SET would (int, embstr or raw) */
        db_add(d, entry_new_str(c->argv[1], c->argl[1], val, n, -1, 1));
        reply_int(c, (long long)n);
        ctx_notify(c, NOTIFY_STRING, "append", 1);
        return;
    }
    size_t olen = value_len(*l);
    if (too_long(olen, n)) {
        reply_status(c, ST_TOOBIG);
        return;
    }
    string_splice(c, d, l, olen, val, n);
    reply_int(c, (long long)(olen + n));
    ctx_notify(c, NOTIFY_STRING, "append", 1);
}

/* SETRANGE key offset value */
static void setrange_cmd(cmd_ctx *c) {
    long long off;
    if (!arg_ll(c, 2, &off)) return;
    if (off < 0) {
        reply_error(c, "ERR offset is out of range");
        return;
    }
    db *d;
    entry **l = lookup(c, 1, 0, &d);
    if (not_string(c, l)) return;
    const char *val = c->argv[3];
    size_t n = c->argl[3];
    size_t olen = l ? value_len(*l) : 0;
    if (n == 0) { /* nothing to write: no key is created, no size check */
        reply_int(c, (long long)olen);
        return;
    }
    if (too_long((unsigned long long)off, n)) {
        reply_status(c, ST_TOOBIG);
        return;
    }
    if (l)
        string_splice(c, d, l, (size_t)off, val, n);
    else
        db_add(d, spliced_entry(c->argv[1], c->argl[1], "", 0, (size_t)off, val, n, -1));
    size_t end = (size_t)off + n;
    reply_int(c, (long long)(end > olen ? end : olen));
    ctx_notify(c, NOTIFY_STRING, "setrange", 1);
}

/* GETRANGE key start end, SUBSTR key start end */
static void getrange_cmd(cmd_ctx *c) {
    long long start, end;
    if (!arg_ll(c, 2, &start) || !arg_ll(c, 3, &end)) return;
    entry **l = lookup(c, 1, 1, NULL);
    if (not_string(c, l)) return;
    char tmp[24];
    size_t n = 0;
    const char *s = l ? entry_str(*l, tmp, &n) : "";
    long long len = (long long)n;
    /* Negative indexes count from the end, then clamp to [0, len-1]; two
     * negative indexes in the wrong order select nothing even when both
     * clamp to 0. */
    if (start < 0 && end < 0 && start > end) {
        reply_bulk(c, "", 0);
        return;
    }
    if (start < 0) start = start < -len ? 0 : start + len;
    if (end < 0) end = end < -len ? 0 : end + len;
    if (end >= len) end = len - 1;
    if (len == 0 || start > end)
        reply_bulk(c, "", 0);
    else
        reply_bulk(c, s + start, (size_t)(end - start + 1));
}

/* ---- LCS ---- */

typedef struct lcs_opts {
    int len, idx, withlen;
    long long minlen;
} lcs_opts;

/* The LCS dynamic-programming table: cell(i, j) is the length of the LCS
 * of the first i bytes of a and the first j bytes of b. */
typedef struct lcs_table {
    const char *a, *b;
    size_t alen, blen;
    uint32_t *cell; /* (alen + 1) rows of (blen + 1) */
} lcs_table;

static inline uint32_t lcs_cell(const lcs_table *t, size_t i, size_t j) { return t->cell[i * (t->blen + 1) + j]; }

static void lcs_fill(lcs_table *t) {
    size_t w = t->blen + 1;
    for (size_t i = 0; i <= t->alen; i++)
        for (size_t j = 0; j <= t->blen; j++) {
            uint32_t v = 0;
            if (i > 0 && j > 0) {
                if (t->a[i - 1] == t->b[j - 1])
                    v = t->cell[(i - 1) * w + j - 1] + 1;
                else {
                    uint32_t up = t->cell[(i - 1) * w + j], left = t->cell[i * w + j - 1];
                    v = up > left ? up : left;
                }
            }
            t->cell[i * w + j] = v;
        }
}

/* One run of contiguous matches, replied for IDX. */
static void lcs_reply_run(cmd_ctx *c, const lcs_opts *o, size_t a0, size_t a1, size_t b0, size_t b1) {
    reply_array(c, 2 + o->withlen);
    reply_array(c, 2);
    reply_int(c, (long long)a0);
    reply_int(c, (long long)a1);
    reply_array(c, 2);
    reply_int(c, (long long)b0);
    reply_int(c, (long long)b1);
    if (o->withlen) reply_int(c, (long long)(a1 - a0 + 1));
}

/* Walks the table back from its last cell along the path Redis takes (on
 * equal neighbours it steps back in b). Writes the common subsequence into
 * out when out is set; when o->idx is set, replies every run of contiguous
 * matches (from the end of the strings) that is at least o->minlen long and
 * returns how many it replied. */
static long long lcs_walk(cmd_ctx *c, const lcs_table *t, const lcs_opts *o, char *out) {
    size_t i = t->alen, j = t->blen, k = lcs_cell(t, i, j);
    size_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
    int open = 0;
    long long runs = 0;
    while (i > 0 && j > 0) {
        int close;
        if (t->a[i - 1] == t->b[j - 1]) {
            if (out) out[--k] = t->a[i - 1];
            if (!open) {
                open = 1;
                a1 = i - 1;
                b1 = j - 1;
            }
            a0 = --i;
            b0 = --j;
            close = i == 0 || j == 0;
        } else {
            if (lcs_cell(t, i - 1, j) > lcs_cell(t, i, j - 1))
                i--;
            else
                j--;
            close = open;
        }
        if (!close) continue;
        open = 0;
        if (o->idx && (o->minlen == 0 || (long long)(a1 - a0 + 1) >= o->minlen)) {
            lcs_reply_run(c, o, a0, a1, b0, b1);
            runs++;
        }
    }
    return runs;
}

/* Parses LCS's options; replies the error and returns 0 on a bad one. */
static int lcs_parse(cmd_ctx *c, lcs_opts *o) {
    memset(o, 0, sizeof *o);
    for (int i = 3; i < c->argc; i++) {
        if (arg_is(c, i, "idx"))
            o->idx = 1;
        else if (arg_is(c, i, "len"))
            o->len = 1;
        else if (arg_is(c, i, "withmatchlen"))
            o->withlen = 1;
        else if (arg_is(c, i, "minmatchlen") && i + 1 < c->argc) {
            if (!arg_ll(c, ++i, &o->minlen)) return 0;
            if (o->minlen < 0) o->minlen = 0;
        } else {
            reply_status(c, ST_SYNTAX);
            return 0;
        }
    }
    if (o->idx && o->len) {
        reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return 0;
    }
    return 1;
}

/* Allocates the table, refusing (with Redis's errors) one whose bytes
 * exceed proto-max-bulk-len. Returns 0 after replying the error. */
static int lcs_alloc(cmd_ctx *c, lcs_table *t) {
    if (t->alen >= UINT32_MAX - 1 || t->blen >= UINT32_MAX - 1) {
        reply_error(c, "ERR String too long for LCS");
        return 0;
    }
    unsigned long long cells = (unsigned long long)(t->alen + 1) * (t->blen + 1);
    if (cells > SIZE_MAX / sizeof(uint32_t)) {
        reply_error(c, "ERR Insufficient memory, failed allocating transient memory for LCS");
        return 0;
    }
    if (cells * sizeof(uint32_t) > (unsigned long long)cfg_get(proto_max_bulk_len)) {
        reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        return 0;
    }
    t->cell = zmalloc(cells * sizeof(uint32_t));
    return 1;
}

/* LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] */
static void lcs_cmd(cmd_ctx *c) {
    entry **la = lookup(c, 1, 1, NULL);
    entry *ea = la ? *la : NULL; /* la is stale after the next lookup */
    entry **lb = lookup(c, 2, 1, NULL);
    entry *eb = lb ? *lb : NULL;
    if ((ea && entry_type(ea) != T_STRING) || (eb && entry_type(eb) != T_STRING)) {
        reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    lcs_opts o;
    if (!lcs_parse(c, &o)) return;
    char ta[24], tb[24];
    lcs_table t = {.a = "", .b = ""};
    if (ea) t.a = entry_str(ea, ta, &t.alen);
    if (eb) t.b = entry_str(eb, tb, &t.blen);
    if (!lcs_alloc(c, &t)) return;
    lcs_fill(&t);
    uint32_t total = lcs_cell(&t, t.alen, t.blen);
    if (o.len) {
        reply_int(c, total);
    } else if (o.idx) {
        reply_map(c, 2);
        reply_cstr(c, "matches");
        size_t at = reply_defer(c);
        long long runs = lcs_walk(c, &t, &o, NULL);
        reply_defer_array(c, at, runs);
        reply_cstr(c, "len");
        reply_int(c, total);
    } else {
        char *s = zmalloc(total + 1);
        lcs_walk(c, &t, &o, s);
        reply_bulk(c, s, total);
        zfree(s);
    }
    zfree(t.cell);
}

/* ---- command table ---- */

#define RW (CMD_WRITE | CMD_DENYOOM)
/* A row for a command whose only key is argv[1]. */
#define ROW1(n, p, ar, fl, sn, ac, su, ...)                                                                            \
    {                                                                                                                  \
        .name = n, .proc = p, .arity = ar, .flags = fl, .first = 1, .last = 1, .step = 1, .group = "string",           \
        .since = sn, .acl = ac, .summary = su, __VA_ARGS__                                                             \
    }
static const command rows[] = {
    ROW1("get", get_cmd, 2, CMD_READONLY | CMD_FAST, "1.0.0", "read string fast", "Get the value of a key",
         .kflags = KS_RO | KS_ACCESS),
    ROW1("set", set_cmd, -3, RW, "1.0.0", "write string slow", "Set the string value of a key",
         KEY_SPECS({KS_RW | KS_ACCESS | KS_UPDATE | KS_VARIABLE_FLAGS, KS_INDEX(1), KS_RANGE(0, 1, 0),
                    .notes = "RW and ACCESS due to the optional `GET` argument"}),
         .keyflags = set_keyflags),
    ROW1("setnx", setnx_cmd, 3, RW | CMD_FAST, "1.0.0", "write string fast",
         "Set the value of a key, only if the key does not exist", .kflags = KS_OW | KS_INSERT),
    ROW1("setex", setex_cmd, 4, RW, "2.0.0", "write string slow", "Set the value and expiration of a key",
         .kflags = KS_OW | KS_UPDATE),
    ROW1("psetex", psetex_cmd, 4, RW, "2.6.0", "write string slow",
         "Set the value and expiration in milliseconds of a key", .kflags = KS_OW | KS_UPDATE),
    ROW1("getset", getset_cmd, 3, RW | CMD_FAST, "1.0.0", "write string fast",
         "Set the string value of a key and return its old value", .kflags = KS_RW | KS_ACCESS | KS_UPDATE),
    ROW1("getdel", getdel_cmd, 2, CMD_WRITE | CMD_FAST, "6.2.0", "write string fast",
         "Get the value of a key and delete the key", .kflags = KS_RW | KS_ACCESS | KS_DELETE),
    ROW1("getex", getex_cmd, -2, CMD_WRITE | CMD_FAST, "6.2.0", "write string fast",
         "Get the value of a key and optionally set its expiration",
         KEY_SPECS({KS_RW | KS_ACCESS | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0),
                    .notes = "RW and UPDATE because it changes the TTL"})),
    ROW1("append", append_cmd, 3, RW | CMD_FAST, "2.0.0", "write string fast", "Append a value to a key",
         .kflags = KS_RW | KS_INSERT),
    ROW1("strlen", strlen_cmd, 2, CMD_READONLY | CMD_FAST, "2.2.0", "read string fast",
         "Get the length of the value stored in a key", .kflags = KS_RO),
    ROW1("incr", incr_cmd, 2, RW | CMD_FAST, "1.0.0", "write string fast",
         "Increment the integer value of a key by one", .kflags = KS_RW | KS_ACCESS | KS_UPDATE),
    ROW1("decr", decr_cmd, 2, RW | CMD_FAST, "1.0.0", "write string fast",
         "Decrement the integer value of a key by one", .kflags = KS_RW | KS_ACCESS | KS_UPDATE),
    ROW1("incrby", incrby_cmd, 3, RW | CMD_FAST, "1.0.0", "write string fast",
         "Increment the integer value of a key by the given amount", .kflags = KS_RW | KS_ACCESS | KS_UPDATE),
    ROW1("decrby", decrby_cmd, 3, RW | CMD_FAST, "1.0.0", "write string fast",
         "Decrement the integer value of a key by the given number", .kflags = KS_RW | KS_ACCESS | KS_UPDATE),
    ROW1("incrbyfloat", incrbyfloat_cmd, 3, RW | CMD_FAST, "2.6.0", "write string fast",
         "Increment the float value of a key by the given amount", .kflags = KS_RW | KS_ACCESS | KS_UPDATE),
    ROW1("getrange", getrange_cmd, 4, CMD_READONLY, "2.4.0", "read string slow",
         "Get a substring of the string stored at a key", .kflags = KS_RO | KS_ACCESS),
    ROW1("substr", getrange_cmd, 4, CMD_READONLY, "1.0.0", "read string slow",
         "Get a substring of the string stored at a key", .kflags = KS_RO | KS_ACCESS),
    ROW1("setrange", setrange_cmd, 4, RW, "2.2.0", "write string slow",
         "Overwrite part of a string at key starting at the specified offset", .kflags = KS_RW | KS_UPDATE),
    {.name = "lcs",
     .kflags = KS_RO | KS_ACCESS,
     .hops = cross_gather,
     .proc = lcs_cmd,
     .arity = -3,
     .flags = CMD_READONLY,
     .first = 1,
     .last = 2,
     .step = 1,
     .group = "string",
     .since = "7.0.0",
     .acl = "read string slow",
     .summary = "Find longest common substring"},
    {.name = "mget",
     .kflags = KS_RO | KS_ACCESS,
     .proc = mget_cmd,
     .arity = -2,
     .flags = CMD_READONLY | CMD_FAST,
     .first = 1,
     .last = -1,
     .step = 1,
     .split = SPLIT_ARRAY,
     .group = "string",
     .since = "1.0.0",
     .acl = "read string fast",
     .summary = "Get the values of all the given keys"},
    {.name = "mset",
     .kflags = KS_OW | KS_UPDATE,
     .proc = mset_cmd,
     .arity = -3,
     .flags = RW,
     .first = 1,
     .last = -1,
     .step = 2,
     .split = SPLIT_OK,
     .group = "string",
     .since = "1.0.1",
     .acl = "write string slow",
     .summary = "Set multiple keys to multiple values"},
    {.name = "msetnx",
     .kflags = KS_OW | KS_INSERT,
     .hops = cross_gather,
     .proc = msetnx_cmd,
     .arity = -3,
     .flags = RW,
     .first = 1,
     .last = -1,
     .step = 2,
     .group = "string",
     .since = "1.0.1",
     .acl = "write string slow",
     .summary = "Set multiple keys to multiple values, only if none of the keys exist"},
};

void string_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
