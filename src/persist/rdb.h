/* rdb.h - Redis 7.0's RDB format (version 10): value codec, DUMP payloads
 * and whole files.
 *
 *   file    = "REDIS0010" aux* (SELECTDB RESIZEDB key*)* EOF crc64
 *   key     = [EXPIRETIME_MS ms] [IDLE s | FREQ f] type key-string value
 *   payload = type value version(2, LE) crc64(8, LE)      (DUMP / RESTORE)
 *
 * Values are written with the types redis-server 7.0.15 writes: string (0,
 * integer encodings, LZF past 20 bytes when rdbcompression is on), set (2),
 * intset (11), zset 2 (5) and zset listpack (17), hash (4) and hash
 * listpack (16), list quicklist 2 (18). The reader also takes the older
 * list (1), zset (3) and the seconds expire opcode; ziplist and zipmap
 * encodings, streams, modules and functions are refused.
 *
 * The reader treats every byte as hostile: each length is checked against
 * the bytes left before anything is allocated, every listpack and intset is
 * validated in full, duplicates, empty collections and NaN scores are
 * refused. Built values take the encoding Redis's loader would pick under
 * the current *-max-* settings. Values are built on the calling thread,
 * which must own the database they go to. */
#ifndef SHOAL_RDB_H
#define SHOAL_RDB_H
#include "lib/buf.h"
#include "shard/db.h"
#include <stddef.h>
#include <stdint.h>

#define RDB_VERSION 10

/* Statuses (0 ok, negative errors). */
enum {
    RDB_OK = 0,
    RDB_ESHORT = -1,   /* input ends early */
    RDB_EFORMAT = -2,  /* malformed */
    RDB_EEMPTY = -3,   /* an empty collection (skipped by the file loader) */
    RDB_ECRC = -4,     /* checksum mismatch */
    RDB_EVERSION = -5, /* unknown RDB version */
    RDB_EUNSUP = -6,   /* well-formed but not supported (stream, module) */
    RDB_EIO = -7,
};

/* ---- reading primitives ---- */

typedef struct rdb_in {
    const uint8_t *p;
    size_t n, pos;
} rdb_in;

/* A string as read: s points into the input, into tmp (integer
 * encodings) or into heap (LZF; freed by rdb_str_free). */
typedef struct rdb_str {
    const char *s;
    size_t len;
    char *heap;
    char tmp[24];
} rdb_str;

int rdb_get_str(rdb_in *in, rdb_str *out);
int rdb_get_len(rdb_in *in, uint64_t *len);
int rdb_get_bytes(rdb_in *in, size_t n, const uint8_t **p);
/* Writing primitives: a length, a string (integer / LZF encodings as
 * Redis's rdbSaveRawString picks them). */
void rdb_put_len(buf *o, uint64_t n);
void rdb_put_str(buf *o, const char *s, size_t len);

/* Streams (rdb_stream.c): the body of a TYPE_STREAM_LISTPACKS_2 value, and
 * the reader of both stream types (v2: the 7.0 fields). The reader checks
 * every node (core/stream.h's stream_node_check), the counts, the order of
 * IDs and PELs, and that every pending entry has a consumer. */
void rdb_put_stream(buf *o, const void *stream);
int rdb_read_stream(rdb_in *in, int v2, void **obj);
void rdb_str_free(rdb_str *s);

/* ---- values ---- */

/* Appends the RDB type byte and the encoded value of entry e. */
void rdb_put_value(buf *out, const entry *e);
/* Decodes a value of RDB type `type` (the type byte already read) into a
 * new entry for key with expire ttl_ms (-1: none). */
int rdb_read_entry(rdb_in *in, int type, const char *key, size_t klen, int64_t ttl_ms, entry **out);
/* Steps over a value of type `type` checking only its lengths. */
int rdb_skip_value(rdb_in *in, int type);

/* DUMP: the payload of entry e (value, version 10, CRC64). */
void rdb_dump(buf *out, const entry *e);
/* 1 when the payload's version is known and its checksum right. */
int rdb_dump_verify(const char *p, size_t n);
/* RESTORE: a verified payload into a new entry. */
int rdb_undump(const char *p, size_t n, const char *key, size_t klen, int64_t ttl_ms, entry **out);

/* ---- files ---- */

/* Pieces of a file, for writers that assemble one from chunks (the
 * fork-free snapshot, persist/snapshot.h). A file is the header, then
 * SELECTDB + keys (SELECTDB may repeat, in any order), then the trailer
 * that rdb_file_commit adds. */
void rdb_put_header(buf *o, int64_t now_ms);
/* Functions (cmd/ sets these): the writer appends the libraries' records
 * (opcode 0xf5 and the code, as Redis 7.0) after the header's aux fields;
 * the loader hands each library's code to the reader (-1: refuse the file,
 * the reason in err). */
