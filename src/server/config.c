/* config.c - directive parsing for the config file, `--name value`
 * arguments and CONFIG GET/SET/REWRITE; one row per directive in
 * CONFIG_TABLE (config.h). */
#include "server/config.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "proto/resp.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

config cfg;

typedef struct cfg_row {
    const char *name;
    int type;
    const char *def;
    int64_t min, max;
    int mut;
    int64_t *ival;
    char **sval;
} cfg_row;

static cfg_row rows[] = {
#define ROW(name, field, type, def, min, max, mut) {name, type, def, min, max, mut, &cfg.field##_i, &cfg.field##_s},
    CONFIG_TABLE(ROW)
#undef ROW
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

int config_count(void) { return NROWS; }
const char *config_name(int i) { return rows[i].name; }

static int find_row(const char *name) {
    for (int i = 0; i < NROWS; i++)
        if (!strcasecmp(rows[i].name, name)) return i;
    /* Redis's alias */
    if (!strcasecmp(name, "io-threads")) return -2;
    return -1;
}

/* "1gb" -> bytes, as Redis's memtoull. */
static int parse_mem(const char *s, int64_t *out) {
    char *end;
    errno = 0;
    if (!*s) return 0;
    long double v = strtold(s, &end);
    if (errno || end == s) return 0;
    long double mul = 1;
    if (!strcasecmp(end, "") || !strcasecmp(end, "b")) mul = 1;
    else if (!strcasecmp(end, "k")) mul = 1000;
    else if (!strcasecmp(end, "kb")) mul = 1024;
    else if (!strcasecmp(end, "m")) mul = 1000 * 1000;
    else if (!strcasecmp(end, "mb")) mul = 1024 * 1024;
    else if (!strcasecmp(end, "g")) mul = 1000L * 1000 * 1000;
    else if (!strcasecmp(end, "gb")) mul = 1024L * 1024 * 1024;
    else return 0;
    /* only whole numbers, as Redis */
    for (const char *p = s; p < end; p++)
        if (!isdigit((unsigned char)*p) && !(p == s && *p == '-')) return 0;
    v *= mul;
    if (v > (long double)INT64_MAX) return 0;
    *out = (int64_t)v;
    return 1;
}

static int parse_obuf(const char *v, int64_t lim[3][3], char *err, size_t el) {
    char *copy = strdup(v), *save = NULL;
    char *tok[64];
    int n = 0;
    for (char *t = strtok_r(copy, " ", &save); t && n < 64; t = strtok_r(NULL, " ", &save)) tok[n++] = t;
    if (n == 0 || n % 4) {
        free(copy);
        snprintf(err, el, "Wrong number of arguments in buffer limit configuration.");
        return -1;
    }
    for (int i = 0; i < n; i += 4) {
        int cls;
        if (!strcasecmp(tok[i], "normal")) cls = 0;
        else if (!strcasecmp(tok[i], "replica") || !strcasecmp(tok[i], "slave")) cls = 1;
        else if (!strcasecmp(tok[i], "pubsub")) cls = 2;
        else {
            free(copy);
            snprintf(err, el, "Invalid client class specified in buffer limit configuration.");
            return -1;
        }
        int64_t h, s, secs;
        long long tmp;
        if (!parse_mem(tok[i + 1], &h) || !parse_mem(tok[i + 2], &s) ||
            !str2ll(tok[i + 3], strlen(tok[i + 3]), &tmp) || h < 0 || s < 0 || tmp < 0) {
            free(copy);
            snprintf(err, el, "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
            return -1;
        }
        secs = tmp;
        lim[cls][0] = h;
        lim[cls][1] = s;
        lim[cls][2] = secs;
    }
    free(copy);
    return 0;
}

static const char *loglevels[] = {"debug", "verbose", "notice", "warning", "nothing", NULL};

/* Sets row i from text; 0 ok, else -1 with a reason in err. */
static int set_row(int i, const char *v, char *err, size_t el) {
    cfg_row *r = &rows[i];
    switch (r->type) {
    case CT_INT: {
        long long x;
        if (!str2ll(v, strlen(v), &x)) {
            /* unixsocketperm is octal */
            char *end;
            if (!strcmp(r->name, "unixsocketperm") && (x = strtoll(v, &end, 8), *end == 0 && *v)) {
            } else {
                snprintf(err, el, "argument couldn't be parsed into an integer");
                return -1;
            }
        } else if (!strcmp(r->name, "unixsocketperm")) {
            x = strtoll(v, NULL, 8);
        }
        if (x < r->min || x > r->max) {
            snprintf(err, el, "argument must be between %lld and %lld inclusive", (long long)r->min,
                     (long long)r->max);
            return -1;
        }
        __atomic_store_n(r->ival, (int64_t)x, __ATOMIC_RELAXED);
        return 0;
    }
    case CT_MEM: {
        int64_t x;
        if (!parse_mem(v, &x)) {
            snprintf(err, el, "argument must be a memory value");
            return -1;
        }
        if (x < r->min || x > r->max) {
            snprintf(err, el, "argument must be between %lld and %lld inclusive", (long long)r->min,
                     (long long)r->max);
            return -1;
        }
        __atomic_store_n(r->ival, x, __ATOMIC_RELAXED);
        return 0;
    }
    case CT_BOOL:
        if (!strcasecmp(v, "yes")) *r->ival = 1;
        else if (!strcasecmp(v, "no")) *r->ival = 0;
        else {
            snprintf(err, el, "argument must be 'yes' or 'no'");
            return -1;
        }
        return 0;
    case CT_ENUM:
        for (int k = 0; loglevels[k]; k++)
            if (!strcasecmp(v, loglevels[k])) {
                *r->ival = k;
                log_set_level(k);
                return 0;
            }
        snprintf(err, el, "argument(s) must be one of the following: debug, verbose, notice, warning, nothing");
        return -1;
    case CT_SPECIAL: {
        int64_t lim[3][3];
        memcpy(lim, cfg.obuf_limits, sizeof lim);
        if (parse_obuf(v, lim, err, el) < 0) return -1;
        memcpy(cfg.obuf_limits, lim, sizeof lim);
        return 0;
    }
    default: /* CT_STR */
        if (!strcmp(r->name, "dir") && *v && chdir(v) != 0) {
            snprintf(err, el, "No such file or directory");
            return -1;
        }
        free(*r->sval);
        *r->sval = strdup(v);
        return 0;
    }
}

void config_defaults(void) {
    char err[256];
    for (int i = 0; i < NROWS; i++) {
        if (!strcmp(rows[i].name, "dir")) {
            rows[i].sval[0] = strdup(".");
            continue;
        }
        if (set_row(i, rows[i].def, err, sizeof err) < 0) {
            fprintf(stderr, "bad default for %s: %s\n", rows[i].name, err);
            abort();
        }
    }
    /* Redis's default save rules; "" disables them. */
    free(cfg.save_s);
    cfg.save_s = strdup("3600 1 300 100 60 10000");
}

static int fatal(char *err, size_t el, int line, const char *text, const char *why) {
    snprintf(err, el,
             "\n*** FATAL CONFIG FILE ERROR (shoal) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s",
             line, text, why);
    return -1;
}

/* One directive line: name + args. */
static int apply_line(const char *line, int lineno, char *err, size_t el) {
    buf tmp = {0};
    size_t off[256], len[256];
    const char *first = line;
    while (*first == ' ' || *first == '\t') first++;
    if (*first == '#' || *first == 0) return 0; /* comment or blank line */
    size_t n = strlen(line);
    int argc = resp_split_line(line, n, &tmp, off, len, 256);
    if (argc < 0) {
        buf_free(&tmp);
        return fatal(err, el, lineno, line, "Unbalanced quotes in configuration line");
    }
    if (argc == 0 || (tmp.p && tmp.p[off[0]] == '#')) {
        buf_free(&tmp);
        return 0;
    }
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)len[0], tmp.p + off[0]);
    int i = find_row(name);
    if (i == -2) {
        buf_free(&tmp);
        return 0;
    }
    if (i < 0) {
        buf_free(&tmp);
        return fatal(err, el, lineno, line, "Bad directive or wrong number of arguments");
    }
    /* Multi-word values (save, bind, client-output-buffer-limit) are joined. */
    buf v = {0};
    for (int a = 1; a < argc; a++) {
        if (a > 1) buf_addc(&v, ' ');
        buf_add(&v, tmp.p + off[a], len[a]);
    }
    buf_addc(&v, 0);
    int multi = rows[i].type == CT_SPECIAL || !strcmp(rows[i].name, "save") || !strcmp(rows[i].name, "bind") ||
                !strcmp(rows[i].name, "cpu-affinity");
    int rc = 0;
    char why[256];
    if (argc < 2 && strcmp(rows[i].name, "save") && strcmp(rows[i].name, "logfile") &&
        strcmp(rows[i].name, "unixsocket")) {
        rc = fatal(err, el, lineno, line, "wrong number of arguments");
    } else if (argc > 2 && !multi) {
        rc = fatal(err, el, lineno, line, "wrong number of arguments");
    } else if (rows[i].type == CT_SPECIAL) {
        /* client-output-buffer-limit lines set one class at a time */
        if (parse_obuf(v.p, cfg.obuf_limits, why, sizeof why) < 0) rc = fatal(err, el, lineno, line, why);
    } else if (!strcmp(rows[i].name, "save") && !strcmp(v.p, "") && argc >= 2) {
        free(cfg.save_s);
        cfg.save_s = strdup("");
    } else if (set_row(i, argc < 2 ? "" : v.p, why, sizeof why) < 0) {
        rc = fatal(err, el, lineno, line, why);
    }
    buf_free(&v);
    buf_free(&tmp);
    return rc;
}

