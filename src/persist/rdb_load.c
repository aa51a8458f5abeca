/* rdb_load.c - reading a whole RDB file at startup (and for DEBUG RELOAD).
 *
 * The file is mapped read-only. With several shards, one thread per shard
 * walks the whole file: it decodes every key name, builds the values of
 * the keys its shard owns (so their memory comes from that thread's heap
 * and no locking is needed) and steps over the others by their lengths.
 * Thread 0 also checks the CRC64. Any thread's error fails the load. */
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "persist/crc64.h"
#include "persist/rdb.h"
#include "server/config.h"
#include "shard/shard.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    OP_FUNCTION2 = 0xf5,
    OP_FUNCTION = 0xf6,
    OP_MODULE_AUX = 0xf7,
    OP_IDLE = 0xf8,
    OP_FREQ = 0xf9,
    OP_AUX = 0xfa,
    OP_RESIZEDB = 0xfb,
    OP_EXPIRETIME_MS = 0xfc,
    OP_EXPIRETIME = 0xfd,
    OP_SELECTDB = 0xfe,
    OP_EOF = 0xff,
};

typedef struct loader {
    rdb_in in;
    int only; /* shard whose keys are built, -1: all */
    int check_crc;
    int version;
    int dbid;
    int64_t now;
    int keep_expired; /* an AOF base: keys past their deadline load too */
    rdb_load_stats st;
    int64_t next_report; /* mono_us of the next progress line (0: none) */
    char err[256];
} loader;

/* A progress line about once a second for large files (one loader reports). */
static void report(loader *l) {
    int64_t now = mono_us();
    if (now < l->next_report) return;
    l->next_report = now + 1000000;
    log_msg(LOG_NOTICE, "Loading RDB: %.0f%% of %.1f MB read", l->in.pos * 100.0 / (double)l->in.n,
            (double)l->in.n / 1e6);
}

static int fail(loader *l, int st, const char *what) {
    if (st == RDB_ESHORT)
        snprintf(l->err, sizeof l->err, "Short read or OOM loading DB. Unrecoverable error, aborting now.");
    else if (!l->err[0])
        snprintf(l->err, sizeof l->err, "Internal error in RDB reading offset %zu: %s", l->in.pos, what);
    return st ? st : RDB_EFORMAT;
}

static int read_u8(loader *l, int *b) {
    if (l->in.pos >= l->in.n) return RDB_ESHORT;
    *b = l->in.p[l->in.pos++];
    return RDB_OK;
}

static int read_fixed(loader *l, void *out, size_t n) {
    if (l->in.n - l->in.pos < n) return RDB_ESHORT;
    memcpy(out, l->in.p + l->in.pos, n);
    l->in.pos += n;
    return RDB_OK;
}

/* A plain RDB length (no special string encodings). */
static int read_len(loader *l, uint64_t *v) {
    int b, st;
    if ((st = read_u8(l, &b))) return st;
    if ((b >> 6) == 0)
        *v = (uint64_t)(b & 0x3f);
    else if ((b >> 6) == 1) {
        int b2;
        if ((st = read_u8(l, &b2))) return st;
        *v = ((uint64_t)(b & 0x3f) << 8) | (uint64_t)b2;
    } else if (b == 0x80 || b == 0x81) {
        uint8_t t[8];
        int n = b == 0x80 ? 4 : 8;
        if ((st = read_fixed(l, t, (size_t)n))) return st;
        *v = 0;
        for (int i = 0; i < n; i++)
            *v = (*v << 8) | t[i];
    } else {
        return RDB_EFORMAT;
    }
    return RDB_OK;
}

static int read_header(loader *l) {
    char h[10] = {0};
    if (read_fixed(l, h, 9)) return fail(l, RDB_ESHORT, "header");
    if (memcmp(h, "REDIS", 5)) {
        snprintf(l->err, sizeof l->err, "Wrong signature trying to load DB from file");
        return RDB_EFORMAT;
    }
    int v = 0;
    for (int i = 5; i < 9; i++) {
        if (h[i] < '0' || h[i] > '9') {
            snprintf(l->err, sizeof l->err, "Wrong signature trying to load DB from file");
            return RDB_EFORMAT;
        }
        v = v * 10 + (h[i] - '0');
    }
    if (v < 1 || v > RDB_VERSION) {
        snprintf(l->err, sizeof l->err, "Can't handle RDB format version %d", v);
        return RDB_EVERSION;
    }
    l->version = v;
    return RDB_OK;
}

