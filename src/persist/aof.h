/* aof.h - the append-only file (Redis 7.0 multi-part layout).
 *
 * Every shard logs the commands it executes into its own buffer (RESP, a
 * SELECT when the database changes); at the end of its loop turn, and
 * before any message leaves it, the shard appends that buffer to the one
 * incr file under a mutex, so no reply or cross-shard result leaves before
 * its write. Under appendfsync always the shard then fdatasyncs (one sync
 * per turn covers every command of the turn, and one shard's sync covers
 * what the others wrote before it); everysec syncs from a background
 * thread once a second; no never syncs.
 *
 *   shard 0: cmd cmd cmd --.
 *   shard 1: cmd ----------+--> [mutex] write(2) --> dir/appendonlydir/appendonly.aof.N.incr.aof
 *   coordinator: MULTI .. EXEC (a multi-shard command, before it unlocks)
 *
 * A shard that grants a transaction's lock writes its buffer first (the
 * grant is a message), and a coordinator writes the transaction's commands
 * before its UNLOCK messages leave, so the file order is the serialization
 * order. Files: aof_files.c (manifest, base, incr, enabling at run time);
 * loading at startup: aof_load.c; which command is logged how:
 * cmd/aof_log.c. */
#ifndef SHOAL_AOF_H
#define SHOAL_AOF_H
#include "lib/buf.h"
#include <stddef.h>
#include <stdint.h>

struct shard;
struct db;
struct command;

/* Set while the AOF replays at startup: keys are never treated as expired
 * (as Redis's keyIsExpired while loading), so replay reproduces the state
 * that was acknowledged. */
extern int aof_loading;

/* ---- feeding (a shard thread, about its own buffer) ---- */

/* 1 while commands are logged: the file is open (appendonly yes) or a
 * sink takes the stream (replication). */
int aof_active(void);
/* 1 while the file is open (appendonly yes). */
int aof_file_active(void);
/* The second consumer of the logged stream (repl/master.c): called under
 * the writer's lock with each committed buffer, in commit order, with the
 * databases of its first and last command (a SELECT goes before a buffer
 * whose first database differs from the stream's). */
typedef void aof_sink_fn(int first_db, int last_db, const char *p, size_t n);
/* The caller holds every shard: what the shards logged so far is
 * committed (to the file and the sink already on), and everything logged
 * from now on goes to fn too (logged even with appendonly no). */
void aof_sink_start(aof_sink_fn *fn);
/* Feeding the sink stops (any shard thread). */
void aof_sink_stop(void);
/* Bytes held in the shards' buffers and the unwritten backlog (INFO
 * mem_not_counted_for_evict). Any thread; approximate while they move. */
size_t aof_buffered_bytes(void);
/* Logs one command of database dbid into shard sh's buffer. */
void aof_feed(struct shard *sh, int dbid, int argc, const char *const *argv, const size_t *argl);
/* The keyspace removed an expired key of d: logs DEL, as Redis 7.0
 * propagates it. Runs on the thread that found it (the executing shard). */
void aof_feed_expired(struct db *d, const char *key, size_t klen);
/* Around a multi-shard command on its coordinator: when it logged more
 * than one command, they become one MULTI ... EXEC block. */
void aof_tx_begin(struct shard *sh);
void aof_tx_end(struct shard *sh);
/* Inside aof_tx_begin/end: forgets what was logged since the outermost
 * begin (a script that runs again from the start, holding more shards). */
void aof_tx_discard(struct shard *sh);

/* ---- the shard loop's hooks ---- */

/* Before anything leaves shard sh (messages, replies): appends its buffer
 * to the file (and under always, syncs). Returns -1 when sh must hold its
 * output because what it logged is not on disk (write or sync error under
 * always; retried on the next call), else 0. */
int aof_before_send(struct shard *sh);
/* As aof_before_send, inside aof_tx_begin/end too: commits what was
 * logged before the outermost begin (the block goes on), so the replies of
 * those commands may leave while a long script runs. 0 when they may. */
int aof_before_send_outer(struct shard *sh);
/* 1 while shard sh must not write replies (see aof_before_send). */
int aof_holding(struct shard *sh);
/* MISCONF: after a write or sync error, write commands (and PING) are
 * refused until a write succeeds again. 1 with the error text (no '-') in
 * err, else 0. Any shard thread. */
