/* blocking.c - the blocking pops and moves: BLPOP BRPOP BLMOVE BRPOPLPUSH
 * BLMPOP BZPOPMIN BZPOPMAX BZMPOP.
 *
 * Each handler first tries what its non-blocking twin does; when every key
 * is empty it blocks the client (shard/block.h). The same handler runs
 * again in serve mode when one of its keys gets a value: block_key_wanted
 * then admits only that key, and block_client only notes that nothing was
 * there. */
#include "cmd/cmd.h"
#include "cmd/families.h"
#include "cmd/list.h"
#include "cmd/zset.h"
#include "lib/mem.h"
#include "shard/block.h"
#include "lib/mem.h"

/* Key positions argv[first..last] (inclusive), for blocking on them. */
static void block_range(cmd_ctx *c, int first, int last, int type, int64_t deadline, int on_timeout) {
    int pos[64] = {0}, *p = pos, n = last - first + 1;
    if (n > 64) p = zmalloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) p[i] = first + i;
    block_client(c, p, n, type, deadline, on_timeout);
    if (p != pos) zfree(p);
}

/* ---- lists ---- */

static void bpop_generic(cmd_ctx *c, int where) {
    int64_t deadline;
    if (!block_parse_timeout(c, c->argc - 1, &deadline)) return;
    for (int i = 1; i < c->argc - 1; i++)
        if (block_key_wanted(c, i) && list_pop_reply(c, i, where, 1, LIST_REPLY_KEY_ONE)) return;
    block_range(c, 1, c->argc - 2, T_LIST, deadline, BLOCK_NULL_ARRAY);
}

/* BLPOP key [key ...] timeout */
static void blpop_cmd(cmd_ctx *c) { bpop_generic(c, QL_HEAD); }

/* BRPOP key [key ...] timeout */
static void brpop_cmd(cmd_ctx *c) { bpop_generic(c, QL_TAIL); }

static void bmove_generic(cmd_ctx *c, int from, int to, int ti) {
    int64_t deadline;
    if (!block_parse_timeout(c, ti, &deadline)) return;
    if (block_needs_home(c, c->argv[2], c->argl[2])) return;
    if (list_move_reply(c, 1, 2, from, to)) return;
    int src = 1;
    block_client(c, &src, 1, T_LIST, deadline, BLOCK_NULL_BULK);
}

/* BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout */
static void blmove_cmd(cmd_ctx *c) {
    int from, to;
    if (!list_parse_where(c, 3, &from) || !list_parse_where(c, 4, &to)) return;
    bmove_generic(c, from, to, 5);
}

/* BRPOPLPUSH source destination timeout */
static void brpoplpush_cmd(cmd_ctx *c) { bmove_generic(c, QL_TAIL, QL_HEAD, 3); }

/* numkeys at argv[2] when usable, else 0 (the handler replies). */
static long long mpop_numkeys(int argc, const char **argv, const size_t *argl) {
    long long n;
    if (argc < 3 || !str2ll(argv[2], argl[2], &n) || n < 1 || n > argc - 3) return 0;
    return n;
}

/* Key positions of BLMPOP and BZMPOP: timeout numkeys key... */
static int mpop_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    long long n = mpop_numkeys(argc, argv, argl);
    int w = 0;
    for (long long i = 0; i < n && w < max; i++) pos[w++] = (int)(3 + i);
    return w;
}

/* Parses "numkeys key... LEFT|RIGHT [COUNT n]" from argv[2] as LMPOP does;
 * 0 after replying the error. */
static int parse_lmpop(cmd_ctx *c, int *nkeys, int *where, long long *count) {
    long long n;
    *count = -1;
    if (!str2ll(c->argv[2], c->argl[2], &n) || n < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return 0;
    }
    if (n > c->argc - 4) {
        reply_status(c, ST_SYNTAX);
        return 0;
    }
    int w = 3 + (int)n;
    if (!list_parse_where(c, w, where) || !arg_count_option(c, w + 1, count)) return 0;
    *nkeys = (int)n;
    return 1;
}

/* BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count] */
static void blmpop_cmd(cmd_ctx *c) {
    int n, where;
    long long count;
    int64_t deadline;
    if (!parse_lmpop(c, &n, &where, &count) || !block_parse_timeout(c, 1, &deadline)) return;
    for (int i = 3; i < 3 + n; i++)
        if (block_key_wanted(c, i) && list_pop_reply(c, i, where, count < 0 ? 1 : count, LIST_REPLY_KEY_MANY))
            return;
    block_range(c, 3, 2 + n, T_LIST, deadline, BLOCK_NULL_ARRAY);
}

/* ---- sorted sets ---- */

static void bzpop_generic(cmd_ctx *c, int max) {
    int64_t deadline;
    if (!block_parse_timeout(c, c->argc - 1, &deadline)) return;
    for (int i = 1; i < c->argc - 1; i++)
        if (block_key_wanted(c, i) && zs_pop_reply(c, i, max, -1, 0)) return;
    block_range(c, 1, c->argc - 2, T_ZSET, deadline, BLOCK_NULL_ARRAY);
}

