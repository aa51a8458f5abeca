/* replica_proto.c - the few replies of the replication handshake the
 * replica parses itself (the commands the master streams go through the
 * RESP parser, the payload through the RDB loader). Every byte comes from
 * the network: lengths are checked before use, nothing is assumed
 * terminated. */
#include "repl/replica.h"
#include <ctype.h>
#include <string.h>

long repl_line_end(const char *p, size_t n, size_t *used) {
    const char *nl = memchr(p, '\n', n);
    if (!nl) return -1;
    size_t len = (size_t)(nl - p);
    *used = len + 1;
    if (len && p[len - 1] == '\r') len--;
    return (long)len;
}

/* A decimal integer spanning exactly p[0..n); 0 and *out, else -1. */
static int parse_ll(const char *p, size_t n, int64_t *out) {
    int neg = 0;
    size_t i = 0;
    if (n && p[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i >= n || n - i > 18) return -1;
    int64_t v = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

int repl_parse_fullresync(const char *line, size_t n, char replid[41], int64_t *offset) {
    static const char tag[] = "+FULLRESYNC ";
    size_t tl = sizeof tag - 1;
    if (n < tl + 40 + 2 || memcmp(line, tag, tl) != 0 || line[tl + 40] != ' ') return -1;
    if (parse_ll(line + tl + 41, n - tl - 41, offset) < 0 || *offset < 0) return -1;
    for (size_t i = 0; i < 40; i++) /* (hex from a real master: nothing that could break INFO's lines) */
        if (!isalnum((unsigned char)line[tl + i])) return -1;
    memcpy(replid, line + tl, 40);
    replid[40] = 0;
    return 0;
}

int repl_parse_bulk_header(const char *line, size_t n, int64_t *len, char mark[40]) {
    if (n < 2 || line[0] != '$') return -1;
    if (n == 5 + 40 && !memcmp(line + 1, "EOF:", 4)) {
        memcpy(mark, line + 5, 40);
        return 1;
    }
    if (parse_ll(line + 1, n - 1, len) < 0 || *len < 0) return -1;
    return 0;
}
