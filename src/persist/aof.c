/* aof.c - the AOF writer: per-shard buffers, the one incr file, fsync
 * policies, write errors; see aof.h for the ordering rules.
 *
 * Offsets are positions in the logical stream of logged bytes (they keep
 * growing across files): `end` counts what was committed, `written` what
 * is in the file, `synced` what fdatasync covered. Bytes that a failed
 * write(2) left behind wait in `pending`, in commit order, and are written
 * before anything newer, so a disk that fills up never reorders the file.
 * A partial write is cut off again with ftruncate, as Redis does, so the
 * file never ends inside a command that a later write would complete.
 *
 *   end     -----------------------------------------|
 *   written ----------------------------|  pending   |
 *   synced  -------------------|
 *
 * Locks: `lock` guards the file, the stream state and pending; `sync_lock`
 * serializes fdatasync (shards under always, the everysec thread) without
 * blocking writers. Lock order: lock, then sync_lock. */
#include "persist/aof.h"
#include "cmd/cmd.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "persist/aof_parse.h"
#include "persist/snapshot.h"
#include "server/config.h"
#include "shard/latency.h"
#include "shard/shard.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int aof_loading;

#define ERROR_LOG_EVERY_MS 30000 /* Redis's AOF_WRITE_LOG_ERROR_RATE */

/* One shard's log since its last write; only its thread touches it. */
typedef struct aof_slot {
    buf b;
    int first_db, last_db; /* databases of the first and the last command in b */
    uint32_t ncmds;
    uint32_t nexpired; /* of ncmds, DELs of keys found expired */
    int in_tx; /* between aof_tx_begin and aof_tx_end */
    int tx_last_db; /* last_db at aof_tx_begin (aof_tx_discard) */
    size_t tx_at;
    uint32_t tx_cmds, tx_expired;
    uint64_t need; /* stream offset that must be synced before replies (always) */
} __attribute__((aligned(64))) aof_slot;

static aof_slot slots[MAX_SHARDS];

static struct {
    pthread_mutex_t lock, sync_lock;
    int on;      /* atomic: feeding; ON_FILE and ON_SINK bits */
    aof_sink_fn *sink; /* the second consumer (replication), under lock */
    int fd;      /* the incr file, -1 when off; changed under both locks */
    int file_db; /* database the stream is in after its last byte (-1: unknown) */
    int64_t ts;  /* second of the last #TS annotation */
    buf pending;
    size_t npending;               /* atomic copy of pending.len */
    uint64_t file_start;           /* stream offset of the incr file's first byte */
    uint64_t end, written, synced; /* atomic (see the drawing) */
    uint64_t base_size;
    int write_errno, fsync_errno; /* atomic: 0 when fine */
    int64_t last_error_log;
    int sync_thread;
} W = {.lock = PTHREAD_MUTEX_INITIALIZER, .sync_lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .file_db = -1};

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

enum { ON_FILE = 1, ON_SINK = 2 };

int aof_active(void) { return __atomic_load_n(&W.on, __ATOMIC_RELAXED) != 0; }
int aof_file_active(void) { return (__atomic_load_n(&W.on, __ATOMIC_RELAXED) & ON_FILE) != 0; }

size_t aof_buffered_bytes(void) {
    if (!aof_file_active()) return 0;
    size_t n = __atomic_load_n(&W.npending, __ATOMIC_RELAXED);
    for (int i = 0; i < nshards; i++) n += __atomic_load_n(&slots[i].b.cap, __ATOMIC_RELAXED);
    return n;
}

/* ---- feeding ---- */

static void put_select(buf *b, int dbid) {
    char num[24];
    const char *argv[2] = {"SELECT", num};
    size_t argl[2] = {6, (size_t)ll2str(num, dbid)};
    aof_put_command(b, 2, argv, argl);
}

void aof_feed(shard *sh, int dbid, int argc, const char *const *argv, const size_t *argl) {
    if (!aof_active()) return;
    aof_slot *s = &slots[sh->id];
    if (s->b.len == 0)
        s->first_db = dbid;
    else if (s->last_db != dbid)
        put_select(&s->b, dbid);
    s->last_db = dbid;
    aof_put_command(&s->b, argc, argv, argl);
    s->ncmds++;
}

void aof_feed_expired(db *d, const char *key, size_t klen) {
    shard *sh = shard_self();
    if (!sh || !aof_active()) return;
    const char *argv[2] = {"DEL", key};
    size_t argl[2] = {3, klen};
    aof_feed(sh, d->id, 2, argv, argl);
    slots[sh->id].nexpired++;
}

