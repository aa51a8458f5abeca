/* hpack.c - the packed pairs of a small hash (layout drawn in hpack.h).
 *
 * The header words are kept in native byte order: an hpack is never
 * serialized as is (RDB and DUMP convert it to Redis's listpack, see
 * persist/listpack.c). Every change reallocates the block to its exact new
 * size, which mimalloc does in place while the size class holds. */
#include "core/hpack.h"
#include "lib/mem.h"
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HDR 8
#define LONG_TAG 0xF0
#define SHORT_FIELD_MAX 14
#define SHORT_VALUE_MAX 15

#define BLK(h) ((uint8_t *)(h))
#define CBLK(h) ((const uint8_t *)(h))

static uint32_t word(const hpack *h, int i) {
    uint32_t v;
    memcpy(&v, CBLK(h) + 4 * i, 4);
    return v;
}
static void set_header(hpack *h, size_t bytes, size_t count) {
    if (bytes > UINT32_MAX || count > UINT32_MAX) abort(); /* callers stay under PACK_SAFETY_LIMIT */
    uint32_t w[2] = {(uint32_t)bytes, (uint32_t)count};
    memcpy(h, w, sizeof w);
}

static int is_short(size_t fl, size_t vl) { return fl <= SHORT_FIELD_MAX && vl <= SHORT_VALUE_MAX; }

/* Size of the pair starting at b. */
static size_t pair_len(const uint8_t *b) {
    if (b[0] != LONG_TAG) return 1 + (size_t)(b[0] >> 4) + (b[0] & 15);
    pack_val v;
    size_t n = 1 + pack_elem_get(b + 1, &v);
    return n + pack_elem_get(b + n, &v);
}

/* Writes the pair at dst; returns its size. */
static size_t pair_put(uint8_t *dst, const char *f, size_t fl, const char *v, size_t vl) {
    if (is_short(fl, vl)) {
        dst[0] = (uint8_t)(fl << 4 | vl);
        if (fl) memcpy(dst + 1, f, fl);
        if (vl) memcpy(dst + 1 + fl, v, vl);
        return 1 + fl + vl;
    }
    dst[0] = LONG_TAG;
    size_t n = 1 + pack_elem_put(dst + 1, f, fl);
    return n + pack_elem_put(dst + n, v, vl);
}

hpack *hpack_create(void) {
    hpack *h = zmalloc(HDR);
    set_header(h, HDR, 0);
    return h;
}

void hpack_destroy(hpack **h) {
    if (!h) return;
    zfree(*h);
    *h = NULL;
}

hpack *hpack_dup(const hpack *h) {
    hpack *q = zmalloc(hpack_bytes(h));
    memcpy(q, h, hpack_bytes(h));
    return q;
}

size_t hpack_count(const hpack *h) { return word(h, 1); }
size_t hpack_bytes(const hpack *h) { return word(h, 0); }

size_t hpack_pair_size(const char *f, size_t fl, const char *v, size_t vl) {
    if (is_short(fl, vl)) return 1 + fl + vl;
    return 1 + pack_elem_size(f, fl) + pack_elem_size(v, vl);
}

size_t hpack_first(const hpack *h) { return hpack_bytes(h) > HDR ? HDR : 0; }

size_t hpack_next(const hpack *h, size_t pos) {
    assert(pos >= HDR && pos < hpack_bytes(h));
    size_t n = pos + pair_len(CBLK(h) + pos);
    return n < hpack_bytes(h) ? n : 0;
}

size_t hpack_index(const hpack *h, size_t i) {
    if (i >= hpack_count(h)) return 0;
    size_t pos = HDR;
    while (i-- > 0)
        pos += pair_len(CBLK(h) + pos);
    return pos;
}

void hpack_get(const hpack *h, size_t pos, pack_val *f, pack_val *v) {
    assert(pos >= HDR && pos < hpack_bytes(h));
    const uint8_t *b = CBLK(h) + pos;
    pack_val tmp;
    if (!f) f = &tmp;
    if (!v) v = &tmp;
    if (b[0] != LONG_TAG) {
        size_t fl = b[0] >> 4;
        *f = (pack_val){.s = (const char *)b + 1, .len = fl};
        *v = (pack_val){.s = (const char *)b + 1 + fl, .len = b[0] & 15};
        return;
    }
    size_t n = 1 + pack_elem_get(b + 1, f);
    pack_elem_get(b + n, v);
}

size_t hpack_find(const hpack *h, const char *f, size_t fl) {
    size_t end = hpack_bytes(h);
    for (size_t pos = HDR; pos < end;) {
        const uint8_t *b = CBLK(h) + pos;
        if (b[0] != LONG_TAG) {
            if ((size_t)(b[0] >> 4) == fl && (fl == 0 || memcmp(b + 1, f, fl) == 0)) return pos;
            pos += 1 + (size_t)(b[0] >> 4) + (b[0] & 15);
            continue;
        }
        pack_val k;
        char buf[PACK_INTBUF];
        size_t kl;
        pack_elem_get(b + 1, &k);
        const char *ks = pack_val_str(&k, buf, &kl);
        if (kl == fl && (fl == 0 || memcmp(ks, f, fl) == 0)) return pos;
        pos += pair_len(b);
    }
    return 0;
}

/* Replaces the old_len bytes at pos with the pair (f, v) and adds dcount
 * to the pair count. */
static hpack *put_at(hpack *h, size_t pos, size_t old_len, const char *f, size_t fl, const char *v, size_t vl,
                     long dcount) {
    size_t bytes = hpack_bytes(h), len = hpack_pair_size(f, fl, v, vl);
    size_t nbytes = bytes - old_len + len, tail = bytes - pos - old_len;
    if (len > old_len) {
        h = zrealloc(h, nbytes);
        memmove(BLK(h) + pos + len, BLK(h) + pos + old_len, tail);
    } else if (len < old_len) {
        memmove(BLK(h) + pos + len, BLK(h) + pos + old_len, tail);
        h = zrealloc(h, nbytes);
    }
    pair_put(BLK(h) + pos, f, fl, v, vl);
    set_header(h, nbytes, (size_t)((long)hpack_count(h) + dcount));
    return h;
}

hpack *hpack_append(hpack *h, const char *f, size_t fl, const char *v, size_t vl) {
    return put_at(h, hpack_bytes(h), 0, f, fl, v, vl, 1);
}

hpack *hpack_replace(hpack *h, size_t pos, const char *v, size_t vl) {
    pack_val fv;
    char buf[PACK_INTBUF];
    size_t fl;
    hpack_get(h, pos, &fv, NULL);
    const char *f = pack_val_str(&fv, buf, &fl);
    /* the field may point into h, which put_at moves: copy it aside */
    char small[64], *fc = fl <= sizeof small ? small : zmalloc(fl);
    memcpy(fc, f, fl);
    h = put_at(h, pos, pair_len(CBLK(h) + pos), fc, fl, v, vl, 0);
    if (fc != small) zfree(fc);
    return h;
}

hpack *hpack_delete(hpack *h, size_t pos) {
    size_t bytes = hpack_bytes(h), len = pair_len(CBLK(h) + pos);
    memmove(BLK(h) + pos, BLK(h) + pos + len, bytes - pos - len);
    h = zrealloc(h, bytes - len);
    set_header(h, bytes - len, hpack_count(h) - 1);
    return h;
}
