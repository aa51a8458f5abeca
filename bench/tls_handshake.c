/* tls_handshake.c - full TLS handshakes per second against a server's
 * tls-port: each of T threads connects, completes a handshake (no session
 * reuse), sends PING, reads +PONG and closes, until N connections in all
 * are done or S seconds passed. Prints "<done> <seconds> <per second>
 * <failures>". Built and run by bench/tls.
 *
 *   tls_handshake HOST PORT CA CERT KEY N THREADS SECONDS */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static SSL_CTX *ctx;
static struct sockaddr_in addr;
static long total, limit_ms;
static long done, failed; /* atomic */
static double t0;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int one(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int ok = -1;
    SSL *s = NULL;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
        s = SSL_new(ctx);
        SSL_set_fd(s, fd);
        char buf[16];
        if (SSL_connect(s) == 1 && SSL_write(s, "PING\r\n", 6) == 6 && SSL_read(s, buf, sizeof buf) == 7 &&
            !memcmp(buf, "+PONG\r\n", 7))
            ok = 0;
    }
    if (s) SSL_free(s);
    close(fd);
    return ok;
}

static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        long k = __atomic_add_fetch(&done, 1, __ATOMIC_RELAXED);
        if (k > total || (now() - t0) * 1000 > (double)limit_ms) {
            __atomic_sub_fetch(&done, 1, __ATOMIC_RELAXED);
            return NULL;
        }
        if (one() < 0) __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
    }
}

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: %s HOST PORT CA CERT KEY N THREADS SECONDS\n", argv[0]);
        return 2;
    }
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)atoi(argv[2]));
    inet_pton(AF_INET, argv[1], &addr.sin_addr);
    total = atol(argv[6]);
    int nthreads = atoi(argv[7]);
    limit_ms = atol(argv[8]) * 1000;
    ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF); /* every handshake a full one */
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (SSL_CTX_load_verify_locations(ctx, argv[3], NULL) != 1 || SSL_CTX_use_certificate_chain_file(ctx, argv[4]) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, argv[5], SSL_FILETYPE_PEM) != 1) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    pthread_t th[64];
    if (nthreads < 1) nthreads = 1;
    if (nthreads > 64) nthreads = 64;
    t0 = now();
    for (int i = 0; i < nthreads; i++) pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    double secs = now() - t0;
    long ok = done - failed;
    printf("%ld %.3f %.1f %ld\n", ok, secs, (double)ok / secs, failed);
    return failed > done / 100 ? 1 : 0;
}
