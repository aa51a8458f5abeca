/* tracking.c - see tracking.h.
 *
 *   per session   trk_sess: on, options, CACHING given, redirect id, broken,
 *                 BCAST prefixes
 *   per shard     trk_local (its thread's, or a transaction's holding it):
 *                 key -> trk_set (reader words id<<6|home); the tracking
 *                 sessions of the shard; deliveries for its own clients and
 *                 BCAST keys gathered this turn
 *   global        G (rwlock): client id -> (session, home shard) for every
 *                 connection; the BCAST prefixes with their clients
 *
 * A record TRK_TARGET(a = reader id, writer id, flags; b = RESP array of
 * keys) goes to the reader's home, which checks its state and writes the
 * push (RESP3), or sends TRK_REDIR(a = target id, flags; b = keys) to the
 * redirection target's home, which writes `invalidate` (RESP3) or a
 * `__redis__:invalidate` message (RESP2 in Pub/Sub mode). */
#include "shard/tracking.h"
#include "shard/client_evict.h"
#include "cmd/cmd.h"
#include "core/smap.h"
#include "lib/mem.h"
#include "net/conn.h"
#include "server/config.h"
#include "shard/pubsub.h"
#include "shard/shard.h"
#include <pthread.h>
#include <stdio.h>

typedef struct trk_sess {
    int on, opts, caching, broken;
    uint64_t redirect;
    char **prefix;
    size_t *plen;
    int nprefix;
    size_t prefix_bytes; /* the prefixes' allocations (tracking_mem) */
} trk_sess;

typedef struct trk_set {
    uint32_t n, cap;
    uint64_t w[]; /* id << 6 | home */
} trk_set;

typedef struct bc_key { /* a key changed this turn under a BCAST prefix */
    uint32_t prefix, key, plen, klen; /* offsets and lengths in trk_local.bc_bytes */
    uint64_t writer;
} bc_key;

typedef struct trk_local {
    smap *tab; /* key -> trk_set* */
    session **clients;
    size_t nclients, capclients;
    buf pending; /* records for this shard's own clients: kind(1) al(4) a bl(4) b */
    bc_key *bc;
    size_t nbc, capbc;
    buf bc_bytes;
} trk_local;

static trk_local locals[MAX_SHARDS];

/* Client ids -> (session, home), and BCAST prefixes. */
typedef struct gcli {
    struct gcli *next;
    uint64_t id;
    session *s;
    int home;
} gcli;

typedef struct bc_client {
    uint64_t id;
    int home, noloop;
} bc_client;

typedef struct gprefix {
    char *p;
    size_t len;
    bc_client *c;
    size_t n, cap;
} gprefix;

static struct {
    pthread_rwlock_t lock;
    gcli **b;
    size_t nb, n;
    gprefix *pre;
    size_t npre, cappre;
} G = {.lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP};

static long long g_keys, g_items, g_clients, g_prefixes; /* atomics */
static pthread_mutex_t evict_lock = PTHREAD_MUTEX_INITIALIZER;

#define W_REMEMBER 1ull
#define W_ID(w) ((w) >> 7)
#define W_HOME(w) ((int)(((w) >> 1) & 63))
#define T_ID(t) ((t) >> 6)
#define T_HOME(t) ((int)((t)&63))
enum { RF_BCAST = 1, RF_NULL = 2, RF_FLUSH = 4 };

