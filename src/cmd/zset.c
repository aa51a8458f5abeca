/* zset.c - the sorted set value (see zset.h for its two encodings) and the
 * single-key commands: ZADD ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK
 * ZREVRANK ZCOUNT ZLEXCOUNT ZPOPMIN ZPOPMAX ZMPOP ZRANDMEMBER ZSCAN.
 * zset_range.c has ZRANGE and its relatives, zset_algebra.c the set
 * algebra; zset_register adds all three files' rows.
 *
 * The pack encoding keeps pairs in order, so lookups by member are a linear
 * walk (at most zset-max-listpack-entries pairs, 128 by default), while a
 * zset_big answers by member through its smap and by rank, score or lex
 * bound through its B+tree in O(log n). Both are read through the same
 * rank cursor (zcur), so the commands do not care which one they have. */
#include "cmd/cross.h"
#include "cmd/notify.h"
#include "cmd/zset.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/shard.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>

/* ---- pack encoding: member, score, member, score ... ---- */

static size_t pk_len(const pack *p) { return pack_count(p) / 2; }

/* A score that is not a small integer is stored as a 9-byte string: this
 * marker (which no canonical integer starts with) and the 8 bytes of the
 * double, half the size of its "%.17g" text. */
#define SCORE_MARK '\xff'

/* The score stored at entry pos. */
static double pk_score_at(const pack *p, size_t pos) {
    pack_val v;
    pack_get(p, pos, &v);
    if (!v.s) return (double)v.v;
    double d = 0;
    if (v.len == 9) memcpy(&d, v.s + 1, 8); /* v.s[0] is SCORE_MARK */
    return d;
}

/* Inserts score d as the entry at pos: an integer entry when d is integral
 * and within +-2^53 (so -0 is stored as 0, as Redis's listpack does), else
 * the marked 8 bytes. */
static pack *pk_insert_score(pack *p, size_t pos, double d) {
    if (d >= -9007199254740992.0 && d <= 9007199254740992.0 && d == (double)(int64_t)d)
        return pack_insert_int(p, pos, (int64_t)d);
    char tmp[9];
    tmp[0] = SCORE_MARK;
    memcpy(tmp + 1, &d, 8);
    return pack_insert(p, pos, tmp, sizeof tmp);
}

/* Position of the member entry of the first pair that sorts after
 * (score, m), or the end position. */
static size_t pk_insert_pos(const pack *p, const char *m, size_t ml, double score) {
    for (size_t mp = pack_first(p); mp;) {
        size_t sp = pack_next(p, mp);
        double s = pk_score_at(p, sp);
        if (s > score || (s == score && pack_cmp(p, mp, m, ml) > 0)) return mp;
        mp = pack_next(p, sp);
    }
    return pack_bytes(p);
}

/* Adds the pair (m, score) in order; m must not be in p. */
static pack *pk_insert(pack *p, const char *m, size_t ml, double score) {
    size_t pos = pk_insert_pos(p, m, ml, score);
    int at_end = pos == pack_bytes(p);
    p = pack_insert(p, pos, m, ml);
    return pk_insert_score(p, at_end ? pack_bytes(p) : pack_next(p, pos), score);
}

/* Position of member m's entry, 0 when absent; *rank gets its pair index. */
static size_t pk_find(const pack *p, const char *m, size_t ml, size_t *rank) {
    size_t i = 0;
    for (size_t mp = pack_first(p); mp; i++) {
        if (pack_eq(p, mp, m, ml)) {
            if (rank) *rank = i;
            return mp;
        }
        mp = pack_next(p, pack_next(p, mp));
    }
    return 0;
}

/* The member and score of the pair whose member entry is at mp. */
static void pk_item(const pack *p, size_t mp, zitem *it) {
    pack_val v;
    pack_get(p, mp, &v);
    it->m = pack_val_str(&v, it->buf, &it->ml);
    it->score = pk_score_at(p, pack_next(p, mp));
}

/* 1 when adding a new member of ml bytes must turn p into a zset_big. */
static int pk_must_grow(const pack *p, size_t ml) {
    long long entries = cfg_get(zset_max_listpack_entries), value = cfg_get(zset_max_listpack_value);
    return (long long)pk_len(p) + 1 > entries || (long long)ml > value || !pack_safe_to_add(p, ml + 40);
}

static zset_big *pk_to_big(const pack *p) {
    zset_big *z = zsetb_create();
    for (size_t mp = pack_first(p); mp; mp = pack_next(p, pack_next(p, mp))) {
        zitem it;
        pk_item(p, mp, &it);
        zsetb_set(z, it.m, it.ml, it.score);
    }
    return z;
}

/* ---- the object ---- */

void *zobj_new(size_t mlen) {
    long long entries = cfg_get(zset_max_listpack_entries), value = cfg_get(zset_max_listpack_value);
    if (entries == 0 || (long long)mlen > value) return zobj_tag_big(zsetb_create());
    return pack_create_lean();
}

void zobj_free(void *o) {
    if (zobj_is_big(o)) {
        zset_big *z = zobj_big(o);
        zsetb_free(&z);
    } else {
        pack *p = o;
        pack_destroy(&p);
    }
}

size_t zobj_size(const void *o) { return zobj_is_big(o) ? zsetb_size(zobj_big(o)) : pk_len(o); }

int zobj_score(void *o, const char *m, size_t ml, double *score) {
    if (zobj_is_big(o)) return zsetb_score(zobj_big(o), m, ml, score);
    size_t mp = pk_find(o, m, ml, NULL);
    if (mp) *score = pk_score_at(o, pack_next(o, mp));
    return mp != 0;
}

int zobj_rank(void *o, const char *m, size_t ml, size_t *rank) {
    if (zobj_is_big(o)) return zsetb_rank(zobj_big(o), m, ml, rank);
    return pk_find(o, m, ml, rank) != 0;
}

