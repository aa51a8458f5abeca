/* lpk.c - see lpk.h. Encodings (first byte):
 *   0xxxxxxx          7-bit unsigned int
 *   10llllll          string, 6-bit length
 *   110xxxxx + 1      13-bit signed int
 *   1110llll + 1      string, 12-bit length
 *   11110000 + 4      string, 32-bit length (LE)
 *   f1 f2 f3 f4       16/24/32/64-bit signed int (LE) follows
 *   ff                end */
#include "core/lpk.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <string.h>

static void set_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static unsigned hdr_count(const lpk *l) { return (unsigned)l[4] | ((unsigned)l[5] << 8); }
static void set_count(lpk *l, unsigned c) {
    if (c > 65535) c = 65535;
    l[4] = (uint8_t)c;
    l[5] = (uint8_t)(c >> 8);
}

lpk *lpk_new(void) {
    lpk *l = zmalloc(LPK_HDR + 1);
    set_u32(l, LPK_HDR + 1);
    set_count(l, 0);
    l[LPK_HDR] = 0xff;
    return l;
}

static size_t backlen_size(size_t l) { return l < 128 ? 1 : l < 16384 ? 2 : l < 2097152 ? 3 : l < 268435456 ? 4 : 5; }

static size_t put_backlen(uint8_t *p, size_t l) {
    size_t n = backlen_size(l);
    for (size_t i = 0; i < n; i++) { /* the last byte holds the low 7 bits */
        size_t shift = 7 * (n - 1 - i);
        p[i] = (uint8_t)((l >> shift) & 127);
        if (i > 0) p[i] |= 128;
    }
    return n;
}

static size_t int_enc_len(int64_t v) {
    if (v >= 0 && v <= 127) return 1;
    if (v >= -4096 && v <= 4095) return 2;
    if (v >= -32768 && v <= 32767) return 3;
    if (v >= -8388608 && v <= 8388607) return 4;
    if (v >= INT32_MIN && v <= INT32_MAX) return 5;
    return 9;
}

static size_t str_enc_len(size_t n) { return n < 64 ? 1 + n : n < 4096 ? 2 + n : 5 + n; }

static int as_int(const char *s, size_t n, int64_t *v) {
    long long x;
    if (n == 0 || n > 20 || !str2ll(s, n, &x)) return 0;
    *v = x;
    return 1;
}

size_t lpk_int_size(int64_t v) {
    size_t e = int_enc_len(v);
    return e + backlen_size(e);
}

size_t lpk_str_size(const char *s, size_t n) {
    int64_t v;
    if (as_int(s, n, &v)) return lpk_int_size(v);
    size_t e = str_enc_len(n);
    return e + backlen_size(e);
}

size_t lpk_put_int(uint8_t *p, int64_t v) {
    size_t e = int_enc_len(v);
    uint64_t u = (uint64_t)v;
    switch (e) {
    case 1: p[0] = (uint8_t)v; break;
    case 2:
        u = v < 0 ? (uint64_t)((1 << 13) + v) : (uint64_t)v;
        p[0] = (uint8_t)(0xC0 | (u >> 8));
        p[1] = (uint8_t)u;
        break;
    default:
        p[0] = e == 3 ? 0xF1 : e == 4 ? 0xF2 : e == 5 ? 0xF3 : 0xF4;
        for (size_t i = 1; i < e; i++) p[i] = (uint8_t)(u >> (8 * (i - 1)));
        break;
    }
    return e + put_backlen(p + e, e);
}

size_t lpk_put_str(uint8_t *p, const char *s, size_t n) {
    int64_t v;
    if (as_int(s, n, &v)) return lpk_put_int(p, v);
    size_t e = str_enc_len(n), h;
    if (n < 64) {
        p[0] = (uint8_t)(0x80 | n);
        h = 1;
    } else if (n < 4096) {
        p[0] = (uint8_t)(0xE0 | (n >> 8));
        p[1] = (uint8_t)n;
        h = 2;
    } else {
        p[0] = 0xF0;
        set_u32(p + 1, (uint32_t)n);
        h = 5;
    }
    if (n) memcpy(p + h, s, n);
    return e + put_backlen(p + e, e);
}

lpk *lpk_append_raw(lpk *l, const uint8_t *p, size_t n, unsigned nelem) {
    size_t bytes = lpk_bytes(l);
    l = zrealloc(l, bytes + n);
    memcpy(l + bytes - 1, p, n);
    l[bytes + n - 1] = 0xff;
    set_u32(l, (uint32_t)(bytes + n));
    unsigned c = hdr_count(l);
    if (c != 65535) set_count(l, c + nelem);
    return l;
}

/* Size of encoding + length + payload of the element at p (trusted). */
static size_t enc_size(const uint8_t *p) {
    uint8_t b = p[0];
    if (b < 0x80) return 1;
    if (b < 0xC0) return 1 + (b & 63);
    if (b < 0xE0) return 2;
    if (b < 0xF0) return 2 + ((size_t)(b & 15) << 8 | p[1]);
    switch (b) {
    case 0xF0: return 5 + ((size_t)p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16 | (size_t)p[4] << 24);
    case 0xF1: return 3;
    case 0xF2: return 4;
    case 0xF3: return 5;
    default: return 9;
    }
}

