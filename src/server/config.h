/* config.h - the server's configuration, one row per directive.
 *
 * CONFIG_TABLE generates the struct fields, the parser for the config file
 * and `--directive value` arguments, CONFIG GET/SET and CONFIG REWRITE. The
 * values are written by the main thread at startup, and later only by
 * CONFIG SET running under a lock of every shard; hot-path readers load
 * integers with relaxed atomics (cfg_get).
 *
 * A directive may have other names, Redis's aliases (config.c lists them:
 * hash-max-ziplist-entries for hash-max-listpack-entries, ...). The
 * functions below number *names*: 0 .. config_count()-1 are the rows' own
 * names and then the aliases, each alias a name of its own (CONFIG GET
 * shows it as such, and an error names it), with its row's value. */
#ifndef SHOAL_CONFIG_H
#define SHOAL_CONFIG_H
#include "lib/buf.h"
#include <stdint.h>

/* CT_MEMPCT: bytes, or a percentage of maxmemory stored as its negative
 * ("10%" is -10), as Redis's PERCENT_CONFIG; min is -(the largest percentage). */
enum { CT_INT, CT_MEM, CT_BOOL, CT_STR, CT_ENUM, CT_SPECIAL, CT_MEMPCT };
/* hugepages options, in the order config.c lists them. */
enum { HUGEPAGES_NEVER = 0, HUGEPAGES_MADVISE = 1, HUGEPAGES_ALWAYS = 2 };
/* The last column: who may change a directive at run time (one of the
 * first three), plus flags. */
enum {
    CFG_IMMUTABLE = 0,
    CFG_MUTABLE = 1,
    CFG_PROTECTED = 2, /* mutable only with enable-protected-configs */
    CFG_HIDDEN = 4,    /* CONFIG GET shows it for its exact name only, never for a pattern (Redis's HIDDEN_CONFIG) */
    CFG_FIXED = 8,     /* immutable: shoal's own, set at start (threads, cpu-affinity, hugepages):
                        * CONFIG SET of the value it has is OK and does nothing, another one is refused */
    CFG_VOLATILE = 16, /* CONFIG SET runs the apply hook even when the value is the same (a file
                        * name: the file may have changed; Redis's VOLATILE_CONFIG) */
};

/* X(name, field, type, default, min, max, mutability). CT_ENUM rows store
 * the index of their option (config.c lists the options); CT_STR rows may
 * have a checker in config.c (save, maxmemory-policy, cpu-affinity). */
