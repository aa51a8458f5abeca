/* pubsub.c - see pubsub.h. Three structures:
 *   - ps_sess, per session: its names per kind (an smap set), patterns
 *     also in subscription order, and the soft output limit's clock;
 *   - ps_local, per shard (locals[id], touched only by that shard's
 *     thread): name -> ps_subs (the sessions of this shard), the pattern
 *     subscriptions in a vector for matching, and this turn's SM_PUBLISH
 *     message per destination;
 *   - the global table G (rwlock): name -> subscribers per shard, and the
 *     patterns in a vector. Written on a shard's subscribe and unsubscribe,
 *     read by every PUBLISH with peers and by PUBSUB/INFO. */
#include "shard/pubsub.h"
#include "shard/client_evict.h"
#include "core/smap.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "net/conn.h"
#include "server/config.h"
#include "shard/msg.h"
#include "shard/shard.h"
#include "shard/tracking.h"
#include <pthread.h>
#include <stdio.h>

typedef struct ps_sess {
    smap *set[PS_KINDS];
    char **pat; /* patterns in subscription order */
    size_t *patl, npat, cappat;
    int64_t soft_since; /* second the soft output limit was first passed, 0: under it */
} ps_sess;

/* The sessions of one shard subscribed to one name. */
typedef struct ps_subs {
    session **v;
    uint32_t n, cap;
    size_t pidx; /* patterns: index in ps_local.pats */
    size_t len;
    char name[];
} ps_subs;

typedef struct ps_local {
    smap *tab[PS_KINDS]; /* name -> ps_subs* (SMAP_U64) */
    ps_subs **pats;
    size_t npats, cappats;
    msg *open[MAX_SHARDS]; /* records for each peer, sent at this turn's flush */
    int nopen;
    buf enc[2]; /* the message being delivered, RESP2 and RESP3 (enc) */
} ps_local;

static ps_local locals[MAX_SHARDS];

/* ---- the global table ---- */

typedef struct gent {
    struct gent *next;
    uint64_t h;
    uint32_t kind, total;
    size_t pidx; /* patterns: index in G.pats */
    size_t len;
    char *name;   /* inside this allocation, after cnt */
    uint32_t cnt[]; /* per shard */
} gent;

static struct {
    pthread_rwlock_t lock;
    gent **b;
    size_t nb, n;
    long long active[PS_KINDS]; /* entries per kind */
    gent **pats;
    size_t npats, cappats;
} G = {.lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP}; /* writers are not starved by publishers */

static long long g_subs;            /* atomic: subscriptions of every session (0: PUBLISH has nobody to find) */
static long long g_kind[PS_KINDS];  /* atomic: the same per kind */

static uint64_t name_hash(int kind, const char *p, size_t n) { return hash_bytes(p, n) ^ ((uint64_t)kind * 0x9e3779b97f4a7c15ull); }

static gent *gfind(int kind, const char *p, size_t n, uint64_t h) {
    if (!G.nb) return NULL;
    for (gent *e = G.b[h & (G.nb - 1)]; e; e = e->next)
        if (e->h == h && e->kind == (uint32_t)kind && e->len == n && !memcmp(e->name, p, n)) return e;
    return NULL;
}

static void ggrow(void) {
    size_t nb = G.nb ? G.nb * 2 : 64;
    gent **b = zcalloc(sizeof(gent *) * nb);
    for (size_t i = 0; i < G.nb; i++) {
        for (gent *e = G.b[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->h & (nb - 1)];
            b[e->h & (nb - 1)] = e;
        }
    }
    zfree(G.b);
    G.b = b;
    G.nb = nb;
}

