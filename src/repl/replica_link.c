/* replica_link.c - the link thread of a replica (see replica.h): connects
 * to the master, runs the handshake, reads the payload into memory and
 * hands it to shard 0 (replica.c loads it). Its socket calls block, but
 * only in polls of 100 ms, so a REPLICAOF (a new generation) stops it at
 * the next slice, and repl-timeout bounds every wait. It touches no
 * keyspace and no connection. */
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "repl/replica.h"
#include "repl/replica_state.h"
#include "server/config.h"
#include "shard/shard.h"
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The link thread's step of generation g: a REPLICAOF since then owns the
 * state (else a stale step could leave it where the thread never looks). */
static void link_set_state(uint64_t g, int s) {
    pthread_mutex_lock(&repl_lock);
    if (repl_gen == g) repl_set_state(s);
    pthread_mutex_unlock(&repl_lock);
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
        if (repl_aborted(io->gen)) return IO_ABORT;
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
        __atomic_store_n(&repl_xfer_last_io, mstime() / 1000, __ATOMIC_RELAXED);
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
static int handshake(link_io *io, repl_handoff *h) {
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
    pthread_mutex_lock(&repl_lock);
    char *pass = NULL, *user = repl_auth_user && *repl_auth_user ? strdup(repl_auth_user) : NULL;
    size_t plen = repl_auth_pass_len;
    if (repl_auth_pass && plen) {
        pass = malloc(plen);
        memcpy(pass, repl_auth_pass, plen);
    }
    pthread_mutex_unlock(&repl_lock);
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
    pthread_mutex_lock(&repl_lock);
    char *ip = repl_announce_ip && *repl_announce_ip ? strdup(repl_announce_ip) : NULL;
    pthread_mutex_unlock(&repl_lock);
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
static int transfer(link_io *io, repl_handoff *h) {
    static const char tmo[] = "Timeout receiving bulk data from MASTER... If the problem persists try to set the "
                              "'repl-timeout' parameter in redis.conf to a larger value.";
    char line[1024], mark[40];
    int64_t len = -1;
    link_set_state(io->gen, REPL_TRANSFER);
    __atomic_store_n(&repl_xfer_read, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&repl_xfer_size, -1, __ATOMIC_RELAXED);
    __atomic_store_n(&repl_xfer_last_io, mstime() / 1000, __ATOMIC_RELAXED);
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
    __atomic_store_n(&repl_xfer_size, eof ? -1 : len, __ATOMIC_RELAXED);
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
        __atomic_store_n(&repl_xfer_read, (int64_t)n, __ATOMIC_RELAXED);
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
    repl_handoff ho = {0};
    log_msg(LOG_NOTICE, "Connecting to MASTER %s:%d", h, p);
    log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync started");
    link_set_state(g, REPL_CONNECTING);
    int rc = -1;
    if (do_connect(io, h, p) == 0 && handshake(io, &ho) == 0 && transfer(io, &ho) == 0) {
        pthread_mutex_lock(&repl_lock);
        if (!repl_aborted(g)) {
            repl_drop_pend_locked();
            ho.fd = io->fd;
            ho.gen = g;
            repl_pend = ho;
            repl_have_pend = 1;
            io->fd = -1;
            rc = 0;
        }
        pthread_mutex_unlock(&repl_lock);
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
    pthread_mutex_lock(&repl_lock);
    for (;;) {
        while (!repl_replica || repl_state() != REPL_CONNECT)
            pthread_cond_wait(&repl_wake, &repl_lock);
        uint64_t g = repl_gen;
        char h[256];
        int p = repl_port;
        memcpy(h, repl_host, sizeof h);
        pthread_mutex_unlock(&repl_lock);
        int rc = sync_once(g, h, p);
        pthread_mutex_lock(&repl_lock);
        if (rc < 0 && repl_gen == g) {
            if (repl_replica) repl_set_state(REPL_CONNECT);
            /* once a second, as Redis's replicationCron; a REPLICAOF wakes it */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&repl_wake, &repl_lock, &ts);
        }
    }
    return NULL;
}

void repl_link_start(void) {
    static int started;
    if (__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL)) return;
    pthread_t t;
    if (pthread_create(&t, NULL, link_main, NULL) == 0) pthread_detach(t);
}
