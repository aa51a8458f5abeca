/* db.h - one logical database (0..databases-1) of one shard: the key table
 * plus its expire bookkeeping, and the keyspace operations every command
 * family uses. Lookups expire lazily: a key past its deadline is deleted on
 * access and reported as missing. Called only by the owning shard's thread or
 * under a transaction that holds the shard's lock.
 *
 * Entries of other types than strings keep their data in an object; the
 * family that owns the type registers how to free, size and copy it with
 * db_register_type. */
#ifndef SHOAL_DB_H
#define SHOAL_DB_H
#include "core/entry.h"
#include "core/table.h"
#include <stddef.h>
#include <stdint.h>

struct shard;

typedef struct db {
    table *t;
    size_t expires;          /* keys that carry an expire */
    uint64_t expire_cursor;  /* where the active expire cycle resumes */
    int64_t avg_ttl;
    struct shard *owner;
    int id;
    uint8_t snap_mark; /* ENTRY_SNAP bit new entries get (persist/snapshot.h) */
} db;

typedef struct type_ops {
    const char *name;                        /* TYPE reply: "list" */
    void (*free)(void *obj);
    size_t (*usage)(const void *obj);        /* bytes, for MEMORY USAGE */
    void *(*copy)(const void *obj);          /* deep copy, for COPY */
    const char *(*encoding)(const void *obj);/* OBJECT ENCODING */
    size_t (*effort)(const void *obj);       /* allocations freeing it takes, when lazy freeing goes by them */
} type_ops;

void db_register_type(int type, const type_ops *ops);
const type_ops *db_type_ops(int type);

void db_init(db *d, struct shard *owner, int id);
void db_free(db *d);
void db_clear(db *d); /* FLUSHDB */
/* FLUSHDB ASYNC: the old table is freed in the background (lazyfree.h). */
void db_clear_async(db *d);
static inline size_t db_size(const db *d) { return table_size(d->t); }

/* The live entry for key (expired ones are deleted), or NULL. */
entry *db_find(db *d, const char *key, size_t klen, int64_t now);
/* Like db_find_link, but an expired entry stays in the table (while
 * CLIENT PAUSE keeps the dataset still): NULL for it all the same. */
entry **db_find_link_kept(db *d, const char *key, size_t klen, int64_t now);
/* Same, returning the link for db_replace / db_delete_link. */
entry **db_find_link(db *d, const char *key, size_t klen, int64_t now);
/* While the server is a replica (repl/replica.c sets it), keys past their
 * deadline are not deleted by reads or the active cycle, only reported
 * missing: the master's DEL removes them, as on a Redis 7.0 replica. A
 * write command's lookup (db_write_lookup, set by the dispatcher for the
 * running command on this thread) still deletes, as Redis's
 * EXPIRE_FORCE_DELETE_EXPIRED. */
extern int db_keep_expired;
extern __thread int db_write_lookup;
/* Adds an entry whose key is absent. Takes ownership. */
void db_add(db *d, entry *e);
/* Puts n where the entry at link is; frees the old entry. When the old
 * entry held an object that n now shares, pass keep_obj = 1. */
void db_replace(db *d, entry **link, entry *n, int keep_obj);
/* Removes and frees the entry at link. */
void db_delete_link(db *d, entry **link);
/* 1 when the key existed (and is now gone). */
int db_delete(db *d, const char *key, size_t klen, int64_t now);
/* Detaches the entry at link without freeing it (RENAME, MOVE). */
entry *db_take(db *d, entry **link);
/* Sets (when >= 0) or removes (-1) the expire of the entry at link. */
void db_set_expire(db *d, entry **link, int64_t when_ms);
/* Frees an entry and its object. */
void entry_free(entry *e);
/* Deep copy of an entry under another key (for COPY). */
entry *entry_copy(const entry *e, const char *key, size_t klen, int64_t ttl);
/* Approximate bytes used by the entry (MEMORY USAGE). */
size_t entry_usage(const entry *e);
/* OBJECT ENCODING text. */
const char *entry_encoding(const entry *e);
/* Active expire: examine up to `budget` entries; returns how many expired. */
int db_expire_cycle(db *d, int budget, int64_t now);
/* The string value of e (must be T_STRING). */
const char *db_str(const entry *e, char *tmp, size_t *len);
#endif
