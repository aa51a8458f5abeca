/* tls.c - see tls.h. Redis 7.0's TLS semantics:
 *
 * - tls-auth-clients is read per connection when it is accepted (yes: a
 *   client certificate signed by the CA is required; optional: verified
 *   when sent; no: none asked for), so CONFIG SET of it needs no rebuild;
 * - every other tls-* directive rebuilds the context; the file names are
 *   volatile (CONFIG SET of the same name reads the files again), and a
 *   rebuild that fails keeps the context in use and answers "Unable to
 *   update TLS configuration. Check server logs." with the reason logged;
 * - with tls-port 0 nothing is built and the directives are only stored.
 *
 * Contexts are reference counted by OpenSSL: a connection's SSL object
 * holds its context, so a rebuild only changes what new connections get.
 * The pointer is swapped under a mutex because accepts on other shards
 * run while CONFIG SET holds the shards for commands.
 *
 * OpenSSL allocates through zmalloc, so used_memory counts the sessions. */
#include "net/tls.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "net/conn.h"
#include "server/config.h"
#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

enum {
    TLS_HANDSHAKE = 1 << 0,   /* the handshake has not finished */
    TLS_READ_WANTS_W = 1 << 1, /* the handshake or a read waits for the socket to take bytes */
    TLS_FAILED = 1 << 2,       /* a fatal error: no close_notify */
};

static SSL_CTX *ctx;
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;

static void *tls_malloc(size_t n, const char *file, int line) { return zmalloc(n ? n : 1); }
static void *tls_realloc(void *p, size_t n, const char *file, int line) { return zrealloc(p, n ? n : 1); }
static void tls_free(void *p, const char *file, int line) { zfree(p); }

/* The last OpenSSL error of this thread as text. */
static const char *ssl_error_text(char *b, size_t bl) {
    unsigned long e = ERR_peek_last_error();
    if (!e) return "unknown error";
    ERR_error_string_n(e, b, bl);
    return b;
}

/* The key's passphrase (tls-key-file-pass), only while the context loads
 * it. Without one an encrypted key fails instead of prompting. */
static int key_pass_cb(char *b, int size, int rwflag, void *u) {
    const char *pass = u;
    if (!pass || !*pass) return -1;
    size_t n = strlen(pass);
    if (n > (size_t)size) n = (size_t)size;
    memcpy(b, pass, n);
    return (int)n;
}

static const char *opt_str(const char *s) { return s && *s ? s : NULL; }

/* tls-protocols: "" is TLSv1.2 and TLSv1.3, as in Redis. Returns the
 * SSL_OP_NO_* options for the versions not listed, or -1. */
static long protocol_opts(const char *v) {
    enum { P1 = 1, P11 = 2, P12 = 4, P13 = 8 };
    int set = 0;
    char *copy = strdup(v ? v : ""), *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (!strcasecmp(t, "tlsv1"))
            set |= P1;
        else if (!strcasecmp(t, "tlsv1.1"))
            set |= P11;
        else if (!strcasecmp(t, "tlsv1.2"))
            set |= P12;
        else if (!strcasecmp(t, "tlsv1.3"))
            set |= P13;
        else {
            free(copy);
            return -1;
        }
    }
    free(copy);
    if (!set) set = P12 | P13;
    long o = 0;
    if (!(set & P1)) o |= SSL_OP_NO_TLSv1;
    if (!(set & P11)) o |= SSL_OP_NO_TLSv1_1;
    if (!(set & P12)) o |= SSL_OP_NO_TLSv1_2;
    if (!(set & P13)) o |= SSL_OP_NO_TLSv1_3;
    return o;
}

/* A new server context from the directives, or NULL with the reason
 * (as Redis logs it) in why. */
