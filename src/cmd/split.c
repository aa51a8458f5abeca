/* split.c - see split.h. Each shard's part gets the command with the keys
 * of that shard (and their values for MSET), in their order; the merge
 * adds integers (DEL, EXISTS...), answers +OK (MSET), or lays the array
 * elements back in key order (MGET). A part's error is the reply. */
#include "cmd/split.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include <stdlib.h>

typedef struct split_plan {
    int nkeys;
    uint8_t part_of[]; /* key j (in argument order) is in part part_of[j] */
} split_plan;

/* The first part reply that is an error, or NULL. */
static const char *first_error(tx *t, size_t *len) {
    for (int i = 0; i < t->n; i++) {
        const char *r = tx_part_reply(t, i, 0, len);
        if (*len && r[0] == '-') return r;
    }
    return NULL;
}

static void merge_sum(tx *t, buf *out) {
    size_t len;
    const char *e = first_error(t, &len);
    if (e) {
        buf_add(out, e, len);
        return;
    }
    long long sum = 0;
    for (int i = 0; i < t->n; i++) {
        const char *r = tx_part_reply(t, i, 0, &len);
        if (len > 1 && r[0] == ':') sum += strtoll(r + 1, NULL, 10);
    }
    resp_int(out, sum);
}

static void merge_ok(tx *t, buf *out) {
    size_t len;
    const char *e = first_error(t, &len);
    if (e) buf_add(out, e, len);
    else buf_add(out, "+OK\r\n", 5);
}

/* Length of the reply element at p (a bulk string, a RESP2 or RESP3 null,
 * or any one-line reply), within end. */
static size_t elem_len(const char *p, const char *end) {
    size_t room = (size_t)(end - p);
    if (p[0] == '$' && room > 1 && p[1] != '-') {
        size_t n = 0, i = 1;
        while (i < room && p[i] >= '0' && p[i] <= '9') n = n * 10 + (size_t)(p[i++] - '0');
        size_t all = i + 2 + n + 2; /* "$<n>\r\n" <n bytes> "\r\n" */
        return all <= room ? all : room;
    }
    const char *nl = memchr(p, '\n', room);
    return nl ? (size_t)(nl + 1 - p) : room;
}

static void merge_array(tx *t, buf *out) {
    size_t len;
    const char *e = first_error(t, &len);
    if (e) {
        buf_add(out, e, len);
        return;
    }
    split_plan *pl = t->plan;
    const char *cur[MAX_SHARDS], *end[MAX_SHARDS];
    for (int i = 0; i < t->n; i++) {
        const char *r = tx_part_reply(t, i, 0, &len);
        end[i] = r + len;
        const char *nl = memchr(r, '\n', len); /* past the "*<n>" header */
        cur[i] = nl ? nl + 1 : end[i];
    }
    resp_array(out, pl->nkeys);
    for (int j = 0; j < pl->nkeys; j++) {
        int i = pl->part_of[j];
        size_t l = cur[i] < end[i] ? elem_len(cur[i], end[i]) : 0;
        buf_add(out, cur[i], l);
        cur[i] += l;
    }
}

/* Builds and runs the transaction: key j goes to the part of shard of[j]. */
static void start(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, int discard,
                  int nkeys, int step, const uint8_t *of) {
    int write = (cmd->flags & CMD_WRITE) != 0;
    tx *t = tx_create(s, cmd, discard);
    split_plan *pl = zmalloc(sizeof *pl + (size_t)nkeys);
    pl->nkeys = nkeys;
    t->plan = pl;
    for (int j = 0; j < nkeys; j++) {
        int a = 1 + j * step;
        tx_part *p = tx_part_of(t, of[j]);
        tx_part_key(p, s->db, argv[a], argl[a], write);
        for (int i = 0; i < t->n; i++)
            if (t->parts[i] == p) pl->part_of[j] = (uint8_t)i;
    }
    const char *sargv[64];
    size_t sargl[64];
    const char **pargv = argc <= 64 ? sargv : zmalloc(sizeof(char *) * (size_t)argc);
    size_t *pargl = argc <= 64 ? sargl : zmalloc(sizeof(size_t) * (size_t)argc);
    pargv[0] = argv[0];
    pargl[0] = argl[0];
    for (int i = 0; i < t->n; i++) {
        int k = 1;
        for (int j = 0; j < nkeys; j++) {
            if (pl->part_of[j] != i) continue;
            for (int v = 0; v < step; v++) {
                pargv[k] = argv[1 + j * step + v];
                pargl[k++] = argl[1 + j * step + v];
            }
        }
        tx_part_add(t->parts[i], cmd, k, pargv, pargl, s->db, s->resp)->no_stats = 1; /* tx_done counts the call */
    }
    if (pargv != sargv) {
        zfree(pargv);
        zfree(pargl);
    }
    tx_merge_fn *merge = cmd->split == SPLIT_SUM ? merge_sum : cmd->split == SPLIT_OK ? merge_ok : merge_array;
    tx_run_split(t, !write, merge);
}

int split_route(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, int discard) {
    /* AOF: a write's parts would reach the log as separate commands; the
     * whole-shard path writes one MULTI/EXEC block. */
    if ((cmd->flags & CMD_WRITE) && aof_active()) return SPLIT_ROUTE_NONE;
    int step = cmd->step > 0 ? cmd->step : 1;
    if (cmd->first != 1 || cmd->last != -1 || (argc - 1) % step) return SPLIT_ROUTE_NONE; /* the handler replies the error */
    int nkeys = (argc - 1) / step;
    if (nkeys < 2) return SPLIT_ROUTE_NONE;
    uint8_t small[64];
    uint8_t *of = nkeys <= 64 ? small : zmalloc((size_t)nkeys);
    int one = 1;
    for (int j = 0; j < nkeys; j++) {
        int a = 1 + j * step;
        of[j] = (uint8_t)shard_of_key(argv[a], argl[a]);
        one &= of[j] == of[0];
    }
    int to = one ? of[0] : SPLIT_STARTED;
    if (!one) start(s, cmd, argc, argv, argl, discard, nkeys, step, of);
    if (of != small) zfree(of);
    return to;
}
