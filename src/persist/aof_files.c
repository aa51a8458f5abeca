/* aof_files.c - the files of the AOF directory: reading and persisting the
 * manifest, creating the base and incr files, opening them at startup and
 * when CONFIG SET appendonly yes turns the AOF on at run time.
 *
 * Paths are relative to dir (the process's working directory):
 * <appenddirname>/<appendfilename>.<seq>.base.rdb and friends. The
 * manifest is replaced atomically (temp file, fsync, rename, fsync of the
 * directory), as Redis does.
 *
 * Turning the AOF on at run time is a rewrite in Redis (a forked child
 * writes the base while the parent buffers). shoal has no fork-free
 * snapshot yet, so the base is written synchronously with the RDB saver
 * while the caller (CONFIG SET) holds every shard: the server pauses for
 * the length of an RDB save, and the base is exactly the data the incr
 * file continues from. The base is always RDB (aof-use-rdb-preamble no
 * asks for an AOF-format base, which needs the rewrite). */
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "persist/aof.h"
#include "persist/aof_manifest.h"
#include "lib/mem.h"
#include "persist/rdb.h"
#include "persist/snapshot.h"
#include "server/config.h"
#include "shard/shard.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t aof_rewrites;
int64_t aof_last_rewrite_sec = -1;
int aof_rewrite_ok = 1;
int aof_rewrite_failures;
int aof_rewrite_scheduled;

void aof_path(buf *out, const char *name) {
    out->len = 0;
    buf_printf(out, "%s/%s", cfg.appenddirname_s, name);
    buf_addc(out, 0);
    out->len--;
}

static int64_t file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

int aof_manifest_read(aof_manifest *m) {
    memset(m, 0, sizeof *m);
    buf name = {0}, path = {0};
    aof_name_manifest(&name, cfg.appendfilename_s);
    aof_path(&path, name.p);
    int rc = 0;
    FILE *f = fopen(path.p, "r");
    if (!f) {
        if (errno != ENOENT) {
            log_msg(LOG_WARNING, "Fatal error: can't open the AOF manifest file %s for reading: %s", path.p,
                    strerror(errno));
            rc = -1;
        }
    } else {
        buf text = {0};
        char chunk[4096];
        size_t k;
        while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
            buf_add(&text, chunk, k);
        fclose(f);
        char err[256];
        int line;
        if (aof_manifest_parse(text.p ? text.p : "", text.len, m, &line, err, sizeof err) < 0) {
            log_msg(LOG_WARNING, "\n*** FATAL AOF MANIFEST FILE ERROR ***\n");
            if (line) log_msg(LOG_WARNING, "Reading the manifest file, at line %d\n", line);
            log_msg(LOG_WARNING, "%s\n", err);
            rc = -1;
        } else {
            rc = 1;
        }
        buf_free(&text);
    }
    buf_free(&name);
    buf_free(&path);
    return rc;
}