void *zobj_set(void *o, const char *m, size_t ml, double score, int *added) {
    if (zobj_is_big(o)) {
        *added = zsetb_set(zobj_big(o), m, ml, score);
        return o;
    }
    pack *p = o;
    size_t mp = pk_find(p, m, ml, NULL);
    *added = mp == 0;
    if (mp) {
        if (pk_score_at(p, pack_next(p, mp)) == score) return p;
        p = pack_delete(p, mp, 2); /* an update moves the pair, never converts */
        return pk_insert(p, m, ml, score);
    }
    if (pk_must_grow(p, ml)) {
        zset_big *z = pk_to_big(p);
        pack_destroy(&p);
        zsetb_set(z, m, ml, score);
        return zobj_tag_big(z);
    }
    return pk_insert(p, m, ml, score);
}

void *zobj_delete(void *o, const char *m, size_t ml, int *removed) {
    if (zobj_is_big(o)) {
        *removed = zsetb_delete(zobj_big(o), m, ml);
        return o;
    }
    size_t mp = pk_find(o, m, ml, NULL);
    *removed = mp != 0;
    return mp ? pack_delete(o, mp, 2) : o;
}

void *zobj_delete_ranks(void *o, size_t first, size_t n) {
    if (n == 0) return o;
    if (zobj_is_big(o)) {
        zsetb_delete_ranks(zobj_big(o), first, first + n - 1);
        return o;
    }
    return pack_delete_range(o, (long)(2 * first), 2 * n);
}

static int score_range_empty(const zscore_range *r) {
    return r->min > r->max || (r->min == r->max && (r->minex || r->maxex));
}
static int score_ge_min(double s, const zscore_range *r) { return r->minex ? s > r->min : s >= r->min; }
static int score_le_max(double s, const zscore_range *r) { return r->maxex ? s < r->max : s <= r->max; }

size_t zobj_score_span(void *o, const zscore_range *r, size_t *first) {
    *first = 0;
    if (score_range_empty(r)) return 0;
    if (zobj_is_big(o)) return zindex_score_span(zobj_big(o)->idx, r, first);
    const pack *p = o;
    size_t i = 0, n = 0;
    for (size_t mp = pack_first(p); mp; i++) {
        size_t sp = pack_next(p, mp);
        double s = pk_score_at(p, sp);
        if (n == 0 && !score_ge_min(s, r)) {
            mp = pack_next(p, sp);
            continue;
        }
        if (!score_le_max(s, r)) break;
        if (n++ == 0) *first = i;
        mp = pack_next(p, sp);
    }
    return n;
}

static int bytes_cmp(const char *a, size_t al, const char *b, size_t bl) {
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return al < bl ? -1 : al > bl;
}

/* An inverted or impossible lex range (as Redis's zslIsInLexRange). */
static int lex_range_empty(const zlex_range *r) {
    if (r->min.kind == ZLEX_PLUS || r->max.kind == ZLEX_MINUS) return 1;
    if (r->min.kind == ZLEX_MINUS || r->max.kind == ZLEX_PLUS) return 0;
    int c = bytes_cmp(r->min.p, r->min.len, r->max.p, r->max.len);
    return c > 0 || (c == 0 && (r->min.kind == ZLEX_EXCL || r->max.kind == ZLEX_EXCL));
}
static int lex_ge_min(const pack *p, size_t mp, const zlex_bound *b) {
    if (b->kind == ZLEX_MINUS || b->kind == ZLEX_PLUS) return b->kind == ZLEX_MINUS;
    int c = pack_cmp(p, mp, b->p, b->len);
    return b->kind == ZLEX_INCL ? c >= 0 : c > 0;
}
static int lex_le_max(const pack *p, size_t mp, const zlex_bound *b) {
    if (b->kind == ZLEX_MINUS || b->kind == ZLEX_PLUS) return b->kind == ZLEX_PLUS;
    int c = pack_cmp(p, mp, b->p, b->len);
    return b->kind == ZLEX_INCL ? c <= 0 : c < 0;
}

size_t zobj_lex_span(void *o, const zlex_range *r, size_t *first) {
    *first = 0;
    if (lex_range_empty(r)) return 0;
    if (zobj_is_big(o)) return zindex_lex_span(zobj_big(o)->idx, r, first);
    /* As Redis's listpack walk: from the first member not below min, on
     * while members stay within max. */
    const pack *p = o;
    size_t i = 0, n = 0;
    for (size_t mp = pack_first(p); mp; mp = pack_next(p, pack_next(p, mp)), i++) {
        if (n == 0 && !lex_ge_min(p, mp, &r->min)) continue;
        if (!lex_le_max(p, mp, &r->max)) break;
        if (n++ == 0) *first = i;
    }
    return n;
}

void *zobj_fit(void *o) {
    if (!zobj_is_big(o)) return o;
    zset_big *z = zobj_big(o);
    size_t n = zsetb_size(z), maxlen = 0, total = 0;
    if ((long long)n > cfg_get(zset_max_listpack_entries)) return o;
    zcur cu;
    for (int ok = zcur_seek(&cu, o, 0); ok; ok = zcur_next(&cu)) {
        zitem it;
        zcur_get(&cu, &it);
        if (it.ml > maxlen) maxlen = it.ml;
        total += it.ml + 32;
    }
    if ((long long)maxlen > cfg_get(zset_max_listpack_value) || total > PACK_SAFETY_LIMIT) return o;
    pack *p = pack_create_lean();
    for (int ok = zcur_seek(&cu, o, 0); ok; ok = zcur_next(&cu)) {
        zitem it;
        zcur_get(&cu, &it);
        p = pack_append(p, it.m, it.ml);
        p = pk_insert_score(p, pack_bytes(p), it.score);
    }
    zsetb_free(&z);
    return p;
}