/* Shard sid has one more (delta 1) or one fewer (-1) subscriber of name. */
static void gcount(int kind, const char *p, size_t n, int sid, int delta) {
    uint64_t h = name_hash(kind, p, n);
    pthread_rwlock_wrlock(&G.lock);
    gent *e = gfind(kind, p, n, h);
    if (!e && delta > 0) {
        if (G.n >= G.nb) ggrow();
        size_t cb = sizeof(uint32_t) * (size_t)nshards;
        e = zcalloc(sizeof *e + cb + n + 1);
        e->h = h;
        e->kind = (uint32_t)kind;
        e->len = n;
        e->name = (char *)e->cnt + cb;
        memcpy(e->name, p, n);
        e->next = G.b[h & (G.nb - 1)];
        G.b[h & (G.nb - 1)] = e;
        G.n++;
        G.active[kind]++;
        if (kind == PS_PATTERN) {
            if (G.npats == G.cappats) {
                G.cappats = G.cappats ? G.cappats * 2 : 16;
                G.pats = zrealloc(G.pats, sizeof(gent *) * G.cappats);
            }
            e->pidx = G.npats;
            G.pats[G.npats++] = e;
        }
    }
    if (e) {
        e->cnt[sid] += (uint32_t)delta;
        e->total += (uint32_t)delta;
        if (e->total == 0) {
            gent **l = &G.b[h & (G.nb - 1)];
            while (*l != e) l = &(*l)->next;
            *l = e->next;
            G.n--;
            G.active[kind]--;
            if (kind == PS_PATTERN) {
                G.pats[e->pidx] = G.pats[--G.npats];
                G.pats[e->pidx]->pidx = e->pidx;
            }
            zfree(e);
        }
    }
    pthread_rwlock_unlock(&G.lock);
}

/* ---- a shard's local table ---- */

static ps_subs *local_find(ps_local *L, int kind, const char *p, size_t n) {
    if (!L->tab[kind]) return NULL;
    smap_elem *el = smap_find(L->tab[kind], p, n);
    return el ? (ps_subs *)(uintptr_t)smap_elem_u64(el) : NULL;
}

static void local_add(int sid, int kind, const char *p, size_t n, session *s) {
    ps_local *L = &locals[sid];
    ps_subs *ss = local_find(L, kind, p, n);
    if (!ss) {
        if (!L->tab[kind]) L->tab[kind] = smap_create(SMAP_U64);
        ss = zcalloc(sizeof *ss + n + 1);
        ss->len = n;
        memcpy(ss->name, p, n);
        uint64_t v = (uint64_t)(uintptr_t)ss;
        smap_add(L->tab[kind], p, n, (const char *)&v, 8);
        if (kind == PS_PATTERN) {
            if (L->npats == L->cappats) {
                L->cappats = L->cappats ? L->cappats * 2 : 16;
                L->pats = zrealloc(L->pats, sizeof(ps_subs *) * L->cappats);
            }
            ss->pidx = L->npats;
            L->pats[L->npats++] = ss;
        }
    }
    if (ss->n == ss->cap) {
        ss->cap = ss->cap ? ss->cap * 2 : 4;
        ss->v = zrealloc(ss->v, sizeof(session *) * ss->cap);
    }
    ss->v[ss->n++] = s;
}

static void local_del(int sid, int kind, const char *p, size_t n, session *s) {
    ps_local *L = &locals[sid];
    ps_subs *ss = local_find(L, kind, p, n);
    if (!ss) return;
    for (uint32_t i = 0; i < ss->n; i++) {
        if (ss->v[i] == s) {
            ss->v[i] = ss->v[--ss->n];
            break;
        }
    }
    if (ss->n) return;
    smap_delete(L->tab[kind], p, n);
    if (kind == PS_PATTERN) {
        L->pats[ss->pidx] = L->pats[--L->npats];
        L->pats[ss->pidx]->pidx = ss->pidx;
    }
    zfree(ss->v);
    zfree(ss);
}

/* ---- sessions ---- */

static ps_sess *sess_state(session *s) {
    if (!s->pubsub) s->pubsub = zcalloc(sizeof(ps_sess));
    return s->pubsub;
}

int pubsub_subscribe(session *s, int kind, const char *name, size_t len) {
    ps_sess *p = sess_state(s);
    if (!p->set[kind]) p->set[kind] = smap_create(SMAP_SET);
    if (!smap_add(p->set[kind], name, len, NULL, 0)) return 0;
    if (kind == PS_PATTERN) {
        if (p->npat == p->cappat) {
            p->cappat = p->cappat ? p->cappat * 2 : 4;
            p->pat = zrealloc(p->pat, sizeof(char *) * p->cappat);
            p->patl = zrealloc(p->patl, sizeof(size_t) * p->cappat);
        }
        p->pat[p->npat] = zstrndup(name, len);
        p->patl[p->npat++] = len;
    }
    local_add(s->sh->id, kind, name, len, s);
    gcount(kind, name, len, s->sh->id, 1);
    __atomic_fetch_add(&g_subs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_kind[kind], 1, __ATOMIC_RELAXED);
    return 1;
}

