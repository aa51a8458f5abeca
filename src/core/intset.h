/* intset.h - a sorted set of integers in one allocation, the "intset"
 * encoding of small all-integer sets.
 *
 *   0          4          8
 *   +----------+----------+------+------+-----+
 *   | width    | count    | v[0] | v[1] | ... |   v[0] < v[1] < ... strictly
 *   +----------+----------+------+------+-----+
 *   width: bytes per value, 2, 4 or 8; count: number of values; all fields
 *   little-endian. This is byte for byte Redis's intset layout, so an RDB
 *   or DUMP payload of type "set intset" is the block itself.
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

/* An empty set of width 2 (8 bytes). Never NULL. */
intset *intset_create(void);
/* Frees *s (may be NULL) and sets *s to NULL. */
void intset_destroy(intset **s);
/* A copy owned by the caller. */
intset *intset_dup(const intset *s);
/* 1 when len bytes at blob are a well-formed intset: a known width, a count
 * that matches len exactly, values strictly ascending. Never reads outside
 * [blob, blob+len). An empty set is valid. */
int intset_validate(const void *blob, size_t len);
/* A new intset holding a copy of the bytes, or NULL when they fail
 * intset_validate. */
intset *intset_load(const void *blob, size_t len);

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
/* Bytes per value: 2, 4 or 8. */
int intset_width(const intset *s);
#endif
