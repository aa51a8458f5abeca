/* config.c - the directives of CONFIG_TABLE (config.h): parsing of the
 * config file and `--name value` arguments, CONFIG SET (all or nothing),
 * CONFIG GET's values and CONFIG REWRITE.
 *
 * Every directive goes through set_row(), so the file, the arguments and
 * CONFIG SET accept and reject exactly the same values, with Redis's
 * reasons ("argument couldn't be parsed into an integer", ...). Startup
 * errors name the line as redis-server does:
 *
 *   *** FATAL CONFIG FILE ERROR (shoal) ***
 *   Reading the configuration file, at line 2
 *   >>> 'foo bar'
 *   Bad directive or wrong number of arguments */
#include "server/config.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "proto/resp.h"
#include "shard/notify.h"
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

/* Each directive's value right after config_defaults(), for REWRITE. */
static char *defaults[NROWS];
/* The apply hook of each row (config_on_apply), or NULL. */
static config_apply_fn applies[NROWS];
/* A string value set with NUL bytes in it (CONFIG SET requirepass
 * "a\0b"): its length, valid while the row's value is bin_ptr[i] (any
 * other setter replaces the pointer, and the value is a C string again). */
static const char *bin_ptr[NROWS];
static size_t bin_len[NROWS];

/* Redis 7.0's other names of directives (its `alias` column): what Redis 6
 * called a ziplist is a listpack in 7.0, and the replica-* directives keep
 * their slave-* names. */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"hash-max-ziplist-entries", "hash-max-listpack-entries"}, {"hash-max-ziplist-value", "hash-max-listpack-value"},
    {"zset-max-ziplist-entries", "zset-max-listpack-entries"}, {"zset-max-ziplist-value", "zset-max-listpack-value"},
    {"list-max-ziplist-size", "list-max-listpack-size"}, {"lua-time-limit", "busy-reply-threshold"},
    {"slaveof", "replicaof"}, {"slave-read-only", "replica-read-only"},
    {"slave-serve-stale-data", "replica-serve-stale-data"}, {"slave-priority", "replica-priority"},
    {"slave-announce-ip", "replica-announce-ip"}, {"slave-announce-port", "replica-announce-port"},
    {"slave-lazy-flush", "replica-lazy-flush"},
    {"repl-ping-slave-period", "repl-ping-replica-period"}, {"min-slaves-to-write", "min-replicas-to-write"},
    {"min-slaves-max-lag", "min-replicas-max-lag"},
};
#define NALIASES ((int)(sizeof aliases / sizeof aliases[0]))

/* Directives Redis 7.0 still reads from a config file (with one value) and
 * ignores, as it does: they lost their meaning in earlier versions. CONFIG
 * SET and GET do not know them, and CONFIG REWRITE comments them out. */
static const char *const deprecated[] = {"list-max-ziplist-entries", "list-max-ziplist-value",
                                         "lua-replicate-commands"};

static int find_row(const char *name) {
    for (int i = 0; i < NROWS; i++)
        if (!strcasecmp(rows[i].name, name)) return i;
    return -1;
}

static void row_value(int i, buf *out);

/* The row of name id. */
static int row_of(int id) { return id < NROWS ? id : find_row(aliases[id - NROWS].name); }

int config_count(void) { return NROWS + NALIASES; }
const char *config_name(int id) { return id < NROWS ? rows[id].name : aliases[id - NROWS].alias; }
int config_hidden(int id) { return (rows[row_of(id)].mut & CFG_HIDDEN) != 0; }

int config_find(const char *name) {
    int i = find_row(name);
    for (int k = 0; i < 0 && k < NALIASES; k++)
        if (!strcasecmp(aliases[k].alias, name)) i = NROWS + k;
    return i;
}

static int is_deprecated(const char *name) {
    for (size_t k = 0; k < sizeof deprecated / sizeof deprecated[0]; k++)
        if (!strcasecmp(deprecated[k], name)) return 1;
    return 0;
}

void config_on_apply(const char *name, config_apply_fn fn) {
    int i = find_row(name);
    if (i >= 0) applies[i] = fn;
}

static int row_is(int i, const char *name) { return !strcmp(rows[i].name, name); }

/* Directives whose value is several words, joined by single spaces. */
static int multi_word(int i) {
    return rows[i].type == CT_SPECIAL || row_is(i, "save") || row_is(i, "bind") || row_is(i, "cpu-affinity") ||
           row_is(i, "latency-tracking-info-percentiles") || row_is(i, "replicaof");
}

/* ---- enumerations ---- */

static const char *const loglevels[] = {"debug", "verbose", "notice", "warning", NULL};
static const char *const allow_opts[] = {"no", "yes", "local", NULL};
static const char *const hugepage_opts[] = {"never", "madvise", "always", NULL};
static const char *const fsync_opts[] = {"everysec", "always", "no", NULL};
static const char *const tls_auth_opts[] = {"no", "yes", "optional", NULL};
static const char *const policies[] = {"volatile-lru",   "volatile-lfu", "volatile-random",
                                       "volatile-ttl",   "allkeys-lru",  "allkeys-lfu",
                                       "allkeys-random", "noeviction",   NULL};