int config_load(int argc, char **argv, char *err, size_t el) {
    int a = 1;
    buf all = {0};
    if (a < argc && strncmp(argv[a], "--", 2) != 0) {
        const char *path = argv[a++];
        FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
        if (!f) {
            snprintf(err, el, "Fatal error, can't open config file '%s': %s", path, strerror(errno));
            return -1;
        }
        char *rp = realpath(path, NULL);
        cfg.config_file = rp;
        char line[4096];
        int lineno = 0;
        while (fgets(line, sizeof line, f)) {
            lineno++;
            size_t n = strlen(line);
            while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
            if (apply_line(line, lineno, err, el) < 0) {
                if (f != stdin) fclose(f);
                return -1;
            }
        }
        if (f != stdin) fclose(f);
    }
    /* --name v1 v2 --other v: each becomes a line, as redis-server does. */
    int lineno = 0;
    while (a < argc) {
        if (strncmp(argv[a], "--", 2) != 0) {
            snprintf(err, el, "Invalid argument '%s': options start with --", argv[a]);
            buf_free(&all);
            return -1;
        }
        all.len = 0;
        buf_adds(&all, argv[a] + 2);
        a++;
        while (a < argc && strncmp(argv[a], "--", 2) != 0) {
            buf_addc(&all, ' ');
            /* quote so values with spaces survive the split */
            buf_addc(&all, '"');
            for (const char *p = argv[a]; *p; p++) {
                if (*p == '"' || *p == '\\') buf_addc(&all, '\\');
                buf_addc(&all, *p);
            }
            buf_addc(&all, '"');
            a++;
        }
        buf_addc(&all, 0);
        lineno++;
        if (apply_line(all.p, lineno, err, el) < 0) {
            buf_free(&all);
            return -1;
        }
    }
    buf_free(&all);
    return 0;
}

