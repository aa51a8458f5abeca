/* snapshot.c - see snapshot.h.
 *
 *   shard threads                         writer thread
 *   snap_step / snap_save_entry           pops chunks, writes them,
 *     -> part.cur (SELECTDB + keys)       then EOF + CRC, fsync, rename
 *     -> chunk queue (mutex, bounded)  ->
 *
 * One snapshot at a time (`current`). A part belongs to its shard: only the
 * shard's thread, or a transaction holding the shard, touches it. The
 * snapshot struct is shared through its mutex; the writer frees it after
 * the last part finished. */
#include "persist/snapshot.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "persist/rdb.h"
#include "server/config.h"
#include "shard/lazyfree.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHUNK_BYTES (256u << 10)  /* hand a chunk to the writer past this */
#define QUEUE_LIMIT (2u << 20)    /* pause the walks while this much waits */
#define STEP_BYTES (1u << 20)     /* serialized bytes per loop turn at most */
#define STEP_US 100               /* and about this long */

typedef struct chunk {
    struct chunk *next;
    buf b;
    uint64_t keys;
} chunk;

typedef struct snapshot {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk *head, *tail;
    size_t queued;   /* bytes in the queue (read without the lock as a hint) */
    int parts_left;  /* shards still walking */
    int abort;
    int refs;        /* the writer and each walking part; the last one frees */
    rdb_file f;
    char path[1024];
    int ids[MAX_SHARDS];
    uint64_t dirty_at_cut[MAX_SHARDS];
    int n;
    int64_t start_us;
    int kind;
    snap_done_fn *done;
    void *done_arg;
} snapshot;

typedef struct snap_part snap_part;
struct snap_part {
    snapshot *s;
    table **tables;   /* [databases]: each database's table at the cut */
    table **adopted;  /* tables FLUSHDB gave up, freed at the end */
    int nadopted, adopted_cap;
    int ndb, dbi;     /* the walk: database index and table cursor */
    uint64_t cursor;
    buf cur;          /* chunk being filled */
    int cur_db;       /* database of its last SELECTDB, -1 before one */
    int64_t now;
    int lru;
    uint8_t mark;     /* the shard's ENTRY_SNAP mark since the cut */
    uint64_t bytes;   /* serialized so far */
    uint64_t cur_keys; /* keys in cur */
};

int snap_parts_running;
int snap_last_ok = 1;
int64_t snap_last_seconds = -1;
int64_t snap_started_ms;
int64_t snap_last_try_ms;
uint64_t snap_keys_done;
uint64_t snap_keys_total;

static pthread_mutex_t current_mu = PTHREAD_MUTEX_INITIALIZER;
static snapshot *current;
static int writer_alive; /* atomic: the writer thread has not finished */
static int running_kind; /* atomic: kind of the running snapshot */

int snap_running_kind(void) { return snap_running() ? __atomic_load_n(&running_kind, __ATOMIC_RELAXED) : SNAP_NONE; }

int snap_running(void) {
    return __atomic_load_n(&writer_alive, __ATOMIC_ACQUIRE) || __atomic_load_n(&snap_parts_running, __ATOMIC_ACQUIRE);
}

static void snapshot_unref(snapshot *s);

/* ---- the writer thread ---- */

static void finish(snapshot *s, int ok, const char *err) {
    int64_t secs = (mono_us() - s->start_us + 500000) / 1000000;
    if (s->done) s->done(ok, s->done_arg);
    if (s->kind != SNAP_RDB) {
        if (!ok) log_msg(LOG_WARNING, "Background AOF rewrite error: %s", err);
        return;
    }
    if (ok) {
        for (int i = 0; i < s->n; i++)
            __atomic_store_n(&shards[s->ids[i]]->dirty_saved, s->dirty_at_cut[i], __ATOMIC_RELAXED);
        __atomic_store_n(&rdb_last_save_time, mstime() / 1000, __ATOMIC_RELAXED);
        log_msg(LOG_NOTICE, "Background saving terminated with success");
    } else {
        log_msg(LOG_WARNING, "Background saving error: %s", err);
    }
    __atomic_store_n(&snap_last_ok, ok, __ATOMIC_RELAXED);
    __atomic_store_n(&snap_last_seconds, secs, __ATOMIC_RELAXED);
}

