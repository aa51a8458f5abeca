/* test_core.c - unit tests of the generic pieces: RESP parse round trips,
 * the key table (growth, delete, scan across growth), the SPSC ring, number
 * conversions and glob matching. No sockets. */
#include "core/table.h"
#include "lib/mem.h"
#include "lib/ring.h"
#include "lib/util.h"
#include "proto/resp.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* One resp_parse of `in` on a fresh parser: its result, the error text
 * (copied into err[64] when not NULL) and the pending bulk length. */
static int parse_once(const char *in, long long max_bulk, char *err, long long *bulk) {
    resp_parser q;
    resp_parser_init(&q, max_bulk);
    buf x = {0};
    buf_adds(&x, in);
    int r = resp_parse(&q, &x);
    if (err) snprintf(err, 64, "%s", r == RESP_ERROR ? q.err : "");
    if (bulk) *bulk = q.bulk;
    resp_parser_free(&q);
    buf_free(&x);
    return r;
}

static void test_resp_roundtrip(void) {
    resp_parser p;
    resp_parser_init(&p, 512 * 1024 * 1024LL);
    buf b = {0};
    /* compose a command with the reply writers, parse it back */
    resp_array(&b, 3);
    resp_bulk(&b, "SET", 3);
    resp_bulk(&b, "k\r\n", 3);
    resp_bulk(&b, "", 0);
    buf_adds(&b, "PING\r\n");
    /* feed byte by byte: resumable parsing */
    buf part = {0};
    int r = RESP_MORE;
    for (size_t i = 0; i < b.len && r == RESP_MORE; i++) {
        buf_addc(&part, b.p[i]);
        r = resp_parse(&p, &part);
    }
    CHECK(r == RESP_DONE);
    CHECK(p.argc == 3);
    const char *argv[3];
    size_t argl[3];
    resp_args(&p, &part, argv, argl);
    CHECK(argl[1] == 3 && memcmp(argv[1], "k\r\n", 3) == 0);
    CHECK(argl[2] == 0);
    resp_next(&p);
    buf_add(&part, b.p + part.len, b.len - part.len);
    CHECK(resp_parse(&p, &part) == RESP_DONE);
    CHECK(p.argc == 1);
    resp_next(&p);
    CHECK(resp_parse(&p, &part) == RESP_MORE);
    buf_free(&part);
    buf_free(&b);

    const char *bad[] = {"*x\r\n", "*1\r\n$-5\r\n", "*1\r\nfoo\r\n", "\"unbalanced\r\n", "*01\r\n", "*1\r\n$01\r\n",
                         "*1\r\n$1025\r\n", "*1\r\n$1000000000000000000\r\n", "*1\r\n$10000000000000000000\r\n",
                         "*1\r\n$12a\r\n", "*1x\r\n"};
    const char *why[] = {"invalid multibulk length", "invalid bulk length", "expected '$', got 'f'",
                         "unbalanced quotes", "invalid multibulk length", "invalid bulk length",
                         "invalid bulk length", "invalid bulk length", "invalid bulk length",
                         "invalid bulk length", "invalid multibulk length"};
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        char err[64];
        CHECK(parse_once(bad[i], 1024, err, NULL) == RESP_ERROR);
        CHECK(strstr(err, why[i]) != NULL);
    }
    /* Header lines: incomplete ones wait, long counts parse exactly. */
    const char *partial[] = {"*", "*3", "*3\r", "*123456789012345678", "*1\r\n$3", "*1\r\n$3\r"};
    for (int i = 0; i < (int)(sizeof partial / sizeof partial[0]); i++)
        CHECK(parse_once(partial[i], 1024, NULL, NULL) == RESP_MORE);
    long long bulk = 0;
    CHECK(parse_once("*2\r\n$0\r\n\r\n$123456789012345678\r\n", 1LL << 62, NULL, &bulk) == RESP_MORE);
    CHECK(bulk == 123456789012345678LL);
    resp_parser_free(&p);
}

static void count_visit(void *ud, entry *e) {
    size_t kl;
    const uint8_t *k = entry_keyp(e, &kl);
    int idx = atoi((const char *)k + 1);
    ((unsigned char *)ud)[idx]++;
}

static void test_table(void) {
    table *t = table_create();
    enum { N = 20000 };
    char key[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "k%d", i);
        table_insert(t, entry_new_str(key, (size_t)n, "v", 1, -1, 1));
    }
    CHECK(table_size(t) == N);
    for (int i = 0; i < N; i += 7) {
        int n = snprintf(key, sizeof key, "k%d", i);
        CHECK(table_link(t, key, (size_t)n) != NULL);
    }
    CHECK(table_link(t, "nope", 4) == NULL);
    /* scan while the table grows: every original key seen at least once */
    unsigned char *seen = calloc(N * 2, 1);
    uint64_t cur = 0;
    int extra = N;
    do {
        cur = table_scan(t, cur, count_visit, seen);
        if (extra < N + 5000) {
            int n = snprintf(key, sizeof key, "k%d", extra++);
            table_insert(t, entry_new_str(key, (size_t)n, "v", 1, -1, 1));
        }
    } while (cur);
    int missing = 0;
    for (int i = 0; i < N; i++) missing += seen[i] == 0;
    CHECK(missing == 0);
    free(seen);
    /* delete half, shrink, everything left still found */
    for (int i = 0; i < N; i += 2) {
        int n = snprintf(key, sizeof key, "k%d", i);
        entry **l = table_link(t, key, (size_t)n);
        CHECK(l != NULL);
        if (l) zfree(table_unlink(t, l));
    }
    CHECK(table_size(t) == N / 2 + 5000);
    for (int i = 1; i < N; i += 2) {
        int n = snprintf(key, sizeof key, "k%d", i);
        CHECK(table_link(t, key, (size_t)n) != NULL);
    }
    table_destroy(&t, (void (*)(entry *))zfree);
    CHECK(t == NULL);
}