/* Frees the session's state once it holds no subscription. */
static void release_if_empty(session *s) {
    ps_sess *p = s->pubsub;
    for (int k = 0; k < PS_KINDS; k++)
        if (p->set[k] && smap_size(p->set[k])) return;
    for (int k = 0; k < PS_KINDS; k++) smap_free(&p->set[k]);
    zfree(p->pat);
    zfree(p->patl);
    zfree(p);
    s->pubsub = NULL;
}

int pubsub_unsubscribe(session *s, int kind, const char *name, size_t len) {
    ps_sess *p = s->pubsub;
    if (!p || !p->set[kind] || !smap_delete(p->set[kind], name, len)) return 0;
    if (kind == PS_PATTERN) {
        for (size_t i = 0; i < p->npat; i++) {
            if (p->patl[i] == len && !memcmp(p->pat[i], name, len)) {
                zfree(p->pat[i]);
                memmove(p->pat + i, p->pat + i + 1, sizeof(char *) * (p->npat - i - 1));
                memmove(p->patl + i, p->patl + i + 1, sizeof(size_t) * (p->npat - i - 1));
                p->npat--;
                break;
            }
        }
    }
    local_del(s->sh->id, kind, name, len, s);
    gcount(kind, name, len, s->sh->id, -1);
    __atomic_fetch_sub(&g_subs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&g_kind[kind], 1, __ATOMIC_RELAXED);
    release_if_empty(s);
    return 1;
}

size_t pubsub_count(const session *s, int kind) {
    const ps_sess *p = s->pubsub;
    return p && p->set[kind] ? smap_size(p->set[kind]) : 0;
}

size_t pubsub_total(const session *s) {
    const ps_sess *p = s->pubsub;
    if (!p) return 0;
    size_t n = 0;
    for (int k = 0; k < PS_MONITOR; k++)
        if (p->set[k]) n += smap_size(p->set[k]);
    return n;
}

size_t pubsub_names(const session *s, int kind, char ***names, size_t **lens) {
    const ps_sess *p = s->pubsub;
    size_t n = pubsub_count(s, kind), i = 0;
    *names = n ? zmalloc(sizeof(char *) * n) : NULL;
    *lens = n ? zmalloc(sizeof(size_t) * n) : NULL;
    if (!n) return 0;
    if (kind == PS_PATTERN) {
        for (; i < p->npat; i++) {
            (*names)[i] = zstrndup(p->pat[i], p->patl[i]);
            (*lens)[i] = p->patl[i];
        }
        return i;
    }
    smap_iter it;
    smap_iter_start(&it, p->set[kind]);
    for (smap_elem *e; (e = smap_iter_next(&it)) && i < n; i++) {
        size_t l;
        const char *f = smap_elem_field(e, &l);
        (*names)[i] = zstrndup(f, l);
        (*lens)[i] = l;
    }
    smap_iter_stop(&it);
    return i;
}

void pubsub_names_free(char **names, size_t *lens, size_t n) {
    for (size_t i = 0; i < n; i++) zfree(names[i]);
    zfree(names);
    zfree(lens);
}

void pubsub_session_free(session *s) {
    for (int k = 0; k < PS_KINDS && s->pubsub; k++) { /* the last unsubscribe frees the state */
        char **names;
        size_t *lens;
        size_t n = pubsub_names(s, k, &names, &lens);
        for (size_t i = 0; i < n; i++) pubsub_unsubscribe(s, k, names[i], lens[i]);
        pubsub_names_free(names, lens, n);
    }
    if (s->pubsub) release_if_empty(s);
}

/* ---- delivery ---- */

/* Closes c (at the end of its shard's turn) when its output passes the
 * limits of its class, as Redis's checkClientOutputBufferLimits. */
static void check_limits(conn *c, ps_sess *p) {
    size_t used = c->out.len - c->out_pos;
    for (slot *sl = c->sq_head; sl; sl = sl->next) used += sl->data.len;
    int cls = pubsub_total(&c->s) ? 2 : 0;
    int64_t hard = cfg.obuf_limits[cls][0], soft = cfg.obuf_limits[cls][1], secs = cfg.obuf_limits[cls][2];
    int over = hard > 0 && (int64_t)used >= hard;
    if (soft > 0 && (int64_t)used >= soft) {
        int64_t now = c->sh->now_ms / 1000;
        if (!p->soft_since)
            p->soft_since = now;
        else if (now - p->soft_since > secs)
            over = 1;
    } else {
        p->soft_since = 0;
    }
    if (!over) return;
    log_msg(LOG_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
            (unsigned long long)c->s.id, c->addr);
    conn_mark_killed(c);
    shard_add_pending(c->sh, c); /* conn_process closes it this turn */
}

