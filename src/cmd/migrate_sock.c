/* migrate_sock.c - see migrate.h. The connections MIGRATE keeps to target
 * servers, and the synchronous exchange over them, as Redis 7.0's
 * migrateCommand does it:
 *
 *   write  [AUTH [user] pass] [SELECT db] RESTORE k ttl payload [REPLACE]...
 *   read   [AUTH reply] [SELECT reply] one reply per RESTORE
 *
 * Every wait is a poll() on the non-blocking socket with a deadline: a
 * connect, each 64 KB written and each reply line get the timeout, so a
 * target that stops answering costs the calling shard at most that long
 * per step. **Departure:** Redis takes any reply line that does not start
 * with '-' for success; here a line that is neither '+...' nor '-...' (or
 * longer than 1 KB, or empty) is a protocol error: the socket is closed and
 * the reply is the reading IOERR, so a target that is not a Redis server
 * never makes MIGRATE delete keys.
 *
 * Each shard has its own cache (at most 64 connections, as Redis's
 * MIGRATE_SOCKET_CACHE_ITEMS), touched only by that shard's thread: by the
 * command, and by the cron that closes connections unused for 10 s
 * (MIGRATE_SOCKET_CACHE_TTL). The caches are globals (not thread-locals),
 * so what they hold at exit is still reachable. */
#include "cmd/migrate.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "proto/resp.h"
#include "shard/shard.h"
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CACHE_ITEMS 64
#define CACHE_TTL_MS 10000
#define LINE_MAX_LEN 1024 /* Redis reads replies into 1024-byte buffers */
#define CHUNK (64 * 1024)

int migrate_net_enabled;
static int cached_total; /* atomic: connections in every cache */

typedef struct msock {
    int fd;
    int connect_timed_out; /* the connect did not finish in time */
    long long last_dbid;   /* the database it selected, when db_known */
    int db_known;          /* 0: SELECT next time (Redis's last_dbid -1, which a db of -1 would match) */
    int64_t last_use_ms;
    char *name; /* "host:port", NUL-terminated */
    size_t namel;
    char in[LINE_MAX_LEN]; /* bytes read past the last reply line */
    size_t inpos, inlen;
} msock;

typedef struct mcache {
    msock *s[CACHE_ITEMS];
    int n;
} mcache;

static mcache caches[MAX_SHARDS + 1]; /* the last: a thread that is no shard */

/* Outcome of one step of the exchange. */
enum { IO_OK = 0, IO_ERR = -1 /* socket error: may retry */, IO_TIMEOUT = -2, IO_GARBAGE = -3 };

static mcache *cache_of(int i) { return &caches[i >= 0 && i < MAX_SHARDS ? i : MAX_SHARDS]; }

static void sock_drop(mcache *c, msock *s) {
    for (int i = 0; i < c->n; i++)
        if (c->s[i] == s) {
            c->s[i] = c->s[--c->n];
            break;
        }
    close(s->fd);
    zfree(s->name);
    zfree(s);
    __atomic_sub_fetch(&cached_total, 1, __ATOMIC_RELAXED);
}

/* Waits until fd is ready for ev: 1, or 0 at the deadline (mono µs). */
static int wait_fd(int fd, short ev, int64_t deadline) {
    for (;;) {
        int64_t left = deadline - mono_us();
        if (left <= 0) return 0;
        struct pollfd p = {.fd = fd, .events = ev};
        int ms = left / 1000 + 1 > 1000000 ? 1000000 : (int)(left / 1000 + 1);
        int r = poll(&p, 1, ms);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return 1; /* let the I/O call report it */
    }
}

static int64_t deadline_of(long long timeout_ms) { return mono_us() + timeout_ms * 1000; }

/* A non-blocking socket connecting to host:port, or -1 when no address
 * could even be tried (Redis's "connecting" error). As Redis, the port is
 * atoi() of the argument and the host is resolved by getaddrinfo. */
static int sock_connect(const mig_opts *o) {
    char portstr[32], num[24];
    size_t pl = o->portl < sizeof num - 1 ? o->portl : sizeof num - 1;
    memcpy(num, o->port, pl);
    num[pl] = 0;
    snprintf(portstr, sizeof portstr, "%d", (int)strtol(num, NULL, 10));
    char *host = zmalloc(o->hostl + 1);
    memcpy(host, o->host, o->hostl);
    host[o->hostl] = 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int fd = -1;
    if (getaddrinfo(host, portstr, &hints, &res) == 0) {
        for (struct addrinfo *p = res; p; p = p->ai_next) {
            fd = socket(p->ai_family, p->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, p->ai_protocol);
            if (fd < 0) continue;
            if (connect(fd, p->ai_addr, p->ai_addrlen) == 0 || errno == EINPROGRESS) break;
            close(fd);
            fd = -1;
        }
        freeaddrinfo(res);
    }
    zfree(host);
    return fd;
}

