/* master.c - the replication stream, its blocks and the attached replicas;
 * see master.h.
 *
 * Offsets count stream bytes since the server started (INFO's
 * master_repl_offset). A block holds bytes [start, start + len) of the
 * stream; a replica has been given bytes [0, sent). Blocks go from the head
 * once every replica has read past them and at least repl-backlog-size
 * newer bytes exist. One mutex (R.lock) guards the blocks, the list of
 * replicas and their shared fields; the writer's lock (aof.c) is taken
 * before it, never after. */
#include "repl/master.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "net/conn.h"
#include "persist/aof.h"
#include "persist/aof_parse.h"
#include "persist/rdb.h"
#include "persist/snapshot.h"
#include "server/config.h"
#include "shard/evict.h"
#include "shard/shard.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PEERS 64
#define BLOCK_MIN (16 * 1024) /* as Redis's PROTO_REPLY_CHUNK_BYTES: what stays counted as backlog stays small */
#define PUMP_CHUNK (256 * 1024) /* output a replica may hold before its shard copies more */

enum { WAIT_BGSAVE, SEND_BULK, ONLINE };
static const char *const state_names[] = {"wait_bgsave", "send_bulk", "online"};

typedef struct rblock {
    struct rblock *next;
    uint64_t start;
    size_t len, cap;
    char data[];
} rblock;

/* The RDB file of one full sync, shared by the replicas that wait for it. */
typedef struct repl_snap {
    int refs; /* replicas not done with it, +1 while the save runs (R.lock) */
    int done, ok;
    int fd;
    uint64_t size;
    uint64_t offset; /* the stream offset of the cut */
} repl_snap;

typedef struct repl_peer {
    conn *c;
    shard *sh; /* the connection's shard: the only thread that writes to it */
    int attached; /* 0: REPLCONF before SYNC/PSYNC made it (port, ip kept for then) */
    int state, dead;
    repl_snap *snap;
    uint64_t file_off;
    uint64_t sent;
    int64_t ack_off, ack_ms;
    int port;
    int psync2; /* REPLCONF capa psync2: +CONTINUE names the id */
    char ip[64];
} repl_peer;

void (*repl_getack_hook)(struct session *s);

static struct {
    pthread_mutex_t lock;
    int backlog; /* the stream is fed (a replica attached once) */
    char replid[41], replid2[41];
    uint64_t offset; /* master_repl_offset (atomic stores) */
    int64_t second_offset;
    rblock *head, *tail;
    int64_t buf_mem; /* allocated bytes of the blocks (atomic stores) */
    int sel_db; /* database the stream is in after its last byte, -1: a SELECT comes first */
    repl_peer *peers[MAX_PEERS];
    int npeers;
    repl_snap *running; /* the save that replicas attaching now can share */
    int64_t idle_since; /* no replica since (ms) */
    int64_t last_ping;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER, .second_offset = -1, .sel_db = -1};

static void new_replid(char *out) {
    static const char hex[] = "0123456789abcdef";
    uint8_t b[20];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, b, sizeof b) : -1;
    if (fd >= 0) close(fd);
    if (got != (ssize_t)sizeof b) {
        uint64_t x = (uint64_t)mono_us() ^ ((uint64_t)getpid() << 32);
        for (size_t i = 0; i < sizeof b; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            b[i] = (uint8_t)(x >> 56);
        }
    }
    for (int i = 0; i < 20; i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[40] = 0;
}

static int64_t not_counted(void);

void repl_init(void) {
    shard_replica_pump = repl_pump;
    conn_replica_closed_hook = repl_conn_closed;
    shard_add_cron_hook(repl_cron);
    evict_not_counted_hook = not_counted;
    new_replid(R.replid);
    memset(R.replid2, '0', 40);
    R.replid2[40] = 0;
}

/* ---- the stream (R.lock held) ---- */

static void append_locked(const char *p, size_t n) {
    while (n) {
        rblock *t = R.tail;
        if (!t || t->len == t->cap) {
            size_t cap = n > BLOCK_MIN ? n : BLOCK_MIN;
            rblock *b = zmalloc(sizeof *b + cap);
            __atomic_store_n(&R.buf_mem, R.buf_mem + (int64_t)zmalloc_size(b), __ATOMIC_RELAXED);
            b->next = NULL;
            b->start = R.offset;
            b->len = 0;
            b->cap = cap;
            if (t) t->next = b;
            else R.head = b;
            R.tail = t = b;
        }
        size_t k = t->cap - t->len < n ? t->cap - t->len : n;
        memcpy(t->data + t->len, p, k);
        t->len += k;
        p += k;
        n -= k;
        __atomic_store_n(&R.offset, R.offset + k, __ATOMIC_RELEASE);
    }
}