static void *writer_main(void *arg) {
    snapshot *s = arg;
    pthread_setname_np(pthread_self(), "bgsave");
    /* Lowest priority: a shard sharing this core preempts the writer at
     * once; when the walks outrun it, the full queue pauses them and the
     * shards sleep, which leaves the core to the writer. */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->head && s->parts_left > 0 && !s->abort) pthread_cond_wait(&s->cv, &s->mu);
        chunk *c = s->abort ? NULL : s->head;
        if (c) {
            s->head = c->next;
            if (!s->head) s->tail = NULL;
            __atomic_store_n(&s->queued, s->queued - c->b.len, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&s->mu);
        if (!c) break;
        rdb_file_write(&s->f, c->b.p, c->b.len);
        /* Each chunk ends the writer's claim on the core: a shard still
         * runnable there goes first instead of waiting out the writer's
         * drain of the whole queue (up to 2 MB, about 2 ms here) or the
         * next scheduler tick. Shard turns over 1.5 ms during a 3M-key
         * save: 12-13 -> 1-3; worst PING 3.2-4.2 -> 2.0-2.4 ms. */
        sched_yield();
        int64_t delay = cfg_get(rdb_key_save_delay); /* testing aid, as Redis's: microseconds per key */
        for (uint64_t k = 0; delay > 0 && k < c->keys && !__atomic_load_n(&s->abort, __ATOMIC_RELAXED); k++)
            usleep((useconds_t)delay);
        buf_free(&c->b);
        zfree(c);
    }
    char err[512] = "";
    /* Under current_mu: once snap_abort returns, no rename can follow. */
    pthread_mutex_lock(&current_mu);
    int ok = !s->abort && rdb_file_commit(&s->f, s->path, err, sizeof err) == 0;
    if (s->abort) {
        rdb_file_abandon(&s->f);
        if (s->done) s->done(0, s->done_arg);
    } else {
        finish(s, ok, err);
    }
    current = NULL;
    pthread_mutex_unlock(&current_mu);
    __atomic_store_n(&writer_alive, 0, __ATOMIC_RELEASE);
    snapshot_unref(s);
    return NULL;
}

/* ---- the shard side ---- */