static const char *const pubsub_opts[] = {"allchannels", "resetchannels", NULL};
static const char *const diskless_load_opts[] = {"disabled", "on-empty-db", "swapdb", NULL};

static const char *const *enum_opts(int i) {
    if (row_is(i, "acl-pubsub-default")) return pubsub_opts;
    if (row_is(i, "loglevel")) return loglevels;
    if (row_is(i, "maxmemory-policy")) return policies;
    if (row_is(i, "hugepages")) return hugepage_opts;
    if (row_is(i, "appendfsync")) return fsync_opts;
    if (row_is(i, "tls-auth-clients")) return tls_auth_opts;
    if (row_is(i, "repl-diskless-load")) return diskless_load_opts;
    return allow_opts;
}

static int enum_index(const char *const *opts, const char *v) {
    for (int k = 0; opts[k]; k++)
        if (!strcasecmp(v, opts[k])) return k;
    return -1;
}

static void enum_error(const char *const *opts, char *err, size_t el) {
    size_t at = (size_t)snprintf(err, el, "argument(s) must be one of the following: ");
    for (int k = 0; opts[k] && at < el; k++)
        at += (size_t)snprintf(err + at, el - at, "%s%s", k ? ", " : "", opts[k]);
}

/* ---- value parsers ---- */

/* The multiplier of a memory unit (Redis's memtoull: b, k, kb, m, mb, g,
 * gb, any case; none is bytes), or 0 when u is not one. */
static unsigned long long mem_unit(const char *u) {
    static const struct {
        const char *name;
        unsigned long long mul;
    } units[] = {{"", 1},          {"b", 1},           {"k", 1000},
                 {"kb", 1024},     {"m", 1000 * 1000}, {"mb", 1024 * 1024},
                 {"g", 1000000000}, {"gb", 1024ULL * 1024 * 1024}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcasecmp(u, units[i].name)) return units[i].mul;
    return 0;
}

int cfg_parse_memory(const char *s, int64_t *out) {
    const char *p = s;
    while (isdigit((unsigned char)*p))
        p++;
    if (p == s || p - s > 19) return 0;
    unsigned long long mul = mem_unit(p);
    if (!mul) return 0;
    long double v = strtold(s, NULL) * (long double)mul;
    if (v > (long double)INT64_MAX) return 0;
    *out = (int64_t)v;
    return 1;
}

/* maxmemory-clients: Redis's memtoull first (digits and a unit; an empty
 * number is 0; the product wraps, and a value past LLONG_MAX reads as
 * negative, so as a percentage, as in Redis), then "<n>%" (stored as -n). */
static int parse_mem_or_percent(const char *s, int64_t *out) {
    const char *u = s;
    while (isdigit((unsigned char)*u))
        u++;
    unsigned long long mul = mem_unit(u);
    if (mul && u - s < 128) {
        char digits[128];
        memcpy(digits, s, (size_t)(u - s));
        digits[u - s] = 0;
        errno = 0;
        unsigned long long v = strtoull(digits, NULL, 10);
        if (!errno) {
            *out = (int64_t)(v * mul);
            return 1;
        }
    }
    size_t n = strlen(s);
    long long pct;
    if (n > 1 && s[n - 1] == '%' && str2ll(s, n - 1, &pct) && pct >= 0) {
        *out = -pct;
        return 1;
    }
    return 0;
}

/* Splits v at spaces into at most max tokens of a private copy (*copy,
 * freed by the caller). Returns the token count, or -1 when there are more. */
