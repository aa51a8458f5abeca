/* tracking.h - client-side caching (CLIENT TRACKING): which clients may
 * hold which keys, and the invalidation messages when those keys change.
 *
 * The keys a tracking client reads are remembered by the shard that owns
 * them, in that shard's table (key -> the readers, each a client id and
 * its home shard), in the same step as the read, so no write can slip
 * between the read and the remembering. A change to the key (any write
 * command naming it, expiry, eviction) takes the entry out of the table
 * and sends each reader's home an invalidation record; the home knows the
 * reader's state (NOLOOP, redirection, protocol) and writes the push
 * message, or hands it to the redirection target's home. BCAST prefixes
 * live in one global table; changed keys are gathered per prefix over a
 * loop turn and sent as one message per prefix and client. FLUSHDB and
 * FLUSHALL empty every table and send every tracking client the null
 * invalidation.
 *
 * Messages for the connection that caused them are written at the end of
 * the loop turn, after its reply (as Redis defers them past the command).
 * Records travel in the Pub/Sub message of the turn (shard/pubsub.h).
 *
 * The client word passed with a command (cmd_ctx.client, batch_item.client)
 * is tracking_word(): the client id, its home shard, and whether the keys
 * of this command, if it reads, are to be remembered (for a script,
 * CMD_HOME: whether its declared keys are, once it calls a read). */
#ifndef SHOAL_TRACKING_H
#define SHOAL_TRACKING_H
#include "lib/buf.h"
#include <stddef.h>
#include <stdint.h>

struct session;
struct shard;
struct command;

/* Record kinds of the Pub/Sub message (after pubsub.h's PS_* kinds). */
enum { TRK_TARGET = 16, TRK_REDIR = 17, TRK_FLUSH = 18 };

/* Options of CLIENT TRACKING ON. */
enum { TRK_BCAST = 1, TRK_OPTIN = 2, TRK_OPTOUT = 4, TRK_NOLOOP = 8 };

/* The word for session s running cmd (see above); 0 without a session. */
uint64_t tracking_word(struct session *s, const struct command *cmd);
/* After cmd of session s was dispatched: CLIENT CACHING's one-shot flag
 * goes (unless cmd is a CLIENT subcommand or s is inside MULTI). */
void tracking_after_command(struct session *s, const struct command *cmd);
/* Whether any key is remembered or any BCAST prefix exists (relaxed). */
int tracking_active(void);

/* A reading command of client word w ran: remember key (owned by shard
 * owner, which the caller may touch). */
void tracking_remember(struct shard *owner, uint64_t w, const char *key, size_t klen);
/* key (owned by shard owner) changed, by the client of word w (0: none,
 * expiry or eviction). Called on the thread that may touch owner. */
void tracking_key_changed(struct shard *owner, uint64_t w, const char *key, size_t klen);
/* FLUSHDB / FLUSHALL by the client of word w: every table emptied (the
 * caller holds every shard), every tracking client gets the null
 * invalidation. */
void tracking_flush_all(uint64_t w);

/* Connections: registered by id for REDIRECT and delivery. */
void tracking_conn_open(struct session *s);
void tracking_conn_close(struct session *s);
/* The connection of s moved to another shard (net/conn.h): its home now. */
void tracking_conn_moved(struct session *s);
/* The client with this id exists (any thread). */
int tracking_client_exists(uint64_t id);

/* CLIENT TRACKING ON: 0, or -1 with Redis's error text in err. */
int tracking_enable(struct session *s, uint64_t redirect, int options, const char **prefix, const size_t *plen,
                    int nprefix, char *err, size_t errlen);
void tracking_disable(struct session *s);
/* CLIENT CACHING yes|no: 0, or -1 with the error text. */
int tracking_caching(struct session *s, int yes, char *err, size_t errlen);
/* CLIENT GETREDIR, CLIENT TRACKINGINFO, the t/B/R flags of CLIENT LIST. */
long long tracking_getredir(const struct session *s);
void tracking_info(const struct session *s, int resp, buf *out);
int tracking_on(const struct session *s);
/* Bytes of s's tracking state (its BCAST prefixes), for client eviction;
 * any thread (approximate while it changes). */
size_t tracking_mem(const struct session *s);
int tracking_bcast(const struct session *s);
int tracking_broken(const struct session *s);

/* Shard hooks: records that arrived, the end of a turn (local deliveries
 * and BCAST batches), cron (tracking-table-max-keys). */
void tracking_on_record(struct shard *sh, int kind, const char *a, size_t al, const char *b, size_t bl);
void tracking_turn_end(struct shard *sh);
/* The same, ahead of a command of session s whose reply goes to out: its
 * own messages go there, before the reply (keys evicted for the command). */
void tracking_deliver_before(struct shard *sh, struct session *s, buf *out);
void tracking_cron(struct shard *sh);
/* The same over every shard's table, under a lock of every shard (CONFIG
 * SET): a lowered tracking-table-max-keys takes effect before the next
 * command, as Redis applies it before each command. */
void tracking_limit_all(void);

/* INFO: tracking_total_keys, _items, _prefixes, tracking_clients. */
void tracking_stats(long long *keys, long long *items, long long *prefixes, long long *clients);
#endif
