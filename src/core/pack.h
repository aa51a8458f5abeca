/* pack.h - a packed array of small values in one allocation (shoal's
 * listpack): the compact encoding of small sorted sets (lean, below) and of
 * each quicklist node; its element codec also builds hpack (small hashes).
 *
 *   0        4        8
 *   +--------+--------+---------+---------+-----+---------+
 *   | bytes  | count  | entry 0 | entry 1 | ... | entry n |    (no end byte)
 *   +--------+--------+---------+---------+-----+---------+
 *   bytes: total size of the block, count: number of entries (both uint32,
 *   little-endian); the top bit of the count word marks a lean pack.
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
 * A lean pack (pack_create_lean) has no backlens: one byte less per entry,
 * for packs that are small or only walked forwards (sorted sets; list nodes
 * keep backlens for their tail pops). Stepping backwards in a lean pack
 * walks from the front (pack_prev is O(n) there); everything else is the
 * same, and the flag survives every operation.
 *
 * A fixed pack (pack_create_fixed; list nodes) holds its entries with no
 * tag and no backlen while every one is a string of one width w (1..255
 * bytes) that is not a canonical integer: entry i is the w bytes at
 * 8 + i*w, so an 8-byte element costs 8 bytes instead of 10, and stepping,
 * indexing and skipping are arithmetic. The count word then carries a
 * second flag, w in bits 22..29 and the count in bits 0..21. The first
 * value chooses w; a value the pack cannot take so turns it, once, into an
 * ordinary pack (every entry gains its tag and backlen) before it goes in,
 * which moves every position; a fixed pack emptied by deletions chooses
 * again.
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
/* An empty lean pack (no backlens; see the top). */
pack *pack_create_lean(void);
int pack_is_lean(const pack *p);
/* An empty fixed pack (see the top). */
pack *pack_create_fixed(void);
/* 1 when p is a fixed pack holding entries (it has chosen its width). */
int pack_is_fixed(const pack *p);
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
/* The bare element codec (tag, header, payload; no backlen), for formats
 * built from pack elements (core/hpack.h): the size of a string's element,
 * writing it at dst (returns its size), and reading the element at b
 * (trusted bytes; returns its size). */
size_t pack_elem_size(const char *s, size_t len);
size_t pack_elem_put(uint8_t *dst, const char *s, size_t len);
size_t pack_elem_get(const uint8_t *b, pack_val *out);
/* The size p would have after pack_insert of s, after pack_replace of the
 * entry at pos by s, and the size of pack_merge(a, b): what the fill rule
 * of a list node is checked against (a fixed pack may have to turn
 * ordinary, which costs more than the entry). */
size_t pack_size_insert(const pack *p, const char *s, size_t len);
size_t pack_size_replace(const pack *p, size_t pos, const char *s, size_t len);
size_t pack_size_merge(const pack *a, const pack *b);
/* 1 when adding `add` more bytes keeps the pack within PACK_SAFETY_LIMIT. */
int pack_safe_to_add(const pack *p, size_t add);

/* Cursors. Each returns a position, or 0 when there is no such entry. */
size_t pack_first(const pack *p);
size_t pack_last(const pack *p);
/* Entry after the one at pos; 0 after the last. */
size_t pack_next(const pack *p, size_t pos);
/* The entry n entries after pos (n = 0: pos itself); 0 past the last. */
size_t pack_skip(const pack *p, size_t pos, size_t n);
/* Entry before pos (pos may be the end position); 0 before the first. */
size_t pack_prev(const pack *p, size_t pos);
/* Entry at index i (negative counts from the tail, -1 = last), walking from
 * the nearer end; 0 when out of range. */
size_t pack_index(const pack *p, long i);

/* Reads the entry at pos (a valid position). */
void pack_get(const pack *p, size_t pos, pack_val *out);
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
 * new element is at pos afterwards, unless a fixed pack turned ordinary.
 * s may point into p itself. */
pack *pack_insert(pack *p, size_t pos, const char *s, size_t len);
pack *pack_insert_int(pack *p, size_t pos, int64_t v);
pack *pack_append(pack *p, const char *s, size_t len);
pack *pack_append_int(pack *p, int64_t v);
pack *pack_prepend(pack *p, const char *s, size_t len);
/* Replaces the entry at pos; the new value is at pos afterwards, unless a
 * fixed pack turned ordinary. s may point into p itself. */
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
