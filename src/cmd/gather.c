/* gather.c - a command over keys of several shards (SMOVE, LMOVE,
 * SINTERSTORE, ZUNIONSTORE, BITOP, COPY, SINTER, LCS ...) as a transaction
 * of hops under key locks, with its unchanged handler:
 *
 *   hop 1 (at the grant)  every part: a deep copy of each of its keys'
 *                         entries (or none), by address
 *   coordinator           puts the copies in a scratch database and runs
 *                         the handler there (ctx_db finds the scratch)
 *   hop 2 (writes only)   every part: each written key's entry from the
 *                         scratch goes in (replacing the old one), or the
 *                         key goes, when the scratch has none
 *
 * The keys stay locked from the grant to the end (exclusive when the
 * command writes, shared when it reads), so no other command sees a state
 * between the hops, and nothing else on those shards waits. Copying costs
 * what the values weigh, which the command's own work already does for
 * stores of whole sets; a command that only reads needs one hop.
 *
 * Not for: blocking commands, commands that name keys outside their
 * arguments (SORT BY/GET patterns: every shard), COPY ... DB, and any write
 * while the AOF is on (the whole-shard path logs it as one command). Those
 * keep whole-shard locks (tx.h). */
#include "cmd/cross.h"
#include "cmd/dispatch.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "shard/db.h"
#include "shard/shard.h"
#include "shard/tx.h"

/* gather key: a deep copy of key's live entry, by address; null if none */
static void gather_proc(cmd_ctx *c) {
    entry *e = db_find(ctx_db(c, c->argv[1], c->argl[1]), c->argv[1], c->argl[1], ctx_now(c));
    if (!e) {
        reply_null(c);
        return;
    }
    size_t kl;
    const char *k = (const char *)entry_keyp(e, &kl);
    entry *n = entry_copy(e, k, kl, entry_expire(e));
    reply_bulk(c, (const char *)&n, sizeof n);
}

/* place key [address]: the entry in, replacing key; without an address
 * the key goes. The command counted its change already. */
static void place_proc(cmd_ctx *c) {
    db *d = ctx_db(c, c->argv[1], c->argl[1]);
    entry **old = db_find_link(d, c->argv[1], c->argl[1], ctx_now(c));
    if (old) db_delete_link(d, old);
    if (c->argc == 3) {
        entry *n;
        memcpy(&n, c->argv[2], sizeof n);
        db_add(d, n);
    }
    c->unchanged = 1;
    reply_ok(c);
}

static const command gather_row = {.name = "gather", .proc = gather_proc, .arity = 2, .flags = CMD_READONLY,
                                   .first = 1, .last = 1, .step = 1};
static const command place_row = {.name = "place", .proc = place_proc, .arity = -2, .flags = CMD_WRITE,
                                  .first = 1, .last = 1, .step = 1};

/* One distinct key: where its copy came from. */
typedef struct gkey {
    const char *key;
    size_t klen;
    int part, item;
} gkey;

typedef struct gather_plan {
    int hop;
    buf reply; /* the command's reply, kept for the end of the last hop */
    int nkeys;
    gkey keys[];
} gather_plan;

/* The copy's address in a gather reply, or NULL. */
static entry *gathered(tx *t, const gkey *k) {
    size_t len;
    const char *r = tx_part_reply(t, k->part, k->item, &len);
    const char *nl = memchr(r, '\n', len);
    if (r[0] != '$' || !nl || (size_t)(r + len - nl - 1) < sizeof(entry *) + 2) return NULL;
    entry *e;
    memcpy(&e, nl + 1, sizeof e);
    return e;
}

