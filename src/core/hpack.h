/* hpack.h - a small hash's field/value pairs packed in one allocation (the
 * "listpack" encoding of hashes).
 *
 *   0        4        8
 *   +--------+--------+--------+--------+-----+--------+
 *   | bytes  | count  | pair 0 | pair 1 | ... | pair n |    (no end byte)
 *   +--------+--------+--------+--------+-----+--------+
 *   bytes: total size of the block, count: number of pairs (both uint32,
 *   little-endian).
 *
 *   pair, short form: t < 0xF0, then t >> 4 field bytes (0..14) and t & 15
 *                     value bytes (0..15), raw
 *   pair, long form:  0xF0, then the field and the value as pack elements
 *                     (core/pack.h's codec: canonical integers compact, any
 *                     length), without backlens
 *
 * A pair takes the short form exactly when its field has at most 14 bytes
 * and its value at most 15, so a pair of short strings costs one byte on top
 * of its bytes (a listpack spends four: a tag and a backlen per element).
 * Pairs are only ever walked forwards, in insertion order.
 *
 * A position is the byte offset of a pair inside the block; 0 means "no
 * pair". Positions and strings read stay valid until the next call that
 * changes the hpack. Functions that change it return the (possibly moved)
 * block; the old pointer must not be used again. One thread at a time. */
#ifndef SHOAL_HPACK_H
#define SHOAL_HPACK_H
#include "core/pack.h"
#include <stddef.h>

typedef struct hpack hpack;

/* An empty hpack (8 bytes). Never NULL. */
hpack *hpack_create(void);
/* Frees *h (may be NULL) and sets *h to NULL. */
void hpack_destroy(hpack **h);
/* A copy owned by the caller. */
hpack *hpack_dup(const hpack *h);

/* Number of pairs, O(1). */
size_t hpack_count(const hpack *h);
/* Size of the block in bytes. */
size_t hpack_bytes(const hpack *h);
/* Bytes a pair of these strings takes. */
size_t hpack_pair_size(const char *f, size_t fl, const char *v, size_t vl);

/* The first pair, the pair after pos, the i-th pair (0-based, walking from
 * the front); 0 when there is none. */
size_t hpack_first(const hpack *h);
size_t hpack_next(const hpack *h, size_t pos);
size_t hpack_index(const hpack *h, size_t i);
/* Reads the pair at pos (either output may be NULL). Integers of the long
 * form come back as pack_val integers (s == NULL). */
void hpack_get(const hpack *h, size_t pos, pack_val *f, pack_val *v);
/* The pair whose field equals f (byte-wise), or 0. */
size_t hpack_find(const hpack *h, const char *f, size_t fl);

/* Adds a pair at the end (the field must not be present). f and v must not
 * point into h. */
hpack *hpack_append(hpack *h, const char *f, size_t fl, const char *v, size_t vl);
/* Gives the pair at pos the value v (v must not point into h); the pair
 * stays at pos. */
hpack *hpack_replace(hpack *h, size_t pos, const char *v, size_t vl);
/* Deletes the pair at pos. */
hpack *hpack_delete(hpack *h, size_t pos);
#endif
