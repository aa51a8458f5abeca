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
#include "shard/evict.h"
#include <errno.h>
#include <fcntl.h>
#include <liblzf/lzf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int64_t rdb_last_save_time;
uint64_t rdb_saves;
size_t rdb_last_load_keys, rdb_last_load_expired;

enum { OP_IDLE = 0xf8, OP_FREQ = 0xf9, OP_AUX = 0xfa, OP_RESIZEDB = 0xfb, OP_EXPIRETIME_MS = 0xfc, OP_SELECTDB = 0xfe, OP_EOF = 0xff };

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

void rdb_put_len(buf *o, uint64_t n) { put_len(o, n); }
void rdb_put_str(buf *o, const char *s, size_t len) { put_str(o, s, len); }

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
    case T_STREAM:
        return TYPE_STREAM_LISTPACKS_2;
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
    case T_STREAM:
        rdb_put_stream(out, entry_obj(e));
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

void (*rdb_functions_writer)(buf *o);
int (*rdb_function_reader)(const char *code, size_t len, char *err, size_t errlen);

void rdb_put_header(buf *o, int64_t now_ms) {
    char hdr[16];
    snprintf(hdr, sizeof hdr, "REDIS%04d", RDB_VERSION);
    buf_add(o, hdr, 9);
    put_aux(o, "redis-ver", "7.0.15");
    put_aux_int(o, "redis-bits", 64);
    put_aux_int(o, "ctime", now_ms / 1000);
    put_aux_int(o, "used-mem", (int64_t)mem_used());
    put_aux_int(o, "aof-base", 0);
    if (rdb_functions_writer) rdb_functions_writer(o);
}

void rdb_put_selectdb(buf *o, int dbid) {
    put_byte(o, OP_SELECTDB);
    put_len(o, (uint64_t)dbid);
}

void rdb_put_resizedb(buf *o, int dbid, size_t keys, size_t expires) {
    rdb_put_selectdb(o, dbid);
    put_byte(o, OP_RESIZEDB);
    put_len(o, keys);
    put_len(o, expires);
}

int rdb_put_key(buf *o, const entry *e, int64_t now_ms, int lru) {
    int64_t exp = entry_expire(e);
    if (exp >= 0 && exp < now_ms) return 0;
    if (exp >= 0) {
        put_byte(o, OP_EXPIRETIME_MS);
        buf_add(o, &exp, 8);
    }
    if (lru == RDB_META_LFU) { /* the decayed counter, as Redis writes it */
        put_byte(o, OP_FREQ);
        put_byte(o, (uint8_t)evict_lfu_count(e, now_ms));
    } else if (lru) {
        uint32_t clock = (uint32_t)(now_ms / 1000) & LRU_CLOCK_MAX, then = entry_lru(e);
        put_byte(o, OP_IDLE);
        put_len(o, clock >= then ? clock - then : clock + (LRU_CLOCK_MAX - then));
    }
    size_t klen;
    const char *key = (const char *)entry_keyp(e, &klen);
    put_byte(o, value_type(e));
    put_str(o, key, klen);
    put_body(o, e);
    return 1;
}

int rdb_lru_wanted(void) {
    const char *pol = cfg.maxmemory_policy_s;
    return !pol ? 0 : strstr(pol, "lru") ? RDB_META_LRU : strstr(pol, "lfu") ? RDB_META_LFU : 0;
}

int rdb_file_open(rdb_file *f, const char *tmp, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    snprintf(f->tmp, sizeof f->tmp, "%s", tmp);
    f->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f->fd < 0) {
        char cwd[1024];
        snprintf(err, errlen, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", tmp,
                 getcwd(cwd, sizeof cwd) ? cwd : "unknown", strerror(errno));
        return -1;
    }
    return 0;
}

void rdb_file_write(rdb_file *f, const void *p, size_t n) {
    const char *c = p;
    size_t off = 0;
    f->crc = crc64(f->crc, p, n);
    while (!f->failed && off < n) {
        ssize_t k = write(f->fd, c + off, n - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            f->failed = k < 0 && errno ? errno : ENOSPC;
        else
            off += (size_t)k;
    }
    f->written += n;
}

int rdb_file_commit(rdb_file *f, const char *path, char *err, size_t errlen) {
    uint8_t eof = OP_EOF;
    rdb_file_write(f, &eof, 1);
    uint64_t crc = cfg_get(rdbchecksum) ? f->crc : 0;
    rdb_file_write(f, &crc, 8);
    if (!f->failed && fsync(f->fd) < 0) f->failed = errno;
    if (close(f->fd) < 0 && !f->failed) f->failed = errno;
    f->fd = -1;
    if (!f->failed && rename(f->tmp, path) < 0) f->failed = errno;
    if (f->failed) {
        snprintf(err, errlen, "Write error saving DB on disk: %s", strerror(f->failed));
        unlink(f->tmp);
        return -1;
    }
    return 0;
}

void rdb_file_abandon(rdb_file *f) {
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    unlink(f->tmp);
}

/* SAVE: the whole dataset from the calling thread, through a 1 MB buffer. */
typedef struct writer {
    rdb_file f;
    buf b;
    int64_t now;
    int lru;
} writer;

static void w_flush(writer *w) {
    rdb_file_write(&w->f, w->b.p, w->b.len);
    w->b.len = 0;
}

static void write_key(void *ud, entry *e) {
    writer *w = ud;
    rdb_put_key(&w->b, e, w->now, w->lru);
    if (w->b.len >= (1u << 20)) w_flush(w);
}

static void write_db(writer *w, int dbid, int nsh, rdb_db_fn *get, void *ud) {
    size_t keys = 0, expires = 0;
    for (int s = 0; s < nsh; s++) {
        db *d = get(ud, s, dbid);
        keys += db_size(d);
        expires += d->expires;
    }
    if (!keys) return;
    rdb_put_resizedb(&w->b, dbid, keys, expires);
    for (int s = 0; s < nsh && !w->f.failed; s++) {
        db *d = get(ud, s, dbid);
        uint64_t cur = 0;
        do
            cur = table_scan(d->t, cur, write_key, w);
        while (cur && !w->f.failed);
    }
}

int rdb_save(const char *path, int nsh, rdb_db_fn *get, void *ud, int64_t now_ms, char *err, size_t errlen) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "temp-%d.rdb", (int)getpid());
    writer w = {.now = now_ms, .lru = rdb_lru_wanted()};
    if (rdb_file_open(&w.f, tmp, err, errlen) < 0) return -1;
    rdb_put_header(&w.b, now_ms);
    for (int d = 0; d < (int)cfg.databases_i && !w.f.failed; d++)
        write_db(&w, d, nsh, get, ud);
    w_flush(&w);
    buf_free(&w.b);
    return rdb_file_commit(&w.f, path, err, errlen);
}
