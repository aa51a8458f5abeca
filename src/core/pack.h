/* pack.h - a packed array of small values in one allocation (shoal's
 * listpack): the compact encoding of small hashes, sorted sets and of each
 * quicklist node.
 *
 *   0        4        8
 *   +--------+--------+---------+---------+-----+---------+
 *   | bytes  | count  | entry 0 | entry 1 | ... | entry n |    (no end byte)
 *   +--------+--------+---------+---------+-----+---------+
 *   bytes: total size of the block, count: number of entries (both uint32,
 *   little-endian).
 *
 *   entry = tag [more header] [payload] backlen
 *     0xxxxxxx                 integer 0..127
 *     10llllll  + l bytes      string of 0..63 bytes
 *     110vvvvv vvvvvvvv        integer -4096..4095 (13-bit two's complement)
 *     1110llll llllllll + l    string of 64..4095 bytes
 *     1111 0kkk + k+1 bytes    integer in k+1 = 2..8 bytes, little-endian
 *     11111000 len32 + len     string of 4096.. bytes
 *   backlen: size of tag+header+payload in 7-bit groups, the lowest group in
 *   the last byte, a high bit on every byte but the first, so the entry
 *   before any position can be found by reading backwards.
 *
 * Every value has exactly one encoding: a string that is a canonical
 * integer ("123", "-5"; not "0123", "+1", "-0") is stored as that integer in
 * the fewest bytes, and reads back as the same string. pack_validate checks
 * all of this on untrusted bytes.
 *
 * A position is the byte offset of an entry inside the block (a cursor);
 * 0 means "no entry". pack_bytes(p) is the end position: valid for
 * pack_insert (appends) and pack_prev (gives the last entry), never for
 * reading. Positions and string pointers from pack_get stay valid until the
 * next call that changes the pack. Functions that change a pack return the
 * (possibly moved) block; the old pointer must not be used again.
 * A pack belongs to one thread at a time; no locking inside. */
#ifndef SHOAL_PACK_H
#define SHOAL_PACK_H
#include <stddef.h>
#include <stdint.h>

typedef struct pack pack;

/* Callers keep a pack under this size (Redis's listpack safety limit) and
 * convert to another encoding before; see pack_safe_to_add. */
#define PACK_SAFETY_LIMIT (1u << 30)
/* Size of the buffer pack_val_str needs to spell an integer. */
#define PACK_INTBUF 24

/* One element as read: a string (s != NULL, len bytes) or an integer v
 * (s == NULL). */
typedef struct pack_val {
    const char *s;
    size_t len;
    int64_t v;
} pack_val;

/* An empty pack (8 bytes). Never NULL (out of memory aborts). */
pack *pack_create(void);
/* Frees *p (may be NULL) and sets *p to NULL. */
void pack_destroy(pack **p);
/* A copy of p, owned by the caller. */
pack *pack_dup(const pack *p);
/* Validates len bytes of untrusted data (e.g. from RESTORE) and returns a
 * new pack holding a copy, or NULL when the bytes are not a valid pack. */
pack *pack_load(const void *blob, size_t len);
/* 1 when len bytes at blob are a well-formed pack: header sizes agree,
 * every entry lies inside the block, its backlen is right, every value is
 * in its one canonical encoding and count matches. Never reads outside
 * [blob, blob+len). */
int pack_validate(const void *blob, size_t len);

/* Number of elements, O(1). */
size_t pack_count(const pack *p);
/* Size of the block in bytes (the serialized form is the block itself). */
size_t pack_bytes(const pack *p);
/* Bytes one element with this string value would take inside a pack. */
size_t pack_entry_size(const char *s, size_t len);
/* 1 when adding `add` more bytes keeps the pack within PACK_SAFETY_LIMIT. */
int pack_safe_to_add(const pack *p, size_t add);

/* Cursors. Each returns a position, or 0 when there is no such entry. */
size_t pack_first(const pack *p);
size_t pack_last(const pack *p);
/* Entry after the one at pos; 0 after the last. */
size_t pack_next(const pack *p, size_t pos);
/* Entry before pos (pos may be the end position); 0 before the first. */
size_t pack_prev(const pack *p, size_t pos);
/* Entry at index i (negative counts from the tail, -1 = last), walking from
 * the nearer end; 0 when out of range. */
size_t pack_index(const pack *p, long i);

/* Reads the entry at pos (a valid position). */
void pack_get(const pack *p, size_t pos, pack_val *out);
/* pack_get, then pack_next in one step (the tag is decoded once). */
size_t pack_get_next(const pack *p, size_t pos, pack_val *out);
/* The element as bytes: v->s itself, or the integer spelled into buf
 * (PACK_INTBUF bytes). Sets *len. */
const char *pack_val_str(const pack_val *v, char *buf, size_t *len);
/* 1 and *out set when the element is an integer (or a string that parses
 * as one, strictly); else 0. */
int pack_val_int(const pack_val *v, int64_t *out);
/* 1 when the entry at pos equals the string s (byte-wise, integers
 * compared by their decimal form). */
int pack_eq(const pack *p, size_t pos, const char *s, size_t len);
/* memcmp-style order of the entry at pos against s (binary, shorter
 * prefix first): <0, 0, >0. */
int pack_cmp(const pack *p, size_t pos, const char *s, size_t len);
/* First entry equal to s, looking at pos, then every (skip+1)-th entry
 * after it (skip = 1 visits only the fields of field/value pairs). Returns
 * its position or 0. pos 0 means the first entry. */
size_t pack_find(const pack *p, size_t pos, const char *s, size_t len, size_t skip);

/* Inserts a value before the entry at pos (pos = pack_bytes appends); the
 * new element is at pos afterwards. s may point into p itself. */
pack *pack_insert(pack *p, size_t pos, const char *s, size_t len);
pack *pack_insert_int(pack *p, size_t pos, int64_t v);
pack *pack_append(pack *p, const char *s, size_t len);
pack *pack_append_int(pack *p, int64_t v);
pack *pack_prepend(pack *p, const char *s, size_t len);
/* Replaces the entry at pos; the new value is at pos afterwards. s may
 * point into p itself. */
pack *pack_replace(pack *p, size_t pos, const char *s, size_t len);
pack *pack_replace_int(pack *p, size_t pos, int64_t v);
/* Deletes up to n entries starting at pos (fewer if the pack ends first).
 * Afterwards pos holds the entry that followed them, or is the end
 * position (== pack_bytes) when they were the last. */
pack *pack_delete(pack *p, size_t pos, size_t n);
/* Deletes up to n entries starting at index i (negative from the tail);
 * nothing when i is out of range. */
pack *pack_delete_range(pack *p, long i, size_t n);
/* Moves the entries from pos to the end into a new pack, which is returned
 * (empty when pos is the end position); *p keeps the ones before pos. */
pack *pack_split(pack **p, size_t pos);
/* The entries of a followed by those of b, in one pack; takes ownership of
 * both (b is freed). */
pack *pack_merge(pack *a, pack *b);
#endif
