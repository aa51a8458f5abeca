/* replica.c - the link from a replica to its master; see replica.h.
 *
 * State shared between the link thread, shard 0 (which owns the master's
 * connection) and the threads running REPLICAOF lives under `L`; the
 * flags commands read on their hot path (repl_replica, the state) are
 * atomics. Each REPLICAOF bumps `gen`: a sync of an older generation stops
 * at its next poll and its payload is dropped. */
#include "repl/replica.h"
#include "cmd/cmd.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "net/conn.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "server/config.h"
#include "shard/db.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int repl_replica;
void (*replica_flush_hook)(void);

static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int state;             /* atomic: REPL_* */
static uint64_t gen;          /* atomic reads; written under L */
static char host[256];        /* under L */
static int port;              /* under L */
static conn *link_conn;       /* under L: the master's connection (shard 0) */
static int64_t down_since;    /* unix seconds the link went down; 0: never up since REPLICAOF */
static int64_t last_off = -1; /* the processed offset when the link last closed */
static char replid[41] = "0000000000000000000000000000000000000000";
/* the RDB being read (atomics, for INFO) */
static int64_t xfer_size, xfer_read, xfer_last_io;
/* masterauth / masteruser / replica-announce-ip, copied by their apply
 * hooks (under L) */
static char *auth_pass, *auth_user, *announce_ip;
static size_t auth_pass_len;
static int thread_started;

/* A payload read, waiting for shard 0 to load it. */
static struct handoff {
    int fd;
    uint64_t gen;
    uint8_t *rdb;
    size_t n;
    char *rest; /* bytes after the payload: the start of the stream */
    size_t nrest;
    int64_t offset;
    char replid[41];
} pend;
static int have_pend; /* under L */

int repl_state(void) { return __atomic_load_n(&state, __ATOMIC_RELAXED); }
static void set_state(int s) { __atomic_store_n(&state, s, __ATOMIC_RELAXED); }
static int aborted(uint64_t g) { return __atomic_load_n(&gen, __ATOMIC_ACQUIRE) != g; }
/* The link thread's step of generation g: a REPLICAOF since then owns the
 * state (else a stale step could leave it where the thread never looks). */
static void link_set_state(uint64_t g, int s) {
    pthread_mutex_lock(&L);
    if (gen == g) set_state(s);
    pthread_mutex_unlock(&L);
}

static void drop_pend_locked(void) {
    if (!have_pend) return;
    close(pend.fd);
    free(pend.rdb);
    free(pend.rest);
    have_pend = 0;
}

/* ---- the link thread's I/O: blocking in 100 ms slices ---- */

typedef struct link_io {
    int fd;
    uint64_t gen;
    char in[16 * 1024];
    size_t ilen;
} link_io;

enum { IO_OK = 0, IO_TIMEOUT = -1, IO_ABORT = -2, IO_ERR = -3, IO_PROTO = -4 };

/* Waits until fd is ready for ev: IO_OK, IO_TIMEOUT after repl-timeout,
 * IO_ABORT when a REPLICAOF started another generation. */
static int io_wait(link_io *io, short ev) {
    int64_t limit = mono_us() + cfg_get(repl_timeout) * 1000000;
    for (;;) {
        if (aborted(io->gen)) return IO_ABORT;
        struct pollfd p = {.fd = io->fd, .events = ev};
        int r = poll(&p, 1, 100);
        if (r > 0) return IO_OK;
        if (r < 0 && errno != EINTR) return IO_ERR;
        if (mono_us() >= limit) return IO_TIMEOUT;
    }
}

static int io_send(link_io *io, const char *p, size_t n) {
    while (n) {
        int r = io_wait(io, POLLOUT);
        if (r < 0) return r;
        ssize_t w = write(io->fd, p, n);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (w <= 0) return IO_ERR;
        p += w;
        n -= (size_t)w;
    }
    return IO_OK;
}

/* Reads what comes into dst (at most cap bytes): the count, or IO_*. */
static long io_read(link_io *io, char *dst, size_t cap) {
    for (;;) {
        int r = io_wait(io, POLLIN);
        if (r < 0) return r;
        ssize_t n = read(io->fd, dst, cap);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return IO_ERR;
        __atomic_store_n(&xfer_last_io, mstime() / 1000, __ATOMIC_RELAXED);
        return (long)n;
    }
}