static int split_words(const char *v, char **copy, char **tok, int max) {
    *copy = strdup(v);
    char *save = NULL;
    int n = 0;
    for (char *t = strtok_r(*copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (n == max) return -1;
        tok[n++] = t;
    }
    return n;
}

static int parse_obuf(const char *v, int64_t lim[3][3], char *err, size_t el) {
    char *copy, *tok[64];
    int n = split_words(v, &copy, tok, 64);
    const char *why = NULL;
    if (n <= 0 || n % 4) why = "Wrong number of arguments in buffer limit configuration.";
    for (int i = 0; !why && i < n; i += 4) {
        int cls;
        if (!strcasecmp(tok[i], "normal"))
            cls = 0;
        else if (!strcasecmp(tok[i], "replica") || !strcasecmp(tok[i], "slave"))
            cls = 1;
        else if (!strcasecmp(tok[i], "pubsub"))
            cls = 2;
        else {
            why = "Invalid client class specified in buffer limit configuration.";
            break;
        }
        int64_t h, s;
        long long secs;
        if (!cfg_parse_memory(tok[i + 1], &h) || !cfg_parse_memory(tok[i + 2], &s) ||
            !str2ll(tok[i + 3], strlen(tok[i + 3]), &secs) || secs < 0) {
            why = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            break;
        }
        lim[cls][0] = h;
        lim[cls][1] = s;
        lim[cls][2] = secs;
    }
    free(copy);
    if (why) snprintf(err, el, "%s", why);
    return why ? -1 : 0;
}

/* save: "" or pairs of "<seconds> <changes>", seconds at least 1. */
static int check_save(const char *v, char *err, size_t el) {
    char *copy, *tok[128];
    int n = split_words(v, &copy, tok, 128);
    int ok = n >= 0 && n % 2 == 0;
    for (int i = 0; ok && i < n; i++) {
        long long x;
        ok = str2ll(tok[i], strlen(tok[i]), &x) && x >= (i % 2 ? 0 : 1);
    }
    free(copy);
    if (!ok) snprintf(err, el, "Invalid save parameters");
    return ok ? 0 : -1;
}

/* cpu-affinity: CPU numbers separated by commas or spaces (shard i runs
 * on the i-th, wrapping around). No more than one per possible shard. */
static int check_cpus(const char *v, char *err, size_t el) {
    const char *p = v;
    int count = 0;
    while (*p) {
        if (*p == ',' || *p == ' ') {
            p++;
            continue;
        }
        const char *q = p;
        while (isdigit((unsigned char)*q))
            q++;
        long long cpu;
        if (q == p || !str2ll(p, (size_t)(q - p), &cpu) || cpu >= 1024 || (*q && *q != ',' && *q != ' ')) {
            snprintf(err, el, "argument must be a list of CPU numbers (0-1023) separated by commas");
            return -1;
        }
        if (++count > 64) {
            snprintf(err, el, "argument lists more than 64 CPUs (the most threads there can be)");
            return -1;
        }
        p = q;
    }
    return 0;
}

static int set_int(int i, const char *v, char *err, size_t el) {
    cfg_row *r = &rows[i];
    long long x;
    int ok;
    if (row_is(i, "unixsocketperm")) { /* octal, as chmod takes it */
        char *end;
        errno = 0;
        x = strtoll(v, &end, 8);
        ok = *v && !*end && !errno && isdigit((unsigned char)*v);
    } else {
        ok = str2ll(v, strlen(v), &x);
    }
    if (!ok) {
        snprintf(err, el, "argument couldn't be parsed into an integer");
        return -1;
    }
    if (x < r->min || x > r->max) {
        snprintf(err, el, "argument must be between %lld and %lld inclusive", (long long)r->min, (long long)r->max);
        return -1;
    }
    if (row_is(i, "hz")) x = x < 1 ? 1 : x > 500 ? 500 : x; /* Redis clamps hz */
    __atomic_store_n(r->ival, (int64_t)x, __ATOMIC_RELAXED);
    return 0;
}

/* A several-word value with single spaces between its words, as CONFIG
 * GET shows it and CONFIG REWRITE writes it back: `"a  b" ""` and `a b`
 * are one value. Returns a copy the caller frees. */
static char *squeeze_spaces(const char *v) {
    char *out = strdup(v), *o = out;
    for (const char *p = v; *p; p++)
        if (*p != ' ' || (o > out && p[1] && p[1] != ' ')) *o++ = *p;
    *o = 0;
    return out;
}

/* latency-tracking-info-percentiles: numbers from 0 to 100, kept as
 * Redis shows them ("50.0 99.90" is "50 99.9"). *norm gets the value to
 * store (the caller frees it). */
static int check_percentiles(const char *v, char **norm, char *err, size_t el) {
    char *copy, *tok[128];
    int n = split_words(v, &copy, tok, 128);
    buf out = {0};
    int rc = n < 0 ? -1 : 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        char *end;
        errno = 0;
        double d = strtod(tok[i], &end);
        if (*end || end == tok[i] || errno || d != d) {
            snprintf(err, el, "Invalid latency-tracking-info-percentiles parameters");
            rc = -1;
        } else if (d < 0.0 || d > 100.0) {
            snprintf(err, el, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
            rc = -1;
        } else {
            char f[64];
            snprintf(f, sizeof f, "%f", d);
            char *dot = strchr(f, '.'), *e = f + strlen(f) - 1;
            while (dot && e > dot && *e == '0') *e-- = 0;
            if (dot && e == dot) *e = 0;
            buf_printf(&out, "%s%s", i ? " " : "", f);
        }
    }
    if (n < 0) snprintf(err, el, "Invalid latency-tracking-info-percentiles parameters");
    free(copy);
    if (rc == 0) {
        *norm = out.p ? strndup(out.p, out.len) : strdup("");
    }
    buf_free(&out);
    return rc;
}

/* bind: at most 16 addresses, as Redis. */
static int check_bind(const char *v, char *err, size_t el) {
    int words = *v != 0;
    for (const char *p = v; *p; p++)
        words += *p == ' ';
    if (words <= 16) return 0;
    snprintf(err, el, "Too many bind addresses specified.");
    return -1;
}

static int store_str(int i, const char *v, size_t vlen, char *err, size_t el) {
    cfg_row *r = &rows[i];
    if (row_is(i, "bind") && check_bind(v, err, el) < 0) return -1;
    if (row_is(i, "save") && check_save(v, err, el) < 0) return -1;
    if (row_is(i, "cpu-affinity") && check_cpus(v, err, el) < 0) return -1;
    if ((row_is(i, "appendfilename") || row_is(i, "appenddirname") || row_is(i, "dbfilename")) &&
        (strchr(v, '/') || strchr(v, '\\'))) {
        snprintf(err, el,
                 row_is(i, "appenddirname") ? "appenddirname can't be a path, just a dirname"
                 : row_is(i, "dbfilename")  ? "dbfilename can't be a path, just a filename"
                                            : "appendfilename can't be a path, just a filename");
        return -1;
    }
    if (row_is(i, "maxmemory-policy")) {
        int k = enum_index(policies, v);
        if (k < 0) {
            enum_error(policies, err, el);
            return -1;
        }
        v = policies[k];
    }
    if (row_is(i, "notify-keyspace-events")) { /* the class bits go to the _i field, read by notify.h */
        int flags = notify_parse_flags(v);
        if (flags < 0) {
            snprintf(err, el, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
            return -1;
        }
        char norm[32];
        notify_format_flags(flags, norm);
        free(*r->sval);
        bin_ptr[i] = NULL;
        *r->sval = strdup(norm);
        __atomic_store_n(&cfg.notify_keyspace_events_i, flags, __ATOMIC_RELAXED);
        return 0;
    }
    if (row_is(i, "latency-tracking-info-percentiles")) {
        char *norm;
        if (check_percentiles(v, &norm, err, el) < 0) return -1;
        free(*r->sval);
        bin_ptr[i] = NULL;
        *r->sval = norm;
        return 0;
    }
    if (row_is(i, "dir") && chdir(v) != 0) {
        snprintf(err, el, "%s", strerror(errno));
        return -1;
    }
    free(*r->sval);
    *r->sval = malloc(vlen + 1);
    memcpy(*r->sval, v, vlen);
    (*r->sval)[vlen] = 0;
    bin_ptr[i] = vlen != strlen(v) ? *r->sval : NULL;
    bin_len[i] = vlen;
    return 0;
}

static int set_str(int i, const char *raw, size_t rawlen, char *err, size_t el) {
    char *words = multi_word(i) ? squeeze_spaces(raw) : NULL;
    const char *v = words ? words : raw;
    int rc = store_str(i, v, words ? strlen(words) : rawlen, err, el);
    free(words);
    return rc;
}

static int set_row_n(int i, const char *v, size_t vlen, char *err, size_t el);
/* Sets row i from text; 0 ok, else -1 with Redis's reason in err. */
static int set_row(int i, const char *v, char *err, size_t el) { return set_row_n(i, v, strlen(v), err, el); }

/* The same with the value's length: a string value may hold NUL bytes. */
static int set_row_n(int i, const char *v, size_t vlen, char *err, size_t el) {
    cfg_row *r = &rows[i];
    switch (r->type) {
    case CT_INT:
        return set_int(i, v, err, el);
    case CT_MEM: {
        int64_t x;
        if (!cfg_parse_memory(v, &x)) {
            snprintf(err, el, "argument must be a memory value");
            return -1;
        }
        if (x < r->min || x > r->max) {
            snprintf(err, el, "argument must be between %lld and %lld inclusive", (long long)r->min, (long long)r->max);
            return -1;
        }
        __atomic_store_n(r->ival, x, __ATOMIC_RELAXED);
        return 0;
    }
    case CT_MEMPCT: {
        int64_t x;
        if (!parse_mem_or_percent(v, &x)) {
            snprintf(err, el, "argument must be a memory or percent value");
            return -1;
        }
        if (x < r->min) {
            snprintf(err, el, "percentage argument must be less or equal to %lld", -(long long)r->min);
            return -1;
        }
        __atomic_store_n(r->ival, x, __ATOMIC_RELAXED);
        return 0;
    }
    case CT_BOOL:
        if (!strcasecmp(v, "yes"))
            *r->ival = 1;
        else if (!strcasecmp(v, "no"))
            *r->ival = 0;
        else {
            snprintf(err, el, "argument must be 'yes' or 'no'");
            return -1;
        }
        return 0;
    case CT_ENUM: {
        const char *const *opts = enum_opts(i);
        int k = enum_index(opts, v);
        if (k < 0) {
            enum_error(opts, err, el);
            return -1;
        }
        __atomic_store_n(r->ival, (int64_t)k, __ATOMIC_RELAXED);
        if (row_is(i, "loglevel")) log_set_level(k);
        return 0;
    }
    case CT_SPECIAL: {
        int64_t lim[3][3];
        memcpy(lim, cfg.obuf_limits, sizeof lim);
        if (parse_obuf(v, lim, err, el) < 0) return -1;
        memcpy(cfg.obuf_limits, lim, sizeof lim);
        return 0;
    }
    default:
        return set_str(i, v, vlen, err, el);
    }
}

void config_defaults(void) {
    char err[256];
    for (int i = 0; i < NROWS; i++) {
        if (row_is(i, "dir")) {
            bin_ptr[i] = NULL;
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
    buf v = {0};
    for (int i = 0; i < NROWS; i++) {
        v.len = 0;
        row_value(i, &v);
        buf_addc(&v, 0);
        free(defaults[i]);
        defaults[i] = strdup(v.p);
    }
    buf_free(&v);
}

/* ---- the config file and arguments ---- */

static int fatal(char *err, size_t el, int line, const char *text, const char *why) {
    snprintf(err, el,
             "\n*** FATAL CONFIG FILE ERROR (shoal) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s",
             line, text, why);
    return -1;
}

/* `save` lines seen by this config_load: the first replaces the default
 * rules, later ones add theirs, and `save ""` clears them (as Redis). */
static int save_lines;

/* The value a `save` line leaves: v (its arguments joined), added to the
 * rules earlier lines gave. Returns a copy the caller frees. */
static char *save_value(int i, int nargs, const char *v) {
    int first = save_lines++ == 0;
    if (nargs == 1 && !*v) return strdup(""); /* save "" */
    if (first) return strdup(v);
    const char *old = *rows[i].sval ? *rows[i].sval : "";
    char *out = malloc(strlen(old) + strlen(v) + 2);
    sprintf(out, "%s%s%s", old, *old && *v ? " " : "", v);
    return out;
}

/* `user` lines (config.h). */
static struct user_line {
    int argc;
    const char **argv;
    size_t *argl;
} *user_lines;
static int nuser_lines;

static void user_line_add(int argc, const buf *tmp, const size_t *off, const size_t *len) {
    user_lines = realloc(user_lines, sizeof *user_lines * (size_t)(nuser_lines + 1));
    struct user_line *u = &user_lines[nuser_lines++];
    u->argc = argc;
    u->argv = malloc(sizeof(char *) * (size_t)argc);
    u->argl = malloc(sizeof(size_t) * (size_t)argc);
    for (int i = 0; i < argc; i++) {
        char *a = malloc(len[i] + 1);
        memcpy(a, tmp->p + off[i], len[i]);
        a[len[i]] = 0;
        u->argv[i] = a;
        u->argl[i] = len[i];
    }
}

int config_user_count(void) { return nuser_lines; }

void config_user_line(int i, int *argc, const char ***argv, const size_t **argl) {
    *argc = user_lines[i].argc;
    *argv = user_lines[i].argv;
    *argl = user_lines[i].argl;
}

/* One directive line: name + args. */
static int apply_line(const char *line, int lineno, char *err, size_t el) {
    const char *first = line;
    while (*first == ' ' || *first == '\t')
        first++;
    if (*first == '#' || *first == 0) return 0; /* comments are not split: "# don't" has a lone quote */
    buf tmp = {0};
    size_t off[256], len[256];
    int argc = resp_split_line(line, strlen(line), &tmp, off, len, 256);
    if (argc < 0) {
        buf_free(&tmp);
        return fatal(err, el, lineno, line, "Unbalanced quotes in configuration line");
    }
    if (argc == 0 || tmp.p[off[0]] == '#') {
        buf_free(&tmp);
        return 0;
    }
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)len[0], tmp.p + off[0]);
    int known = len[0] < sizeof name;
    if (known && !strcasecmp(name, "user")) {
        if (argc < 2) {
            buf_free(&tmp);
            return fatal(err, el, lineno, line, "wrong number of arguments");
        }
        user_line_add(argc - 1, &tmp, off + 1, len + 1);
        buf_free(&tmp);
        return 0;
    }
    if (known && argc == 2 && is_deprecated(name)) {
        buf_free(&tmp);
        return 0;
    }
    int id = known ? config_find(name) : -1;
    if (id < 0 || argc == 256) {
        buf_free(&tmp);
        return fatal(err, el, lineno, line, "Bad directive or wrong number of arguments");
    }
    int i = row_of(id);
    buf v = {0};
    for (int a = 1; a < argc; a++) {
        if (a > 1) buf_addc(&v, ' ');
        buf_add(&v, tmp.p + off[a], len[a]);
    }
    buf_addc(&v, 0);
    int may_be_empty = row_is(i, "save") || row_is(i, "logfile") || row_is(i, "unixsocket");
    int rc = 0;
    char why[256];
    if ((argc < 2 && !may_be_empty) || (argc > 2 && !multi_word(i))) {
        rc = fatal(err, el, lineno, line, "wrong number of arguments");
    } else if (rows[i].type == CT_SPECIAL) {
        /* client-output-buffer-limit lines set one class at a time */
        if (parse_obuf(v.p, cfg.obuf_limits, why, sizeof why) < 0) rc = fatal(err, el, lineno, line, why);
    } else if (row_is(i, "save")) {
        char *all = save_value(i, argc - 1, v.p);
        if (set_row(i, all, why, sizeof why) < 0) rc = fatal(err, el, lineno, line, why);
        free(all);
    } else if (set_row(i, v.p, why, sizeof why) < 0) {
        rc = fatal(err, el, lineno, line, why);
    }
    buf_free(&v);
    buf_free(&tmp);
    return rc;
}

static int load_file(const char *path, char *err, size_t el) {
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f) {
        snprintf(err, el, "Fatal error, can't open config file '%s': %s", path, strerror(errno));
        return -1;
    }
    cfg.config_file = realpath(path, NULL);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        rc = apply_line(line, lineno, err, el);
    }
    free(line);
    if (f != stdin) fclose(f);
    return rc;
}