/* ---- rank cursor and builder ---- */

/* Keeps the positions of the last k pairs of the n walked (ring holds the
 * newest at (n-1) % ZCUR_BACK) in back[], the nearest last. */
/* Walks a lean pack to the pair of rank `rank`, keeping the member
 * positions of the ZCUR_BACK pairs before it in back[] (one skip over the
 * pairs before those); returns that pair's member position. */
static size_t fill_back(zcur *cu, size_t rank) {
    const pack *p = cu->o;
    size_t start = rank > ZCUR_BACK ? rank - ZCUR_BACK : 0;
    size_t mp = pack_skip(p, pack_first(p), 2 * start);
    for (size_t i = start; i < rank; i++) {
        cu->back[i - start] = (uint32_t)mp;
        mp = pack_skip(p, mp, 2);
    }
    cu->nback = (unsigned)(rank - start);
    return mp;
}

int zcur_seek(zcur *cu, void *o, size_t rank) {
    cu->o = o;
    cu->nback = 0;
    cu->rank = rank;
    if (zobj_is_big(o)) return zindex_at(zobj_big(o)->idx, rank, &cu->zp) != NULL;
    if (rank >= pk_len(o)) {
        cu->pos = 0;
        return 0;
    }
    if (!pack_is_lean(o)) {
        cu->pos = pack_index(o, (long)(2 * rank));
        return 1;
    }
    cu->pos = fill_back(cu, rank); /* what a reverse walk from here needs */
    return 1;
}

int zcur_next(zcur *cu) {
    if (zobj_is_big(cu->o)) return zpos_next(&cu->zp);
    cu->pos = pack_skip(cu->o, cu->pos, 2);
    cu->nback = 0;
    cu->rank++;
    return cu->pos != 0;
}

/* zcur_prev in a lean pack: the pair before pos from the positions kept in
 * back[], refilled when empty (see zcur). */
static int pk_prev(zcur *cu) {
    if (cu->rank == 0 || !cu->pos) {
        cu->pos = 0;
        return 0;
    }
    if (!cu->nback) fill_back(cu, cu->rank);
    cu->pos = cu->back[--cu->nback];
    cu->rank--;
    return 1;
}

int zcur_prev(zcur *cu) {
    if (zobj_is_big(cu->o)) return zpos_prev(&cu->zp);
    if (pack_is_lean(cu->o)) return pk_prev(cu);
    size_t sp = pack_prev(cu->o, cu->pos);
    cu->pos = sp ? pack_prev(cu->o, sp) : 0;
    return cu->pos != 0;
}

void zcur_get(const zcur *cu, zitem *it) {
    if (!zobj_is_big(cu->o)) {
        pk_item(cu->o, cu->pos, it);
        return;
    }
    const smap_elem *e = zpos_elem(&cu->zp);
    it->m = zelem_member(e, &it->ml);
    it->score = zelem_score(e);
}

void zbuild_add(zbuild *b, const char *m, size_t ml, double score) {
    if (!b->o && (long long)b->hint > cfg_get(zset_max_listpack_entries)) b->o = zobj_tag_big(zsetb_create());
    if (!b->o) b->o = zobj_new(ml);
    if (!zobj_is_big(b->o) && pk_must_grow(b->o, ml)) {
        pack *p = b->o;
        b->o = zobj_tag_big(pk_to_big(p));
        pack_destroy(&p);
    }
    if (zobj_is_big(b->o)) {
        zsetb_set(zobj_big(b->o), m, ml, score);
        return;
    }
    pack *p = b->o;
    p = pack_append(p, m, ml);
    b->o = pk_insert_score(p, pack_bytes(p), score);
}

/* ---- type operations (TYPE, DEL, MEMORY USAGE, COPY, OBJECT ENCODING) ---- */

static void zset_free(void *o) { zobj_free(o); }

static size_t zset_usage(const void *o) { return zobj_is_big(o) ? zsetb_mem_usage(zobj_big(o)) : zmalloc_size(o); }

static void *zset_copy(const void *o) {
    if (!zobj_is_big(o)) return pack_dup(o);
    zset_big *z = zsetb_create();
    zcur cu;
    for (int ok = zcur_seek(&cu, (void *)o, 0); ok; ok = zcur_next(&cu)) {
        zitem it;
        zcur_get(&cu, &it);
        zsetb_set(z, it.m, it.ml, it.score);
    }
    return zobj_tag_big(z);
}

static const char *zset_encoding(const void *o) { return zobj_is_big(o) ? "skiplist" : "listpack"; }

static const type_ops zset_ops = {
    .name = "zset", .free = zset_free, .usage = zset_usage, .copy = zset_copy, .encoding = zset_encoding};

/* ---- parsing ---- */

int zs_parse_double(const char *s, size_t n, double *d) { return str2d(s, n, d); }

/* One score bound: "(x" exclusive, else inclusive; strtod must stop at the
 * end of the text (or at a NUL byte, as in Redis) and give no NaN. */
static int parse_score_bound(const char *s, size_t n, double *v, int *excl) {
    char small[128], *tmp = n < sizeof small ? small : zmalloc(n + 1);
    memcpy(tmp, s, n);
    tmp[n] = 0;
    *excl = n > 0 && tmp[0] == '(';
    char *end;
    *v = strtod(tmp + *excl, &end);
    int ok = *end == 0 && !isnan(*v);
    if (tmp != small) zfree(tmp);
    return ok;
}

int zs_parse_score_range(cmd_ctx *c, int imin, int imax, zscore_range *r) {
    if (!parse_score_bound(c->argv[imin], c->argl[imin], &r->min, &r->minex) ||
        !parse_score_bound(c->argv[imax], c->argl[imax], &r->max, &r->maxex))
        return -1;
    return 0;
}