/* One line of the master's reply into line (cut to cap-1 bytes). */
static int io_line(link_io *io, char *line, size_t cap) {
    for (;;) {
        size_t used;
        long len = repl_line_end(io->in, io->ilen, &used);
        if (len >= 0) {
            size_t k = (size_t)len < cap - 1 ? (size_t)len : cap - 1;
            memcpy(line, io->in, k);
            line[k] = 0;
            memmove(io->in, io->in + used, io->ilen - used);
            io->ilen -= used;
            return IO_OK;
        }
        if (io->ilen == sizeof io->in) return IO_PROTO;
        long n = io_read(io, io->in + io->ilen, sizeof io->in - io->ilen);
        if (n < 0) return (int)n;
        io->ilen += (size_t)n;
    }
}

/* Sends a command (RESP array) and reads its one-line reply. */
static int io_cmd(link_io *io, int argc, const char **argv, const size_t *argl, char *reply, size_t cap) {
    buf b = {0};
    buf_printf(&b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t l = argl ? argl[i] : strlen(argv[i]);
        buf_printf(&b, "$%zu\r\n", l);
        buf_add(&b, argv[i], l);
        buf_adds(&b, "\r\n");
    }
    int r = io_send(io, b.p, b.len);
    buf_free(&b);
    return r < 0 ? r : io_line(io, reply, cap);
}

/* A reply line that is only an empty keepalive newline is skipped. */
static int io_line_skip_empty(link_io *io, char *line, size_t cap) {
    for (;;) {
        int r = io_line(io, line, cap);
        if (r < 0 || line[0]) return r;
    }
}

static void log_io_error(int r, const char *during) {
    if (r == IO_ABORT) return;
    if (r == IO_TIMEOUT)
        log_msg(LOG_WARNING, "%s", during);
    else
        log_msg(LOG_WARNING, "I/O error trying to sync with MASTER: connection lost");
}

/* Connects (non-blocking, polled), then the socket is blocking-free: all
 * waits go through io_wait. -1 logged. */