/* Appends `"text"` with the escapes resp_split_line reads back. */
static void add_quoted(buf *o, const char *s, size_t n) {
    buf_addc(o, '"');
    for (size_t k = 0; k < n; k++) {
        unsigned char ch = (unsigned char)s[k];
        if (ch == '"' || ch == '\\') {
            buf_addc(o, '\\');
            buf_addc(o, (char)ch);
        } else if (ch < 0x20 || ch >= 0x7f) {
            buf_printf(o, "\\x%02x", ch);
        } else {
            buf_addc(o, (char)ch);
        }
    }
    buf_addc(o, '"');
}

int config_load(int argc, char **argv, char *err, size_t el) {
    int a = 1;
    save_lines = 0;
    if (a < argc && strncmp(argv[a], "--", 2) != 0 && load_file(argv[a++], err, el) < 0) return -1;
    /* --name v1 v2 --other v: each becomes a line, as redis-server does. */
    buf line = {0};
    int lineno = 0, rc = 0;
    while (rc == 0 && a < argc) {
        if (strncmp(argv[a], "--", 2) != 0) {
            snprintf(err, el, "Invalid argument '%s': options start with --", argv[a]);
            rc = -1;
            break;
        }
        line.len = 0;
        buf_adds(&line, argv[a++] + 2);
        for (; a < argc && strncmp(argv[a], "--", 2) != 0; a++) {
            buf_addc(&line, ' ');
            add_quoted(&line, argv[a], strlen(argv[a]));
        }
        buf_addc(&line, 0);
        rc = apply_line(line.p, ++lineno, err, el);
    }
    buf_free(&line);
    return rc;
}