#define CONFIG_TABLE(X)                                                                                                \
    X("port", port, CT_INT, "6379", 0, 65535, 1)                                                                    \
    X("bind", bind, CT_STR, "127.0.0.1", 0, 0, 1)                                                                   \
    X("unixsocket", unixsocket, CT_STR, "", 0, 0, 0)                                                                   \
    X("unixsocketperm", unixsocketperm, CT_INT, "0", 0, 0777, 0)                                                       \
    X("maxclients", maxclients, CT_INT, "10000", 1, 4294967295LL, 1)                                                   \
    X("timeout", timeout, CT_INT, "0", 0, 2147483647, 1)                                                               \
    X("tcp-keepalive", tcp_keepalive, CT_INT, "300", 0, 2147483647, 1)                                                 \
    X("tcp-backlog", tcp_backlog, CT_INT, "511", 0, INT32_MAX, 0)                                                      \
    X("tls-port", tls_port, CT_INT, "0", 0, 65535, 1)                                                                 \
    X("tls-cert-file", tls_cert_file, CT_STR, "", 0, 0, CFG_MUTABLE | CFG_VOLATILE)                                    \
    X("tls-key-file", tls_key_file, CT_STR, "", 0, 0, CFG_MUTABLE | CFG_VOLATILE)                                      \
    X("tls-key-file-pass", tls_key_file_pass, CT_STR, "", 0, 0, CFG_MUTABLE)                                           \
    X("tls-dh-params-file", tls_dh_params_file, CT_STR, "", 0, 0, CFG_MUTABLE | CFG_VOLATILE)                          \
    X("tls-ca-cert-file", tls_ca_cert_file, CT_STR, "", 0, 0, CFG_MUTABLE | CFG_VOLATILE)                              \
    X("tls-ca-cert-dir", tls_ca_cert_dir, CT_STR, "", 0, 0, CFG_MUTABLE | CFG_VOLATILE)                                \
    X("tls-auth-clients", tls_auth_clients, CT_ENUM, "yes", 0, 0, CFG_MUTABLE)                                         \
    X("tls-protocols", tls_protocols, CT_STR, "", 0, 0, CFG_MUTABLE)                                                   \
    X("tls-ciphers", tls_ciphers, CT_STR, "", 0, 0, CFG_MUTABLE)                                                       \
    X("tls-ciphersuites", tls_ciphersuites, CT_STR, "", 0, 0, CFG_MUTABLE)                                             \
    X("tls-prefer-server-ciphers", tls_prefer_server_ciphers, CT_BOOL, "no", 0, 0, CFG_MUTABLE)                        \
    X("tls-session-caching", tls_session_caching, CT_BOOL, "yes", 0, 0, CFG_MUTABLE)                                   \
    X("tls-session-cache-size", tls_session_cache_size, CT_INT, "20480", 0, INT32_MAX, CFG_MUTABLE)                    \
    X("tls-session-cache-timeout", tls_session_cache_timeout, CT_INT, "300", 0, INT32_MAX, CFG_MUTABLE)                \
    X("databases", databases, CT_INT, "16", 1, 1000000, 0)                                                             \
    X("loglevel", loglevel, CT_ENUM, "notice", 0, 0, 1)                                                                \
    X("logfile", logfile, CT_STR, "", 0, 0, 0)                                                                         \
    X("dir", dir, CT_STR, ".", 0, 0, 2)                                                                                \
    X("dbfilename", dbfilename, CT_STR, "dump.rdb", 0, 0, 2)                                                           \
    X("rdbcompression", rdbcompression, CT_BOOL, "yes", 0, 0, 1)                                                       \
    X("rdbchecksum", rdbchecksum, CT_BOOL, "yes", 0, 0, 1)                                                             \
    X("stop-writes-on-bgsave-error", stop_writes_on_bgsave_error, CT_BOOL, "yes", 0, 0, 1)                             \
    X("rdb-key-save-delay", rdb_key_save_delay, CT_INT, "0", INT32_MIN, INT32_MAX, CFG_MUTABLE | CFG_HIDDEN)           \
    X("key-load-delay", key_load_delay, CT_INT, "0", INT32_MIN, INT32_MAX, CFG_MUTABLE | CFG_HIDDEN)                   \
    X("hugepages", hugepages, CT_ENUM, "never", 0, 0, CFG_FIXED)                                                       \
    X("proto-max-bulk-len", proto_max_bulk_len, CT_MEM, "512mb", 1024 * 1024, INT64_MAX, 1)                            \
    X("client-query-buffer-limit", client_query_buffer_limit, CT_MEM, "1gb", 1024 * 1024, INT64_MAX, 1)                \
    X("client-output-buffer-limit", client_output_buffer_limit, CT_SPECIAL,                                            \
      "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", 0, 0, 1)                                  \
    X("threads", threads, CT_INT, "0", 0, 64, CFG_FIXED)                                                               \
    X("cpu-affinity", cpu_affinity, CT_STR, "", 0, 0, CFG_FIXED)                                                       \
    X("io-threads", io_threads, CT_INT, "1", 1, 128, 0)                                                                \
    X("hz", hz, CT_INT, "10", 0, 2147483647, 1)                                                                        \
    X("activerehashing", activerehashing, CT_BOOL, "yes", 0, 0, 1)                                                     \
    X("active-expire-effort", active_expire_effort, CT_INT, "1", 1, 10, 1)                                             \
    X("daemonize", daemonize, CT_BOOL, "no", 0, 0, 0)                                                                  \
    X("always-show-logo", always_show_logo, CT_BOOL, "no", 0, 0, 0)                                                    \
    X("pidfile", pidfile, CT_STR, "", 0, 0, 0)                                                                         \
    X("protected-mode", protected_mode, CT_BOOL, "yes", 0, 0, 1)                                                       \
    X("requirepass", requirepass, CT_STR, "", 0, 0, 1)                                                                 \
    X("aclfile", aclfile, CT_STR, "", 0, 0, 0)                                                                         \
    X("acllog-max-len", acllog_max_len, CT_INT, "128", 0, INT64_MAX, 1)                                                \
    X("acl-pubsub-default", acl_pubsub_default, CT_ENUM, "resetchannels", 0, 0, 1)                                     \
    X("enable-protected-configs", enable_protected_configs, CT_ENUM, "no", 0, 0, 0)                                    \
    X("enable-debug-command", enable_debug_command, CT_ENUM, "no", 0, 0, 0)                                            \
    X("save", save, CT_STR, "", 0, 0, 1)                                                                               \
    X("appendonly", appendonly, CT_BOOL, "no", 0, 0, 1)                                                                \
    X("appendfsync", appendfsync, CT_ENUM, "everysec", 0, 0, 1)                                                        \
    X("appenddirname", appenddirname, CT_STR, "appendonlydir", 0, 0, 0)                                                \
    X("appendfilename", appendfilename, CT_STR, "appendonly.aof", 0, 0, 0)                                             \
    X("aof-use-rdb-preamble", aof_use_rdb_preamble, CT_BOOL, "yes", 0, 0, 1)                                           \
    X("aof-load-truncated", aof_load_truncated, CT_BOOL, "yes", 0, 0, 1)                                               \
    X("aof-timestamp-enabled", aof_timestamp_enabled, CT_BOOL, "no", 0, 0, 1)                                          \
    X("auto-aof-rewrite-percentage", auto_aof_rewrite_percentage, CT_INT, "100", 0, 2147483647, 1)                     \
    X("auto-aof-rewrite-min-size", auto_aof_rewrite_min_size, CT_MEM, "64mb", 0, INT64_MAX, 1)                         \
    X("maxmemory", maxmemory, CT_MEM, "0", 0, INT64_MAX, 1)                                                            \
    X("maxmemory-clients", maxmemory_clients, CT_MEMPCT, "0", -100, INT64_MAX, 1)                                     \
    X("repl-backlog-size", repl_backlog_size, CT_MEM, "1mb", 1, INT64_MAX, 1)                                         \
    X("repl-backlog-ttl", repl_backlog_ttl, CT_INT, "3600", 0, 2147483647, 1)                                         \
    X("repl-ping-replica-period", repl_ping_replica_period, CT_INT, "10", 1, 2147483647, 1)                           \
    X("min-replicas-to-write", min_replicas_to_write, CT_INT, "0", 0, 2147483647, 1)                                  \
    X("min-replicas-max-lag", min_replicas_max_lag, CT_INT, "10", 0, 2147483647, 1)                                   \
    X("maxmemory-policy", maxmemory_policy, CT_STR, "noeviction", 0, 0, 1)                                             \
    X("maxmemory-samples", maxmemory_samples, CT_INT, "5", 1, INT32_MAX, 1)                                            \
    X("maxmemory-eviction-tenacity", maxmemory_eviction_tenacity, CT_INT, "10", 0, 100, 1)                             \
    X("lfu-log-factor", lfu_log_factor, CT_INT, "10", 0, INT32_MAX, 1)                                                 \
    X("lfu-decay-time", lfu_decay_time, CT_INT, "1", 0, INT32_MAX, 1)                                                  \
    X("lazyfree-lazy-user-del", lazyfree_lazy_user_del, CT_BOOL, "no", 0, 0, 1)                                        \
    X("lazyfree-lazy-user-flush", lazyfree_lazy_user_flush, CT_BOOL, "no", 0, 0, 1)                                    \
    X("lazyfree-lazy-expire", lazyfree_lazy_expire, CT_BOOL, "no", 0, 0, 1)                                            \
    X("lazyfree-lazy-eviction", lazyfree_lazy_eviction, CT_BOOL, "no", 0, 0, 1)                                        \
    X("lazyfree-lazy-server-del", lazyfree_lazy_server_del, CT_BOOL, "no", 0, 0, 1)                                    \
    X("slowlog-log-slower-than", slowlog_log_slower_than, CT_INT, "10000", -1, INT64_MAX, 1)                           \
    X("slowlog-max-len", slowlog_max_len, CT_INT, "128", 0, INT64_MAX, 1)                                              \
    X("latency-monitor-threshold", latency_monitor_threshold, CT_INT, "0", 0, INT64_MAX, 1)                            \
    X("latency-tracking", latency_tracking, CT_BOOL, "yes", 0, 0, 1)                                                   \
    X("latency-tracking-info-percentiles", latency_tracking_info_percentiles, CT_STR, "50 99 99.9", 0, 0, 1)           \
    X("busy-reply-threshold", busy_reply_threshold, CT_INT, "5000", 0, INT64_MAX, 1)                                   \
    X("hash-max-listpack-entries", hash_max_listpack_entries, CT_INT, "512", 0, INT64_MAX, 1)                          \
    X("hash-max-listpack-value", hash_max_listpack_value, CT_MEM, "64", 0, INT64_MAX, 1)                               \
    X("set-max-intset-entries", set_max_intset_entries, CT_INT, "512", 0, INT64_MAX, 1)                                \
    X("zset-max-listpack-entries", zset_max_listpack_entries, CT_INT, "128", 0, INT64_MAX, 1)                          \
    X("zset-max-listpack-value", zset_max_listpack_value, CT_MEM, "64", 0, INT64_MAX, 1)                               \
    X("list-max-listpack-size", list_max_listpack_size, CT_INT, "-2", INT32_MIN, INT32_MAX, 1)                         \
    X("list-compress-depth", list_compress_depth, CT_INT, "0", 0, INT32_MAX, 1)                                        \
    X("hll-sparse-max-bytes", hll_sparse_max_bytes, CT_MEM, "3000", 0, INT64_MAX, 1)                                  \
    X("stream-node-max-bytes", stream_node_max_bytes, CT_MEM, "4096", 0, INT64_MAX, 1)                                 \
    X("stream-node-max-entries", stream_node_max_entries, CT_INT, "100", 0, INT64_MAX, 1)                             \
    X("notify-keyspace-events", notify_keyspace_events, CT_STR, "", 0, 0, 1)                                           \
    X("tracking-table-max-keys", tracking_table_max_keys, CT_INT, "1000000", 0, INT64_MAX, 1)                         \
    X("replicaof", replicaof, CT_STR, "", 0, 0, CFG_IMMUTABLE)                                                         \
    X("masterauth", masterauth, CT_STR, "", 0, 0, CFG_MUTABLE)                                                         \
    X("masteruser", masteruser, CT_STR, "", 0, 0, CFG_MUTABLE)                                                         \
    X("replica-read-only", replica_read_only, CT_BOOL, "yes", 0, 0, CFG_MUTABLE)                                       \
    X("replica-serve-stale-data", replica_serve_stale_data, CT_BOOL, "yes", 0, 0, CFG_MUTABLE)                         \
    X("repl-timeout", repl_timeout, CT_INT, "60", 1, INT32_MAX, CFG_MUTABLE)                                           \
    X("replica-priority", replica_priority, CT_INT, "100", 0, INT32_MAX, CFG_MUTABLE)                                  \
    X("replica-announce-ip", replica_announce_ip, CT_STR, "", 0, 0, CFG_MUTABLE)                                       \
    X("replica-announce-port", replica_announce_port, CT_INT, "0", 0, 65535, CFG_MUTABLE)                              \
    X("replica-announced", replica_announced, CT_BOOL, "yes", 0, 0, CFG_MUTABLE)                                       \
    X("replica-lazy-flush", replica_lazy_flush, CT_BOOL, "no", 0, 0, CFG_MUTABLE)                                      \
    X("repl-diskless-load", repl_diskless_load, CT_ENUM, "disabled", 0, 0, CFG_MUTABLE)

