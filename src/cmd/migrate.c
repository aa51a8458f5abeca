/* migrate.c - MIGRATE host port key|"" destination-db timeout [COPY]
 * [REPLACE] [AUTH password] [AUTH2 username password] [KEYS key ...]
 *
 * Each existing key goes to the target as DUMP writes it (rdb_dump) in a
 * RESTORE with its remaining TTL; the keys the target restored are deleted
 * here unless COPY (migrate_sock.c does the exchange). Atomic over its keys
 * as in Redis, which blocks its one thread for it:
 *   - keys on one shard: the handler runs there (the connection's shard, or
 *     the keys' one in a batch) and does all of it in one call;
 *   - keys on several shards (migrate_hops): a transaction of hops with the
 *     keys locked (exclusive, shared under COPY), as cross-shard RENAME:
 *       hop 1  every part: each key's deadline and payload
 *       coord  the exchange with the target (the coordinator's thread waits)
 *       hop 2  every part: the keys the target restored are deleted
 *     With the AOF on, or a syntax error, it runs in whole-shard mode, whose
 *     coordinator runs the handler (which logs DEL of the moved keys).
 * The engine library never opens sockets (migrate_net_enabled). */
#include "cmd/migrate.h"
#include "cmd/cmd.h"
#include "cmd/notify.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "shard/cmdstats.h"
#include "shard/db.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include <string.h>

#define TIMEOUT_MAX_MS 1000000000000LL /* keeps deadlines in range */
#define ERR_BUF 1100                   /* "ERR Target instance replied with error: " and a 1 KB line */

static const char SYNTAX_ERR[] = "ERR syntax error";
static const char KEYS_ERR[] = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string";
static const char NOTINT_ERR[] = "ERR value is not an integer or out of range";

typedef struct mig_cmd {
    mig_opts o;
    int copy;
    int first, nkeys; /* argv positions of the keys */
} mig_cmd;

/* Redis's walk over the options, then timeout and db: NULL, or the error. */
static const char *parse(int argc, const char **argv, const size_t *argl, mig_cmd *m) {
    memset(m, 0, sizeof *m);
    m->first = 3;
    m->nkeys = 1;
    for (int j = 6; j < argc; j++) {
        int more = argc - 1 - j;
        if (str_eq_ci(argv[j], argl[j], "copy")) {
            m->copy = 1;
        } else if (str_eq_ci(argv[j], argl[j], "replace")) {
            m->o.replace = 1;
        } else if (str_eq_ci(argv[j], argl[j], "auth")) {
            if (!more) return SYNTAX_ERR;
            j++;
            m->o.pass = argv[j], m->o.passl = argl[j];
        } else if (str_eq_ci(argv[j], argl[j], "auth2")) {
            if (more < 2) return SYNTAX_ERR;
            j++;
            m->o.user = argv[j], m->o.userl = argl[j];
            j++;
            m->o.pass = argv[j], m->o.passl = argl[j];
        } else if (str_eq_ci(argv[j], argl[j], "keys")) {
            if (argl[3]) return KEYS_ERR;
            m->first = j + 1;
            m->nkeys = argc - j - 1;
            break;
        } else {
            return SYNTAX_ERR;
        }
    }
    long long timeout, dbid;
    if (!str2ll(argv[5], argl[5], &timeout) || !str2ll(argv[4], argl[4], &dbid)) return NOTINT_ERR;
    m->o.timeout_ms = timeout <= 0 ? 1000 : timeout > TIMEOUT_MAX_MS ? TIMEOUT_MAX_MS : timeout;
    m->o.dbid = dbid;
    m->o.host = argv[1], m->o.hostl = argl[1];
    m->o.port = argv[2], m->o.portl = argl[2];
    return NULL;
}

/* The key positions as Redis 7.0's COMMAND GETKEYS finds them: the third
 * argument, unless a KEYS word stands before the last argument; then
 * (that key spec being incomplete) its own walk over the options. */
static int migrate_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    if (argc < 4 || max < 1) return 0;
    int found = 0;
    for (int i = argc - 2; i > 0 && !found; i--)
        found = str_eq_ci(argv[i], argl[i], "keys");
    int first = 3, num = 1;
    for (int i = 6; found && i < argc; i++) {
        if (str_eq_ci(argv[i], argl[i], "keys")) {
            if (argl[3]) return 0;
            first = i + 1;
            num = argc - first;
            break;
        }
        if (str_eq_ci(argv[i], argl[i], "auth")) i += 1;
        else if (str_eq_ci(argv[i], argl[i], "auth2")) i += 2;
    }
    int n = 0;
    for (; n < num && n < max; n++)
        pos[n] = first + n;
    return n;
}