static void free_block(rblock *b) {
    __atomic_store_n(&R.buf_mem, R.buf_mem - (int64_t)zmalloc_size(b), __ATOMIC_RELAXED);
    zfree(b);
}

/* Its connection closes at its shard's next safe point. */
static void kill_peer(repl_peer *p) {
    conn_mark_killed(p->c);
    __atomic_store_n(&p->sh->kill_reqs, 1, __ATOMIC_RELEASE);
    shard_wake(p->sh);
}

/* Drops replicas too far behind (client-output-buffer-limit replica) and
 * the blocks nobody needs. */
static void trim_locked(void) {
    int64_t hard = cfg.obuf_limits[1][0];
    uint64_t need = R.offset;
    for (int i = 0; i < R.npeers; i++) {
        repl_peer *p = R.peers[i];
        if (p->dead) continue;
        if (hard > 0 && R.offset - p->sent > (uint64_t)hard) {
            log_msg(LOG_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
                    (unsigned long long)p->c->s.id, p->c->addr);
            p->dead = 1;
            kill_peer(p);
            continue;
        }
        if (p->sent < need) need = p->sent;
    }
    uint64_t keep = (uint64_t)cfg_get(repl_backlog_size);
    uint64_t hist = R.offset > keep ? R.offset - keep : 0;
    if (hist < need) need = hist;
    while (R.head && R.head->next && R.head->start + R.head->len <= need) {
        rblock *b = R.head;
        R.head = b->next;
        free_block(b);
    }
}

static uint64_t first_byte_locked(void) { return R.head ? R.head->start : R.offset; }

static void wake_peers_locked(void) {
    uint64_t woken = 0;
    shard *me = shard_self();
    for (int i = 0; i < R.npeers; i++) {
        shard *sh = R.peers[i]->sh;
        if (sh == me) me->repl_more = 1; /* its loop turns again before it sleeps */
        if (sh == me || (woken >> sh->id & 1)) continue;
        woken |= 1ull << sh->id;
        shard_wake(sh);
    }
}

static void put_select(int dbid) {
    char num[24];
    const char *argv[2] = {"SELECT", num};
    size_t argl[2] = {6, (size_t)ll2str(num, dbid)};
    buf b = {0};
    aof_put_command(&b, 2, argv, argl);
    append_locked(b.p, b.len);
    buf_free(&b);
}

/* The AOF writer's sink: one committed buffer (its lock held). */
static void sink(int first_db, int last_db, const char *p, size_t n) {
    pthread_mutex_lock(&R.lock);
    if (first_db != R.sel_db) put_select(first_db);
    R.sel_db = last_db;
    append_locked(p, n);
    trim_locked();
    wake_peers_locked();
    pthread_mutex_unlock(&R.lock);
}

/* ---- attaching ---- */

static void snap_unref_locked(repl_snap *s) {
    if (--s->refs > 0) return;
    if (s->fd >= 0) close(s->fd);
    zfree(s);
}

/* The save ended (the snapshot writer's thread). */
static void snap_done(int ok, void *arg) {
    repl_snap *s = arg;
    int fd = -1;
    struct stat st;
    if (ok) {
        fd = open(cfg.dbfilename_s, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
            log_msg(LOG_WARNING, "SYNC failed. Can't open/stat DB after BGSAVE: %s", strerror(errno));
            if (fd >= 0) close(fd);
            fd = -1;
            ok = 0;
        }
    }
    pthread_mutex_lock(&R.lock);
    s->fd = fd;
    s->size = ok ? (uint64_t)st.st_size : 0;
    s->ok = ok;
    s->done = 1;
    if (R.running == s) R.running = NULL;
    if (!ok) log_msg(LOG_WARNING, "SYNC failed. BGSAVE child returned an error");
    wake_peers_locked();
    snap_unref_locked(s);
    pthread_mutex_unlock(&R.lock);
}