int zs_parse_lex_range(cmd_ctx *c, int imin, int imax, zlex_range *r) {
    if (zlex_parse(c->argv[imin], c->argl[imin], &r->min) < 0) return -1;
    return zlex_parse(c->argv[imax], c->argl[imax], &r->max);
}

/* ---- keyspace ---- */

entry *zs_lookup(cmd_ctx *c, int i, int reading, db **dp) {
    entry **l = ctx_lookup(c, i, reading, dp);
    return l ? *l : NULL;
}

int zs_wrong_type(cmd_ctx *c, const entry *e) { return ctx_wrong_type(c, e, T_ZSET); }

void zs_settle(cmd_ctx *c, db *d, int i, entry *e, void *o) {
    if (zobj_size(o) == 0) {
        entry_set_obj(e, o); /* freed with the entry */
        db_delete(d, c->argv[i], c->argl[i], ctx_now(c));
        ctx_notify(c, NOTIFY_GENERIC, "del", i);
    } else {
        entry_set_obj(e, o);
    }
}

void zs_store(cmd_ctx *c, int i, void *o) {
    db *d = ctx_db(c, c->argv[i], c->argl[i]);
    size_t n = o ? zobj_size(o) : 0;
    if (n == 0) {
        if (o) zobj_free(o);
        if (db_delete(d, c->argv[i], c->argl[i], ctx_now(c))) ctx_notify(c, NOTIFY_GENERIC, "del", i);
        reply_int(c, 0);
        return;
    }
    entry **l = db_find_link(d, c->argv[i], c->argl[i], ctx_now(c));
    entry *ne = entry_new_obj(c->argv[i], c->argl[i], T_ZSET, o, -1);
    if (l)
        db_replace(d, l, ne, 0);
    else
        db_add(d, ne);
    reply_int(c, (long long)n);
    ctx_notify(c, NOTIFY_ZSET, c->cmd->name, i); /* the event is the command's name: zunionstore, ... */
}

/* ---- replies ---- */

void zs_reply_header(cmd_ctx *c, size_t n, int withscores) {
    reply_array(c, (long long)(withscores && c->resp < 3 ? 2 * n : n));
}

void zs_reply_item(cmd_ctx *c, const zitem *it, int withscores) {
    if (withscores && c->resp >= 3) reply_array(c, 2);
    reply_bulk(c, it->m, it->ml);
    if (withscores) reply_double(c, it->score);
}

/* ---- ZADD, ZINCRBY ---- */

enum { ZA_NX = 1, ZA_XX = 2, ZA_GT = 4, ZA_LT = 8, ZA_CH = 16, ZA_INCR = 32 };
enum { ZR_NOP, ZR_SAME, ZR_UPDATED, ZR_ADDED, ZR_NAN };

/* Applies one score/member pair under the ZADD flags; *res says what
 * happened, *out the member's score afterwards (unless ZR_NOP/ZR_NAN). */
static void *zadd_one(void *o, const char *m, size_t ml, double score, int fl, double *out, int *res) {
    double cur;
    int added;
    if (!zobj_score(o, m, ml, &cur)) {
        *res = ZR_NOP;
        if (fl & ZA_XX) return o;
        *out = score;
        *res = ZR_ADDED;
        return zobj_set(o, m, ml, score, &added);
    }
    *res = ZR_NOP;
    if (fl & ZA_NX) return o;
    if (fl & ZA_INCR) {
        score += cur;
        if (isnan(score)) {
            *res = ZR_NAN;
            return o;
        }
    }
    if (((fl & ZA_LT) && score >= cur) || ((fl & ZA_GT) && score <= cur)) return o;
    *out = score;
    *res = score == cur ? ZR_SAME : ZR_UPDATED;
    return *res == ZR_SAME ? o : zobj_set(o, m, ml, score, &added);
}

/* Checks the flag combination; replies the error and returns 0 if bad. */
static int zadd_flags_ok(cmd_ctx *c, int fl, int pairs) {
    if ((fl & ZA_NX) && (fl & ZA_XX)) {
        reply_error(c, "ERR XX and NX options at the same time are not compatible");
        return 0;
    }
    if (((fl & ZA_GT) && (fl & ZA_NX)) || ((fl & ZA_LT) && (fl & ZA_NX)) || ((fl & ZA_GT) && (fl & ZA_LT))) {
        reply_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return 0;
    }
    if ((fl & ZA_INCR) && pairs > 1) {
        reply_error(c, "ERR INCR option supports a single increment-element pair");
        return 0;
    }
    return 1;
}

/* Scores of the pairs from argv[at]; NULL after replying the error. */
static double *zadd_scores(cmd_ctx *c, int at, int pairs) {
    double *s = zmalloc((size_t)pairs * sizeof *s);
    for (int j = 0; j < pairs; j++) {
        if (!zs_parse_double(c->argv[at + 2 * j], c->argl[at + 2 * j], &s[j])) {
            zfree(s);
            reply_status(c, ST_NOTFLOAT);
            return NULL;
        }
    }
    return s;
}

static void zadd_reply(cmd_ctx *c, int fl, long long added, long long updated, int done, double score) {
    if (!(fl & ZA_INCR))
        reply_int(c, added + ((fl & ZA_CH) ? updated : 0));
    else if (done)
        reply_double(c, score);
    else
        reply_null(c);
}

