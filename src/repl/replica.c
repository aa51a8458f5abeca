/* replica.c - a replica's state and its shard-side work; see replica.h.
 *
 * REPLICAOF (any thread, holding every shard) changes the master and wakes
 * the link thread (replica_link.c); shard 0's cron loads a payload the
 * link thread handed over and owns the master's connection; INFO and ROLE
 * read the state. What they share is in replica_state.h, under repl_lock;
 * the flags commands read on their hot path (repl_replica, the state) are
 * atomics. */
#include "repl/replica.h"
#include "cmd/cmd.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "net/conn.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "repl/replica_state.h"
#include "server/config.h"
#include "shard/db.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int repl_replica;
void (*replica_flush_hook)(void);

pthread_mutex_t repl_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t repl_wake = PTHREAD_COND_INITIALIZER;
int repl_st;
uint64_t repl_gen;
char repl_host[256];
int repl_port;
int64_t repl_xfer_size, repl_xfer_read, repl_xfer_last_io;
char *repl_auth_pass, *repl_auth_user, *repl_announce_ip;
size_t repl_auth_pass_len;
repl_handoff repl_pend;
int repl_have_pend;

static conn *link_conn;       /* under repl_lock: the master's connection (shard 0) */
static int64_t down_since;    /* unix seconds the link went down; 0: never up since REPLICAOF */
static int64_t last_off = -1; /* the processed offset when the link last closed */
static char replid[41] = "0000000000000000000000000000000000000000";

int repl_state(void) { return __atomic_load_n(&repl_st, __ATOMIC_RELAXED); }

void repl_drop_pend_locked(void) {
    if (!repl_have_pend) return;
    close(repl_pend.fd);
    free(repl_pend.rdb);
    free(repl_pend.rest);
    repl_have_pend = 0;
}

/* ---- shard 0: loading the payload, the master's connection ---- */

static void load_proc(cmd_ctx *c);
static const command load_row = {.name = "replica-load", .proc = load_proc, .arity = 1, .flags = CMD_ALLSHARDS};

static void send_ack(conn *c) {
    buf *o = session_reply_buf(&c->s);
    char off[24];
    int n = snprintf(off, sizeof off, "%llu", (unsigned long long)c->repl_applied);
    buf_printf(o, "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n", n, off);
}

/* Runs holding every shard (an internal transaction started by shard 0's
 * cron): the databases are emptied and the payload loaded, then the
 * socket becomes the master's connection on this shard. */
static void load_proc(cmd_ctx *c) {
    buf_adds(c->out, "+OK\r\n"); /* (dropped: no client) */
    pthread_mutex_lock(&repl_lock);
    if (!repl_have_pend) {
        pthread_mutex_unlock(&repl_lock);
        return;
    }
    repl_handoff h = repl_pend;
    repl_have_pend = 0;
    int current = h.gen == repl_gen;
    pthread_mutex_unlock(&repl_lock);
    if (!current) {
        close(h.fd);
        free(h.rdb);
        free(h.rest);
        return;
    }
    log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync: Flushing old data");
    int ndb = (int)cfg_get(databases);
    int lazy = cfg_get(replica_lazy_flush) != 0;
    for (int i = 0; i < nshards; i++)
        for (int d = 0; d < ndb; d++)
            if (lazy)
                db_clear_async(&shards[i]->dbs[d]);
            else
                db_clear(&shards[i]->dbs[d]);
    if (replica_flush_hook) replica_flush_hook();
    log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory");
    rdb_load_stats st;
    char err[512];
    rdb_load_keep_expired = 1;
    int rc = rdb_load_mem(h.rdb, h.n, -1, mstime(), &st, err, sizeof err);
    rdb_load_keep_expired = 0;
    free(h.rdb);
    if (rc < 0) {
        log_msg(LOG_WARNING, "%s", err);
        log_msg(LOG_WARNING, "Failed trying to load the MASTER synchronization DB from socket");
        close(h.fd);
        free(h.rest);
        pthread_mutex_lock(&repl_lock);
        if (h.gen == repl_gen) {
            repl_set_state(REPL_CONNECT);
            pthread_cond_broadcast(&repl_wake);
        }
        pthread_mutex_unlock(&repl_lock);
        return;
    }
    conn *m = conn_create(c->sh, h.fd, 0);
    m->repl_master = 1;
    m->s.flags |= SESS_REPLY_OFF | SESS_NO_EVICT;
    m->s.authed = 1; /* no user: no ACL checks (the master's commands obey no client rule) */
    m->repl_read = m->repl_applied = (uint64_t)h.offset;
    pthread_mutex_lock(&repl_lock); /* (REPLICAOF holds every shard too: the generation is still h.gen) */
    snprintf(m->addr, sizeof m->addr, "%.100s:%d", repl_host, repl_port);
    memcpy(replid, h.replid, sizeof replid);
    link_conn = m;
    down_since = 0;
    repl_set_state(REPL_CONNECTED);
    pthread_mutex_unlock(&repl_lock);
    if (h.nrest) {
        buf_add(&m->qbuf, h.rest, h.nrest);
        m->repl_read += h.nrest;
        shard_add_pending(c->sh, m);
    }
    free(h.rest);
    send_ack(m); /* a diskless master puts the replica online at its first ACK */
    log_msg(LOG_NOTICE, "MASTER <-> REPLICA sync: Finished with success");
    if (cfg_get(appendonly)) { /* the AOF knows nothing of the load: a new base from here, as Redis restarts it */
        int ids[MAX_SHARDS];
        for (int i = 0; i < nshards; i++)
            ids[i] = i;
        if (aof_rewrite_start(ids, nshards, mstime(), err, sizeof err) < 0)
            log_msg(LOG_WARNING, "Failed to rewrite the AOF after the sync with the master: %s", err);
    }
}