int aof_deny(const struct command *cmd, char *err, size_t errlen);

/* ---- control ---- */

/* Startup, before the shards run, with appendonly yes: loads the files of
 * the manifest (aof_load.c), creates what is missing (an empty RDB base
 * and an incr file, as Redis does) and opens the incr file. -1 (logged)
 * when the server must not start. */
int aof_startup(int threads);
/* CONFIG SET appendonly yes at run time (the caller holds every shard):
 * writes a new base with the current data (synchronous RDB save), opens a
 * new incr file, persists the manifest, removes the old files. -1 with
 * Redis's reason ("Unable to turn on AOF. ...") in err. */
int aof_enable(char *err, size_t errlen);
/* BGREWRITEAOF (the caller holds shards ids[0..n), all of them): opens a
 * new incr file that takes every write from this point, lists it in the
 * manifest, and starts a fork-free snapshot (persist/snapshot.h) of the
 * data at this point as the new RDB base; when the base is in place the
 * manifest drops the older files. 0 started (or nothing to do: appendonly
 * no), else -1 with an error reply in err. */
int aof_rewrite_start(const int *ids, int n, int64_t now_ms, char *err, size_t errlen);
/* The writer's side: from now on append to fd (pending bytes go to the old
 * file first, which is synced and closed); the base's new size for INFO. */
void aof_writer_switch(int fd);
void aof_writer_set_base(uint64_t base_size);
/* INFO's aof_current_size and aof_base_size (auto-aof-rewrite-percentage). */
void aof_sizes(uint64_t *current, uint64_t *base);
/* Rewrite statistics for INFO (atomics). */
extern uint64_t aof_rewrites;
extern int64_t aof_last_rewrite_sec;
extern int aof_rewrite_ok, aof_rewrite_failures, aof_rewrite_scheduled;

/* CONFIG SET appendonly no (the caller holds every shard): writes the
 * calling shard's buffer, syncs and closes. */
void aof_disable(void);
/* SIGTERM: writes what can be written and syncs ("Calling fsync() on the
 * AOF file."). Main thread, shards still running. */
void aof_shutdown(void);
/* The aof_* lines of INFO persistence, from aof_enabled to the end (module
 * lines included, as Redis orders them). */
void aof_info(buf *out);

/* ---- between the writer (aof.c), the files (aof_files.c) and the
 * loader (aof_load.c) ---- */

struct aof_manifest;
/* <appenddirname>/<name> into out (NUL-terminated). */
void aof_path(buf *out, const char *name);
/* The manifest on disk: 1 loaded, 0 absent (no directory or no manifest
 * file), -1 bad (logged with Redis's FATAL AOF MANIFEST FILE ERROR text). */
int aof_manifest_read(struct aof_manifest *m);
/* Startup after loading: creates the base (when the manifest lists no
 * file) and an incr file (when it lists none), persists the manifest and
 * opens the last incr file for append. -1 logged. */
int aof_open_at_start(struct aof_manifest *m, uint64_t base_size);
/* Replays the base and incr files of m into the shards (not running yet);
 * *base_size gets the base file's size. -1 logged. */
int aof_load_files(const struct aof_manifest *m, int threads, uint64_t *base_size);
/* DEBUG LOADAOF: the caller (running on sh) holds every shard and has
 * emptied them; replays the files of the manifest on disk into them.
 * 0 ok (no manifest: nothing loaded), -1 logged. */
int aof_reload(struct shard *sh);
/* Replays a stream of commands held in memory (as the content of an incr
 * file called name) into the shards, in loading mode; a short or
 * unfinished tail is refused here (only a file can be truncated). 0 ok,
 * -1 logged. The fuzzer's way in. */
int aof_replay_mem(const char *p, size_t n, const char *name);

/* Starts logging into fd, an incr file of size incr_size opened for
 * append; base_size is reported as aof_base_size. */
void aof_writer_open(int fd, uint64_t incr_size, uint64_t base_size);
/* Stops logging: writes the calling thread's shard buffer (when it has
 * one) and what is pending, syncs, closes. */
void aof_writer_close(void);
#endif
