/* rdb_read.c - the RDB decoder for values (RESTORE payloads and the keys
 * of a file). Every read checks the bytes left first; every collection is
 * checked for emptiness and duplicates; listpacks and intsets are
 * validated in full before a value is built from them (see rdb.h). */
#include "cmd/hash.h"
#include "cmd/set.h"
#include "cmd/zset.h"
#include "core/lobj.h"
#include "core/smap.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "persist/crc64.h"
#include "persist/listpack.h"
#include "persist/rdb.h"
#include "core/stream.h"
#include "server/config.h"
#include <liblzf/lzf.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LZF turns 3 input bytes into at most 264 output bytes. */
#define LZF_MAX_RATIO 88

/* ---- primitives ---- */

static size_t left(const rdb_in *in) { return in->n - in->pos; }

static int get_byte(rdb_in *in, int *b) {
    if (!left(in)) return RDB_ESHORT;
    *b = in->p[in->pos++];
    return RDB_OK;
}

static int get_bytes(rdb_in *in, size_t n, const uint8_t **p) {
    if (left(in) < n) return RDB_ESHORT;
    *p = in->p + in->pos;
    in->pos += n;
    return RDB_OK;
}

/* A length, or (*special = 1) the code of a special string encoding. */
static int get_len_enc(rdb_in *in, uint64_t *len, int *special) {
    int b, st;
    if ((st = get_byte(in, &b))) return st;
    *special = 0;
    int kind = b >> 6;
    if (kind == 0) {
        *len = (uint64_t)(b & 0x3f);
    } else if (kind == 1) {
        int b2;
        if ((st = get_byte(in, &b2))) return st;
        *len = ((uint64_t)(b & 0x3f) << 8) | (uint64_t)b2;
    } else if (kind == 3) {
        *special = 1;
        *len = (uint64_t)(b & 0x3f);
    } else if (b == 0x80 || b == 0x81) {
        const uint8_t *p;
        int n = b == 0x80 ? 4 : 8;
        if ((st = get_bytes(in, (size_t)n, &p))) return st;
        uint64_t v = 0;
        for (int i = 0; i < n; i++)
            v = (v << 8) | p[i];
        *len = v;
    } else {
        return RDB_EFORMAT;
    }
    return RDB_OK;
}

static int get_len(rdb_in *in, uint64_t *len) {
    int special, st = get_len_enc(in, len, &special);
    if (st) return st;
    return special ? RDB_EFORMAT : RDB_OK;
}

int rdb_get_len(rdb_in *in, uint64_t *len) { return get_len(in, len); }
int rdb_get_bytes(rdb_in *in, size_t n, const uint8_t **p) { return get_bytes(in, n, p); }

/* A count of things each at least `min` bytes long: refuses counts the
 * remaining input cannot hold, so nothing is sized from a lie. */
static int get_count(rdb_in *in, uint64_t *n, size_t min) {
    int st = get_len(in, n);
    if (st) return st;
    if (*n > left(in) / min) return RDB_ESHORT;
    return RDB_OK;
}

static int get_int_str(rdb_in *in, int code, rdb_str *out) {
    static const int width[3] = {1, 2, 4};
    const uint8_t *p;
    int st = get_bytes(in, (size_t)width[code], &p);
    if (st) return st;
    uint32_t u = 0;
    for (int i = 0; i < width[code]; i++)
        u |= (uint32_t)p[i] << (8 * i);
    int64_t v = code == 0 ? (int8_t)u : code == 1 ? (int16_t)u : (int32_t)u;
    out->len = (size_t)ll2str(out->tmp, v);
    out->s = out->tmp;
    return RDB_OK;
}

static int get_lzf_str(rdb_in *in, rdb_str *out) {
    uint64_t clen, ulen;
    const uint8_t *p;
    int st;
    if ((st = get_len(in, &clen)) || (st = get_len(in, &ulen))) return st;
    if ((st = get_bytes(in, clen, &p))) return st;
    if (ulen == 0 || ulen > UINT32_MAX || clen > UINT32_MAX || ulen / LZF_MAX_RATIO > clen) return RDB_EFORMAT;
    out->heap = zmalloc(ulen);
    if (lzf_decompress(p, (unsigned int)clen, out->heap, (unsigned int)ulen) != ulen) {
        zfree(out->heap);
        out->heap = NULL;
        return RDB_EFORMAT;
    }
    out->s = out->heap;
    out->len = ulen;
    return RDB_OK;
}