static int64_t last_ack_ms;

static void replica_cron(shard *s) {
    if (s->id != 0) return;
    pthread_mutex_lock(&repl_lock);
    int start = repl_have_pend;
    conn *m = link_conn;
    pthread_mutex_unlock(&repl_lock);
    if (start) {
        const char *argv[] = {"replica-load"};
        size_t argl[] = {12};
        tx_begin_internal(s, &load_row, 1, argv, argl);
    }
    if (!m || m->closed) return;
    int64_t now = s->now_ms;
    if (now - m->last_io_ms > cfg_get(repl_timeout) * 1000) {
        log_msg(LOG_WARNING, "MASTER timeout: no data nor PING received...");
        conn_close(m);
        return;
    }
    if (now - last_ack_ms >= 1000) {
        last_ack_ms = now;
        send_ack(m);
    }
}

/* REPLCONF GETACK from the master: answered at once with the offset of
 * the commands before it. */
static int master_cmd(conn *c, int argc, const char **argv, const size_t *argl) {
    if (argc == 3 && argl[0] == 8 && !strncasecmp(argv[0], "replconf", 8) && argl[1] == 6 &&
        !strncasecmp(argv[1], "getack", 6)) {
        send_ack(c);
        return 1;
    }
    return 0;
}

static void master_closed(conn *c) {
    pthread_mutex_lock(&repl_lock);
    last_off = (int64_t)c->repl_applied;
    if (link_conn == c) {
        link_conn = NULL;
        log_msg(LOG_WARNING, "Connection with master lost.");
        down_since = mstime() / 1000;
        if (repl_replica) {
            repl_set_state(REPL_CONNECT);
            pthread_cond_broadcast(&repl_wake);
        }
    }
    pthread_mutex_unlock(&repl_lock);
}

/* ---- configuration and commands ---- */

static void copy_str(char **dst, size_t *dlen, const char *name, const char *v) {
    size_t n = v ? config_value_len(name) : 0;
    free(*dst);
    *dst = malloc(n + 1);
    if (n) memcpy(*dst, v, n);
    (*dst)[n] = 0;
    if (dlen) *dlen = n;
}

static int auth_apply(char *err, size_t errlen) {
    pthread_mutex_lock(&repl_lock);
    copy_str(&repl_auth_pass, &repl_auth_pass_len, "masterauth", cfg.masterauth_s);
    copy_str(&repl_auth_user, NULL, "masteruser", cfg.masteruser_s);
    copy_str(&repl_announce_ip, NULL, "replica-announce-ip", cfg.replica_announce_ip_s);
    pthread_mutex_unlock(&repl_lock);
    return 0;
}

/* Closes the master's connection (from any thread: shard 0 closes it at
 * its next safe point) and forgets a payload not loaded yet. Under L. */
static void cut_link_locked(void) {
    repl_drop_pend_locked();
    conn *m = link_conn;
    if (!m) return;
    link_conn = NULL;
    log_msg(LOG_WARNING, "Connection with master lost.");
    last_off = (int64_t)m->repl_applied;
    conn_mark_killed(m);
    __atomic_store_n(&m->sh->kill_reqs, 1, __ATOMIC_RELEASE);
    shard_wake(m->sh);
}

int replica_set_master(const char *h, int p, const char *who) {
    pthread_mutex_lock(&repl_lock);
    if (repl_replica && p == repl_port && !strcasecmp(h, repl_host)) {
        pthread_mutex_unlock(&repl_lock);
        log_msg(LOG_NOTICE, "REPLICAOF would result into synchronization with the master we are already connected "
                            "with. No operation performed.");
        return 1;
    }
    cut_link_locked();
    snprintf(repl_host, sizeof repl_host, "%s", h);
    repl_port = p;
    __atomic_store_n(&repl_gen, repl_gen + 1, __ATOMIC_RELEASE);
    down_since = 0;
    last_off = -1;
    __atomic_store_n(&repl_replica, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&db_keep_expired, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&log_role, 'S', __ATOMIC_RELAXED);
    repl_set_state(REPL_CONNECT);
    char v[300], err[128];
    snprintf(v, sizeof v, "%s %d", h, p);
    config_store("replicaof", v, err, sizeof err);
    pthread_cond_broadcast(&repl_wake);
    pthread_mutex_unlock(&repl_lock);
    if (who) log_msg(LOG_NOTICE, "REPLICAOF %s:%d enabled (user request from '%s')", h, p, who);
    repl_link_start();
    return 0;
}

