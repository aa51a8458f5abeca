/* stream.h - the stream value: entries in packed nodes, consumer groups.
 *
 *   stream --> nodes: sidx (sorted vector) of { master ID, lpk * }
 *          |          each node is one Redis listpack (core/lpk.h):
 *          |   +-------+---------+------------+---------+-----+---------+---+
 *          |   | count | deleted | num-fields | field 1 | ... | field N | 0 |  master entry
 *          |   +-------+---------+------------+---------+-----+---------+---+
 *          |   | flags | ms-diff | seq-diff | [num-fields field...] value... | lp-count |
 *          |   (fields are left out when they equal the master's: flags bit 2;
 *          |    a deleted entry keeps its place with flags bit 1)
 *          '-> groups: sorted by name, each with its PEL (sidx ID -> nack) and
 *              consumers sorted by name, each with its own PEL sharing the nacks
 *
 * The node bytes are the ones Redis keeps in its radix tree, so RDB and DUMP
 * write nodes as they are. **Departure from Redis's rax**: the index is a
 * sorted vector with room at both ends (IDs only grow, trimming removes from
 * the front): lookups are a binary search, appends and front removals O(1);
 * a node is at most stream-node-max-entries entries (100) so 1M entries are
 * 10k index slots of 24 bytes. PELs use the same vector (deliveries append,
 * acks mostly remove from the front; a removal in the middle moves the
 * shorter side).
 *
 * Runs on the thread that owns the key. Functions return 0 or a negative
 * status; IDs are plain structs. */
#ifndef SHOAL_STREAM_H
#define SHOAL_STREAM_H
#include "core/lpk.h"
#include <stddef.h>
#include <stdint.h>

typedef struct sid {
    uint64_t ms, seq;
} sid;

static inline int sid_cmp(const sid *a, const sid *b) {
    if (a->ms != b->ms) return a->ms < b->ms ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return 0;
}
static inline int sid_zero(const sid *a) { return a->ms == 0 && a->seq == 0; }
/* Next / previous ID; -1 (unchanged) past the ends. */
int sid_incr(sid *id);
int sid_decr(sid *id);
/* "ms-seq" into buf (>= 44 bytes); returns the length. */
int sid_fmt(char *buf, const sid *id);

/* A sorted vector of (ID, pointer). */
typedef struct sidx_item {
    sid id;
    void *p;
} sidx_item;
typedef struct sidx {
    sidx_item *a;
    size_t head, len, cap;
} sidx;

static inline sidx_item *sidx_at(const sidx *x, size_t i) { return &x->a[x->head + i]; }
/* Index of the first item >= id (len when none). */
size_t sidx_lower(const sidx *x, const sid *id);
/* The pointer stored under id, or NULL. */
void *sidx_get(const sidx *x, const sid *id);
/* Inserts at index i (the caller keeps the order). */
void sidx_insert(sidx *x, size_t i, const sid *id, void *p);
void sidx_remove(sidx *x, size_t i);
/* Removes id; returns its pointer or NULL. */
void *sidx_del(sidx *x, const sid *id);
void sidx_free(sidx *x);

typedef struct consumer consumer;
typedef struct nack {
    int64_t delivery_time;
    uint64_t delivery_count;
    consumer *consumer;
} nack;

struct consumer {
    int64_t seen_time;
    sidx pel; /* shares the nacks of the group's PEL */
    size_t nlen;
    char name[];
};

#define CG_NO_ENTRIES_READ (-1LL)

typedef struct cgroup {
    sid last_id;
    long long entries_read;
    sidx pel; /* owns the nacks */
    consumer **cons;
    size_t ncons, capcons;
    size_t nlen;
    char name[];
} cgroup;

typedef struct stream {
    sidx nodes;
    uint64_t length, entries_added;
    sid last_id, first_id, max_deleted;
    cgroup **groups;
    size_t ngroups, capgroups;
} stream;

/* Entry flags inside a node. */
enum { SE_DELETED = 1, SE_SAMEFIELDS = 2 };

