/* buf.h - a growable byte buffer (pointer, length, capacity).
 *
 * Used for query buffers, reply buffers and message payloads. The buffer owns
 * its memory (zmalloc); buf_free releases it and leaves an empty buffer.
 * Pointers into p stay valid only until the next call that may grow it. */
#ifndef SHOAL_BUF_H
#define SHOAL_BUF_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

void buf_grow(buf *b, size_t extra);      /* ensure cap >= len + extra */
void buf_grow_exact(buf *b, size_t extra); /* the same, asking for no more than len + extra */
void buf_free(buf *b);
void buf_consume(buf *b, size_t n);       /* drop the first n bytes */
void buf_insert(buf *b, size_t at, const void *s, size_t n);
void buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void buf_reserve(buf *b, size_t extra) {
    if (b->cap - b->len < extra) buf_grow(b, extra);
}
static inline void buf_add(buf *b, const void *s, size_t n) {
    if (n == 0) return;
    buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}
static inline void buf_addc(buf *b, char c) {
    buf_reserve(b, 1);
    b->p[b->len++] = c;
}
static inline void buf_adds(buf *b, const char *s) { buf_add(b, s, strlen(s)); }
#endif
