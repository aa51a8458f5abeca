/* cross.c - see cross.h.
 *
 * RENAME src dst, src and dst on shards S and D, both keys locked
 * exclusive:
 *   hop 1 (at the grant)  S: EXISTS src      D: EXISTS dst (RENAMENX)
 *   hop 2                 S: take src out of its table, rekeyed as dst
 *   hop 3                 D: put it in, replacing dst
 * The entry itself travels (its address in hop 2's reply), so nothing is
 * serialized; mimalloc frees it on any thread later. Between hop 2 and 3
 * the value is in no table, and both keys are locked, so no command sees
 * that. The internal take and put commands are rows of their own that no
 * client can name (they are not registered). */
#include "cmd/cross.h"
#include "cmd/notify.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "shard/db.h"
#include "shard/shard.h"
#include "shard/tx.h"

/* take src dst: src's entry out of its table, as dst; its address, or null */
static void take_proc(cmd_ctx *c) {
    db *d = ctx_db(c, c->argv[1], c->argl[1]);
    entry **link = db_find_link(d, c->argv[1], c->argl[1], ctx_now(c));
    if (!link) {
        reply_null(c);
        return;
    }
    entry *e = db_take(d, link);
    entry *n = entry_rekey(e, c->argv[2], c->argl[2], entry_expire(e));
    zfree(e); /* n holds e's object, if any */
    reply_bulk(c, (const char *)&n, sizeof n);
    ctx_notify(c, NOTIFY_GENERIC, "rename_from", 1);
}

/* put dst <address>: the entry in, replacing dst */
static void put_proc(cmd_ctx *c) {
    entry *n;
    memcpy(&n, c->argv[2], sizeof n);
    db *d = ctx_db(c, c->argv[1], c->argl[1]);
    entry **old = db_find_link(d, c->argv[1], c->argl[1], ctx_now(c));
    if (old) db_delete_link(d, old);
    db_add(d, n);
    reply_ok(c);
    ctx_notify(c, NOTIFY_GENERIC, "rename_to", 1);
}

static const command take_row = {.name = "rename", .proc = take_proc, .arity = 3, .flags = CMD_WRITE,
                                 .first = 1, .last = 1, .step = 1};
static const command put_row = {.name = "rename", .proc = put_proc, .arity = 3, .flags = CMD_WRITE,
                                .first = 1, .last = 1, .step = 1};

typedef struct rename_plan {
    int hop, nx;
    int src, dst; /* part indexes */
    const char *key[2];
    size_t len[2];
    char keys[];  /* src and dst, copied */
} rename_plan;

static int reply_is(tx *t, int part, int k, const char *want) {
    size_t len;
    const char *r = tx_part_reply(t, part, k, &len);
    return len == strlen(want) && !memcmp(r, want, len);
}

static int rename_step(tx *t, buf *out) {
    rename_plan *pl = t->plan;
    const char *argv[3];
    size_t argl[3];
    switch (pl->hop++) {
    case 0: /* the existence checks ran */
        if (!reply_is(t, pl->src, 0, ":1\r\n")) break;
        if (pl->nx && !reply_is(t, pl->dst, 0, ":0\r\n")) {
            resp_int(out, 0);
            return 0;
        }
        argv[0] = "rename", argl[0] = 6;
        argv[1] = pl->key[0], argl[1] = pl->len[0];
        argv[2] = pl->key[1], argl[2] = pl->len[1];
        tx_part_add(t->parts[pl->src], &take_row, 3, argv, argl, t->dbid, t->resp);
        return 1;
    case 1: { /* taken: its address */
        size_t len;
        const char *r = tx_part_reply(t, pl->src, 1, &len);
        const char *nl = memchr(r, '\n', len);
        if (r[0] != '$' || !nl || (size_t)(r + len - nl - 1) < sizeof(entry *) + 2) break; /* expired meanwhile */
        argv[0] = "rename", argl[0] = 6;
        argv[1] = pl->key[1], argl[1] = pl->len[1];
        argv[2] = nl + 1, argl[2] = sizeof(entry *);
        tx_part_add(t->parts[pl->dst], &put_row, 3, argv, argl, t->dbid, t->resp);
        return 1;
    }
    default: /* put */
        if (pl->nx) resp_int(out, 1);
        else buf_add(out, "+OK\r\n", 5);
        return 0;
    }
    resp_error(out, "ERR no such key");
    return 0;
}

int cross_rename(struct session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                 int discard) {
    if (aof_active()) return 0; /* AOF: the whole-shard path logs one RENAME */
    int nx = cmd->name[6] == 'n';
    tx *t = tx_create(s, cmd, discard);
    rename_plan *pl = zmalloc(sizeof *pl + argl[1] + argl[2]);
    pl->hop = 0;
    pl->nx = nx;
    memcpy(pl->keys, argv[1], argl[1]);
    memcpy(pl->keys + argl[1], argv[2], argl[2]);
    pl->key[0] = pl->keys, pl->len[0] = argl[1];
    pl->key[1] = pl->keys + argl[1], pl->len[1] = argl[2];
    t->plan = pl;
    tx_part *ps = tx_part_of(t, shard_of_key(argv[1], argl[1]));
    tx_part *pd = tx_part_of(t, shard_of_key(argv[2], argl[2]));
    pl->src = 0;
    pl->dst = 1;
    tx_part_key(ps, s->db, argv[1], argl[1], 1);
    tx_part_key(pd, s->db, argv[2], argl[2], 1);
    const command *exists = cmd_lookup("exists", 6);
    const char *ev[2] = {"exists", argv[1]};
    size_t el[2] = {6, argl[1]};
    tx_part_add(ps, exists, 2, ev, el, s->db, s->resp)->no_stats = 1; /* a step of RENAME's call */
    if (nx) {
        ev[1] = argv[2];
        el[1] = argl[2];
        tx_part_add(pd, exists, 2, ev, el, s->db, s->resp)->no_stats = 1;
    }
    tx_run_steps(t, rename_step);
    return 1;
}
