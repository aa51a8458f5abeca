/* aof_manifest.c - see aof_manifest.h. The rules follow redis-server 7.0's
 * loader: a line longer than 1024 bytes (or a last line without '\n') is
 * refused, as are blank lines, fewer than six words or an odd number of
 * them, a missing file/seq/type (seq 0 counts as missing), a name with a
 * '/', a second base, an incr seq that does not grow, an unknown type. */
#include "persist/aof_manifest.h"
#include "lib/mem.h"
#include "proto/resp.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#define MANIFEST_MAX_LINE 1024
#define MANIFEST_MAX_WORDS 32

static void file_set(aof_file *f, const char *name, size_t len, long long seq, char type) {
    zfree(f->name);
    f->name = zstrndup(name, len);
    f->seq = seq;
    f->type = type;
}

static void list_add(aof_file **list, int *n, const aof_file *f) {
    *list = zrealloc(*list, sizeof(aof_file) * (size_t)(*n + 1));
    (*list)[(*n)++] = *f;
}

void aof_manifest_free(aof_manifest *m) {
    zfree(m->base.name);
    for (int i = 0; i < m->nincr; i++)
        zfree(m->incr[i].name);
    for (int i = 0; i < m->nhist; i++)
        zfree(m->hist[i].name);
    zfree(m->incr);
    zfree(m->hist);
    memset(m, 0, sizeof *m);
}

/* One line's words into f; NULL ok, else the reason. */
static const char *parse_line(const char *line, size_t n, aof_file *f) {
    buf tmp = {0};
    size_t off[MANIFEST_MAX_WORDS], len[MANIFEST_MAX_WORDS];
    int argc = resp_split_line(line, n, &tmp, off, len, MANIFEST_MAX_WORDS);
    const char *why = NULL;
    if (argc < 6 || argc % 2 || argc == MANIFEST_MAX_WORDS) why = "Invalid AOF manifest file format";
    for (int i = 0; !why && i < argc; i += 2) {
        const char *k = tmp.p + off[i], *v = tmp.p + off[i + 1];
        size_t kl = len[i], vl = len[i + 1];
        if (kl == 4 && !strncasecmp(k, "file", 4)) {
            if (memchr(v, '/', vl))
                why = "File can't be a path, just a filename";
            else if (vl == 0 || memchr(v, 0, vl))
                why = "Invalid AOF manifest file format";
            else
                file_set(f, v, vl, f->seq, f->type);
        } else if (kl == 3 && !strncasecmp(k, "seq", 3)) {
            char num[32];
            snprintf(num, sizeof num, "%.*s", (int)(vl < 31 ? vl : 31), v);
            f->seq = atoll(num); /* as Redis: atoll, so "x" is 0 (missing) */
        } else if (kl == 4 && !strncasecmp(k, "type", 4)) {
            f->type = vl ? v[0] : 0;
        }
    }
    buf_free(&tmp);
    if (!why && (!f->name || f->seq == 0 || !f->type)) why = "Invalid AOF manifest file format";
    return why;
}

/* Adds a parsed line's file to m; NULL ok, else the reason. */
static const char *add_file(aof_manifest *m, aof_file *f) {
    switch (f->type) {
    case 'b':
        if (m->base.name) return "Found duplicate base file information";
        m->base = *f;
        m->base_seq = f->seq;
        return NULL;
    case 'h':
        list_add(&m->hist, &m->nhist, f);
        return NULL;
    case 'i':
        if (f->seq <= m->incr_seq) return "Found a non-monotonic sequence number";
        list_add(&m->incr, &m->nincr, f);
        m->incr_seq = f->seq;
        return NULL;
    default:
        return "Unknown AOF file type";
    }
}

int aof_manifest_parse(const char *text, size_t n, aof_manifest *m, int *line, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    *line = 0;
    const char *why = n == 0 ? "Found an empty AOF manifest" : NULL;
    size_t at = 0;
    int lineno = 0;
    while (!why && at < n) {
        const char *s = text + at, *nl = memchr(s, '\n', n - at);
        size_t len = nl ? (size_t)(nl - s) + 1 : n - at;
        lineno++;
        at += len;
        if (s[0] == '#') continue;
        if (!nl || len > MANIFEST_MAX_LINE) {
            why = "The AOF manifest file contains too long line";
            break;
        }
        size_t a = 0, b = len;
        while (a < b && strchr(" \t\r\n", s[a]))
            a++;
        while (b > a && strchr(" \t\r\n", s[b - 1]))
            b--;
        aof_file f = {0};
        why = a == b ? "Invalid AOF manifest file format" : parse_line(s + a, b - a, &f);
        if (!why) why = add_file(m, &f);
        if (why) zfree(f.name);
    }
    if (!why) return 0;
    *line = lineno;
    snprintf(err, errlen, "%s", why);
    aof_manifest_free(m);
    return -1;
}

/* A name as Redis's sdscatrepr writes it when sdsneedsrepr says so. */
static void put_name(buf *out, const char *s) {
    int plain = *s != 0;
    for (const char *p = s; *p && plain; p++) {
        unsigned char c = (unsigned char)*p;
        plain = isprint(c) && !isspace(c) && c != '\\' && c != '"' && c != '\'';
    }
    if (plain) {
        buf_adds(out, s);
        return;
    }
    static const char special[] = "\\\"\n\r\t\a\b", letter[] = "\\\"nrtab";
    buf_addc(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        const char *e = strchr(special, *p);
        if (e) {
            buf_addc(out, '\\');
            buf_addc(out, letter[e - special]);
        } else if (isprint(*p)) {
            buf_addc(out, (char)*p);
        } else {
            buf_printf(out, "\\x%02x", *p);
        }
    }
    buf_addc(out, '"');
}

static void put_file(buf *out, const aof_file *f) {
    buf_adds(out, "file ");
    put_name(out, f->name);
    buf_printf(out, " seq %lld type %c\n", f->seq, f->type);
}

void aof_manifest_format(const aof_manifest *m, buf *out) {
    if (m->base.name) put_file(out, &m->base);
    for (int i = 0; i < m->nhist; i++)
        put_file(out, &m->hist[i]);
    for (int i = 0; i < m->nincr; i++)
        put_file(out, &m->incr[i]);
}

void aof_manifest_set_base(aof_manifest *m, const char *name, long long seq) {
    file_set(&m->base, name, strlen(name), seq, 'b');
    if (seq > m->base_seq) m->base_seq = seq;
}

void aof_manifest_add_incr(aof_manifest *m, const char *name, long long seq) {
    aof_file f = {0};
    file_set(&f, name, strlen(name), seq, 'i');
    list_add(&m->incr, &m->nincr, &f);
    if (seq > m->incr_seq) m->incr_seq = seq;
}

/* Keeps out usable as a C string (the NUL is not counted in len). */
static void terminate(buf *out) {
    buf_addc(out, 0);
    out->len--;
}

void aof_name_base(buf *out, const char *prefix, long long seq, int rdb) {
    out->len = 0;
    buf_printf(out, "%s.%lld.base.%s", prefix, seq, rdb ? "rdb" : "aof");
    terminate(out);
}

void aof_name_incr(buf *out, const char *prefix, long long seq) {
    out->len = 0;
    buf_printf(out, "%s.%lld.incr.aof", prefix, seq);
    terminate(out);
}

void aof_name_manifest(buf *out, const char *prefix) {
    out->len = 0;
    buf_printf(out, "%s.manifest", prefix);
    terminate(out);
}