int rdb_get_str(rdb_in *in, rdb_str *out) {
    uint64_t len;
    int special;
    out->heap = NULL;
    int st = get_len_enc(in, &len, &special);
    if (st) return st;
    if (special) {
        if (len < 3) return get_int_str(in, (int)len, out);
        if (len == ENC_LZF) return get_lzf_str(in, out);
        return RDB_EFORMAT;
    }
    const uint8_t *p;
    if ((st = get_bytes(in, len, &p))) return st;
    out->s = (const char *)p;
    out->len = len;
    return RDB_OK;
}

void rdb_str_free(rdb_str *s) {
    zfree(s->heap);
    s->heap = NULL;
}

static int skip_str(rdb_in *in) {
    uint64_t len;
    int special, st = get_len_enc(in, &len, &special);
    if (st) return st;
    if (!special) {
        const uint8_t *p;
        return get_bytes(in, len, &p);
    }
    if (len < 3) {
        rdb_str s;
        return get_int_str(in, (int)len, &s);
    }
    if (len != ENC_LZF) return RDB_EFORMAT;
    uint64_t clen, ulen;
    const uint8_t *p;
    if ((st = get_len(in, &clen)) || (st = get_len(in, &ulen))) return st;
    return get_bytes(in, clen, &p);
}

/* The old zset score: a length byte (253 nan, 254 +inf, 255 -inf) and
 * that many characters. */
static int get_string_double(rdb_in *in, double *d) {
    int n, st;
    if ((st = get_byte(in, &n))) return st;
    if (n == 253) return RDB_EFORMAT; /* NaN */
    if (n == 254 || n == 255) {
        *d = n == 254 ? INFINITY : -INFINITY;
        return RDB_OK;
    }
    const uint8_t *p;
    if ((st = get_bytes(in, (size_t)n, &p))) return st;
    char tmp[256];
    memcpy(tmp, p, (size_t)n);
    tmp[n] = 0;
    char *end;
    *d = strtod(tmp, &end);
    return (*end || n == 0 || isnan(*d)) ? RDB_EFORMAT : RDB_OK;
}

static int get_binary_double(rdb_in *in, double *d) {
    const uint8_t *p;
    int st = get_bytes(in, 8, &p);
    if (st) return st;
    memcpy(d, p, 8); /* little-endian host */
    return isnan(*d) ? RDB_EFORMAT : RDB_OK;
}

/* ---- strings and lists ---- */

static int read_string(rdb_in *in, const char *key, size_t klen, int64_t ttl, entry **out) {
    rdb_str s;
    int st = rdb_get_str(in, &s);
    if (st) return st;
    *out = entry_new_str(key, klen, s.s, s.len, ttl, 1);
    rdb_str_free(&s);
    return RDB_OK;
}

static int list_supported(void) { return db_type_ops(T_LIST) != NULL; }

static int list_fill(void) {
    int64_t f = cfg_get(list_max_listpack_size);
    return f > INT_MAX ? INT_MAX : (int)f;
}

static int read_list(rdb_in *in, void **obj) {
    uint64_t n;
    int st = get_count(in, &n, 1);
    if (st) return st;
    if (!n) return RDB_EEMPTY;
    quicklist *ql = quicklist_create(list_fill());
    for (uint64_t i = 0; i < n && !st; i++) {
        rdb_str s;
        if (!(st = rdb_get_str(in, &s))) quicklist_push(ql, QL_TAIL, s.s, s.len);
        rdb_str_free(&s);
    }
    if (st) quicklist_destroy(&ql);
    *obj = st ? NULL : lobj_from_quicklist(ql);
    return st;
}

static int read_ql_node(rdb_in *in, quicklist *ql) {
    uint64_t container;
    rdb_str s;
    int st = get_len(in, &container);
    if (st) return st;
    if (container != QL_NODE_PLAIN && container != QL_NODE_PACKED) return RDB_EFORMAT;
    if ((st = rdb_get_str(in, &s))) return st;
    pack *p;
    if (container == QL_NODE_PLAIN)
        p = pack_append(pack_create_fixed(), s.s, s.len);
    else
        p = rlp_to_list_node(s.s, s.len);
    rdb_str_free(&s);
    if (!p) return RDB_EFORMAT;
    quicklist_append_pack(ql, p); /* an empty node is dropped, as Redis does */
    return RDB_OK;
}

