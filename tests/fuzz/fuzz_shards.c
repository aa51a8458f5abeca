/* fuzz_shards.c - libFuzzer target that runs command lines from several
 * clients against real shard threads over real sockets, so that the
 * cross-shard paths run: split MGET/MSET/DEL, hops (RENAME) and gather
 * commands, squashed and whole-shard EXEC, WATCH, blocked clients woken
 * from other shards, per-key lock queues, refusal and retry.
 *
 * Process set-up (once): the shards are created and their threads started
 * as shoal-server does it, each shard with a TCP listener of its own on
 * 127.0.0.1 and a port the kernel picks (shard_register_listener_on), so
 * client i is served by shard i mod n and every shard coordinates. (With
 * one shared listener the kernel gave every connection to shard 0.)
 * FUZZ_SHARDS=n picks the shard count (default 4); shards exist once per
 * process, so every input of a run sees the same count.
 * The process works in a private temporary directory.
 *
 * Input: text, one command per line, split as redis-cli splits (quotes, \x
 * escapes; the same tokens as fuzz_commands). A first word that is one
 * digit names the client: "2 BLPOP q 0" goes to client 2 % NCLIENTS, a
 * line without it to client 0. Each client is its own connection, opened on
 * its first line. Commands are sent as RESP, pipelined: every client's
 * lines are written at once and the shards serve the connections
 * concurrently. A line "." is a barrier: the harness waits until every
 * command before it has its reply, then goes on. A line "~" sends what is
 * pending and lets PAUSE_MS pass (replies are read meanwhile): "1 BLPOP q
 * 0", "~", "LPUSH q x" wakes a client blocked on one shard from another.
 *
 * Checks beyond the sanitizers: every command gets exactly one reply, and
 * every reply is well-formed RESP2/RESP3; the server never closes a
 * connection that did not QUIT; the whole input is answered within
 * FUZZ_SHARDS_DEADLINE_MS (default 5000) ms, else the harness aborts naming
 * the commands still unanswered (a hang, a lost reply, a deadlock); after
 * the input the server's connection count comes back to the harness's own.
 *
 * Between inputs the clients are closed, changed CONFIG directives are put
 * back, and FLUSHALL empties every database (on a control connection).
 * Kept out: commands that sleep, stop the process, stream replies, fork or
 * write files, and commands that close or silence other connections
 * (CLIENT KILL, CLIENT REPLY, maxmemory-clients). CONFIG SET only for a list of directives
 * (encodings, memory, expiry, appendonly: the AOF then writes into the
 * temporary directory, with appendfsync no); DEBUG only for DIGEST,
 * DIGEST-VALUE, OBJECT, HTSTATS and POPULATE (at most 1000 keys). Blocking
 * commands and CLIENT PAUSE run with short timeouts (0, or more than 50
 * ms, becomes 20 ms), at most MAX_BLOCKING of them per input.
 *
 * An input's outcome depends on the threads' timing, so a finding may need
 * many runs to show again: build-fuzz/fuzz_shards -runs=1000 $PWD/file
 * (an absolute path: the process changes directory). FUZZ_SHARDS_ECHO=1
 * prints every reply as it comes. */
#include "lib/buf.h"
#include "lib/util.h"
#include "proto/resp.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/lazyfree.h"
#include "shard/shard.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NCLIENTS 4
#define MAX_LINES 256
#define MAX_ARGS 256
#define MAX_BLOCKING 12
#define BLOCK_SECS "0.02" /* blocking commands' timeout */
#define BLOCK_MS "20"     /* XREAD BLOCK, CLIENT PAUSE */
#define PAUSE_MS 5         /* a line "~" */
#define LATE_MS 3000        /* after a missed deadline, how long to watch for late replies */
#define MAX_REPLY (64u << 20)

extern int conn_count_total; /* net/conn.c: every shard's connections */

#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        fprintf(stderr, "fuzz_shards: " __VA_ARGS__);                                                                  \
        fprintf(stderr, "\n");                                                                                         \
        abort();                                                                                                       \
    } while (0)