/* Hands part p's chunk to the writer; last: p's walk is over. */
static void push_chunk(snap_part *p, int last) {
    snapshot *s = p->s;
    chunk *c = NULL;
    if (p->cur.len) {
        c = zmalloc(sizeof *c);
        c->next = NULL;
        c->b = p->cur;
        c->keys = p->cur_keys;
        memset(&p->cur, 0, sizeof p->cur);
        p->cur_db = -1;
        p->cur_keys = 0;
    }
    pthread_mutex_lock(&s->mu);
    if (c && s->abort) { /* nobody writes any more */
        buf_free(&c->b);
        zfree(c);
        c = NULL;
    }
    if (c) {
        if (s->tail) s->tail->next = c;
        else s->head = c;
        s->tail = c;
        __atomic_store_n(&s->queued, s->queued + c->b.len, __ATOMIC_RELAXED);
    }
    if (last) s->parts_left--;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void snapshot_unref(snapshot *s) {
    if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    for (chunk *k = s->head, *nx; k; k = nx) {
        nx = k->next;
        buf_free(&k->b);
        zfree(k);
    }
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    zfree(s);
}

static size_t chunk_bytes(void) { return cfg_get(rdb_key_save_delay) > 0 ? 1024 : CHUNK_BYTES; }

static void put_entry(snap_part *p, int dbid, const entry *e) {
    if (!p->cur.cap) buf_reserve(&p->cur, chunk_bytes() + chunk_bytes() / 4); /* no doubling past a chunk */
    if (p->cur_db != dbid) {
        rdb_put_selectdb(&p->cur, dbid);
        p->cur_db = dbid;
    }
    size_t before = p->cur.len;
    if (rdb_put_key(&p->cur, e, p->now, p->lru)) {
        p->cur_keys++;
        __atomic_add_fetch(&snap_keys_done, 1, __ATOMIC_RELAXED);
    }
    p->bytes += p->cur.len - before;
    if (p->cur.len >= chunk_bytes()) push_chunk(p, 0);
}

void snap_save_entry(db *d, entry *e) {
    snap_part *p = d->owner->snap;
    e->info = (uint8_t)((e->info & ~ENTRY_SNAP) | d->snap_mark);
    for (int i = 0; i < p->ndb; i++)
        if (p->tables[i] == d->t) {
            put_entry(p, i, e);
            return;
        }
}

void snap_touch_key(db *d, const char *key, size_t klen) {
    if (!d->owner || !d->owner->snap) return;
    entry **l = table_link(d->t, key, klen);
    if (l) snap_touch(d, *l);
}

int snap_adopt_table(db *d) {
    snap_part *p = d->owner ? d->owner->snap : NULL;
    if (!p) return 0;
    int captured = 0;
    for (int i = 0; i < p->ndb; i++) captured |= p->tables[i] == d->t;
    if (!captured) return 0;
    if (p->nadopted == p->adopted_cap) {
        p->adopted_cap = p->adopted_cap ? p->adopted_cap * 2 : 4;
        p->adopted = zrealloc(p->adopted, sizeof(table *) * (size_t)p->adopted_cap);
    }
    p->adopted[p->nadopted++] = d->t;
    return 1;
}

static void walk_visit(void *ud, entry *e) {
    snap_part *p = ud;
    if ((e->info & ENTRY_SNAP) == p->mark) return; /* saved by a write hook, or added after the cut */
    e->info = (uint8_t)((e->info & ~ENTRY_SNAP) | p->mark);
    if (!__atomic_load_n(&p->s->abort, __ATOMIC_RELAXED)) put_entry(p, p->dbi, e);
}

/* The walk is over: last chunk, adopted tables freed, the part gone. */
static void part_end(shard *sh, snap_part *p) {
    push_chunk(p, 1);
    snapshot_unref(p->s);
    for (int i = 0; i < p->nadopted; i++) lazyfree_table(p->adopted[i]);
    zfree(p->adopted);
    zfree(p->tables);
    buf_free(&p->cur);
    zfree(p);
    sh->snap = NULL;
    __atomic_sub_fetch(&snap_parts_running, 1, __ATOMIC_RELAXED);
}

/* With rdb-key-save-delay (a testing aid) the walk keeps pace with the
 * slowed writer, so writes meet keys not saved yet. */
static size_t queue_limit(void) { return cfg_get(rdb_key_save_delay) > 0 ? (16u << 10) : QUEUE_LIMIT; }
static uint64_t step_bytes(void) { return cfg_get(rdb_key_save_delay) > 0 ? (4u << 10) : STEP_BYTES; }

int snap_backlogged(shard *sh) { return __atomic_load_n(&sh->snap->s->queued, __ATOMIC_RELAXED) > queue_limit(); }

void snap_run_inline(void) {
    for (int i = 0; i < nshards; i++)
        while (shards[i]->snap) {
            if (snap_backlogged(shards[i])) usleep(1000);
            snap_step(shards[i]);
        }
}

void snap_step(shard *sh) {
    snap_part *p = sh->snap;
    if (snap_backlogged(sh)) return; /* the disk is behind */
    int64_t t0 = mono_us();
    uint64_t b0 = p->bytes;
    for (int n = 0; p->dbi < p->ndb; n++) {
        p->cursor = table_scan(p->tables[p->dbi], p->cursor, walk_visit, p);
        if (p->cursor == 0) p->dbi++;
        if (p->bytes - b0 >= step_bytes()) break;
        if ((n & 31) == 31 && mono_us() - t0 >= STEP_US) break;
    }
    if (p->dbi == p->ndb) part_end(sh, p);
}

/* After the header: SELECTDB + RESIZEDB of every database at the cut, so
 * a loader can size its tables before the keys come. */
static void put_sizes(buf *o, const int *ids, int n, int ndb) {
    for (int d = 0; d < ndb; d++) {
        size_t keys = 0, expires = 0;
        for (int i = 0; i < n; i++) {
            keys += table_size(shards[ids[i]]->dbs[d].t);
            expires += shards[ids[i]]->dbs[d].expires;
        }
        if (keys) rdb_put_resizedb(o, d, keys, expires);
    }
}

/* Takes back a cut whose writer never started (the caller still holds
 * every shard, so no entry changed mark). */
static void cancel(snapshot *s) {
    for (int i = 0; i < s->n; i++) {
        shard *sh = shards[s->ids[i]];
        snap_part *p = sh->snap;
        for (int d = 0; d < p->ndb; d++) sh->dbs[d].snap_mark ^= ENTRY_SNAP;
        zfree(p->tables);
        zfree(p);
        sh->snap = NULL;
    }
    buf_free(&s->head->b);
    zfree(s->head);
    rdb_file_abandon(&s->f);
    pthread_mutex_lock(&current_mu);
    current = NULL;
    pthread_mutex_unlock(&current_mu);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    zfree(s);
    __atomic_store_n(&snap_parts_running, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&writer_alive, 0, __ATOMIC_RELEASE);
}

int snap_start(const int *ids, int n, const char *path, int64_t now_ms, int kind, snap_done_fn *done, void *arg,
               char *err, size_t errlen) {
    if (snap_running()) {
        snprintf(err, errlen, "Background save already in progress");
        return -1;
    }
    snapshot *s = zcalloc(sizeof *s);
    char tmp[64];
    snprintf(tmp, sizeof tmp, kind == SNAP_RDB ? "temp-bgsave-%d.rdb" : "temp-rewriteaof-bg-%d.aof", (int)getpid());
    if (kind == SNAP_RDB) __atomic_store_n(&snap_last_try_ms, now_ms, __ATOMIC_RELAXED);
    if (rdb_file_open(&s->f, tmp, err, errlen) < 0) {
        zfree(s);
        if (kind == SNAP_RDB) __atomic_store_n(&snap_last_ok, 0, __ATOMIC_RELAXED);
        return -1;
    }
    s->kind = kind;
    s->done = done;
    s->done_arg = arg;
    __atomic_store_n(&running_kind, kind, __ATOMIC_RELAXED);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    snprintf(s->path, sizeof s->path, "%s", path);
    s->n = n;
    s->parts_left = n;
    s->refs = n + 1;
    s->start_us = mono_us();
    buf hdr = {0};
    rdb_put_header(&hdr, now_ms);
    chunk *c = zcalloc(sizeof *c);
    c->b = hdr;
    s->head = s->tail = c;
    s->queued = hdr.len;
    int ndb = (int)cfg.databases_i, lru = rdb_lru_wanted();
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        shard *sh = shards[ids[i]];
        s->ids[i] = ids[i];
        s->dirty_at_cut[i] = sh->dirty;
        snap_part *p = zcalloc(sizeof *p);
        p->s = s;
        p->ndb = ndb;
        p->tables = zmalloc(sizeof(table *) * (size_t)ndb);
        p->cur_db = -1;
        p->now = now_ms;
        p->lru = lru;
        for (int d = 0; d < ndb; d++) {
            sh->dbs[d].snap_mark ^= ENTRY_SNAP; /* every entry now reads "not saved yet" */
            p->tables[d] = sh->dbs[d].t;
            total += table_size(p->tables[d]);
        }
        p->mark = sh->dbs[0].snap_mark;
        sh->snap = p;
    }
    put_sizes(&s->head->b, ids, n, ndb);
    __atomic_store_n(&s->queued, s->head->b.len, __ATOMIC_RELAXED);
    if (kind == SNAP_RDB) __atomic_add_fetch(&rdb_saves, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&snap_keys_done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&snap_keys_total, total, __ATOMIC_RELAXED);
    __atomic_store_n(&snap_started_ms, now_ms, __ATOMIC_RELAXED);
    __atomic_store_n(&snap_parts_running, n, __ATOMIC_RELAXED);
    __atomic_store_n(&writer_alive, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&current_mu);
    current = s;
    pthread_mutex_unlock(&current_mu);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, writer_main, s);
    pthread_attr_destroy(&attr);
    if (rc != 0) { /* undo the cut: nothing was written yet */
        snprintf(err, errlen, "Can't save in background: %s", strerror(rc));
        cancel(s);
        return -1;
    }
    log_msg(LOG_NOTICE, kind == SNAP_RDB ? "Background saving started" : "Background append only file rewriting started");
    return 0;
}

void snap_drop_parts(const int *ids, int n) {
    for (int i = 0; i < n; i++) {
        shard *sh = shards[ids[i]];
        if (sh->snap && __atomic_load_n(&sh->snap->s->abort, __ATOMIC_RELAXED)) part_end(sh, sh->snap);
    }
}

void snap_abort(void) {
    pthread_mutex_lock(&current_mu);
    snapshot *s = current;
    if (s) {
        pthread_mutex_lock(&s->mu);
        __atomic_store_n(&s->abort, 1, __ATOMIC_RELAXED);
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
        log_msg(LOG_WARNING, "Background saving aborted");
    }
    pthread_mutex_unlock(&current_mu);
    for (int i = 0; i < 5000 && __atomic_load_n(&writer_alive, __ATOMIC_ACQUIRE); i++) usleep(1000);
}