static void push_to(session *s, const buf *b) {
    conn *c = s->conn;
    if (c && (c->closed || __atomic_load_n(&c->s.killed, __ATOMIC_RELAXED))) return;
    /* A subscriber that never quite catches up never empties its buffer,
     * which is only reset when all of it was written: drop the written
     * part once it is most of the buffer, or it would grow for ever. */
    if (c && c->out_pos >= 65536 && c->out_pos * 2 >= c->out.len) {
        buf_consume(&c->out, c->out_pos);
        c->out_pos = 0;
    }
    buf *o = session_reply_buf(s);
    /* Past 1 MiB buf_grow adds 1 MiB at a time, each step a copy of the
     * whole buffer: a subscriber falling behind would cost the shard a
     * quadratic amount of copying. Double instead (the output limit bounds
     * the size). */
    if (o->cap - o->len < b->len && o->len >= (1u << 20)) buf_grow(o, o->len);
    buf_add(o, b->p, b->len);
    if (c && s->pubsub) check_limits(c, s->pubsub);
    if (c) cevict_update(c); /* a subscriber that does not read grows (maxmemory-clients) */
}

/* One message in both protocols, encoded when first needed, into the
 * shard's two buffers (kept between messages up to 64 KB: a PUBLISH to one
 * subscriber allocated and freed one each time). */
typedef struct enc {
    const char *type, *pat, *ch, *msg;
    size_t typel, pl, cl, ml;
    buf *scratch; /* the shard's ps_local.enc */
    int done[2];
} enc;

static const buf *encoded(enc *e, int resp) {
    int k = resp >= 3;
    buf *b = &e->scratch[k];
    if (!e->done[k]) {
        e->done[k] = 1;
        b->len = 0;
        resp_push(b, resp, e->pat ? 4 : 3);
        resp_bulk(b, e->type, e->typel);
        if (e->pat) resp_bulk(b, e->pat, e->pl);
        resp_bulk(b, e->ch, e->cl);
        resp_bulk(b, e->msg, e->ml);
    }
    return b;
}

static void send_all(ps_subs *ss, enc *e) {
    for (uint32_t i = 0; i < ss->n; i++) push_to(ss->v[i], encoded(e, ss->v[i]->resp));
    for (int k = 0; k < 2; k++)
        if (e->scratch[k].cap > 64 * 1024) buf_free(&e->scratch[k]);
}

static long long deliver_local(int sid, int kind, const char *ch, size_t cl, const char *m, size_t ml) {
    ps_local *L = &locals[sid];
    long long n = 0;
    ps_subs *ss = local_find(L, kind, ch, cl);
    if (ss && kind == PS_MONITOR) { /* the line is ready to send */
        buf line = {.p = (char *)m, .len = ml, .cap = ml};
        for (uint32_t i = 0; i < ss->n; i++) push_to(ss->v[i], &line);
        return ss->n;
    }
    if (ss) {
        enc e = {.type = kind == PS_SHARD ? "smessage" : "message", .ch = ch, .msg = m, .cl = cl, .ml = ml,
                 .scratch = L->enc};
        e.typel = kind == PS_SHARD ? 8 : 7;
        n += ss->n;
        send_all(ss, &e);
    }
    if (kind != PS_CHANNEL) return n;
    for (size_t i = 0; i < L->npats; i++) {
        ps_subs *p = L->pats[i];
        if (!glob_match(p->name, p->len, ch, cl, 0)) continue;
        enc e = {.type = "pmessage", .typel = 8, .pat = p->name, .pl = p->len, .ch = ch, .cl = cl, .msg = m, .ml = ml,
                 .scratch = L->enc};
        n += p->n;
        send_all(p, &e);
    }
    return n;
}

/* Record layout in an SM_PUBLISH message's args: kind (1 byte), channel
 * length (4), channel, message length (4), message. */