typedef struct client {
    int fd;
    buf out;     /* RESP not written yet, from woff */
    size_t woff;
    buf in;      /* replies read, parsed up to roff */
    size_t roff;
    int sent, answered;
    int quit;    /* QUIT sent: nothing more goes to this client */
    int eof;
    int line[MAX_LINES]; /* input line of each command sent, for the diagnostics */
    int64_t sent_ms[MAX_LINES], reply_ms; /* when each was queued, when the last reply came */
} client;

static struct sockaddr_in srv_addr[MAX_SHARDS]; /* shard i accepts on srv_addr[i] only */
static int ctl = -1; /* the harness's own connection */
static buf ctl_in;
static int64_t deadline_ms = 5000;
static char workdir[4096];
static int echo; /* FUZZ_SHARDS_ECHO=1: print every reply (debugging the harness or a finding) */

/* Directives the input may CONFIG SET (prefixes); their values at start. */
static const char *config_ok[] = {"hash-max-", "set-max-", "zset-max-", "list-max-", "list-compress-",
                                  "stream-node-", "maxmemory", "lazyfree-", "lfu-", "active-expire",
                                  "activerehashing", "slowlog-", "latency-", "hz", "appendonly",
                                  "notify-keyspace-events", NULL};
static int cfg_ids[256], ncfg;
static buf cfg_saved[256];

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- reply parsing ---- */

/* Parses one RESP2/RESP3 value at *at of b[0..n): 1 complete (*at moves
 * past it), 0 incomplete, -1 malformed. */
static int parse_value(const char *b, size_t n, size_t *at, int depth) {
    if (depth > 64) return -1;
    if (*at >= n) return 0;
    const char *lf = memchr(b + *at, '\n', n - *at);
    if (!lf) return n - *at > (1u << 20) ? -1 : 0;
    size_t e = (size_t)(lf - b) + 1; /* just past "\n" */
    if (e < *at + 3 || b[e - 2] != '\r') return -1;
    char t = b[*at];
    const char *s = b + *at + 1;
    size_t sl = e - *at - 3;
    if (memchr(s, '\r', sl)) return -1;
    long long v = 0;
    int isnum = sl > 0 && str2ll(s, sl, &v);
    switch (t) {
    case '+':
        *at = e;
        return 1;
    case '-':
        /* an error starts with its code: an upper-case word */
        if (sl == 0 || s[0] < 'A' || s[0] > 'Z') return -1;
        *at = e;
        return 1;
    case ':':
    case '(':
        if (!isnum && t == ':') return -1;
        if (t == '(' && (sl == 0 || strspn(s + (s[0] == '-'), "0123456789") != sl - (s[0] == '-'))) return -1;
        *at = e;
        return 1;
    case '_':
        if (sl) return -1;
        *at = e;
        return 1;
    case '#':
        if (sl != 1 || (s[0] != 't' && s[0] != 'f')) return -1;
        *at = e;
        return 1;
    case ',': {
        char tmp[128], *end;
        if (sl == 0 || sl >= sizeof tmp) return -1;
        memcpy(tmp, s, sl);
        tmp[sl] = 0;
        (void)strtod(tmp, &end);
        if (*end) return -1;
        *at = e;
        return 1;
    }
    case '$':
    case '=':
    case '!':
        if (!isnum || v < -1 || v > (long long)MAX_REPLY) return -1;
        if (v == -1) {
            if (t != '$') return -1;
            *at = e;
            return 1;
        }
        if (n - e < (size_t)v + 2) return 0;
        if (b[e + v] != '\r' || b[e + v + 1] != '\n') return -1;
        if (t == '=' && (v < 4 || b[e + 3] != ':')) return -1;
        *at = e + (size_t)v + 2;
        return 1;
    case '*':
    case '%':
    case '~':
    case '>':
    case '|': {
        if (!isnum || v < -1 || v > (long long)MAX_REPLY) return -1;
        if (v == -1) {
            if (t != '*') return -1;
            *at = e;
            return 1;
        }
        size_t p = e;
        long long items = (t == '%' || t == '|') ? v * 2 : v;
        for (long long i = 0; i < items; i++) {
            int r = parse_value(b, n, &p, depth + 1);
            if (r <= 0) return r;
        }
        if (t == '|') { /* an attribute precedes the value it describes */
            int r = parse_value(b, n, &p, depth + 1);
            if (r <= 0) return r;
        }
        *at = p;
        return 1;
    }
    default:
        return -1;
    }
}

