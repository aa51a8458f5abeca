/* lobj.h - a list value as the keyspace keeps it: one pointer whose low bit
 * is the representation (both kinds of block are at least 8-byte aligned):
 *
 *   bit 0 clear   pack *        the whole list is one node (or empty)
 *   bit 0 set     quicklist *   several nodes (core/quicklist.h)
 *
 * so a list that fits in one node costs its pack and no header (a
 * quicklist adds a 16-byte header and, past one node, a node array). A
 * push, insert or replace that one node cannot take under the fill rule
 * makes the pack the first node of a quicklist; a deletion that leaves a
 * quicklist with one node makes that node the whole value again. Which
 * encoding name to report is the caller's (Redis 7.0 says "quicklist").
 *
 * The fill rule (list-max-listpack-size) is an argument of every call that
 * may grow the list and is applied as given. Calls that change the list
 * take the value by reference and may replace it. A position stays valid
 * until the next change, except where lobj_delete_at says it moves. One
 * thread at a time; no locking inside. */
#ifndef SHOAL_LOBJ_H
#define SHOAL_LOBJ_H
#include "core/pack.h"
#include "core/quicklist.h"
#include <stddef.h>

/* One element: in a one-node list p and off (p NULL otherwise), else q. */
typedef struct lobj_pos {
    const pack *p;
    size_t off;
    ql_pos q;
} lobj_pos;

/* 1 when pos names an element. */
static inline int lobj_pos_ok(const lobj_pos *pos) { return pos->p != NULL || pos->q.ql != NULL; }

/* An empty list. Never NULL. */
void *lobj_new(void);
/* Frees the list o. */
void lobj_free(void *o);
/* A deep copy owned by the caller. */
void *lobj_dup(const void *o);
/* Takes a quicklist (RDB load) and returns it as a value. */
void *lobj_from_quicklist(quicklist *ql);

/* Number of elements, O(1). */
size_t lobj_count(const void *o);
/* Number of nodes (0 for an empty list), O(1). */
size_t lobj_nodes(const void *o);
/* Bytes allocated for the list (MEMORY USAGE); O(nodes). */
size_t lobj_bytes(const void *o);
/* Calls fn with each node's pack, head to tail (RDB / DUMP). */
void lobj_foreach_node(const void *o, void (*fn)(void *ud, const pack *p), void *ud);

/* Adds s at the head or tail (QL_HEAD / QL_TAIL); s may point into the
 * list. */
void lobj_push(void **o, int fill, int where, const char *s, size_t len);
/* Removes the head or tail element; 0 when the list was empty. */
int lobj_pop(void **o, int where);

/* Positions: each returns 1 and sets *pos, or 0 (lobj_pos_ok false). */
int lobj_first(const void *o, lobj_pos *pos);
int lobj_last(const void *o, lobj_pos *pos);
/* Element at index i (negative from the tail). */
int lobj_index(const void *o, long i, lobj_pos *pos);
/* The following / preceding element; 0 past the end. */
int lobj_next(lobj_pos *pos);
int lobj_prev(lobj_pos *pos);
void lobj_get(const lobj_pos *pos, pack_val *out);
int lobj_eq(const lobj_pos *pos, const char *s, size_t len);

/* Inserts s before (after = 0) or after the element at pos; s must not
 * point into the list. Every position is invalid afterwards. */
void lobj_insert(void **o, int fill, const lobj_pos *pos, int after, const char *s, size_t len);
/* Replaces the element at pos; s must not point into the list. */
void lobj_replace(void **o, int fill, const lobj_pos *pos, const char *s, size_t len);
/* Deletes the element at pos and moves pos to the one that followed it in
 * the direction of travel (forward = 1: towards the tail); returns 1 when
 * there is one, else 0. Other positions are invalid afterwards. */
int lobj_delete_at(void **o, lobj_pos *pos, int forward);
/* Deletes up to n elements from index start (negative from the tail);
 * returns how many went. */
size_t lobj_delete_range(void **o, long start, size_t n);
#endif