static long long atomic_add(long long *p, long long d) { return __atomic_add_fetch(p, d, __ATOMIC_RELAXED); }
static long long atomic_get(long long *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

int tracking_active(void) { return atomic_get(&g_items) != 0 || atomic_get(&g_prefixes) != 0; }

/* ---- the id map ---- */

static gcli *gfind(uint64_t id) {
    if (!G.nb) return NULL;
    for (gcli *e = G.b[id & (G.nb - 1)]; e; e = e->next)
        if (e->id == id) return e;
    return NULL;
}

void tracking_conn_open(session *s) {
    gcli *e = zmalloc(sizeof *e);
    e->id = s->id;
    e->s = s;
    e->home = s->sh->id;
    pthread_rwlock_wrlock(&G.lock);
    if (G.n >= G.nb) {
        size_t nb = G.nb ? G.nb * 2 : 256;
        gcli **b = zcalloc(sizeof(gcli *) * nb);
        for (size_t i = 0; i < G.nb; i++) {
            for (gcli *x = G.b[i], *next; x; x = next) {
                next = x->next;
                x->next = b[x->id & (nb - 1)];
                b[x->id & (nb - 1)] = x;
            }
        }
        zfree(G.b);
        G.b = b;
        G.nb = nb;
    }
    e->next = G.b[e->id & (G.nb - 1)];
    G.b[e->id & (G.nb - 1)] = e;
    G.n++;
    pthread_rwlock_unlock(&G.lock);
}

void tracking_conn_moved(session *s) {
    pthread_rwlock_wrlock(&G.lock);
    if (G.nb)
        for (gcli *e = G.b[s->id & (G.nb - 1)]; e; e = e->next)
            if (e->id == s->id) e->home = s->sh->id;
    pthread_rwlock_unlock(&G.lock);
}

void tracking_conn_close(session *s) {
    tracking_disable(s);
    zfree(s->tracking);
    s->tracking = NULL;
    pthread_rwlock_wrlock(&G.lock);
    if (G.nb) {
        gcli **l = &G.b[s->id & (G.nb - 1)];
        while (*l && (*l)->id != s->id) l = &(*l)->next;
        if (*l) {
            gcli *e = *l;
            *l = e->next;
            zfree(e);
            G.n--;
        }
    }
    pthread_rwlock_unlock(&G.lock);
}

/* The home shard of client id, or -1; *sp gets its session (use it only on
 * that shard's thread). */
static int client_home(uint64_t id, session **sp) {
    pthread_rwlock_rdlock(&G.lock);
    gcli *e = gfind(id);
    int home = e ? e->home : -1;
    if (sp) *sp = e ? e->s : NULL;
    pthread_rwlock_unlock(&G.lock);
    return home;
}

int tracking_client_exists(uint64_t id) { return client_home(id, NULL) >= 0; }

/* ---- session state ---- */

uint64_t tracking_word(session *s, const command *cmd) {
    uint64_t w = (s->id << 7) | ((uint64_t)(s->sh ? s->sh->id : 0) << 1);
    trk_sess *t = s->tracking;
    if (!t || !t->on || (t->opts & TRK_BCAST) || !(cmd->flags & (CMD_READONLY | CMD_HOME))) return w;
    if ((t->opts & TRK_OPTIN) && !t->caching) return w;
    if ((t->opts & TRK_OPTOUT) && t->caching) return w;
    return w | W_REMEMBER;
}

void tracking_after_command(session *s, const command *cmd) {
    trk_sess *t = s->tracking;
    if (!t || !t->caching || s->multi || !strncmp(cmd->name, "client|", 7)) return;
    t->caching = 0;
}

int tracking_on(const session *s) { return s->tracking && s->tracking->on; }
size_t tracking_mem(const session *s) {
    const trk_sess *t = s->tracking;
    if (!t) return 0;
    return sizeof *t + (size_t)t->nprefix * (sizeof(char *) + sizeof(size_t)) + t->prefix_bytes;
}
int tracking_bcast(const session *s) { return tracking_on(s) && (s->tracking->opts & TRK_BCAST); }
int tracking_broken(const session *s) { return tracking_on(s) && s->tracking->broken; }
long long tracking_getredir(const session *s) { return tracking_on(s) ? (long long)s->tracking->redirect : -1; }

static void local_clients_del(trk_local *L, session *s) {
    for (size_t i = 0; i < L->nclients; i++) {
        if (L->clients[i] == s) {
            L->clients[i] = L->clients[--L->nclients];
            return;
        }
    }
}

static int is_prefix(const char *a, size_t al, const char *b, size_t bl) {
    size_t n = al < bl ? al : bl;
    return memcmp(a, b, n) == 0;
}

/* Adds (or with add 0 removes) client s under prefix p (G.lock held for writing). */
static void prefix_client(session *s, const char *p, size_t len, int add) {
    gprefix *g = NULL;
    for (size_t i = 0; i < G.npre; i++)
        if (G.pre[i].len == len && !memcmp(G.pre[i].p, p, len)) g = &G.pre[i];
    if (!g && !add) return;
    if (!g) {
        if (G.npre == G.cappre) {
            G.cappre = G.cappre ? G.cappre * 2 : 8;
            G.pre = zrealloc(G.pre, sizeof(gprefix) * G.cappre);
        }
        g = &G.pre[G.npre++];
        memset(g, 0, sizeof *g);
        g->p = zstrndup(p, len);
        g->len = len;
    }
    for (size_t i = 0; i < g->n; i++) {
        if (g->c[i].id != s->id) continue;
        if (add) {
            g->c[i].noloop = (s->tracking->opts & TRK_NOLOOP) != 0;
            return;
        }
        g->c[i] = g->c[--g->n];
        atomic_add(&g_prefixes, -1);
        break;
    }
    if (add) {
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 4;
            g->c = zrealloc(g->c, sizeof(bc_client) * g->cap);
        }
        g->c[g->n++] = (bc_client){.id = s->id, .home = s->sh->id, .noloop = (s->tracking->opts & TRK_NOLOOP) != 0};
        atomic_add(&g_prefixes, 1);
    }
    if (!g->n) {
        zfree(g->p);
        zfree(g->c);
        *g = G.pre[--G.npre];
    }
}

