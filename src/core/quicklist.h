/* quicklist.h - a list as a doubly linked chain of packs (the "quicklist"
 * encoding of Redis lists).
 *
 *   quicklist { o, fill, nodes }                   16 bytes
 *      o -> pack                                   (one node)
 *      o -> { count, cap, [pack *, pack *, ...] }  (several)
 *
 * Each node is one pack of consecutive elements. How full a node may
 * grow is `fill`, Redis's list-max-listpack-size: -1..-5 allow a pack of at
 * most 4/8/16/32/64 KB (below -5 counts as -5), a positive value allows
 * that many elements (at most 32768) while the pack stays under 8 KB, and 0
 * allows one element per node. An element too big for any node gets a node
 * of its own. Nodes are never empty: a node whose last element goes is
 * freed.
 *
 * A ql_pos names one element (its node and its offset in the node's pack);
 * it stays valid until the next call that changes the list, except where a
 * function says it moves the position. Which encoding name to report is the
 * caller's business (Redis 7.0 answers "quicklist" for every list);
 * quicklist_nodes() tells how many nodes there are. One thread at a time;
 * no locking inside. */
#ifndef SHOAL_QUICKLIST_H
#define SHOAL_QUICKLIST_H
#include "core/pack.h"
#include <stddef.h>
#include <stdint.h>

typedef struct quicklist quicklist;

/* One element of a list: node index `node`, offset `off` in its pack; ql
 * NULL means none. */
typedef struct ql_pos {
    const quicklist *ql;
    size_t node;
    size_t off;
} ql_pos;

enum { QL_HEAD = 0, QL_TAIL = 1 };

/* Elements of at least `bytes` bytes (default 1 GB; DEBUG
 * QUICKLIST-PACKED-THRESHOLD) are "plain": each has a node of its own.
 * Any thread (a relaxed atomic). */
void quicklist_set_packed_threshold(size_t bytes);
/* 0 when an element of len bytes may not share node p (either is plain). */
int quicklist_may_join(const pack *p, size_t len);

/* An empty list whose nodes follow `fill` (list-max-listpack-size). */
quicklist *quicklist_create(int fill);
/* Frees *ql with all its nodes (may be NULL) and sets *ql to NULL. */
void quicklist_destroy(quicklist **ql);
/* A deep copy owned by the caller. */
quicklist *quicklist_dup(const quicklist *ql);
/* Changes the fill rule for later insertions (nodes are not reshaped). */
void quicklist_set_fill(quicklist *ql, int fill);

/* Number of elements, O(1). */
size_t quicklist_count(const quicklist *ql);
/* Number of nodes, O(1). */
size_t quicklist_nodes(const quicklist *ql);
/* Bytes allocated for the list, its nodes and their packs (MEMORY USAGE);
 * O(nodes). */
size_t quicklist_bytes(const quicklist *ql);

/* Adds an element at the head or the tail (QL_HEAD / QL_TAIL). s may point
 * into this list (LMOVE of a list onto itself). */
void quicklist_push(quicklist *ql, int where, const char *s, size_t len);
/* Reads the head or tail element without removing it; 0 when empty. The
 * string stays valid until the list changes. */
int quicklist_peek(const quicklist *ql, int where, pack_val *out);
/* Removes the head or tail element; 0 when the list was empty. */
int quicklist_pop(quicklist *ql, int where);

/* Positions. Each returns 1 and sets *pos, or 0 (pos->ql = NULL). */
int quicklist_first(const quicklist *ql, ql_pos *pos);
int quicklist_last(const quicklist *ql, ql_pos *pos);
/* Element at index i (negative from the tail), walking from the nearer
 * end. */
int quicklist_index(const quicklist *ql, long i, ql_pos *pos);
/* Moves to the following / preceding element; 0 (and pos->ql = NULL)
 * past the end. */
int quicklist_next(ql_pos *pos);
int quicklist_prev(ql_pos *pos);
/* Reads the element at a valid position. */
void quicklist_get(const ql_pos *pos, pack_val *out);
/* 1 when the element at pos equals the string s. */
int quicklist_eq(const ql_pos *pos, const char *s, size_t len);

/* Inserts an element before (after = 0) or after (after = 1) the one at
 * pos; every position is invalid afterwards. s must not point into ql. */
void quicklist_insert(quicklist *ql, const ql_pos *pos, int after, const char *s, size_t len);
/* Replaces the element at pos; every position is invalid afterwards. s
 * must not point into ql. */
void quicklist_replace(quicklist *ql, const ql_pos *pos, const char *s, size_t len);
/* Deletes the element at pos and moves pos to the element that followed
 * it in the direction of travel (forward = 1: towards the tail). Returns 1
 * when there is one, 0 (pos->ql = NULL) when not. Other positions are
 * invalid afterwards. */
int quicklist_delete_at(quicklist *ql, ql_pos *pos, int forward);
/* Deletes up to n elements from index start (negative from the tail);
 * returns how many were deleted (0 when start is out of range). */
size_t quicklist_delete_range(quicklist *ql, long start, size_t n);

/* Calls fn with each node's pack, head to tail (for RDB / DUMP). fn must
 * not change the list. */
void quicklist_foreach_node(const quicklist *ql, void (*fn)(void *ud, const pack *p), void *ud);
/* Appends a whole pack as a new tail node (RDB load); takes ownership. An
 * empty pack is freed and adds nothing. */
void quicklist_append_pack(quicklist *ql, pack *p);
/* When *ql has at most one node: frees the quicklist, sets *ql to NULL and
 * returns its only pack (an empty one for an empty list). Else NULL, and
 * nothing changes. */
pack *quicklist_take_single(quicklist **ql);
/* 1 when a node of `bytes` pack bytes holding `count` elements obeys the
 * fill rule `fill` (list-max-listpack-size, clamped as above). */
int quicklist_fill_allows(int fill, size_t bytes, size_t count);
#endif
