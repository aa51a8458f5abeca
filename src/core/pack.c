/* pack.c - the packed array (layout drawn in pack.h).
 *
 * Writing goes through an `enc`: the header bytes of one value worked out
 * once (an integer, or a string's length tier plus a pointer to its bytes),
 * so that sizing, reallocating and copying can be done in that order. Reads
 * decode the tag byte in place. Every mutation reallocates the block to its
 * exact new size; mimalloc keeps the block in place while it stays in its
 * size class, so appends are cheap. */
#include "core/pack.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define HDR 8
#define BLK(p) ((uint8_t *)(p))
#define CBLK(p) ((const uint8_t *)(p))

static uint32_t rd32(const uint8_t *b) {
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}
static void wr32(uint8_t *b, uint32_t v) {
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}

/* The count word: its top bit marks a lean pack (no backlens), the next
 * one a fixed pack, whose word then holds the width in bits 22..29 (0 while
 * the pack is empty and has not chosen one) and the count in bits 0..21. A
 * pack has at most PACK_SAFETY_LIMIT (2^30) bytes, so an ordinary count
 * never reaches the flags; a fixed pack turns ordinary before its count
 * outgrows its 22 bits. */
#define LEAN_BIT 0x80000000u
#define FIXED_BIT 0x40000000u
#define FLAG_BITS (LEAN_BIT | FIXED_BIT)
#define WIDTH_SHIFT 22
#define FIXED_COUNT_MAX ((1u << WIDTH_SHIFT) - 1)
#define FIXED_WIDTH_MAX 255

static uint32_t cword(const pack *p) { return rd32(CBLK(p) + 4); }
static size_t hbytes(const pack *p) { return rd32(CBLK(p)); }
static int is_lean(const pack *p) { return (cword(p) & LEAN_BIT) != 0; }
static int is_fixed(const pack *p) { return (cword(p) & FIXED_BIT) != 0; }
/* A fixed pack's width (0: not chosen yet). */
static size_t fwidth(const pack *p) { return (cword(p) >> WIDTH_SHIFT) & FIXED_WIDTH_MAX; }
static size_t hcount(const pack *p) {
    uint32_t w = cword(p);
    return w & (w & FIXED_BIT ? FIXED_COUNT_MAX : ~FLAG_BITS);
}
/* Sets size and count, keeping the flags; a fixed pack keeps its width
 * until it is empty. */
static void set_header(pack *p, size_t bytes, size_t count) {
    uint32_t w = cword(p), keep = w & FLAG_BITS;
    if (w & FIXED_BIT) {
        if (count > FIXED_COUNT_MAX) abort(); /* fixed_takes turns the pack ordinary first */
        if (count) keep = w & ~FIXED_COUNT_MAX;
    }
    if (bytes > UINT32_MAX || count >= FIXED_BIT) abort(); /* callers keep packs under PACK_SAFETY_LIMIT */
    wr32(BLK(p), (uint32_t)bytes);
    wr32(BLK(p) + 4, (uint32_t)count | keep);
}

/* ---- backlen ---- */

static size_t backlen_size(size_t l) {
    size_t n = 1;
    while (l >= 128) {
        l >>= 7;
        n++;
    }
    return n;
}
static void backlen_put(uint8_t *dst, size_t l, size_t n) {
    for (size_t i = n; i-- > 0;) {
        dst[i] = (uint8_t)((l & 0x7f) | (i > 0 ? 0x80 : 0));
        l >>= 7;
    }
}
/* Reads the backlen that ends just before `end`, never going below `lo`.
 * Returns the length, or SIZE_MAX when malformed. */
static size_t backlen_get(const uint8_t *lo, const uint8_t *end, size_t *nbytes) {
    size_t v = 0, n = 0;
    const uint8_t *q = end;
    for (;;) {
        if (q <= lo || n == 5) return SIZE_MAX;
        q--;
        v |= (size_t)(*q & 0x7f) << (7 * n);
        n++;
        if (!(*q & 0x80)) break;
    }
    *nbytes = n;
    return v;
}

/* ---- encoding ---- */

typedef struct enc {
    uint8_t h[9];  /* tag and header (or the whole integer) */
    size_t hlen;   /* bytes of h used */
    const char *s; /* string payload, NULL for integers */
    size_t slen;   /* payload bytes */
    size_t body;   /* hlen + slen: what backlen encodes */
    size_t total;  /* body + backlen */
} enc;