void aof_tx_begin(shard *sh) {
    aof_slot *s = &slots[sh->id];
    if (s->in_tx++) return; /* nested (a script inside a whole-shard transaction): one block */
    s->tx_at = s->b.len;
    s->tx_cmds = s->ncmds;
    s->tx_expired = s->nexpired;
    s->tx_last_db = s->last_db;
}

void aof_tx_discard(shard *sh) {
    aof_slot *s = &slots[sh->id];
    if (!s->in_tx) return;
    s->b.len = s->tx_at;
    s->ncmds = s->tx_cmds;
    s->nexpired = s->tx_expired;
    s->last_db = s->tx_last_db;
}

void aof_tx_end(shard *sh) {
    aof_slot *s = &slots[sh->id];
    if (--s->in_tx > 0) return;
    uint32_t n = s->ncmds - s->tx_cmds, real = n - (s->nexpired - s->tx_expired);
    /* one command needs no block, nor do lazy expiry's DELs of a command
     * that wrote nothing (RANDOMKEY, SCAN: Redis 7.0 propagates them bare) */
    if (n < 2 || real == 0) return;
    static const char multi[] = "*1\r\n$5\r\nMULTI\r\n", exec[] = "*1\r\n$4\r\nEXEC\r\n";
    buf_insert(&s->b, s->tx_at, multi, sizeof multi - 1);
    buf_add(&s->b, exec, sizeof exec - 1);
    s->ncmds += 2;
}

/* ---- writing (under W.lock) ---- */

/* write(2) of a then b, retried on short writes and EINTR; returns the
 * bytes written before an error (errno tells which). */
static size_t write_two(int fd, const char *a, size_t al, const char *b, size_t bl) {
    size_t done = 0, total = al + bl;
    while (done < total) {
        struct iovec iov[2];
        int n = 0;
        if (done < al) iov[n++] = (struct iovec){(void *)(a + done), al - done};
        size_t boff = done > al ? done - al : 0;
        if (bl > boff) iov[n++] = (struct iovec){(void *)(b + boff), bl - boff};
        ssize_t k = writev(fd, iov, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0) errno = ENOSPC;
            break;
        }
        done += (size_t)k;
    }
    return done;
}

static int may_log_error(void) {
    int64_t now = mstime();
    if (now - W.last_error_log < ERROR_LOG_EVERY_MS) return 0;
    W.last_error_log = now;
    return 1;
}

/* A write of `want` bytes stopped after k with errno e: cut the partial
 * bytes off again when possible. Returns how many of the k bytes stay in
 * the file. */
static size_t write_failed(size_t k, size_t want, int e) {
    int log = may_log_error();
    if (k == 0) {
        if (log) log_msg(LOG_WARNING, "Error writing to the AOF file: %s", strerror(e));
        STORE(W.write_errno, e ? e : EIO);
        return 0;
    }
    if (log)
        log_msg(LOG_WARNING, "Short write while writing to the AOF file: (nwritten=%lld, expected=%lld)", (long long)k,
                (long long)want);
    STORE(W.write_errno, ENOSPC);
    if (ftruncate(W.fd, (off_t)(W.written - W.file_start)) == 0) return 0;
    if (log)
        log_msg(LOG_WARNING,
                "Could not remove short write from the append-only file.  Redis may refuse to load "
                "the AOF the next time it starts.  ftruncate: %s",
                strerror(errno));
    return k;
}

static void write_ok(void) {
    if (!LOAD(W.write_errno)) return;
    log_msg(LOG_WARNING, "AOF write error looks solved, Redis can write again.");
    STORE(W.write_errno, 0);
}

/* Writes what is pending; 0 when nothing is left. */
static int flush_pending(void) {
    if (!W.pending.len) return 0;
    size_t want = W.pending.len, k = write_two(W.fd, W.pending.p, want, NULL, 0);
    int e = errno;
    if (k < want)
        k = write_failed(k, want, e);
    else
        write_ok();
    STORE(W.written, W.written + k);
    buf_consume(&W.pending, k);
    if (!W.pending.len && W.pending.cap > (1u << 20)) buf_free(&W.pending);
    STORE(W.npending, W.pending.len);
    return W.pending.len ? -1 : 0;
}

/* Appends pre + data to the stream: written now when nothing is pending
 * (one writev, no copy), else queued behind what is. */
