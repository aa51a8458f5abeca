/* aof_parse.c - see aof_parse.h. */
#include "persist/aof_parse.h"
#include "lib/mem.h"
#include "proto/resp.h"
#include <stdint.h>

/* Counts are at most 18 digits (no overflow of a signed 64-bit value). */
#define MAX_DIGITS 18

/* Reads "<digits>\r\n" at *at (after the '*' or '$'). 0 ok, AOFP_SHORT or
 * AOFP_BAD (with *bad at the byte). */
static int read_count(const char *p, size_t n, size_t *at, long long *v, size_t *bad) {
    size_t i = *at;
    long long x = 0;
    int digits = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        if (++digits > MAX_DIGITS) {
            *bad = i;
            return AOFP_BAD;
        }
        x = x * 10 + (p[i] - '0');
    }
    if (i == n) return AOFP_SHORT;
    if (!digits || p[i] != '\r') {
        *bad = i;
        return AOFP_BAD;
    }
    if (++i == n) return AOFP_SHORT;
    if (p[i] != '\n') {
        *bad = i;
        return AOFP_BAD;
    }
    *at = i + 1;
    *v = x;
    return 0;
}

static void add_arg(aof_cmd *c, const char *s, size_t len) {
    if (c->argc == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->argv = zrealloc(c->argv, sizeof(char *) * (size_t)c->cap);
        c->argl = zrealloc(c->argl, sizeof(size_t) * (size_t)c->cap);
    }
    c->argv[c->argc] = s;
    c->argl[c->argc++] = len;
}

/* One "*argc ..." command at *at; 0 ok, else a status (see read_count). */
static int parse_command(const char *p, size_t n, size_t *at, aof_cmd *c, size_t *bad) {
    long long argc;
    size_t i = *at + 1;
    int st = read_count(p, n, &i, &argc, bad);
    if (st) return st;
    if (argc < 1) {
        *bad = *at + 1;
        return AOFP_BAD;
    }
    c->argc = 0;
    for (long long k = 0; k < argc; k++) {
        if (i == n) return AOFP_SHORT;
        if (p[i] != '$') {
            *bad = i;
            return AOFP_BAD;
        }
        long long len;
        i++;
        if ((st = read_count(p, n, &i, &len, bad))) return st;
        if ((unsigned long long)len > n - i || n - i - (size_t)len < 2) return AOFP_SHORT;
        if (p[i + (size_t)len] != '\r' || p[i + (size_t)len + 1] != '\n') {
            *bad = i + (size_t)len;
            return AOFP_BAD;
        }
        add_arg(c, p + i, (size_t)len);
        i += (size_t)len + 2;
    }
    *at = i;
    return 0;
}

int aof_parse_next(const char *p, size_t n, size_t *pos, aof_cmd *cmd, size_t *bad) {
    size_t dummy;
    if (!bad) bad = &dummy;
    size_t i = *pos;
    while (i < n && p[i] == '#') { /* annotation: up to and including '\n' */
        const char *nl = memchr(p + i, '\n', n - i);
        if (!nl) return AOFP_SHORT;
        i = (size_t)(nl - p) + 1;
        *pos = i;
    }
    if (i == n) return AOFP_END;
    if (p[i] != '*') {
        *bad = i;
        return AOFP_BAD;
    }
    int st = parse_command(p, n, &i, cmd, bad);
    if (st) return st;
    *pos = i;
    return AOFP_CMD;
}

void aof_cmd_free(aof_cmd *cmd) {
    zfree(cmd->argv);
    zfree(cmd->argl);
    cmd->argv = NULL;
    cmd->argl = NULL;
    cmd->argc = cmd->cap = 0;
}

void aof_put_command(buf *out, int argc, const char *const *argv, const size_t *argl) {
    resp_array(out, argc);
    for (int i = 0; i < argc; i++)
        resp_bulk(out, argv[i], argl[i]);
}