/* Bytes a signed integer needs in the k-byte form (k = 2..8). */
static int int_width(int64_t v) {
    for (int k = 2; k < 8; k++) {
        int64_t lim = (int64_t)1 << (8 * k - 1);
        if (v >= -lim && v < lim) return k;
    }
    return 8;
}

static void enc_finish(enc *e) {
    e->body = e->hlen + e->slen;
    e->total = e->body + backlen_size(e->body);
}
/* Drops the backlen from e when it goes into a lean pack. */
static void enc_for(const pack *p, enc *e) {
    if (is_lean(p)) e->total = e->body;
}

static void enc_int(enc *e, int64_t v) {
    e->s = NULL;
    e->slen = 0;
    if (v >= 0 && v <= 127) {
        e->h[0] = (uint8_t)v;
        e->hlen = 1;
    } else if (v >= -4096 && v <= 4095) {
        uint64_t u = (uint64_t)v;
        e->h[0] = (uint8_t)(0xC0 | ((u >> 8) & 0x1F));
        e->h[1] = (uint8_t)u;
        e->hlen = 2;
    } else {
        int k = int_width(v);
        uint64_t u = (uint64_t)v;
        e->h[0] = (uint8_t)(0xF0 | (k - 1));
        for (int i = 0; i < k; i++)
            e->h[1 + i] = (uint8_t)(u >> (8 * i));
        e->hlen = 1 + (size_t)k;
    }
    enc_finish(e);
}

/* A canonical integer string becomes an integer; 1 if so. */
static int as_int(const char *s, size_t len, int64_t *v) {
    long long x;
    if (len == 0 || len > 20 || !str2ll(s, len, &x)) return 0;
    *v = x;
    return 1;
}

static void enc_str(enc *e, const char *s, size_t len) {
    int64_t v;
    if (as_int(s, len, &v)) {
        enc_int(e, v);
        return;
    }
    e->s = s;
    e->slen = len;
    if (len <= 63) {
        e->h[0] = (uint8_t)(0x80 | len);
        e->hlen = 1;
    } else if (len <= 4095) {
        e->h[0] = (uint8_t)(0xE0 | (len >> 8));
        e->h[1] = (uint8_t)len;
        e->hlen = 2;
    } else {
        if (len > UINT32_MAX) abort(); /* over the 4 GiB format limit; see PACK_SAFETY_LIMIT */
        e->h[0] = 0xF8;
        wr32(e->h + 1, (uint32_t)len);
        e->hlen = 5;
    }
    enc_finish(e);
}

static void enc_write(uint8_t *dst, const enc *e) {
    memcpy(dst, e->h, e->hlen);
    if (e->slen) memcpy(dst + e->hlen, e->s, e->slen);
    if (e->total > e->body) backlen_put(dst + e->body, e->body, e->total - e->body);
}

/* ---- decoding (trusted blocks) ---- */

/* Size of tag+header+payload of the entry starting at b. */
static size_t body_len(const uint8_t *b) {
    uint8_t t = b[0];
    if (t < 0x80) return 1;
    if (t < 0xC0) return 1 + (size_t)(t & 0x3F);
    if (t < 0xE0) return 2;
    if (t < 0xF0) return 2 + (((size_t)(t & 0x0F) << 8) | b[1]);
    if (t < 0xF8) return 2 + (size_t)(t & 0x07);
    return 5 + (size_t)rd32(b + 1);
}
static size_t entry_len(const pack *p, const uint8_t *b) {
    if (is_fixed(p)) return fwidth(p);
    size_t l = body_len(b);
    return is_lean(p) ? l : l + backlen_size(l);
}

static int64_t sign_extend(uint64_t u, int bits) {
    if (bits < 64 && (u >> (bits - 1)) & 1) u |= ~(uint64_t)0 << bits;
    return (int64_t)u;
}