/* `user` lines of the config file and arguments (their words after
 * "user"), kept for the ACL layer, which reads them once the command table
 * exists. The pointers live as long as the process. */
int config_user_count(void);
void config_user_line(int i, int *argc, const char ***argv, const size_t **argl);
/* CONFIG REWRITE writes the current users as `user` lines through this
 * hook (set by the ACL layer; it writes nothing when an aclfile is used). */
extern void (*config_users_hook)(buf *out);

/* Values of enable-protected-configs and enable-debug-command. */
enum { CFG_ALLOW_NO = 0, CFG_ALLOW_YES = 1, CFG_ALLOW_LOCAL = 2 };
/* Values of appendfsync, in Redis's order of the options. */
enum { CFG_FSYNC_EVERYSEC = 0, CFG_FSYNC_ALWAYS = 1, CFG_FSYNC_NO = 2 };
/* Values of tls-auth-clients, in Redis's order of the options. */
enum { CFG_TLS_AUTH_NO = 0, CFG_TLS_AUTH_YES = 1, CFG_TLS_AUTH_OPTIONAL = 2 };
/* Values of repl-diskless-load, in Redis's order of the options. */
enum { CFG_DISKLESS_LOAD_DISABLED = 0, CFG_DISKLESS_LOAD_ON_EMPTY_DB = 1, CFG_DISKLESS_LOAD_SWAPDB = 2 };