/* The cached connection to host:port, or a new one (NULL: cannot connect). */
static msock *sock_get(mcache *c, const mig_opts *o) {
    size_t nl = o->hostl + 1 + o->portl;
    for (int i = 0; i < c->n; i++) {
        msock *s = c->s[i];
        if (s->namel == nl && !memcmp(s->name, o->host, o->hostl) && s->name[o->hostl] == ':' &&
            !memcmp(s->name + o->hostl + 1, o->port, o->portl)) {
            s->last_use_ms = mstime();
            return s;
        }
    }
    if (!__atomic_load_n(&migrate_net_enabled, __ATOMIC_RELAXED)) return NULL;
    int fd = sock_connect(o);
    if (fd < 0) return NULL;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (c->n == CACHE_ITEMS) { /* full: the least recently used goes */
        msock *old = c->s[0];
        for (int i = 1; i < c->n; i++)
            if (c->s[i]->last_use_ms < old->last_use_ms) old = c->s[i];
        sock_drop(c, old);
    }
    msock *s = zcalloc(sizeof *s);
    s->fd = fd;
    s->last_use_ms = mstime();
    s->name = zmalloc(nl + 1);
    memcpy(s->name, o->host, o->hostl);
    s->name[o->hostl] = ':';
    memcpy(s->name + o->hostl + 1, o->port, o->portl);
    s->name[nl] = 0;
    s->namel = nl;
    /* as Redis's blocking connect: wait for it, then let the first write
     * tell a refusal (a timeout here is the write's timeout) */
    s->connect_timed_out = !wait_fd(fd, POLLOUT, deadline_of(o->timeout_ms));
    c->s[c->n++] = s;
    __atomic_add_fetch(&cached_total, 1, __ATOMIC_RELAXED);
    return s;
}

/* Writes p[0..n) in chunks of 64 KB, each within the timeout. */
static int sock_write(msock *s, const char *p, size_t n, long long timeout_ms) {
    if (s->connect_timed_out) return IO_TIMEOUT;
    size_t done = 0;
    while (done < n) {
        size_t chunk = n - done > CHUNK ? CHUNK : n - done, sent = 0;
        int64_t deadline = deadline_of(timeout_ms);
        while (sent < chunk) {
            ssize_t w = send(s->fd, p + done + sent, chunk - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w > 0) {
                sent += (size_t)w;
                continue;
            }
            if (w < 0 && errno == EINTR) continue;
            if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return IO_ERR;
            if (!wait_fd(s->fd, POLLOUT, deadline)) return IO_TIMEOUT;
        }
        done += chunk;
    }
    return IO_OK;
}

/* Reads one reply line (without CRLF) into line[LINE_MAX_LEN], within the
 * timeout. A line that is not a status or an error is IO_GARBAGE. */
static int sock_read_line(msock *s, char *line, long long timeout_ms) {
    int64_t deadline = deadline_of(timeout_ms);
    for (;;) {
        char *nl = memchr(s->in + s->inpos, '\n', s->inlen - s->inpos);
        if (nl) {
            size_t len = (size_t)(nl - (s->in + s->inpos));
            memcpy(line, s->in + s->inpos, len);
            s->inpos += len + 1;
            if (len && line[len - 1] == '\r') len--;
            line[len] = 0;
            if (!len || (line[0] != '+' && line[0] != '-') || memchr(line, 0, len)) return IO_GARBAGE;
            return IO_OK;
        }
        if (s->inpos) { /* keep the partial line at the front */
            memmove(s->in, s->in + s->inpos, s->inlen - s->inpos);
            s->inlen -= s->inpos;
            s->inpos = 0;
        }
        if (s->inlen >= sizeof s->in - 1) return IO_GARBAGE; /* a line longer than any reply */
        ssize_t r = recv(s->fd, s->in + s->inlen, sizeof s->in - 1 - s->inlen, MSG_DONTWAIT);
        if (r > 0) {
            s->inlen += (size_t)r;
            continue;
        }
        if (r == 0) return IO_ERR; /* closed */
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return IO_ERR;
        if (!wait_fd(s->fd, POLLIN, deadline)) return IO_TIMEOUT;
    }
}