static db *held_db(void *ud, int i, int dbid) {
    const int *ids = ud;
    return &shards[ids[i]]->dbs[dbid];
}

/* Another save runs (BGSAVE, an AOF rewrite): this one is written now,
 * holding every shard, into a file that is gone once open. */
static int save_now(repl_snap *s, const int *ids, int n, int64_t now_ms, char *err, size_t errlen) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "temp-repl-%d.rdb", (int)getpid());
    if (rdb_save(tmp, n, held_db, (void *)ids, now_ms, err, errlen) < 0) return -1;
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "ERR Can't open the replication RDB: %s", strerror(errno));
        if (fd >= 0) close(fd);
        unlink(tmp);
        return -1;
    }
    unlink(tmp);
    s->fd = fd;
    s->size = (uint64_t)st.st_size;
    s->ok = s->done = 1;
    return 0;
}

/* A full sync's file: the running one, else a new save from this point. */
static repl_snap *full_sync_snap(const int *ids, int n, int64_t now_ms, char *err, size_t errlen) {
    if (R.running) {
        R.running->refs++;
        log_msg(LOG_NOTICE, "Waiting for end of BGSAVE for SYNC");
        return R.running;
    }
    repl_snap *s = zcalloc(sizeof *s);
    s->fd = -1;
    s->offset = R.offset;
    s->refs = 1;
    if (snap_running()) {
        if (save_now(s, ids, n, now_ms, err, errlen) < 0) {
            zfree(s);
            return NULL;
        }
        return s;
    }
    log_msg(LOG_NOTICE, "Starting BGSAVE for SYNC with target: disk");
    s->refs = 2; /* the replica and the running save */
    R.running = s;
    char e[256];
    /* snap_done takes R.lock: the save must not end inside this call */
    pthread_mutex_unlock(&R.lock);
    int rc = snap_start(ids, n, cfg.dbfilename_s, now_ms, SNAP_RDB, snap_done, s, e, sizeof e);
    if (rc == 0 && !shards_running) snap_run_inline();
    pthread_mutex_lock(&R.lock);
    if (rc < 0) {
        if (R.running == s) R.running = NULL;
        zfree(s);
        snprintf(err, errlen, "ERR %s", e);
        return NULL;
    }
    return s;
}

static void peer_addr(const conn *c, char *ip, size_t n) {
    const char *a = c->is_unix ? "" : c->addr, *colon = strrchr(a, ':');
    size_t len = colon ? (size_t)(colon - a) : strlen(a);
    if (len >= n) len = n - 1;
    memcpy(ip, a, len);
    ip[len] = 0;
}

/* c's replica state, made by its first REPLCONF or SYNC (its thread). */
static repl_peer *pre_peer(conn *c) {
    repl_peer *p = zcalloc(sizeof *p);
    p->c = c;
    p->sh = c->sh;
    peer_addr(c, p->ip, sizeof p->ip);
    c->repl = p;
    return p;
}