/* ---- CONFIG GET / SET ---- */

static void row_value(int i, buf *out) {
    cfg_row *r = &rows[i];
    switch (r->type) {
    case CT_INT:
        if (row_is(i, "unixsocketperm"))
            buf_printf(out, "%llo", (unsigned long long)*r->ival);
        else
            buf_printf(out, "%lld", (long long)__atomic_load_n(r->ival, __ATOMIC_RELAXED));
        break;
    case CT_MEM:
        buf_printf(out, "%lld", (long long)__atomic_load_n(r->ival, __ATOMIC_RELAXED));
        break;
    case CT_MEMPCT: {
        int64_t v = __atomic_load_n(r->ival, __ATOMIC_RELAXED);
        if (v < 0)
            buf_printf(out, "%lld%%", -(long long)v);
        else
            buf_printf(out, "%lld", (long long)v);
        break;
    }
    case CT_BOOL:
        buf_adds(out, *r->ival ? "yes" : "no");
        break;
    case CT_ENUM:
        buf_adds(out, enum_opts(i)[*r->ival]);
        break;
    case CT_SPECIAL: {
        const char *cls[3] = {"normal", "slave", "pubsub"};
        for (int k = 0; k < 3; k++)
            buf_printf(out, "%s%s %lld %lld %lld", k ? " " : "", cls[k], (long long)cfg.obuf_limits[k][0],
                       (long long)cfg.obuf_limits[k][1], (long long)cfg.obuf_limits[k][2]);
        break;
    }
    default:
        if (row_is(i, "dir")) {
            char cwd[4096];
            buf_adds(out, getcwd(cwd, sizeof cwd) ? cwd : "");
        } else if (*r->sval && *r->sval == bin_ptr[i]) {
            buf_add(out, *r->sval, bin_len[i]);
        } else {
            buf_adds(out, *r->sval ? *r->sval : "");
        }
    }
}

