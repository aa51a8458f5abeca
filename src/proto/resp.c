/* resp.c - see resp.h. Error texts are Redis 7.0's. */
#include "proto/resp.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void resp_parser_init(resp_parser *p, long long max_bulk) {
    memset(p, 0, sizeof *p);
    p->bulk = -1;
    p->max_bulk = max_bulk;
}

void resp_parser_trim(resp_parser *p, int keep) {
    if (p->cap <= keep || p->argc || p->mbulk) return;
    zfree(p->off);
    zfree(p->len);
    p->off = p->len = NULL;
    p->cap = 0;
}

void resp_parser_free(resp_parser *p) {
    zfree(p->off);
    zfree(p->len);
    zfree(p->inline_copy);
    p->off = p->len = NULL;
    p->inline_copy = NULL;
    p->cap = 0;
}

static void add_arg(resp_parser *p, size_t off, size_t len) {
    if (p->argc == p->cap) {
        int nc = p->cap ? p->cap * 2 : 8;
        p->off = zrealloc(p->off, sizeof(size_t) * (size_t)nc);
        p->len = zrealloc(p->len, sizeof(size_t) * (size_t)nc);
        p->cap = nc;
    }
    p->off[p->argc] = off;
    p->len[p->argc] = len;
    p->argc++;
}

static int fail(resp_parser *p, const char *msg) {
    p->err = msg;
    return RESP_ERROR;
}

int resp_split_line(const char *s, size_t n, buf *out, size_t *off, size_t *len, int max) {
    size_t i = 0;
    int argc = 0;
    out->len = 0;
    buf_reserve(out, n + 1); /* never longer than the line; p is never NULL */
    n = strnlen(s, n);       /* a NUL ends the line, as for a C string */
    for (;;) {
        while (i < n && isspace((unsigned char)s[i]))
            i++;
        if (i >= n) return argc;
        if (argc == max) return argc;
        size_t start = out->len;
        int inq = 0, insq = 0, done = 0;
        while (!done) {
            char c = i < n ? s[i] : 0;
            if (inq) {
                if (i >= n) return -1;
                if (c == '\\' && i + 3 < n + 0 && s[i + 1] == 'x' && isxdigit((unsigned char)s[i + 2]) &&
                    isxdigit((unsigned char)s[i + 3])) {
                    char hex[3] = {s[i + 2], s[i + 3], 0};
                    buf_addc(out, (char)strtol(hex, NULL, 16));
                    i += 3;
                } else if (c == '\\' && i + 1 < n) {
                    char e = s[++i];
                    switch (e) {
                    case 'n':
                        e = '\n';
                        break;
                    case 'r':
                        e = '\r';
                        break;
                    case 't':
                        e = '\t';
                        break;
                    case 'b':
                        e = '\b';
                        break;
                    case 'a':
                        e = '\a';
                        break;
                    default:
                        break;
                    }
                    buf_addc(out, e);
                } else if (c == '"') {
                    if (i + 1 < n && !isspace((unsigned char)s[i + 1])) return -1;
                    done = 1;
                } else {
                    buf_addc(out, c);
                }
            } else if (insq) {
                if (i >= n) return -1;
                if (c == '\\' && i + 1 < n && s[i + 1] == '\'') {
                    i++;
                    buf_addc(out, '\'');
                } else if (c == '\'') {
                    if (i + 1 < n && !isspace((unsigned char)s[i + 1])) return -1;
                    done = 1;
                } else {
                    buf_addc(out, c);
                }
            } else {
                if (i >= n || c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == 0) {
                    done = 1;
                } else if (c == '"') {
                    inq = 1;
                } else if (c == '\'') {
                    insq = 1;
                } else {
                    buf_addc(out, c);
                }
            }
            if (i < n) i++;
        }
        off[argc] = start;
        len[argc] = out->len - start;
        argc++;
    }
}

/* The first `c` in s[0..n) that comes before any NUL byte, else NULL.
 * Redis looks for line ends with strchr, so a NUL hides the rest of the
 * buffer: the command waits for more input (until the 64 KB limit). */
static const char *find_eol(const char *s, size_t n, char c) {
    const char *hit = memchr(s, c, n);
    size_t upto = hit ? (size_t)(hit - s) : n;
    if (memchr(s, 0, upto)) return NULL;
    return hit;
}

static int parse_inline(resp_parser *p, const buf *b) {
    const char *s = b->p + p->cur;
    size_t avail = b->len - p->cur;
    const char *nl = find_eol(s, avail, '\n');
    if (!nl) {
        if (avail > RESP_INLINE_MAX) return fail(p, "Protocol error: too big inline request");
        return RESP_MORE;
    }
    size_t n = (size_t)(nl - s);
    if (n && s[n - 1] == '\r') n--;
    /* At most one argument per byte of the line. */
    size_t maxargs = n / 2 + 2;
    size_t *off = zmalloc(sizeof(size_t) * maxargs), *len = zmalloc(sizeof(size_t) * maxargs);
    buf tmp = {0};
    buf_reserve(&tmp, n + 1);
    int argc = resp_split_line(s, n, &tmp, off, len, (int)maxargs);
    p->cur += (size_t)(nl - s) + 1;
    if (argc < 0) {
        zfree(off);
        zfree(len);
        buf_free(&tmp);
        return fail(p, "Protocol error: unbalanced quotes in request");
    }
    zfree(p->inline_copy);
    p->inline_copy = tmp.p;
    p->argc = 0;
    for (int i = 0; i < argc; i++)
        add_arg(p, off[i], len[i]);
    zfree(off);
    zfree(len);
    if (argc == 0) {
        zfree(p->inline_copy);
        p->inline_copy = NULL;
        return RESP_EMPTY;
    }
    return RESP_DONE;
}