void replica_set_none(const char *who) {
    pthread_mutex_lock(&repl_lock);
    int was = repl_replica;
    cut_link_locked();
    __atomic_store_n(&repl_gen, repl_gen + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&repl_replica, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&db_keep_expired, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&log_role, 'M', __ATOMIC_RELAXED);
    repl_set_state(REPL_NONE);
    char err[128];
    config_store("replicaof", "", err, sizeof err);
    pthread_mutex_unlock(&repl_lock);
    if (was) log_msg(LOG_NOTICE, "MASTER MODE enabled (user request from '%s')", who);
}

int replica_start(void) {
    auth_apply(NULL, 0);
    const char *v = cfg.replicaof_s;
    if (!v || !*v) return 0;
    char h[256];
    int p;
    if (sscanf(v, "%255s %d", h, &p) != 2 || p < 0 || p > 65535) {
        log_msg(LOG_WARNING, "Invalid replicaof directive: '%s'", v);
        return -1;
    }
    replica_set_master(h, p, NULL);
    return 0;
}

void replica_init(void) {
    conn_master_cmd_hook = master_cmd;
    conn_master_closed_hook = master_closed;
    shard_add_cron_hook(replica_cron);
    config_on_apply("masterauth", auth_apply);
    config_on_apply("masteruser", auth_apply);
    config_on_apply("replica-announce-ip", auth_apply);
}

const char *replica_refusal(int is_write, int stale_ok) {
    if (!repl_is_replica()) return NULL;
    if (is_write && cfg_get(replica_read_only)) return "READONLY You can't write against a read only replica.";
    if (!stale_ok && !cfg_get(replica_serve_stale_data) && repl_state() != REPL_CONNECTED)
        return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
    return NULL;
}

/* ---- ROLE and INFO ---- */

void replica_role(replica_role_info *out) {
    pthread_mutex_lock(&repl_lock);
    snprintf(out->host, sizeof out->host, "%s", repl_host);
    out->port = repl_port;
    out->state = repl_state();
    out->offset = link_conn ? (int64_t)__atomic_load_n(&link_conn->repl_applied, __ATOMIC_RELAXED) : -1;
    pthread_mutex_unlock(&repl_lock);
}

void replica_info(buf *o) {
    pthread_mutex_lock(&repl_lock);
    int st = repl_state();
    int64_t now = mstime() / 1000;
    int64_t read = last_off < 0 ? 0 : last_off, applied = read;
    int64_t last_io = -1;
    if (link_conn) {
        read = (int64_t)__atomic_load_n(&link_conn->repl_read, __ATOMIC_RELAXED);
        applied = (int64_t)__atomic_load_n(&link_conn->repl_applied, __ATOMIC_RELAXED);
        last_io = now - __atomic_load_n(&link_conn->last_io_ms, __ATOMIC_RELAXED) / 1000;
    }
    buf_printf(o,
               "role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\nmaster_link_status:%s\r\n"
               "master_last_io_seconds_ago:%lld\r\nmaster_sync_in_progress:%d\r\nslave_read_repl_offset:%lld\r\n"
               "slave_repl_offset:%lld\r\n",
               repl_host, repl_port, st == REPL_CONNECTED ? "up" : "down", (long long)last_io, st == REPL_TRANSFER,
               (long long)read, (long long)applied);
    if (st == REPL_TRANSFER) {
        int64_t size = __atomic_load_n(&repl_xfer_size, __ATOMIC_RELAXED),
                got = __atomic_load_n(&repl_xfer_read, __ATOMIC_RELAXED);
        double perc = size ? (double)got / (double)size * 100 : 0; /* (negative with the EOF mark, as Redis's) */
        buf_printf(o,
                   "master_sync_total_bytes:%lld\r\nmaster_sync_read_bytes:%lld\r\nmaster_sync_left_bytes:%lld\r\n"
                   "master_sync_perc:%.2f\r\nmaster_sync_last_io_seconds_ago:%d\r\n",
                   (long long)size, (long long)got, (long long)(size - got), perc,
                   (int)(now - __atomic_load_n(&repl_xfer_last_io, __ATOMIC_RELAXED)));
    }
    if (st != REPL_CONNECTED)
        buf_printf(o, "master_link_down_since_seconds:%lld\r\n", down_since ? (long long)(now - down_since) : -1LL);
    buf_printf(o,
               "slave_priority:%lld\r\nslave_read_only:%d\r\nreplica_announced:%d\r\nconnected_slaves:0\r\n"
               "master_failover_state:no-failover\r\nmaster_replid:%s\r\n"
               "master_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:%lld\r\n"
               "second_repl_offset:-1\r\nrepl_backlog_active:0\r\nrepl_backlog_size:1048576\r\n"
               "repl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
               (long long)cfg_get(replica_priority), cfg_get(replica_read_only) ? 1 : 0,
               cfg_get(replica_announced) ? 1 : 0, replid, (long long)applied);
    pthread_mutex_unlock(&repl_lock);
}