/* Replaces the manifest on disk with m; 0 ok, -1 (logged). */
static int manifest_write(const aof_manifest *m) {
    buf name = {0}, path = {0}, tmp = {0}, text = {0};
    aof_name_manifest(&name, cfg.appendfilename_s);
    aof_path(&path, name.p);
    buf_printf(&tmp, "%s/temp-%s", cfg.appenddirname_s, name.p);
    buf_addc(&tmp, 0);
    aof_manifest_format(m, &text);
    int rc = -1;
    int fd = open(tmp.p, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_msg(LOG_WARNING, "Can't open the AOF manifest file %s: %s", tmp.p, strerror(errno));
    } else if (write(fd, text.p, text.len) != (ssize_t)text.len) {
        log_msg(LOG_WARNING, "Error trying to write the temporary AOF manifest file %s: %s", tmp.p,
                errno ? strerror(errno) : "short write");
    } else if (fsync(fd) < 0) {
        log_msg(LOG_WARNING, "Fail to fsync the temp AOF file %s: %s.", tmp.p, strerror(errno));
    } else if (rename(tmp.p, path.p) < 0) {
        log_msg(LOG_WARNING, "Error trying to rename the temporary AOF manifest file %s into %s: %s", tmp.p, path.p,
                strerror(errno));
    } else {
        int dfd = open(cfg.appenddirname_s, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
        rc = 0;
    }
    if (fd >= 0) close(fd);
    if (rc < 0) unlink(tmp.p);
    buf_free(&name);
    buf_free(&path);
    buf_free(&tmp);
    buf_free(&text);
    return rc;
}

static int make_dir(void) {
    if (mkdir(cfg.appenddirname_s, 0755) == 0 || errno == EEXIST) return 0;
    log_msg(LOG_WARNING, "Can't open or create append-only dir %s: %s", cfg.appenddirname_s, strerror(errno));
    return -1;
}

static db *shard_db(void *ud, int s, int dbid) {
    (void)ud;
    return &shards[s]->dbs[dbid];
}

/* Writes every shard's data as the RDB base `name` (seq) into m; its size
 * goes to *size. 0 ok, -1 (logged). */
static int write_base(aof_manifest *m, long long seq, uint64_t *size) {
    buf name = {0}, path = {0};
    aof_name_base(&name, cfg.appendfilename_s, seq, 1);
    aof_path(&path, name.p);
    char err[512];
    int rc = rdb_save(path.p, nshards, shard_db, NULL, mstime(), err, sizeof err);
    if (rc < 0) {
        log_msg(LOG_WARNING, "%s", err);
    } else {
        aof_manifest_set_base(m, name.p, seq);
        *size = (uint64_t)file_size(path.p);
    }
    buf_free(&name);
    buf_free(&path);
    return rc;
}

/* Opens incr file `name` for append (trunc: empty it first). -1 logged. */
static int open_incr(const char *name, int trunc, uint64_t *size) {
    buf path = {0};
    aof_path(&path, name);
    int fd = open(path.p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (trunc ? O_TRUNC : 0), 0644);
    if (fd < 0) log_msg(LOG_WARNING, "Can't open the append-only file %s: %s", name, strerror(errno));
    struct stat sb;
    *size = fd >= 0 && fstat(fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    buf_free(&path);
    return fd;
}

int aof_open_at_start(aof_manifest *m, uint64_t base_size) {
    if (make_dir() < 0) return -1;
    if (!m->base.name && m->nincr == 0) {
        if (write_base(m, m->base_seq + 1, &base_size) < 0) return -1;
        base_size = 0; /* as Redis reports a base it created at start: until the next load */
        log_msg(LOG_NOTICE, "Creating AOF base file %s on server start", m->base.name);
    }
    int created = m->nincr == 0;
    buf name = {0};
    if (created) {
        aof_name_incr(&name, cfg.appendfilename_s, m->incr_seq + 1);
        aof_manifest_add_incr(m, name.p, m->incr_seq + 1);
    }
    const char *incr = m->incr[m->nincr - 1].name;
    uint64_t size;
    int fd = open_incr(incr, 0, &size);
    if (fd < 0 || manifest_write(m) < 0) {
        if (fd >= 0) close(fd);
        buf_free(&name);
        return -1;
    }
    aof_writer_open(fd, size, base_size);
    log_msg(LOG_NOTICE, "%s AOF incr file %s on server start", created ? "Creating" : "Opening", incr);
    buf_free(&name);
    return 0;
}

/* Removes the files of old that the new manifest m does not list. */
static void remove_old(const aof_manifest *old, const aof_manifest *m) {
    const aof_file *lists[3] = {&old->base, old->incr, old->hist};
    int counts[3] = {old->base.name ? 1 : 0, old->nincr, old->nhist};
    buf path = {0};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < counts[l]; i++) {
            const char *n = lists[l][i].name;
            if (!strcmp(n, m->base.name) || (m->nincr && !strcmp(n, m->incr[0].name))) continue;
            log_msg(LOG_NOTICE, "Removing the history file %s", n);
            aof_path(&path, n);
            unlink(path.p);
        }
    buf_free(&path);
}

int aof_enable(char *err, size_t errlen) {
    if (aof_file_active()) return 0;
    int64_t t0 = mono_us();
    aof_manifest old, m = {0};
    if (aof_manifest_read(&old) < 0) memset(&old, 0, sizeof old); /* a bad one is replaced */
    m.base_seq = old.base_seq;
    m.incr_seq = old.incr_seq;
    uint64_t base_size = 0, size;
    buf name = {0};
    int fd = -1, rc = -1;
    if (make_dir() == 0 && write_base(&m, old.base_seq + 1, &base_size) == 0) {
        aof_name_incr(&name, cfg.appendfilename_s, old.incr_seq + 1);
        aof_manifest_add_incr(&m, name.p, old.incr_seq + 1);
        fd = open_incr(name.p, 1, &size);
        if (fd >= 0 && manifest_write(&m) == 0) rc = 0;
    }
    if (rc == 0) {
        remove_old(&old, &m);
        aof_writer_open(fd, 0, base_size);
        aof_rewrites++;
        aof_last_rewrite_sec = (mono_us() - t0) / 1000000;
        log_msg(LOG_NOTICE, "AOF enabled: base %s written synchronously (%.3f seconds), appending to %s", m.base.name,
                (double)(mono_us() - t0) / 1e6, name.p);
    } else {
        if (fd >= 0) close(fd);
        buf path = {0};
        if (m.base.name) {
            aof_path(&path, m.base.name);
            unlink(path.p);
        }
        if (name.len) {
            aof_path(&path, name.p);
            unlink(path.p);
        }
        buf_free(&path);
        log_msg(LOG_WARNING, "Redis needs to enable the AOF but can't write its files. Check the above logs for "
                             "more info about the error.");
        snprintf(err, errlen, "Unable to turn on AOF. Check server logs.");
    }
    buf_free(&name);
    aof_manifest_free(&old);
    aof_manifest_free(&m);
    return rc;
}

void aof_disable(void) {
    if (!aof_file_active()) return;
    aof_writer_close();
    log_msg(LOG_NOTICE, "AOF disabled: appending stopped");
}

/* ---- BGREWRITEAOF: the base from a fork-free snapshot ---- */

typedef struct rewrite {
    long long base_seq, incr_seq; /* the new base, the incr file opened at the cut */
    char *base, *incr;
    int64_t t0;
} rewrite;

/* Writer thread, the base in place (ok) or not: on success the manifest
 * becomes the new base plus the incr files from the cut on, and the older
 * files go; on failure the manifest written at the cut stays (old base, old
 * and new incr files), which already holds every write. */
static void rewrite_done(int ok, void *arg) {
    rewrite *rw = arg;
    aof_manifest cur, m = {0};
    int have = ok ? aof_manifest_read(&cur) : -1;
    if (ok && have == 0 && !rw->incr) { /* appendonly no and no AOF yet: the base alone */
        memset(&cur, 0, sizeof cur);
        have = 1;
    }
    if (ok && have > 0) {
        m.base_seq = cur.base_seq > rw->base_seq ? cur.base_seq : rw->base_seq;
        m.incr_seq = cur.incr_seq;
        aof_manifest_set_base(&m, rw->base, rw->base_seq);
        for (int i = 0; i < cur.nincr; i++)
            if (rw->incr && cur.incr[i].seq >= rw->incr_seq) aof_manifest_add_incr(&m, cur.incr[i].name, cur.incr[i].seq);
        if ((m.nincr || !rw->incr) && manifest_write(&m) == 0) {
            remove_old(&cur, &m);
            buf path = {0};
            aof_path(&path, rw->base);
            if (rw->incr) aof_writer_set_base((uint64_t)file_size(path.p));
            buf_free(&path);
        } else {
            ok = 0;
        }
        aof_manifest_free(&cur);
        aof_manifest_free(&m);
    } else if (ok) {
        ok = 0;
    }
    if (!ok) {
        buf path = {0};
        aof_path(&path, rw->base);
        unlink(path.p); /* not in any manifest */
        buf_free(&path);
    }
    __atomic_store_n(&aof_rewrite_ok, ok, __ATOMIC_RELAXED);
    if (ok) {
        __atomic_add_fetch(&aof_rewrites, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&aof_rewrite_failures, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&aof_last_rewrite_sec, (mono_us() - rw->t0) / 1000000, __ATOMIC_RELAXED);
        log_msg(LOG_NOTICE, "Background AOF rewrite finished successfully");
    } else {
        __atomic_add_fetch(&aof_rewrite_failures, 1, __ATOMIC_RELAXED);
        log_msg(LOG_WARNING, "Background AOF rewrite failed");
    }
    zfree(rw->base);
    zfree(rw->incr);
    zfree(rw);
}

int aof_rewrite_start(const int *ids, int n, int64_t now_ms, char *err, size_t errlen) {
    if (make_dir() < 0) {
        snprintf(err, errlen, "ERR Can't open or create the append-only dir");
        return -1;
    }
    aof_manifest a;
    if (aof_manifest_read(&a) < 0) {
        snprintf(err, errlen, "ERR Can't read the AOF manifest");
        return -1;
    }
    if (!aof_file_active()) { /* as Redis with appendonly no: a new base, the manifest lists it alone */
        rewrite *rw = zcalloc(sizeof *rw);
        rw->t0 = mono_us();
        rw->base_seq = a.base_seq + 1;
        buf name = {0};
        aof_name_base(&name, cfg.appendfilename_s, rw->base_seq, 1);
        rw->base = zstrndup(name.p, name.len);
        aof_path(&name, rw->base);
        int rc = snap_start(ids, n, name.p, now_ms, SNAP_AOF, rewrite_done, rw, err, errlen);
        if (rc < 0) {
            __atomic_store_n(&aof_rewrite_ok, 0, __ATOMIC_RELAXED);
            zfree(rw->base);
            zfree(rw);
        }
        buf_free(&name);
        aof_manifest_free(&a);
        return rc;
    }
    rewrite *rw = zcalloc(sizeof *rw);
    rw->t0 = mono_us();
    rw->base_seq = a.base_seq + 1;
    rw->incr_seq = a.incr_seq + 1;
    buf name = {0};
    aof_name_incr(&name, cfg.appendfilename_s, rw->incr_seq);
    rw->incr = zstrndup(name.p, name.len);
    aof_name_base(&name, cfg.appendfilename_s, rw->base_seq, 1);
    rw->base = zstrndup(name.p, name.len);
    uint64_t size;
    int fd = open_incr(rw->incr, 1, &size);
    aof_manifest_add_incr(&a, rw->incr, rw->incr_seq);
    int rc = -1;
    if (fd >= 0 && manifest_write(&a) == 0) { /* the new incr file is part of the AOF from here on */
        aof_writer_switch(fd);
        fd = -1;
        aof_path(&name, rw->base);
        rc = snap_start(ids, n, name.p, now_ms, SNAP_AOF, rewrite_done, rw, err, errlen);
        if (rc == 0) rw = NULL; /* rewrite_done frees it */
    } else {
        snprintf(err, errlen, "ERR Can't open the new AOF incr file");
    }
    if (fd >= 0) close(fd);
    if (rw) {
        __atomic_store_n(&aof_rewrite_ok, 0, __ATOMIC_RELAXED);
        zfree(rw->base);
        zfree(rw->incr);
        zfree(rw);
    }
    buf_free(&name);
    aof_manifest_free(&a);
    return rc;
}