int repl_attach(conn *c, const int *ids, int n, int psync, const char *replid, int64_t offset, int64_t now_ms, buf *out,
                char *err, size_t errlen) {
    if (c->repl && c->repl->attached) return 0; /* a replica asking again: nothing, as Redis */
    /* Every shard is held: what ran before this point is in the snapshot
     * below, so what the shards logged so far goes into the stream (to
     * the replicas it is for) before the cut's offset is read. */
    aof_sink_start(sink);
    pthread_mutex_lock(&R.lock);
    if (R.npeers == MAX_PEERS) {
        pthread_mutex_unlock(&R.lock);
        snprintf(err, errlen, "ERR too many replicas");
        return -1;
    }
    repl_peer *p = c->repl ? c->repl : pre_peer(c);
    p->ack_ms = now_ms;
    log_msg(LOG_NOTICE, "Replica %s:%d asks for synchronization", p->ip, p->port);
    int partial = psync && R.backlog && (!strcmp(replid, R.replid) || (!strcmp(replid, R.replid2) &&
                                                                        offset <= R.second_offset)) &&
                  offset >= 1 && (uint64_t)offset - 1 >= first_byte_locked() && (uint64_t)offset - 1 <= R.offset;
    if (partial) {
        p->state = ONLINE;
        p->sent = (uint64_t)offset - 1;
        if (p->psync2) buf_printf(out, "+CONTINUE %s\r\n", R.replid);
        else buf_adds(out, "+CONTINUE\r\n");
        log_msg(LOG_NOTICE, "Partial resynchronization request from %s:%d accepted. Sending %llu bytes of backlog "
                            "starting from offset %lld.", p->ip, p->port,
                (unsigned long long)(R.offset - p->sent), (long long)offset);
    } else {
        if (psync && strcmp(replid, "?"))
            log_msg(LOG_NOTICE, "Partial resynchronization not accepted: Replication ID mismatch or offset out of "
                                "range");
        else if (psync)
            log_msg(LOG_NOTICE, "Full resync requested by replica %s:%d", p->ip, p->port);
        if (!R.backlog) { /* the stream starts here, under a new id (as Redis, when it creates the backlog) */
            new_replid(R.replid);
            memset(R.replid2, '0', 40);
            R.second_offset = -1;
            R.backlog = 1;
            R.last_ping = now_ms; /* the first PING one period from now */
            log_msg(LOG_NOTICE, "Replication backlog created, my new replication IDs are '%s' and '%s'", R.replid,
                    R.replid2);
        }
        R.sel_db = -1; /* the stream this replica reads opens with a SELECT */
        repl_snap *s = full_sync_snap(ids, n, now_ms, err, errlen);
        if (!s) {
            pthread_mutex_unlock(&R.lock);
            return -1; /* (c keeps p for another try; freed when it closes) */
        }
        p->snap = s;
        p->state = WAIT_BGSAVE;
        p->sent = s->offset;
        if (psync) buf_printf(out, "+FULLRESYNC %s %llu\r\n", R.replid, (unsigned long long)s->offset);
    }
    R.peers[R.npeers++] = p;
    p->attached = 1;
    c->s.flags |= SESS_NO_EVICT | SESS_REPLICA;
    __atomic_add_fetch(&c->sh->nreplicas, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&R.lock);
    return 0;
}

int repl_conn_attached(const conn *c) { return c && c->repl && c->repl->attached; }

void repl_set_listening_port(conn *c, int port) {
    repl_peer *p = c->repl ? c->repl : pre_peer(c);
    pthread_mutex_lock(&R.lock);
    p->port = port;
    pthread_mutex_unlock(&R.lock);
}

void repl_set_capa_psync2(conn *c) {
    repl_peer *p = c->repl ? c->repl : pre_peer(c);
    pthread_mutex_lock(&R.lock);
    p->psync2 = 1;
    pthread_mutex_unlock(&R.lock);
}

void repl_set_ip(conn *c, const char *ip) {
    repl_peer *p = c->repl ? c->repl : pre_peer(c);
    pthread_mutex_lock(&R.lock);
    snprintf(p->ip, sizeof p->ip, "%s", ip);
    pthread_mutex_unlock(&R.lock);
}

void repl_ack(conn *c, int64_t offset, int64_t now_ms) {
    pthread_mutex_lock(&R.lock);
    repl_peer *p = c->repl;
    if (p && p->attached) {
        if (offset > p->ack_off) p->ack_off = offset;
        p->ack_ms = now_ms;
    }
    pthread_mutex_unlock(&R.lock);
}

void repl_conn_closed(conn *c) {
    repl_peer *p = c->repl;
    if (!p) return;
    c->repl = NULL;
    if (!p->attached) {
        zfree(p);
        return;
    }
    pthread_mutex_lock(&R.lock);
    for (int i = 0; i < R.npeers; i++)
        if (R.peers[i] == p) {
            R.peers[i] = R.peers[--R.npeers];
            break;
        }
    if (p->snap) snap_unref_locked(p->snap);
    log_msg(LOG_NOTICE, "Connection with replica %s:%d lost.", p->ip, p->port);
    if (!R.npeers) R.idle_since = mstime();
    trim_locked();
    pthread_mutex_unlock(&R.lock);
    __atomic_sub_fetch(&c->sh->nreplicas, 1, __ATOMIC_RELAXED);
    zfree(p);
}

/* ---- sending (the replica's shard) ---- */

