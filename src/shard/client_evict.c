/* client_evict.c - see client_evict.h.
 *
 *   shard A: sum 3.1 MB  top bucket 2 MB-4 MB  [c7 3.0 MB]  [c2 40 KB, c9 33 KB]
 *   shard B: sum 0.4 MB  top bucket 256-512 KB [c4 300 KB]
 *   limit 3 MB, figure 3.5 MB: B (its clients grew) sees A's top is higher
 *   and pokes A; A closes c7, reads the sums again (0.5 MB) and stops.
 */
#include "shard/client_evict.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "net/conn.h"
#include "server/config.h"
#include "shard/pubsub.h"

#define CEVICT_MIN_LIMIT (128 * 1024) /* Redis's floor: a tiny limit must not cut every client off */
#define BUCKET_MIN_LOG 15             /* the first bucket holds up to 32 KB */
#define BUCKET_MAX_LOG 33

static uint64_t cevict_epoch; /* atomic: bumped by cevict_all (a CONFIG SET of the limit) */

int64_t cevict_limit(void) {
    int64_t v = cfg_get(maxmemory_clients), lim;
    if (v < 0) {
        int64_t max = cfg_get(maxmemory);
        if (max <= 0) return 0;
        lim = (int64_t)((double)max * (double)-v / 100.0);
    } else {
        lim = v;
    }
    if (lim == 0) return 0;
    return lim < CEVICT_MIN_LIMIT ? CEVICT_MIN_LIMIT : lim;
}

static int bucket_of(int64_t m) {
    int bits = m > 0 ? 64 - __builtin_clzll((unsigned long long)m) : 0;
    if (bits > BUCKET_MAX_LOG) bits = BUCKET_MAX_LOG;
    if (bits < BUCKET_MIN_LOG) bits = BUCKET_MIN_LOG;
    return bits - BUCKET_MIN_LOG;
}

static int evictable(const conn *c) { return !(__atomic_load_n(&c->s.flags, __ATOMIC_RELAXED) & SESS_NO_EVICT); }

/* ---- the shard's lists (its thread) ---- */

static void publish_top(shard *s) {
    int top = CEVICT_BUCKETS - 1;
    while (top >= 0 && !s->ce_head[top])
        top--;
    __atomic_store_n(&s->ce_top, top + 1, __ATOMIC_RELAXED); /* 0: no evictable client */
}

static void unlink_conn(shard *s, conn *c) {
    int b = c->ce_bucket;
    if (b < 0) return;
    if (c->ce_prev) c->ce_prev->ce_next = c->ce_next;
    else s->ce_head[b] = c->ce_next;
    if (c->ce_next) c->ce_next->ce_prev = c->ce_prev;
    else s->ce_tail[b] = c->ce_prev;
    c->ce_prev = c->ce_next = NULL;
    c->ce_bucket = -1;
    if (!s->ce_head[b]) publish_top(s);
}

/* At the tail, as Redis appends a client that enters a bucket: the head is
 * the one that has been that large the longest, and goes first. */
static void link_conn(shard *s, conn *c, int b) {
    c->ce_bucket = b;
    c->ce_next = NULL;
    c->ce_prev = s->ce_tail[b];
    if (s->ce_tail[b]) s->ce_tail[b]->ce_next = c;
    else s->ce_head[b] = c;
    s->ce_tail[b] = c;
    if (!c->ce_prev) publish_top(s);
}

static void add_sum(shard *s, int64_t d) {
    if (d) __atomic_store_n(&s->ce_sum, s->ce_sum + d, __ATOMIC_RELAXED);
}

static int64_t own_figure(shard *s) { return s->ce_sum - __atomic_load_n(&s->ce_dying, __ATOMIC_RELAXED); }

/* Every shard's clients, read now: one line per shard, which the others
 * write, so the request path reads it at most once per millisecond. */
static int64_t server_figure(void) {
    int64_t t = 0;
    for (int i = 0; i < nshards; i++)
        t += __atomic_load_n(&shards[i]->ce_sum, __ATOMIC_RELAXED) - __atomic_load_n(&shards[i]->ce_dying, __ATOMIC_RELAXED);
    return t;
}

static void read_others(shard *s) {
    s->ce_others = server_figure() - own_figure(s);
    s->ce_others_ms = s->now_ms;
}

/* Counts c again; check: ask for an eviction when it grew and the server
 * may be over the limit. */