/* Reads the header line "<type><digits>\r\n" at p->cur: 1 with the number
 * parsed (*ok) and the cursor past the line, 0 when the line is not
 * complete yet, -1 when more than RESP_INLINE_MAX bytes came without one.
 * As in Redis the byte after '\r' is taken to be '\n' unchecked, and the
 * line counts as complete only once that byte has arrived. */
static int read_header_line(resp_parser *p, const buf *b, long long *v, int *ok) {
    const char *s = b->p + p->cur;
    size_t avail = b->len - p->cur;
    /* The common line, "<type><1-9><digits>\r\n" complete in the buffer,
     * in one pass; everything else (signs, zeros, long or partial lines)
     * takes the general path below, which gives the same answer for these. */
    if (avail >= 4 && s[1] >= '1' && s[1] <= '9') {
        long long n = s[1] - '0';
        size_t at = 2;
        while (at < avail && at < 19 && s[at] >= '0' && s[at] <= '9') n = n * 10 + (s[at++] - '0');
        if (at + 2 <= avail && s[at] == '\r') {
            *v = n;
            *ok = 1;
            p->cur += at + 2;
            return 1;
        }
    }
    const char *cr = find_eol(s, avail, '\r');
    if (!cr) return avail > RESP_INLINE_MAX ? -1 : 0;
    size_t at = (size_t)(cr - s);
    if (at + 2 > avail) return 0;
    *ok = at >= 1 && str2ll(s + 1, at - 1, v);
    p->cur += at + 2;
    return 1;
}

int resp_parse(resp_parser *p, const buf *b) {
    if (p->cur < p->start) p->cur = p->start;
    if (p->mbulk == 0) {
        if (p->cur >= b->len) return RESP_MORE;
        p->argc = 0;
        if (b->p[p->cur] != '*') return parse_inline(p, b);
        long long n;
        int ok = 0;
        int r = read_header_line(p, b, &n, &ok);
        if (r < 0) return fail(p, "Protocol error: too big mbulk count string");
        if (r == 0) return RESP_MORE;
        if (!ok || n > 2147483647LL) return fail(p, "Protocol error: invalid multibulk length");
        if (n <= 0) return RESP_EMPTY;
        if (p->unauth && n > 10) return fail(p, "Protocol error: unauthenticated multibulk length");
        p->mbulk = n;
        p->bulk = -1;
    }
    while (p->mbulk > 0) {
        if (p->bulk < 0) {
            if (p->cur >= b->len) return RESP_MORE;
            /* The whole line first, then its type byte (Redis's order: a
             * stray byte is reported once its line has arrived). */
            size_t line = p->cur;
            long long n;
            int ok = 0;
            int r = read_header_line(p, b, &n, &ok);
            if (r < 0) return fail(p, "Protocol error: too big bulk count string");
            if (r == 0) return RESP_MORE;
            if (b->p[line] != '$') {
                snprintf(p->errbuf, sizeof p->errbuf, "Protocol error: expected '$', got '%c'", b->p[line]);
                return fail(p, p->errbuf);
            }
            if (p->unauth && ok && n > 16384) return fail(p, "Protocol error: unauthenticated bulk length");
            if (!ok || n < 0 || n > p->max_bulk) return fail(p, "Protocol error: invalid bulk length");
            p->bulk = n;
        }
        if (b->len - p->cur < (size_t)p->bulk + 2) return RESP_MORE;
        add_arg(p, p->cur, (size_t)p->bulk);
        p->cur += (size_t)p->bulk + 2;
        p->bulk = -1;
        p->mbulk--;
    }
    return RESP_DONE;
}

void resp_args(resp_parser *p, const buf *b, const char **argv, size_t *argl) {
    const char *base = p->inline_copy ? p->inline_copy : b->p;
    for (int i = 0; i < p->argc; i++) {
        argv[i] = base + p->off[i];
        argl[i] = p->len[i];
    }
}

void resp_next(resp_parser *p) {
    p->start = p->cur;
    p->argc = 0;
    p->mbulk = 0;
    p->bulk = -1;
    if (p->inline_copy) {
        zfree(p->inline_copy);
        p->inline_copy = NULL;
    }
}

void resp_rewind(resp_parser *p) {
    size_t start = p->start;
    resp_next(p);
    p->start = p->cur = start;
}

void resp_shift(resp_parser *p, size_t n) {
    p->start -= n;
    p->cur -= n;
    if (!p->inline_copy)
        for (int i = 0; i < p->argc; i++)
            p->off[i] -= n;
}