stream *stream_new(void);
void stream_free(stream *s);
stream *stream_dup(const stream *s);
size_t stream_mem(const stream *s);

/* Appends an entry with argv[0..2n) as field/value pairs under id (the
 * caller checked id > last_id). node limits from the config. */
void stream_append(stream *s, const sid *id, const char *const *argv, const size_t *argl, int npairs,
                   size_t max_bytes, long long max_entries);
/* 1 when id names a live entry. */
int stream_has(const stream *s, const sid *id);
/* Deletes the live entry id (marks it, frees an emptied node); 1 if deleted. */
int stream_delete(stream *s, const sid *id);
/* First / last live entry ID; 0 when the stream is empty. */
int stream_first(const stream *s, sid *id);
int stream_last(const stream *s, sid *id);

/* Trimming (XTRIM and XADD's options). */
enum { TRIM_NONE = 0, TRIM_MAXLEN = 1, TRIM_MINID = 2 };
typedef struct trim_args {
    int strategy, approx;
    long long maxlen, limit;
    sid minid;
} trim_args;
/* Returns the number of entries removed. */
long long stream_trim(stream *s, const trim_args *t);

/* Iterates live entries in [start, end], forwards or backwards. */
typedef struct stream_iter {
    const stream *s;
    sid start, end;
    int rev;
    size_t node;     /* index into nodes */
    int started;
    const lpk *lp;
    sid master;
    size_t master_fields; /* position of the master's first field */
    long long nmaster;
    size_t *pos;     /* reverse: entry positions of the node */
    size_t npos, cappos, posi;
    size_t cur;      /* forward: next entry's position (0: node done) */
    /* current entry */
    size_t fpos, vpos; /* next field / value position */
    long long nfields, left;
    int same;
    char fbuf[LPK_INTBUF], vbuf[LPK_INTBUF];
} stream_iter;
void stream_iter_start(stream_iter *it, const stream *s, const sid *start, const sid *end, int rev);
/* 1 and the next entry's ID and number of fields, 0 at the end. */
int stream_iter_next(stream_iter *it, sid *id, long long *nfields);
/* The next field/value pair of the current entry (strings valid until the next call). */
void stream_iter_field(stream_iter *it, const char **f, size_t *fl, const char **v, size_t *vl);
void stream_iter_stop(stream_iter *it);

/* Consumer groups. */
cgroup *stream_group(const stream *s, const char *name, size_t nl);
/* NULL when the name exists. */
cgroup *stream_group_add(stream *s, const char *name, size_t nl, const sid *last, long long entries_read);
int stream_group_del(stream *s, const char *name, size_t nl);
consumer *cg_consumer(const cgroup *g, const char *name, size_t nl);
/* NULL when the name exists. */
consumer *cg_consumer_add(cgroup *g, const char *name, size_t nl, int64_t now);
/* Deletes the consumer and its pending entries; returns how many. */
size_t cg_consumer_del(cgroup *g, consumer *c);
/* Removes a PEL entry from the group and its consumer (frees the nack). */
void cg_pel_remove(cgroup *g, const sid *id);

/* Lag bookkeeping as Redis 7.0 computes it. */
long long stream_estimate_read(const stream *s, const sid *id);
int stream_range_has_tombstones(const stream *s, const sid *start, const sid *end);
/* 1 and *lag when valid, 0 when unknown. */
int stream_cg_lag(const stream *s, const cgroup *g, long long *lag);

/* Loading (RDB): a validated node (takes ownership; the caller checks
 * order with stream_node_check). */
void stream_add_node(stream *s, const sid *master, lpk *lp);
/* Deep check of a node: Redis's rules plus IDs strictly increasing from
 * *prev (updated), entries at or after master. Adds the live / deleted
 * counts to *live. 0 ok, -1 corrupt. */
int stream_node_check(const lpk *lp, size_t n, const sid *master, sid *prev, uint64_t *live);
#endif
