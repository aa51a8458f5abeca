/* hll.c - the HyperLogLog commands: PFADD PFCOUNT PFMERGE PFDEBUG
 * PFSELFTEST, over HLL strings (core/hll.h has the layout).
 *
 * An HLL is an ordinary string value, so it is stored as one: a dense HLL
 * kept as a raw string is changed in place (its size never changes); any
 * other change works on a copy and stores it back with the key's expire.
 * PFCOUNT of one key writes the cached cardinality into the string's header
 * as Redis does, in place. PFCOUNT of keys on several shards is a
 * read-only split transaction: each shard's part answers the union of its
 * keys' registers (16384 bytes, one per register), the coordinator takes
 * the maximum of the parts and counts. PFMERGE over several shards adds
 * one hop: the merged registers go to the destination's shard, which
 * applies them (whole-shard locks instead while the AOF is on). */
#include "cmd/cmd.h"
#include "cmd/dispatch.h"
#include "cmd/string.h"
#include "core/hll.h"
#include "lib/mem.h"
#include "net/conn.h"
#include "persist/aof.h"
#include "server/config.h"
#include "shard/shard.h"
#include "shard/tx.h"
#include <stdlib.h>

static const char *const err_notvalid = "WRONGTYPE Key is not a valid HyperLogLog string value.";
static const char *const err_invalid = "INVALIDOBJ Corrupted HLL object detected";

/* The HLL string at l (NULL: missing) for reading: sets *p and *len and
 * returns 1; replies the type error and returns 0 when the key holds no
 * valid HLL. tmp: >= 24 bytes for an integer-encoded string. */
static int hll_bytes(cmd_ctx *c, entry **l, char *tmp, const uint8_t **p, size_t *len) {
    if (ctx_wrong_type(c, l ? *l : NULL, T_STRING)) return 0;
    if (entry_kind(*l) == EK_INT) { /* never an HLL: Redis checks the encoding first */
        reply_error(c, err_notvalid);
        return 0;
    }
    *p = (const uint8_t *)entry_str(*l, tmp, len);
    if (hll_check(*p, *len) < 0) {
        reply_error(c, err_notvalid);
        return 0;
    }
    return 1;
}

/* The writable bytes of the string entry e (raw or embstr). */
static uint8_t *str_mut(entry *e, size_t *len) {
    uint8_t *v = entry_valp(e);
    uint64_t l;
    v += varint_get(v, &l);
    *len = (size_t)l;
    return v;
}

/* A working copy of the HLL p/len with room to grow. */
static void hll_copy(hll_buf *b, const uint8_t *p, size_t len) {
    b->cap = len + 16;
    b->p = zmalloc(b->cap);
    memcpy(b->p, p, len);
    b->len = len;
}

/* Stores b as the value of key (l: its link, or NULL to add it). */
static void hll_store(cmd_ctx *c, db *d, entry **l, int ki, const hll_buf *b) {
    if (!l) {
        db_add(d, entry_new_raw(c->argv[ki], c->argl[ki], (const char *)b->p, b->len, -1));
        return;
    }
    size_t len;
    if (entry_kind(*l) == EK_RAW) {
        uint8_t *v = str_mut(*l, &len);
        if (len == b->len) {
            memcpy(v, b->p, len);
            return;
        }
    }
    string_replace_raw(d, l, (const char *)b->p, b->len);
}

static size_t sparse_max(void) { return (size_t)cfg_get(hll_sparse_max_bytes); }