static int read_quicklist2(rdb_in *in, void **obj) {
    uint64_t n;
    int st = get_count(in, &n, 2);
    if (st) return st;
    quicklist *ql = quicklist_create(list_fill());
    for (uint64_t i = 0; i < n && !st; i++)
        st = read_ql_node(in, ql);
    if (!st && quicklist_count(ql) == 0) st = RDB_EEMPTY;
    if (st) quicklist_destroy(&ql);
    *obj = st ? NULL : lobj_from_quicklist(ql);
    return st;
}

/* ---- sets ---- */

static int read_set(rdb_in *in, void **obj) {
    uint64_t n;
    int st = get_count(in, &n, 1);
    if (st) return st;
    if (!n) return RDB_EEMPTY;
    void *o = set_value_new(n);
    for (uint64_t i = 0; i < n && !st; i++) {
        rdb_str s;
        if ((st = rdb_get_str(in, &s))) break;
        if (!set_value_add(&o, s.s, s.len)) st = RDB_EFORMAT;
        rdb_str_free(&s);
    }
    if (st) set_value_free(o);
    *obj = o;
    return st;
}

static int read_intset(rdb_in *in, void **obj) {
    rdb_str s;
    int st = rdb_get_str(in, &s);
    if (st) return st;
    intset *is = intset_load(s.s, s.len);
    rdb_str_free(&s);
    if (!is) return RDB_EFORMAT;
    if (!intset_len(is)) {
        intset_destroy(&is);
        return RDB_EEMPTY;
    }
    *obj = set_value_from_intset(is);
    return RDB_OK;
}

/* ---- hashes ---- */

static int read_hash(rdb_in *in, void **obj) {
    uint64_t n;
    int st = get_count(in, &n, 2);
    if (st) return st;
    if (!n) return RDB_EEMPTY;
    void *o = hash_value_new(n);
    for (uint64_t i = 0; i < n && !st; i++) {
        rdb_str f, v;
        if ((st = rdb_get_str(in, &f))) break;
        if (!(st = rdb_get_str(in, &v))) {
            if (!hash_value_add(&o, f.s, f.len, v.s, v.len)) st = RDB_EFORMAT;
            rdb_str_free(&v);
        }
        rdb_str_free(&f);
    }
    if (st) hash_value_free(o);
    *obj = o;
    return st;
}

/* Order of pack elements for duplicate detection: integers (by value)
 * before strings (by bytes); canonical encoding makes equal values equal. */
