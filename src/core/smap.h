/* smap.h - hash map from byte-string field to byte-string value: the large
 * ("hashtable") encoding of hashes and sets, and the member -> score half of
 * big sorted sets (see zindex.h).
 *
 * Each element is ONE allocation; the map's kind, fixed at creation, says
 * what follows the field:
 *
 *   0        8           8+v
 *   +--------+-----------+--------+-----------------------------------+
 *   | next   | flen (v)  | field  | value part                        |
 *   +--------+-----------+--------+-----------------------------------+
 *     SMAP_SET    nothing                    "1234"          13 B -> 16
 *     SMAP_BYTES  vlen (varint) + bytes      "field0001"->8B 27 B -> 32
 *     SMAP_U64    8 raw bytes (unaligned)    "member0001"    27 B -> 32
 *
 * next is the bucket chain link, v the LEB128 length (1 byte below 128).
 * The table is an array of element pointers sized to a power of two, grown
 * at load factor 1 and shrunk below 1/8, always incrementally: while a
 * resize runs there are two arrays and every lookup/insert/delete moves one
 * bucket. smap_scan uses the reverse-binary cursor, valid across resizes.
 *
 * Pointers to elements stay valid until that element is deleted or its
 * BYTES value is replaced (replacing may reallocate it; rehashing never
 * moves elements). Not thread-safe: one owner thread at a time. */
#ifndef SHOAL_SMAP_H
#define SHOAL_SMAP_H
#include "core/entry.h" /* varint_get / varint_len / varint_put */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { SMAP_SET = 0, SMAP_BYTES = 1, SMAP_U64 = 2 };

typedef struct smap smap;
typedef struct smap_elem {
    struct smap_elem *next;
    uint8_t data[]; /* flen varint, field, value part */
} smap_elem;

/* An empty map of the given kind (SMAP_SET, SMAP_BYTES or SMAP_U64). */
smap *smap_create(int kind);
/* Frees the map and every element; sets *m to NULL. NULL-safe. */
void smap_free(smap **m);
int smap_kind(const smap *m);
/* Number of elements. O(1). */
size_t smap_size(const smap *m);
/* Bucket slots over both arrays (for tests and INFO-like reporting). */
size_t smap_buckets(const smap *m);
/* Bytes allocated for the map: struct, bucket arrays and elements
 * (allocator block sizes, exact). O(1). */
size_t smap_mem_usage(const smap *m);

/* Adds field -> value when field is absent. Returns 1 if added, 0 if the
 * field existed (nothing changed). Value bytes: ignored for SMAP_SET,
 * exactly 8 for SMAP_U64. field/value are copied. */
int smap_add(smap *m, const char *f, size_t fl, const char *v, size_t vl);
/* Sets field to value, adding it when absent; *added (may be NULL) gets 1
 * for a new field, 0 for a replaced value. Returns the element, valid as
 * described above. v must not point into this map. */
smap_elem *smap_set(smap *m, const char *f, size_t fl, const char *v, size_t vl, int *added);
/* The element of field, or NULL. */
smap_elem *smap_find(smap *m, const char *f, size_t fl);
/* Value bytes of field and their length, or NULL when absent (for SMAP_SET
 * a non-NULL pointer with *vl = 0). Valid until the element changes. */
const char *smap_get(smap *m, const char *f, size_t fl, size_t *vl);
int smap_exists(smap *m, const char *f, size_t fl);
/* Deletes field; returns 1 if it was present. */
int smap_delete(smap *m, const char *f, size_t fl);
/* Deletes element e, which must be in m (its bytes are read, then freed). */
void smap_remove(smap *m, smap_elem *e);

/* Field bytes of an element of any kind. */
static inline const char *smap_elem_field(const smap_elem *e, size_t *len) {
    uint64_t l;
    size_t h = varint_get(e->data, &l);
    *len = (size_t)l;
    return (const char *)e->data + h;
}
/* Value bytes of an element of m (SMAP_U64: the 8 raw bytes). */
const char *smap_elem_value(const smap *m, const smap_elem *e, size_t *len);
/* The 8-byte value of an SMAP_U64 element; set it in place (never moves). */
static inline uint64_t smap_elem_u64(const smap_elem *e) {
    size_t l;
    const char *f = smap_elem_field(e, &l);
    uint64_t v;
    memcpy(&v, f + l, 8);
    return v;
}
static inline void smap_elem_set_u64(smap_elem *e, uint64_t v) {
    size_t l;
    const char *f = smap_elem_field(e, &l);
    memcpy((char *)f + l, &v, 8);
}

/* Safe iteration: every element present for the whole iteration is
 * returned exactly once. While an iterator is live, resizing is paused and
 * the caller may delete (smap_delete/smap_remove) or replace the value of
 * the element last returned, and may add elements (which may or may not
 * be returned); deleting any other element is not allowed. Every
 * smap_iter_start must be matched by smap_iter_stop. */
typedef struct smap_iter {
    smap *m;
    smap_elem *next;
    uint64_t bucket;
    int table;
} smap_iter;
void smap_iter_start(smap_iter *it, smap *m);
/* The next element, or NULL when done. */
smap_elem *smap_iter_next(smap_iter *it);
void smap_iter_stop(smap_iter *it);

/* Calls fn for the elements of one cursor step (start with 0); returns the
 * next cursor, 0 when done. Across calls the map may change freely: every
 * element present for the whole scan is reported at least once (some may be
 * reported more than once). fn must not change the map. */
uint64_t smap_scan(smap *m, uint64_t cursor, void (*fn)(void *ud, smap_elem *e), void *ud);
/* A random element (NULL when empty); rnd returns uniform 64-bit values.
 * Chosen by bucket then chain position, so not perfectly uniform (as
 * Redis's dictGetRandomKey). */
smap_elem *smap_random(smap *m, uint64_t (*rnd)(void));
/* Fills out[] with min(k, size) distinct elements chosen uniformly (every
 * element when k >= size, in table order); returns how many. O(k) expected
 * for small k, one pass over the map when k is over a third of it. */
size_t smap_sample(smap *m, size_t k, smap_elem **out, uint64_t (*rnd)(void));
/* Moves up to n buckets of a running resize (no-op while iterating);
 * returns 1 while more remain. Lookups do this by themselves. */
int smap_rehash_step(smap *m, int n);
#endif