void config_value(int id, buf *out) { row_value(row_of(id), out); }

/* 1 when setting row i to v would leave the value it has. Only for rows
 * whose set_row has no side effect beyond the value (CFG_FIXED ones). */
static int same_value(int i, const char *v) {
    buf old = {0}, now = {0};
    char why[256];
    row_value(i, &old);
    buf_addc(&old, 0);
    int same = 0;
    if (set_row(i, v, why, sizeof why) == 0) {
        row_value(i, &now);
        buf_addc(&now, 0);
        same = !strcmp(old.p, now.p);
        set_row(i, old.p, why, sizeof why);
    }
    buf_free(&old);
    buf_free(&now);
    return same;
}

__thread int config_caller_remote;

/* Whether CONFIG SET may set row i to v; else writes Redis's error. */
static int settable(int i, const char *given, const char *v, char *err, size_t el) {
    const char *why = NULL;
    int who = rows[i].mut & 3;
    if (who == CFG_IMMUTABLE && !((rows[i].mut & CFG_FIXED) && same_value(i, v))) why = "can't set immutable config";
    else if (who == CFG_PROTECTED && (cfg_get(enable_protected_configs) == CFG_ALLOW_NO ||
                                      (cfg_get(enable_protected_configs) == CFG_ALLOW_LOCAL && config_caller_remote)))
        why = "can't set protected config";
    if (!why) return 1;
    snprintf(err, el, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", given, why);
    return 0;
}

int config_set(const char *name, const char *value, char *err, size_t el) {
    return config_set_many(1, &name, &value, err, el);
}

int config_store(const char *name, const char *value, char *err, size_t el) {
    int i = find_row(name);
    if (i < 0) {
        snprintf(err, el, "ERR Unknown option '%s'", name);
        return -1;
    }
    return set_row(i, value, err, el);
}

size_t config_value_len(const char *name) {
    int id = config_find(name);
    if (id < 0) return 0;
    buf v = {0};
    row_value(row_of(id), &v);
    size_t n = v.len;
    buf_free(&v);
    return n;
}

/* Phase one of config_set_many: every name known, settable, and not
 * given twice (an alias and its directive are two names, as in Redis).
 * The first error wins; 0 ok, else -1 with err written. */
static int check_names(int n, const char *const *names, const char *const *values, int *id, char *err, size_t el) {
    for (int k = 0; k < n; k++) {
        id[k] = config_find(names[k]);
        if (id[k] < 0) {
            snprintf(err, el, "ERR Unknown option or number of arguments for CONFIG SET - '%s'", names[k]);
            return -1;
        }
        if (!settable(row_of(id[k]), names[k], values[k], err, el)) return -1;
        for (int j = 0; j < k; j++)
            if (id[j] == id[k]) {
                snprintf(err, el, "ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter",
                         names[k]);
                return -1;
            }
    }
    return 0;
}

/* Puts rows of id[0..n-1] back to their old values. */
static void restore(int n, const int *id, const buf *old) {
    char why[256];
    for (int k = n - 1; k >= 0; k--)
        if (set_row_n(row_of(id[k]), old[k].p, old[k].len - 1, why, sizeof why) < 0)
            log_msg(LOG_WARNING, "Failed restoring failed CONFIG SET command. Error setting %s to '%s': %s",
                    config_name(id[k]), old[k].p, why);
}

/* Runs the distinct apply hooks of the pairs that changed, in order; -1
 * with err written (naming the pair) when one fails. */
static int run_applies(int n, const int *id, const char *changed, char *err, size_t el) {
    for (int k = 0; k < n; k++) {
        config_apply_fn fn = changed[k] ? applies[row_of(id[k])] : NULL;
        int dup = 0;
        for (int j = 0; fn && j < k; j++)
            dup |= changed[j] && applies[row_of(id[j])] == fn;
        if (!fn || dup) continue;
        char why[256] = "";
        if (fn(why, sizeof why) < 0) {
            snprintf(err, el, "ERR CONFIG SET failed (possibly related to argument '%s')%s%s", config_name(id[k]),
                     *why ? " - " : "", why);
            return -1;
        }
    }
    return 0;
}

int config_set_many(int n, const char *const *names, const char *const *values, char *err, size_t el) {
    return config_set_many_n(n, names, values, NULL, err, el);
}

int config_set_many_n(int n, const char *const *names, const char *const *values, const size_t *lens, char *err,
                      size_t el) {
    int *id = zmalloc(sizeof(int) * (size_t)(n ? n : 1));
    if (check_names(n, names, values, id, err, el) < 0) {
        zfree(id);
        return -1;
    }
    buf *old = zcalloc(sizeof(buf) * (size_t)(n ? n : 1));
    char *changed = zcalloc((size_t)(n ? n : 1));
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        char why[256];
        int i = row_of(id[k]);
        row_value(i, &old[k]);
        buf_addc(&old[k], 0);
        if (set_row_n(i, values[k], lens ? lens[k] : strlen(values[k]), why, sizeof why) < 0) {
            snprintf(err, el, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", config_name(id[k]),
                     why);
            restore(k + 1, id, old);
            rc = -1;
        }
    }
    /* A directive named twice (by an alias and its name) changed when its
     * last value differs from the first old one. */
    for (int k = 0; k < n && rc == 0; k++) {
        buf now = {0};
        row_value(row_of(id[k]), &now);
        buf_addc(&now, 0);
        for (int j = 0; j < n; j++)
            if (row_of(id[j]) == row_of(id[k])) {
                changed[k] = now.len != old[j].len || memcmp(now.p, old[j].p, now.len) != 0 ||
                             (rows[row_of(id[k])].mut & CFG_VOLATILE);
                break;
            }
        buf_free(&now);
    }
    if (rc == 0 && run_applies(n, id, changed, err, el) < 0) {
        log_msg(LOG_WARNING, "Failed applying new configuration. Restoring previous settings.");
        restore(n, id, old);
        char ignored[512];
        if (run_applies(n, id, changed, ignored, sizeof ignored) < 0)
            log_msg(LOG_WARNING, "Failed applying restored failed CONFIG SET command: %s", ignored);
        rc = -1;
    }
    for (int k = 0; k < n; k++)
        buf_free(&old[k]);
    zfree(old);
    zfree(changed);
    zfree(id);
    return rc;
}

