/* listpack.h - Redis's listpack byte format, as it appears inside RDB files
 * and DUMP payloads, converted to and from shoal's pack (core/pack.h).
 *
 *   +--------+--------+---------+-----+---------+------+
 *   | bytes  | count  | entry 0 | ... | entry n | 0xff |
 *   +--------+--------+---------+-----+---------+------+
 *   bytes: uint32 LE total size; count: uint16 LE (65535 = "count them");
 *   entry = encoding [length] [payload] backlen, with Redis's encodings:
 *     0xxxxxxx 7-bit uint | 10llllll 6-bit string length | 110xxxxx + 1
 *     13-bit int | 1110llll + 1 12-bit string length | 11110000 + 4 32-bit
 *     string length | f1/f2/f3/f4 + 2/3/4/8 bytes int (LE)
 *   backlen: size of encoding+length+payload, 1..5 bytes read backwards.
 *
 * The two formats differ in integer widths, the count width and the end
 * byte, so conversion re-encodes every element. Thread-safe (no state). */
#ifndef SHOAL_PERSIST_LISTPACK_H
#define SHOAL_PERSIST_LISTPACK_H
#include "core/hpack.h"
#include "core/pack.h"
#include "lib/buf.h"
#include <stddef.h>
#include <stdint.h>

/* Builds a Redis listpack in a buf: rlp_begin, rlp_add_* per element,
 * rlp_end (fills in the header). */
typedef struct rlp_writer {
    buf *out;
    size_t start;
    size_t count;
} rlp_writer;
void rlp_begin(rlp_writer *w, buf *out);
/* Adds a string; a canonical int64 spelling is stored as an integer, as
 * Redis's lpAppend does. */
void rlp_add_str(rlp_writer *w, const char *s, size_t len);
void rlp_add_int(rlp_writer *w, int64_t v);
void rlp_end(rlp_writer *w);
/* Appends the Redis listpack holding p's elements to out. */
void rlp_from_pack(buf *out, const pack *p);
/* Appends the Redis listpack of h's pairs (field, value, ...) to out. */
void rlp_from_hpack(buf *out, const hpack *h);

/* Reads a Redis listpack from untrusted bytes. rlp_open validates all of
 * it first (header size equals n, every entry inside the block with a
 * well-formed encoding and matching backlen, 0xff exactly at the end,
 * count matching when not 65535) and returns 0, or -1 when malformed; then
 * rlp_next yields each element. Never reads outside [b, b+n). */
typedef struct rlp_reader {
    const uint8_t *b;
    size_t n, pos, count;
} rlp_reader;
int rlp_open(rlp_reader *r, const void *b, size_t n);
/* 1 and the next element in *v (strings point into the block), 0 at end. */
int rlp_next(rlp_reader *r, pack_val *v);
/* A new pack with the listpack's elements, or NULL when it is malformed;
 * rlp_to_list_node makes it a fixed pack (a list node; core/pack.h). */
pack *rlp_to_pack(const void *b, size_t n);
pack *rlp_to_list_node(const void *b, size_t n);
#endif