static void decode(const uint8_t *b, pack_val *out) {
    uint8_t t = b[0];
    out->s = NULL;
    out->len = 0;
    out->v = 0;
    if (t < 0x80) {
        out->v = t;
    } else if (t < 0xC0) {
        out->s = (const char *)b + 1;
        out->len = t & 0x3F;
    } else if (t < 0xE0) {
        out->v = sign_extend(((uint64_t)(t & 0x1F) << 8) | b[1], 13);
    } else if (t < 0xF0) {
        out->s = (const char *)b + 2;
        out->len = ((size_t)(t & 0x0F) << 8) | b[1];
    } else if (t < 0xF8) {
        int k = (t & 0x07) + 1;
        uint64_t u = 0;
        for (int i = 0; i < k; i++)
            u |= (uint64_t)b[1 + i] << (8 * i);
        out->v = sign_extend(u, 8 * k);
    } else {
        out->s = (const char *)b + 5;
        out->len = rd32(b + 1);
    }
}

/* Reads the entry at pos of p. */
static void read_at(const pack *p, size_t pos, pack_val *out) {
    if (!is_fixed(p)) {
        decode(CBLK(p) + pos, out);
        return;
    }
    out->s = (const char *)CBLK(p) + pos;
    out->len = fwidth(p);
    out->v = 0;
}

static int is_int_tag(uint8_t t) { return t < 0x80 || (t >= 0xC0 && t < 0xE0) || (t >= 0xF0 && t < 0xF8); }

static void check_pos(const pack *p, size_t pos) {
    (void)p;
    (void)pos;
    assert(pos >= HDR && pos < hbytes(p));
}

/* ---- life cycle ---- */

pack *pack_create(void) {
    pack *p = zmalloc(HDR);
    wr32(BLK(p) + 4, 0);
    set_header(p, HDR, 0);
    return p;
}

pack *pack_create_lean(void) {
    pack *p = pack_create();
    wr32(BLK(p) + 4, LEAN_BIT);
    return p;
}

pack *pack_create_fixed(void) {
    pack *p = pack_create();
    wr32(BLK(p) + 4, FIXED_BIT);
    return p;
}

int pack_is_lean(const pack *p) { return is_lean(p); }
int pack_is_fixed(const pack *p) { return is_fixed(p) && fwidth(p) > 0; }

void pack_destroy(pack **p) {
    if (!p) return;
    zfree(*p);
    *p = NULL;
}

pack *pack_dup(const pack *p) {
    size_t n = hbytes(p);
    pack *q = zmalloc(n);
    memcpy(q, p, n);
    return q;
}

pack *pack_load(const void *blob, size_t len) {
    if (!pack_validate(blob, len)) return NULL;
    pack *q = zmalloc(len);
    memcpy(q, blob, len);
    return q;
}

/* Header bytes (tag included) of the entry whose tag is t. */
static size_t header_len(uint8_t t) {
    if (t < 0xC0) return 1;
    if (t < 0xF0) return 2;
    if (t < 0xF8) return 2 + (size_t)(t & 0x07);
    return 5;
}

/* 1 when the entry at b (inside [b, end)) is in canonical form, with a
 * backlen unless lean; sets *total. */
static int validate_entry(const uint8_t *b, const uint8_t *end, int lean, size_t *total) {
    uint8_t t = b[0];
    if (t > 0xF8 || t == 0xF0) return 0;
    if ((size_t)(end - b) < header_len(t)) return 0;
    size_t body = body_len(b);
    if (body > (size_t)(end - b)) return 0;
    size_t need = lean ? 0 : backlen_size(body);
    if ((size_t)(end - b) - body < need) return 0;
    uint8_t want[5];
    backlen_put(want, body, need);
    if (memcmp(b + body, want, need) != 0) return 0;
    /* the value must be in its one canonical encoding */
    pack_val v;
    decode(b, &v);
    enc e;
    if (v.s)
        enc_str(&e, v.s, v.len);
    else
        enc_int(&e, v.v);
    if (e.hlen + e.slen != body || memcmp(e.h, b, e.hlen) != 0) return 0;
    *total = body + need;
    return 1;
}

/* The entries of a fixed pack: count * width bytes of strings that are
 * not canonical integers. */
static int validate_fixed(const uint8_t *b, size_t len) {
    uint32_t w = rd32(b + 4);
    size_t width = (w >> WIDTH_SHIFT) & FIXED_WIDTH_MAX, count = w & FIXED_COUNT_MAX;
    if (w & LEAN_BIT || (width == 0) != (count == 0) || len - HDR != count * width) return 0;
    for (size_t off = HDR; off < len; off += width) {
        int64_t v;
        if (as_int((const char *)b + off, width, &v)) return 0;
    }
    return 1;
}