/* Copies stream bytes [p->sent, ...) into o, at most max. */
static size_t copy_stream(repl_peer *p, buf *o, size_t max) {
    size_t done = 0;
    pthread_mutex_lock(&R.lock);
    for (rblock *b = R.head; b && done < max; b = b->next) {
        if (b->start + b->len <= p->sent) continue;
        size_t from = (size_t)(p->sent - b->start), k = b->len - from;
        if (k > max - done) k = max - done;
        buf_add(o, b->data + from, k);
        p->sent += k;
        done += k;
    }
    pthread_mutex_unlock(&R.lock);
    return done;
}

/* One replica's turn; 1 when it has more to send right away. */
static int pump_one(repl_peer *p) {
    conn *c = p->c;
    if (c->closed || p->dead || __atomic_load_n(&c->s.killed, __ATOMIC_RELAXED)) return 0;
    size_t pending = conn_obuf_pending(c);
    if (pending >= PUMP_CHUNK) return 0; /* its socket is full: the writable event brings it back */
    size_t room = PUMP_CHUNK - pending;
    if (p->state == WAIT_BGSAVE) {
        pthread_mutex_lock(&R.lock);
        int done = p->snap->done, ok = p->snap->ok;
        pthread_mutex_unlock(&R.lock);
        if (!done) return 0;
        if (!ok) {
            kill_peer(p);
            return 0;
        }
        buf_printf(session_reply_buf(&c->s), "$%llu\r\n", (unsigned long long)p->snap->size);
        p->state = SEND_BULK;
        p->file_off = 0;
    }
    if (p->state == SEND_BULK) {
        buf *o = session_reply_buf(&c->s);
        uint64_t left = p->snap->size - p->file_off;
        size_t want = left < room ? (size_t)left : room;
        buf_reserve(o, want);
        ssize_t k = want ? pread(p->snap->fd, o->p + o->len, want, (off_t)p->file_off) : 0;
        if (k < 0 || (k == 0 && want)) {
            log_msg(LOG_WARNING, "Read error sending DB to replica: %s", k < 0 ? strerror(errno) : "unexpected EOF");
            kill_peer(p);
            return 0;
        }
        o->len += (size_t)k;
        p->file_off += (uint64_t)k;
        if (p->file_off < p->snap->size) return 1;
        pthread_mutex_lock(&R.lock);
        snap_unref_locked(p->snap);
        p->snap = NULL;
        p->state = ONLINE;
        pthread_mutex_unlock(&R.lock);
        log_msg(LOG_NOTICE, "Synchronization with replica %s:%d succeeded", p->ip, p->port);
        return 1;
    }
    if (__atomic_load_n(&R.offset, __ATOMIC_ACQUIRE) <= p->sent) return 0;
    copy_stream(p, session_reply_buf(&c->s), room);
    return __atomic_load_n(&R.offset, __ATOMIC_ACQUIRE) > p->sent;
}

void repl_pump(shard *sh) {
    repl_peer *mine[MAX_PEERS];
    int n = 0;
    pthread_mutex_lock(&R.lock);
    for (int i = 0; i < R.npeers; i++)
        if (R.peers[i]->sh == sh) mine[n++] = R.peers[i];
    pthread_mutex_unlock(&R.lock);
    int more = 0;
    for (int i = 0; i < n; i++) more |= pump_one(mine[i]); /* peers of this shard leave only on this thread */
    sh->repl_more = more;
}

/* ---- cron, INFO, min-replicas ---- */

void repl_cron(shard *sh) {
    if (sh->id != 0) return;
    int64_t now = sh->now_ms;
    pthread_mutex_lock(&R.lock);
    if (R.backlog && R.npeers && now - R.last_ping >= cfg_get(repl_ping_replica_period) * 1000) {
        R.last_ping = now;
        static const char ping[] = "*1\r\n$4\r\nPING\r\n";
        append_locked(ping, sizeof ping - 1); /* as Redis, in the stream's current database */
        trim_locked();
        wake_peers_locked();
    }
    int64_t ttl = cfg_get(repl_backlog_ttl);
    int drop = R.backlog && !R.npeers && ttl > 0 && now - R.idle_since >= ttl * 1000;
    pthread_mutex_unlock(&R.lock);
    if (!drop) return;
    /* No replica for repl-backlog-ttl: the stream stops (a full sync
     * starts it again), under a new id as Redis does. Attaching holds
     * every shard, this one included, so none runs meanwhile. */
    aof_sink_stop();
    pthread_mutex_lock(&R.lock);
    while (R.head) {
        rblock *b = R.head;
        R.head = b->next;
        free_block(b);
    }
    R.tail = NULL;
    R.backlog = 0;
    new_replid(R.replid);
    memset(R.replid2, '0', 40);
    R.second_offset = -1;
    pthread_mutex_unlock(&R.lock);
    log_msg(LOG_NOTICE, "Replication backlog freed after %lld seconds without connected replicas.", (long long)ttl);
}

