/* fuzz_resp.c - libFuzzer target for the resumable RESP request parser
 * (src/proto/resp.h) and the inline splitter resp_split_line.
 *
 * Input layout: byte 0 seeds the chunk sizes, byte 1 picks options (bit 0:
 * drop consumed bytes from the front of the buffer as the server does; bit
 * 1: a tiny proto-max-bulk-len from bits 4-7; bits 2+3: pad the stream past
 * the 64 KB line limits with its last byte, or 'x' for a newline); the rest is the byte stream a
 * client sends. The stream is parsed twice: all at once, and fed in small
 * chunks into a buffer that is reallocated and shifted between calls. Both
 * runs must see the same commands (padded streams are only parsed whole:
 * hitting the 64 KB limits legitimately depends on how much has arrived).
 * Every result is checked against the parser's contract: argument counts
 * and spans inside the buffer, errors carry a message, an empty command
 * consumes bytes. resp_peek (the pipeline lookahead's look at a command)
 * runs before each parse: it stays inside the bytes, and a command it
 * sees whole is the one the parser then reads. */
#include "lib/buf.h"
#include "lib/mem.h"
#include "proto/resp.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "fuzz_resp: check failed: %s (line %d)\n", #cond, __LINE__);                               \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

typedef struct feeder {
    uint32_t rng;
    int shift; /* drop consumed bytes like conn_process does */
} feeder;

static uint32_t next_rand(feeder *f) {
    f->rng = f->rng * 1103515245u + 12345u;
    return f->rng >> 16;
}

/* Appends one event to the transcript: D<argc>{<len><bytes>}, E, or X<err>. */
static void record_done(buf *log, resp_parser *p, const buf *b) {
    CHECK(p->argc >= 1 && p->argc <= p->cap);
    CHECK(p->start <= p->cur && p->cur <= b->len);
    const char **argv = malloc(sizeof(char *) * (size_t)p->argc);
    size_t *argl = malloc(sizeof(size_t) * (size_t)p->argc);
    resp_args(p, b, argv, argl);
    buf_addc(log, 'D');
    buf_add(log, &p->argc, sizeof p->argc);
    for (int i = 0; i < p->argc; i++) {
        if (p->inline_copy) {
            /* Unescaped inline arguments are never longer than the line. */
            CHECK(p->off[i] + p->len[i] <= p->cur - p->start);
        } else {
            CHECK(p->off[i] >= p->start && p->off[i] + p->len[i] + 2 <= p->cur);
            CHECK(argv[i] >= b->p && argv[i] + argl[i] <= b->p + b->len);
        }
        CHECK(argl[i] == p->len[i]);
        buf_add(log, &argl[i], sizeof argl[i]);
        buf_add(log, argv[i], argl[i]);
    }
    free(argv);
    free(argl);
}

/* Parses everything complete in b; 1 when the stream ended in an error. */
static int drain(resp_parser *p, buf *b, buf *log, const feeder *f) {
    for (;;) {
        size_t before = p->start;
        /* resp_peek on the same bytes: inside them, and where it sees a
         * whole command the parser sees the same one */
        size_t used = 0, a1l = 0;
        const char *a1 = NULL, *base = p->start < b->len ? b->p + p->start : NULL;
        int pk = base && resp_peek(base, b->len - p->start, &used, &a1, &a1l);
        if (pk) {
            CHECK(used > 0 && used <= b->len - p->start);
            CHECK(a1 == NULL || (a1 > base && a1 + a1l <= base + used));
        }
        int r = resp_parse(p, b);
        if (pk && r == RESP_DONE && !p->inline_copy) {
            CHECK(p->cur - p->start == used);
            CHECK(p->argc >= 2 ? a1 == b->p + p->off[1] && a1l == p->len[1] : a1 == NULL);
        }
        if (r == RESP_MORE) break;
        if (r == RESP_ERROR) {
            CHECK(p->err != NULL);
            CHECK(strncmp(p->err, "Protocol error: ", 16) == 0);
            buf_addc(log, 'X');
            buf_adds(log, p->err);
            return 1;
        }
        if (r == RESP_EMPTY) {
            CHECK(p->cur > before && p->cur <= b->len); /* progress */
            buf_addc(log, 'E');
        } else {
            CHECK(r == RESP_DONE);
            record_done(log, p, b);
        }
        resp_next(p);
        CHECK(p->start == p->cur && p->argc == 0 && p->inline_copy == NULL);
    }
    if (f->shift && p->start > 0) {
        size_t n = p->start;
        buf_consume(b, n);
        resp_shift(p, n);
    }
    return 0;
}

