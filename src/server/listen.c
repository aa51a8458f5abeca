/* listen.c - see listen.h. */
#include "server/listen.h"
#include "lib/log.h"
#include "net/tls.h"
#include "server/config.h"
#include "shard/shard.h"
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The TCP listeners of one port: one per bind address (16 at most,
 * config.c's limit), and what they were opened for. */
typedef struct lset {
    int fds[16], n;
    char *bind;
    int port;
    int tls; /* tls-port: connections start with a TLS handshake */
} lset;

static lset plain, secure = {.tls = 1};
static int unix_fd = -1;

/* Opens a listener on addr:port into *out (-1 and nothing opened for an
 * optional "-addr" that this host lacks). 0 ok, -1 with err. */
static int open_tcp(const char *addr, int port, int *out, char *err, size_t el) {
    *out = -1;
    int optional = addr[0] == '-';
    if (optional) addr++;
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(strcmp(addr, "*") ? addr : NULL, ps, &hints, &res) != 0) {
        if (optional) return 0;
        snprintf(err, el, "Could not create server TCP listening socket %s:%d: bad address", addr, port);
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (res->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, (int)cfg.tcp_backlog_i) < 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        if (optional && (e == EADDRNOTAVAIL || e == EAFNOSUPPORT)) return 0;
        /* two lines, as Redis logs them: Redis's test suite looks for the second to retry on another port */
        snprintf(err, el, "Warning: Could not create server TCP listening socket %s:%d: %s\nFailed listening on port %d (TCP), aborting.", addr, port,
                 strerror(e), port);
        return -1;
    }
    freeaddrinfo(res);
    *out = fd;
    return 0;
}

/* Opens the listeners of bind_s at port into fds (none when port is 0);
 * 0 ok, -1 with err and nothing left open. */
static int open_tcp_all(const char *bind_s, int port, int *fds, int *n, char *err, size_t el) {
    *n = 0;
    if (port <= 0) return 0;
    char *copy = strdup(bind_s ? bind_s : "127.0.0.1"), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, " ", &save); t && rc == 0; t = strtok_r(NULL, " ", &save)) {
        int fd;
        if (*n >= 16 || open_tcp(t, port, &fd, err, el) < 0)
            rc = -1;
        else if (fd >= 0)
            fds[(*n)++] = fd;
    }
    free(copy);
    if (rc < 0) {
        for (int i = 0; i < *n; i++) close(fds[i]);
        *n = 0;
    }
    return rc;
}

/* Closes the listeners of ls. */
static void close_set(lset *ls) {
    for (int i = 0; i < ls->n; i++) {
        shard_unregister_listener(ls->fds[i]);
        close(ls->fds[i]);
    }
    ls->n = 0;
}

/* Makes fds[0..n), opened for bind_s and port, the listeners of ls. */
static int use_set(lset *ls, const int *fds, int n, const char *bind_s, int port) {
    for (int i = 0; i < n; i++)
        if (shard_register_listener(fds[i], ls->tls) < 0) {
            while (i-- > 0) shard_unregister_listener(fds[i]);
            return -1;
        }
    memcpy(ls->fds, fds, sizeof(int) * (size_t)n);
    ls->n = n;
    char *copy = strdup(bind_s ? bind_s : "");
    free(ls->bind);
    ls->bind = copy;
    ls->port = port;
    return 0;
}

/* As Redis: the old listeners close first (the new set may share an
 * address and port with them); when the new ones cannot all be opened,
 * the old ones open again. */
static int apply_set(lset *ls, int port, char *why, size_t wl, const char *reason) {
    if (ls->bind && ls->port == port && !strcmp(ls->bind, cfg.bind_s ? cfg.bind_s : "")) return 0;
    int fds[16], n;
    char err[256] = "";
    char *old_bind = ls->bind ? strdup(ls->bind) : NULL;
    int old_port = ls->port;
    close_set(ls);
    int rc = open_tcp_all(cfg.bind_s, port, fds, &n, err, sizeof err);
    if (rc == 0 && use_set(ls, fds, n, cfg.bind_s, port) < 0) {
        for (int i = 0; i < n; i++) close(fds[i]);
        rc = -1;
    }
    if (rc < 0) {
        log_msg(LOG_WARNING, "%s", err);
        snprintf(why, wl, "%s", reason);
        char err2[256] = "";
        if (open_tcp_all(old_bind, old_port, fds, &n, err2, sizeof err2) < 0 ||
            use_set(ls, fds, n, old_bind, old_port) < 0)
            log_msg(LOG_WARNING, "Failed to restore the old listeners: %s", err2);
    }
    free(old_bind);
    return rc;
}

int listen_apply_tcp(char *why, size_t wl, const char *reason) {
    if (apply_set(&plain, (int)cfg.port_i, why, wl, reason) < 0) return -1;
    return apply_set(&secure, (int)cfg.tls_port_i, why, wl, reason);
}

int listen_open_all(char *err, size_t el) {
    lset *sets[2] = {&plain, &secure};
    for (int k = 0; k < 2; k++) {
        int fds[16], n, port = (int)(k ? cfg.tls_port_i : cfg.port_i);
        if (open_tcp_all(cfg.bind_s, port, fds, &n, err, el) < 0) return -1;
        if (use_set(sets[k], fds, n, cfg.bind_s, port) < 0) {
            snprintf(err, el, "Too many listeners");
            return -1;
        }
    }
    if (cfg.unixsocket_s && *cfg.unixsocket_s) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(cfg.unixsocket_s) >= sizeof sa.sun_path) {
            snprintf(err, el, "unixsocket path too long");
            return -1;
        }
        strcpy(sa.sun_path, cfg.unixsocket_s);
        unlink(cfg.unixsocket_s);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, (int)cfg.tcp_backlog_i) < 0) {
            snprintf(err, el, "Failed opening Unix socket: %s", strerror(errno));
            return -1;
        }
        if (cfg.unixsocketperm_i) chmod(cfg.unixsocket_s, (mode_t)cfg.unixsocketperm_i);
        unix_fd = fd;
        shard_register_listener(fd, 0); /* never TLS, as in Redis 7.0 */
    }
    if (plain.n == 0 && secure.n == 0 && unix_fd < 0) {
        snprintf(err, el, "Configured to not listen anywhere, exiting.");
        return -1;
    }
    return 0;
}

static int apply_port(char *why, size_t wl) {
    return listen_apply_tcp(why, wl, "Unable to listen on this port. Check server logs.");
}
/* As Redis: TLS is configured first when the server started without it. */
static int apply_tls_port(char *why, size_t wl) {
    if (cfg.tls_port_i && tls_enable(why, wl) < 0) return -1;
    return apply_port(why, wl);
}
static int apply_bind(char *why, size_t wl) {
    return listen_apply_tcp(why, wl, "Failed to bind to specified addresses.");
}

void listen_config_hooks(void) {
    config_on_apply("port", apply_port);
    config_on_apply("tls-port", apply_tls_port);
    config_on_apply("bind", apply_bind);
}

void listen_close_all(void) {
    for (int i = 0; i < plain.n; i++) close(plain.fds[i]);
    for (int i = 0; i < secure.n; i++) close(secure.fds[i]);
    if (unix_fd >= 0) close(unix_fd);
    if (cfg.unixsocket_s && *cfg.unixsocket_s) unlink(cfg.unixsocket_s);
    plain.n = secure.n = 0;
    unix_fd = -1;
}
