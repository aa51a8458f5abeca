/* buf.c - see buf.h. Growth doubles up to 1 MiB, then adds 1 MiB steps. */
#include "lib/buf.h"
#include "lib/mem.h"
#include <stdarg.h>
#include <stdio.h>

void buf_grow(buf *b, size_t extra) {
    size_t need = b->len + extra;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap < (1u << 20) ? cap * 2 : cap + (1u << 20);
    b->p = zrealloc(b->p, cap);
    b->cap = zmalloc_size(b->p);
}

void buf_grow_exact(buf *b, size_t extra) {
    size_t need = b->len + extra;
    if (need <= b->cap) return;
    b->p = zrealloc(b->p, need);
    b->cap = zmalloc_size(b->p);
}

void buf_free(buf *b) {
    zfree(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

void buf_consume(buf *b, size_t n) {
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}

void buf_insert(buf *b, size_t at, const void *s, size_t n) {
    buf_reserve(b, n);
    memmove(b->p + at + n, b->p + at, b->len - at);
    memcpy(b->p + at, s, n);
    b->len += n;
}

void buf_printf(buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        buf_add(b, tmp, (size_t)n);
        return;
    }
    buf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}