int pack_validate(const void *blob, size_t len) {
    const uint8_t *b = blob;
    if (!b || len < HDR || len > UINT32_MAX || rd32(b) != len) return 0;
    if (rd32(b + 4) & FIXED_BIT) return validate_fixed(b, len);
    size_t count = rd32(b + 4) & ~FLAG_BITS, n = 0, off = HDR;
    int lean = (rd32(b + 4) & LEAN_BIT) != 0;
    while (off < len) {
        size_t total;
        if (!validate_entry(b + off, b + len, lean, &total)) return 0;
        off += total;
        n++;
    }
    return n == count;
}

/* ---- reading ---- */

size_t pack_count(const pack *p) { return hcount(p); }
size_t pack_bytes(const pack *p) { return hbytes(p); }

size_t pack_elem_size(const char *s, size_t len) {
    enc e;
    enc_str(&e, s, len);
    return e.body;
}

size_t pack_elem_put(uint8_t *dst, const char *s, size_t len) {
    enc e;
    enc_str(&e, s, len);
    memcpy(dst, e.h, e.hlen);
    if (e.slen) memcpy(dst + e.hlen, e.s, e.slen);
    return e.body;
}

size_t pack_elem_get(const uint8_t *b, pack_val *out) {
    decode(b, out);
    return body_len(b);
}

int pack_safe_to_add(const pack *p, size_t add) {
    size_t cur = p ? hbytes(p) : HDR;
    return add <= PACK_SAFETY_LIMIT && cur + add <= PACK_SAFETY_LIMIT;
}

size_t pack_first(const pack *p) { return hbytes(p) > HDR ? HDR : 0; }

size_t pack_last(const pack *p) { return pack_prev(p, hbytes(p)); }

size_t pack_next(const pack *p, size_t pos) {
    check_pos(p, pos);
    size_t n = pos + entry_len(p, CBLK(p) + pos);
    return n < hbytes(p) ? n : 0;
}

size_t pack_skip(const pack *p, size_t pos, size_t n) {
    const uint8_t *b = CBLK(p);
    size_t end = hbytes(p);
    int lean = is_lean(p);
    assert(pos >= HDR && pos <= end);
    if (is_fixed(p)) {
        size_t w = fwidth(p);
        return pos < end && n < (end - pos) / w ? pos + n * w : 0;
    }
    while (n-- > 0 && pos < end) {
        size_t l = body_len(b + pos);
        pos += lean ? l : l + backlen_size(l);
    }
    return pos < end ? pos : 0;
}

size_t pack_prev(const pack *p, size_t pos) {
    assert(pos >= HDR && pos <= hbytes(p));
    if (pos <= HDR) return 0;
    if (is_fixed(p)) return pos - fwidth(p);
    if (is_lean(p)) { /* no backlens: walk from the front */
        size_t q = HDR, n;
        while ((n = q + entry_len(p, CBLK(p) + q)) < pos)
            q = n;
        return q;
    }
    size_t nb;
    size_t body = backlen_get(CBLK(p) + HDR, CBLK(p) + pos, &nb);
    assert(body != SIZE_MAX && body + nb <= pos - HDR);
    return pos - body - nb;
}

size_t pack_index(const pack *p, long i) {
    size_t n = hcount(p);
    if (i < 0) i += (long)n;
    if (i < 0 || (size_t)i >= n) return 0;
    if (is_fixed(p)) return HDR + (size_t)i * fwidth(p);
    size_t pos;
    if ((size_t)i <= n / 2 || is_lean(p)) {
        pos = HDR;
        while (i-- > 0)
            pos += entry_len(p, CBLK(p) + pos);
    } else {
        pos = hbytes(p);
        for (size_t k = n - (size_t)i; k > 0; k--)
            pos = pack_prev(p, pos);
    }
    return pos;
}

void pack_get(const pack *p, size_t pos, pack_val *out) {
    check_pos(p, pos);
    read_at(p, pos, out);
}