/* ---- replies ---- */

/* "<type><n>\r\n" written in place: at most 1 + 20 + 2 bytes, and
 * ll2str's NUL fits in the room reserved. b must have RESP_HDR_ROOM free. */
#define RESP_HDR_ROOM 32
static inline void put_len(buf *b, char type, long long n) {
    char *p = b->p + b->len;
    size_t l;
    p[0] = type;
    if (n >= 0 && n < 10) {
        p[1] = (char)('0' + n);
        l = 2;
    } else {
        l = 1 + (size_t)ll2str(p + 1, n);
    }
    p[l] = '\r';
    p[l + 1] = '\n';
    b->len += l + 2;
}

static void add_len(buf *b, char type, long long n) {
    buf_reserve(b, RESP_HDR_ROOM);
    put_len(b, type, n);
}

void resp_simple(buf *b, const char *s) {
    buf_reserve(b, strlen(s) + 3);
    buf_addc(b, '+');
    buf_adds(b, s);
    buf_add(b, "\r\n", 2);
}

void resp_error(buf *b, const char *msg) {
    size_t n = strlen(msg);
    buf_reserve(b, n + 3);
    buf_addc(b, '-');
    /* Newlines would break the protocol: Redis replaces them with spaces. */
    size_t at = b->len;
    buf_add(b, msg, n);
    for (size_t i = at; i < b->len; i++)
        if (b->p[i] == '\r' || b->p[i] == '\n') b->p[i] = ' ';
    buf_add(b, "\r\n", 2);
}

void resp_int(buf *b, long long v) { add_len(b, ':', v); }

void resp_bulk(buf *b, const char *s, size_t n) {
    buf_reserve(b, n + RESP_HDR_ROOM);
    put_len(b, '$', (long long)n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len++] = '\r';
    b->p[b->len++] = '\n';
}

void resp_bulk_ll(buf *b, long long v) {
    char tmp[24];
    int n = ll2str(tmp, v);
    resp_bulk(b, tmp, (size_t)n);
}

void resp_null(buf *b, int proto) {
    if (proto >= 3)
        buf_add(b, "_\r\n", 3);
    else
        buf_add(b, "$-1\r\n", 5);
}

void resp_null_array(buf *b, int proto) {
    if (proto >= 3)
        buf_add(b, "_\r\n", 3);
    else
        buf_add(b, "*-1\r\n", 5);
}

void resp_array(buf *b, long long n) { add_len(b, '*', n); }

void resp_map(buf *b, int proto, long long pairs) {
    if (proto >= 3)
        add_len(b, '%', pairs);
    else
        add_len(b, '*', pairs * 2);
}

void resp_set(buf *b, int proto, long long n) { add_len(b, proto >= 3 ? '~' : '*', n); }

void resp_push(buf *b, int proto, long long n) { add_len(b, proto >= 3 ? '>' : '*', n); }

void resp_double(buf *b, int proto, double d) {
    char tmp[40];
    int n = d2str(tmp, d);
    if (proto >= 3) {
        buf_addc(b, ',');
        buf_add(b, tmp, (size_t)n);
        buf_add(b, "\r\n", 2);
    } else {
        resp_bulk(b, tmp, (size_t)n);
    }
}

void resp_bool(buf *b, int proto, int v) {
    if (proto >= 3)
        buf_add(b, v ? "#t\r\n" : "#f\r\n", 4);
    else
        resp_int(b, v ? 1 : 0);
}

void resp_verbatim(buf *b, int proto, const char *s, size_t n) {
    if (proto < 3) {
        resp_bulk(b, s, n);
        return;
    }
    add_len(b, '=', (long long)n + 4);
    buf_add(b, "txt:", 4);
    buf_add(b, s, n);
    buf_add(b, "\r\n", 2);
}

/* A decimal line at *pp (before end): its value, *pp past its CRLF; -1
 * when it is not all there or not digits. */
static long long peek_number(const char **pp, const char *end) {
    const char *p = *pp;
    long long v = 0;
    int digits = 0;
    while (p < end && *p >= '0' && *p <= '9' && digits < 18) {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (!digits || end - p < 2 || p[0] != '\r' || p[1] != '\n') return -1;
    *pp = p + 2;
    return v;
}

int resp_peek(const char *start, size_t n, size_t *used, const char **arg1, size_t *arg1len) {
    const char *p = start, *end = start + n;
    if (p >= end || *p != '*') return 0;
    p++;
    long long argc = peek_number(&p, end);
    if (argc < 1 || argc > RESP_PEEK_ARGS) return 0;
    *arg1 = NULL;
    *arg1len = 0;
    for (long long i = 0; i < argc; i++) {
        if (p >= end || *p != '$') return 0;
        p++;
        long long l = peek_number(&p, end);
        if (l < 0 || end - p < l + 2) return 0;
        if (i == 1) {
            *arg1 = p;
            *arg1len = (size_t)l;
        }
        p += l + 2;
    }
    *used = (size_t)(p - start);
    return 1;
}
