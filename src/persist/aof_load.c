/* aof_load.c - loading the AOF at startup: the base (RDB, through the RDB
 * loader with expired keys kept; or AOF commands), then each incr file of
 * the manifest, each command run through the engine with the keyspace in
 * loading mode (aof_loading: nothing expires, so the replay ends in the
 * state that was acknowledged).
 *
 * Commands run on the main thread before the shards start, in a context
 * that owns every shard (as a transaction's coordinator does), so each key
 * lands in the shard that owns it. SELECT, MULTI and EXEC are the loader's
 * own: a block runs when its EXEC is read (an unfinished block at the end
 * is cut off, as redis-server does).
 *
 * What can go wrong, as redis-server 7.0 reports it:
 *   - the last file ends inside a command (or a block): with
 *     aof-load-truncated yes it is truncated to the last complete command
 *     (before the block) and loads, else the server refuses to start;
 *   - a byte that breaks the format: refused, naming the offset (Redis
 *     does not say where; we do);
 *   - an unknown command: refused, naming it. */
#include "cmd/dispatch.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "persist/aof_manifest.h"
#include "persist/aof_parse.h"
#include "persist/rdb.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* One file's replay. */
typedef struct replay {
    const char *name, *path;
    const char *p;
    size_t n;
    int last; /* the last file of the manifest: it may be truncated */
    int dbid;
    shard *sh; /* the executing shard (shards[0] at startup) */
    tx all;    /* "holds" every shard: ctx_db routes each key */
    session *sess;
    buf out; /* replies, discarded */
    aof_cmd cmd;
} replay;

static void replay_init(replay *r, const char *name, const char *path, int last, session *sess) {
    memset(r, 0, sizeof *r);
    r->name = name;
    r->path = path;
    r->last = last;
    r->sess = sess;
    r->sh = shards[0];
    r->all.n = nshards;
    for (int i = 0; i < nshards; i++)
        r->all.ids[i] = i;
}

static int is_word(const aof_cmd *c, const char *w) { return c->argc == 1 && str_eq_ci(c->argv[0], c->argl[0], w); }

/* Checks that cmd is a command we can run; -1 (logged) if not. */
static int check(replay *r, const aof_cmd *cmd, size_t at, const command **out) {
    char err[512];
    if (str_eq_ci(cmd->argv[0], cmd->argl[0], "select")) {
        long long db;
        if (cmd->argc == 2 && str2ll(cmd->argv[1], cmd->argl[1], &db) && db >= 0 && db < cfg.databases_i) {
            *out = NULL;
            return 0;
        }
        log_msg(LOG_WARNING, "Bad SELECT at offset %zu of the append only file %s (DB index out of range?)", at,
                r->name);
        return -1;
    }
    *out = dispatch_resolve(cmd->argc, cmd->argv, cmd->argl, err, sizeof err, NULL);
    if (*out) return 0;
    if (!cmd_lookup(cmd->argv[0], cmd->argl[0]))
        log_msg(LOG_WARNING, "Unknown command '%.*s' reading the append only file %s",
                (int)(cmd->argl[0] > 128 ? 128 : cmd->argl[0]), cmd->argv[0], r->name);
    else
        log_msg(LOG_WARNING, "%s, at offset %zu of the append only file %s", err, at, r->name);
    return -1;
}

/* Runs one checked command (c == NULL: SELECT). */
static void run(replay *r, const aof_cmd *cmd, const command *c) {
    if (!c) {
        long long db;
        str2ll(cmd->argv[1], cmd->argl[1], &db);
        r->dbid = (int)db;
        r->sess->db = r->dbid;
        return;
    }
    shard *sh = r->sh;
    sh->now_ms = mstime();
    cmd_ctx x = {.sh = sh,
                 .sess = r->sess,
                 .tx = &r->all,
                 .cmd = c,
                 .argc = cmd->argc,
                 .argv = cmd->argv,
                 .argl = cmd->argl,
                 .dbid = r->dbid,
                 .resp = 2,
                 .out = &r->out};
    c->proc(&x);
    r->out.len = 0;
}

/* Runs the commands of a MULTI block, p[from..to) (parsed before). */
static void run_block(replay *r, size_t from, size_t to) {
    aof_cmd c = {0};
    size_t pos = from;
    while (pos < to && aof_parse_next(r->p, to, &pos, &c, NULL) == AOFP_CMD) {
        const command *cmd;
        if (check(r, &c, pos, &cmd) == 0) run(r, &c, cmd);
    }
    aof_cmd_free(&c);
}