typedef struct config {
#define CFG_FIELD(name, field, type, def, min, max, mut)                                                               \
    int64_t field##_i;                                                                                                 \
    char *field##_s;
    CONFIG_TABLE(CFG_FIELD)
#undef CFG_FIELD
    /* client-output-buffer-limit, parsed: [class][hard, soft, seconds] */
    int64_t obuf_limits[3][3];
    char *config_file; /* absolute path, for CONFIG REWRITE */
} config;

extern config cfg;

#define cfg_get(field) __atomic_load_n(&cfg.field##_i, __ATOMIC_RELAXED)

/* All of these run on the main thread before the shards start, or under a
 * lock of every shard (CONFIG SET/GET/REWRITE are CMD_ALLSHARDS). */

/* Fills cfg with defaults. Strings set earlier are freed, except `dir`
 * (its default is only "."; the fuzzers free it themselves). */
void config_defaults(void);
/* "1gb" -> bytes, as Redis's memtoull: whole non-negative numbers with an
 * optional unit (b k kb m mb g gb). 1 and *out, or 0 when malformed. */
int cfg_parse_memory(const char *s, int64_t *out);
/* Loads a file (argv[1] when it does not start with "--"; "-" is stdin)
 * and then `--name value ...` arguments, each as one more line. On error
 * writes a message naming the line into err and returns -1. */