/* BZPOPMIN key [key ...] timeout */
static void bzpopmin_cmd(cmd_ctx *c) { bzpop_generic(c, 0); }

/* BZPOPMAX key [key ...] timeout */
static void bzpopmax_cmd(cmd_ctx *c) { bzpop_generic(c, 1); }

/* BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count] */
static void bzmpop_cmd(cmd_ctx *c) {
    int n, max;
    long long count;
    int64_t deadline;
    if (!zs_parse_mpop(c, 2, &n, &max, &count) || !block_parse_timeout(c, 1, &deadline)) return;
    for (int i = 3; i < 3 + n; i++)
        if (block_key_wanted(c, i) && zs_pop_reply(c, i, max, count, 1)) return;
    block_range(c, 3, 2 + n, T_ZSET, deadline, BLOCK_NULL_ARRAY);
}

#define BLOCKING_FLAGS (CMD_WRITE | CMD_BLOCKING)

static const command rows[] = {
    {.name = "blpop", .proc = blpop_cmd, .arity = -3, .flags = BLOCKING_FLAGS | CMD_NOSCRIPT, .first = 1, .last = -2,
     .step = 1, .kflags = KS_RW | KS_ACCESS | KS_DELETE,
     .group = "list", .since = "2.0.0", .acl = "write list slow blocking",
     .summary = "Remove and get the first element in a list, or block until one is available"},
    {.name = "brpop", .proc = brpop_cmd, .arity = -3, .flags = BLOCKING_FLAGS | CMD_NOSCRIPT, .first = 1, .last = -2,
     .step = 1, .kflags = KS_RW | KS_ACCESS | KS_DELETE,
     .group = "list", .since = "2.0.0", .acl = "write list slow blocking",
     .summary = "Remove and get the last element in a list, or block until one is available"},
    {.name = "blmove", .proc = blmove_cmd, .arity = 6, .flags = BLOCKING_FLAGS | CMD_DENYOOM | CMD_NOSCRIPT, .first = 1,
     .last = 2, .step = 1,
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RW | KS_INSERT, KS_INDEX(2), KS_RANGE(0, 1, 0)}),
     .group = "list", .since = "6.2.0", .acl = "write list slow blocking",
     .summary = "Pop an element from a list, push it to another list and return it; or block until one is "
                "available"},
    {.name = "brpoplpush", .proc = brpoplpush_cmd, .arity = 4, .flags = BLOCKING_FLAGS | CMD_DENYOOM | CMD_NOSCRIPT, .first = 1,
     .last = 2, .step = 1,
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RW | KS_INSERT, KS_INDEX(2), KS_RANGE(0, 1, 0)}),
     .group = "list", .since = "2.2.0", .acl = "write list slow blocking",
     .summary = "Pop an element from a list, push it to another list and return it; or block until one is "
                "available"},
    {.name = "blmpop", .proc = blmpop_cmd, .arity = -5, .flags = BLOCKING_FLAGS | CMD_MOVABLEKEYS,
     .keys = mpop_keys,
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(2), KS_KEYNUM(0, 1, 1)}),
     .group = "list", .since = "7.0.0", .acl = "write list slow blocking",
     .summary = "Pop elements from a list, or block until one is available"},
    {.name = "bzpopmin", .proc = bzpopmin_cmd, .arity = -3, .flags = BLOCKING_FLAGS | CMD_FAST | CMD_NOSCRIPT, .first = 1,
     .last = -2, .step = 1, .kflags = KS_RW | KS_ACCESS | KS_DELETE, .group = "sorted_set", .since = "5.0.0",
     .acl = "write sortedset fast blocking",
     .summary = "Remove and return the member with the lowest score from one or more sorted sets, or block "
                "until one is available"},
    {.name = "bzpopmax", .proc = bzpopmax_cmd, .arity = -3, .flags = BLOCKING_FLAGS | CMD_FAST | CMD_NOSCRIPT, .first = 1,
     .last = -2, .step = 1, .kflags = KS_RW | KS_ACCESS | KS_DELETE, .group = "sorted_set", .since = "5.0.0",
     .acl = "write sortedset fast blocking",
     .summary = "Remove and return the member with the highest score from one or more sorted sets, or block "
                "until one is available"},
    {.name = "bzmpop", .proc = bzmpop_cmd, .arity = -5, .flags = BLOCKING_FLAGS | CMD_MOVABLEKEYS,
     .keys = mpop_keys,
     KEY_SPECS({KS_RW | KS_ACCESS | KS_DELETE, KS_INDEX(2), KS_KEYNUM(0, 1, 1)}),
     .group = "sorted_set", .since = "7.0.0", .acl = "write sortedset slow blocking",
     .summary = "Remove and return members with scores in a sorted set or block until one is available"},
};

void blocking_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
