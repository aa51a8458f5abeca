/* test_rdb.c - unit tests of the RDB codec (src/persist/): the CRC64 test
 * vector, the Redis listpack converter both ways (every integer and string
 * width, a listpack as redis-server writes it, corrupt blobs), a DUMP /
 * RESTORE round trip of every type and encoding through the embedded
 * engine, lists through list values (core/lobj.h) directly, hand-made corrupt payloads
 * (duplicates, empty collections, NaN scores, lying lengths), every
 * truncation and many byte flips of real payloads (must fail or succeed
 * cleanly, never crash), and a whole file saved and loaded back. */
#include "cmd/cmd.h"
#include "core/lobj.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "persist/crc64.h"
#include "persist/listpack.h"
#include "persist/rdb.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/shard.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static session *sess;
static buf out;

/* Runs a command given as NUL-separated words; the reply is in out. */
static const char *run(int argc, const char **argv, const size_t *argl) {
    out.len = 0;
    engine_exec(sess, argc, argv, argl);
    buf_addc(&out, 0);
    out.len--;
    return out.p;
}

static const char *cmd(const char *line) {
    const char *argv[64];
    size_t argl[64];
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", line);
    int argc = 0;
    for (char *t = strtok(tmp, " "); t && argc < 64; t = strtok(NULL, " ")) {
        argv[argc] = t;
        argl[argc++] = strlen(t);
    }
    return run(argc, argv, argl);
}

/* DUMP key into *payload (malloc'd); returns its length. */
static size_t dump(const char *key, char **payload) {
    char line[256];
    snprintf(line, sizeof line, "DUMP %s", key);
    const char *r = cmd(line);
    if (r[0] != '$' || r[1] == '-') return 0;
    size_t n = (size_t)strtoull(r + 1, NULL, 10);
    const char *body = strstr(r, "\r\n") + 2;
    *payload = malloc(n);
    memcpy(*payload, body, n);
    return n;
}

static const char *restore(const char *key, const char *p, size_t n) {
    const char *argv[] = {"RESTORE", key, "0", p, "REPLACE"};
    size_t argl[] = {7, strlen(key), 1, n, 7};
    return run(5, argv, argl);
}

/* ---- crc64 ---- */

static void test_crc64(void) {
    CHECK(crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caull);
    CHECK(crc64(0, "", 0) == 0);
    /* split input gives the same result as one call, at every split point */
    const char *s = "The quick brown fox jumps over the lazy dog, twice over.";
    uint64_t whole = crc64(0, s, strlen(s));
    for (size_t k = 0; k <= strlen(s); k++)
        CHECK(crc64(crc64(0, s, k), s + k, strlen(s) - k) == whole);
}

/* ---- listpack converter ---- */

static void test_listpack_roundtrip(void) {
    static const int64_t ints[] = {0,         1,        127,     128,       -1,        -4096,
                                   4095,      4096,     -4097,   32767,     -32768,    32768,
                                   8388607,   -8388608, 8388608, INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1,
                                   INT64_MAX, INT64_MIN};
    static const size_t lens[] = {0, 1, 63, 64, 4095, 4096, 70000};
    pack *p = pack_create();
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        p = pack_append_int(p, ints[i]);
    char *big = malloc(70000);
    memset(big, 'x', 70000);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        p = pack_append(p, big, lens[i]);
    p = pack_append(p, "0123", 4); /* not canonical: stays a string */
    buf lp = {0};
    rlp_from_pack(&lp, p);
    pack *q = rlp_to_pack(lp.p, lp.len);
    CHECK(q != NULL);
    CHECK(q && pack_count(q) == pack_count(p));
    CHECK(q && pack_bytes(q) == pack_bytes(p) && !memcmp(q, p, pack_bytes(p)));
    /* every strict prefix and a wrong count are refused */
    for (size_t k = 0; k < lp.len; k += (k < 64 ? 1 : 997))
        CHECK(rlp_to_pack(lp.p, k) == NULL);
    lp.p[4] ^= 1;
    CHECK(rlp_to_pack(lp.p, lp.len) == NULL);
    lp.p[4] ^= 1;
    lp.p[lp.len - 1] = 0;
    CHECK(rlp_to_pack(lp.p, lp.len) == NULL);
    buf_free(&lp);
    pack_destroy(&p);
    pack_destroy(&q);
    free(big);
}