static int read_aux(loader *l) {
    rdb_str k, v;
    int st = rdb_get_str(&l->in, &k);
    if (st) return fail(l, st, "AUX key");
    if ((st = rdb_get_str(&l->in, &v))) {
        rdb_str_free(&k);
        return fail(l, st, "AUX value");
    }
    if (l->only <= 0 && k.len == 9 && !memcmp(k.s, "redis-ver", 9))
        log_msg(LOG_NOTICE, "Loading RDB produced by version %.*s", (int)(v.len > 32 ? 32 : v.len), v.s);
    rdb_str_free(&k);
    rdb_str_free(&v);
    return RDB_OK;
}

/* The LRU clock for a key idle for `idle` seconds. */
static uint32_t idle_clock(int64_t now, uint64_t idle) {
    uint32_t clock = (uint32_t)(now / 1000) & LRU_CLOCK_MAX;
    if (idle > LRU_CLOCK_MAX) idle = LRU_CLOCK_MAX;
    return (uint32_t)((clock + LRU_CLOCK_MAX + 1 - idle) & LRU_CLOCK_MAX);
}

/* key-load-delay, a testing aid as Redis's: microseconds slept per key
 * its owner builds; a negative -n sleeps 1 µs for one key in n. */
static void key_load_delay(void) {
    int64_t d = cfg_get(key_load_delay);
    if (d < 0) d = rand() % -d == 0;
    if (d > 0) usleep((useconds_t)d);
}

static int add_key(loader *l, int type, int64_t expire, int64_t idle, int freq) {
    rdb_str key;
    int st = rdb_get_str(&l->in, &key);
    if (st) return fail(l, st, "key name");
    int owner = shard_of_key(key.s, key.len);
    if (l->only >= 0 && owner != l->only) {
        rdb_str_free(&key);
        st = rdb_skip_value(&l->in, type);
        return st ? fail(l, st, "value") : RDB_OK;
    }
    key_load_delay();
    entry *e = NULL;
    st = rdb_read_entry(&l->in, type, key.s, key.len, expire, &e);
    if (st == RDB_EEMPTY) {
        l->st.empty++;
    } else if (st) {
        if (st == RDB_EUNSUP) snprintf(l->err, sizeof l->err, "Unsupported value type %d (no such family)", type);
        rdb_str_free(&key);
        return fail(l, st == RDB_EUNSUP ? RDB_EFORMAT : st, "bad value");
    } else if (expire >= 0 && expire < l->now && !l->keep_expired) {
        entry_free(e);
        l->st.expired++;
    } else {
        db *d = &shards[owner]->dbs[l->dbid];
        entry **old = table_link(d->t, key.s, key.len);
        if (old && rdb_load_allow_dup) {
            db_delete_link(d, old);
        } else if (old) {
            snprintf(l->err, sizeof l->err, "RDB has duplicated key '%.*s' in DB %d",
                     (int)(key.len > 64 ? 64 : key.len), key.s, l->dbid);
            entry_free(e);
            rdb_str_free(&key);
            return RDB_EFORMAT;
        }
        if (entry_lfu) { /* as Redis: FREQ under an LFU policy, IDLE under the others */
            if (freq >= 0) entry_touch(e, ((uint32_t)(l->now / 60000) & 0xffff) << 8 | (uint32_t)freq);
        } else {
            entry_touch(e, idle_clock(l->now, idle > 0 ? (uint64_t)idle : 0));
        }
        db_add(d, e);
        l->st.keys++;
    }
    rdb_str_free(&key);
    return RDB_OK;
}

