/* list.h - list helpers other command families build on (the blocking
 * list commands, SORT). A list value is an lobj (core/lobj.h) stored as
 * the object of a T_LIST keyspace entry; a list is never empty (the last
 * pop deletes its key), and a list key only comes into existence through
 * db_add, so the readiness hook there sees every new list.
 *
 * Every function here runs on the shard that executes the command (or
 * under the transaction holding the keys' shards) and writes exactly one
 * reply, except where it returns 0. */
#ifndef SHOAL_CMD_LIST_H
#define SHOAL_CMD_LIST_H
#include "cmd/cmd.h"
#include "core/lobj.h"

/* Reply shapes of list_pop_reply. */
enum {
    LIST_REPLY_ONE = 0,  /* one bulk element (LPOP k) */
    LIST_REPLY_MANY,     /* array of up to count elements (LPOP k count) */
    LIST_REPLY_KEY_ONE,  /* [key, element] (BLPOP) */
    LIST_REPLY_KEY_MANY, /* [key, [elements...]] (LMPOP / BLMPOP) */
};

/* Pops from the list at argv[i] (where = QL_HEAD / QL_TAIL) and replies in
 * one of the LIST_REPLY_* shapes; count (>= 0, a negative one counts as 0)
 * only matters for the MANY shapes, where count 0 replies an empty array.
 * Returns 1 when it replied with elements, 0 when the key is missing
 * (NOTHING replied), -1 when it replied WRONGTYPE. Deletes the key when it
 * becomes empty. */
int list_pop_reply(cmd_ctx *c, int i, int where, long count, int shape);

/* LMOVE argv[src] -> argv[dst], popping at `from` and pushing at `to`
 * (QL_HEAD / QL_TAIL): 1 replied the moved element, 0 src missing (nothing
 * replied), -1 replied an error (WRONGTYPE of src or dst; dst checked
 * before anything changes, as Redis). src and dst may be the same key (a
 * rotation). A missing dst is created through db_add after the element is
 * in it; an emptied src is deleted. */
int list_move_reply(cmd_ctx *c, int src, int dst, int from, int to);

/* Parses LEFT/RIGHT (any case) at argv[i]; returns 1 and sets *where to
 * QL_HEAD / QL_TAIL, or 0 after replying "ERR syntax error". */
int list_parse_where(cmd_ctx *c, int i, int *where);

/* A new empty list value, owned by the caller until it is put in an entry
 * with db_add(d, entry_new_obj(key, klen, T_LIST, o, -1)). Grow it with
 * lobj_push(&o, list_config_fill(), ...). */
void *list_new(void);
/* The configured list-max-listpack-size, the fill rule of every write. */
int list_config_fill(void);
#endif