int config_load(int argc, char **argv, char *err, size_t errlen);
/* CONFIG SET of one directive; 0 ok, else -1 with the Redis error text
 * ("ERR ...") in err. */
int config_set(const char *name, const char *value, char *err, size_t errlen);
/* Stores a value the server itself changes (REPLICAOF sets `replicaof`,
 * which CONFIG SET may not), with no mutability check and no apply hook.
 * The caller holds every shard, as CONFIG SET does. 0 ok, else -1. */
int config_store(const char *name, const char *value, char *err, size_t errlen);
/* CONFIG SET of n pairs, all or nothing, in Redis 7.0's order: first every
 * name is checked (unknown, immutable or protected, given twice: the first
 * such error wins), then the values are set in order (a bad one puts back
 * those before it), then the apply hooks of the directives that changed
 * run (one that fails puts back every pair and runs the hooks again). On
 * an error nothing changed and err holds Redis's text. */
/* Set by CONFIG SET's handler around config_set_many on its thread: the
 * client is not local, so `enable-protected-configs local` refuses. */
extern __thread int config_caller_remote;
int config_set_many(int n, const char *const *names, const char *const *values, char *err, size_t errlen);
/* The same with each value's length (NULL: C strings): a string value may
 * hold NUL bytes (requirepass "abc\0def", binary-safe as in Redis). */
int config_set_many_n(int n, const char *const *names, const char *const *values, const size_t *lens, char *err,
                      size_t errlen);
/* The byte length of a directive's value as CONFIG GET shows it (a string
 * value may hold NUL bytes); 0 for an unknown name. */
size_t config_value_len(const char *name);
/* What a directive's change must do beyond storing the value (AOF on/off).
 * Runs under CONFIG SET's lock of every shard when the value changed; 0 ok,
 * else -1 with Redis's reason (no "ERR" prefix) in err. */
typedef int (*config_apply_fn)(char *err, size_t errlen);
/* Registers fn for the directive `name` (startup, before any CONFIG SET). */
void config_on_apply(const char *name, config_apply_fn fn);
/* The name number of a name (a directive's own or an alias, any case), or -1. */
int config_find(const char *name);
/* 1 when name id is left out of CONFIG GET's pattern matches. */
int config_hidden(int id);
/* CONFIG REWRITE: the config file keeps its comments and unknown lines;
 * each directive's first line gets its current value, later duplicates go,
 * and directives changed from their default that the file lacks are
 * appended. 0 ok, else -1 with the Redis error text in err. */
int config_rewrite(char *err, size_t errlen);
/* The value of name id's directive as CONFIG GET shows it. */
void config_value(int id, buf *out);
/* The number of names (directives and aliases), and name id as CONFIG GET
 * shows it for a pattern. */
int config_count(void);
const char *config_name(int id);
#endif