const char *pack_val_str(const pack_val *v, char *buf, size_t *len) {
    if (v->s) {
        *len = v->len;
        return v->s;
    }
    *len = (size_t)ll2str(buf, v->v);
    return buf;
}

int pack_val_int(const pack_val *v, int64_t *out) {
    if (!v->s) {
        *out = v->v;
        return 1;
    }
    return as_int(v->s, v->len, out);
}

/* A search key: the integer, or the string, that a canonical entry equal to
 * (s, len) must hold. */
typedef struct key {
    int is_int;
    int64_t v;
    const char *s;
    size_t len;
} key;

static void key_make(key *k, const char *s, size_t len) {
    k->s = s;
    k->len = len;
    k->is_int = as_int(s, len, &k->v);
}

/* 1 when the entry at pos of p holds the key. */
static int key_match(const pack *p, size_t pos, const key *k) {
    const uint8_t *b = CBLK(p) + pos;
    if (is_fixed(p)) return !k->is_int && k->len == fwidth(p) && memcmp(b, k->s, k->len) == 0;
    if (is_int_tag(b[0]) != k->is_int) return 0;
    pack_val v;
    decode(b, &v);
    if (k->is_int) return v.v == k->v;
    return v.len == k->len && (k->len == 0 || memcmp(v.s, k->s, k->len) == 0);
}

int pack_eq(const pack *p, size_t pos, const char *s, size_t len) {
    check_pos(p, pos);
    key k;
    key_make(&k, s, len);
    return key_match(p, pos, &k);
}

int pack_cmp(const pack *p, size_t pos, const char *s, size_t len) {
    pack_val v;
    char buf[PACK_INTBUF];
    size_t el;
    pack_get(p, pos, &v);
    const char *e = pack_val_str(&v, buf, &el);
    size_t m = el < len ? el : len;
    int r = m ? memcmp(e, s, m) : 0;
    if (r) return r;
    return el < len ? -1 : el > len ? 1 : 0;
}

size_t pack_find(const pack *p, size_t pos, const char *s, size_t len, size_t skip) {
    size_t end = hbytes(p);
    if (pos == 0) pos = HDR;
    key k;
    key_make(&k, s, len);
    while (pos < end) {
        if (key_match(p, pos, &k)) return pos;
        pos += entry_len(p, CBLK(p) + pos);
        for (size_t i = 0; i < skip && pos < end; i++)
            pos += entry_len(p, CBLK(p) + pos);
    }
    return 0;
}

/* ---- writing ---- */

/* Replaces the old_total bytes at pos (0: a pure insert) with the entry e,
 * moving the tail, and adds dcount to the element count. e->s may point
 * into p: it is copied aside first, since the block may move. */
static pack *put_at(pack *p, size_t pos, size_t old_total, const enc *e0, long dcount) {
    enc e = *e0;
    enc_for(p, &e);
    size_t bytes = hbytes(p);
    char *tmp = NULL;
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes, sp = (uintptr_t)e.s;
    if (e.s && e.slen && sp >= lo && sp < hi) {
        tmp = zmalloc(e.slen);
        memcpy(tmp, e.s, e.slen);
        e.s = tmp;
    }
    size_t nbytes = bytes - old_total + e.total;
    size_t tail = bytes - pos - old_total;
    if (e.total > old_total) {
        p = zrealloc(p, nbytes);
        memmove(BLK(p) + pos + e.total, BLK(p) + pos + old_total, tail);
    } else if (e.total < old_total) {
        memmove(BLK(p) + pos + e.total, BLK(p) + pos + old_total, tail);
        p = zrealloc(p, nbytes);
    }
    enc_write(BLK(p) + pos, &e);
    set_header(p, nbytes, (size_t)((long)hcount(p) + dcount));
    zfree(tmp);
    return p;
}

/* ---- fixed packs ---- */

/* 1 when the fixed pack p takes (s, len) as it is: a string of its width
 * (of any width up to FIXED_WIDTH_MAX while p is empty) that is not a
 * canonical integer, with room left in the count. */
static int fixed_takes(const pack *p, const char *s, size_t len) {
    size_t w = fwidth(p);
    int64_t v;
    return len > 0 && (w ? len == w : len <= FIXED_WIDTH_MAX) && hcount(p) < FIXED_COUNT_MAX &&
           !as_int(s, len, &v);
}