static void recount(shard *s, conn *c, int check) {
    if (c->closed || __atomic_load_n(&c->s.killed, __ATOMIC_RELAXED)) return;
    size_t pending = conn_obuf_pending(c);
    if (pending) {
        int cls = pubsub_total(&c->s) ? 2 : 0;
        int64_t hard = cfg.obuf_limits[cls][0];
        if (hard > 0 && (int64_t)pending >= hard) {
            /* the output limit goes first: this client closes for it (not
             * counted as evicted) and its memory leaves the sum now */
            log_msg(LOG_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
                    (unsigned long long)c->s.id, c->addr);
            unlink_conn(s, c);
            add_sum(s, -c->ce_mem);
            c->ce_mem = 0;
            conn_mark_killed(c);
            __atomic_store_n(&s->kill_reqs, 1, __ATOMIC_RELEASE); /* closed at the next safe point */
            return;
        }
    }
    int64_t m = (int64_t)conn_mem(c), old = c->ce_mem;
    int b = evictable(c) ? bucket_of(m) : -1, ob = c->ce_bucket;
    if (m == old && b == ob) return;
    add_sum(s, m - old);
    c->ce_mem = m;
    if (b != ob) {
        unlink_conn(s, c);
        if (b >= 0) link_conn(s, c, b);
    }
    if (!check || (m <= old && (b < 0 || ob >= 0))) return;
    int64_t limit = cevict_limit();
    if (limit <= 0) return;
    if (s->ce_others_ms != s->now_ms) read_others(s);
    if (own_figure(s) + s->ce_others >= limit) s->ce_check = 1;
}

void cevict_sync(shard *s) {
    uint64_t e = __atomic_load_n(&cevict_epoch, __ATOMIC_ACQUIRE);
    if (s->ce_epoch == e) return;
    s->ce_epoch = e;
    int on = cfg_get(maxmemory_clients) != 0;
    int64_t sum = 0;
    for (int b = 0; b < CEVICT_BUCKETS; b++)
        s->ce_head[b] = s->ce_tail[b] = NULL;
    for (conn *c = s->conns; c; c = c->all_next) {
        c->ce_bucket = -1;
        c->ce_prev = c->ce_next = NULL;
        /* one chosen by cevict_all counts what it marked until it closes */
        c->ce_mem = __atomic_load_n(&c->s.killed, __ATOMIC_RELAXED) ? __atomic_load_n(&c->ce_marked, __ATOMIC_RELAXED) : 0;
        sum += c->ce_mem;
    }
    __atomic_store_n(&s->ce_sum, sum, __ATOMIC_RELAXED);
    publish_top(s);
    s->ce_others_ms = -1;
    if (!on) return;
    for (conn *c = s->conns; c; c = c->all_next) recount(s, c, 0);
    s->ce_check = 1; /* the new limit may be passed already */
}

void cevict_update(conn *c) {
    if (!cfg_get(maxmemory_clients)) return;
    shard *s = c->sh;
    if (s->ce_epoch != __atomic_load_n(&cevict_epoch, __ATOMIC_RELAXED)) {
        cevict_sync(s); /* counts c too */
        return;
    }
    recount(s, c, 1);
}

void cevict_conn_closed(conn *c) {
    shard *s = c->sh;
    unlink_conn(s, c);
    add_sum(s, -c->ce_mem);
    c->ce_mem = 0;
    /* (a plain load first: most connections were never marked) */
    int64_t marked = __atomic_load_n(&c->ce_marked, __ATOMIC_RELAXED) ? __atomic_exchange_n(&c->ce_marked, 0, __ATOMIC_RELAXED) : 0;
    if (marked) __atomic_sub_fetch(&s->ce_dying, marked, __ATOMIC_RELAXED);
    if (__atomic_load_n(&c->ce_evicted, __ATOMIC_RELAXED)) s->stat_evicted_clients++;
}

static void log_evicted(conn *c) {
    buf o = {0};
    conn_describe(c, &o, mstime());
    if (o.len && o.p[o.len - 1] == '\n') o.len--;
    log_msg(LOG_NOTICE, "Evicting client: %.*s", (int)o.len, o.p ? o.p : "");
    buf_free(&o);
}

static void warn_over(shard *s) {
    static _Thread_local int64_t last;
    if (s->now_ms - last < 1000) return; /* Redis says it at every check; once a second is enough */
    last = s->now_ms;
    log_msg(LOG_WARNING, "Over client maxmemory after evicting all evictable clients");
}