/* Runs ZADD with flags fl on the pairs from argv[at]. */
static void zadd_generic(cmd_ctx *c, int at, int fl) {
    int pairs = (c->argc - at) / 2;
    if ((c->argc - at) % 2 || pairs == 0) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (!zadd_flags_ok(c, fl, pairs)) return;
    double *scores = zadd_scores(c, at, pairs);
    if (!scores) return;
    db *d;
    entry *e = zs_lookup(c, 1, 0, &d);
    if (zs_wrong_type(c, e)) goto out;
    if (!e) {
        if (fl & ZA_XX) {
            zadd_reply(c, fl, 0, 0, 0, 0);
            goto out;
        }
        db_add(d, entry_new_obj(c->argv[1], c->argl[1], T_ZSET, zobj_new(c->argl[at + 1]), -1));
        e = db_find(d, c->argv[1], c->argl[1], ctx_now(c));
    }
    void *o = entry_obj(e);
    long long added = 0, updated = 0;
    int done = 0, res = ZR_NOP;
    double score = 0;
    for (int j = 0; j < pairs; j++) {
        o = zadd_one(o, c->argv[at + 2 * j + 1], c->argl[at + 2 * j + 1], scores[j], fl, &score, &res);
        added += res == ZR_ADDED;
        updated += res == ZR_UPDATED;
        done += res != ZR_NOP && res != ZR_NAN;
    }
    if (added || updated) ctx_notify(c, NOTIFY_ZSET, (fl & ZA_INCR) ? "zincr" : "zadd", 1);
    zs_settle(c, d, 1, e, o);
    if (res == ZR_NAN)
        reply_error(c, "ERR resulting score is not a number (NaN)");
    else
        zadd_reply(c, fl, added, updated, done, score);
out:
    zfree(scores);
}

/* ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...] */
static void zadd_cmd(cmd_ctx *c) {
    static const char *const names[] = {"nx", "xx", "gt", "lt", "ch", "incr"};
    int fl = 0, i = 2;
    for (; i < c->argc; i++) {
        int k = 0;
        while (k < 6 && !arg_is(c, i, names[k]))
            k++;
        if (k == 6) break;
        fl |= 1 << k;
    }
    zadd_generic(c, i, fl);
}

/* ZINCRBY key increment member */
static void zincrby_cmd(cmd_ctx *c) { zadd_generic(c, 2, ZA_INCR); }

/* ---- ZREM, ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK ---- */

/* ZREM key member [member ...] */
static void zrem_cmd(cmd_ctx *c) {
    db *d;
    entry *e = zs_lookup(c, 1, 0, &d);
    if (zs_wrong_type(c, e)) return;
    long long n = 0;
    if (e) {
        void *o = entry_obj(e);
        for (int i = 2; i < c->argc && zobj_size(o) > 0; i++) {
            int removed;
            o = zobj_delete(o, c->argv[i], c->argl[i], &removed);
            n += removed;
        }
        if (n) ctx_notify(c, NOTIFY_ZSET, "zrem", 1);
        zs_settle(c, d, 1, e, o);
    }
    reply_int(c, n);
}

/* ZCARD key */
static void zcard_cmd(cmd_ctx *c) {
    entry *e = zs_lookup(c, 1, 1, NULL);
    if (zs_wrong_type(c, e)) return;
    reply_int(c, e ? (long long)zobj_size(entry_obj(e)) : 0);
}

/* ZSCORE key member */
static void zscore_cmd(cmd_ctx *c) {
    entry *e = zs_lookup(c, 1, 1, NULL);
    if (zs_wrong_type(c, e)) return;
    double s;
    if (e && zobj_score(entry_obj(e), c->argv[2], c->argl[2], &s))
        reply_double(c, s);
    else
        reply_null(c);
}

/* ZMSCORE key member [member ...] */
static void zmscore_cmd(cmd_ctx *c) {
    entry *e = zs_lookup(c, 1, 1, NULL);
    if (zs_wrong_type(c, e)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        double s;
        if (e && zobj_score(entry_obj(e), c->argv[i], c->argl[i], &s))
            reply_double(c, s);
        else
            reply_null(c);
    }
}

static void rank_generic(cmd_ctx *c, int rev) {
    entry *e = zs_lookup(c, 1, 1, NULL);
    if (zs_wrong_type(c, e)) return;
    size_t r;
    if (!e || !zobj_rank(entry_obj(e), c->argv[2], c->argl[2], &r)) {
        reply_null(c);
        return;
    }
    reply_int(c, (long long)(rev ? zobj_size(entry_obj(e)) - 1 - r : r));
}

/* ZRANK key member */
static void zrank_cmd(cmd_ctx *c) { rank_generic(c, 0); }

/* ZREVRANK key member */
static void zrevrank_cmd(cmd_ctx *c) { rank_generic(c, 1); }

/* ---- ZCOUNT, ZLEXCOUNT ---- */

/* ZCOUNT key min max */
static void zcount_cmd(cmd_ctx *c) {
    zscore_range r;
    if (zs_parse_score_range(c, 2, 3, &r) < 0) {
        reply_error(c, "ERR min or max is not a float");
        return;
    }
    entry *e = zs_lookup(c, 1, 1, NULL);
    if (zs_wrong_type(c, e)) return;
    size_t first;
    reply_int(c, e ? (long long)zobj_score_span(entry_obj(e), &r, &first) : 0);
}

/* ZLEXCOUNT key min max */
static void zlexcount_cmd(cmd_ctx *c) {
    zlex_range r;
    if (zs_parse_lex_range(c, 2, 3, &r) < 0) {
        reply_error(c, "ERR min or max not valid string range item");
        return;
    }
    entry *e = zs_lookup(c, 1, 1, NULL);
    if (zs_wrong_type(c, e)) return;
    size_t first;
    reply_int(c, e ? (long long)zobj_lex_span(entry_obj(e), &r, &first) : 0);
}

/* ---- ZPOPMIN, ZPOPMAX, ZMPOP ---- */

/* Replies and removes the n lowest (or highest) elements of the zset at
 * e (n <= its size), each as a [member, score] pair when nested, else
 * flat; the caller wrote the array header. */