static void append_stream(const char *pre, size_t pl, const char *data, size_t dl) {
    STORE(W.end, W.end + pl + dl);
    if (!W.pending.len) {
        size_t k = write_two(W.fd, pre, pl, data, dl);
        if (k == pl + dl) {
            STORE(W.written, W.written + k);
            write_ok();
            return;
        }
        int e = errno;
        k = write_failed(k, pl + dl, e);
        STORE(W.written, W.written + k);
        if (k < pl) buf_add(&W.pending, pre + k, pl - k);
        size_t skip = k > pl ? k - pl : 0;
        buf_add(&W.pending, data + skip, dl - skip);
        STORE(W.npending, W.pending.len);
        return;
    }
    buf_add(&W.pending, pre, pl);
    buf_add(&W.pending, data, dl);
    STORE(W.npending, W.pending.len);
    flush_pending();
}

/* Moves slot s into the stream (W.lock held). */
static void commit_locked(aof_slot *s) {
    if (W.fd >= 0) {
        char pre[96];
        size_t pl = 0;
        if (cfg_get(aof_timestamp_enabled)) {
            int64_t now = mstime() / 1000;
            if (now > W.ts) {
                pl += (size_t)snprintf(pre, sizeof pre, "#TS:%lld\r\n", (long long)now);
                W.ts = now;
            }
        }
        if (s->first_db != W.file_db) {
            buf sel = {0};
            put_select(&sel, s->first_db);
            memcpy(pre + pl, sel.p, sel.len);
            pl += sel.len;
            buf_free(&sel);
        }
        W.file_db = s->last_db;
        append_stream(pre, pl, s->b.p, s->b.len);
        s->need = W.end;
    }
    if (W.sink && s->b.len) W.sink(s->first_db, s->last_db, s->b.p, s->b.len);
    s->b.len = 0;
    s->ncmds = s->nexpired = 0;
    /* inside a block (the caller's own: CONFIG SET appendonly in EXEC, a
     * transaction that holds every shard) what it logged so far is out:
     * the block's MULTI goes before the rest. Left as it was, aof_tx_end
     * inserted MULTI past the end of the emptied buffer. */
    if (s->in_tx) s->tx_at = s->tx_cmds = s->tx_expired = 0;
    if (s->b.cap > (4u << 20)) buf_free(&s->b);
}

/* ---- syncing ---- */

/* fdatasync of everything written so far (sync_lock held). */
static void sync_locked(const char *policy) {
    if (W.fd < 0) return;
    uint64_t t = LOAD(W.written);
    if (t <= LOAD(W.synced)) return;
    int64_t t0 = strcmp(policy, "always") ? 0 : latency_clock();
    int r = fdatasync(W.fd), e = errno;
    if (t0) latency_since("aof-fsync-always", t0);
    if (r == 0) {
        STORE(W.synced, t);
        if (LOAD(W.fsync_errno)) {
            log_msg(LOG_WARNING, "AOF fsync error looks solved, Redis can write again.");
            STORE(W.fsync_errno, 0);
        }
        return;
    }
    STORE(W.fsync_errno, e);
    pthread_mutex_lock(&W.lock);
    int log = may_log_error();
    pthread_mutex_unlock(&W.lock);
    if (log)
        log_msg(LOG_WARNING, "Can't persist AOF for fsync error when the AOF fsync policy is '%s': %s", policy,
                strerror(e));
}

static void *everysec_main(void *arg) {
    (void)arg;
    mem_thread_init(MEM_MAX_THREADS - 2);
    pthread_setname_np(pthread_self(), "aof-fsync");
    for (;;) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        if (cfg_get(appendfsync) != CFG_FSYNC_EVERYSEC) continue;
        pthread_mutex_lock(&W.sync_lock);
        sync_locked("everysec");
        pthread_mutex_unlock(&W.sync_lock);
    }
    return NULL;
}

static int always(void) { return cfg_get(appendfsync) == CFG_FSYNC_ALWAYS; }

int aof_holding(shard *sh) { return always() && slots[sh->id].need > LOAD(W.synced); }

int aof_before_send(shard *sh) {
    aof_slot *s = &slots[sh->id];
    if (s->in_tx) return 0;
    if (s->b.len) {
        pthread_mutex_lock(&W.lock);
        commit_locked(s);
        pthread_mutex_unlock(&W.lock);
    } else if (LOAD(W.npending)) {
        pthread_mutex_lock(&W.lock);
        if (W.fd >= 0) flush_pending();
        pthread_mutex_unlock(&W.lock);
    }
    if (!aof_holding(sh)) return 0;
    if (s->need <= LOAD(W.written)) {
        pthread_mutex_lock(&W.sync_lock);
        sync_locked("always");
        pthread_mutex_unlock(&W.sync_lock);
        if (!aof_holding(sh)) return 0;
    }
    /* The disk refuses our log: nothing of this shard may leave. Retrying
     * every turn, the shard would spin; it naps a millisecond instead. */
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, NULL);
    return -1;
}

