/* aof_manifest.h - Redis 7.0's AOF manifest: the list of files that make up
 * the append-only file, kept in <appenddirname>/<appendfilename>.manifest:
 *
 *   file appendonly.aof.1.base.rdb seq 1 type b\n
 *   file appendonly.aof.1.incr.aof seq 1 type i\n
 *
 * One line per file: key/value pairs (file, seq, type; unknown keys are
 * ignored for forward compatibility), names quoted as Redis's sdscatrepr
 * when they need it, '#' lines are comments. At most one base (b), any
 * number of history (h) files, and incr (i) files with increasing seq, in
 * the order they are replayed. The parser takes the text as hostile and
 * answers with redis-server's own reasons. Pure functions, any thread. */
#ifndef SHOAL_AOF_MANIFEST_H
#define SHOAL_AOF_MANIFEST_H
#include "lib/buf.h"
#include <stddef.h>

typedef struct aof_file {
    char *name; /* a base name (no '/') */
    long long seq;
    char type; /* 'b', 'h' or 'i' */
} aof_file;

typedef struct aof_manifest {
    aof_file base;         /* base.name == NULL: no base file */
    aof_file *incr, *hist; /* incr files in replay order */
    int nincr, nhist;
    long long base_seq, incr_seq; /* highest seq seen (the next file is +1) */
} aof_manifest;

/* Parses manifest text. 0 ok; else -1 with Redis's reason in err and, when
 * a line is at fault, *line set to its number (else 0). On error m is left
 * empty. */
int aof_manifest_parse(const char *text, size_t n, aof_manifest *m, int *line, char *err, size_t errlen);
/* The text of m: base first, then history, then incr files. */
void aof_manifest_format(const aof_manifest *m, buf *out);
/* Sets the base file (replacing one) and appends an incr file; names are
 * copied. */
void aof_manifest_set_base(aof_manifest *m, const char *name, long long seq);
void aof_manifest_add_incr(aof_manifest *m, const char *name, long long seq);
void aof_manifest_free(aof_manifest *m);

/* File names: "<prefix>.<seq>.base.rdb" (rdb=1) or ".base.aof",
 * "<prefix>.<seq>.incr.aof", "<prefix>.manifest". Written into out
 * (cleared first), NUL-terminated. */
void aof_name_base(buf *out, const char *prefix, long long seq, int rdb);
void aof_name_incr(buf *out, const char *prefix, long long seq);
void aof_name_manifest(buf *out, const char *prefix);
#endif
