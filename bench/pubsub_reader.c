/* pubsub_reader.c - the subscribers of bench/pubsub: opens N connections to
 * 127.0.0.1:PORT, each SUBSCRIBEd to CHANNEL, waits for every confirmation,
 * prints "ready", then reads and discards whatever comes until it has EXPECT
 * bytes of messages (0: until a line arrives on stdin) and prints
 * "<bytes> <monotonic time of the last byte>".
 *
 * It replaces a Python reader that took about half of the client CPU at
 * 450k messages a second, so the publisher's rate measured the reader more
 * than the server. Built and run by bench/pubsub.
 *
 *   pubsub_reader PORT N EXPECT CHANNEL */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char rbuf[1 << 20];

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* Reads exactly n bytes (the subscription's confirmation). */
static void read_exact(int fd, size_t n) {
    while (n > 0) {
        ssize_t r = read(fd, rbuf, n < sizeof rbuf ? n : sizeof rbuf);
        if (r <= 0) die("confirmation");
        n -= (size_t)r;
    }
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: pubsub_reader PORT N EXPECT CHANNEL\n");
        return 2;
    }
    int port = atoi(argv[1]), n = atoi(argv[2]);
    long long expect = atoll(argv[3]);
    const char *ch = argv[4];
    size_t cl = strlen(ch);
    char cmd[256], confirm[256];
    int cmdlen = snprintf(cmd, sizeof cmd, "*2\r\n$9\r\nSUBSCRIBE\r\n$%zu\r\n%s\r\n", cl, ch);
    int conflen = snprintf(confirm, sizeof confirm, "*3\r\n$9\r\nsubscribe\r\n$%zu\r\n%s\r\n:1\r\n", cl, ch);
    if (cmdlen >= (int)sizeof cmd || conflen >= (int)sizeof confirm) return 2;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    int *fds = calloc((size_t)n, sizeof *fds);
    for (int i = 0; i < n; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
        if (write(fds[i], cmd, (size_t)cmdlen) != cmdlen) die("subscribe");
    }
    for (int i = 0; i < n; i++) {
        read_exact(fds[i], (size_t)conflen);
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) die("epoll_ctl");
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = 0};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev) < 0) die("epoll_ctl stdin");
    printf("ready\n");
    fflush(stdout);
    long long total = 0;
    double last = 0;
    struct epoll_event evs[256];
    for (;;) {
        int k = epoll_wait(ep, evs, 256, 1000);
        if (k < 0 && errno != EINTR) die("epoll_wait");
        for (int i = 0; i < k; i++) {
            int fd = evs[i].data.fd;
            if (fd == 0) {
                printf("%lld %.6f\n", total, last);
                return 0;
            }
            ssize_t r = read(fd, rbuf, sizeof rbuf);
            if (r == 0) return 1; /* the server closed a subscriber */
            if (r < 0) {
                if (errno == EAGAIN || errno == EINTR) continue;
                die("read");
            }
            total += r;
            last = now();
        }
        if (expect && total >= expect) {
            printf("%lld %.6f\n", total, last);
            return 0;
        }
    }
}
