/* pubsub.h - Pub/Sub's subscription registry and message delivery across
 * shards.
 *
 * A subscriber belongs to its connection's shard. Each shard keeps a local
 * table (owned by its thread, no lock) from channel, pattern or shard
 * channel to the connections of that shard subscribed to it. Beside them
 * one global table, under a read/write lock, holds per name the number of
 * subscribers on each shard:
 *
 *   shard A local: "news" -> [conn 7, conn 9]     global: "news" -> A:2 B:0 C:1
 *   shard C local: "news" -> [conn 4]                     "n*"   -> A:0 B:0 C:1 (pattern)
 *
 * PUBLISH on shard B delivers to B's own subscribers at once, reads the
 * global counts (and matches the global patterns) to learn which other
 * shards have receivers and how many, and appends one record to the
 * message it sends each of those shards this loop turn (SM_PUBLISH, sent
 * by shard_flush, one per destination per turn). The receiver delivers to
 * its local subscribers. Shards with no subscriber get nothing, and one
 * publisher's messages reach a shard in one ring, so in publish order.
 * The reply counts subscribers (clients, one per pattern) on every shard
 * from the global counts, as Redis counts them.
 *
 * A message is encoded once per protocol version (and per pattern) for all
 * the subscribers of one shard. Delivery bypasses CLIENT REPLY OFF, as
 * Redis's push replies do, and closes a subscriber over the pubsub class
 * of client-output-buffer-limit.
 *
 * Session functions run on the session's shard thread; pubsub_publish on
 * any shard thread (or the embedded engine's caller); introspection
 * (counts, channel lists) on any thread. */
#ifndef SHOAL_PUBSUB_H
#define SHOAL_PUBSUB_H
#include "lib/buf.h"
#include <stddef.h>
#include <stdint.h>

struct session;
struct shard;
struct msg;

/* PS_MONITOR: MONITOR clients, under the one name ""; a "message" to them
 * is a ready RESP line, delivered as it is. It is not a subscription for
 * Pub/Sub's mode, counts and output limits. */
enum { PS_CHANNEL = 0, PS_PATTERN = 1, PS_SHARD = 2, PS_MONITOR = 3, PS_KINDS = 4 };

/* Adds a subscription of session s; 1 when new, 0 when it had it. */
int pubsub_subscribe(struct session *s, int kind, const char *name, size_t len);
/* Removes one; 1 when it had it. */
int pubsub_unsubscribe(struct session *s, int kind, const char *name, size_t len);
/* The session's subscriptions of one kind. */
size_t pubsub_count(const struct session *s, int kind);
/* Channels + patterns + shard channels (0: not in Pub/Sub mode; PS_MONITOR
 * does not count). */
size_t pubsub_total(const struct session *s);
/* The session's names of one kind (a copy: the caller may unsubscribe
 * while walking it). Returns the count; *names and each name are zmalloc'd,
 * free them with pubsub_names_free. Patterns come in subscription order. */
size_t pubsub_names(const struct session *s, int kind, char ***names, size_t **lens);
void pubsub_names_free(char **names, size_t *lens, size_t n);
/* Leaves every subscription (connection closed); no replies. */
void pubsub_session_free(struct session *s);

/* Publishes msg on channel (PS_CHANNEL: also to matching patterns; or
 * PS_SHARD) from shard sh. Returns the number of receivers over every
 * shard. */
long long pubsub_publish(struct shard *sh, int kind, const char *ch, size_t cl, const char *msg, size_t ml);
/* Whether anybody is subscribed to anything (a relaxed read, for callers
 * that can skip building a message). */
int pubsub_any(void);
/* Subscriptions of one kind over every session (a relaxed read). */
long long pubsub_kind_total(int kind);
/* Appends a record (kind, then two byte strings) to this turn's message
 * from shard sh to shard `to` (other kinds than PS_*: tracking.h's). */
void pubsub_record(struct shard *sh, int to, int kind, const char *a, size_t al, const char *b, size_t bl);
/* An SM_PUBLISH message arrived at shard sh. */
void pubsub_on_message(struct shard *sh, struct msg *m);
/* shard_flush: queues this turn's SM_PUBLISH messages of shard sh. */
void pubsub_flush(struct shard *sh);

/* Introspection, any thread. */
/* Appends the active names of kind (PS_CHANNEL or PS_SHARD) matching pat
 * (NULL: all) to out as RESP bulk strings; returns how many. */
long long pubsub_list(int kind, const char *pat, size_t pl, buf *out);
/* Subscribers of one channel or shard channel (patterns not counted). */
long long pubsub_numsub(int kind, const char *name, size_t len);
/* Distinct names of kind with at least one subscriber. */
long long pubsub_active(int kind);
#endif
