/* msg.h - messages between shards. A message is allocated by its sender and
 * freed by whoever handles it last (mimalloc frees across threads).
 *
 *   BATCH      commands of one loop turn for keys on the receiver; the
 *              receiver runs them, writes each reply into the same message
 *              and sends it back as BATCH_DONE.
 *   UNBLOCK    a blocked client of the receiver was served (shard/block.h).
 *   PUBLISH    Pub/Sub messages for the receiver's subscribers (shard/pubsub.h).
 *   CONN_MOVE  a connection the receiver owns from now on (net/conn.h).
 *   SCHED .. CANCELLED  a transaction part moving between its coordinator
 *              and its shard (shard/tx.h): the message is the part's own. */
#ifndef SHOAL_MSG_H
#define SHOAL_MSG_H
#include "lib/buf.h"
#include <stdint.h>

enum {
    SM_BATCH,
    SM_BATCH_DONE,
    SM_UNBLOCK,
    /* to a part's shard */
    SM_SCHED,
    SM_EXEC,
    SM_RELEASE,
    SM_CANCEL,
    SM_STEP, /* run the items added since, keep the locks */
    /* to its coordinator */
    SM_GRANTED, /* or refused: part->failed */
    SM_EXEC_DONE,
    SM_CANCELLED,
    SM_STEP_DONE,
    SM_RECALL, /* to a lease's holder: this shard wants it back (tx.c) */
    SM_PUBLISH, /* Pub/Sub messages for the receiver's subscribers (shard/pubsub.h) */
    SM_CONN_MOVE, /* a connection that is the receiver's from now on (net/conn.h) */
};

struct conn;
struct slot;
struct tx;
struct command;

typedef struct batch_item {
    struct conn *conn;    /* sender side: whose reply this is */
    struct slot *slot;    /* sender side: where the reply goes */
    const struct command *cmd;
    uint32_t argc;
    uint32_t dbid;
    uint8_t resp;
    uint8_t in_exec;      /* one of EXEC's commands (cmd_ctx.in_exec) */
    uint8_t no_stats;     /* a part of a split command: its call is counted once, by the coordinator */
    uint8_t slow;         /* it ran for slow_us, long enough for the slow log: the sender logs it */
    int64_t slow_us;
    uint64_t client;      /* the client's tracking word (shard/tracking.h) */
    uint64_t whole_mask;  /* handed off: run holding these shards whole, on the receiver's leases (tx.h) */
    uint8_t declined;     /* handed off, and the receiver did not hold them: not run yet (tx.c adopts it) */
    size_t args;          /* offset in args buf: argc x (u64 len, bytes) */
    size_t reply, reply_len; /* offset/length in replies buf */
} batch_item;

typedef struct msg {
    struct msg *next;
    uint8_t type;
    uint8_t from;
    /* SM_BATCH */
    batch_item *items;
    uint32_t nitems, cap;
    uint32_t done_items; /* items already run (a batch held halfway) */
    buf args, replies;
    size_t replies_counted; /* of replies.cap, what shard_replies_in_flight counts */
    /* SM_UNBLOCK */
    struct blocked *blk;
    /* SM_CONN_MOVE */
    struct conn *moved;
} msg;

msg *msg_new(int type, int from);
void msg_free(msg *m);
/* Appends a command to a batch; returns the item. */
batch_item *msg_batch_add(msg *m, const struct command *cmd, int argc, const char **argv, const size_t *argl);
/* Argument pointers of an item (argv/argl arrays of item->argc). */
void msg_batch_args(const msg *m, const batch_item *it, const char **argv, size_t *argl);
/* Argument i (< it->argc) of item it alone, and its length. */
const char *msg_batch_arg(const msg *m, const batch_item *it, uint32_t i, size_t *len);
#endif