/* PFADD key [element ...] */
static void pfadd_cmd(cmd_ctx *c) {
    db *d;
    entry **l = ctx_lookup(c, 1, 0, &d);
    hll_buf b;
    int updated = 0;
    if (!l) {
        hll_new(&b);
        updated = 1;
    } else {
        char tmp[24];
        const uint8_t *p;
        size_t len;
        if (!hll_bytes(c, l, tmp, &p, &len)) return;
        if (p[4] == HLL_DENSE && entry_kind(*l) == EK_RAW) { /* in place */
            uint8_t *v = str_mut(*l, &len);
            for (int j = 2; j < c->argc; j++) {
                long i;
                int n = hll_hash(c->argv[j], c->argl[j], &i);
                updated += hll_dense_set(v + HLL_HDR_SIZE, i, (uint8_t)n);
            }
            if (updated) hll_invalidate(v);
            reply_int(c, updated ? 1 : 0);
            return;
        }
        hll_copy(&b, p, len);
    }
    for (int j = 2; j < c->argc; j++) {
        int r = hll_add(&b, c->argv[j], c->argl[j], sparse_max());
        if (r < 0) { /* the elements before stay added, the cache as it was: Redis's in-place result */
            if (updated) hll_store(c, d, l, 1, &b);
            zfree(b.p);
            reply_error(c, err_invalid);
            return;
        }
        updated += r;
    }
    if (updated) {
        hll_invalidate(b.p);
        hll_store(c, d, l, 1, &b);
    }
    zfree(b.p);
    reply_int(c, updated ? 1 : 0);
}

/* PFCOUNT key [key ...] */
static void pfcount_cmd(cmd_ctx *c) {
    char tmp[24];
    const uint8_t *p;
    size_t len;
    if (c->argc > 2) { /* the union, in one register per byte; nothing is cached */
        uint8_t *max = zcalloc(HLL_REGISTERS);
        for (int j = 1; j < c->argc; j++) {
            entry **l = ctx_lookup(c, j, 1, NULL);
            if (!l) continue;
            if (!hll_bytes(c, l, tmp, &p, &len)) goto out;
            if (hll_merge(max, p, len) < 0) {
                reply_error(c, err_invalid);
                goto out;
            }
        }
        reply_int(c, (long long)hll_count_raw(max));
    out:
        zfree(max);
        return;
    }
    entry **l = ctx_lookup(c, 1, 1, NULL);
    if (!l) {
        reply_int(c, 0);
        return;
    }
    if (!hll_bytes(c, l, tmp, &p, &len)) return;
    uint64_t card;
    if (!hll_cache_get(p, &card)) {
        int invalid = 0;
        card = hll_count(p, len, &invalid);
        if (invalid) {
            reply_error(c, err_invalid);
            return;
        }
        /* a change of the value, as Redis signals it: a running snapshot
         * saves the entry first, WATCHers see a write */
        dispatch_before_write(c);
        l = ctx_lookup(c, 1, 0, NULL);
        hll_cache_set(str_mut(*l, &len), card);
    }
    reply_int(c, (long long)card);
}

/* ---- PFCOUNT over several shards ---- */

/* A part: PFCOUNT key index [key index ...], the keys of one shard with
 * their argument positions in the client's command. Replies the union of
 * their registers as a bulk of 16384 bytes plus one (1 when a key was
 * dense), or [index, error] for the first key that fails. */
static void pfunion_proc(cmd_ctx *c) {
    char tmp[24];
    const uint8_t *p;
    size_t len;
    uint8_t *max = zcalloc(HLL_REGISTERS + 1);
    for (int j = 1; j + 1 < c->argc; j += 2) {
        entry **l = ctx_lookup(c, j, 1, NULL);
        if (!l) continue;
        long long idx = 0;
        str2ll(c->argv[j + 1], c->argl[j + 1], &idx);
        size_t at = reply_defer(c);
        reply_int(c, idx);
        if (!hll_bytes(c, l, tmp, &p, &len)) {
            reply_defer_array(c, at, 2);
            goto out;
        }
        if (p[4] == HLL_DENSE) max[HLL_REGISTERS] = 1;
        if (hll_merge(max, p, len) < 0) {
            reply_error(c, err_invalid);
            reply_defer_array(c, at, 2);
            goto out;
        }
        c->out->len = at;
    }
    reply_bulk(c, (const char *)max, HLL_REGISTERS + 1);
out:
    zfree(max);
}

static const command pfunion_row = {.name = "pfcount", .proc = pfunion_proc, .arity = -3, .flags = CMD_READONLY,
                                    .first = 1, .last = -1, .step = 2};

/* The parts' unions (part replies k) merged into max (16384 + the dense
 * flag); returns NULL, or the error of the key that comes first in the
 * command (pointing into a part's reply). */