size_t lpk_first(const lpk *l) { return l[LPK_HDR] == 0xff ? 0 : LPK_HDR; }

size_t lpk_next(const lpk *l, size_t pos) {
    size_t e = enc_size(l + pos);
    pos += e + backlen_size(e);
    return l[pos] == 0xff ? 0 : pos;
}

/* The backlen ending just before pos: the size of the element before it. */
static size_t read_backlen(const lpk *l, size_t pos, size_t *blen) {
    size_t v = 0, shift = 0, i = pos;
    do {
        i--;
        v |= (size_t)(l[i] & 127) << shift;
        shift += 7;
    } while ((l[i] & 128) && i > LPK_HDR);
    *blen = pos - i;
    return v;
}

size_t lpk_prev(const lpk *l, size_t pos) {
    if (pos <= LPK_HDR) return 0;
    size_t bl, e = read_backlen(l, pos, &bl);
    return pos - bl - e;
}

size_t lpk_last(const lpk *l) {
    size_t end = lpk_bytes(l) - 1;
    return end == LPK_HDR ? 0 : lpk_prev(l, end);
}

void lpk_get(const lpk *l, size_t pos, lpv *o) {
    const uint8_t *p = l + pos;
    uint8_t b = p[0];
    o->s = NULL;
    o->len = 0;
    if (b < 0x80) {
        o->v = b;
    } else if (b < 0xC0) {
        o->s = (const char *)p + 1;
        o->len = b & 63;
    } else if (b < 0xE0) {
        uint64_t u = ((uint64_t)(b & 31) << 8) | p[1];
        o->v = u >= 4096 ? (int64_t)u - 8192 : (int64_t)u;
    } else if (b < 0xF0) {
        o->s = (const char *)p + 2;
        o->len = ((size_t)(b & 15) << 8) | p[1];
    } else if (b == 0xF0) {
        o->s = (const char *)p + 5;
        o->len = (size_t)p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16 | (size_t)p[4] << 24;
    } else {
        int w = b == 0xF1 ? 2 : b == 0xF2 ? 3 : b == 0xF3 ? 4 : 8;
        uint64_t u = 0;
        for (int i = 0; i < w; i++) u |= (uint64_t)p[1 + i] << (8 * i);
        if (w < 8 && (u >> (8 * w - 1)) & 1) u |= ~(uint64_t)0 << (8 * w);
        o->v = (int64_t)u;
    }
}

int64_t lpk_get_int(const lpk *l, size_t pos) {
    lpv v;
    lpk_get(l, pos, &v);
    if (!v.s) return v.v;
    long long x = 0;
    if (!str2ll(v.s, v.len, &x)) return 0;
    return x;
}

const char *lpk_get_str(const lpk *l, size_t pos, char *buf, size_t *len) {
    lpv v;
    lpk_get(l, pos, &v);
    if (v.s) {
        *len = v.len;
        return v.s;
    }
    *len = (size_t)ll2str(buf, v.v);
    return buf;
}

lpk *lpk_replace_int(lpk *l, size_t pos, int64_t v) {
    size_t e = enc_size(l + pos), old = e + backlen_size(e), nw = lpk_int_size(v);
    size_t bytes = lpk_bytes(l);
    if (nw > old) l = zrealloc(l, bytes + nw - old);
    memmove(l + pos + nw, l + pos + old, bytes - pos - old);
    lpk_put_int(l + pos, v);
    bytes = bytes + nw - old;
    if (nw < old) l = zrealloc(l, bytes);
    set_u32(l, (uint32_t)bytes);
    return l;
}

int lpk_validate(const uint8_t *p, size_t n, size_t *count) {
    if (n < LPK_HDR + 1) return -1;
    if (lpk_bytes(p) != n || p[n - 1] != 0xff) return -1;
    size_t pos = LPK_HDR, c = 0;
    while (pos < n - 1) {
        uint8_t b = p[pos];
        size_t hdr, e;
        if (b == 0xff) return -1;
        if (b < 0x80) hdr = 1;
        else if (b < 0xC0) hdr = 1;
        else if (b < 0xE0) hdr = 2;
        else if (b < 0xF0) hdr = 2;
        else if (b == 0xF0) hdr = 5;
        else if (b <= 0xF4) hdr = 1;
        else return -1;
        if (pos + hdr > n - 1) return -1;
        e = enc_size(p + pos);
        if (e > n - 1 - pos) return -1;
        size_t bl = backlen_size(e);
        if (bl > n - 1 - pos - e) return -1;
        uint8_t tmp[5];
        put_backlen(tmp, e);
        if (memcmp(tmp, p + pos + e, bl)) return -1;
        pos += e + bl;
        c++;
    }
    unsigned hc = hdr_count(p);
    if (hc != 65535 && hc != c) return -1;
    *count = c;
    return 0;
}