static void pop_elements(cmd_ctx *c, db *d, int ki, entry *e, size_t n, int max, int nested) {
    void *o = entry_obj(e);
    size_t size = zobj_size(o);
    zcur cu;
    int ok = zcur_seek(&cu, o, max ? size - 1 : 0);
    for (size_t k = 0; k < n && ok; k++) {
        zitem it;
        zcur_get(&cu, &it);
        if (nested) reply_array(c, 2);
        reply_bulk(c, it.m, it.ml);
        reply_double(c, it.score);
        ok = max ? zcur_prev(&cu) : zcur_next(&cu);
    }
    o = zobj_delete_ranks(o, max ? size - n : 0, n);
    if (n) ctx_notify(c, NOTIFY_ZSET, max ? "zpopmax" : "zpopmin", ki);
    zs_settle(c, d, ki, e, o);
}

static void zpop_generic(cmd_ctx *c, int max) {
    if (c->argc > 3) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    long long count = -1;
    if (c->argc == 3) {
        if (!str2ll(c->argv[2], c->argl[2], &count) || count < 0) {
            reply_error(c, "ERR value is out of range, must be positive");
            return;
        }
    }
    db *d;
    entry *e = zs_lookup(c, 1, 0, &d);
    if (zs_wrong_type(c, e)) return;
    if (!e || count == 0) {
        reply_array(c, 0);
        return;
    }
    size_t size = zobj_size(entry_obj(e));
    size_t n = count < 0 ? 1 : ((unsigned long long)count > size ? size : (size_t)count);
    int nested = c->resp >= 3 && count >= 0;
    reply_array(c, (long long)(nested ? n : 2 * n));
    pop_elements(c, d, 1, e, n, max, nested);
}

/* ZPOPMIN key [count] */
static void zpopmin_cmd(cmd_ctx *c) { zpop_generic(c, 0); }

/* ZPOPMAX key [count] */
static void zpopmax_cmd(cmd_ctx *c) { zpop_generic(c, 1); }

/* numkeys of ZMPOP when it is usable (1 <= numkeys and the keys exist in
 * argv), else 0. */
static long long zmpop_numkeys(int argc, const char **argv, const size_t *argl) {
    long long n;
    if (argc < 2 || !str2ll(argv[1], argl[1], &n) || n < 1 || n > argc - 2) return 0;
    return n;
}

/* Key positions of ZMPOP: none when numkeys is bad (the handler replies). */
static int zmpop_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    long long n = zmpop_numkeys(argc, argv, argl);
    int w = 0;
    for (long long i = 0; i < n && w < max; i++)
        pos[w++] = (int)(2 + i);
    return w;
}

int zs_parse_mpop(cmd_ctx *c, int at, int *nkeys, int *max, long long *count) {
    long long n;
    *count = -1;
    if (!str2ll(c->argv[at], c->argl[at], &n) || n < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return 0;
    }
    int w = at + 1 + (int)(n < c->argc ? n : c->argc);
    if (n > c->argc - at - 2 || !(arg_is(c, w, "min") || arg_is(c, w, "max"))) {
        reply_status(c, ST_SYNTAX);
        return 0;
    }
    *max = arg_is(c, w, "max");
    if (!arg_count_option(c, w + 1, count)) return 0;
    *nkeys = (int)n;
    return 1;
}

int zs_pop_reply(cmd_ctx *c, int i, int max, long long count, int with_key_many) {
    db *d;
    entry *e = zs_lookup(c, i, 0, &d);
    if (!e) return 0;
    if (zs_wrong_type(c, e)) return -1;
    size_t size = zobj_size(entry_obj(e));
    size_t take = count < 0 ? 1 : ((unsigned long long)count > size ? size : (size_t)count);
    if (with_key_many) {
        reply_array(c, 2);
        reply_bulk(c, c->argv[i], c->argl[i]);
        reply_array(c, (long long)take);
        pop_elements(c, d, i, e, take, max, 1);
    } else { /* [key, member, score] */
        reply_array(c, 3);
        reply_bulk(c, c->argv[i], c->argl[i]);
        pop_elements(c, d, i, e, 1, max, 0);
    }
    return 1;
}

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] */
static void zmpop_cmd(cmd_ctx *c) {
    int n, max;
    long long count;
    if (!zs_parse_mpop(c, 1, &n, &max, &count)) return;
    for (int k = 2; k < n + 2; k++)
        if (zs_pop_reply(c, k, max, count, 1)) return;
    reply_null_array(c);
}

/* ---- ZRANDMEMBER ---- */

/* smap_random and smap_sample take a plain function: it draws from the
 * executing shard, set by rng(). */
static _Thread_local shard *rnd_shard;
static uint64_t rnd_next(void) { return shard_rand(rnd_shard); }
static uint64_t (*rng(cmd_ctx *c))(void) {
    rnd_shard = c->sh;
    return rnd_next;
}
static size_t rand_below(cmd_ctx *c, size_t n) { return (size_t)(shard_rand(c->sh) % n); }

static void reply_elem(cmd_ctx *c, const smap_elem *e, int withscores) {
    zitem it;
    it.m = zelem_member(e, &it.ml);
    it.score = zelem_score(e);
    zs_reply_item(c, &it, withscores);
}

/* count distinct elements, 0 < count < size. A pack is walked once with
 * selection sampling (so they come in order); a zset_big is sampled. */
static void reply_distinct(cmd_ctx *c, void *o, size_t count, int withscores) {
    zs_reply_header(c, count, withscores);
    size_t size = zobj_size(o);
    if (zobj_is_big(o)) {
        smap_elem **out = zmalloc(count * sizeof *out);
        size_t got = smap_sample(zobj_big(o)->dict, count, out, rng(c));
        for (size_t i = 0; i < got; i++)
            reply_elem(c, out[i], withscores);
        zfree(out);
        return;
    }
    zcur cu;
    int ok = zcur_seek(&cu, o, 0);
    for (size_t i = 0; i < size && ok && count > 0; i++, ok = zcur_next(&cu)) {
        if (rand_below(c, size - i) >= count) continue;
        count--;
        zitem it;
        zcur_get(&cu, &it);
        zs_reply_item(c, &it, withscores);
    }
}