extern void (*rdb_functions_writer)(buf *o);
extern int (*rdb_function_reader)(const char *code, size_t len, char *err, size_t errlen);
void rdb_put_selectdb(buf *o, int dbid);
/* SELECTDB dbid, then RESIZEDB keys expires (a sizing hint for loaders). */
void rdb_put_resizedb(buf *o, int dbid, size_t keys, size_t expires);
/* One key; 0 (nothing written) when it expired before now_ms. */
int rdb_put_key(buf *o, const entry *e, int64_t now_ms, int lru);
/* Whether files carry IDLE opcodes (an LRU maxmemory-policy: RDB_META_LRU)
 * or FREQ opcodes (LFU: RDB_META_LFU), or neither (0). */
enum { RDB_META_LRU = 1, RDB_META_LFU = 2 };
int rdb_lru_wanted(void);

/* A file being written: bytes go out as they come, CRC64 kept. */
typedef struct rdb_file {
    int fd;
    int failed; /* errno of the first failure */
    uint64_t crc;
    uint64_t written;
    char tmp[64];
} rdb_file;
int rdb_file_open(rdb_file *f, const char *tmp, char *err, size_t errlen);
void rdb_file_write(rdb_file *f, const void *p, size_t n);
/* EOF and checksum, fsync, close, rename to path; on any failure the temp
 * file is removed, the old file stays and err says why (-1). */
int rdb_file_commit(rdb_file *f, const char *path, char *err, size_t errlen);
void rdb_file_abandon(rdb_file *f);

/* Database `dbid` of shard `s` for the saver. */
typedef db *rdb_db_fn(void *ud, int s, int dbid);

/* Writes every live key of the databases of shards 0..nsh-1 to `path`
 * through "temp-<pid>.rdb" in the current directory (fsync, rename). On
 * error the old file stays, err gets a message and -1 is returned. */
int rdb_save(const char *path, int nsh, rdb_db_fn *get, void *ud, int64_t now_ms, char *err, size_t errlen);

typedef struct rdb_load_stats {
    size_t keys, expired, empty;
    size_t scanned; /* keys read, whichever shard they belong to */
    double seconds;
} rdb_load_stats;

/* Loads `path` into the shards of shard/shard.h, each key into the shard
 * that owns it (the databases should be empty). threads > 1: one thread
 * per shard parses the file and builds only its own keys (the shards'
 * threads must not be running). A missing or empty file loads nothing and
 * returns 0. Else 0, or -1 with the problem in err ("Wrong RDB checksum",
 * "Short read or OOM loading DB", ...). */
int rdb_load(const char *path, int threads, int64_t now_ms, rdb_load_stats *st, char *err, size_t errlen);
/* Set around a load (DEBUG RELOAD MERGE): a key already in memory is
 * replaced instead of failing the load (Redis's RDBFLAGS_ALLOW_DUP); the
 * function reader sees it too. */
extern int rdb_load_allow_dup;
/* For the base of an AOF: the same, except that keys past their deadline
 * load too (the AOF's commands replay over them, as Redis loads an AOF
 * preamble), and *end gets the offset just after the RDB's checksum (an
 * old-style base goes on with AOF commands there). */
int rdb_load_aof_base(const char *path, int threads, rdb_load_stats *st, size_t *end, char *err, size_t errlen);
/* The same over bytes in memory; only keys of shard `only` (-1: all).
 * With rdb_load_keep_expired set (a replica's full sync) keys past their
 * deadline load too: the master's DEL removes them. */
extern int rdb_load_keep_expired;
int rdb_load_mem(const uint8_t *p, size_t n, int only, int64_t now_ms, rdb_load_stats *st, char *err, size_t errlen);

/* Server-wide persistence state for LASTSAVE and INFO. */
extern int64_t rdb_last_save_time; /* unix seconds */
extern uint64_t rdb_saves;
extern size_t rdb_last_load_keys, rdb_last_load_expired;
/* Value types and encodings of the file format, as Redis numbers them. */
enum {
    TYPE_STRING = 0,
    TYPE_LIST = 1,
    TYPE_SET = 2,
    TYPE_ZSET = 3,
    TYPE_HASH = 4,
    TYPE_ZSET_2 = 5,
    TYPE_SET_INTSET = 11,
    TYPE_HASH_LISTPACK = 16,
    TYPE_ZSET_LISTPACK = 17,
    TYPE_LIST_QUICKLIST_2 = 18,
    TYPE_STREAM_LISTPACKS = 15,   /* Redis 5.0-6.2 */
    TYPE_STREAM_LISTPACKS_2 = 19, /* Redis 7.0: first ID, max deleted ID, entries added, entries read */
};
#define ENC_LZF 3          /* string encoding: LZF-compressed */
#define QL_NODE_PLAIN 1    /* quicklist node container: one plain element */
#define QL_NODE_PACKED 2   /* quicklist node container: a listpack */
#endif