static int check_crc(loader *l) {
    if (l->version < 5) return RDB_OK;
    uint64_t want;
    size_t end = l->in.pos;
    if (read_fixed(l, &want, 8)) return fail(l, RDB_ESHORT, "checksum");
    if (!l->check_crc || !want || !cfg_get(rdbchecksum)) return RDB_OK;
    uint64_t got = crc64(0, l->in.p, end);
    if (got != want) {
        snprintf(l->err, sizeof l->err, "Wrong RDB checksum expected: (%llx) got: (%llx). Aborting now.",
                 (unsigned long long)want, (unsigned long long)got);
        return RDB_ECRC;
    }
    return RDB_OK;
}

/* RESIZEDB: the database's shards get their share of buckets up front.
 * A hint only: capped by what the rest of the input could hold. */
static void presize(loader *l, uint64_t keys) {
    uint64_t cap = (l->in.n - l->in.pos) / 4;
    if (keys > cap) keys = cap;
    size_t share = (size_t)(keys / (uint64_t)nshards + keys / 16 / (uint64_t)nshards);
    for (int s = 0; s < nshards; s++)
        if (l->only < 0 || s == l->only) table_reserve(shards[s]->dbs[l->dbid].t, share);
}

/* One opcode (or key) at a time until EOF. */
static int parse(loader *l) {
    int st = read_header(l);
    if (st) return st;
    int64_t expire = -1, idle = -1;
    int freq = -1;
    for (;;) {
        int op;
        uint64_t a, b;
        if ((st = read_u8(l, &op))) return fail(l, st, "opcode");
        switch (op) {
        case OP_EOF:
            return check_crc(l);
        case OP_EXPIRETIME_MS:
            if ((st = read_fixed(l, &expire, 8))) return fail(l, st, "expire");
            continue;
        case OP_EXPIRETIME: {
            int32_t s;
            if ((st = read_fixed(l, &s, 4))) return fail(l, st, "expire");
            expire = (int64_t)s * 1000;
            continue;
        }
        case OP_IDLE:
            if ((st = read_len(l, &a))) return fail(l, st, "idle");
            idle = (int64_t)(a > INT32_MAX ? INT32_MAX : a);
            continue;
        case OP_FREQ:
            if ((st = read_u8(l, &op))) return fail(l, st, "freq");
            freq = op;
            continue;
        case OP_SELECTDB:
            if ((st = read_len(l, &a))) return fail(l, st, "db number");
            if (a >= (uint64_t)cfg.databases_i) {
                snprintf(l->err, sizeof l->err,
                         "FATAL: Data file was created with a Redis server configured to "
                         "handle more than %lld databases. Exiting",
                         (long long)cfg.databases_i);
                return RDB_EFORMAT;
            }
            l->dbid = (int)a;
            continue;
        case OP_RESIZEDB:
            if ((st = read_len(l, &a)) || (st = read_len(l, &b))) return fail(l, st, "resizedb");
            presize(l, a);
            continue;
        case OP_AUX:
            if ((st = read_aux(l))) return st;
            continue;
        case OP_MODULE_AUX:
            snprintf(l->err, sizeof l->err, "The RDB file contains AUX module data I can't load: no modules");
            return RDB_EUNSUP;
        case OP_FUNCTION2: {
            rdb_str s;
            if ((st = rdb_get_str(&l->in, &s))) return fail(l, st, "function library");
            int bad = l->only <= 0 && rdb_function_reader && rdb_function_reader(s.s, s.len, l->err, sizeof l->err);
            rdb_str_free(&s);
            if (bad) return RDB_EFORMAT;
            continue;
        }
        case OP_FUNCTION:
            snprintf(l->err, sizeof l->err, "Pre-GA function format not supported");
            return RDB_EUNSUP;
        default:
            if ((st = add_key(l, op, expire, idle, freq))) return st;
            expire = idle = -1;
            freq = -1;
            if (l->next_report && (++l->st.scanned & 0xffff) == 0) report(l);
        }
    }
}

/* How a load goes: the caller's clock, whether expired keys stay, and
 * where the RDB ended (out). */
typedef struct load_opts {
    int64_t now;
    int keep_expired;
    size_t end;
} load_opts;