/* ---- CONFIG REWRITE ---- */

static int needs_quotes(const char *s, size_t n) {
    if (n == 0) return 1;
    for (size_t k = 0; k < n; k++) {
        unsigned char ch = (unsigned char)s[k];
        if (ch <= 0x20 || ch >= 0x7f || ch == '"' || ch == '\'' || ch == '\\') return 1;
    }
    return 0;
}

static void add_word(buf *o, const char *s, size_t n) {
    if (needs_quotes(s, n))
        add_quoted(o, s, n);
    else
        buf_add(o, s, n);
}

/* "name value\n" so that apply_line reads the same value back. */
static void add_directive(buf *o, int i) {
    buf v = {0};
    row_value(i, &v);
    buf_adds(o, rows[i].name);
    buf_addc(o, ' ');
    if (multi_word(i) && v.len) {
        size_t start = 0;
        for (size_t k = 0; k <= v.len; k++)
            if (k == v.len || v.p[k] == ' ') {
                if (start) buf_addc(o, ' ');
                add_word(o, v.p + start, k - start);
                start = k + 1;
            }
    } else if (rows[i].type == CT_STR) {
        add_word(o, v.p ? v.p : "", v.len);
    } else {
        buf_add(o, v.p, v.len);
    }
    buf_addc(o, '\n');
    buf_free(&v);
}