void pubsub_record(shard *sh, int to, int kind, const char *ch, size_t cl, const char *m, size_t ml) {
    ps_local *L = &locals[sh->id];
    msg *x = L->open[to];
    if (x && x->args.len > (1u << 20)) { /* a big one goes now, the rest in a new message */
        shard_send(sh, to, x);
        x = L->open[to] = NULL;
        L->nopen--;
    }
    if (!x) {
        x = L->open[to] = msg_new(SM_PUBLISH, sh->id);
        L->nopen++;
    }
    uint8_t k = (uint8_t)kind;
    uint32_t a = (uint32_t)cl, b = (uint32_t)ml;
    buf_reserve(&x->args, 9 + cl + ml);
    buf_add(&x->args, &k, 1);
    buf_add(&x->args, &a, 4);
    buf_add(&x->args, ch, cl);
    buf_add(&x->args, &b, 4);
    buf_add(&x->args, m, ml);
}

void pubsub_flush(shard *sh) {
    tracking_turn_end(sh); /* its deliveries, and records for other shards */
    ps_local *L = &locals[sh->id];
    if (!L->nopen) return;
    for (int to = 0; to < nshards; to++) {
        if (!L->open[to]) continue;
        shard_send(sh, to, L->open[to]);
        L->open[to] = NULL;
    }
    L->nopen = 0;
}

void pubsub_on_message(shard *sh, msg *m) {
    const char *p = m->args.p, *end = p + m->args.len;
    while (p < end) {
        uint8_t k = (uint8_t)p[0];
        uint32_t cl, ml;
        memcpy(&cl, p + 1, 4);
        const char *ch = p + 5;
        memcpy(&ml, ch + cl, 4);
        const char *body = ch + cl + 4;
        if (k < PS_KINDS) deliver_local(sh->id, k, ch, cl, body, ml);
        else tracking_on_record(sh, k, ch, cl, body, ml);
        p = body + ml;
    }
    msg_free(m);
}

int pubsub_any(void) { return __atomic_load_n(&g_subs, __ATOMIC_RELAXED) != 0; }

long long pubsub_kind_total(int kind) { return __atomic_load_n(&g_kind[kind], __ATOMIC_RELAXED); }

long long pubsub_publish(shard *sh, int kind, const char *ch, size_t cl, const char *m, size_t ml) {
    if (!pubsub_any()) return 0;
    int id = sh->id;
    long long n = deliver_local(id, kind, ch, cl, m, ml);
    if (nshards == 1) return n;
    uint64_t mask = 0;
    pthread_rwlock_rdlock(&G.lock);
    gent *e = gfind(kind, ch, cl, name_hash(kind, ch, cl));
    if (e && e->total > e->cnt[id]) {
        for (int s = 0; s < nshards; s++) {
            if (s == id || !e->cnt[s]) continue;
            n += e->cnt[s];
            mask |= 1ull << s;
        }
    }
    if (kind == PS_CHANNEL) {
        for (size_t i = 0; i < G.npats; i++) {
            gent *p = G.pats[i];
            if (p->total == p->cnt[id] || !glob_match(p->name, p->len, ch, cl, 0)) continue;
            for (int s = 0; s < nshards; s++) {
                if (s == id || !p->cnt[s]) continue;
                n += p->cnt[s];
                mask |= 1ull << s;
            }
        }
    }
    pthread_rwlock_unlock(&G.lock);
    for (int s = 0; mask; s++, mask >>= 1)
        if (mask & 1) pubsub_record(sh, s, kind, ch, cl, m, ml);
    return n;
}

/* ---- introspection ---- */

long long pubsub_list(int kind, const char *pat, size_t pl, buf *out) {
    long long n = 0;
    pthread_rwlock_rdlock(&G.lock);
    for (size_t i = 0; i < G.nb; i++) {
        for (gent *e = G.b[i]; e; e = e->next) {
            if (e->kind != (uint32_t)kind || (pat && !glob_match(pat, pl, e->name, e->len, 0))) continue;
            resp_bulk(out, e->name, e->len);
            n++;
        }
    }
    pthread_rwlock_unlock(&G.lock);
    return n;
}

long long pubsub_numsub(int kind, const char *name, size_t len) {
    pthread_rwlock_rdlock(&G.lock);
    gent *e = gfind(kind, name, len, name_hash(kind, name, len));
    long long n = e ? e->total : 0;
    pthread_rwlock_unlock(&G.lock);
    return n;
}

long long pubsub_active(int kind) {
    pthread_rwlock_rdlock(&G.lock);
    long long n = G.active[kind];
    pthread_rwlock_unlock(&G.lock);
    return n;
}