static const char *union_parts(tx *t, int k, uint8_t *max, size_t *errlen) {
    const char *err = NULL;
    long long erridx = 0;
    for (int i = 0; i < t->n; i++) {
        size_t len;
        const char *r = tx_part_reply(t, i, k, &len);
        const char *end = r + len, *nl = memchr(r, '\n', len);
        if (len && r[0] == '$' && nl && (size_t)(end - nl - 1) >= HLL_REGISTERS + 1) {
            const uint8_t *regs = (const uint8_t *)nl + 1;
            for (long j = 0; j <= HLL_REGISTERS; j++)
                if (regs[j] > max[j]) max[j] = regs[j];
        } else if (len && r[0] == '*' && nl) { /* [index, error] */
            const char *e = memchr(nl + 1, '\n', (size_t)(end - nl - 1));
            long long idx = strtoll(nl + 2, NULL, 10);
            if (e && (!err || idx < erridx)) {
                err = e + 1;
                *errlen = (size_t)(end - e - 1);
                erridx = idx;
            }
        } else if (!err) { /* any other error of the part */
            err = r;
            *errlen = len;
            erridx = 1LL << 62;
        }
    }
    return err;
}

static void pfcount_merge(tx *t, buf *out) {
    uint8_t *max = zcalloc(HLL_REGISTERS + 1);
    size_t errlen = 0;
    const char *err = union_parts(t, 0, max, &errlen);
    if (err) buf_add(out, err, errlen);
    else resp_int(out, (long long)hll_count_raw(max));
    zfree(max);
}

/* Adds to each shard's part (created on first use) its keys of argv[from..]
 * (locked shared, dest: exclusive) and the union command over them. */
static void add_unions(tx *t, session *s, int argc, const char **argv, const size_t *argl, const char *dest,
                       size_t dlen) {
    int nargs = 1 + 2 * (argc - 1);
    const char **pargv = zmalloc(sizeof(char *) * (size_t)nargs);
    size_t *pargl = zmalloc(sizeof(size_t) * (size_t)nargs);
    char(*idx)[24] = zmalloc(sizeof *idx * (size_t)argc);
    for (int sh = 0; sh < nshards; sh++) {
        int k = 1;
        tx_part *p = NULL;
        for (int j = 1; j < argc; j++) {
            if (shard_of_key(argv[j], argl[j]) != sh) continue;
            if (!p) p = tx_part_of(t, sh);
            int excl = dest && argl[j] == dlen && !memcmp(argv[j], dest, dlen);
            tx_part_key(p, s->db, argv[j], argl[j], excl);
            pargv[k] = argv[j];
            pargl[k++] = argl[j];
            pargl[k] = (size_t)ll2str(idx[j], j);
            pargv[k++] = idx[j];
        }
        if (!p) continue;
        pargv[0] = argv[0];
        pargl[0] = argl[0];
        tx_part_add(p, &pfunion_row, k, pargv, pargl, s->db, s->resp)->no_stats = 1; /* tx_done counts the call */
    }
    zfree(pargv);
    zfree(pargl);
    zfree(idx);
}

/* Plans PFCOUNT of keys on several shards as one part per shard. */
static int pfcount_hops(session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                        int discard) {
    tx *t = tx_create(s, cmd, discard);
    add_unions(t, s, argc, argv, argl, NULL, 0);
    tx_run_split(t, 1, pfcount_merge);
    return 1;
}

/* PFMERGE over several shards:
 *   hop 1 (at the grant)  every shard: the union of its keys (dest too)
 *   hop 2                 dest's shard: store the merged registers
 * every key locked from the grant to the end (dest exclusive). */
static void pfstore_proc(cmd_ctx *c);
static void merge_into(cmd_ctx *c, const uint8_t *max, int use_dense);
static const command pfstore_row = {.name = "pfmerge", .proc = pfstore_proc, .arity = 3,
                                    .flags = CMD_WRITE | CMD_DENYOOM, .first = 1, .last = 1, .step = 1};

typedef struct merge_plan {
    int hop, dst; /* dst: the part of dest's shard */
    size_t dlen;
    char dest[];
} merge_plan;