/* count elements drawn with repetition. Redis streams any count; here one
 * reply is bounded by proto-max-bulk-len bytes, past which it is taken
 * back and answered with an error instead of growing without bound. */
static void reply_repeated(cmd_ctx *c, void *o, unsigned long long count, int withscores) {
    unsigned long long max = (unsigned long long)cfg_get(proto_max_bulk_len);
    size_t start = c->out->len, size = zobj_size(o);
    if (count > max / 7) { /* "$1\r\nx\r\n" is the shortest member reply */
        reply_error(c, "ERR value is out of range");
        return;
    }
    size_t *pos = NULL;
    if (!zobj_is_big(o)) { /* entry positions of the pairs, for O(1) picks */
        pos = zmalloc(size * sizeof *pos);
        zcur cu;
        size_t i = 0;
        for (int ok = zcur_seek(&cu, o, 0); ok; ok = zcur_next(&cu))
            pos[i++] = cu.pos;
    }
    zs_reply_header(c, (size_t)count, withscores);
    while (count-- && c->out->len - start <= max) {
        if (pos) {
            zcur cu = {.o = o, .pos = pos[rand_below(c, size)]};
            zitem it;
            zcur_get(&cu, &it);
            zs_reply_item(c, &it, withscores);
        } else {
            reply_elem(c, smap_random(zobj_big(o)->dict, rng(c)), withscores);
        }
    }
    zfree(pos);
    if (c->out->len - start <= max) return;
    c->out->len = start;
    reply_error(c, "ERR value is out of range");
}

/* Replies every element, highest first, as Redis 7.0 does for
 * ZRANDMEMBER with count >= size. */
static void reply_all(cmd_ctx *c, void *o, int withscores) {
    size_t n = zobj_size(o);
    zs_reply_header(c, n, withscores);
    zcur cu;
    for (int ok = zcur_seek(&cu, o, n - 1); ok; ok = zcur_prev(&cu)) {
        zitem it;
        zcur_get(&cu, &it);
        zs_reply_item(c, &it, withscores);
    }
}

/* Parses ZRANDMEMBER's count and WITHSCORES; replies the error, returns 0. */
static int zrand_args(cmd_ctx *c, long long *count, int *withscores) {
    if (!arg_ll(c, 2, count)) return 0;
    if (*count == LLONG_MIN) {
        reply_errorf(c, "ERR value is out of range, value must between %lld and %lld", -LLONG_MAX, LLONG_MAX);
        return 0;
    }
    if (c->argc > 4 || (c->argc == 4 && !arg_is(c, 3, "withscores"))) {
        reply_status(c, ST_SYNTAX);
        return 0;
    }
    *withscores = c->argc == 4;
    if (*withscores && (*count < -LLONG_MAX / 2 || *count > LLONG_MAX / 2)) {
        reply_error(c, "ERR value is out of range");
        return 0;
    }
    return 1;
}

/* ZRANDMEMBER key [count [WITHSCORES]] */
static void zrandmember_cmd(cmd_ctx *c) {
    long long count = 0;
    int withscores = 0;
    if (c->argc >= 3 && !zrand_args(c, &count, &withscores)) return;
    entry *e = zs_lookup(c, 1, 1, NULL);
    if (zs_wrong_type(c, e)) return;
    if (c->argc == 2) {
        if (!e) {
            reply_null(c);
            return;
        }
        void *o = entry_obj(e);
        zcur cu;
        zitem it;
        zcur_seek(&cu, o, rand_below(c, zobj_size(o)));
        zcur_get(&cu, &it);
        reply_bulk(c, it.m, it.ml);
        return;
    }
    if (!e || count == 0) {
        reply_array(c, 0);
        return;
    }
    void *o = entry_obj(e);
    if (count < 0)
        reply_repeated(c, o, (unsigned long long)-count, withscores);
    else if ((unsigned long long)count >= zobj_size(o))
        reply_all(c, o, withscores);
    else
        reply_distinct(c, o, (size_t)count, withscores);
}

/* ---- ZSCAN ---- */


struct zscan_walk {
    buf out;         /* member and score bulks */
    long long n;     /* bulks in out */
    long long seen;  /* elements visited (COUNT budget) */
    const char *pat; /* MATCH, or NULL */
    size_t plen;
};

/* COUNT is counted in reply items (member and score are two), as Redis. */
static void zscan_take(struct zscan_walk *w, const char *m, size_t ml, double score) {
    w->seen += 2;
    if (w->pat && !glob_match(w->pat, w->plen, m, ml, 0)) return;
    char tmp[40];
    resp_bulk(&w->out, m, ml);
    resp_bulk(&w->out, tmp, (size_t)d2str(tmp, score));
    w->n += 2;
}

static void zscan_visit(void *ud, smap_elem *e) {
    size_t ml;
    const char *m = zelem_member(e, &ml);
    zscan_take(ud, m, ml, zelem_score(e));
}

static int zscan_options(cmd_ctx *c, struct zscan_walk *w, long long *count) {
    return arg_scan_options(c, 3, &w->pat, &w->plen, count);
}

/* ZSCAN key cursor [MATCH pattern] [COUNT count]
 * A pack is returned whole with cursor 0, as Redis does. */
