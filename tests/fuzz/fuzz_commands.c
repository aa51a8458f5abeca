/* fuzz_commands.c - libFuzzer target that runs whole command lines through
 * libshoal without sockets (src/server/engine.h).
 *
 * The input is text, one command per line, split as redis-cli and inline
 * commands are (resp_split_line: quotes, \x escapes). Every line runs on
 * one session of a one-shard engine; each input starts from an empty
 * keyspace (FLUSHALL) and a fresh session, so a finding reproduces from its
 * input alone. Checks beyond the sanitizers:
 *   - each command appends exactly one well-formed RESP reply (none when
 *     CLIENT REPLY OFF/SKIP is in effect);
 *   - key positions of the command row lie inside argv, and so do the
 *     keys its key specs find (cmd_key_refs: GETKEYS and the ACL check).
 * Kept out: commands that sleep, stop the process, block (XREAD and
 * XREADGROUP run when they have no BLOCK), fork or write
 * files (SHUTDOWN, DEBUG, anything containing "sleep", SAVE...), and
 * PFSELFTEST (seconds of work under the sanitizers). CONFIG SET
 * is allowed; every directive is put back after an input that ran CONFIG.
 * proto-max-bulk-len is lowered to 1mb so strings stay small, and the
 * keyspace is flushed when the engine's memory passes 256 MB. The process
 * works in a private temporary directory (nothing lands in the repo).
 * The AOF is on, writing into /dev/null, so every write command also goes
 * through aof_log; CONFIG SET of the append* directives is kept out (it
 * would write real files, or fsync /dev/null). */