static int pfmerge_step(tx *t, buf *out) {
    merge_plan *pl = t->plan;
    if (pl->hop++ == 0) {
        uint8_t *max = zcalloc(HLL_REGISTERS + 1);
        size_t errlen = 0;
        const char *err = union_parts(t, 0, max, &errlen);
        if (err) {
            buf_add(out, err, errlen);
            zfree(max);
            return 0;
        }
        const char *argv[3] = {"pfmerge", pl->dest, (const char *)max};
        size_t argl[3] = {7, pl->dlen, HLL_REGISTERS + 1};
        tx_part_add(t->parts[pl->dst], &pfstore_row, 3, argv, argl, t->dbid, t->resp)->no_stats = 1;
        zfree(max);
        return 1;
    }
    size_t len;
    const char *r = tx_part_reply(t, pl->dst, 1, &len);
    buf_add(out, r, len);
    return 0;
}

static int pfmerge_hops(session *s, const command *cmd, int argc, const char **argv, const size_t *argl,
                        int discard) {
    if (aof_active()) return 0; /* AOF: the whole-shard path logs the PFMERGE itself */
    tx *t = tx_create(s, cmd, discard);
    merge_plan *pl = zmalloc(sizeof *pl + argl[1]);
    pl->hop = 0;
    pl->dlen = argl[1];
    memcpy(pl->dest, argv[1], argl[1]);
    t->plan = pl;
    add_unions(t, s, argc, argv, argl, argv[1], argl[1]);
    tx_part *pd = tx_part_of(t, shard_of_key(argv[1], argl[1]));
    for (int i = 0; i < t->n; i++)
        if (t->parts[i] == pd) pl->dst = i;
    tx_run_steps(t, pfmerge_step);
    return 1;
}

/* Raises the registers of the HLL at argv[1] (created when missing; dense
 * first when use_dense) to max, and replies OK, as Redis's PFMERGE ends. */
static void merge_into(cmd_ctx *c, const uint8_t *max, int use_dense) {
    char tmp[24];
    size_t len;
    db *d;
    entry **l = ctx_lookup(c, 1, 0, &d);
    hll_buf b;
    if (l) {
        const uint8_t *p = (const uint8_t *)entry_str(*l, tmp, &len); /* checked by the caller */
        hll_copy(&b, p, len);
    } else {
        hll_new(&b);
    }
    if (use_dense && hll_to_dense(&b) < 0) {
        zfree(b.p);
        reply_error(c, err_invalid);
        return;
    }
    for (long i = 0; i < HLL_REGISTERS; i++)
        if (max[i]) hll_set(&b, i, max[i], sparse_max());
    hll_invalidate(b.p);
    hll_store(c, d, l, 1, &b);
    zfree(b.p);
    reply_ok(c);
}

/* PFMERGE destkey [sourcekey ...] */
static void pfmerge_cmd(cmd_ctx *c) {
    char tmp[24];
    const uint8_t *p;
    size_t len;
    uint8_t *max = zcalloc(HLL_REGISTERS);
    int use_dense = 0;
    for (int j = 1; j < c->argc; j++) {
        entry **l = ctx_lookup(c, j, 1, NULL);
        if (!l) continue;
        if (!hll_bytes(c, l, tmp, &p, &len)) goto out;
        if (p[4] == HLL_DENSE) use_dense = 1;
        if (hll_merge(max, p, len) < 0) {
            reply_error(c, err_invalid);
            goto out;
        }
    }
    merge_into(c, max, use_dense);
out:
    zfree(max);
}

/* The second hop of PFMERGE over shards: pfmerge dest <registers + dense
 * flag>, on dest's shard. */
static void pfstore_proc(cmd_ctx *c) {
    if (c->argl[2] != HLL_REGISTERS + 1) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    const uint8_t *max = (const uint8_t *)c->argv[2];
    merge_into(c, max, max[HLL_REGISTERS]);
}

