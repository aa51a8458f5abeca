/* rdb_write.c - the RDB encoder: values (shared by DUMP and files) and the
 * file writer behind SAVE. See rdb.h for the format.
 *
 * Lengths use Redis's variable encoding (6 bits, 14 bits, 32 or 64 bits big
 * endian); strings try the integer encodings and, past 20 bytes with
 * rdbcompression on, LZF. Listpack values are re-encoded element by element
 * into Redis's listpack (persist/listpack.h), so files and payloads load in
 * redis-server. The file is written through a 1 MB buffer, its CRC64 kept
 * as the bytes go out. */
#include "cmd/hash.h"
#include "cmd/set.h"
#include "cmd/zset.h"
#include "core/lobj.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "persist/crc64.h"
#include "persist/listpack.h"
#include "persist/rdb.h"
#include "server/config.h"
#include <errno.h>
#include <fcntl.h>
#include <liblzf/lzf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int64_t rdb_last_save_time;
int rdb_last_save_ok = 1;
uint64_t rdb_saves;
size_t rdb_last_load_keys, rdb_last_load_expired;

enum { OP_IDLE = 0xf8, OP_AUX = 0xfa, OP_RESIZEDB = 0xfb, OP_EXPIRETIME_MS = 0xfc, OP_SELECTDB = 0xfe, OP_EOF = 0xff };

/* ---- primitives ---- */

static void put_byte(buf *o, int b) { buf_addc(o, (char)b); }

static void put_len(buf *o, uint64_t n) {
    uint8_t b[9];
    if (n < 64) {
        put_byte(o, (int)n);
    } else if (n < 16384) {
        b[0] = (uint8_t)(0x40 | (n >> 8));
        b[1] = (uint8_t)n;
        buf_add(o, b, 2);
    } else if (n <= UINT32_MAX) {
        b[0] = 0x80;
        for (int i = 0; i < 4; i++)
            b[1 + i] = (uint8_t)(n >> (24 - 8 * i));
        buf_add(o, b, 5);
    } else {
        b[0] = 0x81;
        for (int i = 0; i < 8; i++)
            b[1 + i] = (uint8_t)(n >> (56 - 8 * i));
        buf_add(o, b, 9);
    }
}

/* The int8/16/32 encodings when v fits; 0 when it does not. */
static int put_int_enc(buf *o, int64_t v) {
    uint8_t b[5];
    int n;
    if (v >= -128 && v <= 127) {
        b[0] = 0xc0;
        n = 1;
    } else if (v >= -32768 && v <= 32767) {
        b[0] = 0xc1;
        n = 2;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        b[0] = 0xc2;
        n = 4;
    } else {
        return 0;
    }
    for (int i = 0; i < n; i++)
        b[1 + i] = (uint8_t)((uint64_t)v >> (8 * i));
    buf_add(o, b, (size_t)n + 1);
    return 1;
}

/* LZF when it saves at least 4 bytes (as Redis); 0 when not used. */
static int put_lzf(buf *o, const char *s, size_t len) {
    if (len <= 4 || len > UINT32_MAX) return 0;
    size_t cap = len - 4;
    char *tmp = zmalloc(cap + 1);
    unsigned int cl = lzf_compress(s, (unsigned int)len, tmp, (unsigned int)cap);
    if (cl) {
        put_byte(o, 0xc3);
        put_len(o, cl);
        put_len(o, len);
        buf_add(o, tmp, cl);
    }
    zfree(tmp);
    return cl != 0;
}

static void put_str(buf *o, const char *s, size_t len) {
    long long v;
    if (len <= 11 && len > 0 && str2ll(s, len, &v) && put_int_enc(o, v)) return;
    if (len > 20 && cfg_get(rdbcompression) && put_lzf(o, s, len)) return;
    put_len(o, len);
    buf_add(o, s, len);
}

static void put_ll_str(buf *o, int64_t v) {
    if (put_int_enc(o, v)) return;
    char tmp[24];
    int n = ll2str(tmp, v);
    put_len(o, (uint64_t)n);
    buf_add(o, tmp, (size_t)n);
}

/* A listpack built in scratch, then written as one string. */
static void put_blob_buf(buf *o, buf *scratch) {
    put_str(o, scratch->p, scratch->len);
    buf_free(scratch);
}

/* ---- values by type ---- */

static void put_string_value(buf *o, const entry *e) {
    if (entry_kind(e) == EK_INT) {
        put_ll_str(o, entry_int(e));
        return;
    }
    char tmp[24];
    size_t len;
    const char *s = db_str(e, tmp, &len);
    put_str(o, s, len);
}

