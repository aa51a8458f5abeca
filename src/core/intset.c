/* intset.c - sorted integer array (layout drawn in intset.h).
 *
 * Values are read and written through get_at/set_at, which handle the
 * width and little-endian order byte by byte, so the code does not depend
 * on the host's endianness or on alignment. */
#include "core/intset.h"
#include "lib/mem.h"
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define HDR 8
#define BLK(s) ((uint8_t *)(s))
#define CBLK(s) ((const uint8_t *)(s))

static uint32_t rd32(const uint8_t *b) {
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}
static void wr32(uint8_t *b, uint32_t v) {
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static size_t width(const intset *s) { return rd32(CBLK(s)); }
static size_t count(const intset *s) { return rd32(CBLK(s) + 4); }
static void set_header(intset *s, size_t w, size_t n) {
    if (n > UINT32_MAX) abort(); /* callers convert to a hash table long before */
    wr32(BLK(s), (uint32_t)w);
    wr32(BLK(s) + 4, (uint32_t)n);
}

static int64_t load(const uint8_t *b, size_t w) {
    uint64_t u = 0;
    for (size_t i = 0; i < w; i++)
        u |= (uint64_t)b[i] << (8 * i);
    if (w < 8 && (u >> (8 * w - 1)) & 1) u |= ~(uint64_t)0 << (8 * w);
    return (int64_t)u;
}
static void store(uint8_t *b, size_t w, int64_t v) {
    uint64_t u = (uint64_t)v;
    for (size_t i = 0; i < w; i++)
        b[i] = (uint8_t)(u >> (8 * i));
}

static int64_t get_at(const intset *s, size_t w, size_t i) { return load(CBLK(s) + HDR + i * w, w); }
static void set_at(intset *s, size_t w, size_t i, int64_t v) { store(BLK(s) + HDR + i * w, w, v); }

static size_t width_for(int64_t v) {
    if (v >= INT8_MIN && v <= INT8_MAX) return 1;
    if (v >= INT16_MIN && v <= INT16_MAX) return 2;
    if (v >= INT32_MIN && v <= INT32_MAX) return 4;
    return 8;
}

/* Binary search: 1 and *at = index when found, else 0 and *at = the index
 * where v would go. */
static int search(const intset *s, int64_t v, size_t *at) {
    size_t w = width(s), lo = 0, hi = count(s);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t x = get_at(s, w, mid);
        if (x == v) {
            *at = mid;
            return 1;
        }
        if (x < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    *at = lo;
    return 0;
}

intset *intset_create(void) {
    intset *s = zmalloc(HDR);
    set_header(s, 1, 0);
    return s;
}

void intset_destroy(intset **s) {
    if (!s) return;
    zfree(*s);
    *s = NULL;
}

intset *intset_dup(const intset *s) {
    size_t n = intset_bytes(s);
    intset *d = zmalloc(n);
    memcpy(d, s, n);
    return d;
}

int intset_validate(const void *blob, size_t len) {
    const uint8_t *b = blob;
    if (!b || len < HDR) return 0;
    size_t w = rd32(b), n = rd32(b + 4);
    if (w != 1 && w != 2 && w != 4 && w != 8) return 0;
    if ((len - HDR) % w != 0 || (len - HDR) / w != n) return 0;
    for (size_t i = 1; i < n; i++)
        if (load(b + HDR + (i - 1) * w, w) >= load(b + HDR + i * w, w)) return 0;
    return 1;
}

intset *intset_load(const void *blob, size_t len) {
    if (!intset_validate(blob, len) || rd32(blob) == 1) return NULL;
    intset *s = zmalloc(len);
    memcpy(s, blob, len);
    return s;
}

intset *intset_from_sorted(const int64_t *v, size_t n, int min_width) {
    size_t w = (size_t)min_width;
    if (n > 0 && width_for(v[0]) > w) w = width_for(v[0]);
    if (n > 0 && width_for(v[n - 1]) > w) w = width_for(v[n - 1]);
    intset *s = zmalloc(HDR + n * w);
    set_header(s, w, n);
    for (size_t i = 0; i < n; i++)
        set_at(s, w, i, v[i]);
    assert(intset_validate(s, intset_bytes(s)));
    return s;
}

intset *intset_widen(const intset *s, int nw) {
    size_t w = width(s), n = count(s);
    if ((size_t)nw <= w) return intset_dup(s);
    intset *d = zmalloc(HDR + n * (size_t)nw);
    set_header(d, (size_t)nw, n);
    for (size_t i = 0; i < n; i++)
        set_at(d, (size_t)nw, i, get_at(s, w, i));
    return d;
}

/* Rewrites every value in the wider width nw and adds v, which lies outside
 * the current range: first when negative, last otherwise. */
static intset *upgrade_add(intset *s, size_t nw, int64_t v) {
    size_t w = width(s), n = count(s);
    int front = v < 0;
    s = zrealloc(s, HDR + (n + 1) * nw);
    for (size_t i = n; i-- > 0;)
        set_at(s, nw, i + (size_t)front, get_at(s, w, i)); /* back to front: no overlap */
    set_at(s, nw, front ? 0 : n, v);
    set_header(s, nw, n + 1);
    return s;
}

intset *intset_add(intset *s, int64_t v, int *added) {
    size_t w = width(s), n = count(s), at;
    if (added) *added = 1;
    if (width_for(v) > w) return upgrade_add(s, width_for(v), v);
    if (search(s, v, &at)) {
        if (added) *added = 0;
        return s;
    }
    s = zrealloc(s, HDR + (n + 1) * w);
    memmove(BLK(s) + HDR + (at + 1) * w, BLK(s) + HDR + at * w, (n - at) * w);
    set_at(s, w, at, v);
    set_header(s, w, n + 1);
    return s;
}

intset *intset_remove(intset *s, int64_t v, int *removed) {
    size_t w = width(s), n = count(s), at;
    if (removed) *removed = 0;
    if (width_for(v) > w || !search(s, v, &at)) return s;
    memmove(BLK(s) + HDR + at * w, BLK(s) + HDR + (at + 1) * w, (n - at - 1) * w);
    s = zrealloc(s, HDR + (n - 1) * w);
    set_header(s, w, n - 1);
    if (removed) *removed = 1;
    return s;
}

int intset_find(const intset *s, int64_t v) {
    size_t at;
    return width_for(v) <= width(s) && search(s, v, &at);
}

int64_t intset_get(const intset *s, size_t i) {
    assert(i < count(s));
    return get_at(s, width(s), i);
}

int64_t intset_random(const intset *s, uint64_t (*rnd)(void)) {
    assert(count(s) > 0);
    return get_at(s, width(s), (size_t)(rnd() % count(s)));
}

size_t intset_len(const intset *s) { return count(s); }
size_t intset_bytes(const intset *s) { return HDR + count(s) * width(s); }
int intset_width(const intset *s) { return (int)width(s); }
