/* tls.h - TLS on client connections (OpenSSL), for the tls-port listeners.
 *
 * One server context (SSL_CTX) built from the tls-* directives at startup
 * and again by CONFIG SET of any of them (a failed rebuild keeps the old
 * context). A connection accepted on a TLS listener gets its own SSL object
 * and goes through the same path as a plain one: conn.c reads with
 * tls_read instead of read(2) and writes with tls_write instead of
 * write(2); the handshake runs inside tls_read, step by step as bytes
 * arrive, so it never waits on a shard's loop. */
#ifndef SHOAL_TLS_H
#define SHOAL_TLS_H
#include "lib/buf.h"
#include <stddef.h>
#include <sys/types.h>

struct conn;

/* At startup, after the config is read: registers the CONFIG SET hooks and,
 * when tls-port is set, builds the context. -1 with the reason in err. */
int tls_setup(char *err, size_t errlen);
/* CONFIG SET tls-port on a server started without TLS: builds the
 * context now (0 when there is one). -1 with Redis's error text in err. */
int tls_enable(char *err, size_t errlen);
/* Accept path of a TLS listener: the connection's SSL object, and a first
 * handshake step. -1: the connection is to be closed. */
int tls_conn_start(struct conn *c);
/* Reads what can be read (decrypted) into b's free space after b->len,
 * finishing the handshake first; the caller adds the count to b->len, as
 * after read(2) (b may have grown: bytes left decrypted in the session are
 * taken too). >0 bytes, 0 when the peer closed or the session failed, -1
 * with errno EAGAIN when nothing is there yet. */
ssize_t tls_read(struct conn *c, buf *b);
/* Writes up to n bytes; as write(2) (-1 with errno EAGAIN when the socket
 * or the session must wait, EPIPE on a failed session). */
ssize_t tls_write(struct conn *c, const char *p, size_t n);
/* The socket became writable while the handshake or a read wanted to
 * write: 1 when tls_read should run again. */
int tls_wants_write(struct conn *c);
/* Sends close_notify (best effort) and frees the SSL object. */
void tls_conn_close(struct conn *c);
#endif