int aof_before_send_outer(shard *sh) {
    aof_slot *s = &slots[sh->id];
    if (!s->in_tx) return aof_before_send(sh);
    if (s->tx_at) { /* commit what was logged before the block; the block stays */
        size_t rest = s->b.len - s->tx_at;
        char *tail = rest ? zmalloc(rest) : NULL;
        if (rest) memcpy(tail, s->b.p + s->tx_at, rest);
        uint32_t tail_cmds = s->ncmds - s->tx_cmds;
        int last = s->last_db;
        s->b.len = s->tx_at;
        s->last_db = s->tx_last_db;
        pthread_mutex_lock(&W.lock);
        commit_locked(s);
        pthread_mutex_unlock(&W.lock);
        if (rest) buf_add(&s->b, tail, rest);
        zfree(tail);
        s->first_db = s->tx_last_db;
        s->last_db = rest ? last : s->tx_last_db;
        s->ncmds = tail_cmds;
        s->tx_at = 0;
        s->tx_cmds = 0;
    }
    if (!aof_holding(sh)) return 0;
    pthread_mutex_lock(&W.sync_lock);
    sync_locked("always");
    pthread_mutex_unlock(&W.sync_lock);
    return aof_holding(sh) ? -1 : 0;
}

int aof_deny(const command *cmd, char *err, size_t errlen) {
    int e = LOAD(W.write_errno);
    if (!e) e = LOAD(W.fsync_errno);
    if (!e || !aof_file_active()) return 0;
    if (!(cmd->flags & CMD_WRITE) && strcmp(cmd->name, "ping") != 0) return 0;
    snprintf(err, errlen, "MISCONF Errors writing to the AOF file: %s", strerror(e));
    return 1;
}

/* ---- opening and closing ---- */

void aof_writer_open(int fd, uint64_t incr_size, uint64_t base_size) {
    pthread_mutex_lock(&W.lock);
    pthread_mutex_lock(&W.sync_lock);
    W.fd = fd;
    W.file_db = -1;
    W.ts = 0;
    W.file_start = W.end;
    STORE(W.end, W.end + incr_size);
    STORE(W.written, W.end);
    STORE(W.synced, W.end);
    W.base_size = base_size;
    STORE(W.write_errno, 0);
    STORE(W.fsync_errno, 0);
    __atomic_or_fetch(&W.on, ON_FILE, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&W.sync_lock);
    if (!W.sync_thread) {
        pthread_t th;
        W.sync_thread = pthread_create(&th, NULL, everysec_main, NULL) == 0;
        if (W.sync_thread) pthread_detach(th);
    }
    pthread_mutex_unlock(&W.lock);
}

static void commit_all_locked(void);

void aof_writer_switch(int fd) {
    pthread_mutex_lock(&W.lock);
    commit_all_locked();
    if (W.fd >= 0) flush_pending();
    pthread_mutex_lock(&W.sync_lock);
    if (W.fd >= 0) {
        if (fdatasync(W.fd) < 0) log_msg(LOG_WARNING, "Fail to fsync the AOF file: %s", strerror(errno));
        close(W.fd);
    }
    W.fd = fd;
    W.file_db = -1;
    W.ts = 0;
    W.file_start = W.end;
    STORE(W.synced, LOAD(W.written));
    pthread_mutex_unlock(&W.sync_lock);
    pthread_mutex_unlock(&W.lock);
}

/* Commits every shard's buffer to the file alone (the caller holds every
 * shard, or the threads stopped). W.lock held. */
static void commit_all_locked(void) {
    for (int i = 0; i < nshards; i++) {
        aof_slot *s = &slots[i];
        if (s->b.len) commit_locked(s);
        if (s->in_tx) s->tx_at = s->tx_cmds = s->tx_expired = 0; /* the caller's own, emptied or not */
    }
}

void aof_sink_start(aof_sink_fn *fn) {
    pthread_mutex_lock(&W.lock);
    commit_all_locked(); /* to the sink already on, if any: not after the caller's cut */
    W.sink = fn;
    __atomic_or_fetch(&W.on, ON_SINK, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&W.lock);
}