/* Size of an entry holding the fixed pack p's element at pos in an ordinary
 * pack (the same for every element of p). */
static size_t unfixed_entry(const pack *p, size_t pos) {
    enc e;
    enc_str(&e, (const char *)CBLK(p) + pos, fwidth(p));
    return e.total;
}

/* Size p has, or would have once turned ordinary when it is fixed. */
static size_t ordinary_bytes(const pack *p) {
    if (!is_fixed(p)) return hbytes(p);
    return hcount(p) ? HDR + hcount(p) * unfixed_entry(p, HDR) : HDR;
}

/* An ordinary pack holding the elements of the fixed pack p (which stays
 * as it is: a string being inserted may point into it); *pos (an entry or
 * the end position, may be NULL) moves along. */
static pack *unfixed_copy(const pack *p, size_t *pos) {
    size_t n = hcount(p), w = fwidth(p), nbytes = ordinary_bytes(p);
    pack *q = zmalloc(nbytes);
    wr32(BLK(q) + 4, 0);
    set_header(q, nbytes, n);
    for (size_t i = 0, off = HDR; i < n; i++) {
        enc e;
        enc_str(&e, (const char *)CBLK(p) + HDR + i * w, w);
        enc_write(BLK(q) + off, &e);
        off += e.total;
    }
    if (pos && n) *pos = HDR + (*pos - HDR) / w * ((nbytes - HDR) / n);
    return q;
}

/* p itself, or p turned ordinary when it is fixed. */
static pack *unfix(pack *p) {
    if (!is_fixed(p)) return p;
    pack *q = unfixed_copy(p, NULL);
    zfree(p);
    return q;
}

/* Inserts or (replace = 1) replaces the entry at pos of a fixed pack that
 * takes s, which may point into p. */
static pack *fixed_put(pack *p, size_t pos, int replace, const char *s, size_t len) {
    uint8_t tmp[FIXED_WIDTH_MAX];
    memcpy(tmp, s, len);
    if (!replace) {
        size_t bytes = hbytes(p);
        if (hcount(p) == 0) wr32(BLK(p) + 4, FIXED_BIT | (uint32_t)len << WIDTH_SHIFT);
        p = zrealloc(p, bytes + len);
        memmove(BLK(p) + pos + len, BLK(p) + pos, bytes - pos);
        set_header(p, bytes + len, hcount(p) + 1);
    }
    memcpy(BLK(p) + pos, tmp, len);
    return p;
}

/* Puts the entry e at pos of the fixed pack p, which cannot take it as it
 * is, inserting it or (replace = 1) replacing the entry there; p turns
 * ordinary first. */
static pack *put_unfixed(pack *p, size_t pos, int replace, const enc *e) {
    pack *q = unfixed_copy(p, &pos);
    q = put_at(q, pos, replace ? entry_len(q, CBLK(q) + pos) : 0, e, replace ? 0 : 1);
    zfree(p); /* after put_at: e->s may point into p */
    return q;
}

size_t pack_size_insert(const pack *p, const char *s, size_t len) {
    enc e;
    if (is_fixed(p) && fixed_takes(p, s, len)) return hbytes(p) + len;
    enc_str(&e, s, len);
    enc_for(p, &e);
    return ordinary_bytes(p) + e.total;
}

size_t pack_size_replace(const pack *p, size_t pos, const char *s, size_t len) {
    check_pos(p, pos);
    enc e;
    if (is_fixed(p) && fixed_takes(p, s, len)) return hbytes(p);
    enc_str(&e, s, len);
    enc_for(p, &e);
    size_t old = is_fixed(p) ? unfixed_entry(p, pos) : entry_len(p, CBLK(p) + pos);
    return ordinary_bytes(p) - old + e.total;
}

pack *pack_insert(pack *p, size_t pos, const char *s, size_t len) {
    assert(pos >= HDR && pos <= hbytes(p));
    if (is_fixed(p) && fixed_takes(p, s, len)) return fixed_put(p, pos, 0, s, len);
    enc e;
    enc_str(&e, s, len);
    return is_fixed(p) ? put_unfixed(p, pos, 0, &e) : put_at(p, pos, 0, &e, 1);
}