/* The same keys, each with the flags Redis's MIGRATE key finder gives. */
static int migrate_keyflags(int argc, const char **argv, const size_t *argl, int *pos, uint16_t *flags, int max) {
    int n = migrate_keys(argc, argv, argl, pos, max);
    for (int i = 0; i < n; i++)
        flags[i] = KS_RW | KS_ACCESS | KS_DELETE;
    return n;
}

/* The moved keys leave: deleted, notified, logged as one DEL (as Redis
 * propagates MIGRATE). Returns how many went. */
static int delete_done(cmd_ctx *c, const mig_key *k, int n) {
    int gone = 0;
    const char **dv = zmalloc(sizeof(char *) * (size_t)(n + 1));
    size_t *dl = zmalloc(sizeof(size_t) * (size_t)(n + 1));
    dv[0] = "DEL", dl[0] = 3;
    for (int i = 0; i < n; i++) {
        if (!k[i].done) continue;
        db *d = ctx_db(c, k[i].key, k[i].klen);
        entry **l = db_find_link(d, k[i].key, k[i].klen, ctx_now(c));
        if (l) db_delete_link(d, l);
        ctx_notify(c, NOTIFY_GENERIC, "del", k[i].argi);
        gone++;
        dv[gone] = k[i].key, dl[gone] = k[i].klen;
    }
    if (gone && aof_active()) aof_feed(c->sh, c->dbid, gone + 1, dv, dl);
    zfree(dv);
    zfree(dl);
    return gone;
}

/* MIGRATE, all of it on the shard(s) this context holds. */
static void migrate_cmd(cmd_ctx *c) {
    mig_cmd m;
    const char *err = parse(c->argc, c->argv, c->argl, &m);
    c->unchanged = 1;
    if (err) {
        reply_error(c, err);
        return;
    }
    mig_key *k = zcalloc(sizeof *k * (size_t)(m.nkeys ? m.nkeys : 1));
    size_t *off = zmalloc(sizeof(size_t) * (size_t)(m.nkeys ? m.nkeys : 1));
    buf payloads = {0};
    int n = 0;
    for (int j = 0; j < m.nkeys; j++) {
        int a = m.first + j;
        entry **l = ctx_lookup(c, a, 1, NULL);
        if (!l) continue;
        k[n] = (mig_key){.key = c->argv[a], .klen = c->argl[a], .expire = entry_expire(*l), .argi = a};
        off[n] = payloads.len;
        rdb_dump(&payloads, *l);
        k[n].plen = payloads.len - off[n];
        n++;
    }
    if (!n) {
        reply_simple(c, "NOKEY");
    } else {
        for (int i = 0; i < n; i++)
            k[i].payload = payloads.p + off[i];
        char ebuf[ERR_BUF];
        err = migrate_exchange(c->sh->id, &m.o, k, n, ebuf, sizeof ebuf);
        if (!m.copy && delete_done(c, k, n)) c->unchanged = 0;
        if (err) reply_error(c, err);
        else reply_ok(c);
    }
    buf_free(&payloads);
    zfree(off);
    zfree(k);
}

/* ---- keys on several shards: hops under key locks ---- */

/* migrate key: null, or the key's deadline (8 bytes) and its payload */
static void read_proc(cmd_ctx *c) {
    entry **l = ctx_lookup(c, 1, 1, NULL);
    if (!l) {
        resp_null(c->out, 2);
        return;
    }
    buf b = {0};
    int64_t exp = entry_expire(*l);
    buf_add(&b, &exp, sizeof exp);
    rdb_dump(&b, *l);
    reply_bulk(c, b.p, b.len);
    buf_free(&b);
}

/* del key: the key the target restored leaves (logged as DEL, hooks run) */
static void del_proc(cmd_ctx *c) {
    db *d = ctx_db(c, c->argv[1], c->argl[1]);
    entry **l = db_find_link(d, c->argv[1], c->argl[1], ctx_now(c));
    if (l) db_delete_link(d, l);
    ctx_notify(c, NOTIFY_GENERIC, "del", 1);
    reply_int(c, l != NULL);
}

static const command read_row = {.name = "migrate", .proc = read_proc, .arity = 2, .first = 1, .last = 1, .step = 1};
static const command del_row = {.name = "del", .proc = del_proc, .arity = 2, .flags = CMD_WRITE, .first = 1,
                                .last = 1, .step = 1};

typedef struct hop_key {
    int argi, part, item;
} hop_key;

typedef struct mig_plan {
    int hop;
    mig_cmd m; /* into the transaction's copy of the arguments */
    buf reply; /* the reply, kept while the deletions run */
    hop_key k[];
} mig_plan;

/* The deadline and payload in a read reply; 0 when the key was missing. */
static int read_reply(tx *t, const hop_key *h, mig_key *k) {
    size_t len;
    const char *r = tx_part_reply(t, h->part, h->item, &len);
    const char *nl = memchr(r, '\n', len);
    if (len < 2 || r[0] != '$' || r[1] == '-' || !nl) return 0;
    long long n;
    if (!str2ll(r + 1, (size_t)(nl - r - 2), &n) || n < (long long)sizeof(int64_t) ||
        (size_t)n > len - (size_t)(nl + 1 - r))
        return 0;
    memcpy(&k->expire, nl + 1, sizeof k->expire);
    k->payload = nl + 1 + sizeof(int64_t);
    k->plen = (size_t)n - sizeof(int64_t);
    return 1;
}

