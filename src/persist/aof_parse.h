/* aof_parse.h - the command stream of an append-only file, as Redis 7.0
 * writes it (an incr file, or a base file in AOF format, or the tail after
 * an RDB preamble):
 *
 *   stream  = (annotation | command)*
 *   annotation = "#" any-bytes "\n"              ("#TS:1700000000\r\n")
 *   command = "*" argc "\r\n" ("$" len "\r\n" bytes "\r\n"){argc}
 *
 * The parser is a parser of untrusted input: every number is checked before
 * it is used, nothing is allocated from a length read in the file, and it
 * never reads past n. It tells a stream that simply ends inside a command
 * (a crash during write(2): AOFP_SHORT, which aof-load-truncated may cut
 * off) from bytes that break the format (AOFP_BAD, never loaded). Pure
 * functions, any thread. */
#ifndef SHOAL_AOF_PARSE_H
#define SHOAL_AOF_PARSE_H
#include <stddef.h>

enum {
    AOFP_CMD = 0,    /* a command was parsed */
    AOFP_END = 1,    /* nothing left (only complete annotations, or nothing) */
    AOFP_SHORT = -1, /* the input ends inside a command or an annotation */
    AOFP_BAD = -2,   /* a byte that breaks the format */
};

/* One parsed command: argv[i] points into the parsed input (argl[i] bytes,
 * not NUL-terminated) and stays valid as long as the input does. The arrays
 * are owned by the struct (aof_cmd_free) and reused from call to call. */
typedef struct aof_cmd {
    int argc, cap;
    const char **argv;
    size_t *argl;
} aof_cmd;

/* Parses the next command of p[0..n) at *pos, skipping annotation lines.
 * AOFP_CMD: cmd holds it and *pos is just after it. AOFP_END: *pos == n.
 * AOFP_SHORT: *pos is left at the start of the unfinished command.
 * AOFP_BAD: *pos is left at the start of the command and *bad (when not
 * NULL) is the offset of the offending byte. */
int aof_parse_next(const char *p, size_t n, size_t *pos, aof_cmd *cmd, size_t *bad);
void aof_cmd_free(aof_cmd *cmd);

/* Appends the RESP form of a command ("*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n")
 * to out, as the stream above reads it. */
struct buf;
void aof_put_command(struct buf *out, int argc, const char *const *argv, const size_t *argl);
#endif
