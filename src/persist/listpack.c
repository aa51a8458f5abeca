/* listpack.c - see listpack.h. The writer picks the smallest encoding per
 * element exactly as Redis does, so shoal's DUMP of a small hash is byte
 * for byte redis-server's (before compression). The reader validates the
 * whole block before anything is built from it. */
#include "persist/listpack.h"
#include "lib/util.h"
#include <string.h>

#define LP_HDR 6
#define LP_EOF 0xff
#define LP_COUNT_UNKNOWN 65535

static void put_le(uint8_t *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Writes the backlen of an entry of l bytes into p; returns its size. */
static int backlen_put(uint8_t *p, uint64_t l) {
    uint8_t tmp[5];
    int n = 0;
    do {
        tmp[n++] = (uint8_t)(l & 127);
        l >>= 7;
    } while (l);
    /* tmp[0] is the lowest group: it goes last, every byte but the first
     * (the highest group) carries the continuation bit. */
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(tmp[n - 1 - i] | (i ? 128 : 0));
    return n;
}

static void emit(rlp_writer *w, const uint8_t *hdr, size_t hl, const char *s, size_t len) {
    uint8_t bl[5];
    int bn = backlen_put(bl, hl + len);
    buf_add(w->out, hdr, hl);
    buf_add(w->out, s, len);
    buf_add(w->out, bl, (size_t)bn);
    w->count++;
}

void rlp_begin(rlp_writer *w, buf *out) {
    w->out = out;
    w->start = out->len;
    w->count = 0;
    uint8_t hdr[LP_HDR] = {0};
    buf_add(out, hdr, LP_HDR);
}

void rlp_add_int(rlp_writer *w, int64_t v) {
    uint8_t h[9];
    size_t hl;
    if (v >= 0 && v <= 127) {
        h[0] = (uint8_t)v;
        hl = 1;
    } else if (v >= -4096 && v <= 4095) {
        uint64_t u = (uint64_t)v & 0x1fff;
        h[0] = (uint8_t)(0xc0 | (u >> 8));
        h[1] = (uint8_t)u;
        hl = 2;
    } else if (v >= -32768 && v <= 32767) {
        h[0] = 0xf1;
        put_le(h + 1, (uint64_t)v, 2);
        hl = 3;
    } else if (v >= -8388608 && v <= 8388607) {
        h[0] = 0xf2;
        put_le(h + 1, (uint64_t)v, 3);
        hl = 4;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        h[0] = 0xf3;
        put_le(h + 1, (uint64_t)v, 4);
        hl = 5;
    } else {
        h[0] = 0xf4;
        put_le(h + 1, (uint64_t)v, 8);
        hl = 9;
    }
    emit(w, h, hl, NULL, 0);
}

void rlp_add_str(rlp_writer *w, const char *s, size_t len) {
    long long v;
    if (len <= 20 && len > 0 && str2ll(s, len, &v)) {
        rlp_add_int(w, v);
        return;
    }
    uint8_t h[5];
    size_t hl;
    if (len < 64) {
        h[0] = (uint8_t)(0x80 | len);
        hl = 1;
    } else if (len < 4096) {
        h[0] = (uint8_t)(0xe0 | (len >> 8));
        h[1] = (uint8_t)len;
        hl = 2;
    } else {
        h[0] = 0xf0;
        put_le(h + 1, len, 4);
        hl = 5;
    }
    emit(w, h, hl, s, len);
}

void rlp_end(rlp_writer *w) {
    buf_addc(w->out, (char)LP_EOF);
    uint8_t *hdr = (uint8_t *)w->out->p + w->start;
    put_le(hdr, w->out->len - w->start, 4);
    put_le(hdr + 4, w->count < LP_COUNT_UNKNOWN ? w->count : LP_COUNT_UNKNOWN, 2);
}

/* A pack element: strings as rlp_add_str (which makes canonical integers
 * integers), integers as they are. */
static void add_val(rlp_writer *w, const pack_val *v) {
    if (v->s)
        rlp_add_str(w, v->s, v->len);
    else
        rlp_add_int(w, v->v);
}

void rlp_from_pack(buf *out, const pack *p) {
    rlp_writer w;
    rlp_begin(&w, out);
    for (size_t pos = pack_first(p); pos; pos = pack_next(p, pos)) {
        pack_val v;
        pack_get(p, pos, &v);
        add_val(&w, &v);
    }
    rlp_end(&w);
}

void rlp_from_hpack(buf *out, const hpack *h) {
    rlp_writer w;
    rlp_begin(&w, out);
    for (size_t pos = hpack_first(h); pos; pos = hpack_next(h, pos)) {
        pack_val f, v;
        hpack_get(h, pos, &f, &v);
        add_val(&w, &f);
        add_val(&w, &v);
    }
    rlp_end(&w);
}

/* ---- reading ---- */

/* Size of the entry's encoding+length header and payload at p (avail
 * bytes left before the end byte's position), or 0 when malformed. */
static size_t entry_body(const uint8_t *p, size_t avail, size_t *hl) {
    uint8_t c = p[0];
    size_t len;
    if (c < 0x80) {
        *hl = 1;
        return 1;
    }
    if ((c & 0xc0) == 0x80) {
        *hl = 1;
        len = c & 0x3f;
    } else if ((c & 0xe0) == 0xc0) {
        *hl = 2;
        len = 0;
    } else if ((c & 0xf0) == 0xe0) {
        if (avail < 2) return 0;
        *hl = 2;
        len = ((size_t)(c & 0x0f) << 8) | p[1];
    } else if (c == 0xf0) {
        if (avail < 5) return 0;
        *hl = 5;
        len = (size_t)get_le(p + 1, 4);
    } else if (c == 0xf1) {
        *hl = 3;
        len = 0;
    } else if (c == 0xf2) {
        *hl = 4;
        len = 0;
    } else if (c == 0xf3) {
        *hl = 5;
        len = 0;
    } else if (c == 0xf4) {
        *hl = 9;
        len = 0;
    } else
        return 0; /* 0xf5..0xfe unused, 0xff is the end */
    if (*hl > avail || len > avail - *hl) return 0;
    return *hl + len;
}

/* Reads a backlen ending at p[-1] (no further back than lo); 0 if bad. */
static size_t backlen_get(const uint8_t *lo, const uint8_t *end, int *nbytes) {
    uint64_t v = 0;
    int shift = 0;
    const uint8_t *p = end - 1;
    for (int i = 0; i < 5; i++, p--) {
        if (p < lo) return 0;
        v |= (uint64_t)(*p & 127) << shift;
        if (!(*p & 128)) {
            *nbytes = i + 1;
            return (size_t)v;
        }
        shift += 7;
    }
    return 0;
}

static int backlen_size(size_t l) {
    int n = 1;
    while (l >= 128) {
        l >>= 7;
        n++;
    }
    return n;
}

int rlp_open(rlp_reader *r, const void *blob, size_t n) {
    const uint8_t *b = blob;
    if (n < LP_HDR + 1 || get_le(b, 4) != n || b[n - 1] != LP_EOF) return -1;
    size_t hdr_count = (size_t)get_le(b + 4, 2), count = 0, pos = LP_HDR;
    while (pos < n - 1) {
        size_t hl, body = entry_body(b + pos, n - 1 - pos, &hl);
        if (!body) return -1;
        int bn = backlen_size(body), got;
        if ((size_t)bn > n - 1 - pos - body) return -1;
        const uint8_t *end = b + pos + body + bn;
        if (backlen_get(b + pos + body, end, &got) != body || got != bn) return -1;
        pos += body + (size_t)bn;
        count++;
    }
    if (hdr_count != LP_COUNT_UNKNOWN && hdr_count != count) return -1;
    r->b = b;
    r->n = n;
    r->pos = LP_HDR;
    r->count = count;
    return 0;
}

static int64_t sign_extend(uint64_t u, int bits) {
    uint64_t m = 1ull << (bits - 1);
    return (int64_t)((u ^ m) - m);
}

int rlp_next(rlp_reader *r, pack_val *v) {
    if (r->pos >= r->n - 1) return 0;
    const uint8_t *p = r->b + r->pos;
    size_t hl, body = entry_body(p, r->n - 1 - r->pos, &hl);
    uint8_t c = p[0];
    v->s = NULL;
    v->len = 0;
    if (c < 0x80)
        v->v = c;
    else if ((c & 0xe0) == 0xc0)
        v->v = sign_extend(((uint64_t)(c & 0x1f) << 8) | p[1], 13);
    else if (c == 0xf1)
        v->v = sign_extend(get_le(p + 1, 2), 16);
    else if (c == 0xf2)
        v->v = sign_extend(get_le(p + 1, 3), 24);
    else if (c == 0xf3)
        v->v = sign_extend(get_le(p + 1, 4), 32);
    else if (c == 0xf4)
        v->v = (int64_t)get_le(p + 1, 8);
    else {
        v->s = (const char *)p + hl;
        v->len = body - hl;
    }
    r->pos += body + (size_t)backlen_size(body);
    return 1;
}

/* The elements of the listpack b appended to the empty pack p. */
static pack *fill_pack(const void *b, size_t n, pack *p) {
    rlp_reader r;
    if (rlp_open(&r, b, n) < 0) {
        pack_destroy(&p);
        return NULL;
    }
    pack_val v;
    while (rlp_next(&r, &v))
        p = v.s ? pack_append(p, v.s, v.len) : pack_append_int(p, v.v);
    return p;
}

pack *rlp_to_pack(const void *b, size_t n) { return fill_pack(b, n, pack_create()); }
pack *rlp_to_list_node(const void *b, size_t n) { return fill_pack(b, n, pack_create_fixed()); }