/* The file ends early (or in a block): cut it at `valid`, if allowed. */
static int truncated(replay *r, size_t valid) {
    if (r->last && cfg_get(aof_load_truncated)) {
        log_msg(LOG_WARNING, "!!! Warning: short read while loading the AOF file %s!!!", r->name);
        log_msg(LOG_WARNING, "!!! Truncating the AOF %s at offset %llu !!!", r->name, (unsigned long long)valid);
        if (truncate(r->path, (off_t)valid) < 0) {
            log_msg(LOG_WARNING, "Error truncating the AOF file %s: %s", r->name, strerror(errno));
            return -1;
        }
        log_msg(LOG_WARNING, "AOF %s loaded anyway because aof-load-truncated is enabled", r->name);
        return 0;
    }
    log_msg(LOG_WARNING,
            "Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your AOF file, "
            "then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the "
            "'aof-load-truncated' configuration option to yes and restart the server.",
            r->name);
    return -1;
}

/* Replays the commands of r from offset pos. 0 ok, -1 logged. */
static int replay_commands(replay *r, size_t pos) {
    size_t valid = pos, multi_at = 0, body = 0;
    int in_multi = 0;
    for (;;) {
        size_t at = pos, bad = 0;
        int st = aof_parse_next(r->p, r->n, &pos, &r->cmd, &bad);
        if (st == AOFP_END) break;
        if (st == AOFP_SHORT) return truncated(r, in_multi ? multi_at : valid);
        if (st == AOFP_BAD) {
            log_msg(LOG_WARNING,
                    "Bad file format reading the append only file %s at offset %zu: make a backup of your AOF "
                    "file, then use ./redis-check-aof --fix <filename.manifest>",
                    r->name, bad);
            return -1;
        }
        if (is_word(&r->cmd, "multi")) {
            if (!in_multi) { /* a nested MULTI is ignored, as Redis's EXEC does */
                multi_at = at;
                body = pos;
            }
            in_multi = 1;
            continue;
        }
        if (is_word(&r->cmd, "exec")) {
            if (in_multi) run_block(r, body, at);
            in_multi = 0;
            valid = pos;
            continue;
        }
        const command *c;
        if (check(r, &r->cmd, at, &c) < 0) return -1;
        if (in_multi) continue; /* runs at EXEC */
        run(r, &r->cmd, c);
        valid = pos;
    }
    if (!in_multi) return 0;
    log_msg(LOG_WARNING, "Revert incomplete MULTI/EXEC transaction in AOF file %s", r->name);
    return truncated(r, multi_at);
}

