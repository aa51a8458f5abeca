/* resp.h - RESP request parsing and reply composition. Pure functions over
 * buffers: nothing here touches a socket.
 *
 * Parsing is resumable: a resp_parser remembers how far into a multibulk it
 * got, so a command that arrives in many reads is scanned once. Arguments are
 * kept as offsets into the caller's buffer (which may be reallocated between
 * calls) and turned into pointers by resp_args once a command is complete.
 *
 * Reply writers append one RESP value to a buf. Those whose wire form differs
 * between RESP2 and RESP3 take the protocol version. */
#ifndef SHOAL_RESP_H
#define SHOAL_RESP_H
#include "lib/buf.h"
#include <stddef.h>
#include <stdint.h>

enum {
    RESP_DONE = 0,  /* a complete command is ready */
    RESP_MORE = 1,  /* need more bytes */
    RESP_EMPTY = 2, /* consumed an empty command (blank line, *0) */
    RESP_ERROR = -1 /* protocol error: reply with p->err and close */
};

#define RESP_INLINE_MAX (64 * 1024)

typedef struct resp_parser {
    size_t start;       /* offset of the current command */
    size_t cur;         /* parse cursor */
    long long mbulk;    /* arguments still expected; 0 = not in a multibulk */
    long long bulk;     /* length of the bulk being read; -1 = none */
    int argc, cap;
    size_t *off, *len;  /* per argument: offset and length in the buffer */
    char *inline_copy;  /* unescaped inline arguments live here */
    const char *err;    /* protocol error text after RESP_ERROR */
    char errbuf[64];
    long long max_bulk; /* proto-max-bulk-len */
    int unauth;         /* the client has not authenticated: small limits, as Redis */
} resp_parser;

void resp_parser_init(resp_parser *p, long long max_bulk);
void resp_parser_free(resp_parser *p);
/* Gives back the per-argument arrays when they hold more than `keep`
 * entries and no command is half parsed (they grow again as needed). */
void resp_parser_trim(resp_parser *p, int keep);

/* Parses the next command from b->p[p->start .. b->len). On RESP_DONE the
 * command spans [p->start, p->cur); read it with resp_args, then call
 * resp_next to move on. */
int resp_parse(resp_parser *p, const buf *b);
/* Fills argv/argl (p->argc entries) with pointers into b (or into the inline
 * copy); valid until the buffer changes or resp_next is called. */
void resp_args(resp_parser *p, const buf *b, const char **argv, size_t *argl);
/* Forget the current command; the next parse starts at p->cur. */
void resp_next(resp_parser *p);
/* Forget the current command as parsed; the next parse reads it again. */
void resp_rewind(resp_parser *p);
/* After the caller dropped the first n bytes of the buffer. */
void resp_shift(resp_parser *p, size_t n);

/* A look at the command that starts at p (n bytes there), without a
 * parser: 1 when it is all there in the multibulk form (at most
 * RESP_PEEK_ARGS arguments), with *used its length and *arg1 its second
 * argument (NULL when it has one); 0 otherwise. For hints only (a
 * pipeline's next keys): it checks less than resp_parse, but never reads
 * past p + n. */
#define RESP_PEEK_ARGS 1024
int resp_peek(const char *p, size_t n, size_t *used, const char **arg1, size_t *arg1len);

/* Splits a line as redis-cli/inline commands do (quotes, \x escapes).
 * Returns the argument count, or -1 on unbalanced quotes. Arguments are
 * written into out (as len-prefixed runs) and described by off/len. */
int resp_split_line(const char *s, size_t n, buf *out, size_t *off, size_t *len, int max);

/* Reply composition. */
void resp_simple(buf *b, const char *s);
void resp_error(buf *b, const char *msg); /* msg without '-' and CRLF */
void resp_int(buf *b, long long v);
void resp_bulk(buf *b, const char *s, size_t n);
void resp_bulk_ll(buf *b, long long v);
void resp_null(buf *b, int proto);       /* $-1 or _ */
void resp_null_array(buf *b, int proto); /* *-1 or _ */
void resp_array(buf *b, long long n);
void resp_map(buf *b, int proto, long long pairs);
void resp_set(buf *b, int proto, long long n);
void resp_double(buf *b, int proto, double d);
void resp_bool(buf *b, int proto, int v);
void resp_verbatim(buf *b, int proto, const char *s, size_t n);
void resp_push(buf *b, int proto, long long n);
#endif
