/* snapshot.h - BGSAVE without fork: an RDB file of one consistent cut of
 * every shard, written while the shards keep serving.
 *
 * The cut: snap_start runs while its caller holds every shard (an
 * all-shard transaction, tx.h), so no multi-shard transaction straddles it.
 * There each shard flips its mark bit (ENTRY_SNAP in entry.h): every entry
 * that exists now carries the old mark, "not yet saved"; entries added
 * from now on get the new mark. Each shard then walks its tables a bounded
 * slice per loop turn (snap_step), serializing unmarked entries and marking
 * them. A write to an unmarked entry first serializes it (snap_touch, from
 * the write paths of db.c and the dispatcher), so the file holds every key
 * exactly as it was at the cut. FLUSHDB/FLUSHALL hand the old table to the
 * snapshot instead of freeing it. Serialized chunks (each opening with
 * SELECTDB) queue to one writer thread, which owns the file: write, CRC64,
 * fsync, rename. A full queue pauses the walk, bounding extra memory. */
#ifndef SHOAL_SNAPSHOT_H
#define SHOAL_SNAPSHOT_H
#include "shard/shard.h"
#include <stddef.h>
#include <stdint.h>

/* What a snapshot is for: BGSAVE's dump file or an AOF rewrite's base. */
enum { SNAP_NONE = 0, SNAP_RDB = 1, SNAP_AOF = 2 };
/* Called on the writer thread once the file is in place (ok) or not. */
typedef void snap_done_fn(int ok, void *arg);

/* Starts a background save of shards ids[0..n) to `path` (relative to the
 * working directory). The caller must hold every one of those shards.
 * kind SNAP_RDB keeps the save statistics (LASTSAVE, INFO rdb_*); done
 * (may be NULL) hears the outcome. -1 with err when one is already running
 * or the temp file can't open. */
int snap_start(const int *ids, int n, const char *path, int64_t now_ms, int kind, snap_done_fn *done, void *arg,
               char *err, size_t errlen);
/* SNAP_RDB or SNAP_AOF while one runs, else SNAP_NONE. */
int snap_running_kind(void);
/* Shard loop: one bounded slice of the calling shard's walk. */
void snap_step(shard *sh);
/* The writer is behind: walking waits for the queue to drain. */
int snap_backlogged(shard *sh);
/* Inline use (no shard threads): walks every part to the end. */
void snap_run_inline(void);
/* Write hook: e (in d) is about to change or go away. */
void snap_save_entry(db *d, entry *e);
static inline void snap_touch(db *d, entry *e) {
    if (d->owner && d->owner->snap && (e->info & ENTRY_SNAP) != d->snap_mark) snap_save_entry(d, e);
}
/* Write hook for one key a write command names (dispatch_before_write):
 * its entry in d, if any, is about to change. */
void snap_touch_key(db *d, const char *key, size_t klen);
/* FLUSHDB during a snapshot: 1 when the snapshot took d's table (the
 * caller then gives d a new one and must not free the old). */
int snap_adopt_table(db *d);
/* Abandons a running save (SHUTDOWN, FLUSHALL): the temp file goes, the
 * walks finish without writing. */
void snap_abort(void);
/* After FLUSHALL emptied every database of shards ids[0..n) (held by the
 * caller): their aborted walks have nothing left to mark and end now. */
void snap_drop_parts(const int *ids, int n);

/* State for INFO persistence and the save rules (any thread may read). */
int snap_running(void);          /* a background save is in progress */
extern int snap_parts_running;   /* shards still walking (atomic) */
extern int snap_last_ok;         /* last background save succeeded */
extern int64_t snap_last_seconds; /* its duration, -1 before the first */
extern int64_t snap_started_ms;  /* start of the running one */
extern int64_t snap_last_try_ms; /* start of the last attempt */
extern uint64_t snap_keys_done;  /* keys written by the running one */
extern uint64_t snap_keys_total; /* keys it started with */
#endif
