/* lpk.h - Redis's listpack, in memory, as the nodes of a stream hold it.
 *
 *   +----------+---------+---------+-----+---------+------+
 *   | bytes(4) | count(2)| elem 0  | ... | elem n  | 0xff |
 *   +----------+---------+---------+-----+---------+------+
 *   elem = encoding [length] [payload] backlen(1..5, read right to left)
 *
 * A stream node is exactly these bytes, so an RDB or DUMP of a stream
 * writes the node as it is and a loader validates it (lpk_validate) and
 * keeps it. Elements are strings or integers (a string with a canonical
 * int64 spelling is stored as an integer, as lpAppend does). Positions are
 * byte offsets from the start; 0 means "none". Owned by whoever holds the
 * pointer; functions that grow it return the new pointer. */
#ifndef SHOAL_LPK_H
#define SHOAL_LPK_H
#include <stddef.h>
#include <stdint.h>

typedef uint8_t lpk;

#define LPK_HDR 6
#define LPK_INTBUF 24

/* An element as read: a string (s != NULL) or an integer v. */
typedef struct lpv {
    const char *s;
    size_t len;
    int64_t v;
} lpv;

lpk *lpk_new(void);
static inline size_t lpk_bytes(const lpk *l) {
    return (size_t)l[0] | ((size_t)l[1] << 8) | ((size_t)l[2] << 16) | ((size_t)l[3] << 24);
}
/* Encoded size (with backlen) of a string / an integer element. */
size_t lpk_str_size(const char *s, size_t n);
size_t lpk_int_size(int64_t v);
/* Writes one element at dst (its size as above); returns the size. */
size_t lpk_put_str(uint8_t *dst, const char *s, size_t n);
size_t lpk_put_int(uint8_t *dst, int64_t v);
/* Appends `n` bytes of already encoded elements (nelem of them). */
lpk *lpk_append_raw(lpk *l, const uint8_t *p, size_t n, unsigned nelem);
/* First element, the one after / before pos; 0 when there is none. */
size_t lpk_first(const lpk *l);
size_t lpk_next(const lpk *l, size_t pos);
size_t lpk_prev(const lpk *l, size_t pos);
size_t lpk_last(const lpk *l);
void lpk_get(const lpk *l, size_t pos, lpv *out);
/* The element as an integer (strings are parsed; 0 when not a number). */
int64_t lpk_get_int(const lpk *l, size_t pos);
/* The element as a string: integers are spelled into buf (LPK_INTBUF). */
const char *lpk_get_str(const lpk *l, size_t pos, char *buf, size_t *len);
/* Replaces the element at pos by the integer v; the pack may move. */
lpk *lpk_replace_int(lpk *l, size_t pos, int64_t v);
/* Full check of untrusted bytes: header size n, every element inside with
 * a valid encoding and backlen, 0xff exactly at the end, the header count
 * right unless 65535. 0 and *count (elements) when valid, else -1. */
int lpk_validate(const uint8_t *p, size_t n, size_t *count);
#endif
