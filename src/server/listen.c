/* listen.c - see listen.h. */
#include "server/listen.h"
#include "lib/log.h"
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

static int tcp[16], ntcp; /* 16 bind addresses (config.c's limit) */
static int unix_fd = -1;
static char *tcp_bind; /* what the TCP listeners were opened for */
static int tcp_port;

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
        snprintf(err, el, "Warning: Could not create server TCP listening socket %s:%d: %s", addr, port,
                 strerror(e));
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

/* Closes the TCP listeners. */
static void close_tcp(void) {
    for (int i = 0; i < ntcp; i++) {
        shard_unregister_listener(tcp[i]);
        close(tcp[i]);
    }
    ntcp = 0;
}

/* Makes fds[0..n), opened for bind_s and port, the TCP listeners. */
static int use_tcp(const int *fds, int n, const char *bind_s, int port) {
    for (int i = 0; i < n; i++)
        if (shard_register_listener(fds[i]) < 0) {
            while (i-- > 0) shard_unregister_listener(fds[i]);
            return -1;
        }
    memcpy(tcp, fds, sizeof(int) * (size_t)n);
    ntcp = n;
    char *copy = strdup(bind_s ? bind_s : "");
    free(tcp_bind);
    tcp_bind = copy;
    tcp_port = port;
    return 0;
}

/* As Redis: the old listeners close first (the new set may share an
 * address and port with them); when the new ones cannot all be opened,
 * the old ones open again. */
int listen_apply_tcp(char *why, size_t wl, const char *reason) {
    if (tcp_bind && tcp_port == (int)cfg.port_i && !strcmp(tcp_bind, cfg.bind_s ? cfg.bind_s : "")) return 0;
    int fds[16], n;
    char err[256];
    char *old_bind = tcp_bind ? strdup(tcp_bind) : NULL;
    int old_port = tcp_port;
    close_tcp();
    int rc = open_tcp_all(cfg.bind_s, (int)cfg.port_i, fds, &n, err, sizeof err);
    if (rc == 0 && use_tcp(fds, n, cfg.bind_s, (int)cfg.port_i) < 0) {
        for (int i = 0; i < n; i++) close(fds[i]);
        rc = -1;
    }
    if (rc < 0) {
        log_msg(LOG_WARNING, "%s", err);
        snprintf(why, wl, "%s", reason);
        char err2[256];
        if (open_tcp_all(old_bind, old_port, fds, &n, err2, sizeof err2) < 0 || use_tcp(fds, n, old_bind, old_port) < 0)
            log_msg(LOG_WARNING, "Failed to restore the old listeners: %s", err2);
    }
    free(old_bind);
    return rc;
}

int listen_open_all(char *err, size_t el) {
    int fds[16], n;
    if (open_tcp_all(cfg.bind_s, (int)cfg.port_i, fds, &n, err, el) < 0) return -1;
    if (use_tcp(fds, n, cfg.bind_s, (int)cfg.port_i) < 0) {
        snprintf(err, el, "Too many listeners");
        return -1;
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
        shard_register_listener(fd);
    }
    if (ntcp == 0 && unix_fd < 0) {
        snprintf(err, el, "Configured to not listen anywhere, exiting.");
        return -1;
    }
    return 0;
}

static int apply_port(char *why, size_t wl) {
    return listen_apply_tcp(why, wl, "Unable to listen on this port. Check server logs.");
}
static int apply_bind(char *why, size_t wl) {
    return listen_apply_tcp(why, wl, "Failed to bind to specified addresses.");
}

void listen_config_hooks(void) {
    config_on_apply("port", apply_port);
    config_on_apply("bind", apply_bind);
}

void listen_close_all(void) {
    for (int i = 0; i < ntcp; i++) close(tcp[i]);
    if (unix_fd >= 0) close(unix_fd);
    if (cfg.unixsocket_s && *cfg.unixsocket_s) unlink(cfg.unixsocket_s);
    ntcp = 0;
    unix_fd = -1;
}