/* ---- connections ---- */

/* A connection served by shard sh. */
static int connect_srv(int sh) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) FAIL("socket: %s", strerror(errno));
    /* Non-blocking, so that a signal (libFuzzer's timers) cannot cut the
     * connect short: it goes on while poll waits for it. */
    if (connect(fd, (struct sockaddr *)&srv_addr[sh], sizeof srv_addr[sh]) < 0) {
        if (errno != EINPROGRESS && errno != EINTR) FAIL("connect: %s", strerror(errno));
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int64_t until = now_ms() + 5000;
        while (poll(&pf, 1, 100) <= 0)
            if (now_ms() > until) FAIL("connect: no connection to shard %d in 5 s", sh);
        int err = 0;
        socklen_t el = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) FAIL("connect: %s", strerror(err ? err : errno));
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void put_command(buf *b, int argc, const char *const *argv, const size_t *argl) {
    buf_printf(b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        buf_printf(b, "$%zu\r\n", argl[i]);
        buf_add(b, argv[i], argl[i]);
        buf_add(b, "\r\n", 2);
    }
}

/* Runs one command on the control connection and waits for its reply
 * (blocking; the deadline still applies). */
static void ctl_run(int argc, const char *const *argv, const size_t *argl) {
    buf req = {0};
    put_command(&req, argc, argv, argl);
    for (size_t w = 0; w < req.len;) {
        ssize_t r = write(ctl, req.p + w, req.len - w);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
            struct pollfd pf = {.fd = ctl, .events = POLLOUT};
            poll(&pf, 1, 100);
            continue;
        }
        if (r <= 0) FAIL("control connection: write: %s", strerror(errno));
        w += (size_t)r;
    }
    buf_free(&req);
    int64_t wait = deadline_ms > 5000 ? deadline_ms : 5000, until = now_ms() + wait;
    for (;;) {
        size_t at = 0;
        int rc = parse_value(ctl_in.p, ctl_in.len, &at, 0);
        if (rc < 0) FAIL("control connection: malformed reply to %.*s", (int)argl[0], argv[0]);
        if (rc > 0) {
            if (ctl_in.p[0] == '-') FAIL("control connection: %.*s", (int)(at - 2), ctl_in.p);
            buf_consume(&ctl_in, at);
            return;
        }
        struct pollfd pf = {.fd = ctl, .events = POLLIN};
        int64_t left = until - now_ms();
        if (left <= 0) FAIL("control connection: no reply to %.*s in %lld ms", (int)argl[0], argv[0], (long long)wait);
        if (poll(&pf, 1, (int)left) <= 0) continue;
        buf_reserve(&ctl_in, 4096);
        ssize_t r = read(ctl, ctl_in.p + ctl_in.len, ctl_in.cap - ctl_in.len);
        if (r == 0) FAIL("control connection closed by the server");
        if (r < 0 && errno != EINTR && errno != EAGAIN) FAIL("control connection: read: %s", strerror(errno));
        if (r > 0) ctl_in.len += (size_t)r;
    }
}

static void ctl_run_str(const char *a0, const char *a1, const char *a2) {
    const char *argv[3] = {a0, a1, a2};
    size_t argl[3] = {strlen(a0), a1 ? strlen(a1) : 0, a2 ? strlen(a2) : 0};
    ctl_run(a2 ? 3 : a1 ? 2 : 1, argv, argl);
}

/* ---- set-up ---- */

static int config_allowed(const char *name, size_t n) {
    /* client eviction disconnects clients, as CLIENT KILL does: their
     * replies would be lost */
    if (n >= 17 && !strncasecmp(name, "maxmemory-clients", 17)) return 0;
    for (int i = 0; config_ok[i]; i++) {
        size_t l = strlen(config_ok[i]);
        if (n >= l && !strncasecmp(name, config_ok[i], l)) return 1;
    }
    return 0;
}