static SSL_CTX *build_ctx(char *why, size_t wl) {
    char e[256];
    const char *cert = opt_str(cfg.tls_cert_file_s), *key = opt_str(cfg.tls_key_file_s);
    const char *ca_file = opt_str(cfg.tls_ca_cert_file_s), *ca_dir = opt_str(cfg.tls_ca_cert_dir_s);
    const char *dh = opt_str(cfg.tls_dh_params_file_s);
    ERR_clear_error();
    if (!cert) {
        snprintf(why, wl, "No tls-cert-file configured!");
        return NULL;
    }
    if (!key) {
        snprintf(why, wl, "No tls-key-file configured!");
        return NULL;
    }
    if (!ca_file && !ca_dir && cfg_get(tls_auth_clients) != CFG_TLS_AUTH_NO) {
        snprintf(why, wl, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-auth-clients is enabled!");
        return NULL;
    }
    long protos = protocol_opts(cfg.tls_protocols_s);
    if (protos < 0) {
        snprintf(why, wl, "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.");
        return NULL;
    }
    SSL_CTX *x = SSL_CTX_new(TLS_server_method());
    if (!x) {
        snprintf(why, wl, "Failed to create TLS context: %s", ssl_error_text(e, sizeof e));
        return NULL;
    }
    long opts = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | protos;
    if (cfg_get(tls_prefer_server_ciphers)) opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
    SSL_CTX_set_options(x, (uint64_t)opts);
    SSL_CTX_set_mode(x, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_session_id_context(x, (const unsigned char *)"shoal", 5);
    if (cfg_get(tls_session_caching)) {
        SSL_CTX_set_session_cache_mode(x, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(x, (long)cfg_get(tls_session_cache_size));
        SSL_CTX_set_timeout(x, (long)cfg_get(tls_session_cache_timeout));
    } else { /* no resumption at all: tickets off too */
        SSL_CTX_set_session_cache_mode(x, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(x, SSL_OP_NO_TICKET);
    }
    SSL_CTX_set_verify(x, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_default_passwd_cb(x, key_pass_cb);
    SSL_CTX_set_default_passwd_cb_userdata(x, cfg.tls_key_file_pass_s);
    if (SSL_CTX_use_certificate_chain_file(x, cert) <= 0) {
        snprintf(why, wl, "Failed to load certificate: %s: %s", cert, ssl_error_text(e, sizeof e));
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(x, key, SSL_FILETYPE_PEM) <= 0 || SSL_CTX_check_private_key(x) <= 0) {
        snprintf(why, wl, "Failed to load private key: %s: %s", key, ssl_error_text(e, sizeof e));
        goto fail;
    }
    SSL_CTX_set_default_passwd_cb_userdata(x, NULL);
    if ((ca_file || ca_dir) && SSL_CTX_load_verify_locations(x, ca_file, ca_dir) <= 0) {
        snprintf(why, wl, "Failed to configure CA certificate(s) file/directory: %s", ssl_error_text(e, sizeof e));
        goto fail;
    }
    if (dh) {
        BIO *bio = BIO_new_file(dh, "r");
        EVP_PKEY *params = bio ? PEM_read_bio_Parameters(bio, NULL) : NULL;
        if (bio) BIO_free(bio);
        if (!params || SSL_CTX_set0_tmp_dh_pkey(x, params) <= 0) {
            if (params) EVP_PKEY_free(params);
            snprintf(why, wl, "Failed to load %s: %s", dh, ssl_error_text(e, sizeof e));
            goto fail;
        }
    } else {
        SSL_CTX_set_dh_auto(x, 1);
    }
    if (opt_str(cfg.tls_ciphers_s) && !SSL_CTX_set_cipher_list(x, cfg.tls_ciphers_s)) {
        snprintf(why, wl, "Failed to configure ciphers: %s", cfg.tls_ciphers_s);
        goto fail;
    }
    if (opt_str(cfg.tls_ciphersuites_s) && !SSL_CTX_set_ciphersuites(x, cfg.tls_ciphersuites_s)) {
        snprintf(why, wl, "Failed to configure ciphersuites: %s", cfg.tls_ciphersuites_s);
        goto fail;
    }
    return x;
fail:
    SSL_CTX_free(x);
    return NULL;
}

/* Builds the context and puts it in use; -1 (reason logged) keeps the
 * old one. */
static int configure(void) {
    char why[512];
    SSL_CTX *x = build_ctx(why, sizeof why);
    ERR_clear_error();
    if (!x) {
        log_msg(LOG_WARNING, "%s", why);
        return -1;
    }
    pthread_mutex_lock(&ctx_lock);
    SSL_CTX *old = ctx;
    ctx = x;
    pthread_mutex_unlock(&ctx_lock);
    if (old) SSL_CTX_free(old);
    return 0;
}

/* CONFIG SET of a tls-* directive (not tls-auth-clients, read per
 * connection, nor tls-port: tls_enable). */
static int apply_tls(char *err, size_t el) {
    if (cfg.tls_port_i == 0) return 0;
    if (configure() < 0) {
        snprintf(err, el, "Unable to update TLS configuration. Check server logs.");
        return -1;
    }
    return 0;
}

/* OpenSSL's first use (allocations through ours when nothing was
 * allocated before), then the context. */
static int start_openssl(void) {
    static int started;
    if (!started) {
        CRYPTO_set_mem_functions(tls_malloc, tls_realloc, tls_free);
        OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
        started = 1;
    }
    return configure();
}

int tls_setup(char *err, size_t el) {
    static const char *const names[] = {"tls-cert-file",      "tls-key-file",           "tls-key-file-pass",
                                        "tls-dh-params-file", "tls-ca-cert-file",       "tls-ca-cert-dir",
                                        "tls-protocols",      "tls-ciphers",            "tls-ciphersuites",
                                        "tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size",
                                        "tls-session-cache-timeout"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        config_on_apply(names[k], apply_tls);
    if (cfg.tls_port_i == 0) return 0;
    if (start_openssl() < 0) {
        snprintf(err, el, "Failed to configure TLS. Check logs for more info.");
        return -1;
    }
    return 0;
}

int tls_enable(char *err, size_t el) {
    pthread_mutex_lock(&ctx_lock);
    int have = ctx != NULL;
    pthread_mutex_unlock(&ctx_lock);
    if (have) return 0;
    if (start_openssl() < 0) {
        snprintf(err, el, "Unable to update TLS configuration. Check server logs.");
        return -1;
    }
    return 0;
}

int tls_conn_start(conn *c) {
    pthread_mutex_lock(&ctx_lock);
    SSL *s = ctx ? SSL_new(ctx) : NULL;
    pthread_mutex_unlock(&ctx_lock);
    if (!s) return -1;
    int64_t auth = cfg_get(tls_auth_clients);
    if (auth == CFG_TLS_AUTH_NO)
        SSL_set_verify(s, SSL_VERIFY_NONE, NULL);
    else if (auth == CFG_TLS_AUTH_OPTIONAL)
        SSL_set_verify(s, SSL_VERIFY_PEER, NULL);
    SSL_set_fd(s, c->fd);
    SSL_set_accept_state(s);
    c->ssl = s;
    c->tls_flags = TLS_HANDSHAKE;
    /* The client hello is often there already: one step now saves a turn. */
    buf none = {0};
    ssize_t n = tls_read(c, &none);
    buf_free(&none);
    return n == 0 ? -1 : 0;
}

/* Why the session failed, for the log. */
static const char *fail_text(int err, char *b, size_t bl) {
    if (err == SSL_ERROR_SYSCALL && !ERR_peek_last_error()) return errno ? strerror(errno) : "Connection closed by peer";
    if (err == SSL_ERROR_ZERO_RETURN) return "Connection closed by peer";
    return ssl_error_text(b, bl);
}

/* One handshake step: 1 done, 0 not yet (errno EAGAIN), -1 failed. */
static int handshake(conn *c) {
    ERR_clear_error();
    int r = SSL_do_handshake(c->ssl);
    if (r == 1) {
        c->tls_flags &= ~(TLS_HANDSHAKE | TLS_READ_WANTS_W);
        c->tls_want_out = 0;
        return 1;
    }
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        int w = e == SSL_ERROR_WANT_WRITE;
        c->tls_flags = w ? c->tls_flags | TLS_READ_WANTS_W : c->tls_flags & ~TLS_READ_WANTS_W;
        c->tls_want_out = w;
        if (w) conn_set_epout(c, 1);
        errno = EAGAIN;
        return 0;
    }
    char b[256];
    c->tls_flags |= TLS_FAILED;
    log_msg(LOG_VERBOSE, "Error accepting a client connection: %s (addr=%s laddr=%s)", fail_text(e, b, sizeof b),
            c->addr, c->laddr);
    ERR_clear_error();
    return -1;
}

ssize_t tls_read(conn *c, buf *b) {
    if (c->tls_flags & TLS_HANDSHAKE) {
        int h = handshake(c);
        if (h <= 0) return h < 0 ? 0 : -1;
    }
    if (!b->cap) return -1; /* the accept path: handshake only */
    ssize_t got = 0;
    for (;;) {
        size_t room = b->cap - b->len - (size_t)got;
        if (room > INT32_MAX) room = INT32_MAX;
        ERR_clear_error();
        int r = SSL_read(c->ssl, b->p + b->len + got, (int)room);
        if (r > 0) {
            got += r;
            /* Decrypted bytes left inside the session get no epoll event:
             * take them now (at most the rest of one record). */
            int more = SSL_pending(c->ssl);
            if (more <= 0) break;
            buf_reserve(b, (size_t)got + (size_t)more);
            continue;
        }
        int e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            int w = e == SSL_ERROR_WANT_WRITE;
            c->tls_flags = w ? c->tls_flags | TLS_READ_WANTS_W : c->tls_flags & ~TLS_READ_WANTS_W;
            c->tls_want_out = w;
            if (w) conn_set_epout(c, 1);
            if (got) break;
            errno = EAGAIN;
            return -1;
        }
        if (got) break; /* the failure shows again on the next read */
        c->tls_flags |= TLS_FAILED;
        /* A peer that closes without close_notify (most clients) is a
         * plain close, not worth a line. */
        if (e != SSL_ERROR_ZERO_RETURN && ERR_GET_REASON(ERR_peek_last_error()) != SSL_R_UNEXPECTED_EOF_WHILE_READING) {
            char eb[256];
            log_msg(LOG_VERBOSE, "TLS read error on client id=%llu addr=%s: %s", (unsigned long long)c->s.id, c->addr,
                    fail_text(e, eb, sizeof eb));
        }
        ERR_clear_error();
        return 0;
    }
    return got;
}

ssize_t tls_write(conn *c, const char *p, size_t n) {
    if (c->tls_flags & TLS_HANDSHAKE) {
        errno = EAGAIN;
        return -1;
    }
    if (n > INT32_MAX) n = INT32_MAX;
    ERR_clear_error();
    int r = SSL_write(c->ssl, p, (int)n);
    if (r > 0) return r;
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
        errno = EAGAIN;
        return -1;
    }
    char eb[256];
    c->tls_flags |= TLS_FAILED;
    log_msg(LOG_VERBOSE, "TLS write error on client id=%llu addr=%s: %s", (unsigned long long)c->s.id, c->addr,
            fail_text(e, eb, sizeof eb));
    ERR_clear_error();
    errno = EPIPE;
    return -1;
}

int tls_wants_write(conn *c) { return (c->tls_flags & TLS_READ_WANTS_W) != 0; }

void tls_conn_close(conn *c) {
    if (!c->ssl) return;
    if (!(c->tls_flags & (TLS_HANDSHAKE | TLS_FAILED))) {
        ERR_clear_error();
        SSL_shutdown(c->ssl); /* close_notify, if the socket takes it */
    }
    ERR_clear_error();
    SSL_free(c->ssl);
    c->ssl = NULL;
}