static void parse_whole(const uint8_t *d, size_t n, long long max_bulk, buf *log) {
    resp_parser p;
    resp_parser_init(&p, max_bulk);
    buf b = {0};
    buf_add(&b, d, n);
    feeder f = {0, 0};
    drain(&p, &b, log, &f);
    resp_parser_free(&p);
    buf_free(&b);
}

static void parse_chunked(const uint8_t *d, size_t n, long long max_bulk, feeder *f, buf *log) {
    resp_parser p;
    resp_parser_init(&p, max_bulk);
    buf b = {0};
    size_t at = 0;
    while (at < n) {
        uint32_t r = next_rand(f);
        /* Mostly small pieces; big inputs in bigger ones (each call rescans
         * an unfinished line, so tiny pieces would make them quadratic). */
        size_t most = n > 4096 ? n / 32 : 64;
        size_t chunk = (r & 3) == 0 ? 1 : 1 + (r >> 2) % most;
        if (chunk > n - at) chunk = n - at;
        /* A fresh buffer each time now and then: the parser keeps offsets,
         * never pointers, so reallocation must not matter. */
        if ((r & 0x70) == 0) {
            buf nb = {0};
            buf_add(&nb, b.p, b.len);
            buf_free(&b);
            b = nb;
        }
        buf_add(&b, d + at, chunk);
        at += chunk;
        if (drain(&p, &b, log, f)) break;
    }
    resp_parser_free(&p);
    buf_free(&b);
}

static void split_line(const uint8_t *d, size_t n, int max) {
    buf out = {0};
    size_t *off = malloc(sizeof(size_t) * (size_t)(max + 1));
    size_t *len = malloc(sizeof(size_t) * (size_t)(max + 1));
    int argc = resp_split_line((const char *)d, n, &out, off, len, max);
    CHECK(argc >= -1 && argc <= max);
    CHECK(out.len <= n);
    for (int i = 0; i < argc; i++)
        CHECK(off[i] + len[i] <= out.len);
    free(off);
    free(len);
    buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    feeder f = {data[0] * 2654435761u, (data[1] & 1) != 0};
    long long max_bulk = (data[1] & 2) ? (long long)(data[1] >> 4) : 512LL * 1024 * 1024;
    const uint8_t *d = data + 2;
    size_t n = size - 2;
    if ((data[1] & 0x0c) == 0x0c && n > 0) {
        size_t big = n + RESP_INLINE_MAX + 16;
        uint8_t *pad = malloc(big);
        memcpy(pad, d, n);
        /* (not '\n': 64K empty lines are slow and prove nothing new) */
        memset(pad + n, d[n - 1] == '\n' ? 'x' : d[n - 1], big - n);
        buf whole = {0};
        parse_whole(pad, big, max_bulk, &whole);
        buf_free(&whole);
        free(pad);
        return 0;
    }

    buf whole = {0}, chunked = {0};
    parse_whole(d, n, max_bulk, &whole);
    parse_chunked(d, n, max_bulk, &f, &chunked);
    if (n < RESP_INLINE_MAX) {
        if (whole.len != chunked.len || (whole.len && memcmp(whole.p, chunked.p, whole.len) != 0)) {
            fprintf(stderr, "fuzz_resp: whole and chunked parses differ (%zu vs %zu bytes)\n", whole.len, chunked.len);
            abort();
        }
    }
    buf_free(&whole);
    buf_free(&chunked);

    /* The splitter on the first line, with a small and a roomy limit. */
    const uint8_t *nl = memchr(d, '\n', n);
    size_t line = nl ? (size_t)(nl - d) : n;
    split_line(d, line, 1 + data[0] % 4);
    split_line(d, line, (int)line / 2 + 2);
    return 0;
}