void aof_sink_stop(void) {
    pthread_mutex_lock(&W.lock);
    W.sink = NULL; /* what the shards hold goes to the file alone when they commit it */
    __atomic_and_fetch(&W.on, ~ON_SINK, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&W.lock);
}

void aof_sizes(uint64_t *current, uint64_t *base) {
    pthread_mutex_lock(&W.lock);
    *base = W.base_size;
    *current = W.base_size + LOAD(W.end) - W.file_start;
    pthread_mutex_unlock(&W.lock);
}

void aof_writer_set_base(uint64_t base_size) {
    pthread_mutex_lock(&W.lock);
    W.base_size = base_size;
    pthread_mutex_unlock(&W.lock);
}

void aof_writer_close(void) {
    shard *sh = shard_self();
    pthread_mutex_lock(&W.lock);
    if (sh && slots[sh->id].b.len) commit_locked(&slots[sh->id]);
    if (W.fd >= 0 && flush_pending() < 0) {
        log_msg(LOG_WARNING, "Discarding %zu bytes of the AOF that could not be written", W.pending.len);
        W.pending.len = 0;
        STORE(W.npending, 0);
    }
    __atomic_and_fetch(&W.on, ~ON_FILE, __ATOMIC_RELEASE);
    pthread_mutex_lock(&W.sync_lock);
    if (W.fd >= 0) {
        if (fdatasync(W.fd) < 0) log_msg(LOG_WARNING, "Fail to fsync the AOF file: %s", strerror(errno));
        close(W.fd);
    }
    W.fd = -1;
    STORE(W.written, W.end);
    STORE(W.synced, W.end); /* nobody waits for a file that is gone */
    STORE(W.write_errno, 0);
    STORE(W.fsync_errno, 0);
    pthread_mutex_unlock(&W.sync_lock);
    pthread_mutex_unlock(&W.lock);
}

void aof_shutdown(void) {
    if (!aof_file_active()) return;
    log_msg(LOG_NOTICE, "Calling fsync() on the AOF file.");
    pthread_mutex_lock(&W.lock);
    if (W.fd >= 0) flush_pending();
    pthread_mutex_unlock(&W.lock);
    pthread_mutex_lock(&W.sync_lock);
    if (W.fd >= 0) fdatasync(W.fd);
    pthread_mutex_unlock(&W.sync_lock);
}

/* ---- INFO ---- */


void aof_info(buf *o) {
    int on = aof_file_active();
    int ok = !LOAD(W.write_errno) && !LOAD(W.fsync_errno);
    buf_printf(o,
               "aof_enabled:%d\r\naof_rewrite_in_progress:%d\r\naof_rewrite_scheduled:%d\r\n"
               "aof_last_rewrite_time_sec:%lld\r\naof_current_rewrite_time_sec:%lld\r\n"
               "aof_last_bgrewrite_status:%s\r\naof_rewrites:%llu\r\naof_rewrites_consecutive_failures:%d\r\n"
               "aof_last_write_status:%s\r\naof_last_cow_size:0\r\nmodule_fork_in_progress:0\r\n"
               "module_fork_last_cow_size:0\r\n",
               on, snap_running_kind() == SNAP_AOF, __atomic_load_n(&aof_rewrite_scheduled, __ATOMIC_RELAXED),
               (long long)__atomic_load_n(&aof_last_rewrite_sec, __ATOMIC_RELAXED),
               snap_running_kind() == SNAP_AOF ? (long long)(mstime() - snap_started_ms) / 1000 : -1LL,
               __atomic_load_n(&aof_rewrite_ok, __ATOMIC_RELAXED) ? "ok" : "err",
               (unsigned long long)__atomic_load_n(&aof_rewrites, __ATOMIC_RELAXED),
               __atomic_load_n(&aof_rewrite_failures, __ATOMIC_RELAXED), ok ? "ok" : "err");
    if (!on) return;
    size_t buffered = LOAD(W.npending);
    for (int i = 0; i < nshards; i++)
        buffered += slots[i].b.len;
    buf_printf(o,
               "aof_current_size:%llu\r\naof_base_size:%llu\r\naof_pending_rewrite:0\r\naof_buffer_length:%zu\r\n"
               "aof_pending_bio_fsync:0\r\naof_delayed_fsync:0\r\n",
               (unsigned long long)(W.base_size + LOAD(W.end) - W.file_start), (unsigned long long)W.base_size,
               buffered);
}
