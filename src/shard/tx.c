/* tx.c - see tx.h. */
#include "shard/tx.h"
#include "cmd/dispatch.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "shard/msg.h"

static void tx_advance(tx *t);

/* A transaction with its arguments copied (the query buffer may move while
 * we wait for the locks). */
static tx *tx_new(shard *sh, const command *cmd, int argc, const char **argv, const size_t *argl, const int *ids,
                  int n) {
    tx *t = zcalloc(sizeof *t);
    t->coord = sh;
    memcpy(t->ids, ids, sizeof(int) * (size_t)n);
    t->n = n;
    t->cmd = cmd;
    t->argc = argc;
    t->resp = 2;
    size_t total = 0;
    for (int i = 0; i < argc; i++) total += argl[i] + 1;
    buf_reserve(&t->args, total);
    t->argv = zmalloc(sizeof(char *) * (size_t)argc);
    t->argl = zmalloc(sizeof(size_t) * (size_t)argc);
    size_t *offs = zmalloc(sizeof(size_t) * (size_t)argc);
    for (int i = 0; i < argc; i++) {
        offs[i] = t->args.len;
        buf_add(&t->args, argv[i], argl[i]);
        buf_addc(&t->args, 0);
        t->argl[i] = argl[i];
    }
    for (int i = 0; i < argc; i++) t->argv[i] = t->args.p + offs[i];
    zfree(offs);
    sh->stat_tx++;
    return t;
}

void tx_begin(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, const int *ids,
              int n, int discard) {
    tx *t = tx_new(s->sh, cmd, argc, argv, argl, ids, n);
    t->owner = s->conn;
    t->sess = s;
    t->dbid = s->db;
    t->resp = s->resp;
    t->slot = conn_pending_slot(s->conn);
    t->slot->discard = discard;
    s->conn->waiting = t;
    s->conn->inflight++;
    tx_advance(t);
}

void tx_begin_internal(shard *sh, const command *cmd, int argc, const char **argv, const size_t *argl) {
    int ids[MAX_SHARDS];
    for (int i = 0; i < nshards; i++) ids[i] = i;
    tx_advance(tx_new(sh, cmd, argc, argv, argl, ids, nshards));
}

static void tx_finish(tx *t) {
    shard *sh = t->coord;
    cmd_ctx c = {.sh = sh, .sess = t->sess, .tx = t, .cmd = t->cmd, .argc = t->argc,
                 .argv = t->argv, .argl = t->argl, .dbid = t->dbid, .resp = t->resp,
                 .out = t->slot ? &t->slot->data : &t->result};
    aof_tx_begin(sh); /* AOF: what this runs is one MULTI/EXEC block, written before the UNLOCKs leave */
    exec_command(&c);
    aof_tx_end(sh);
    int self_locked = 0;
    for (int i = 0; i < t->n; i++) {
        if (t->ids[i] == sh->id) {
            self_locked = 1;
            continue;
        }
        msg *m = msg_new(SM_UNLOCK, sh->id);
        m->tx = t;
        shard_send(sh, t->ids[i], m);
    }
    shard_flush(sh);
    conn *o = t->owner;
    if (o) {
        if (!t->blocked) t->slot->ready = 1;
        o->waiting = NULL;
        o->inflight--;
        if (!o->closed) {
            conn_slots_flush(o);
            shard_add_pending(sh, o);
        }
    }
    /* UNLOCK messages carry t only as a value to compare: freeing is safe. */
    buf_free(&t->result);
    buf_free(&t->args);
    zfree(t->argv);
    zfree(t->argl);
    zfree(t);
    if (self_locked) {
        sh->locked_by = NULL;
        shard_process_deferred(sh);
    }
    if (o) conn_release_if_done(o);
}

static void tx_advance(tx *t) {
    shard *sh = t->coord;
    while (t->next < t->n) {
        int id = t->ids[t->next];
        if (id == sh->id) {
            if (!sh->locked_by && !sh->deferred_head) {
                sh->locked_by = t;
                t->next++;
                continue;
            }
            msg *m = msg_new(SM_LOCK, sh->id);
            m->tx = t;
            m->next = NULL;
            if (sh->deferred_tail) sh->deferred_tail->next = m;
            else sh->deferred_head = m;
            sh->deferred_tail = m;
            return;
        }
        msg *m = msg_new(SM_LOCK, sh->id);
        m->tx = t;
        shard_send(sh, id, m);
        shard_flush(sh);
        return;
    }
    tx_finish(t);
}

void tx_lock_request(shard *sh, msg *m) {
    tx *t = m->tx;
    sh->locked_by = t;
    if (m->from == sh->id) { /* our own transaction, granted from the queue */
        msg_free(m);
        t->next++;
        tx_advance(t);
        return;
    }
    m->type = SM_GRANT;
    int to = m->from;
    m->from = (uint8_t)sh->id;
    shard_send(sh, to, m);
    shard_flush(sh);
}

void tx_granted(shard *coord, tx *t) {
    (void)coord;
    t->next++;
    tx_advance(t);
}

void tx_unlock(shard *sh, tx *t) {
    if (sh->locked_by == t) sh->locked_by = NULL;
    shard_process_deferred(sh);
}
