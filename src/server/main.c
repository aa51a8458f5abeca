/* main.c - shoal-server: read the config, open the listeners, start one
 * shard per core, then wait for a signal (or SHUTDOWN) to exit. */
#include "cmd/acl.h"
#include "cmd/cmd.h"
#include "cmd/migrate.h"
#include "lib/log.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "lib/clock.h"
#include "cmd/persist.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "persist/snapshot.h"
#include "server/config.h"
#include "repl/replica.h"
#include "server/listen.h"
#include "net/tls.h"
#include "server/engine.h"
#include "shard/shard.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Loads dir/dbfilename (the process is in dir) into the shards before
 * they start, one loader thread per shard. -1 (logged) on a bad file. */
static int load_data(int n) {
    char err[512];
    rdb_load_stats st;
    if (access(cfg.dbfilename_s, F_OK) != 0) return 0;
    if (rdb_load(cfg.dbfilename_s, n, mstime(), &st, err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        return -1;
    }
    log_msg(LOG_NOTICE, "Done loading RDB, keys loaded: %zu, keys expired: %zu.", st.keys, st.expired);
    log_msg(LOG_NOTICE, "DB loaded from disk: %.3f seconds", st.seconds);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("shoal server v=%s redis_version=7.0.15\n", SHOAL_VERSION);
        return 0;
    }
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("Usage: shoal-server [/path/to/shoal.conf] [--directive value ...]\n"
               "Example: shoal-server --port 7000 --threads 4 --dir /tmp/x\n");
        return 0;
    }
    config_defaults();
    char err[2048];
    if (config_load(argc, argv, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (cfg.logfile_s && *cfg.logfile_s && log_open(cfg.logfile_s) < 0) {
        fprintf(stderr, "Can't open the log file: %s\n", cfg.logfile_s);
        return 1;
    }
    log_set_level((int)cfg.loglevel_i);
    int n = (int)cfg.threads_i;
    if (n <= 0) n = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n > MAX_SHARDS) n = MAX_SHARDS;
    if (n < 1) n = 1;
    cfg.threads_i = n;

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    mem_huge_pages(cfg_get(hugepages) != HUGEPAGES_NEVER);
    engine_init();
    migrate_net_enabled = 1; /* the library keeps MIGRATE off the network (migrate.h) */
    if (acl_startup(err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    listen_config_hooks();
    if (tls_setup(err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        return 1;
    }
    if (listen_open_all(err, sizeof err) < 0) {
        log_msg(LOG_WARNING, "%s", err);
        return 1;
    }
    if (shard_create_all(n) < 0) {
        log_msg(LOG_WARNING, "cannot create %d shards", n);
        return 1;
    }
    if (cfg.pidfile_s && *cfg.pidfile_s) {
        FILE *f = fopen(cfg.pidfile_s, "w");
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
    }
    log_msg(LOG_NOTICE, "shoal %s (redis_version 7.0.15 compatible) starting, PID: %d, %d shard%s", SHOAL_VERSION,
            (int)getpid(), n, n == 1 ? "" : "s");
    /* The banner Redis shows as its logo (always-show-logo, or a terminal);
     * test harnesses wait for its " PID: " as redis-server's. */
    if (cfg_get(always_show_logo) || (isatty(STDOUT_FILENO) && !(cfg.logfile_s && *cfg.logfile_s)))
        log_msg(LOG_NOTICE, "shoal %s, mode standalone, Port: %lld, TLS port: %lld, PID: %d, shards: %d", SHOAL_VERSION,
                (long long)cfg.port_i, (long long)cfg.tls_port_i, (int)getpid(), n);
    mem_mark_startup(); /* MEMORY STATS startup.allocated: before any data */
    if (cfg_get(appendonly) ? aof_startup(n) < 0 : load_data(n) < 0) return 1; /* AOF wins over RDB, as Redis */
    if (shard_start_all() < 0) {
        log_msg(LOG_WARNING, "cannot start shard threads");
        return 1;
    }
    log_msg(LOG_NOTICE, "Ready to accept connections tcp on port %lld", (long long)cfg.port_i);
    if (replica_start() < 0) return 1; /* the replicaof directive */
    if (cfg.tls_port_i) log_msg(LOG_NOTICE, "Ready to accept connections tls on port %lld", (long long)cfg.tls_port_i);
    int sig = 0;
    sigwait(&set, &sig);
    int by_command = __atomic_load_n(&shutdown_saved, __ATOMIC_ACQUIRE);
    if (!by_command)
        log_msg(LOG_NOTICE, "Received %s, scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
    listen_close_all();
    shard_stop_all();
    aof_shutdown();
    snap_abort(); /* a background save still running: its temp file goes */
    int rc = 0;
    if (!by_command && cfg.save_s && *cfg.save_s) {
        log_msg(LOG_NOTICE, "Saving the final RDB snapshot before exiting.");
        int ids[MAX_SHARDS];
        for (int i = 0; i < n; i++) ids[i] = i;
        if (persist_save_shards(ids, n, mstime()) < 0) {
            log_msg(LOG_WARNING, "Error trying to save the DB.");
            rc = 1;
        }
    }
    if (cfg.pidfile_s && *cfg.pidfile_s) unlink(cfg.pidfile_s);
    log_msg(LOG_NOTICE, "shoal is now ready to exit, bye bye...");
    _exit(rc);
}
