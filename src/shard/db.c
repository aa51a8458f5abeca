/* db.c - see db.h. */
#include "shard/db.h"
#include "lib/mem.h"
#include "persist/snapshot.h"
#include "shard/watch.h"
#include "persist/aof.h"
#include "shard/notify.h"
#include "shard/tracking.h"
#include "shard/block.h"
#include "shard/lazyfree.h"
#include "shard/shard.h"

static const type_ops *types[8];

void db_register_type(int type, const type_ops *ops) { types[type & 7] = ops; }
const type_ops *db_type_ops(int type) { return types[type & 7]; }

void entry_free(entry *e) {
    if (entry_kind(e) == EK_OBJ) {
        const type_ops *o = types[entry_type(e)];
        void *obj = entry_obj(e);
        if (o && o->free) {
            int lazy = o->effort ? lazyfree_wanted_effort(o->effort(obj)) : o->usage && lazyfree_wanted(o->usage(obj));
            if (lazy) lazyfree_obj(o->free, obj);
            else o->free(obj);
        }
    }
    zfree(e);
}

entry *entry_copy(const entry *e, const char *key, size_t klen, int64_t ttl) {
    entry *n = entry_rekey(e, key, klen, ttl);
    if (entry_kind(e) == EK_OBJ) {
        const type_ops *o = types[entry_type(e)];
        entry_set_obj(n, o && o->copy ? o->copy(entry_obj(e)) : NULL);
    }
    return n;
}

size_t entry_usage(const entry *e) {
    size_t n = entry_alloc_size(e) + sizeof(entry *);
    if (entry_kind(e) == EK_OBJ) {
        const type_ops *o = types[entry_type(e)];
        if (o && o->usage) n += o->usage(entry_obj(e));
    }
    return n;
}

const char *entry_encoding(const entry *e) {
    switch (entry_kind(e)) {
    case EK_INT: return "int";
    case EK_EMB: return "embstr";
    case EK_RAW: return "raw";
    default: {
        const type_ops *o = types[entry_type(e)];
        return o && o->encoding ? o->encoding(entry_obj(e)) : "unknown";
    }
    }
}

const char *db_str(const entry *e, char *tmp, size_t *len) { return entry_str(e, tmp, len); }

void db_init(db *d, struct shard *owner, int id) {
    d->t = table_create();
    d->expires = 0;
    d->expire_cursor = 0;
    d->avg_ttl = 0;
    d->owner = owner;
    d->id = id;
}

void db_free(db *d) { table_destroy(&d->t, entry_free); }

void db_clear(db *d) {
    int was = lazyfree_cause(LF_SYNC); /* FLUSHALL SYNC frees everything here, as Redis */
    if (!snap_adopt_table(d)) table_destroy(&d->t, entry_free);
    lazyfree_cause(was);
    d->t = table_create();
    d->expires = 0;
    d->expire_cursor = 0;
    block_signal_db(d);
}

void db_clear_async(db *d) {
    if (table_size(d->t) == 0) {
        db_clear(d);
        return;
    }
    if (!snap_adopt_table(d)) lazyfree_table(d->t);
    d->t = table_create();
    d->expires = 0;
    d->expire_cursor = 0;
    block_signal_db(d);
}

static void count_expired(db *d) {
    if (d->owner) d->owner->stat_expired++;
}

entry **db_find_link_kept(db *d, const char *key, size_t klen, int64_t now) {
    entry **l = table_link(d->t, key, klen);
    if (l && entry_has_ttl(*l) && now > entry_expire(*l) && !aof_loading) return NULL;
    return l;
}

int db_keep_expired;
__thread int db_write_lookup;

entry **db_find_link(db *d, const char *key, size_t klen, int64_t now) {
    entry **l = table_link(d->t, key, klen);
    if (!l) return NULL;
    entry *e = *l;
    if (entry_has_ttl(e) && now > entry_expire(e) && !aof_loading) { /* AOF: nothing expires while loading */
        if (__builtin_expect(__atomic_load_n(&db_keep_expired, __ATOMIC_RELAXED), 0) && !db_write_lookup)
            return NULL; /* a replica: missing for reads, the master's DEL removes it */
        aof_feed_expired(d, key, klen);                               /* AOF: logged as DEL */
        watch_expired(d->id, key, klen, entry_expire(e));
        int was = lazyfree_cause(LF_EXPIRE);
        db_delete_link(d, l);
        lazyfree_cause(was);
        count_expired(d);
        notify_key(NOTIFY_EXPIRED, "expired", key, klen, d->id);
        if (d->owner && tracking_active()) tracking_key_changed(d->owner, 0, key, klen);
        return NULL;
    }
    return l;
}