static int do_connect(link_io *io, const char *h, int p) {
    char ps[16];
    snprintf(ps, sizeof ps, "%d", p);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(h, ps, &hints, &res);
    if (rc != 0) {
        log_msg(LOG_WARNING, "Unable to connect to MASTER: %s", gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        log_msg(LOG_WARNING, "Unable to connect to MASTER: %s", strerror(err));
        return -1;
    }
    io->fd = fd;
    int r = io_wait(io, POLLOUT);
    if (r == IO_TIMEOUT) {
        log_msg(LOG_WARNING, "Timeout connecting to the MASTER...");
        return -1;
    }
    if (r < 0) return -1;
    socklen_t sl = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0) err = errno;
    if (err) {
        log_msg(LOG_WARNING, "Error condition on socket for SYNC: %s", strerror(err));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    log_msg(LOG_NOTICE, "Non blocking connect for SYNC fired the event.");
    return 0;
}

/* The handshake up to PSYNC's answer. -1 logged. */
static int handshake(link_io *io, struct handoff *h) {
    char line[1024];
    link_set_state(io->gen, REPL_HANDSHAKE);
    const char *ping[] = {"PING"};
    int r = io_cmd(io, 1, ping, NULL, line, sizeof line);
    if (r < 0) {
        log_io_error(r, "Timeout connecting to the MASTER...");
        return -1;
    }
    if (line[0] == '-' && strncmp(line + 1, "NOAUTH", 6) && strncmp(line + 1, "NOPERM", 6) &&
        strncmp(line + 1, "ERR operation not permitted", 27)) {
        log_msg(LOG_WARNING, "Error reply to PING from master: '%s'", line);
        return -1;
    }
    log_msg(LOG_NOTICE, "Master replied to PING, replication can continue...");
    pthread_mutex_lock(&L);
    char *pass = NULL, *user = auth_user && *auth_user ? strdup(auth_user) : NULL;
    size_t plen = auth_pass_len;
    if (auth_pass && plen) {
        pass = malloc(plen);
        memcpy(pass, auth_pass, plen);
    }
    pthread_mutex_unlock(&L);
    if (pass) {
        const char *argv[3] = {"AUTH"};
        size_t argl[3] = {4};
        int argc = 1;
        if (user) {
            argv[argc] = user;
            argl[argc++] = strlen(user);
        }
        argv[argc] = pass;
        argl[argc++] = plen;
        r = io_cmd(io, argc, argv, argl, line, sizeof line);
    }
    free(pass);
    free(user);
    if (r < 0) {
        log_io_error(r, "Timeout connecting to the MASTER...");
        return -1;
    }
    if (line[0] == '-') {
        log_msg(LOG_WARNING, "Unable to AUTH to MASTER: %s", line);
        return -1;
    }
    char portstr[16];
    int64_t ap = cfg_get(replica_announce_port);
    snprintf(portstr, sizeof portstr, "%lld", (long long)(ap ? ap : cfg_get(port)));
    const char *lp[] = {"REPLCONF", "listening-port", portstr};
    if ((r = io_cmd(io, 3, lp, NULL, line, sizeof line)) < 0) goto ioerr;
    if (line[0] == '-')
        log_msg(LOG_NOTICE, "(Non critical) Master does not understand REPLCONF listening-port: %s", line);
    pthread_mutex_lock(&L);
    char *ip = announce_ip && *announce_ip ? strdup(announce_ip) : NULL;
    pthread_mutex_unlock(&L);
    if (ip) {
        const char *ipa[] = {"REPLCONF", "ip-address", ip};
        r = io_cmd(io, 3, ipa, NULL, line, sizeof line);
        free(ip);
        if (r < 0) goto ioerr;
        if (line[0] == '-')
            log_msg(LOG_NOTICE, "(Non critical) Master does not understand REPLCONF ip-address: %s", line);
    }
    const char *capa[] = {"REPLCONF", "capa", "eof", "capa", "psync2"};
    if ((r = io_cmd(io, 5, capa, NULL, line, sizeof line)) < 0) goto ioerr;
    if (line[0] == '-') log_msg(LOG_NOTICE, "(Non critical) Master does not understand REPLCONF capa: %s", line);
    log_msg(LOG_NOTICE, "Partial resynchronization not possible (no cached master)");
    const char *psync[] = {"PSYNC", "?", "-1"};
    if ((r = io_cmd(io, 3, psync, NULL, line, sizeof line)) < 0) goto ioerr;
    if (!line[0] && (r = io_line_skip_empty(io, line, sizeof line)) < 0) goto ioerr;
    if (repl_parse_fullresync(line, strlen(line), h->replid, &h->offset) == 0) {
        log_msg(LOG_NOTICE, "Full resync from master: %s:%lld", h->replid, (long long)h->offset);
        return 0;
    }
    if (!strncmp(line, "-NOMASTERLINK", 13) || !strncmp(line, "-LOADING", 8))
        log_msg(LOG_NOTICE, "Master is currently unable to PSYNC but should be in the future: %s", line);
    else
        log_msg(LOG_WARNING, "Unexpected reply to PSYNC from master: %s", line);
    return -1;
ioerr:
    log_io_error(r, "Timeout connecting to the MASTER...");
    return -1;
}

/* Reads the payload into h (the RDB bytes, and what followed them). */
static int transfer(link_io *io, struct handoff *h) {
    static const char tmo[] = "Timeout receiving bulk data from MASTER... If the problem persists try to set the "
                              "'repl-timeout' parameter in redis.conf to a larger value.";
    char line[1024], mark[40];
    int64_t len = -1;
    link_set_state(io->gen, REPL_TRANSFER);
    __atomic_store_n(&xfer_read, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&xfer_size, -1, __ATOMIC_RELAXED);
    __atomic_store_n(&xfer_last_io, mstime() / 1000, __ATOMIC_RELAXED);
    int r = io_line_skip_empty(io, line, sizeof line);
    if (r < 0) {
        log_io_error(r, tmo);
        return -1;
    }
    if (line[0] == '-') {
        log_msg(LOG_WARNING, "MASTER aborted replication with an error: %s", line + 1);
        return -1;
    }
    int eof = repl_parse_bulk_header(line, strlen(line), &len, mark);
    if (eof < 0) {
        log_msg(LOG_WARNING,
                "Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host and "
                "port are right?",
                line);
        return -1;
    }
    if (eof)
        log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to memory");
    else
        log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync: receiving %lld bytes from master to memory", (long long)len);
    __atomic_store_n(&xfer_size, eof ? -1 : len, __ATOMIC_RELAXED);
    size_t cap = eof ? 1 << 16 : (size_t)len + 1, n = 0;
    uint8_t *p = malloc(cap);
    if (!p) {
        log_msg(LOG_WARNING, "Can't allocate %zu bytes for the payload from MASTER", cap);
        return -1;
    }
    /* what the line reader already holds comes first */
    size_t take = io->ilen;
    if (!eof && take > (size_t)len) take = (size_t)len;
    if (take > cap) {
        cap = take;
        p = realloc(p, cap);
    }
    memcpy(p, io->in, take);
    n = take;
    memmove(io->in, io->in + take, io->ilen - take);
    io->ilen -= take;
    for (;;) {
        if (!eof && n == (size_t)len) break;
        if (eof && n >= 40 && !memcmp(p + n - 40, mark, 40)) {
            n -= 40;
            break;
        }
        if (n == cap) {
            size_t nc = cap * 2;
            uint8_t *q = realloc(p, nc);
            if (!q) {
                free(p);
                log_msg(LOG_WARNING, "Can't allocate %zu bytes for the payload from MASTER", nc);
                return -1;
            }
            p = q;
            cap = nc;
        }
        size_t want = cap - n;
        if (!eof && want > (size_t)len - n) want = (size_t)len - n;
        /* with the EOF mark, read no further than the mark could end: the
         * master sends nothing after it before our first ACK */
        long got = io_read(io, (char *)p + n, want);
        if (got < 0) {
            free(p);
            log_io_error((int)got, tmo);
            return -1;
        }
        n += (size_t)got;
        __atomic_store_n(&xfer_read, (int64_t)n, __ATOMIC_RELAXED);
    }
    h->rdb = p;
    h->n = n;
    h->nrest = io->ilen;
    h->rest = NULL;
    if (io->ilen) {
        h->rest = malloc(io->ilen);
        memcpy(h->rest, io->in, io->ilen);
    }
    return 0;
}

/* One full sync with host:port up to the handoff. 0 handed off, -1 not. */
static int sync_once(uint64_t g, const char *h, int p) {
    link_io *io = calloc(1, sizeof *io);
    io->fd = -1;
    io->gen = g;
    struct handoff ho = {0};
    log_msg(LOG_NOTICE, "Connecting to MASTER %s:%d", h, p);
    log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync started");
    link_set_state(g, REPL_CONNECTING);
    int rc = -1;
    if (do_connect(io, h, p) == 0 && handshake(io, &ho) == 0 && transfer(io, &ho) == 0) {
        pthread_mutex_lock(&L);
        if (!aborted(g)) {
            drop_pend_locked();
            ho.fd = io->fd;
            ho.gen = g;
            pend = ho;
            have_pend = 1;
            io->fd = -1;
            rc = 0;
        }
        pthread_mutex_unlock(&L);
        if (rc == 0) {
            shard_wake(shards[0]);
        } else {
            free(ho.rdb);
            free(ho.rest);
        }
    }
    if (io->fd >= 0) close(io->fd);
    free(io);
    return rc;
}

static void *link_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "repl-link");
    pthread_mutex_lock(&L);
    for (;;) {
        while (!repl_replica || repl_state() != REPL_CONNECT)
            pthread_cond_wait(&wake, &L);
        uint64_t g = gen;
        char h[256];
        int p = port;
        memcpy(h, host, sizeof h);
        pthread_mutex_unlock(&L);
        int rc = sync_once(g, h, p);
        pthread_mutex_lock(&L);
        if (rc < 0 && gen == g) {
            if (repl_replica) set_state(REPL_CONNECT);
            /* once a second, as Redis's replicationCron; a REPLICAOF wakes it */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&wake, &L, &ts);
        }
    }
    return NULL;
}

