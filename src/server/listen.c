/* listen.c - see listen.h. */
#include "server/listen.h"
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

static int fds[17], nfds; /* 16 bind addresses (config.c's limit) and a unix socket */

static int open_tcp(const char *addr, int port, char *err, size_t el) {
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
    fds[nfds++] = fd;
    shard_register_listener(fd);
    return 0;
}

int listen_open_all(char *err, size_t el) {
    if (cfg.port_i > 0) {
        char *copy = strdup(cfg.bind_s ? cfg.bind_s : "127.0.0.1"), *save = NULL;
        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            if (nfds >= 16 || open_tcp(t, (int)cfg.port_i, err, el) < 0) {
                free(copy);
                return -1;
            }
        }
        free(copy);
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
        fds[nfds++] = fd;
        shard_register_listener(fd);
    }
    if (nfds == 0) {
        snprintf(err, el, "Configured to not listen anywhere, exiting.");
        return -1;
    }
    return 0;
}

void listen_close_all(void) {
    for (int i = 0; i < nfds; i++) close(fds[i]);
    if (cfg.unixsocket_s && *cfg.unixsocket_s) unlink(cfg.unixsocket_s);
    nfds = 0;
}