int tracking_enable(session *s, uint64_t redirect, int options, const char **prefix, const size_t *plen, int nprefix,
                    char *err, size_t el) {
    trk_sess *t = s->tracking;
    if (!(options & TRK_BCAST) && nprefix) {
        snprintf(err, el, "ERR PREFIX option requires BCAST mode to be enabled");
        return -1;
    }
    if (t && t->on && !!(t->opts & TRK_BCAST) != !!(options & TRK_BCAST)) {
        snprintf(err, el, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
                          "then re-enabling it with a different mode.");
        return -1;
    }
    if ((options & TRK_BCAST) && (options & (TRK_OPTIN | TRK_OPTOUT))) {
        snprintf(err, el, "ERR OPTIN and OPTOUT are not compatible with BCAST");
        return -1;
    }
    if ((options & TRK_OPTIN) && (options & TRK_OPTOUT)) {
        snprintf(err, el, "ERR You can't specify both OPTIN mode and OPTOUT mode");
        return -1;
    }
    if (t && t->on &&
        (((options & TRK_OPTIN) && (t->opts & TRK_OPTOUT)) || ((options & TRK_OPTOUT) && (t->opts & TRK_OPTIN)))) {
        snprintf(err, el, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
                          "then re-enabling it with a different mode.");
        return -1;
    }
    if (options & TRK_BCAST) {
        for (int i = 0; i < nprefix; i++) {
            for (int k = 0; t && t->on && k < t->nprefix; k++) {
                if (is_prefix(t->prefix[k], t->plen[k], prefix[i], plen[i])) {
                    snprintf(err, el,
                             "ERR Prefix '%.*s' overlaps with an existing prefix '%.*s'. Prefixes for a single "
                             "client must not overlap.",
                             (int)plen[i], prefix[i], (int)t->plen[k], t->prefix[k]);
                    return -1;
                }
            }
            for (int j = i + 1; j < nprefix; j++) {
                if (is_prefix(prefix[i], plen[i], prefix[j], plen[j])) {
                    snprintf(err, el,
                             "ERR Prefix '%.*s' overlaps with another provided prefix '%.*s'. Prefixes for a single "
                             "client must not overlap.",
                             (int)plen[i], prefix[i], (int)plen[j], prefix[j]);
                    return -1;
                }
            }
        }
    }
    if (!t) t = s->tracking = zcalloc(sizeof(trk_sess));
    if (!t->on) {
        t->on = 1;
        atomic_add(&g_clients, 1);
        trk_local *L = &locals[s->sh->id];
        if (L->nclients == L->capclients) {
            L->capclients = L->capclients ? L->capclients * 2 : 16;
            L->clients = zrealloc(L->clients, sizeof(session *) * L->capclients);
        }
        L->clients[L->nclients++] = s;
    }
    t->broken = 0;
    t->opts = options;
    t->redirect = redirect;
    if (options & TRK_BCAST) {
        const char *empty = "";
        size_t zero = 0;
        if (!nprefix) {
            prefix = &empty;
            plen = &zero;
            nprefix = 1;
        }
        pthread_rwlock_wrlock(&G.lock);
        for (int i = 0; i < nprefix; i++) {
            int have = 0;
            for (int k = 0; k < t->nprefix && !have; k++)
                have = t->plen[k] == plen[i] && !memcmp(t->prefix[k], prefix[i], plen[i]);
            prefix_client(s, prefix[i], plen[i], 1);
            if (have) continue;
            t->prefix = zrealloc(t->prefix, sizeof(char *) * (size_t)(t->nprefix + 1));
            t->plen = zrealloc(t->plen, sizeof(size_t) * (size_t)(t->nprefix + 1));
            t->prefix[t->nprefix] = zstrndup(prefix[i], plen[i]);
            t->prefix_bytes += zmalloc_size(t->prefix[t->nprefix]);
            t->plen[t->nprefix++] = plen[i];
        }
        pthread_rwlock_unlock(&G.lock);
    }
    return 0;
}