static void test_ring(void) {
    ring *r = ring_create(4);
    int vals[5];
    for (int i = 0; i < 4; i++) CHECK(ring_push(r, &vals[i]) == 0);
    CHECK(ring_push(r, &vals[4]) == -1);
    for (int i = 0; i < 4; i++) CHECK(ring_pop(r) == &vals[i]);
    CHECK(ring_pop(r) == NULL);
    ring_destroy(&r);
}

static void test_util(void) {
    long long v;
    CHECK(str2ll("123", 3, &v) && v == 123);
    CHECK(str2ll("-9223372036854775808", 20, &v) && v == (-9223372036854775807LL - 1));
    CHECK(!str2ll("9223372036854775808", 19, &v));
    CHECK(!str2ll("01", 2, &v));
    CHECK(!str2ll("+1", 2, &v));
    CHECK(!str2ll(" 1", 2, &v));
    CHECK(!str2ll("-0", 2, &v));
    struct {
        long long v;
        const char *s;
    } nums[] = {{0, "0"}, {9, "9"}, {10, "10"}, {99, "99"}, {100, "100"}, {-1, "-1"}, {-10, "-10"},
                {9223372036854775807LL, "9223372036854775807"}, {-9223372036854775807LL - 1, "-9223372036854775808"}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char d[24];
        int n = ll2str(d, nums[i].v);
        CHECK(n == (int)strlen(nums[i].s) && strcmp(d, nums[i].s) == 0);
    }
    char u[24];
    CHECK(ull2str(u, 18446744073709551615ULL) == 20 && strcmp(u, "18446744073709551615") == 0);
    CHECK(glob_match("h?llo", 5, "hello", 5, 0));
    CHECK(glob_match("h*o", 3, "hello", 5, 0));
    CHECK(glob_match("h[a-e]llo", 9, "hello", 5, 0));
    CHECK(!glob_match("h[^e]llo", 8, "hello", 5, 0));
    CHECK(glob_match("*", 1, "", 0, 0));
    CHECK(glob_match("HELLO", 5, "hello", 5, 1));
    char big[4096];
    memset(big, 'a', sizeof big);
    const char *stars = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
    CHECK(!glob_match(stars, strlen(stars), big, sizeof big, 0)); /* fast, not exponential */
    CHECK(key_slot("foo", 3) == 12182);
    CHECK(key_slot("{user1000}.following", 21) == key_slot("user1000", 8));
    CHECK(crc16("123456789", 9) == 0x31C3);
    { /* four bytes a step agree with the bit-at-a-time definition */
        char b[64];
        int same = 1;
        for (int n = 0; n < 64; n++) {
            b[n] = (char)(n * 37 + 11);
            uint16_t ref = 0;
            for (int i = 0; i <= n; i++) {
                ref ^= (uint16_t)((unsigned char)b[i] << 8);
                for (int j = 0; j < 8; j++) ref = (uint16_t)((ref & 0x8000) ? (ref << 1) ^ 0x1021 : ref << 1);
            }
            same &= crc16(b, (size_t)n + 1) == ref;
        }
        CHECK(same);
    }
}

/* resp_peek: whole multibulk commands only, never past the bytes given. */
static void test_resp_peek(void) {
    const char *in = "*2\r\n$3\r\nGET\r\n$3\r\nk\r\n\r\n*1\r\n$4\r\nPING\r\n";
    size_t n = strlen(in), used = 0, kl = 0;
    const char *key = NULL;
    CHECK(resp_peek(in, n, &used, &key, &kl) == 1);
    CHECK(used == 22 && kl == 3 && key == in + 17 && memcmp(key, "k\r\n", 3) == 0);
    CHECK(resp_peek(in + used, n - used, &used, &key, &kl) == 1);
    CHECK(used == 14 && key == NULL);
    for (size_t cut = 0; cut < 22; cut++) /* any prefix of a command: not there yet */
        CHECK(resp_peek(in, cut, &used, &key, &kl) == 0);
    CHECK(resp_peek("PING\r\n", 6, &used, &key, &kl) == 0);            /* inline */
    CHECK(resp_peek("*0\r\n", 4, &used, &key, &kl) == 0);              /* empty */
    CHECK(resp_peek("*-1\r\n", 5, &used, &key, &kl) == 0);             /* null */
    CHECK(resp_peek("*1\r\n$-1\r\n", 9, &used, &key, &kl) == 0);      /* null argument */
    CHECK(resp_peek("*1025\r\n", 7, &used, &key, &kl) == 0);           /* too many to look at */
    CHECK(resp_peek("*1\r\n$99999999999999999999\r\n", 29, &used, &key, &kl) == 0);
}

int main(void) {
    test_resp_roundtrip();
    test_resp_peek();
    test_table();
    test_ring();
    test_util();
    return check_report();
}