static void put_list_node(void *ud, const pack *p) {
    buf *o = ud, lp = {0};
    put_len(o, QL_NODE_PACKED);
    rlp_from_pack(&lp, p);
    put_blob_buf(o, &lp);
}

static void put_list_value(buf *o, const void *obj) {
    put_len(o, lobj_nodes(obj));
    lobj_foreach_node(obj, put_list_node, o);
}

static void put_member(void *ud, const char *m, size_t ml) { put_str(ud, m, ml); }

static void put_set_value(buf *o, const void *obj) {
    const intset *is = set_value_intset(obj);
    if (is) { /* Redis's layout: at least 2 bytes per value */
        intset *w = intset_widen(is, 2);
        put_str(o, (const char *)w, intset_bytes(w));
        intset_destroy(&w);
        return;
    }
    put_len(o, set_value_len(obj));
    set_value_foreach(obj, put_member, o);
}

static void put_pair(void *ud, const char *f, size_t fl, const char *v, size_t vl) {
    put_str(ud, f, fl);
    put_str(ud, v, vl);
}

static void put_hash_value(buf *o, const void *obj) {
    const hpack *h = hash_value_hpack(obj);
    if (h) {
        buf lp = {0};
        rlp_from_hpack(&lp, h);
        put_blob_buf(o, &lp);
        return;
    }
    put_len(o, hash_value_len(obj));
    hash_value_foreach(obj, put_pair, o);
}

/* A listpack score as Redis 7.0 spells it: "%.17g" (so integral values
 * below 1e17 become integer entries), with -0 as 0. */
static void rlp_add_score(rlp_writer *w, double d) {
    char tmp[40];
    if (d == 0) d = 0; /* -0 */
    int n = d2str(tmp, d);
    rlp_add_str(w, tmp, (size_t)n);
}

static void put_zset_value(buf *o, void *obj) {
    zcur cu;
    zitem it;
    if (!zobj_is_big(obj)) {
        buf lp = {0};
        rlp_writer w;
        rlp_begin(&w, &lp);
        for (int ok = zcur_seek(&cu, obj, 0); ok; ok = zcur_next(&cu)) {
            zcur_get(&cu, &it);
            rlp_add_str(&w, it.m, it.ml);
            rlp_add_score(&w, it.score);
        }
        rlp_end(&w);
        put_blob_buf(o, &lp);
        return;
    }
    /* Highest first, as Redis writes it (loading then prepends). */
    size_t n = zsetb_size(zobj_big(obj));
    put_len(o, n);
    for (int ok = n ? zcur_seek(&cu, obj, n - 1) : 0; ok; ok = zcur_prev(&cu)) {
        zcur_get(&cu, &it);
        put_str(o, it.m, it.ml);
        buf_add(o, &it.score, 8); /* little-endian host */
    }
}

/* The RDB type byte of e's value. */
static int value_type(const entry *e) {
    const void *o = entry_kind(e) == EK_OBJ ? entry_obj(e) : NULL;
    switch (entry_type(e)) {
    case T_LIST:
        return TYPE_LIST_QUICKLIST_2;
    case T_SET:
        return set_value_intset(o) ? TYPE_SET_INTSET : TYPE_SET;
    case T_ZSET:
        return zobj_is_big(o) ? TYPE_ZSET_2 : TYPE_ZSET_LISTPACK;
    case T_HASH:
        return hash_value_hpack(o) ? TYPE_HASH_LISTPACK : TYPE_HASH;
    default:
        return TYPE_STRING;
    }
}

static void put_body(buf *out, const entry *e) {
    switch (entry_type(e)) {
    case T_LIST:
        put_list_value(out, entry_obj(e));
        break;
    case T_SET:
        put_set_value(out, entry_obj(e));
        break;
    case T_ZSET:
        put_zset_value(out, entry_obj(e));
        break;
    case T_HASH:
        put_hash_value(out, entry_obj(e));
        break;
    case T_STRING:
        put_string_value(out, e);
        break;
    default:
        put_len(out, 0);
        break; /* no other type is stored */
    }
}

void rdb_put_value(buf *out, const entry *e) {
    put_byte(out, value_type(e));
    put_body(out, e);
}

void rdb_dump(buf *out, const entry *e) {
    size_t at = out->len;
    rdb_put_value(out, e);
    uint8_t ver[2] = {RDB_VERSION & 0xff, RDB_VERSION >> 8};
    buf_add(out, ver, 2);
    uint64_t crc = crc64(0, out->p + at, out->len - at);
    buf_add(out, &crc, 8);
}

/* ---- files ---- */

typedef struct writer {
    int fd;
    buf b;
    uint64_t crc;
    int failed;
    int64_t now;
    int lru; /* write IDLE opcodes (an LRU maxmemory-policy) */
} writer;

