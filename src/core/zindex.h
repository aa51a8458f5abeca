/* zindex.h - the ordered index of large sorted sets ("skiplist" encoding in
 * Redis's terms), and zset_big, which pairs it with an smap for O(1) ZSCORE.
 *
 * Elements are the smap's SMAP_U64 elements: field = member, value = the
 * score's IEEE bits. The index is a B+tree whose leaves hold pointers to
 * those elements and whose inner nodes hold, per child, its subtree count
 * and a pointer to its first element; so a member's bytes exist once and a
 * member costs its 32-byte element, its bucket slot and ~8-12 bytes of
 * leaf slot:
 *
 *   inner: [ n | child[42] | key[42] (first elem of child) | cnt[42] ]
 *   leaf:  [ prev | next | n | e[61] ] <-> leaf <-> ...   (512 bytes)
 *
 * Order: score ascending, ties by member bytes (memcmp, then shorter
 * first). Scores are never NaN (the caller rejects them). Rank lookups,
 * element at rank, score and lex bounds are O(log n); the lex functions
 * assume every element has the same score, as Redis's BYLEX commands do.
 *
 * Positions (zpos) and element pointers returned stay valid until the next
 * change of the index (positions) or deletion of the element (pointers).
 * One owner thread at a time. */
#ifndef SHOAL_ZINDEX_H
#define SHOAL_ZINDEX_H
#include "core/smap.h"
#include <stddef.h>
#include <stdint.h>

typedef struct zindex zindex;
struct zleaf;
/* A place in the index; leaf == NULL means past either end. */
typedef struct zpos {
    struct zleaf *leaf;
    uint32_t i;
} zpos;

/* Score bound pair as ZRANGEBYSCORE parses them. */
typedef struct zscore_range {
    double min, max;
    int minex, maxex; /* 1: bound is exclusive */
} zscore_range;

enum { ZLEX_MINUS, ZLEX_PLUS, ZLEX_INCL, ZLEX_EXCL };
/* One lex bound: "-", "+", "[member" or "(member" (p/len: the member). */
typedef struct zlex_bound {
    const char *p;
    size_t len;
    int kind;
} zlex_bound;
typedef struct zlex_range {
    zlex_bound min, max;
} zlex_range;
/* Parses a ZRANGEBYLEX bound; p points into s. 0 ok, -1 malformed. */
int zlex_parse(const char *s, size_t n, zlex_bound *out);

/* Score and member of an element of a zset smap. */
static inline double zelem_score(const smap_elem *e) {
    uint64_t u = smap_elem_u64(e);
    double d;
    memcpy(&d, &u, 8);
    return d;
}
static inline const char *zelem_member(const smap_elem *e, size_t *len) { return smap_elem_field(e, len); }
static inline void zelem_set_score(smap_elem *e, double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    smap_elem_set_u64(e, u);
}

zindex *zindex_create(void);
/* Frees the tree nodes (not the elements); sets *z to NULL. NULL-safe. */
void zindex_free(zindex **z);
size_t zindex_size(const zindex *z);
/* Bytes of the tree nodes and the struct (elements not included). */
size_t zindex_mem_usage(const zindex *z);

/* Adds e (score already in it); no element with e's member may be in z. */
void zindex_insert(zindex *z, smap_elem *e);
/* Removes the element with this score and member; returns it (still owned
 * by its smap) or NULL when there is none. */
smap_elem *zindex_delete(zindex *z, double score, const char *m, size_t ml);
/* Removes e, which must be in z. */
void zindex_remove(zindex *z, smap_elem *e);
/* Gives e (which is in z) the new score, moving it as needed. */
void zindex_update(zindex *z, smap_elem *e, double score);

/* 0-based rank of e; 1 if e is in z, else 0. O(log n). */
int zindex_rank(const zindex *z, const smap_elem *e, size_t *rank);
/* Element at 0-based rank (NULL when rank >= size); pos may be NULL. */
smap_elem *zindex_at(const zindex *z, size_t rank, zpos *pos);
/* First element with score >= x (> x when excl), or NULL; pos may be NULL. */
smap_elem *zindex_first_score(const zindex *z, double x, int excl, zpos *pos);
/* Last element with score <= x (< x when excl), or NULL. */
smap_elem *zindex_last_score(const zindex *z, double x, int excl, zpos *pos);
/* First element not below the lex bound min / last not above max. */
smap_elem *zindex_first_lex(const zindex *z, const zlex_bound *min, zpos *pos);
smap_elem *zindex_last_lex(const zindex *z, const zlex_bound *max, zpos *pos);
/* Elements in the range, and (first may be NULL) the rank of the first of
 * them: the range is ranks [*first, *first + count). Empty and inverted
 * ranges give 0. O(log n). */
size_t zindex_score_span(const zindex *z, const zscore_range *r, size_t *first);
size_t zindex_lex_span(const zindex *z, const zlex_range *r, size_t *first);

/* Element at a position, NULL past the ends. */
smap_elem *zpos_elem(const zpos *p);
/* Step a position; return 1 when it still names an element. */
int zpos_next(zpos *p);
int zpos_prev(zpos *p);

/* Delete ranks start..end inclusive (clamped to the size), the score range
 * or the lex range. fn(ud, e) gets each removed element after it left the
 * tree (the owner frees it there). Returns how many were removed. fn must
 * not touch z. O((log n) * removed). */
typedef void (*zindex_fn)(void *ud, smap_elem *e);
size_t zindex_delete_ranks(zindex *z, size_t start, size_t end, zindex_fn fn, void *ud);
size_t zindex_delete_score(zindex *z, const zscore_range *r, zindex_fn fn, void *ud);
size_t zindex_delete_lex(zindex *z, const zlex_range *r, zindex_fn fn, void *ud);

/* Checks every structural invariant (order, counts, keys, links, fill);
 * returns 0 when sound, else a negative code. O(n); for tests. */
int zindex_verify(const zindex *z);

/* ---- zset_big: member -> score smap + zindex over the same elements ---- */
typedef struct zset_big {
    smap *dict; /* SMAP_U64: member -> score bits */
    zindex *idx;
} zset_big;

zset_big *zsetb_create(void);
/* Frees index, map and elements; sets *z to NULL. NULL-safe. */
void zsetb_free(zset_big **z);
size_t zsetb_size(const zset_big *z);
/* Bytes of both halves (elements once). */
size_t zsetb_mem_usage(const zset_big *z);
/* Sets member's score (never NaN), adding the member when absent. Returns
 * 1 when added, 0 when it existed (its score now equals score). ZADD's
 * NX/XX/GT/LT/INCR logic sits above this, using zsetb_find. */
int zsetb_set(zset_big *z, const char *m, size_t ml, double score);
/* The member's element (score via zelem_score), or NULL. */
smap_elem *zsetb_find(zset_big *z, const char *m, size_t ml);
/* 1 and *score when member exists, else 0. */
int zsetb_score(zset_big *z, const char *m, size_t ml, double *score);
/* 1 and *rank (0-based, ascending) when member exists, else 0. */
int zsetb_rank(zset_big *z, const char *m, size_t ml, size_t *rank);
/* Removes member; 1 if it was present. */
int zsetb_delete(zset_big *z, const char *m, size_t ml);
/* Range removals from both halves; return the count removed. */
size_t zsetb_delete_ranks(zset_big *z, size_t start, size_t end);
size_t zsetb_delete_score(zset_big *z, const zscore_range *r);
size_t zsetb_delete_lex(zset_big *z, const zlex_range *r);
#endif