/* libFuzzer flags this target wants unless the command line sets them
 * (LLVMFuzzerInitialize runs before libFuzzer parses its flags):
 * - entropic=0: coverage here is not a function of the input alone (the
 *   shard threads run crons, timeouts and races), so nearly every input
 *   has "new" features, and the entropic schedule's bookkeeping over them
 *   took more time than the inputs (11 against 46 execs/s);
 * - detect_leaks=0: the shard threads allocate and free on their own
 *   schedule (pools, buffers), so mallocs and frees never balance within
 *   an input and libFuzzer would run a full leak check after each of its
 *   first 1000 inputs (about 30 ms each). LeakSanitizer still checks the
 *   whole run at exit (ASAN_OPTIONS detect_leaks=1, as run.sh sets it). */
static const char *const default_flags[] = {"-entropic=", "-detect_leaks="};
static const char *const default_values[] = {"-entropic=0", "-detect_leaks=0"};

static void add_default_flags(int *argc, char ***argv) {
    int n = *argc, k = 1;
    char **nv = calloc((size_t)n + 3, sizeof *nv);
    if (!nv) return;
    nv[0] = (*argv)[0];
    for (size_t f = 0; f < sizeof default_flags / sizeof default_flags[0]; f++) {
        int given = 0;
        for (int i = 1; i < n; i++)
            given |= !strncmp((*argv)[i], default_flags[f], strlen(default_flags[f]));
        if (!given) nv[k++] = (char *)default_values[f];
    }
    for (int i = 1; i < n; i++) nv[k++] = (*argv)[i];
    nv[k] = NULL;
    *argc = k;
    *argv = nv; /* kept for the process's life */
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    add_default_flags(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    char tmpl[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpl, sizeof tmpl, "%s/shoal-fuzz-shards.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl) || chdir(tmpl) != 0 || !getcwd(workdir, sizeof workdir)) FAIL("temporary directory: %s", strerror(errno));
    int n = 4;
    const char *e = getenv("FUZZ_SHARDS");
    if (e && *e) n = atoi(e);
    if (n < 1 || n > MAX_SHARDS) FAIL("FUZZ_SHARDS=%s: want 1..%d", e, MAX_SHARDS);
    e = getenv("FUZZ_SHARDS_DEADLINE_MS");
    if (e && atoll(e) > 0) deadline_ms = atoll(e);
    e = getenv("FUZZ_SHARDS_ECHO");
    echo = e && *e == '1';

    config_defaults();
    engine_init();
    if (shard_create_all(n) < 0) FAIL("cannot create %d shards", n);
    static const char *init[][2] = {{"proto-max-bulk-len", "1mb"}, {"loglevel", "warning"}, {"save", ""},
                                    {"appendfsync", "no"}};
    for (size_t i = 0; i < sizeof init / sizeof init[0]; i++) {
        char err[512];
        if (config_set(init[i][0], init[i][1], err, sizeof err) != 0)
            FAIL("CONFIG SET %s %s: %s", init[i][0], init[i][1], err);
    }
    for (int i = 0; i < config_count() && ncfg < 256; i++) {
        const char *name = config_name(i);
        if (!config_allowed(name, strlen(name))) continue;
        cfg_ids[ncfg] = i;
        config_value(i, &cfg_saved[ncfg]);
        buf_addc(&cfg_saved[ncfg], 0);
        ncfg++;
    }

    for (int i = 0; i < n; i++) {
        int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        struct sockaddr_in *a = &srv_addr[i];
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a->sin_port = 0;
        socklen_t sl = sizeof *a;
        if (lfd < 0 || bind(lfd, (struct sockaddr *)a, sizeof *a) < 0 || listen(lfd, 128) < 0 ||
            getsockname(lfd, (struct sockaddr *)a, &sl) < 0)
            FAIL("listener on 127.0.0.1: %s", strerror(errno));
        if (shard_register_listener_on(lfd, 0, i) < 0) FAIL("cannot register the listener of shard %d", i);
    }
    if (shard_start_all() < 0) FAIL("cannot start the shard threads");
    ctl = connect_srv(0);
    ctl_run_str("PING", NULL, NULL);
    fprintf(stderr, "fuzz_shards: %d shards, %d clients (client i on shard i mod %d), deadline %lld ms\n", n,
            NCLIENTS, n, (long long)deadline_ms);
    return 0;
}

/* ---- which lines run, and how ---- */

static int contains_ci(const char *s, size_t n, const char *word) {
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++)
        if (!strncasecmp(s + i, word, w)) return 1;
    return 0;
}

#define IS(i, lit) (argc > (i) && str_eq_ci(argv[i], argl[i], lit))

static int allowed(int argc, const char **argv, const size_t *argl) {
    static const char *banned[] = {"shutdown", "save", "bgsave", "bgrewriteaof", "monitor", "sync", "psync",
                                   "replicaof", "slaveof", "failover", "subscribe", "psubscribe", "ssubscribe",
                                   "wait", "waitaof", "migrate", NULL};
    for (int i = 0; banned[i]; i++)
        if (IS(0, banned[i])) return 0;
    for (int i = 0; i < argc; i++)
        if (contains_ci(argv[i], argl[i], "sleep")) return 0;
    if (IS(0, "client") && (IS(1, "kill") || IS(1, "reply"))) return 0;
    if (IS(0, "config")) {
        if (IS(1, "rewrite")) return 0;
        if (IS(1, "set"))
            for (int i = 2; i < argc; i += 2)
                if (!config_allowed(argv[i], argl[i])) return 0;
    }
    if (IS(0, "debug")) /* only what reads, or adds a few keys */
        return IS(1, "digest") || IS(1, "digest-value") || IS(1, "object") || IS(1, "htstats") ||
               IS(1, "htstats-key") || IS(1, "populate");
    return 1;
}

/* Replaces argument i, when it is a number that is 0 or above max, by
 * lit (the tokens live in the line's buffer; lit is static). */
static void cap_timeout(const char **argv, size_t *argl, int i, double max, const char *lit) {
    char tmp[64], *end;
    if (argl[i] == 0 || argl[i] >= sizeof tmp) return;
    memcpy(tmp, argv[i], argl[i]);
    tmp[argl[i]] = 0;
    double v = strtod(tmp, &end);
    if (*end || !(v == 0 || v > max)) return; /* not a number, negative, or short: as given */
    argv[i] = lit;
    argl[i] = strlen(lit);
}

/* 1 when the command may block (its timeout now capped), else 0. */
static int blocking(int argc, const char **argv, size_t *argl) {
    if (IS(0, "blpop") || IS(0, "brpop") || IS(0, "bzpopmin") || IS(0, "bzpopmax") || IS(0, "brpoplpush") ||
        IS(0, "blmove")) {
        cap_timeout(argv, argl, argc - 1, 0.05, BLOCK_SECS);
        return 1;
    }
    if ((IS(0, "blmpop") || IS(0, "bzmpop")) && argc > 1) {
        cap_timeout(argv, argl, 1, 0.05, BLOCK_SECS);
        return 1;
    }
    if (IS(0, "xread") || IS(0, "xreadgroup")) {
        int b = 0;
        for (int i = 1; i + 1 < argc && !str_eq_ci(argv[i], argl[i], "streams"); i++)
            if (str_eq_ci(argv[i], argl[i], "block")) {
                cap_timeout(argv, argl, i + 1, 50, BLOCK_MS);
                b = 1;
            }
        return b;
    }
    if (IS(0, "client") && IS(1, "pause") && argc > 2) {
        cap_timeout(argv, argl, 2, 50, BLOCK_MS);
        return 1;
    }
    if (IS(0, "debug") && IS(1, "populate") && argc > 2) cap_timeout(argv, argl, 2, 1000, "1000");
    return 0;
}

/* ---- running an input ---- */

static client cl[NCLIENTS];
static int64_t in_start; /* when the input started (ms) */
static int pump_line;    /* the line that started the current wait (-1: the end) */
static int64_t pump_ms;  /* and when */
static const char *in_p;   /* the input, for diagnostics */
static size_t in_n;
static size_t line_at[MAX_LINES + 1];

static void print_line(int ln) {
    size_t a = line_at[ln], b = a;
    while (b < in_n && in_p[b] != '\n') b++;
    fprintf(stderr, " line %d: %.*s\n", ln + 1, (int)(b - a > 200 ? 200 : b - a), in_p + a);
}

/* What the shards are doing, read without their consent (racy, for the
 * report only): twice, 200 ms apart, to tell a busy server from an idle one. */
static void report_shards(void) {
    for (int round = 0; round < 2; round++) {
        if (round) {
            struct timespec ts = {0, 200000000};
            nanosleep(&ts, NULL);
        }
        for (int i = 0; i < nshards; i++) {
            shard *sh = shards[i];
            fprintf(stderr, "  shard %d: commands %llu, transactions %llu, parts waiting %d, %s, blocked clients %d, sleeping %d\n",
                    i, (unsigned long long)__atomic_load_n(&sh->stat_commands, __ATOMIC_RELAXED),
                    (unsigned long long)__atomic_load_n(&sh->stat_tx, __ATOMIC_RELAXED),
                    __atomic_load_n(&sh->sq_waiting, __ATOMIC_RELAXED),
                    __atomic_load_n(&sh->locked_n, __ATOMIC_RELAXED) ? "locked whole" : "not locked whole",
                    __atomic_load_n(&sh->block_count, __ATOMIC_RELAXED), __atomic_load_n(&sh->sleeping, __ATOMIC_RELAXED));
        }
    }
}

static void read_replies(client *c, int idx);
static int late_check; /* report_stuck is waiting for late replies */

static void report_stuck(const char *why) {
    fprintf(stderr, "fuzz_shards: %s\n", why);
    fprintf(stderr, "  at +%lld ms, in the wait for replies that started at +%lld ms (%s %d)\n",
            (long long)(now_ms() - in_start), (long long)(pump_ms - in_start), pump_line < 0 ? "end of input, line" : "line",
            pump_line < 0 ? -pump_line : pump_line + 1);
    for (int i = 0; i < NCLIENTS; i++) {
        client *c = &cl[i];
        if (c->fd < 0) continue;
        char last[32] = "none";
        if (c->answered) snprintf(last, sizeof last, "+%lld ms", (long long)(c->reply_ms - in_start));
        fprintf(stderr, "  client %d: %d sent, %d answered (the last at %s), %zu bytes unwritten, %zu bytes of reply unparsed%s\n",
                i, c->sent, c->answered, last, c->out.len - c->woff, c->in.len - c->roff, c->quit ? " (quit)" : "");
        for (int k = c->answered; k < c->sent && k < c->answered + 4; k++) {
            fprintf(stderr, "    queued at +%lld ms,", (long long)(c->sent_ms[k] - in_start));
            print_line(c->line[k]);
        }
        if (c->in.len > c->roff)
            fprintf(stderr, "    unparsed: %.*s\n", (int)(c->in.len - c->roff > 200 ? 200 : c->in.len - c->roff),
                    c->in.p + c->roff);
    }
    report_shards();
    if (!late_check) {
        /* A slow reply or a lost one? Wait LATE_MS more, reading only. */
        late_check = 1;
        int before[NCLIENTS];
        for (int i = 0; i < NCLIENTS; i++) before[i] = cl[i].answered;
        int64_t stop = now_ms() + LATE_MS;
        while (now_ms() < stop) {
            struct pollfd pf[NCLIENTS];
            int map[NCLIENTS], np = 0;
            for (int i = 0; i < NCLIENTS; i++)
                if (cl[i].fd >= 0 && !cl[i].eof && cl[i].answered < cl[i].sent) {
                    pf[np].fd = cl[i].fd;
                    pf[np].events = POLLIN;
                    map[np++] = i;
                }
            if (!np) break;
            if (poll(pf, (nfds_t)np, 50) <= 0) continue;
            for (int k = 0; k < np; k++)
                if (pf[k].revents) read_replies(&cl[map[k]], map[k]);
        }
        for (int i = 0; i < NCLIENTS; i++)
            if (cl[i].fd >= 0 && cl[i].answered < cl[i].sent)
                fprintf(stderr, "  client %d: %d more replies in the next %d ms (the last at +%lld ms), %d still missing\n", i,
                        cl[i].answered - before[i], LATE_MS, (long long)(cl[i].reply_ms - in_start),
                        cl[i].sent - cl[i].answered);
            else if (cl[i].fd >= 0 && cl[i].answered > before[i])
                fprintf(stderr, "  client %d: all replies came late, the last at +%lld ms\n", i,
                        (long long)(cl[i].reply_ms - in_start));
    }
    abort();
}

static void read_replies(client *c, int idx) {
    int closed = 0; /* -1 EOF, else errno */
    for (;;) {
        buf_reserve(&c->in, 65536);
        ssize_t r = read(c->fd, c->in.p + c->in.len, c->in.cap - c->in.len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) break;
        if (r <= 0) {
            closed = r < 0 ? errno : -1;
            break;
        }
        c->in.len += (size_t)r;
    }
    for (;;) {
        size_t at = c->roff;
        int rc = parse_value(c->in.p, c->in.len, &at, 0);
        if (rc == 0) break;
        if (rc < 0) {
            char why[128];
            snprintf(why, sizeof why, "malformed reply on client %d (reply %d)", idx, c->answered + 1);
            report_stuck(why);
        }
        int push = c->in.p[c->roff] == '>';
        if (echo) {
            fprintf(stderr, "%d< ", idx);
            for (size_t k = c->roff; k < at && k < c->roff + 300; k++) {
                unsigned char ch = (unsigned char)c->in.p[k];
                if (ch == '\r') fputs("\\r", stderr);
                else if (ch == '\n') fputs("\\n", stderr);
                else if (ch < 32 || ch > 126) fprintf(stderr, "\\x%02x", ch);
                else fputc(ch, stderr);
            }
            fputc('\n', stderr);
        }
        c->roff = at;
        if (push) continue; /* out of band (RESP3): not a command's reply */
        c->reply_ms = now_ms();
        if (++c->answered > c->sent) {
            char why[128];
            snprintf(why, sizeof why, "client %d got more replies than commands", idx);
            report_stuck(why);
        }
    }
    if (closed) { /* after the replies that came before it */
        if (!c->quit || c->answered < c->sent) {
            char why[128];
            snprintf(why, sizeof why, "the server closed client %d (%s)", idx, closed > 0 ? strerror(closed) : "EOF");
            report_stuck(why);
        }
        c->eof = 1;
    }
    if (c->roff == c->in.len) {
        c->in.len = c->roff = 0;
        if (c->in.cap > (1u << 20)) buf_free(&c->in);
    }
}

/* Writes and reads until every command sent so far has its reply, or
 * (pause > 0) for pause ms. */
static void pump(int64_t until, int pause) {
    int64_t stop = pause > 0 ? now_ms() + pause : INT64_MAX;
    for (;;) {
        struct pollfd pf[NCLIENTS];
        int map[NCLIENTS], np = 0, busy = 0;
        for (int i = 0; i < NCLIENTS; i++) {
            client *c = &cl[i];
            if (c->fd < 0 || c->eof) continue;
            int wr = c->woff < c->out.len;
            if (!wr && c->answered == c->sent) continue;
            busy = 1;
            pf[np].fd = c->fd;
            pf[np].events = (short)(POLLIN | (wr ? POLLOUT : 0));
            pf[np].revents = 0;
            map[np++] = i;
        }
        if (!busy && pause <= 0) return;
        int64_t t = now_ms(), left = until - t;
        if (t >= stop) return;
        if (stop - t < left) left = stop - t;
        else if (left <= 0) {
            char why[160];
            snprintf(why, sizeof why, "no reply within %lld ms (a hang or a lost reply)", (long long)deadline_ms);
            report_stuck(why);
        }
        int r = poll(pf, (nfds_t)np, (int)(left > 100 ? 100 : left));
        if (r <= 0) continue;
        for (int k = 0; k < np; k++) {
            client *c = &cl[map[k]];
            if (pf[k].revents & POLLOUT) {
                ssize_t w = write(c->fd, c->out.p + c->woff, c->out.len - c->woff);
                if (w > 0) c->woff += (size_t)w;
                if (c->woff == c->out.len) c->woff = c->out.len = 0;
            }
            if (pf[k].revents & (POLLIN | POLLHUP | POLLERR)) read_replies(c, map[k]);
        }
    }
}

static void restore_config(void) {
    for (int k = 0; k < ncfg; k++) {
        buf now = {0};
        config_value(cfg_ids[k], &now);
        buf_addc(&now, 0);
        if (strcmp(now.p, cfg_saved[k].p) != 0) {
            const char *name = config_name(cfg_ids[k]);
            const char *argv[4] = {"CONFIG", "SET", name, cfg_saved[k].p};
            size_t argl[4] = {6, 3, strlen(name), cfg_saved[k].len - 1};
            ctl_run(4, argv, argl);
        }
        buf_free(&now);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    in_start = now_ms();
    int64_t until = in_start + deadline_ms;
    in_p = (const char *)data;
    in_n = size;
    for (int i = 0; i < NCLIENTS; i++) {
        memset(&cl[i], 0, sizeof cl[i]);
        cl[i].fd = -1;
    }
    buf args = {0};
    size_t off[MAX_ARGS], len[MAX_ARGS];
    const char *argv[MAX_ARGS];
    int nlines = 0, nblocking = 0, ran_config = 0, paused = 0;
    const char *p = in_p, *end = p + size;
    while (p < end && nlines < MAX_LINES) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        int ln = nlines++;
        line_at[ln] = (size_t)(p - in_p);
        int argc = resp_split_line(p, n, &args, off, len, MAX_ARGS);
        int barrier = n == 1 && p[0] == '.', pause = n == 1 && p[0] == '~';
        p += n + (nl != NULL);
        if (barrier || pause) {
            pump_line = ln;
            pump_ms = now_ms();
            pump(until, pause ? PAUSE_MS : 0);
            continue;
        }
        if (argc <= 0) continue;
        for (int i = 0; i < argc; i++)
            argv[i] = args.p + off[i];
        const char **av = argv;
        size_t *al = len;
        int who = 0;
        if (argc > 1 && len[0] == 1 && argv[0][0] >= '0' && argv[0][0] <= '9') {
            who = (argv[0][0] - '0') % NCLIENTS;
            av++, al++, argc--;
        }
        client *c = &cl[who];
        if (c->quit || !allowed(argc, av, al)) continue;
        if (blocking(argc, av, al) && ++nblocking > MAX_BLOCKING) continue;
        if (str_eq_ci(av[0], al[0], "config")) ran_config = 1;
        if (str_eq_ci(av[0], al[0], "client") && argc > 1 && str_eq_ci(av[1], al[1], "pause")) paused = 1;
        if (str_eq_ci(av[0], al[0], "quit")) c->quit = 1;
        if (c->fd < 0) c->fd = connect_srv(who % nshards);
        put_command(&c->out, argc, av, al);
        c->sent_ms[c->sent] = now_ms();
        c->line[c->sent++] = ln;
    }
    line_at[nlines] = size;
    /* Every client's commands go out and every reply comes back; then the
     * sockets close (blocked clients among them are abandoned). */
    pump_line = -nlines;
    pump_ms = now_ms();
    pump(until, 0);
    for (int i = 0; i < NCLIENTS; i++) {
        client *c = &cl[i];
        if (c->fd >= 0) close(c->fd);
        buf_free(&c->out);
        buf_free(&c->in);
        c->fd = -1;
    }
    buf_free(&args);
    if (paused) ctl_run_str("CLIENT", "UNPAUSE", NULL);
    if (ran_config) restore_config();
    ctl_run_str("FLUSHALL", NULL, NULL);
    /* The server notices the closed connections within a loop turn, and
     * the lazyfree thread frees what FLUSHALL handed it: libFuzzer's leak
     * check after the input must find nothing of it in flight (values
     * inside a table being freed are reachable only through entries, at
     * offsets LeakSanitizer does not scan). */
    while (__atomic_load_n(&conn_count_total, __ATOMIC_ACQUIRE) != 1 || lazyfree_pending() != 0) {
        if (now_ms() > until + deadline_ms)
            FAIL("%d connections still open after the input (the harness has 1), %ld values not freed by lazyfree",
                 __atomic_load_n(&conn_count_total, __ATOMIC_RELAXED), lazyfree_pending());
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return 0;
}