static const char rewrite_mark[] = "# Generated by CONFIG REWRITE";

/* The row a line sets (by a directive's name or an alias); -1 for a
 * comment or blank line (kept as it is), -2 for a previous rewrite marker
 * (dropped), -3 for any other line: a deprecated directive, or one that no
 * longer parses. Redis keeps those as comments ("# ??? line"). */
static int line_directive(const char *line, size_t n) {
    if (n >= sizeof rewrite_mark - 1 && !memcmp(line, rewrite_mark, sizeof rewrite_mark - 1)) return -2;
    if (n == 0 || line[0] == '#') return -1;
    buf tmp = {0};
    size_t off[2], len[2];
    int argc = resp_split_line(line, n, &tmp, off, len, 2);
    int i = argc == 0 ? -1 : -3;
    if (argc > 0 && len[0] < 128) {
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)len[0], tmp.p + off[0]);
        int id = config_find(name);
        if (id >= 0) i = row_of(id);
        if (!strcasecmp(name, "user")) i = -4;
    }
    buf_free(&tmp);
    return i;
}

void (*config_users_hook)(buf *out);

/* The new file text: old lines with fresh values, then the additions. */
static void rewrite_text(FILE *old, buf *o) {
    char seen[NROWS] = {0};
    int users_done = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while (old && (n = getline(&line, &cap, old)) >= 0) {
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        char *t = line; /* kept lines are trimmed, as Redis does */
        while (*t == ' ' || *t == '\t')
            t++, n--;
        while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
            t[--n] = 0;
        int i = line_directive(t, (size_t)n);
        if (i == -4) { /* user lines: the users as they are now, where the first one was */
            if (!users_done++ && config_users_hook) config_users_hook(o);
        } else if (i == -1 || i == -3) {
            buf_adds(o, i == -3 ? "# ??? " : "");
            buf_add(o, t, (size_t)n);
            buf_addc(o, '\n');
        } else if (i >= 0 && !seen[i]) {
            seen[i] = 1;
            if (row_is(i, "replicaof") && !config_value_len("replicaof")) continue; /* a master: the line goes, as Redis */
            add_directive(o, i);
        }
    }
    free(line);
    int marked = 0;
    buf v = {0};
    for (int i = 0; i < NROWS; i++) {
        if (seen[i]) continue;
        v.len = 0;
        row_value(i, &v);
        buf_addc(&v, 0);
        if (!row_is(i, "dir") && defaults[i] && !strcmp(v.p, defaults[i])) continue;
        if (!marked++) buf_printf(o, "%s\n", rewrite_mark);
        add_directive(o, i);
    }
    buf_free(&v);
    if (!users_done && config_users_hook) {
        size_t at = o->len;
        config_users_hook(o);
        if (o->len > at && !marked++) {
            buf_insert(o, at, "\n", 1);
            buf_insert(o, at, rewrite_mark, sizeof rewrite_mark - 1);
        }
    }
}

static int write_all(const char *path, const buf *o, char *err, size_t el) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-rewrite", path);
    FILE *f = fopen(tmp, "w");
    int ok = f && fwrite(o->p ? o->p : "", 1, o->len, f) == o->len && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int e = errno;
    if (f && fclose(f) != 0 && ok) ok = 0, e = errno;
    if (ok && rename(tmp, path) != 0) ok = 0, e = errno;
    if (!ok) {
        unlink(tmp);
        snprintf(err, el, "ERR Rewriting config file: %s", strerror(e));
    }
    return ok ? 0 : -1;
}

int config_rewrite(char *err, size_t el) {
    if (!cfg.config_file) {
        snprintf(err, el, "ERR The server is running without a config file");
        return -1;
    }
    FILE *old = fopen(cfg.config_file, "r");
    buf o = {0};
    rewrite_text(old, &o);
    if (old) fclose(old);
    int rc = write_all(cfg.config_file, &o, err, el);
    buf_free(&o);
    return rc;
}