static void start_thread(void) {
    if (__atomic_exchange_n(&thread_started, 1, __ATOMIC_ACQ_REL)) return;
    pthread_t t;
    if (pthread_create(&t, NULL, link_main, NULL) == 0) pthread_detach(t);
}

/* ---- shard 0: loading the payload, the master's connection ---- */

static void load_proc(cmd_ctx *c);
static const command load_row = {.name = "replica-load", .proc = load_proc, .arity = 1, .flags = CMD_ALLSHARDS};

static void send_ack(conn *c) {
    buf *o = session_reply_buf(&c->s);
    char off[24];
    int n = snprintf(off, sizeof off, "%llu", (unsigned long long)c->repl_applied);
    buf_printf(o, "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n", n, off);
}

/* Runs holding every shard (an internal transaction started by shard 0's
 * cron): the databases are emptied and the payload loaded, then the
 * socket becomes the master's connection on this shard. */
static void load_proc(cmd_ctx *c) {
    buf_adds(c->out, "+OK\r\n"); /* (dropped: no client) */
    pthread_mutex_lock(&L);
    if (!have_pend) {
        pthread_mutex_unlock(&L);
        return;
    }
    struct handoff h = pend;
    have_pend = 0;
    int current = h.gen == gen;
    pthread_mutex_unlock(&L);
    if (!current) {
        close(h.fd);
        free(h.rdb);
        free(h.rest);
        return;
    }
    log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync: Flushing old data");
    int ndb = (int)cfg_get(databases);
    int lazy = cfg_get(replica_lazy_flush) != 0;
    for (int i = 0; i < nshards; i++)
        for (int d = 0; d < ndb; d++)
            if (lazy)
                db_clear_async(&shards[i]->dbs[d]);
            else
                db_clear(&shards[i]->dbs[d]);
    if (replica_flush_hook) replica_flush_hook();
    log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory");
    rdb_load_stats st;
    char err[512];
    rdb_load_keep_expired = 1;
    int rc = rdb_load_mem(h.rdb, h.n, -1, mstime(), &st, err, sizeof err);
    rdb_load_keep_expired = 0;
    free(h.rdb);
    if (rc < 0) {
        log_msg(LOG_WARNING, "%s", err);
        log_msg(LOG_WARNING, "Failed trying to load the MASTER synchronization DB from socket");
        close(h.fd);
        free(h.rest);
        pthread_mutex_lock(&L);
        if (h.gen == gen) {
            set_state(REPL_CONNECT);
            pthread_cond_broadcast(&wake);
        }
        pthread_mutex_unlock(&L);
        return;
    }
    conn *m = conn_create(c->sh, h.fd, 0);
    m->repl_master = 1;
    m->s.flags |= SESS_REPLY_OFF | SESS_NO_EVICT;
    m->s.authed = 1; /* no user: no ACL checks (the master's commands obey no client rule) */
    m->repl_read = m->repl_applied = (uint64_t)h.offset;
    pthread_mutex_lock(&L); /* (REPLICAOF holds every shard too: the generation is still h.gen) */
    snprintf(m->addr, sizeof m->addr, "%.100s:%d", host, port);
    memcpy(replid, h.replid, sizeof replid);
    link_conn = m;
    down_since = 0;
    set_state(REPL_CONNECTED);
    pthread_mutex_unlock(&L);
    if (h.nrest) {
        buf_add(&m->qbuf, h.rest, h.nrest);
        m->repl_read += h.nrest;
        shard_add_pending(c->sh, m);
    }
    free(h.rest);
    send_ack(m); /* a diskless master puts the replica online at its first ACK */
    log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync: Finished with success");
    if (cfg_get(appendonly)) { /* the AOF knows nothing of the load: a new base from here, as Redis restarts it */
        int ids[MAX_SHARDS];
        for (int i = 0; i < nshards; i++)
            ids[i] = i;
        if (aof_rewrite_start(ids, nshards, mstime(), err, sizeof err) < 0)
            log_msg(LOG_WARNING, "Failed to rewrite the AOF after the sync with the master: %s", err);
    }
}