void config_value(int i, buf *out) {
    cfg_row *r = &rows[i];
    switch (r->type) {
    case CT_INT:
        if (!strcmp(r->name, "unixsocketperm")) buf_printf(out, "%llo", (unsigned long long)*r->ival);
        else buf_printf(out, "%lld", (long long)__atomic_load_n(r->ival, __ATOMIC_RELAXED));
        break;
    case CT_MEM: buf_printf(out, "%lld", (long long)__atomic_load_n(r->ival, __ATOMIC_RELAXED)); break;
    case CT_BOOL: buf_adds(out, *r->ival ? "yes" : "no"); break;
    case CT_ENUM: buf_adds(out, loglevels[*r->ival]); break;
    case CT_SPECIAL: {
        const char *cls[3] = {"normal", "slave", "pubsub"};
        for (int k = 0; k < 3; k++)
            buf_printf(out, "%s%s %lld %lld %lld", k ? " " : "", cls[k], (long long)cfg.obuf_limits[k][0],
                       (long long)cfg.obuf_limits[k][1], (long long)cfg.obuf_limits[k][2]);
        break;
    }
    default:
        if (!strcmp(r->name, "dir")) {
            char cwd[4096];
            buf_adds(out, getcwd(cwd, sizeof cwd) ? cwd : "");
        } else {
            buf_adds(out, *r->sval ? *r->sval : "");
        }
    }
}

int config_set(const char *name, const char *value, char *err, size_t el) {
    int i = find_row(name);
    if (i < 0) {
        snprintf(err, el, "ERR Unknown option or number of arguments for CONFIG SET - '%s'", name);
        return -1;
    }
    if (!rows[i].mut) {
        snprintf(err, el, "ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable config",
                 rows[i].name);
        return -1;
    }
    char why[256];
    if (!strcmp(rows[i].name, "save")) {
        free(cfg.save_s);
        cfg.save_s = strdup(value);
        return 0;
    }
    if (set_row(i, value, why, sizeof why) < 0) {
        snprintf(err, el, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", rows[i].name, why);
        return -1;
    }
    return 0;
}

int config_get(const char *pattern, size_t plen, buf *names, buf *values, int *n) {
    (void)names;
    (void)values;
    (void)n;
    int count = 0;
    for (int i = 0; i < NROWS; i++)
        if (glob_match(pattern, plen, rows[i].name, strlen(rows[i].name), 1)) count++;
    return count;
}

int config_rewrite(char *err, size_t el) {
    if (!cfg.config_file) {
        snprintf(err, el, "ERR The server is running without a config file");
        return -1;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-rewrite", cfg.config_file);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, el, "ERR Rewriting config file: %s", strerror(errno));
        return -1;
    }
    fprintf(f, "# Generated by CONFIG REWRITE\n");
    buf v = {0};
    for (int i = 0; i < NROWS; i++) {
        v.len = 0;
        config_value(i, &v);
        buf_addc(&v, 0);
        if (!strcmp(rows[i].name, "save") && !*v.p) fprintf(f, "save \"\"\n");
        else if (rows[i].type == CT_STR) fprintf(f, "%s \"%s\"\n", rows[i].name, v.p);
        else fprintf(f, "%s %s\n", rows[i].name, v.p);
    }
    buf_free(&v);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        fclose(f);
        unlink(tmp);
        snprintf(err, el, "ERR Rewriting config file: %s", strerror(errno));
        return -1;
    }
    fclose(f);
    if (rename(tmp, cfg.config_file) != 0) {
        snprintf(err, el, "ERR Rewriting config file: %s", strerror(errno));
        return -1;
    }
    return 0;
}
