/* intset.h - a sorted set of integers in one allocation, the "intset"
 * encoding of small all-integer sets.
 *
 *   0          4          8
 *   +----------+----------+------+------+-----+
 *   | width    | count    | v[0] | v[1] | ... |   v[0] < v[1] < ... strictly
 *   +----------+----------+------+------+-----+
 *   width: bytes per value, 1, 2, 4 or 8; count: number of values; all
 *   fields little-endian. This is Redis's intset layout, plus a 1-byte
 *   width of our own for sets of values in -128..127 (Redis's narrowest is
 *   2): a block of width 2 or more is byte for byte Redis's, and
 *   intset_widen gives one for RDB and DUMP (at least 2 wide).
 *
 * All values share the width of the widest one: adding a value that does
 * not fit upgrades every value (O(n)); removing never downgrades (as
 * Redis). Lookups are binary searches. Functions that change the set
 * return the (possibly moved) block; the old pointer must not be used
 * again. One thread at a time; no locking inside. */
#ifndef SHOAL_INTSET_H
#define SHOAL_INTSET_H
#include <stddef.h>
#include <stdint.h>

typedef struct intset intset;

/* An empty set of width 1 (8 bytes). Never NULL. */
intset *intset_create(void);
/* Frees *s (may be NULL) and sets *s to NULL. */
void intset_destroy(intset **s);
/* A copy owned by the caller. */
intset *intset_dup(const intset *s);
/* 1 when len bytes at blob are a well-formed intset: a known width (1 too),
 * a count that matches len exactly, values strictly ascending. Never reads
 * outside [blob, blob+len). An empty set is valid. */
int intset_validate(const void *blob, size_t len);
/* A new intset holding a copy of Redis's intset bytes (RDB, RESTORE), or
 * NULL when they fail intset_validate or have width 1, which Redis never
 * writes. */
intset *intset_load(const void *blob, size_t len);
/* The n strictly ascending values v as an intset at least min_width (1, 2,
 * 4, 8) wide: one exact-size block. */
intset *intset_from_sorted(const int64_t *v, size_t n, int min_width);
/* A copy of s at least `width` bytes per value (RDB and DUMP ask for 2). */
intset *intset_widen(const intset *s, int width);

/* Adds v; sets *added (may be NULL) to 1 if it was new, 0 if present. */
intset *intset_add(intset *s, int64_t v, int *added);
/* Removes v; sets *removed (may be NULL) to 1 if it was there. */
intset *intset_remove(intset *s, int64_t v, int *removed);
/* 1 when v is in the set. O(log n). */
int intset_find(const intset *s, int64_t v);
/* The i-th smallest value; i < intset_len(s). */
int64_t intset_get(const intset *s, size_t i);
/* A uniformly chosen value, using rnd() for randomness; the set must not be
 * empty. */
int64_t intset_random(const intset *s, uint64_t (*rnd)(void));
/* Number of values. */
size_t intset_len(const intset *s);
/* Size of the block in bytes (the serialized form is the block itself). */
size_t intset_bytes(const intset *s);
/* Bytes per value: 1, 2, 4 or 8. */
int intset_width(const intset *s);
#endif