#include "cmd/cmd.h"
#include "cmd/dispatch.h"
#include "cmd/script.h"
#include "lib/buf.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "proto/resp.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/shard.h"
#include <ctype.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_ARGS 512
#define MEM_FLUSH_AT (256LL * 1024 * 1024)

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "fuzz_commands: " __VA_ARGS__);                                                            \
            fprintf(stderr, " [%s, line %d]\n", #cond, __LINE__);                                                      \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

static char workdir[4096];
static buf saved_config[128]; /* CONFIG GET value of every directive at start */
static int nsaved;

/* ---- reply validation ---- */

/* Offset just past "\r\n" of the line starting at i, or 0 if none. */
static size_t line_end(const buf *b, size_t i) {
    for (size_t k = i; k + 1 < b->len; k++)
        if (b->p[k] == '\r' && b->p[k + 1] == '\n') return k + 2;
    return 0;
}

/* Skips one RESP2/RESP3 value at *at; 0 ok, -1 malformed or truncated. */
static int skip_value(const buf *b, size_t *at, int depth) {
    if (depth > 64 || *at >= b->len) return -1;
    char t = b->p[*at];
    size_t e = line_end(b, *at);
    if (!e || e < *at + 3) return -1; /* no line, or the type byte is the CR */
    const char *num = b->p + *at + 1;
    size_t nlen = e - *at - 3;
    long long n = 0;
    int isnum = nlen > 0 && str2ll(num, nlen, &n);
    switch (t) {
    case '+':
    case '-':
    case ':':
    case '_':
    case ',':
    case '#':
    case '(':
        if (t == ':' && !isnum) return -1;
        if (t == '_' && nlen) return -1;
        *at = e;
        return 0;
    case '$':
    case '=':
    case '!':
        if (!isnum || n < -1) return -1;
        if (n == -1) {
            if (t != '$') return -1;
            *at = e;
            return 0;
        }
        if (b->len - e < (size_t)n + 2) return -1;
        if (b->p[e + n] != '\r' || b->p[e + n + 1] != '\n') return -1;
        *at = e + (size_t)n + 2;
        return 0;
    case '*':
    case '%':
    case '~':
    case '>':
    case '|': {
        if (!isnum || n < -1) return -1;
        *at = e;
        if (n == -1) return t == '*' ? 0 : -1;
        long long items = (t == '%' || t == '|') ? n * 2 : n;
        for (long long i = 0; i < items; i++)
            if (skip_value(b, at, depth + 1) < 0) return -1;
        if (t == '|') return skip_value(b, at, depth + 1); /* attribute precedes a value */
        return 0;
    }
    default:
        return -1;
    }
}

static int count_replies(const buf *b, size_t from) {
    size_t at = from;
    int n = 0;
    while (at < b->len) {
        if (skip_value(b, &at, 0) < 0) return -1;
        n++;
    }
    return n;
}

/* ---- engine set-up and configuration reset ---- */

static void run(session *s, buf *out, int argc, const char **argv, const size_t *argl) {
    engine_exec(s, argc, argv, argl);
    out->len = 0;
}

static void run_str(session *s, buf *out, const char *a0, const char *a1, const char *a2) {
    const char *argv[3] = {a0, a1, a2};
    size_t argl[3] = {strlen(a0), a1 ? strlen(a1) : 0, a2 ? strlen(a2) : 0};
    run(s, out, a2 ? 3 : a1 ? 2 : 1, argv, argl);
}

static void restore_config(void) {
    char err[512];
    for (int i = 0; i < nsaved && i < config_count(); i++) {
        buf now = {0};
        config_value(i, &now);
        buf_addc(&now, 0);
        if (strcmp(now.p, saved_config[i].p) != 0) config_set(config_name(i), saved_config[i].p, err, sizeof err);
        buf_free(&now);
    }
    if (chdir(workdir) != 0) abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    char tmpl[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpl, sizeof tmpl, "%s/shoal-fuzz-commands.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl) || chdir(tmpl) != 0 || !getcwd(workdir, sizeof workdir)) {
        perror("fuzz_commands: temporary directory");
        abort();
    }
    if (engine_open(1) != 0) {
        fprintf(stderr, "fuzz_commands: engine_open failed\n");
        abort();
    }
    slua_step_budget = 200000; /* EVAL lines end instead of looping for ever */
    slua_mem_limit = 64 << 20;
    static const char *init[][2] = {{"proto-max-bulk-len", "1mb"}, {"loglevel", "warning"}, {"save", ""}};
    for (size_t i = 0; i < sizeof init / sizeof init[0]; i++) {
        char err[512];
        if (config_set(init[i][0], init[i][1], err, sizeof err) != 0) {
            fprintf(stderr, "fuzz_commands: CONFIG SET %s %s: %s\n", init[i][0], init[i][1], err);
            abort();
        }
    }
    nsaved = config_count() < 128 ? config_count() : 128;
    for (int i = 0; i < nsaved; i++) {
        config_value(i, &saved_config[i]);
        buf_addc(&saved_config[i], 0);
    }
    int devnull = open("/dev/null", O_WRONLY | O_APPEND | O_CLOEXEC);
    if (devnull < 0) abort();
    aof_writer_open(devnull, 0, 0);
    return 0;
}

/* ---- which lines run ---- */

static int contains_ci(const char *s, size_t n, const char *word) {
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++)
        if (!strncasecmp(s + i, word, w)) return 1;
    return 0;
}

static int allowed(int argc, const char **argv, const size_t *argl) {
    static const char *banned[] = {
        "shutdown", "debug",    "save",      "bgsave",     "bgrewriteaof", "monitor", "sync",    "psync", "replicaof",
        "slaveof",  "failover", "subscribe", "psubscribe", "ssubscribe",   "wait",    "waitaof", "pfselftest",
        /* one confirmation per name; CLIENT TRACKING: invalidation pushes beside the replies */
        "unsubscribe", "punsubscribe", "sunsubscribe", NULL};
    for (int i = 0; banned[i]; i++)
        if (str_eq_ci(argv[0], argl[0], banned[i])) return 0;
    for (int i = 0; i < argc; i++)
        if (contains_ci(argv[i], argl[i], "sleep")) return 0;
    if (str_eq_ci(argv[0], argl[0], "client") && argc > 1 && str_eq_ci(argv[1], argl[1], "tracking")) return 0;
    if (str_eq_ci(argv[0], argl[0], "config"))
        for (int i = 1; i < argc; i++)
            if (contains_ci(argv[i], argl[i], "append")) return 0;
    const command *cmd = cmd_lookup(argv[0], argl[0]);
    if (cmd && (cmd->flags & CMD_BLOCKING)) { /* XREAD and XREADGROUP block only with BLOCK */
        if (!str_eq_ci(argv[0], argl[0], "xread") && !str_eq_ci(argv[0], argl[0], "xreadgroup")) return 0;
        for (int i = 1; i < argc; i++)
            if (str_eq_ci(argv[i], argl[i], "block")) return 0;
    }
    return 1;
}