int repl_enough_good_replicas(void) {
    int64_t need = cfg_get(min_replicas_to_write), lag = cfg_get(min_replicas_max_lag);
    if (need <= 0 || lag <= 0) return 1;
    int64_t now = mstime(), good = 0;
    pthread_mutex_lock(&R.lock);
    for (int i = 0; i < R.npeers; i++) {
        repl_peer *p = R.peers[i];
        if (p->state == ONLINE && !p->dead && (now - p->ack_ms) / 1000 <= lag) good++;
    }
    pthread_mutex_unlock(&R.lock);
    return good >= need;
}

void repl_memory(repl_mem *m) {
    memset(m, 0, sizeof *m);
    pthread_mutex_lock(&R.lock);
    int64_t total = R.buf_mem, keep = cfg_get(repl_backlog_size);
    m->total_buffers = total;
    /* as Redis: the shared blocks count as the backlog up to its size,
     * the rest as the replicas' output */
    if (R.npeers && total > keep) {
        m->backlog = keep;
        m->replicas = total - keep;
    } else {
        m->backlog = R.backlog ? total : 0;
    }
    int64_t outs = 0;
    for (int i = 0; i < R.npeers; i++) { /* their connections (read racily, as CLIENT LIST does) */
        conn *c = R.peers[i]->c;
        int64_t out = (int64_t)__atomic_load_n(&c->out.cap, __ATOMIC_RELAXED);
        outs += out;
        m->replica_conns += out + (int64_t)__atomic_load_n(&c->qbuf.cap, __ATOMIC_RELAXED) + (int64_t)sizeof(conn);
    }
    m->replicas += m->replica_conns;
    /* not counted for eviction: what the replicas hold beyond the backlog
     * (Redis's rule), and the stream bytes copied into their output */
    m->not_counted = (R.npeers && total > keep ? total - keep : 0) + outs;
    pthread_mutex_unlock(&R.lock);
}

static int64_t not_counted(void) {
    if (!__atomic_load_n(&R.npeers, __ATOMIC_RELAXED)) return 0;
    repl_mem m;
    repl_memory(&m);
    return m.not_counted;
}

int repl_peers(repl_peer_info *out, int max, int64_t *offset) {
    int n = 0;
    pthread_mutex_lock(&R.lock);
    *offset = (int64_t)R.offset;
    for (int i = 0; i < R.npeers && n < max; i++) {
        repl_peer *p = R.peers[i];
        if (p->state != ONLINE) continue;
        memcpy(out[n].ip, p->ip, sizeof out[n].ip);
        out[n].port = p->port;
        out[n].ack = p->ack_off;
        n++;
    }
    pthread_mutex_unlock(&R.lock);
    return n;
}

void repl_info(buf *o) {
    int64_t now = mstime();
    pthread_mutex_lock(&R.lock);
    buf_printf(o, "role:master\r\nconnected_slaves:%d\r\n", R.npeers);
    for (int i = 0; i < R.npeers; i++) {
        repl_peer *p = R.peers[i];
        buf_printf(o, "slave%d:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", i, p->ip, p->port,
                   state_names[p->state], (long long)p->ack_off, (long long)((now - p->ack_ms) / 1000));
    }
    uint64_t first = R.backlog ? first_byte_locked() + 1 : 0, hist = R.backlog ? R.offset - first_byte_locked() : 0;
    buf_printf(o,
               "master_failover_state:no-failover\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n"
               "master_repl_offset:%llu\r\nsecond_repl_offset:%lld\r\nrepl_backlog_active:%d\r\n"
               "repl_backlog_size:%lld\r\nrepl_backlog_first_byte_offset:%llu\r\nrepl_backlog_histlen:%llu\r\n",
               R.replid, R.replid2, (unsigned long long)R.offset, (long long)R.second_offset, R.backlog,
               (long long)cfg_get(repl_backlog_size), (unsigned long long)first, (unsigned long long)hist);
    pthread_mutex_unlock(&R.lock);
}