static void zscan_cmd(cmd_ctx *c) {
    uint64_t cur;
    if (!arg_cursor(c, 2, &cur)) return;
    entry *e = zs_lookup(c, 1, 1, NULL);
    if (zs_wrong_type(c, e)) return;
    struct zscan_walk w = {0};
    long long count = 10;
    if (e && !zscan_options(c, &w, &count)) return;
    void *o = e ? entry_obj(e) : NULL;
    if (o && zobj_is_big(o)) {
        long long steps = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
        do
            cur = smap_scan(zobj_big(o)->dict, cur, zscan_visit, &w);
        while (cur && steps-- && w.seen < count);
    } else {
        zcur cu;
        for (int ok = o && zcur_seek(&cu, o, 0); ok; ok = zcur_next(&cu)) {
            zitem it;
            zcur_get(&cu, &it);
            zscan_take(&w, it.m, it.ml, it.score);
        }
        cur = 0;
    }
    char num[24];
    reply_array(c, 2);
    reply_bulk(c, num, (size_t)ull2str(num, cur));
    reply_array(c, w.n);
    if (w.out.len) buf_add(c->out, w.out.p, w.out.len);
    buf_free(&w.out);
}

/* ---- the command table ---- */

#define ONEKEY .first = 1, .last = 1, .step = 1
static const command rows[] = {
    {.name = "zadd",
     .kflags = KS_RW | KS_UPDATE,
     .proc = zadd_cmd,
     .arity = -4,
     .flags = CMD_WRITE | CMD_DENYOOM | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "1.2.0",
     .acl = "write sortedset fast",
     .summary = "Add one or more members to a sorted set, or update its score if it already exists"},
    {.name = "zincrby",
     .kflags = KS_RW | KS_ACCESS | KS_UPDATE,
     .proc = zincrby_cmd,
     .arity = 4,
     .flags = CMD_WRITE | CMD_DENYOOM | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "1.2.0",
     .acl = "write sortedset fast",
     .summary = "Increment the score of a member in a sorted set"},
    {.name = "zrem",
     .kflags = KS_RW | KS_DELETE,
     .proc = zrem_cmd,
     .arity = -3,
     .flags = CMD_WRITE | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "1.2.0",
     .acl = "write sortedset fast",
     .summary = "Remove one or more members from a sorted set"},
    {.name = "zcard",
     .kflags = KS_RO,
     .proc = zcard_cmd,
     .arity = 2,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "1.2.0",
     .acl = "read sortedset fast",
     .summary = "Get the number of members in a sorted set"},
    {.name = "zscore",
     .kflags = KS_RO | KS_ACCESS,
     .proc = zscore_cmd,
     .arity = 3,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "1.2.0",
     .acl = "read sortedset fast",
     .summary = "Get the score associated with the given member in a sorted set"},
    {.name = "zmscore",
     .kflags = KS_RO | KS_ACCESS,
     .proc = zmscore_cmd,
     .arity = -3,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "6.2.0",
     .acl = "read sortedset fast",
     .summary = "Get the score associated with the given members in a sorted set"},
    {.name = "zrank",
     .kflags = KS_RO | KS_ACCESS,
     .proc = zrank_cmd,
     .arity = 3,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "2.0.0",
     .acl = "read sortedset fast",
     .summary = "Determine the index of a member in a sorted set"},
    {.name = "zrevrank",
     .kflags = KS_RO | KS_ACCESS,
     .proc = zrevrank_cmd,
     .arity = 3,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "2.0.0",
     .acl = "read sortedset fast",
     .summary = "Determine the index of a member in a sorted set, with scores ordered from high to low"},
    {.name = "zcount",
     .kflags = KS_RO | KS_ACCESS,
     .proc = zcount_cmd,
     .arity = 4,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "2.0.0",
     .acl = "read sortedset fast",
     .summary = "Count the members in a sorted set with scores within the given values"},
    {.name = "zlexcount",
     .kflags = KS_RO | KS_ACCESS,
     .proc = zlexcount_cmd,
     .arity = 4,
     .flags = CMD_READONLY | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "2.8.9",
     .acl = "read sortedset fast",
     .summary = "Count the number of members in a sorted set between a given lexicographical range"},
    {.name = "zpopmin",
     .kflags = KS_RW | KS_ACCESS | KS_DELETE,
     .proc = zpopmin_cmd,
     .arity = -2,
     .flags = CMD_WRITE | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "5.0.0",
     .acl = "write sortedset fast",
     .summary = "Remove and return members with the lowest scores in a sorted set"},
    {.name = "zpopmax",
     .kflags = KS_RW | KS_ACCESS | KS_DELETE,
     .proc = zpopmax_cmd,
     .arity = -2,
     .flags = CMD_WRITE | CMD_FAST,
     ONEKEY,
     .group = "sorted_set",
     .since = "5.0.0",
     .acl = "write sortedset fast",
     .summary = "Remove and return members with the highest scores in a sorted set"},
    {.name = "zmpop",
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_KEYNUM(0, 1, 1)}),
     .hops = cross_gather,
     .proc = zmpop_cmd,
     .arity = -4,
     .flags = CMD_WRITE | CMD_MOVABLEKEYS,
     .keys = zmpop_keys,
     .group = "sorted_set",
     .since = "7.0.0",
     .acl = "write sortedset slow",
     .summary = "Remove and return members with scores in a sorted set"},
    {.name = "zrandmember",
     .kflags = KS_RO | KS_ACCESS,
     .proc = zrandmember_cmd,
     .arity = -2,
     .flags = CMD_READONLY,
     ONEKEY,
     .group = "sorted_set",
     .since = "6.2.0",
     .acl = "read sortedset slow",
     .summary = "Get one or multiple random elements from a sorted set"},
    {.name = "zscan",
     .kflags = KS_RO | KS_ACCESS,
     .proc = zscan_cmd,
     .arity = -3,
     .flags = CMD_READONLY,
     ONEKEY,
     .group = "sorted_set",
     .since = "2.8.0",
     .acl = "read sortedset slow",
     .summary = "Incrementally iterate sorted sets elements and associated scores"},
};

void zset_register(void) {
    db_register_type(T_ZSET, &zset_ops);
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
    zset_range_register();
    zset_algebra_register();
}