static void test_listpack_redis_bytes(void) {
    /* As redis-server 7.0 DUMPs RPUSH l a b c (node listpack), and an
     * integer-heavy one: 1, -5000 (16-bit), 100000 (24-bit), 5000000000. */
    static const uint8_t abc[] = {0x10, 0, 0, 0, 3, 0, 0x81, 'a', 2, 0x81, 'b', 2, 0x81, 'c', 2, 0xff};
    pack *p = rlp_to_pack(abc, sizeof abc);
    CHECK(p && pack_count(p) == 3);
    if (p) CHECK(pack_eq(p, pack_first(p), "a", 1) && pack_eq(p, pack_last(p), "c", 1));
    buf lp = {0};
    if (p) rlp_from_pack(&lp, p);
    CHECK(lp.len == sizeof abc && !memcmp(lp.p, abc, sizeof abc));
    buf_free(&lp);
    pack_destroy(&p);
    static const uint8_t ints[] = {0x1c, 0,    0,    0,    4,    0,    0x01, 0x01, 0xf1, 0x78, 0xec, 0x03, 0xf2, 0xa0,
                                   0x86, 0x01, 0x04, 0xf4, 0x00, 0xf2, 0x05, 0x2a, 0x01, 0x00, 0x00, 0x00, 0x09, 0xff};
    rlp_reader r;
    pack_val v;
    CHECK(rlp_open(&r, ints, sizeof ints) == 0 && r.count == 4);
    CHECK(rlp_next(&r, &v) && !v.s && v.v == 1);
    CHECK(rlp_next(&r, &v) && !v.s && v.v == -5000);
    CHECK(rlp_next(&r, &v) && !v.s && v.v == 100000);
    CHECK(rlp_next(&r, &v) && !v.s && v.v == 5000000000LL);
    CHECK(!rlp_next(&r, &v));
    /* count 65535 means "count them" */
    uint8_t unk[sizeof abc];
    memcpy(unk, abc, sizeof abc);
    unk[4] = 0xff;
    unk[5] = 0xff;
    CHECK(rlp_open(&r, unk, sizeof unk) == 0 && r.count == 3);
    /* a wrong backlen */
    memcpy(unk, abc, sizeof abc);
    unk[8] = 3;
    CHECK(rlp_open(&r, unk, sizeof unk) < 0);
    /* a string length running past the end */
    memcpy(unk, abc, sizeof abc);
    unk[6] = 0x8f;
    CHECK(rlp_open(&r, unk, sizeof unk) < 0);
    /* an unused encoding byte */
    memcpy(unk, abc, sizeof abc);
    unk[6] = 0xf7;
    CHECK(rlp_open(&r, unk, sizeof unk) < 0);
}

/* ---- DUMP / RESTORE of every type and encoding ---- */

static int same_reply(const char *a_cmd, const char *b_cmd) {
    char *a = strdup(cmd(a_cmd));
    int eq = strcmp(a, cmd(b_cmd)) == 0;
    free(a);
    return eq;
}

static void roundtrip(const char *key, const char *show_fmt, const char *encoding) {
    char *p = NULL;
    size_t n = dump(key, &p);
    CHECK(n > 10);
    if (!n) return;
    CHECK(!strcmp(restore("copy", p, n), "+OK\r\n"));
    char a[256], b[256];
    snprintf(a, sizeof a, show_fmt, key);
    snprintf(b, sizeof b, show_fmt, "copy");
    CHECK(same_reply(a, b));
    if (!same_reply(a, b)) fprintf(stderr, "  (%s)\n", a);
    snprintf(a, sizeof a, "OBJECT ENCODING copy");
    char want[64];
    snprintf(want, sizeof want, "$%zu\r\n%s\r\n", strlen(encoding), encoding);
    CHECK(!strcmp(cmd(a), want));
    if (strcmp(cmd(a), want)) fprintf(stderr, "  (%s: %s)\n", key, cmd(a));
    /* every truncation fails cleanly (the footer check or the decoder) */
    for (size_t k = 0; k < n; k++)
        CHECK(restore("cut", p, k)[0] == '-');
    /* byte flips with a recomputed footer: anything but a crash */
    for (size_t i = 0; i + 10 < n; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            char *q = malloc(n);
            memcpy(q, p, n);
            q[i] ^= (char)(1 << bit);
            uint64_t crc = crc64(0, q, n - 8);
            memcpy(q + n - 8, &crc, 8);
            const char *r = restore("flip", q, n);
            CHECK(r[0] == '+' || !strcmp(r, "-ERR Bad data format\r\n"));
            free(q);
        }
    }
    cmd("DEL copy cut flip");
    free(p);
}