pack *pack_insert_int(pack *p, size_t pos, int64_t v) {
    assert(pos >= HDR && pos <= hbytes(p));
    enc e;
    enc_int(&e, v);
    return is_fixed(p) ? put_unfixed(p, pos, 0, &e) : put_at(p, pos, 0, &e, 1);
}

pack *pack_append(pack *p, const char *s, size_t len) { return pack_insert(p, hbytes(p), s, len); }
pack *pack_append_int(pack *p, int64_t v) { return pack_insert_int(p, hbytes(p), v); }
pack *pack_prepend(pack *p, const char *s, size_t len) { return pack_insert(p, HDR, s, len); }

pack *pack_replace(pack *p, size_t pos, const char *s, size_t len) {
    check_pos(p, pos);
    if (is_fixed(p) && fixed_takes(p, s, len)) return fixed_put(p, pos, 1, s, len);
    enc e;
    enc_str(&e, s, len);
    return is_fixed(p) ? put_unfixed(p, pos, 1, &e) : put_at(p, pos, entry_len(p, CBLK(p) + pos), &e, 0);
}

pack *pack_replace_int(pack *p, size_t pos, int64_t v) {
    check_pos(p, pos);
    enc e;
    enc_int(&e, v);
    return is_fixed(p) ? put_unfixed(p, pos, 1, &e) : put_at(p, pos, entry_len(p, CBLK(p) + pos), &e, 0);
}

pack *pack_delete(pack *p, size_t pos, size_t n) {
    size_t bytes = hbytes(p);
    assert(pos >= HDR && pos <= bytes);
    size_t end = pos, k = 0;
    while (k < n && end < bytes) {
        end += entry_len(p, CBLK(p) + end);
        k++;
    }
    if (k == 0) return p;
    memmove(BLK(p) + pos, BLK(p) + end, bytes - end);
    size_t nbytes = bytes - (end - pos);
    p = zrealloc(p, nbytes);
    set_header(p, nbytes, hcount(p) - k);
    return p;
}

pack *pack_delete_range(pack *p, long i, size_t n) {
    size_t pos = pack_index(p, i);
    return pos ? pack_delete(p, pos, n) : p;
}

pack *pack_split(pack **pp, size_t pos) {
    pack *p = *pp;
    size_t bytes = hbytes(p);
    assert(pos >= HDR && pos <= bytes);
    size_t k = 0;
    for (size_t o = pos; o < bytes; o += entry_len(p, CBLK(p) + o))
        k++;
    pack *q = zmalloc(HDR + bytes - pos);
    memcpy(q, p, HDR); /* the lean flag */
    memcpy(BLK(q) + HDR, BLK(p) + pos, bytes - pos);
    set_header(q, HDR + bytes - pos, k);
    size_t left = hcount(p) - k;
    p = zrealloc(p, pos);
    set_header(p, pos, left);
    *pp = p;
    return q;
}

/* 1 when the blocks of a and b (neither empty) join as they are: neither
 * is fixed, or both are, with one width and room in the count. */
static int joins_raw(const pack *a, const pack *b) {
    if (!is_fixed(a) && !is_fixed(b)) return 1;
    return is_fixed(a) && is_fixed(b) && fwidth(a) == fwidth(b) && hcount(a) + hcount(b) <= FIXED_COUNT_MAX;
}

size_t pack_size_merge(const pack *a, const pack *b) {
    if (!hcount(a) || !hcount(b)) return hcount(a) ? hbytes(a) : hbytes(b);
    if (joins_raw(a, b)) return hbytes(a) + hbytes(b) - HDR;
    return ordinary_bytes(a) + ordinary_bytes(b) - HDR;
}

pack *pack_merge(pack *a, pack *b) {
    assert(is_lean(a) == is_lean(b));
    if (!hcount(a) || !hcount(b)) {
        pack *keep = hcount(a) ? a : b;
        zfree(keep == a ? b : a);
        return keep;
    }
    if (!joins_raw(a, b)) {
        a = unfix(a);
        b = unfix(b);
    }
    size_t ab = hbytes(a), bb = hbytes(b) - HDR;
    size_t count = hcount(a) + hcount(b);
    a = zrealloc(a, ab + bb);
    memcpy(BLK(a) + ab, BLK(b) + HDR, bb);
    set_header(a, ab + bb, count);
    zfree(b);
    return a;
}