static int migrate_step(tx *t, buf *out) {
    mig_plan *pl = t->plan;
    mig_cmd *m = &pl->m;
    switch (pl->hop++) {
    case 0: /* every key is locked: read them (not at the grant, which a retry would waste) */
        for (int j = 0; j < m->nkeys; j++) {
            hop_key *h = &pl->k[j];
            const char *argv[2] = {"migrate", t->argv[h->argi]};
            size_t argl[2] = {7, t->argl[h->argi]};
            tx_part *p = t->parts[h->part];
            tx_part_add(p, &read_row, 2, argv, argl, t->dbid, 2)->no_stats = 1; /* the transaction counts the call */
            h->item = (int)p->m.nitems - 1;
        }
        return 1;
    case 1: { /* the exchange, then the deletions */
        mig_key *k = zcalloc(sizeof *k * (size_t)m->nkeys);
        int n = 0;
        for (int j = 0; j < m->nkeys; j++) {
            hop_key *h = &pl->k[j];
            k[n].key = t->argv[h->argi], k[n].klen = t->argl[h->argi], k[n].argi = j;
            n += read_reply(t, h, &k[n]);
        }
        if (!n) {
            resp_simple(out, "NOKEY");
            zfree(k);
            return 0;
        }
        char ebuf[ERR_BUF];
        const char *err = migrate_exchange(t->coord->id, &m->o, k, n, ebuf, sizeof ebuf);
        if (err) {
            resp_error(&pl->reply, err);
            cmdstats_error(t->coord, err); /* errorstats, as reply_error counts it */
        } else {
            buf_add(&pl->reply, "+OK\r\n", 5);
        }
        int dels = 0;
        for (int i = 0; i < n && !m->copy; i++) {
            if (!k[i].done) continue;
            const char *argv[2] = {"del", k[i].key};
            size_t argl[2] = {3, k[i].klen};
            tx_part_add(t->parts[pl->k[k[i].argi].part], &del_row, 2, argv, argl, t->dbid, 2)->no_stats = 1;
            dels++;
        }
        zfree(k);
        if (dels) return 1;
        break;
    }
    }
    buf_add(out, pl->reply.p, pl->reply.len);
    buf_free(&pl->reply);
    return 0;
}

static int migrate_hops(struct session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                        int discard) {
    mig_cmd m;
    if (aof_active() || parse(argc, argv, argl, &m)) return 0; /* the handler logs its DEL, or replies the error */
    tx *t = tx_create(s, cmd, discard);
    tx_keep_args(t, argc, argv, argl);
    mig_plan *pl = zcalloc(sizeof *pl + sizeof(hop_key) * (size_t)m.nkeys);
    t->plan = pl;
    parse(t->argc, t->argv, t->argl, &pl->m);
    for (int j = 0; j < m.nkeys; j++) {
        int a = m.first + j;
        tx_part *p = tx_part_of(t, shard_of_key(t->argv[a], t->argl[a]));
        int seen = 0;
        for (int i = 0; i < j && !seen; i++) {
            int b = m.first + i;
            seen = t->argl[b] == t->argl[a] && !memcmp(t->argv[b], t->argv[a], t->argl[a]);
        }
        if (!seen) tx_part_key(p, s->db, t->argv[a], t->argl[a], !m.copy);
        pl->k[j].argi = a;
        for (int i = 0; i < t->n; i++)
            if (t->parts[i] == p) pl->k[j].part = i;
    }
    tx_run_steps(t, migrate_step);
    return 1;
}

static const command rows[] = {
    {.name = "migrate",
     .proc = migrate_cmd,
     .arity = -6,
     .flags = CMD_WRITE | CMD_MOVABLEKEYS,
     .first = 3,
     .last = 3,
     .step = 1,
     .keys = migrate_keys,
     .keyflags = migrate_keyflags,
     .hops = migrate_hops,
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(3), KS_RANGE(0, 1, 0)},
               {KS_RW | KS_ACCESS | KS_DELETE | KS_INCOMPLETE, KS_KEYWORD("KEYS", -2), KS_RANGE(-1, 1, 0)}),
     .tips = "nondeterministic_output",
     .group = "generic",
     .since = "2.6.0",
     .acl = "keyspace write slow dangerous",
     .summary = "Atomically transfer a key from a Redis instance to another one."},
};

void migrate_register(void) {
    cmd_register(rows, (int)(sizeof rows / sizeof rows[0]));
    shard_add_cron_hook(migrate_cron);
}