static int64_t last_ack_ms;

static void replica_cron(shard *s) {
    if (s->id != 0) return;
    pthread_mutex_lock(&L);
    int start = have_pend;
    conn *m = link_conn;
    pthread_mutex_unlock(&L);
    if (start) {
        const char *argv[] = {"replica-load"};
        size_t argl[] = {12};
        tx_begin_internal(s, &load_row, 1, argv, argl);
    }
    if (!m || m->closed) return;
    int64_t now = s->now_ms;
    if (now - m->last_io_ms > cfg_get(repl_timeout) * 1000) {
        log_msg(LOG_WARNING, "MASTER timeout: no data nor PING received...");
        conn_close(m);
        return;
    }
    if (now - last_ack_ms >= 1000) {
        last_ack_ms = now;
        send_ack(m);
    }
}

/* REPLCONF GETACK from the master: answered at once with the offset of
 * the commands before it. */
static int master_cmd(conn *c, int argc, const char **argv, const size_t *argl) {
    if (argc == 3 && argl[0] == 8 && !strncasecmp(argv[0], "replconf", 8) && argl[1] == 6 &&
        !strncasecmp(argv[1], "getack", 6)) {
        send_ack(c);
        return 1;
    }
    return 0;
}

static void master_closed(conn *c) {
    pthread_mutex_lock(&L);
    last_off = (int64_t)c->repl_applied;
    if (link_conn == c) {
        link_conn = NULL;
        log_msg(LOG_WARNING, "Connection with master lost.");
        down_since = mstime() / 1000;
        if (repl_replica) {
            set_state(REPL_CONNECT);
            pthread_cond_broadcast(&wake);
        }
    }
    pthread_mutex_unlock(&L);
}