void cevict_run(shard *s) {
    s->ce_check = 0;
    if (__atomic_load_n(&s->ce_poke, __ATOMIC_RELAXED)) __atomic_store_n(&s->ce_poke, 0, __ATOMIC_RELAXED);
    int64_t limit = cevict_limit();
    if (limit <= 0) return;
    cevict_sync(s);
    /* Each round closes one client or stops, and reads the sums again, so
     * other shards' evictions count as soon as they happen. */
    for (int rounds = 0; rounds < 1000000; rounds++) {
        int64_t total = server_figure();
        s->ce_others = total - own_figure(s);
        s->ce_others_ms = s->now_ms;
        if (total < limit) return;
        int top = __atomic_load_n(&s->ce_top, __ATOMIC_RELAXED) - 1, best = -1, who = -1;
        for (int i = 0; i < nshards; i++) {
            if (i == s->id) continue;
            int t = __atomic_load_n(&shards[i]->ce_top, __ATOMIC_RELAXED) - 1;
            if (t > best) {
                best = t;
                who = i;
            }
        }
        if (top < 0 || top < best) {
            if (best >= 0) { /* larger clients live on another shard: they go first */
                __atomic_store_n(&shards[who]->ce_poke, 1, __ATOMIC_RELAXED);
                shard_wake(shards[who]);
            } else {
                warn_over(s);
            }
            return;
        }
        conn *v = s->ce_head[top];
        if (!__atomic_load_n(&v->s.killed, __ATOMIC_RELAXED)) { /* (a killed one just closes) */
            log_evicted(v);
            __atomic_store_n(&v->ce_evicted, 1, __ATOMIC_RELAXED);
        }
        conn_close(v); /* leaves the bucket and the sum (cevict_conn_closed) */
    }
}

/* ---- every shard at once (CONFIG SET) ---- */

/* Marks x (of shard sh, whose conns_lock is held) for its shard to close. */
static void mark(shard *sh, conn *x, int64_t m) {
    log_evicted(x);
    __atomic_store_n(&x->ce_evicted, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&x->ce_marked, m, __ATOMIC_RELAXED);
    __atomic_add_fetch(&sh->ce_dying, m, __ATOMIC_RELAXED);
    conn_mark_killed(x);
    __atomic_store_n(&sh->kill_reqs, 1, __ATOMIC_RELEASE);
}

static int live(conn *x) { return !x->closed && !__atomic_load_n(&x->s.killed, __ATOMIC_RELAXED); }

void cevict_all(void) {
    int64_t limit = cevict_limit();
    int64_t total = 0, per[CEVICT_BUCKETS] = {0};
    for (int i = 0; i < nshards; i++) {
        shard *sh = shards[i];
        pthread_mutex_lock(&sh->conns_lock);
        for (conn *x = sh->conns; x && limit > 0; x = x->all_next) {
            if (!live(x)) continue;
            int64_t m = (int64_t)conn_mem(x);
            total += m;
            if (evictable(x)) per[bucket_of(m)] += m;
        }
        pthread_mutex_unlock(&sh->conns_lock);
    }
    if (limit > 0 && total >= limit) {
        /* Whole buckets from the largest down, then as many of the last
         * bucket's clients as make the figure drop under the limit. */
        int64_t need = total - limit + 1;
        int cut = CEVICT_BUCKETS - 1;
        while (cut >= 0 && need > per[cut])
            need -= per[cut--];
        if (cut < 0) log_msg(LOG_WARNING, "Over client maxmemory after evicting all evictable clients");
        for (int i = 0; i < nshards; i++) {
            shard *sh = shards[i];
            int marked = 0;
            pthread_mutex_lock(&sh->conns_lock);
            for (conn *x = sh->conns; x; x = x->all_next) {
                if (!live(x) || !evictable(x)) continue;
                int64_t m = (int64_t)conn_mem(x);
                int b = bucket_of(m);
                if (b < cut || (b == cut && need <= 0)) continue;
                if (b == cut) need -= m;
                mark(sh, x, m);
                marked = 1;
            }
            pthread_mutex_unlock(&sh->conns_lock);
            if (marked) shard_wake(sh);
        }
    }
    /* Each shard rebuilds its sums now, with the chosen clients marked (a
     * shard that rebuilt before the marks were all made would count the
     * other shards' chosen clients and evict one of its own for them). */
    __atomic_add_fetch(&cevict_epoch, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < nshards; i++) shard_wake(shards[i]);
}

int64_t cevict_excess(void) {
    int64_t limit = cevict_limit();
    if (limit <= 0) return 0;
    int any = 0;
    for (int i = 0; i < nshards && !any; i++) any = __atomic_load_n(&shards[i]->ce_top, __ATOMIC_RELAXED) != 0;
    if (!any) return 0; /* nobody to evict: the keys pay, as in Redis */
    int64_t fig = server_figure() + __atomic_load_n(&shard_replies_in_flight, __ATOMIC_RELAXED);
    return fig > limit ? fig - limit : 0;
}

uint64_t cevict_evicted_total(void) {
    uint64_t n = 0;
    for (int i = 0; i < nshards; i++) n += __atomic_load_n(&shards[i]->stat_evicted_clients, __ATOMIC_RELAXED);
    return n;
}

int64_t cevict_clients_mem(shard *s) {
    if (cfg_get(maxmemory_clients)) return __atomic_load_n(&s->ce_sum, __ATOMIC_RELAXED);
    int64_t sum = 0;
    for (conn *c = s->conns; c; c = c->all_next) sum += (int64_t)conn_mem(c);
    return sum;
}