entry *db_find(db *d, const char *key, size_t klen, int64_t now) {
    entry **l = db_find_link(d, key, klen, now);
    return l ? *l : NULL;
}

/* A key that got a value, or lost or changed it, may be what blocked
 * clients wait for: a list or sorted set to pop from, a stream to read, or
 * (XREADGROUP) the news that the stream is gone. */
static void maybe_signal(db *d, const entry *e) {
    if (d->owner && d->owner->block_waits) {
        size_t klen;
        const char *key = (const char *)entry_keyp(e, &klen);
        block_signal(d, key, klen, entry_type(e));
    }
}

static inline void mark_new(db *d, entry *e) { e->info = (uint8_t)((e->info & ~ENTRY_SNAP) | d->snap_mark); }

void db_add(db *d, entry *e) {
    mark_new(d, e);
    if (entry_has_ttl(e)) d->expires++;
    table_insert(d->t, e);
    maybe_signal(d, e);
    if (notify_wanted(NOTIFY_NEW)) {
        size_t klen;
        const char *key = (const char *)entry_keyp(e, &klen);
        notify_keyspace_event(NOTIFY_NEW, "new", key, klen, d->id);
    }
}

void db_replace(db *d, entry **link, entry *n, int keep_obj) {
    snap_touch(d, *link);
    mark_new(d, n);
    entry *old = table_replace(d->t, link, n);
    if (__atomic_load_n(&entry_lfu, __ATOMIC_RELAXED)) memcpy(n->lru, old->lru, 3); /* LFU: a new value keeps the key's counter, as Redis */
    d->expires += (size_t)entry_has_ttl(n) - (size_t)entry_has_ttl(old);
    if (keep_obj) zfree(old);
    else entry_free(old);
    maybe_signal(d, n);
}

entry *db_take(db *d, entry **link) {
    snap_touch(d, *link);
    entry *e = table_unlink(d->t, link);
    if (entry_has_ttl(e)) d->expires--;
    maybe_signal(d, e);
    return e;
}

void db_delete_link(db *d, entry **link) { entry_free(db_take(d, link)); }

int db_delete(db *d, const char *key, size_t klen, int64_t now) {
    entry **l = db_find_link(d, key, klen, now);
    if (!l) return 0;
    db_delete_link(d, l);
    return 1;
}

void db_set_expire(db *d, entry **link, int64_t when) {
    entry *e = *link;
    if (when >= 0 && entry_has_ttl(e)) {
        snap_touch(d, e);
        entry_put_expire(e, when);
        return;
    }
    if (when < 0 && !entry_has_ttl(e)) return;
    entry *n = entry_with_expire(e, when);
    db_replace(d, link, n, 1);
}

struct expire_walk {
    entry *hits[64];
    int n;
    int seen;
    int64_t now;
};

static void expire_visit(void *ud, entry *e) {
    struct expire_walk *w = ud;
    w->seen++;
    if (entry_has_ttl(e) && w->now > entry_expire(e) && w->n < 64) w->hits[w->n++] = e;
}

int db_expire_cycle(db *d, int budget, int64_t now) {
    if (d->expires == 0) return 0;
    int expired = 0;
    struct expire_walk w;
    w.seen = 0;
    w.now = now;
    while (w.seen < budget) {
        w.n = 0;
        d->expire_cursor = table_scan(d->t, d->expire_cursor, expire_visit, &w);
        for (int i = 0; i < w.n; i++) {
            size_t kl;
            const uint8_t *k = entry_keyp(w.hits[i], &kl);
            /* Re-find by key: deleting may not reorder other hits. */
            char tmp[256];
            char *kc = kl <= sizeof tmp ? tmp : zmalloc(kl);
            memcpy(kc, k, kl);
            db_find(d, kc, kl, now); /* deletes it: it is past its deadline */
            expired++;
            if (kc != tmp) zfree(kc);
        }
        if (d->expire_cursor == 0 || d->expires == 0) break;
    }
    return expired;
}