/* The pipeline of one attempt; idx gets the keys it holds, in order. */
static void build(buf *cmd, const mig_opts *o, int select, mig_key *keys, int n, int *idx, int *m) {
    if (o->pass) {
        resp_array(cmd, o->user ? 3 : 2);
        resp_bulk(cmd, "AUTH", 4);
        if (o->user) resp_bulk(cmd, o->user, o->userl);
        resp_bulk(cmd, o->pass, o->passl);
    }
    if (select) {
        resp_array(cmd, 2);
        resp_bulk(cmd, "SELECT", 6);
        resp_bulk_ll(cmd, o->dbid);
    }
    int64_t now = mstime();
    *m = 0;
    for (int j = 0; j < n; j++) {
        long long ttl = 0;
        if (keys[j].expire != -1) {
            ttl = keys[j].expire - now;
            if (ttl < 0) continue; /* expired since it was read */
            if (ttl < 1) ttl = 1;
        }
        idx[(*m)++] = j;
        resp_array(cmd, o->replace ? 5 : 4);
        resp_bulk(cmd, "RESTORE", 7);
        resp_bulk(cmd, keys[j].key, keys[j].klen);
        resp_bulk_ll(cmd, ttl);
        resp_bulk(cmd, keys[j].payload, keys[j].plen);
        if (o->replace) resp_bulk(cmd, "REPLACE", 7);
    }
}

const char *migrate_exchange(int cache, const mig_opts *o, mig_key *keys, int n, char *err, size_t errlen) {
    mcache *c = cache_of(cache);
    int may_retry = 1;
    int *idx = zmalloc(sizeof(int) * (size_t)(n ? n : 1));
    char *l0 = zmalloc(LINE_MAX_LEN), *l1 = zmalloc(LINE_MAX_LEN), *l2 = zmalloc(LINE_MAX_LEN);
    const char *result = err;
    for (;;) {
        msock *s = sock_get(c, o);
        if (!s) {
            snprintf(err, errlen, "IOERR error or timeout connecting to the client");
            break;
        }
        buf cmd = {0};
        int select = !s->db_known || s->last_dbid != o->dbid, m;
        build(&cmd, o, select, keys, n, idx, &m);
        int rc = sock_write(s, cmd.p, cmd.len, o->timeout_ms);
        buf_free(&cmd);
        int writing = rc != IO_OK;
        if (rc == IO_OK && o->pass) rc = sock_read_line(s, l0, o->timeout_ms);
        if (rc == IO_OK && select) rc = sock_read_line(s, l1, o->timeout_ms);
        int from_target = 0, j = 0;
        for (; rc == IO_OK && j < m; j++) {
            rc = sock_read_line(s, l2, o->timeout_ms);
            if (rc != IO_OK) break;
            const char *e = o->pass && l0[0] == '-' ? l0 : select && l1[0] == '-' ? l1 : l2[0] == '-' ? l2 : NULL;
            if (!e) {
                keys[idx[j]].done = 1;
            } else if (!from_target) { /* the first error is the reply; SELECT again next time */
                from_target = 1;
                s->db_known = 0;
                snprintf(err, errlen, "ERR Target instance replied with error: %s", e + 1);
            }
        }
        if (rc == IO_OK) {
            if (!from_target) {
                s->last_dbid = o->dbid;
                s->db_known = 1;
                result = NULL;
            }
            break;
        }
        sock_drop(c, s); /* a socket error: this connection is done */
        if (from_target) break; /* the target's error is the reply */
        /* retry only when nothing was read yet and it was no timeout */
        if (j == 0 && may_retry && rc == IO_ERR) {
            may_retry = 0;
            continue;
        }
        snprintf(err, errlen, "IOERR error or timeout %s to target instance", writing ? "writing" : "reading");
        break;
    }
    zfree(idx);
    zfree(l0);
    zfree(l1);
    zfree(l2);
    return result;
}

int migrate_cached_sockets(void) { return __atomic_load_n(&cached_total, __ATOMIC_RELAXED); }

void migrate_cron(shard *sh) {
    mcache *c = cache_of(sh->id);
    int64_t now = mstime();
    for (int i = c->n - 1; i >= 0; i--)
        if (now - c->s[i]->last_use_ms > CACHE_TTL_MS) sock_drop(c, c->s[i]);
}