/* Loads the RDB at the start of r's file; *pos gets where it ends. */
static int load_rdb(replay *r, int threads, size_t *pos) {
    log_msg(LOG_NOTICE, "Reading RDB base file on AOF loading...");
    rdb_load_stats st;
    char err[512];
    if (rdb_load_aof_base(r->path, threads, &st, pos, err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        log_msg(LOG_WARNING, "Error reading the RDB base file %s, AOF loading aborted", r->name);
        return -1;
    }
    log_msg(LOG_NOTICE, "Done loading RDB, keys loaded: %zu, keys expired: %zu.", st.keys, st.expired);
    return 0;
}

/* Loads one file of the manifest, running its commands on sh. 0 ok, -1
 * logged. */
static int load_one(const char *name, int last, int threads, session *sess, shard *sh) {
    buf path = {0};
    aof_path(&path, name);
    replay r;
    replay_init(&r, name, path.p, last, sess);
    r.sh = sh;
    int rc = -1, fd = open(path.p, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    void *map = MAP_FAILED;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        log_msg(LOG_WARNING, "Fatal error: can't open the append log file %s for reading: %s", name, strerror(errno));
    } else if (sb.st_size == 0) {
        rc = 0;
    } else if ((map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
        log_msg(LOG_WARNING, "Unrecoverable error reading the append only file %s: %s", name, strerror(errno));
    } else {
        r.p = map;
        r.n = (size_t)sb.st_size;
        size_t pos = 0;
        int is_rdb = r.n >= 5 && !memcmp(r.p, "REDIS", 5);
        if (!is_rdb || load_rdb(&r, threads, &pos) == 0) rc = replay_commands(&r, pos);
        munmap(map, r.n);
    }
    if (fd >= 0) close(fd);
    aof_cmd_free(&r.cmd);
    buf_free(&r.out);
    buf_free(&path);
    return rc;
}

int aof_replay_mem(const char *p, size_t n, const char *name) {
    buf out = {0};
    session *sess = engine_session(&out);
    replay r;
    replay_init(&r, name, NULL, 0, sess);
    r.p = p;
    r.n = n;
    aof_loading = 1;
    int rc = replay_commands(&r, 0);
    aof_loading = 0;
    aof_cmd_free(&r.cmd);
    buf_free(&r.out);
    engine_session_free(sess);
    buf_free(&out);
    return rc;
}

/* Every listed file must exist; their total size goes to *total. */
static int sizes(const aof_manifest *m, uint64_t *total, uint64_t *base_size) {
    buf path = {0};
    *total = *base_size = 0;
    int rc = 0;
    for (int i = -1; i < m->nincr && rc == 0; i++) {
        const char *name = i < 0 ? m->base.name : m->incr[i].name;
        if (!name) continue;
        aof_path(&path, name);
        struct stat sb;
        if (stat(path.p, &sb) < 0) {
            log_msg(LOG_WARNING, "Unable to obtain the AOF file %s length. stat: %s", name, strerror(errno));
            rc = -1;
        } else {
            *total += (uint64_t)sb.st_size;
            if (i < 0) *base_size = (uint64_t)sb.st_size;
        }
    }
    buf_free(&path);
    return rc;
}

/* The files of m into the shards, commands run on sh. */
static int load_files(const aof_manifest *m, int threads, uint64_t *base_size, shard *sh) {
    uint64_t total;
    if (sizes(m, &total, base_size) < 0) return -1;
    if (total == 0) return 0;
    int64_t t0 = mono_us();
    buf out = {0};
    session *sess = engine_session(&out);
    aof_loading = 1;
    int rc = 0, nfiles = (m->base.name ? 1 : 0) + m->nincr;
    for (int i = -1, k = 0; i < m->nincr && rc == 0; i++) {
        const char *name = i < 0 ? m->base.name : m->incr[i].name;
        if (!name) continue;
        int64_t t1 = mono_us();
        rc = load_one(name, ++k == nfiles, threads, sess, sh);
        if (rc == 0)
            log_msg(LOG_NOTICE, "DB loaded from %s file %s: %.3f seconds", i < 0 ? "base" : "incr", name,
                    (double)(mono_us() - t1) / 1e6);
    }
    aof_loading = 0;
    engine_session_free(sess);
    buf_free(&out);
    if (rc == 0) log_msg(LOG_NOTICE, "DB loaded from append only file: %.3f seconds", (double)(mono_us() - t0) / 1e6);
    return rc;
}

int aof_load_files(const aof_manifest *m, int threads, uint64_t *base_size) {
    int rc = load_files(m, threads, base_size, shards[0]);
    for (int i = 0; i < nshards; i++) /* the replay is not traffic */
        shards[i]->stat_commands = shards[i]->stat_hits = shards[i]->stat_misses = shards[i]->dirty = 0;
    return rc;
}

int aof_reload(shard *sh) {
    aof_manifest m;
    int have = aof_manifest_read(&m);
    uint64_t base_size = 0;
    int rc = have < 0 ? -1 : 0;
    if (have > 0) {
        rc = load_files(&m, 1, &base_size, sh);
        aof_manifest_free(&m);
    }
    return rc;
}

int aof_startup(int threads) {
    aof_manifest m;
    int have = aof_manifest_read(&m);
    uint64_t base_size = 0;
    int rc = have < 0 ? -1 : 0;
    if (have == 0 && access(cfg.appendfilename_s, F_OK) == 0) {
        /* Redis 7 would move it into the directory; refusing is safer than
         * starting empty next to it. */
        log_msg(LOG_WARNING,
                "Found the old-style AOF file %s but no manifest in %s: shoal loads only the multi-part AOF of "
                "Redis 7 (start redis-server 7 on this directory once to upgrade it)",
                cfg.appendfilename_s, cfg.appenddirname_s);
        rc = -1;
    }
    if (have > 0) rc = aof_load_files(&m, threads, &base_size);
    if (rc == 0) rc = aof_open_at_start(&m, base_size);
    aof_manifest_free(&m);
    return rc;
}
