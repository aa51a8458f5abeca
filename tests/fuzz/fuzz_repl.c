/* fuzz_repl.c - libFuzzer target for the replies of the replication
 * handshake that the replica parses itself (src/repl/replica_proto.c):
 * the line splitter, +FULLRESYNC and the payload's "$<len>" /
 * "$EOF:<mark>" header. (The master's command stream goes through the
 * RESP parser, fuzz_resp; the payload through the RDB loader, fuzz_rdb.)
 *
 * The input is the byte stream a master sends: it is cut into lines as
 * the link does, and every line is offered to both parsers. Checks: a
 * line lies inside the input and consumes its newline, a parsed
 * FULLRESYNC has a 40-byte alphanumeric ID and an offset >= 0 read from
 * digits only, a bulk header's length is >= 0 and read from digits only. */
#include "repl/replica.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "fuzz_repl: check failed: %s (line %d)\n", #cond, __LINE__);                               \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

/* Digits (after an optional '-': "-0" is 0), at least one. */
static int all_digits(const char *p, size_t n) {
    if (n && p[0] == '-') {
        p++;
        n--;
    }
    if (!n) return 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] < '0' || p[i] > '9') return 0;
    return 1;
}

static void one_line(const char *line, size_t n) {
    char id[41], mark[40];
    int64_t off = -2, len = -2;
    if (repl_parse_fullresync(line, n, id, &off) == 0) {
        CHECK(strlen(id) == 40 && !memcmp(id, line + 12, 40));
        CHECK(off >= 0);
        CHECK(all_digits(line + 53, n - 53));
    }
    int r = repl_parse_bulk_header(line, n, &len, mark);
    CHECK(r >= -1 && r <= 1);
    if (r == 1) CHECK(n == 45 && !memcmp(mark, line + 5, 40));
    if (r == 0) {
        CHECK(len >= 0);
        CHECK(all_digits(line + 1, n - 1));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *p = (const char *)data;
    size_t left = size;
    while (left) {
        size_t used = 0;
        long len = repl_line_end(p, left, &used);
        if (len < 0) {
            one_line(p, left); /* a last line without its newline: the parsers see it too */
            break;
        }
        CHECK((size_t)len < used && used <= left && p[used - 1] == '\n');
        one_line(p, (size_t)len);
        p += used;
        left -= used;
    }
    return 0;
}