/* ---- configuration and commands ---- */

static void copy_str(char **dst, size_t *dlen, const char *name, const char *v) {
    size_t n = v ? config_value_len(name) : 0;
    free(*dst);
    *dst = malloc(n + 1);
    if (n) memcpy(*dst, v, n);
    (*dst)[n] = 0;
    if (dlen) *dlen = n;
}

static int auth_apply(char *err, size_t errlen) {
    pthread_mutex_lock(&L);
    copy_str(&auth_pass, &auth_pass_len, "masterauth", cfg.masterauth_s);
    copy_str(&auth_user, NULL, "masteruser", cfg.masteruser_s);
    copy_str(&announce_ip, NULL, "replica-announce-ip", cfg.replica_announce_ip_s);
    pthread_mutex_unlock(&L);
    return 0;
}

/* Closes the master's connection (from any thread: shard 0 closes it at
 * its next safe point) and forgets a payload not loaded yet. Under L. */
static void cut_link_locked(void) {
    drop_pend_locked();
    conn *m = link_conn;
    if (!m) return;
    link_conn = NULL;
    log_msg(LOG_WARNING, "Connection with master lost.");
    last_off = (int64_t)m->repl_applied;
    __atomic_store_n(&m->s.killed, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&m->sh->kill_reqs, 1, __ATOMIC_RELEASE);
    shard_wake(m->sh);
}

int replica_set_master(const char *h, int p, const char *who) {
    pthread_mutex_lock(&L);
    if (repl_replica && p == port && !strcasecmp(h, host)) {
        pthread_mutex_unlock(&L);
        log_msg(LOG_NOTICE, "REPLICAOF would result into synchronization with the master we are already connected "
                            "with. No operation performed.");
        return 1;
    }
    cut_link_locked();
    snprintf(host, sizeof host, "%s", h);
    port = p;
    __atomic_store_n(&gen, gen + 1, __ATOMIC_RELEASE);
    down_since = 0;
    last_off = -1;
    __atomic_store_n(&repl_replica, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&db_keep_expired, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&log_role, 'S', __ATOMIC_RELAXED);
    set_state(REPL_CONNECT);
    char v[300], err[128];
    snprintf(v, sizeof v, "%s %d", h, p);
    config_store("replicaof", v, err, sizeof err);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&L);
    if (who) log_msg(LOG_NOTICE, "REPLICAOF %s:%d enabled (user request from '%s')", h, p, who);
    start_thread();
    return 0;
}

void replica_set_none(const char *who) {
    pthread_mutex_lock(&L);
    int was = repl_replica;
    cut_link_locked();
    __atomic_store_n(&gen, gen + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&repl_replica, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&db_keep_expired, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&log_role, 'M', __ATOMIC_RELAXED);
    set_state(REPL_NONE);
    char err[128];
    config_store("replicaof", "", err, sizeof err);
    pthread_mutex_unlock(&L);
    if (was) log_msg(LOG_NOTICE, "MASTER MODE enabled (user request from '%s')", who);
}