static void test_types(void) {
    cmd("FLUSHALL");
    cmd("SET s1 hello");
    roundtrip("s1", "GET %s", "embstr");
    cmd("SET s2 12345");
    roundtrip("s2", "GET %s", "int");
    cmd("SET s3 9999999999999");
    roundtrip("s3", "GET %s", "int");
    cmd("SET s4 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    roundtrip("s4", "GET %s", "raw");
    cmd("HSET h1 a 1 b hello c -5000 d 100000 e 5000000000");
    roundtrip("h1", "HGETALL %s", "listpack");
    cmd("HSET h2 a 1 long xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    roundtrip("h2", "HLEN %s", "hashtable");
    CHECK(!strcmp(cmd("HGET h2 long"),
                  "$80\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n"));
    cmd("SADD i1 1 2 3 -70000 5000000000");
    roundtrip("i1", "SMEMBERS %s", "intset");
    cmd("SADD st a b c 1");
    roundtrip("st", "SCARD %s", "hashtable");
    cmd("ZADD z1 1 a 2.5 b -3 c 1e20 d inf e -inf f");
    roundtrip("z1", "ZRANGE %s 0 -1 WITHSCORES", "listpack");
    for (int i = 0; i < 150; i++) {
        char line[64];
        snprintf(line, sizeof line, "ZADD z2 %d.5 m%d", i, i);
        cmd(line);
    }
    roundtrip("z2", "ZRANGE %s 0 -1 WITHSCORES", "skiplist");
    CHECK(!strcmp(cmd("DUMP nosuchkey"), "$-1\r\n"));
}

/* ---- lists, through the list value directly ---- */

static const char *ql_enc(const void *o) { return "quicklist"; }
static const type_ops list_ops = {.name = "list", .free = lobj_free, .encoding = ql_enc};

static void test_lists(void) {
    if (!db_type_ops(T_LIST)) db_register_type(T_LIST, &list_ops);
    void *ql = lobj_new();
    char tmp[32];
    for (int i = 0; i < 3000; i++) {
        int n = snprintf(tmp, sizeof tmp, i % 3 ? "e%d" : "%d", i);
        lobj_push(&ql, -2, QL_TAIL, tmp, (size_t)n);
    }
    CHECK(lobj_nodes(ql) > 1);
    entry *e = entry_new_obj("l", 1, T_LIST, ql, -1);
    buf p = {0};
    rdb_dump(&p, e);
    CHECK(rdb_dump_verify(p.p, p.len));
    entry *back = NULL;
    CHECK(rdb_undump(p.p, p.len, "l2", 2, -1, &back) == RDB_OK);
    if (back) {
        void *q2 = entry_obj(back);
        CHECK(lobj_count(q2) == 3000);
        lobj_pos a, b;
        int same = 1;
        for (int ok = lobj_first(ql, &a) && lobj_first(q2, &b); ok; ok = lobj_next(&a) && lobj_next(&b)) {
            pack_val va, vb;
            char ba[PACK_INTBUF], bb[PACK_INTBUF];
            size_t la, lb;
            lobj_get(&a, &va);
            lobj_get(&b, &vb);
            const char *sa = pack_val_str(&va, ba, &la), *sb = pack_val_str(&vb, bb, &lb);
            same &= la == lb && !memcmp(sa, sb, la);
        }
        CHECK(same);
        entry_free(back);
    }
    for (size_t k = 0; k < p.len; k += 7) {
        back = NULL;
        CHECK(rdb_undump(p.p, k, "x", 1, -1, &back) != RDB_OK || k >= p.len - 10);
    }
    buf_free(&p);
    entry_free(e);
}

/* ---- hand-made corrupt payloads ---- */

/* Wraps value bytes (type byte first) into a payload with a right footer. */
static int undump_raw(const uint8_t *v, size_t n) {
    buf p = {0};
    buf_add(&p, v, n);
    buf_add(&p, "\x0a\x00", 2);
    uint64_t crc = crc64(0, p.p, p.len);
    buf_add(&p, &crc, 8);
    entry *e = NULL;
    int st = rdb_dump_verify(p.p, p.len) ? rdb_undump(p.p, p.len, "k", 1, -1, &e) : 99;
    if (e) entry_free(e);
    buf_free(&p);
    return st;
}

static void test_corrupt(void) {
    static const uint8_t set_ok[] = {2, 2, 1, 'a', 1, 'b'};
    static const uint8_t set_dup[] = {2, 2, 1, 'a', 1, 'a'};
    static const uint8_t set_empty[] = {2, 0};
    static const uint8_t set_lie[] = {2, 0x80, 0xff, 0xff, 0xff, 0xff, 1, 'a'};
    static const uint8_t hash_dup[] = {4, 2, 1, 'f', 1, '1', 1, 'f', 1, '2'};
    static const uint8_t zset_nan[] = {5, 1, 1, 'm', 0, 0, 0, 0, 0, 0, 0xf8, 0x7f};
    static const uint8_t zset_ok[] = {5, 1, 1, 'm', 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    static const uint8_t zset_dup[] = {5, 2, 1, 'm', 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 1, 'm', 0, 0, 0, 0, 0, 0, 0, 0x40};
    static const uint8_t str_lzf_lie[] = {0, 0xc3, 2, 0x80, 0x7f, 0xff, 0xff, 0xff, 0, 'a'};
    static const uint8_t intset_unsorted[] = {11, 12, 2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 3, 0};
    static const uint8_t intset_empty[] = {11, 8, 2, 0, 0, 0, 0, 0, 0, 0};
    /* hash listpack with fields a, a */
    static const uint8_t hlp_dup[] = {16, 17, 17, 0, 0, 0, 4, 0, 0x81, 'a', 2, 1, 1, 0x81, 'a', 2, 2, 1, 0xff};
    static const uint8_t hlp_odd[] = {16, 10, 10, 0, 0, 0, 1, 0, 0x81, 'a', 2, 0xff};
    static const uint8_t unknown[] = {6, 0}; /* a module value */
    /* streams: no nodes but length 1; a truncated body; an empty stream */
    static const uint8_t stream_len_lie[] = {19, 0, 1, 5, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t stream_short[] = {19, 0, 0, 5};
    static const uint8_t stream_empty[] = {19, 0, 0, 5, 0, 0, 0, 0, 0, 1, 0};
    CHECK(undump_raw(set_ok, sizeof set_ok) == RDB_OK);
    CHECK(undump_raw(set_dup, sizeof set_dup) == RDB_EFORMAT);
    CHECK(undump_raw(set_empty, sizeof set_empty) == RDB_EEMPTY);
    CHECK(undump_raw(set_lie, sizeof set_lie) == RDB_ESHORT);
    CHECK(undump_raw(hash_dup, sizeof hash_dup) == RDB_EFORMAT);
    CHECK(undump_raw(zset_nan, sizeof zset_nan) == RDB_EFORMAT);
    CHECK(undump_raw(zset_ok, sizeof zset_ok) == RDB_OK);
    CHECK(undump_raw(zset_dup, sizeof zset_dup) == RDB_EFORMAT);
    CHECK(undump_raw(str_lzf_lie, sizeof str_lzf_lie) == RDB_EFORMAT);
    CHECK(undump_raw(intset_unsorted, sizeof intset_unsorted) == RDB_EFORMAT);
    CHECK(undump_raw(intset_empty, sizeof intset_empty) == RDB_EEMPTY);
    CHECK(undump_raw(hlp_dup, sizeof hlp_dup) == RDB_EFORMAT);
    CHECK(undump_raw(hlp_odd, sizeof hlp_odd) == RDB_EFORMAT);
    CHECK(undump_raw(unknown, sizeof unknown) == RDB_EFORMAT);
    CHECK(undump_raw(stream_len_lie, sizeof stream_len_lie) == RDB_EFORMAT);
    CHECK(undump_raw(stream_short, sizeof stream_short) == RDB_ESHORT);
    CHECK(undump_raw(stream_empty, sizeof stream_empty) == RDB_OK);
    /* the footer: version 11 and a wrong CRC */
    buf p = {0};
    buf_add(&p, "\x00\x01x\x0b\x00", 5);
    uint64_t crc = crc64(0, p.p, p.len);
    buf_add(&p, &crc, 8);
    CHECK(!rdb_dump_verify(p.p, p.len));
    p.p[3] = 10;
    CHECK(!rdb_dump_verify(p.p, p.len));
    CHECK(!rdb_dump_verify(p.p, 9));
    buf_free(&p);
}

/* ---- files ---- */

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    fwrite(p, 1, n, f);
    fclose(f);
}

static db *one_db(void *ud, int s, int dbid) { return &shards[s]->dbs[dbid]; }

static void test_file(void) {
    cmd("FLUSHALL");
    cmd("SET a 1");
    cmd("HSET h f v");
    cmd("SADD s 1 2 3");
    cmd("ZADD z 1 x");
    cmd("SELECT 5");
    cmd("SET other db5");
    cmd("SELECT 0");
    cmd("SET ttl v PX 100000");
    char err[512] = "";
    CHECK(rdb_save("unit.rdb", 1, one_db, NULL, mstime(), err, sizeof err) == 0);
    cmd("FLUSHALL");
    rdb_load_stats st;
    CHECK(rdb_load("unit.rdb", 1, mstime(), &st, err, sizeof err) == 0);
    CHECK(st.keys == 6);
    CHECK(!strcmp(cmd("GET a"), ":1\r\n") || !strcmp(cmd("GET a"), "$1\r\n1\r\n"));
    CHECK(!strcmp(cmd("SCARD s"), ":3\r\n"));
    cmd("SELECT 5");
    CHECK(!strcmp(cmd("GET other"), "$3\r\ndb5\r\n"));
    cmd("SELECT 0");
    /* a flipped byte in the middle: the CRC catches it */
    FILE *f = fopen("unit.rdb", "rb");
    char img[65536];
    size_t sz = fread(img, 1, sizeof img, f);
    fclose(f);
    img[sz / 2] ^= 0x20;
    write_file("bad.rdb", img, sz);
    cmd("FLUSHALL");
    CHECK(rdb_load("bad.rdb", 1, mstime(), &st, err, sizeof err) < 0);
    CHECK(strstr(err, "Wrong RDB checksum") || strstr(err, "Internal error") || strstr(err, "Short read"));
    img[sz / 2] ^= 0x20;
    /* the CRC itself wrong */
    img[sz - 1] ^= 1;
    write_file("bad.rdb", img, sz);
    cmd("FLUSHALL");
    CHECK(rdb_load("bad.rdb", 1, mstime(), &st, err, sizeof err) < 0 && strstr(err, "Wrong RDB checksum"));
    img[sz - 1] ^= 1;
    /* a zero CRC means "not computed" */
    memset(img + sz - 8, 0, 8);
    write_file("bad.rdb", img, sz);
    cmd("FLUSHALL");
    CHECK(rdb_load("bad.rdb", 1, mstime(), &st, err, sizeof err) == 0 && st.keys == 6);
    /* every truncation is refused as a short read */
    for (size_t k = 9; k < sz; k++) {
        write_file("bad.rdb", img, k);
        cmd("FLUSHALL");
        CHECK(rdb_load("bad.rdb", 1, mstime(), &st, err, sizeof err) < 0 && strstr(err, "Short read"));
    }
    /* a version from the future, and not an RDB at all */
    memcpy(img, "REDIS0011", 9);
    write_file("bad.rdb", img, sz);
    CHECK(rdb_load("bad.rdb", 1, mstime(), &st, err, sizeof err) < 0 &&
          strstr(err, "Can't handle RDB format version 11"));
    write_file("bad.rdb", "hello world, this is not a database", 35);
    CHECK(rdb_load("bad.rdb", 1, mstime(), &st, err, sizeof err) < 0 && strstr(err, "Wrong signature"));
    unlink("bad.rdb");
    cmd("FLUSHALL"); /* LeakSanitizer cannot see the entries' unaligned object pointers */
    /* missing and empty files load nothing */
    unlink("unit.rdb");
    CHECK(rdb_load("unit.rdb", 1, mstime(), &st, err, sizeof err) == 0);
    FILE *e = fopen("unit.rdb", "w");
    fclose(e);
    CHECK(rdb_load("unit.rdb", 1, mstime(), &st, err, sizeof err) == 0);
    unlink("unit.rdb");
}

int main(void) {
    char dir[] = "/tmp/shoal-unit-rdb-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) != 0) return 1;
    engine_open(1);
    log_set_level(LOG_WARNING); /* no "Loading RDB produced by" per load */
    sess = engine_session(&out);
    test_crc64();
    test_listpack_roundtrip();
    test_listpack_redis_bytes();
    test_types();
    test_lists();
    test_corrupt();
    test_file();
    engine_session_free(sess);
    buf_free(&out);
    rmdir(dir);
    return check_report();
}