static void check_keys(int argc, const char **argv, const size_t *argl) {
    char err[512];
    const command *cmd = dispatch_resolve(argc, argv, argl, err, sizeof err, NULL);
    if (!cmd) return;
    int pos[MAX_ARGS + 64];
    int n = cmd_key_positions(cmd, argc, argv, argl, pos, MAX_ARGS + 64);
    CHECK(n >= 0 && n <= argc, "%s: %d key positions for argc %d", cmd->name, n, argc);
    for (int i = 0; i < n; i++)
        CHECK(pos[i] > 0 && pos[i] < argc, "%s: key position %d outside argc %d", cmd->name, pos[i], argc);
    key_refs r;
    n = cmd_key_refs(cmd, argc, argv, argl, &r);
    CHECK(n == r.n && n >= 0, "%s: %d key refs (%d kept)", cmd->name, n, r.n);
    for (int i = 0; i < n; i++)
        CHECK(r.v[i].pos > 0 && r.v[i].pos < argc, "%s: key spec position %d outside argc %d", cmd->name, r.v[i].pos,
              argc);
    key_refs_free(&r);
}

static void exec_line(session *s, buf *out, int argc, const char **argv, const size_t *argl) {
    check_keys(argc, argv, argl);
    uint32_t before = s->flags;
    out->len = 0;
    engine_exec(s, argc, argv, argl);
    int quiet = ((before | s->flags) & (SESS_REPLY_OFF | SESS_REPLY_SKIP | SESS_REPLY_SKIP_NEXT)) != 0;
    int n = count_replies(out, 0);
    CHECK(n == 1 || (quiet && n == 0), "'%.*s' wrote %d replies (%zu bytes): %.*s", (int)argl[0], argv[0], n, out->len,
          (int)(out->len > 200 ? 200 : out->len), out->p ? out->p : "");
    if (out->cap > (1u << 20)) buf_free(out);
    out->len = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    buf out = {0};
    session *s = engine_session(&out);
    run_str(s, &out, "FLUSHALL", NULL, NULL);

    buf args = {0};
    size_t off[MAX_ARGS], len[MAX_ARGS];
    const char *argv[MAX_ARGS];
    int ran_config = 0;
    const char *p = (const char *)data, *end = p + size;
    while (p < end && !(s->flags & (SESS_CLOSE_AFTER_REPLY | SESS_CLOSE_ASAP))) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        int argc = resp_split_line(p, n, &args, off, len, MAX_ARGS);
        p += n + (nl != NULL);
        if (argc <= 0) continue;
        for (int i = 0; i < argc; i++)
            argv[i] = args.p + off[i];
        if (!allowed(argc, argv, len)) continue;
        if (str_eq_ci(argv[0], len[0], "config")) ran_config = 1;
        exec_line(s, &out, argc, argv, len);
        if (mem_used() > MEM_FLUSH_AT) run_str(s, &out, "FLUSHALL", NULL, NULL);
    }
    /* Leave nothing behind, so libFuzzer's per-input leak check (it runs when
     * an input's mallocs and frees differ) names the input that leaked. */
    run_str(s, &out, "FLUSHALL", NULL, NULL);
    aof_before_send(shards[0]); /* the logged commands go to /dev/null */
    buf_free(&args);
    engine_session_free(s);
    buf_free(&out);
    if (ran_config) restore_config();
    return 0;
}