static int load_mem(const uint8_t *p, size_t n, int only, load_opts *o, rdb_load_stats *st, char *err,
                    size_t errlen) {
    loader *l = zcalloc(sizeof *l);
    l->in = (rdb_in){p, n, 0};
    l->only = only;
    l->check_crc = only <= 0;
    l->now = o->now;
    l->keep_expired = o->keep_expired;
    l->next_report = only <= 0 ? mono_us() + 1000000 : 0;
    int rc = parse(l);
    if (st) *st = l->st;
    if (rc) snprintf(err, errlen, "%s", l->err[0] ? l->err : "Bad RDB format");
    o->end = l->in.pos;
    zfree(l);
    return rc ? -1 : 0;
}

int rdb_load_keep_expired;

int rdb_load_mem(const uint8_t *p, size_t n, int only, int64_t now_ms, rdb_load_stats *st, char *err, size_t errlen) {
    load_opts o = {.now = now_ms, .keep_expired = rdb_load_keep_expired};
    return load_mem(p, n, only, &o, st, err, errlen);
}

/* ---- files and threads ---- */

typedef struct job {
    const uint8_t *p;
    size_t n;
    int shard;
    load_opts o;
    int rc;
    rdb_load_stats st;
    char err[256];
} job;

static void *load_thread(void *arg) {
    job *j = arg;
    mem_thread_init(j->shard + 1); /* account as the shard will */
    j->rc = load_mem(j->p, j->n, j->shard, &j->o, &j->st, j->err, sizeof j->err);
    return NULL;
}

static int load_parallel(const uint8_t *p, size_t n, int threads, load_opts *o, rdb_load_stats *st, char *err,
                         size_t errlen) {
    job jobs[MAX_SHARDS];
    pthread_t th[MAX_SHARDS];
    int spawned[MAX_SHARDS], rc = 0;
    for (int i = 0; i < threads; i++) {
        jobs[i] = (job){.p = p, .n = n, .shard = i, .o = *o};
        spawned[i] = pthread_create(&th[i], NULL, load_thread, &jobs[i]) == 0;
        if (!spawned[i]) load_thread(&jobs[i]); /* no thread: do it here */
    }
    for (int i = 0; i < threads; i++) {
        if (spawned[i]) pthread_join(th[i], NULL);
        st->keys += jobs[i].st.keys;
        st->expired += jobs[i].st.expired;
        st->empty += jobs[i].st.empty;
        if (jobs[i].rc && !rc) {
            rc = -1;
            snprintf(err, errlen, "%s", jobs[i].err);
        }
    }
    o->end = jobs[0].o.end;
    return rc;
}

static int load_path(const char *path, int threads, load_opts *o, rdb_load_stats *st, char *err, size_t errlen) {
    rdb_load_stats dummy;
    if (!st) st = &dummy;
    memset(st, 0, sizeof *st);
    int64_t t0 = mono_us();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        snprintf(err, errlen, "Fatal error loading the DB: %s. Exiting.", strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) < 0 || sb.st_size == 0) {
        close(fd);
        return 0;
    }
    size_t n = (size_t)sb.st_size;
    void *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "Fatal error loading the DB: %s. Exiting.", strerror(errno));
        return -1;
    }
    madvise(map, n, MADV_SEQUENTIAL);
    int rc = threads > 1 ? load_parallel(map, n, threads, o, st, err, errlen)
                         : load_mem(map, n, -1, o, st, err, errlen);
    munmap(map, n);
    st->seconds = (double)(mono_us() - t0) / 1e6;
    if (!rc) {
        rdb_last_load_keys = st->keys;
        rdb_last_load_expired = st->expired;
    }
    return rc;
}

int rdb_load_allow_dup;

int rdb_load(const char *path, int threads, int64_t now_ms, rdb_load_stats *st, char *err, size_t errlen) {
    load_opts o = {.now = now_ms};
    return load_path(path, threads, &o, st, err, errlen);
}

int rdb_load_aof_base(const char *path, int threads, rdb_load_stats *st, size_t *end, char *err, size_t errlen) {
    load_opts o = {.now = mstime(), .keep_expired = 1};
    int rc = load_path(path, threads, &o, st, err, errlen);
    *end = o.end;
    return rc;
}