void tracking_disable(session *s) {
    trk_sess *t = s->tracking;
    if (!t || !t->on) return;
    if (t->nprefix) {
        pthread_rwlock_wrlock(&G.lock);
        for (int k = 0; k < t->nprefix; k++) prefix_client(s, t->prefix[k], t->plen[k], 0);
        pthread_rwlock_unlock(&G.lock);
        for (int k = 0; k < t->nprefix; k++) zfree(t->prefix[k]);
        zfree(t->prefix);
        zfree(t->plen);
        t->prefix = NULL;
        t->plen = NULL;
        t->nprefix = 0;
        t->prefix_bytes = 0;
    }
    local_clients_del(&locals[s->sh->id], s);
    atomic_add(&g_clients, -1);
    memset(t, 0, sizeof *t);
}

int tracking_caching(session *s, int yes, char *err, size_t el) {
    trk_sess *t = s->tracking;
    if (!t || !t->on) {
        snprintf(err, el, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                          "OPTOUT mode enabled");
        return -1;
    }
    if (yes && !(t->opts & TRK_OPTIN)) {
        snprintf(err, el, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
        return -1;
    }
    if (!yes && !(t->opts & TRK_OPTOUT)) {
        snprintf(err, el, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
        return -1;
    }
    t->caching = 1;
    return 0;
}

void tracking_info(const session *s, int resp, buf *o) {
    const trk_sess *t = s->tracking;
    int on = t && t->on;
    resp_map(o, resp, 3);
    resp_bulk(o, "flags", 5);
    const char *f[8];
    int n = 0;
    f[n++] = on ? "on" : "off";
    if (on && (t->opts & TRK_BCAST)) f[n++] = "bcast";
    if (on && (t->opts & TRK_OPTIN)) {
        f[n++] = "optin";
        if (t->caching) f[n++] = "caching-yes";
    }
    if (on && (t->opts & TRK_OPTOUT)) {
        f[n++] = "optout";
        if (t->caching) f[n++] = "caching-no";
    }
    if (on && (t->opts & TRK_NOLOOP)) f[n++] = "noloop";
    if (on && t->broken) f[n++] = "broken_redirect";
    resp_set(o, resp, n);
    for (int i = 0; i < n; i++) resp_bulk(o, f[i], strlen(f[i]));
    resp_bulk(o, "redirect", 8);
    resp_int(o, on ? (long long)t->redirect : -1);
    resp_bulk(o, "prefixes", 8);
    int np = on ? t->nprefix : 0;
    resp_array(o, np);
    for (int i = 0; i < np; i++) resp_bulk(o, t->prefix[i], t->plen[i]);
}

/* ---- records ---- */

static void put_record(buf *b, int kind, const char *a, size_t al, const char *x, size_t xl) {
    uint8_t k = (uint8_t)kind;
    uint32_t l1 = (uint32_t)al, l2 = (uint32_t)xl;
    buf_add(b, &k, 1);
    buf_add(b, &l1, 4);
    buf_add(b, a, al);
    buf_add(b, &l2, 4);
    buf_add(b, x, xl);
}

/* Sends a record from the calling shard to shard `to` (itself: at the end
 * of the turn). */
static void send_record(int to, int kind, const char *a, size_t al, const char *x, size_t xl) {
    shard *me = shard_self();
    if (!me) return;
    if (!shards_running) /* the embedded engine has no loop turns: now */
        tracking_on_record(me, kind, a, al, x, xl);
    else if (to == me->id)
        put_record(&locals[me->id].pending, kind, a, al, x, xl);
    else
        pubsub_record(me, to, kind, a, al, x, xl);
}

static void send_target(int home, uint64_t id, uint64_t writer, uint8_t flags, const char *keys, size_t kl) {
    char a[17];
    memcpy(a, &id, 8);
    memcpy(a + 8, &writer, 8);
    a[16] = (char)flags;
    send_record(home, TRK_TARGET, a, 17, keys, kl);
}

/* tracking_deliver_before: the session whose command is about to run, and
 * where its reply will go. */
static _Thread_local session *before_sess;
static _Thread_local buf *before_out;

static void push(session *s, const char *p, size_t n) {
    conn *c = s->conn;
    if (c && (c->closed || __atomic_load_n(&c->s.killed, __ATOMIC_RELAXED))) return;
    buf_add(s == before_sess ? before_out : session_reply_buf(s), p, n);
    if (c) cevict_update(c); /* a redirection target that does not read grows (maxmemory-clients) */
}

/* The message for client r (the reader itself, or its redirection). */
static void deliver_final(session *r, uint8_t flags, const char *keys, size_t kl, int redirected) {
    buf o = {0};
    if (r->resp > 2) {
        resp_push(&o, 3, 2);
        resp_bulk(&o, "invalidate", 10);
        if (flags & RF_NULL) resp_null(&o, 3);
        else buf_add(&o, keys, kl);
    } else if (redirected && pubsub_total(r)) {
        resp_array(&o, 3);
        resp_bulk(&o, "message", 7);
        resp_bulk(&o, "__redis__:invalidate", 20);
        if (flags & RF_NULL) resp_null_array(&o, 2);
        else buf_add(&o, keys, kl);
    }
    if (o.len) push(r, o.p, o.len);
    buf_free(&o);
}

static void deliver_target(shard *sh, uint64_t id, uint64_t writer, uint8_t flags, const char *keys, size_t kl) {
    session *x;
    if (client_home(id, &x) != sh->id || !x) return;
    trk_sess *t = x->tracking;
    if (!t || !t->on) return;
    if (!(flags & RF_FLUSH)) {
        if (!!(flags & RF_BCAST) != !!(t->opts & TRK_BCAST)) return; /* kept from before a switch of mode */
        if (writer && writer == id && (t->opts & TRK_NOLOOP)) return;
    }
    if (!t->redirect) {
        deliver_final(x, flags, keys, kl, 0);
        return;
    }
    session *r;
    int rh = client_home(t->redirect, &r);
    if (rh < 0) {
        t->broken = 1;
        if (x->resp > 2) {
            buf o = {0};
            resp_push(&o, 3, 2);
            resp_bulk(&o, "tracking-redir-broken", 21);
            resp_int(&o, (long long)t->redirect);
            push(x, o.p, o.len);
            buf_free(&o);
        }
        return;
    }
    if (rh == sh->id) {
        deliver_final(r, flags, keys, kl, 1);
        return;
    }
    char a[9];
    memcpy(a, &t->redirect, 8);
    a[8] = (char)flags;
    send_record(rh, TRK_REDIR, a, 9, keys, kl);
}

void tracking_on_record(shard *sh, int kind, const char *a, size_t al, const char *b, size_t bl) {
    uint64_t id, writer;
    switch (kind) {
    case TRK_TARGET:
        if (al != 17) return;
        memcpy(&id, a, 8);
        memcpy(&writer, a + 8, 8);
        deliver_target(sh, id, writer, (uint8_t)a[16], b, bl);
        break;
    case TRK_REDIR: {
        if (al != 9) return;
        memcpy(&id, a, 8);
        session *r;
        if (client_home(id, &r) == sh->id && r) deliver_final(r, (uint8_t)a[8], b, bl, 1);
        break;
    }
    case TRK_FLUSH: {
        trk_local *L = &locals[sh->id];
        uint64_t *ids = zmalloc(sizeof(uint64_t) * (L->nclients + 1));
        size_t n = L->nclients;
        for (size_t i = 0; i < n; i++) ids[i] = L->clients[i]->id;
        for (size_t i = 0; i < n; i++) deliver_target(sh, ids[i], 0, RF_FLUSH | RF_NULL, NULL, 0);
        zfree(ids);
        break;
    }
    }
}

/* ---- remembering and invalidating ---- */

static void one_key(buf *o, const char *key, size_t klen) {
    resp_array(o, 1);
    resp_bulk(o, key, klen);
}

void tracking_remember(shard *owner, uint64_t w, const char *key, size_t klen) {
    if (!(w & W_REMEMBER)) return;
    trk_local *L = &locals[owner->id];
    if (!L->tab) L->tab = smap_create(SMAP_U64);
    uint64_t word = (W_ID(w) << 6) | (uint64_t)W_HOME(w);
    smap_elem *e = smap_find(L->tab, key, klen);
    trk_set *st = e ? (trk_set *)(uintptr_t)smap_elem_u64(e) : NULL;
    if (st) {
        for (uint32_t i = 0; i < st->n; i++)
            if (st->w[i] == word) return;
    }
    if (!st || st->n == st->cap) {
        uint32_t cap = st ? st->cap * 2 : 2;
        trk_set *ns = zrealloc(st, sizeof *ns + sizeof(uint64_t) * cap);
        if (!st) ns->n = 0;
        ns->cap = cap;
        uint64_t v = (uint64_t)(uintptr_t)ns;
        if (e) smap_elem_set_u64(e, v);
        else smap_add(L->tab, key, klen, (const char *)&v, 8);
        if (!st) atomic_add(&g_keys, 1);
        st = ns;
    }
    st->w[st->n++] = word;
    atomic_add(&g_items, 1);
}

/* Takes key's readers out of owner's table and tells each of them. */
static void invalidate_readers(shard *owner, uint64_t writer, const char *key, size_t klen) {
    trk_local *L = &locals[owner->id];
    if (!L->tab) return;
    smap_elem *e = smap_find(L->tab, key, klen);
    if (!e) return;
    trk_set *st = (trk_set *)(uintptr_t)smap_elem_u64(e);
    buf keys = {0};
    one_key(&keys, key, klen);
    for (uint32_t i = 0; i < st->n; i++) send_target(T_HOME(st->w[i]), T_ID(st->w[i]), writer, 0, keys.p, keys.len);
    buf_free(&keys);
    atomic_add(&g_items, -(long long)st->n);
    atomic_add(&g_keys, -1);
    zfree(st);
    smap_remove(L->tab, e);
}

void tracking_key_changed(shard *owner, uint64_t w, const char *key, size_t klen) {
    uint64_t writer = w ? W_ID(w) : 0;
    if (atomic_get(&g_prefixes)) {
        shard *me = shard_self();
        trk_local *L = me ? &locals[me->id] : NULL;
        pthread_rwlock_rdlock(&G.lock);
        for (size_t i = 0; L && i < G.npre; i++) {
            gprefix *g = &G.pre[i];
            if (g->len > klen || memcmp(g->p, key, g->len)) continue;
            if (L->nbc == L->capbc) {
                L->capbc = L->capbc ? L->capbc * 2 : 16;
                L->bc = zrealloc(L->bc, sizeof(bc_key) * L->capbc);
            }
            bc_key *k = &L->bc[L->nbc++];
            k->prefix = (uint32_t)L->bc_bytes.len;
            k->plen = (uint32_t)g->len;
            buf_add(&L->bc_bytes, g->p, g->len);
            k->key = (uint32_t)L->bc_bytes.len;
            k->klen = (uint32_t)klen;
            buf_add(&L->bc_bytes, key, klen);
            k->writer = writer;
        }
        pthread_rwlock_unlock(&G.lock);
    }
    if (atomic_get(&g_items)) invalidate_readers(owner, writer, key, klen);
}

void tracking_flush_all(uint64_t w) {
    for (int i = 0; i < nshards; i++) {
        trk_local *L = &locals[i];
        if (!L->tab) continue;
        smap_iter it;
        smap_iter_start(&it, L->tab);
        for (smap_elem *e; (e = smap_iter_next(&it));) {
            trk_set *st = (trk_set *)(uintptr_t)smap_elem_u64(e);
            atomic_add(&g_items, -(long long)st->n);
            atomic_add(&g_keys, -1);
            zfree(st);
        }
        smap_iter_stop(&it);
        smap_free(&L->tab);
    }
    if (!atomic_get(&g_clients)) return;
    for (int i = 0; i < nshards; i++) send_record(i, TRK_FLUSH, "", 0, "", 0);
}

/* BCAST: one message per prefix and client for the keys of this turn. */
static void bcast_send(trk_local *L) {
    pthread_rwlock_rdlock(&G.lock);
    size_t ngroups = 0;
    for (size_t i = 0; i < L->nbc; i++) {
        bc_key *k = &L->bc[i];
        if (k->plen == UINT32_MAX) continue; /* in a group already sent */
        const char *pp = L->bc_bytes.p + k->prefix;
        gprefix *g = NULL;
        for (size_t j = 0; j < G.npre && !g; j++)
            if (G.pre[j].len == k->plen && !memcmp(G.pre[j].p, pp, k->plen)) g = &G.pre[j];
        for (size_t c = 0; g && c < g->n; c++) {
            buf keys = {0};
            long long n = 0;
            for (size_t m = i; m < L->nbc; m++) {
                bc_key *x = &L->bc[m];
                if (x->plen != k->plen || memcmp(L->bc_bytes.p + x->prefix, pp, k->plen)) continue;
                if (g->c[c].noloop && x->writer == g->c[c].id) continue;
                resp_bulk(&keys, L->bc_bytes.p + x->key, x->klen);
                n++;
            }
            if (n) {
                buf msg = {0};
                resp_array(&msg, n);
                buf_add(&msg, keys.p, keys.len);
                send_target(g->c[c].home, g->c[c].id, 0, RF_BCAST, msg.p, msg.len);
                buf_free(&msg);
            }
            buf_free(&keys);
        }
        uint32_t plen = k->plen;
        for (size_t m = i; m < L->nbc; m++) /* mark the group done */
            if (L->bc[m].plen == plen && !memcmp(L->bc_bytes.p + L->bc[m].prefix, pp, plen) && m != i)
                L->bc[m].plen = UINT32_MAX;
        k->plen = UINT32_MAX;
        ngroups++;
    }
    pthread_rwlock_unlock(&G.lock);
    L->nbc = 0;
    L->bc_bytes.len = 0;
}

void tracking_turn_end(shard *sh) {
    trk_local *L = &locals[sh->id];
    if (L->nbc) bcast_send(L);
    if (!L->pending.len) return;
    buf b = L->pending; /* deliveries may queue more: they go next turn */
    L->pending = (buf){0};
    const char *p = b.p, *end = b.p + b.len;
    while (p < end) {
        uint8_t k = (uint8_t)p[0];
        uint32_t al, bl;
        memcpy(&al, p + 1, 4);
        const char *a = p + 5;
        memcpy(&bl, a + al, 4);
        const char *x = a + al + 4;
        tracking_on_record(sh, k, a, al, x, bl);
        p = x + bl;
    }
    buf_free(&b);
}

void tracking_deliver_before(shard *sh, session *s, buf *out) {
    before_sess = s;
    before_out = out;
    tracking_turn_end(sh);
    before_sess = NULL;
    before_out = NULL;
}

static uint64_t trk_rand(void) {
    static _Thread_local uint64_t x = 0x2545f4914f6cdd1dull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint64_t z = x * 0x2545f4914f6cdd1dull; /* low bits mixed from every bit of x (shard_rand) */
    return z ^ (z >> 32);
}

/* tracking-table-max-keys: while the keys over every shard pass the
 * limit, this shard drops random keys of its own, invalidating them. One
 * shard at a time (a mutex), so the shards together stop at the limit. */
/* Invalidates one random key of owner's table; 0 when it has none. */
static int forget_one(shard *owner) {
    trk_local *L = &locals[owner->id];
    smap_elem *e = L->tab && smap_size(L->tab) ? smap_random(L->tab, trk_rand) : NULL;
    if (!e) return 0;
    size_t kl;
    const char *k = smap_elem_field(e, &kl);
    char tmp[256];
    char *kc = kl <= sizeof tmp ? tmp : zmalloc(kl);
    memcpy(kc, k, kl);
    invalidate_readers(owner, 0, kc, kl);
    if (kc != tmp) zfree(kc);
    return 1;
}

void tracking_cron(shard *sh) {
    trk_local *L = &locals[sh->id];
    long long max = cfg_get(tracking_table_max_keys);
    if (!L->tab || !smap_size(L->tab) || max <= 0 || atomic_get(&g_keys) <= max) return;
    pthread_mutex_lock(&evict_lock);
    for (int budget = 1000; budget-- > 0 && atomic_get(&g_keys) > max && forget_one(sh);) {
    }
    pthread_mutex_unlock(&evict_lock);
}

void tracking_limit_all(void) {
    long long max = cfg_get(tracking_table_max_keys);
    if (max <= 0 || atomic_get(&g_keys) <= max) return;
    pthread_mutex_lock(&evict_lock);
    for (int budget = 1000, any = 1; any && budget > 0 && atomic_get(&g_keys) > max;) {
        any = 0;
        for (int i = 0; i < nshards && budget > 0 && atomic_get(&g_keys) > max; i++)
            if (forget_one(shards[i])) {
                any = 1;
                budget--;
            }
    }
    pthread_mutex_unlock(&evict_lock);
}

void tracking_stats(long long *keys, long long *items, long long *prefixes, long long *clients) {
    *keys = atomic_get(&g_keys);
    *items = atomic_get(&g_items);
    pthread_rwlock_rdlock(&G.lock);
    *prefixes = (long long)G.npre;
    pthread_rwlock_unlock(&G.lock);
    *clients = atomic_get(&g_clients);
}
