/* zset.h - the sorted set value, shared by the files of the zset family:
 * zset.c (the object, single-key commands, registration), zset_range.c
 * (ZRANGE and its relatives, the range removals) and zset_algebra.c
 * (ZUNION ZINTER ZDIFF ZINTERCARD and their STOREs).
 *
 * A sorted set is ONE tagged pointer in the keyspace entry:
 *
 *   low bit 0: pack *            "listpack": member, score, member, score...
 *                                ordered by score, ties by member bytes
 *   low bit 1: zset_big * | 1    "skiplist": smap member -> score plus the
 *                                zindex B+tree (core/zindex.h)
 *
 * In a pack a score is an integer entry when it is integral and small
 * (|d| <= 2^53, which also turns -0 into 0, as Redis's listpack does), else
 * a 9-byte string: a 0xff marker and the double's 8 bytes. A new key is a pack unless zset-max-listpack-entries is 0
 * or its first member is longer than zset-max-listpack-value; a pack becomes
 * a zset_big (one way) when adding a NEW member would pass either limit.
 * Store commands build their result and then pick the encoding Redis's
 * zsetConvertToListpackIfNeeded would (zobj_fit).
 *
 * Every function here runs on the shard that owns the value (or under a
 * transaction holding its lock). Functions that change an object return it,
 * possibly moved or converted: the caller stores it back (zs_settle). */
#ifndef SHOAL_CMD_ZSET_H
#define SHOAL_CMD_ZSET_H
#include "cmd/cmd.h"
#include "core/pack.h"
#include "core/zindex.h"
#include "shard/db.h"
#include <stdint.h>

/* ---- the tagged object ---- */

static inline int zobj_is_big(const void *o) { return ((uintptr_t)o & 1) != 0; }
static inline zset_big *zobj_big(const void *o) { return (zset_big *)((uintptr_t)o & ~(uintptr_t)1); }
static inline pack *zobj_pack(const void *o) { return (pack *)o; }
static inline void *zobj_tag_big(zset_big *z) { return (void *)((uintptr_t)z | 1); }

/* An empty object of the encoding Redis picks for a new key whose first
 * member is mlen bytes. */
void *zobj_new(size_t mlen);
void zobj_free(void *o);
size_t zobj_size(const void *o);
/* 1 and *score when member m is present, else 0. */
int zobj_score(void *o, const char *m, size_t ml, double *score);
/* 1 and *rank (0-based, ascending) when m is present, else 0. */
int zobj_rank(void *o, const char *m, size_t ml, size_t *rank);
/* Sets m's score (never NaN), adding m when absent (*added = 1). A new
 * member may convert a pack (see above); an update never does. */
void *zobj_set(void *o, const char *m, size_t ml, double score, int *added);
/* Removes m; *removed = 1 when it was there. */
void *zobj_delete(void *o, const char *m, size_t ml, int *removed);
/* Removes ascending ranks [first, first + n). */
void *zobj_delete_ranks(void *o, size_t first, size_t n);
/* The ascending ranks [*first, *first + count) the range covers; returns
 * count (0 for an empty or inverted range). */
size_t zobj_score_span(void *o, const zscore_range *r, size_t *first);
size_t zobj_lex_span(void *o, const zlex_range *r, size_t *first);
/* o, or the pack holding o's elements when o is a zset_big that fits the
 * listpack limits (then o is freed). For store results. */
void *zobj_fit(void *o);

/* ---- reading elements in rank order ---- */

#define ZCUR_BACK 32
typedef struct zcur {
    void *o;
    size_t pos; /* pack: position of the member entry, 0 past the ends */
    zpos zp;    /* zset_big */
    /* A lean pack cannot step backwards: zcur_seek and zcur_prev keep the
     * member positions of up to ZCUR_BACK pairs before pos here
     * (back[nback - 1] is the pair just before pos), refilled by one walk
     * from the front to rank, pos's rank. */
    uint32_t back[ZCUR_BACK];
    unsigned nback;
    size_t rank;
} zcur;

/* One element as read; m points into the object or into buf. */
typedef struct zitem {
    const char *m;
    size_t ml;
    double score;
    char buf[PACK_INTBUF];
} zitem;

/* Places cu on ascending rank `rank`; returns 1 when there is one. */
int zcur_seek(zcur *cu, void *o, size_t rank);
/* Steps forward / backward; 1 while cu still names an element. */
int zcur_next(zcur *cu);
int zcur_prev(zcur *cu);
/* The element cu names (valid until the object changes). */
void zcur_get(const zcur *cu, zitem *it);

/* Builds an object from elements given in ascending order, with the
 * encoding rules of a growing key (pack, converted past the limits). A
 * size hint above zset-max-listpack-entries starts it as a zset_big, as
 * Redis's ZRANGESTORE does when it knows the count (which keeps a -0). */
typedef struct zbuild {
    void *o;
    size_t hint;
} zbuild;
void zbuild_add(zbuild *b, const char *m, size_t ml, double score);

/* ---- parsing ---- */

/* ZRANGEBYSCORE bounds as Redis's zslParseRange; 0 ok, -1 bad. */
int zs_parse_score_range(cmd_ctx *c, int imin, int imax, zscore_range *r);
/* ZRANGEBYLEX bounds; 0 ok, -1 bad. */
int zs_parse_lex_range(cmd_ctx *c, int imin, int imax, zlex_range *r);
/* A double as Redis's getDoubleFromObject (strtod, no NaN, no spaces). */
int zs_parse_double(const char *s, size_t n, double *d);

/* ---- keyspace ---- */

/* The live entry of argv[i] (NULL when missing), with its database in *dp;
 * reading lookups count a hit or miss. */
entry *zs_lookup(cmd_ctx *c, int i, int reading, db **dp);
/* 1, after replying WRONGTYPE, when e holds another type than a zset. */
int zs_wrong_type(cmd_ctx *c, const entry *e);
/* After a change: stores the (possibly moved) object o back into e, or
 * deletes key argv[i] when o is empty. */
void zs_settle(cmd_ctx *c, db *d, int i, entry *e, void *o);
/* Stores o (NULL or empty: deletes) at argv[i] over any value, without a
 * TTL, and replies its size. Takes ownership of o. */
void zs_store(cmd_ctx *c, int i, void *o);

/* ---- replies ---- */

/* Header of a reply of n elements (with scores: pairs in RESP3, a flat
 * array of 2n in RESP2), then one element. */
void zs_reply_header(cmd_ctx *c, size_t n, int withscores);
void zs_reply_item(cmd_ctx *c, const zitem *it, int withscores);

/* Sub-family registration (called by zset_register). */
/* Parses "numkeys key... MIN|MAX [COUNT n]" with numkeys at argv[at]
 * (ZMPOP, BZMPOP); count -1 when absent. 0 after replying an error. */
int zs_parse_mpop(cmd_ctx *c, int at, int *nkeys, int *max, long long *count);
/* Pops from the zset at argv[i]: with_key_many replies ZMPOP's
 * [key, [[member, score]...]] (count -1 = 1), else BZPOPMIN's
 * [key, member, score]. 1 replied, 0 key missing (nothing replied), -1
 * replied WRONGTYPE. */
int zs_pop_reply(cmd_ctx *c, int i, int max, long long count, int with_key_many);
void zset_range_register(void);
void zset_algebra_register(void);
#endif