static int val_cmp(const void *a, const void *b) {
    const pack_val *x = a, *y = b;
    if (!x->s || !y->s) {
        if (x->s) return 1;
        if (y->s) return -1;
        return x->v < y->v ? -1 : x->v > y->v;
    }
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* 1 when the sorted values have no two equal neighbours. */
static int distinct(pack_val *v, size_t n) {
    qsort(v, n, sizeof *v, val_cmp);
    for (size_t i = 1; i < n; i++)
        if (!val_cmp(&v[i - 1], &v[i])) return 0;
    return 1;
}

static int hash_fields_distinct(const pack *p) {
    size_t n = pack_count(p) / 2, i = 0;
    pack_val *f = zmalloc(sizeof *f * (n ? n : 1));
    for (size_t pos = pack_first(p); pos; pos = pack_next(p, pack_next(p, pos)))
        pack_get(p, pos, &f[i++]);
    int ok = distinct(f, n);
    zfree(f);
    return ok;
}

static int read_hash_listpack(rdb_in *in, void **obj) {
    rdb_str s;
    int st = rdb_get_str(in, &s);
    if (st) return st;
    pack *p = rlp_to_pack(s.s, s.len);
    rdb_str_free(&s);
    if (!p) return RDB_EFORMAT;
    if (pack_count(p) % 2 || !hash_fields_distinct(p))
        st = RDB_EFORMAT;
    else if (!pack_count(p))
        st = RDB_EEMPTY;
    if (st) {
        pack_destroy(&p);
        return st;
    }
    *obj = hash_value_from_pack(p);
    return RDB_OK;
}

/* ---- sorted sets ---- */

static int read_zset(rdb_in *in, int binary, void **obj) {
    uint64_t n;
    int st = get_count(in, &n, binary ? 9 : 2);
    if (st) return st;
    if (!n) return RDB_EEMPTY;
    zset_big *z = zsetb_create();
    for (uint64_t i = 0; i < n && !st; i++) {
        rdb_str m;
        double d;
        if ((st = rdb_get_str(in, &m))) break;
        st = binary ? get_binary_double(in, &d) : get_string_double(in, &d);
        if (!st && !zsetb_set(z, m.s, m.len, d)) st = RDB_EFORMAT; /* duplicate */
        rdb_str_free(&m);
    }
    if (st) {
        zsetb_free(&z);
        return st;
    }
    *obj = zobj_fit(zobj_tag_big(z));
    return RDB_OK;
}

typedef struct zload_item {
    pack_val m;
    double score;
} zload_item;

static int zitem_cmp(const void *a, const void *b) {
    const zload_item *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? -1 : 1;
    char bx[PACK_INTBUF], by[PACK_INTBUF];
    size_t lx, ly;
    const char *sx = pack_val_str(&x->m, bx, &lx), *sy = pack_val_str(&y->m, by, &ly);
    int c = memcmp(sx, sy, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

/* A listpack score: an integer entry, or text strtod reads entirely. */
static int lp_score(const pack_val *v, double *d) {
    if (!v->s) {
        *d = (double)v->v;
        return 0;
    }
    char tmp[128];
    if (!v->len || v->len >= sizeof tmp) return -1;
    memcpy(tmp, v->s, v->len);
    tmp[v->len] = 0;
    char *end;
    *d = strtod(tmp, &end);
    return (*end || isnan(*d)) ? -1 : 0;
}

/* Decodes the (member, score) pairs of a validated listpack into it[]. */
static int zlp_items(rlp_reader *r, zload_item *it, size_t n) {
    pack_val sv;
    for (size_t i = 0; i < n; i++) {
        if (!rlp_next(r, &it[i].m) || !rlp_next(r, &sv) || lp_score(&sv, &it[i].score) < 0) return -1;
    }
    pack_val *m = zmalloc(sizeof *m * n);
    for (size_t i = 0; i < n; i++)
        m[i] = it[i].m;
    int ok = distinct(m, n);
    zfree(m);
    return ok ? 0 : -1;
}

static void *zlp_build(zload_item *it, size_t n) {
    qsort(it, n, sizeof *it, zitem_cmp);
    zbuild b = {.o = NULL, .hint = n};
    for (size_t i = 0; i < n; i++) {
        char tmp[PACK_INTBUF];
        size_t ml;
        const char *m = pack_val_str(&it[i].m, tmp, &ml);
        zbuild_add(&b, m, ml, it[i].score);
    }
    return b.o;
}

static int read_zset_listpack(rdb_in *in, void **obj) {
    rdb_str s;
    rlp_reader r;
    int st = rdb_get_str(in, &s);
    if (st) return st;
    if (rlp_open(&r, s.s, s.len) < 0 || r.count % 2)
        st = RDB_EFORMAT;
    else if (!r.count)
        st = RDB_EEMPTY;
    if (!st) {
        size_t n = r.count / 2;
        zload_item *it = zmalloc(sizeof *it * n);
        if (zlp_items(&r, it, n) < 0)
            st = RDB_EFORMAT;
        else
            *obj = zlp_build(it, n);
        zfree(it);
    }
    rdb_str_free(&s);
    return st;
}

/* ---- dispatch ---- */

static int read_object(rdb_in *in, int type, void **obj, int *t) {
    switch (type) {
    case TYPE_LIST:
        *t = T_LIST;
        return list_supported() ? read_list(in, obj) : RDB_EUNSUP;
    case TYPE_LIST_QUICKLIST_2:
        *t = T_LIST;
        return list_supported() ? read_quicklist2(in, obj) : RDB_EUNSUP;
    case TYPE_SET:
        *t = T_SET;
        return read_set(in, obj);
    case TYPE_SET_INTSET:
        *t = T_SET;
        return read_intset(in, obj);
    case TYPE_ZSET:
        *t = T_ZSET;
        return read_zset(in, 0, obj);
    case TYPE_ZSET_2:
        *t = T_ZSET;
        return read_zset(in, 1, obj);
    case TYPE_ZSET_LISTPACK:
        *t = T_ZSET;
        return read_zset_listpack(in, obj);
    case TYPE_HASH:
        *t = T_HASH;
        return read_hash(in, obj);
    case TYPE_HASH_LISTPACK:
        *t = T_HASH;
        return read_hash_listpack(in, obj);
    case TYPE_STREAM_LISTPACKS:
    case TYPE_STREAM_LISTPACKS_2:
        *t = T_STREAM;
        return rdb_read_stream(in, type == TYPE_STREAM_LISTPACKS_2, obj);
    default:
        return RDB_EFORMAT; /* ziplists, zipmaps, modules */
    }
}

int rdb_read_entry(rdb_in *in, int type, const char *key, size_t klen, int64_t ttl_ms, entry **out) {
    if (type == TYPE_STRING) return read_string(in, key, klen, ttl_ms, out);
    void *obj = NULL;
    int t = 0, st = read_object(in, type, &obj, &t);
    if (st) return st;
    *out = entry_new_obj(key, klen, t, obj, ttl_ms);
    return RDB_OK;
}

static int skip_strs(rdb_in *in, uint64_t n) {
    int st = RDB_OK;
    for (uint64_t i = 0; i < n && !st; i++)
        st = skip_str(in);
    return st;
}

int rdb_skip_value(rdb_in *in, int type) {
    uint64_t n;
    int st;
    switch (type) {
    case TYPE_STRING:
    case TYPE_SET_INTSET:
    case TYPE_HASH_LISTPACK:
    case TYPE_ZSET_LISTPACK:
        return skip_str(in);
    case TYPE_LIST:
    case TYPE_SET:
        return (st = get_count(in, &n, 1)) ? st : skip_strs(in, n);
    case TYPE_HASH:
        return (st = get_count(in, &n, 2)) ? st : skip_strs(in, 2 * n);
    case TYPE_LIST_QUICKLIST_2:
        if ((st = get_count(in, &n, 2))) return st;
        for (uint64_t i = 0; i < n && !st; i++) {
            uint64_t c;
            if (!(st = get_len(in, &c))) st = skip_str(in);
        }
        return st;
    case TYPE_ZSET_2:
        if ((st = get_count(in, &n, 9))) return st;
        for (uint64_t i = 0; i < n && !st; i++) {
            const uint8_t *p;
            if (!(st = skip_str(in))) st = get_bytes(in, 8, &p);
        }
        return st;
    case TYPE_ZSET:
        if ((st = get_count(in, &n, 2))) return st;
        for (uint64_t i = 0; i < n && !st; i++) {
            double d;
            if (!(st = skip_str(in))) st = get_string_double(in, &d);
        }
        return st;
    case TYPE_STREAM_LISTPACKS:
    case TYPE_STREAM_LISTPACKS_2: {
        void *obj = NULL;
        if ((st = rdb_read_stream(in, type == TYPE_STREAM_LISTPACKS_2, &obj))) return st;
        stream_free(obj);
        return RDB_OK;
    }
    default:
        return RDB_EFORMAT;
    }
}

/* ---- DUMP payloads ---- */

int rdb_dump_verify(const char *p, size_t n) {
    if (n < 10) return 0;
    const uint8_t *f = (const uint8_t *)p + n - 10;
    int ver = f[0] | (f[1] << 8);
    if (ver > RDB_VERSION) return 0;
    uint64_t crc = crc64(0, p, n - 8);
    return memcmp(&crc, f + 2, 8) == 0;
}

int rdb_undump(const char *p, size_t n, const char *key, size_t klen, int64_t ttl_ms, entry **out) {
    if (n < 10) return RDB_ESHORT;
    rdb_in in = {(const uint8_t *)p, n - 10, 0};
    int type, st = get_byte(&in, &type);
    if (st) return st;
    return rdb_read_entry(&in, type, key, klen, ttl_ms, out);
}