int replica_start(void) {
    auth_apply(NULL, 0);
    const char *v = cfg.replicaof_s;
    if (!v || !*v) return 0;
    char h[256];
    int p;
    if (sscanf(v, "%255s %d", h, &p) != 2 || p < 0 || p > 65535) {
        log_msg(LOG_WARNING, "Invalid replicaof directive: '%s'", v);
        return -1;
    }
    replica_set_master(h, p, NULL);
    return 0;
}

void replica_init(void) {
    conn_master_cmd_hook = master_cmd;
    conn_master_closed_hook = master_closed;
    shard_add_cron_hook(replica_cron);
    config_on_apply("masterauth", auth_apply);
    config_on_apply("masteruser", auth_apply);
    config_on_apply("replica-announce-ip", auth_apply);
}

const char *replica_refusal(int is_write, int stale_ok) {
    if (!repl_is_replica()) return NULL;
    if (is_write && cfg_get(replica_read_only)) return "READONLY You can't write against a read only replica.";
    if (!stale_ok && !cfg_get(replica_serve_stale_data) && repl_state() != REPL_CONNECTED)
        return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
    return NULL;
}

/* ---- ROLE and INFO ---- */

void replica_role(replica_role_info *out) {
    pthread_mutex_lock(&L);
    snprintf(out->host, sizeof out->host, "%s", host);
    out->port = port;
    out->state = repl_state();
    out->offset = link_conn ? (int64_t)__atomic_load_n(&link_conn->repl_applied, __ATOMIC_RELAXED) : -1;
    pthread_mutex_unlock(&L);
}

void replica_info(buf *o) {
    pthread_mutex_lock(&L);
    int st = repl_state();
    int64_t now = mstime() / 1000;
    int64_t read = last_off < 0 ? 0 : last_off, applied = read;
    int64_t last_io = -1;
    if (link_conn) {
        read = (int64_t)__atomic_load_n(&link_conn->repl_read, __ATOMIC_RELAXED);
        applied = (int64_t)__atomic_load_n(&link_conn->repl_applied, __ATOMIC_RELAXED);
        last_io = now - __atomic_load_n(&link_conn->last_io_ms, __ATOMIC_RELAXED) / 1000;
    }
    buf_printf(o,
               "role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\nmaster_link_status:%s\r\n"
               "master_last_io_seconds_ago:%lld\r\nmaster_sync_in_progress:%d\r\nslave_read_repl_offset:%lld\r\n"
               "slave_repl_offset:%lld\r\n",
               host, port, st == REPL_CONNECTED ? "up" : "down", (long long)last_io, st == REPL_TRANSFER,
               (long long)read, (long long)applied);
    if (st == REPL_TRANSFER) {
        int64_t size = __atomic_load_n(&xfer_size, __ATOMIC_RELAXED),
                got = __atomic_load_n(&xfer_read, __ATOMIC_RELAXED);
        double perc = size ? (double)got / (double)size * 100 : 0; /* (negative with the EOF mark, as Redis's) */
        buf_printf(o,
                   "master_sync_total_bytes:%lld\r\nmaster_sync_read_bytes:%lld\r\nmaster_sync_left_bytes:%lld\r\n"
                   "master_sync_perc:%.2f\r\nmaster_sync_last_io_seconds_ago:%d\r\n",
                   (long long)size, (long long)got, (long long)(size - got), perc,
                   (int)(now - __atomic_load_n(&xfer_last_io, __ATOMIC_RELAXED)));
    }
    if (st != REPL_CONNECTED)
        buf_printf(o, "master_link_down_since_seconds:%lld\r\n", down_since ? (long long)(now - down_since) : -1LL);
    buf_printf(o,
               "slave_priority:%lld\r\nslave_read_only:%d\r\nreplica_announced:%d\r\nconnected_slaves:0\r\n"
               "master_failover_state:no-failover\r\nmaster_replid:%s\r\n"
               "master_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:%lld\r\n"
               "second_repl_offset:-1\r\nrepl_backlog_active:0\r\nrepl_backlog_size:1048576\r\n"
               "repl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
               (long long)cfg_get(replica_priority), cfg_get(replica_read_only) ? 1 : 0,
               cfg_get(replica_announced) ? 1 : 0, replid, (long long)applied);
    pthread_mutex_unlock(&L);
}