static void w_flush(writer *w) {
    size_t off = 0;
    w->crc = crc64(w->crc, w->b.p, w->b.len);
    while (!w->failed && off < w->b.len) {
        ssize_t k = write(w->fd, w->b.p + off, w->b.len - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            w->failed = errno ? errno : EIO;
        else
            off += (size_t)k;
    }
    w->b.len = 0;
}

static void w_maybe_flush(writer *w) {
    if (w->b.len >= (1u << 20)) w_flush(w);
}

static void put_aux(buf *o, const char *k, const char *v) {
    put_byte(o, OP_AUX);
    put_str(o, k, strlen(k));
    put_str(o, v, strlen(v));
}

static void put_aux_int(buf *o, const char *k, int64_t v) {
    put_byte(o, OP_AUX);
    put_str(o, k, strlen(k));
    put_ll_str(o, v);
}

static void write_key(void *ud, entry *e) {
    writer *w = ud;
    int64_t exp = entry_expire(e);
    if (exp >= 0 && exp < w->now) return;
    if (exp >= 0) {
        put_byte(&w->b, OP_EXPIRETIME_MS);
        buf_add(&w->b, &exp, 8);
    }
    if (w->lru) {
        uint32_t clock = (uint32_t)(w->now / 1000) & LRU_CLOCK_MAX, then = entry_lru(e);
        put_byte(&w->b, OP_IDLE);
        put_len(&w->b, clock >= then ? clock - then : clock + (LRU_CLOCK_MAX - then));
    }
    size_t klen;
    const char *key = (const char *)entry_keyp(e, &klen);
    put_byte(&w->b, value_type(e));
    put_str(&w->b, key, klen);
    put_body(&w->b, e);
    w_maybe_flush(w);
}

static void write_db(writer *w, int dbid, int nsh, rdb_db_fn *get, void *ud) {
    size_t keys = 0, expires = 0;
    for (int s = 0; s < nsh; s++) {
        db *d = get(ud, s, dbid);
        keys += db_size(d);
        expires += d->expires;
    }
    if (!keys) return;
    put_byte(&w->b, OP_SELECTDB);
    put_len(&w->b, (uint64_t)dbid);
    put_byte(&w->b, OP_RESIZEDB);
    put_len(&w->b, keys);
    put_len(&w->b, expires);
    for (int s = 0; s < nsh && !w->failed; s++) {
        db *d = get(ud, s, dbid);
        uint64_t cur = 0;
        do
            cur = table_scan(d->t, cur, write_key, w);
        while (cur && !w->failed);
    }
}

static void write_all(writer *w, int nsh, rdb_db_fn *get, void *ud) {
    char hdr[16];
    snprintf(hdr, sizeof hdr, "REDIS%04d", RDB_VERSION);
    buf_add(&w->b, hdr, 9);
    put_aux(&w->b, "redis-ver", "7.0.15");
    put_aux_int(&w->b, "redis-bits", 64);
    put_aux_int(&w->b, "ctime", w->now / 1000);
    put_aux_int(&w->b, "used-mem", mem_used());
    put_aux_int(&w->b, "aof-base", 0);
    for (int d = 0; d < (int)cfg.databases_i && !w->failed; d++)
        write_db(w, d, nsh, get, ud);
    put_byte(&w->b, OP_EOF);
    w_flush(w);
    uint64_t crc = cfg_get(rdbchecksum) ? w->crc : 0;
    buf_add(&w->b, &crc, 8);
    w_flush(w);
}

int rdb_save(const char *path, int nsh, rdb_db_fn *get, void *ud, int64_t now_ms, char *err, size_t errlen) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "temp-%d.rdb", (int)getpid());
    writer w = {.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), .now = now_ms};
    if (w.fd < 0) {
        char cwd[1024];
        snprintf(err, errlen, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", tmp,
                 getcwd(cwd, sizeof cwd) ? cwd : "unknown", strerror(errno));
        return -1;
    }
    const char *pol = cfg.maxmemory_policy_s;
    w.lru = pol && strstr(pol, "lru") != NULL;
    errno = 0;
    write_all(&w, nsh, get, ud);
    buf_free(&w.b);
    if (!w.failed && fsync(w.fd) < 0) w.failed = errno;
    if (close(w.fd) < 0 && !w.failed) w.failed = errno;
    if (!w.failed && rename(tmp, path) < 0) w.failed = errno;
    if (w.failed) {
        snprintf(err, errlen, "Write error saving DB on disk: %s", strerror(w.failed));
        unlink(tmp);
        return -1;
    }
    return 0;
}