/* PFDEBUG <subcommand> key */
static void pfdebug_cmd(cmd_ctx *c) {
    db *d;
    entry **l = ctx_lookup(c, 2, 0, &d);
    if (!l) {
        reply_error(c, "ERR The specified key does not exist");
        return;
    }
    char tmp[24];
    const uint8_t *p;
    size_t len;
    if (!hll_bytes(c, l, tmp, &p, &len)) return;
    int getreg = arg_is(c, 1, "getreg");
    if (getreg || arg_is(c, 1, "todense")) {
        hll_buf b;
        hll_copy(&b, p, len);
        int conv = 0;
        if (b.p[4] == HLL_SPARSE) {
            if (hll_to_dense(&b) < 0) {
                zfree(b.p);
                reply_error(c, err_invalid);
                return;
            }
            hll_store(c, d, l, 2, &b);
            conv = 1;
        }
        if (getreg) {
            reply_array(c, HLL_REGISTERS);
            for (long i = 0; i < HLL_REGISTERS; i++) reply_int(c, hll_dense_get(b.p + HLL_HDR_SIZE, i));
        } else {
            reply_int(c, conv);
        }
        zfree(b.p);
    } else if (arg_is(c, 1, "decode")) {
        if (p[4] != HLL_SPARSE) {
            reply_error(c, "ERR HLL encoding is not sparse");
            return;
        }
        char *s;
        size_t n = hll_decode(p, len, &s);
        reply_bulk(c, s, n);
        zfree(s);
    } else if (arg_is(c, 1, "encoding")) {
        reply_simple(c, p[4] == HLL_DENSE ? "dense" : "sparse");
    } else {
        reply_errorf(c, "ERR Unknown PFDEBUG subcommand '%.*s'", (int)c->argl[1], c->argv[1]);
    }
}

/* PFSELFTEST */
static void pfselftest_cmd(cmd_ctx *c) {
    char err[128];
    if (hll_selftest(err, sizeof err) < 0) reply_error(c, err);
    else reply_ok(c);
}

static const command rows[] = {
    {.name = "pfadd",
     .kflags = KS_RW | KS_INSERT,
     .proc = pfadd_cmd,
     .arity = -2,
     .flags = CMD_WRITE | CMD_DENYOOM | CMD_FAST,
     .first = 1,
     .last = 1,
     .step = 1,
     .group = "hyperloglog",
     .since = "2.8.9",
     .acl = "write hyperloglog fast",
     .summary = "Adds the specified elements to the specified HyperLogLog."},
    {.name = "pfcount",
     KEY_SPECS({KS_RW | KS_ACCESS, KS_INDEX(1), KS_RANGE(-1, 1, 0),
                .notes = "RW because it may change the internal representation of the key, and propagate to replicas"}),
     .proc = pfcount_cmd,
     .arity = -2,
     .flags = CMD_READONLY | CMD_MAY_REPLICATE,
     .first = 1,
     .last = -1,
     .step = 1,
     .hops = pfcount_hops,
     .group = "hyperloglog",
     .since = "2.8.9",
     .acl = "read hyperloglog slow",
     .summary = "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s)."},
    {.name = "pfmerge",
     KEY_SPECS({KS_RW | KS_ACCESS | KS_INSERT, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RO | KS_ACCESS, KS_INDEX(2), KS_RANGE(-1, 1, 0)}),
     .proc = pfmerge_cmd,
     .arity = -2,
     .flags = CMD_WRITE | CMD_DENYOOM,
     .first = 1,
     .last = -1,
     .step = 1,
     .hops = pfmerge_hops,
     .group = "hyperloglog",
     .since = "2.8.9",
     .acl = "write hyperloglog slow",
     .summary = "Merge N different HyperLogLogs into a single one."},
    {.name = "pfdebug",
     .kflags = KS_RW | KS_ACCESS,
     .proc = pfdebug_cmd,
     .arity = 3,
     .flags = CMD_WRITE | CMD_DENYOOM | CMD_ADMIN,
     .first = 2,
     .last = 2,
     .step = 1,
     .group = "hyperloglog",
     .since = "2.8.9",
     .acl = "write hyperloglog admin slow dangerous",
     .summary = "Internal commands for debugging HyperLogLog values"},
    {.name = "pfselftest",
     .proc = pfselftest_cmd,
     .arity = 1,
     .flags = CMD_ADMIN,
     .group = "hyperloglog",
     .since = "2.8.9",
     .acl = "hyperloglog admin slow dangerous",
     .summary = "An internal command for testing HyperLogLog values"},
};

void hll_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