/* Runs the command over the copies; returns 1 when hop 2 has writes. */
static int run_scratch(tx *t, gather_plan *pl) {
    db scratch = {0};
    db_init(&scratch, NULL, t->dbid);
    for (int i = 0; i < pl->nkeys; i++) {
        entry *e = gathered(t, &pl->keys[i]);
        if (e) db_add(&scratch, e);
    }
    cmd_ctx x = {.sh = t->coord, .cmd = t->cmd, .argc = t->argc, .argv = t->argv, .argl = t->argl,
                 .dbid = t->dbid, .resp = t->resp, .out = &pl->reply, .scratch = &scratch,
                 .no_stats = 1 /* the transaction counts the call */};
    exec_command(&x);
    int writes = (t->cmd->flags & CMD_WRITE) != 0;
    for (int i = 0; writes && i < pl->nkeys; i++) {
        gkey *k = &pl->keys[i];
        entry **l = table_link(scratch.t, k->key, k->klen);
        const char *argv[3] = {"place", k->key, NULL};
        size_t argl[3] = {5, k->klen, sizeof(entry *)};
        entry *e = NULL;
        if (l) {
            e = db_take(&scratch, l);
            argv[2] = (const char *)&e;
        }
        tx_part_add(t->parts[k->part], &place_row, l ? 3 : 2, argv, argl, t->dbid, t->resp)->no_stats = 1;
    }
    db_free(&scratch); /* the copies of keys that were only read */
    return writes;
}

static int gather_step(tx *t, buf *out) {
    gather_plan *pl = t->plan;
    switch (pl->hop++) {
    case 0: /* every key is locked: now copy them (a copy made at a grant
             * would be lost if the transaction were refused and retried) */
        for (int i = 0; i < pl->nkeys; i++) {
            gkey *k = &pl->keys[i];
            const char *argv[2] = {"gather", k->key};
            size_t argl[2] = {6, k->klen};
            tx_part *p = t->parts[k->part];
            tx_part_add(p, &gather_row, 2, argv, argl, t->dbid, t->resp)->no_stats = 1;
            k->item = (int)p->m.nitems - 1;
        }
        return 1;
    case 1:
        if (run_scratch(t, pl)) return 1;
        break;
    }
    buf_add(out, pl->reply.p, pl->reply.len);
    buf_free(&pl->reply);
    return 0;
}

typedef struct key_walk {
    tx *t;
    gather_plan *pl;
    int dbid, x;
} key_walk;

static void add_key(void *ud, const char *key, size_t klen) {
    key_walk *w = ud;
    gather_plan *pl = w->pl;
    for (int i = 0; i < pl->nkeys; i++)
        if (pl->keys[i].klen == klen && !memcmp(pl->keys[i].key, key, klen)) return;
    tx_part *p = tx_part_of(w->t, shard_of_key(key, klen));
    tx_part_key(p, w->dbid, key, klen, w->x);
    gkey *k = &pl->keys[pl->nkeys++];
    k->key = key; /* into the transaction's copy of the arguments */
    k->klen = klen;
    for (int j = 0; j < w->t->n; j++)
        if (w->t->parts[j] == p) k->part = j;
}

int cross_gather(struct session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                 int discard) {
    int writes = (cmd->flags & CMD_WRITE) != 0;
    if (writes && aof_active()) return 0; /* AOF: the whole-shard path logs one command */
    if (cmd->flags & CMD_BLOCKING) return 0;
    if (cmd->route && cmd->route(argc, argv, argl, nshards) != ROUTE_KEYS) return 0; /* keys beyond its arguments */
    if (!strcmp(cmd->name, "copy") && argc > 4) return 0; /* COPY .. DB n: another database */
    tx *t = tx_create(s, cmd, discard);
    /* the handler runs at the coordinator over the command's own words */
    tx_keep_args(t, argc, argv, argl);
    gather_plan *pl = zcalloc(sizeof *pl + sizeof(gkey) * (size_t)t->argc);
    t->plan = pl;
    key_walk w = {.t = t, .pl = pl, .dbid = s->db, .x = writes};
    cmd_each_key(cmd, t->argc, t->argv, t->argl, add_key, &w);
    tx_run_steps(t, gather_step);
    return 1;
}
