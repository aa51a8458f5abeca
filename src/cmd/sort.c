/* sort.c - SORT and SORT_RO: sorting the elements of a list, set or sorted
 * set, optionally by the values of other keys (BY pattern), returning the
 * values of other keys (GET pattern), and storing the result as a list.
 *
 * A command runs in three steps, as Redis's sortCommandGeneric:
 *   1. parse the options (sort_parse, shared with the routing and key
 *      position functions so all three agree on what the arguments mean);
 *   2. load the elements into a vector of sort_item, copied into one
 *      arena, then look up the BY value of each and sort them (a stable
 *      merge sort; BY nosort on a list or sorted set loads only the LIMIT
 *      range, in the value's own order);
 *   3. reply (or STORE) the LIMIT range, resolving every GET pattern.
 * A pattern names other keys ("w_*", "h_*->field"), which may live on any
 * shard: sort_route sends such commands to a transaction over every shard,
 * and ctx_db then finds each pattern key's database. */
#include "cmd/cross.h"
#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "cmd/dispatch.h"
#include "cmd/hash.h"
#include "cmd/list.h"
#include "cmd/set.h"
#include "cmd/zset.h"
#include "lib/mem.h"
#include "shard/shard.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* ---- options ---- */

typedef struct sort_opts {
    int desc, alpha, dontsort;
    long long lstart, lcount; /* LIMIT, 0 and -1 when absent */
    int by;                   /* argv index of the BY pattern, 0: none */
    int store;                /* argv index of the STORE key, 0: none */
    int ngets;
    int *gets;                /* argv indexes of the GET patterns (may be NULL) */
    int lookups;              /* some BY/GET pattern has a '*' */
} sort_opts;

/* Length of s as a C string (Redis reads patterns with strchr). */
static size_t cstr_len(const char *s, size_t n) {
    const char *z = memchr(s, 0, n);
    return z ? (size_t)(z - s) : n;
}

static int has_star(const char *s, size_t n) { return memchr(s, '*', cstr_len(s, n)) != NULL; }

/* Parses argv[2..] as Redis does, left to right, stopping at the first
 * error. Returns ST_OK, ST_SYNTAX or ST_NOTINT (a bad LIMIT number). When
 * o->gets is set it receives the GET positions (room for argc). */
static int sort_parse(int argc, const char **argv, const size_t *argl, int readonly, sort_opts *o) {
    for (int j = 2; j < argc; j++) {
        int left = argc - j - 1;
        const char *a = argv[j];
        size_t al = argl[j];
        if (str_eq_ci(a, al, "asc")) {
            o->desc = 0;
        } else if (str_eq_ci(a, al, "desc")) {
            o->desc = 1;
        } else if (str_eq_ci(a, al, "alpha")) {
            o->alpha = 1;
        } else if (str_eq_ci(a, al, "limit") && left >= 2) {
            if (!str2ll(argv[j + 1], argl[j + 1], &o->lstart) || !str2ll(argv[j + 2], argl[j + 2], &o->lcount))
                return ST_NOTINT;
            j += 2;
        } else if (!readonly && str_eq_ci(a, al, "store") && left >= 1) {
            o->store = ++j;
        } else if (str_eq_ci(a, al, "by") && left >= 1) {
            o->by = ++j;
            if (has_star(argv[j], argl[j])) o->lookups = 1;
            else o->dontsort = 1;
        } else if (str_eq_ci(a, al, "get") && left >= 1) {
            j++;
            if (o->gets) o->gets[o->ngets] = j;
            o->ngets++;
            if (has_star(argv[j], argl[j])) o->lookups = 1;
        } else {
            return ST_SYNTAX;
        }
    }
    return ST_OK;
}

/* The sorted key and the STORE destination. */
static int keys_generic(int argc, const char **argv, const size_t *argl, int *pos, int max, int readonly) {
    sort_opts o = {.lcount = -1};
    if (argc < 2 || max < 1) return 0;
    sort_parse(argc, argv, argl, readonly, &o);
    pos[0] = 1;
    if (o.store && max >= 2) {
        pos[1] = o.store;
        return 2;
    }
    return 1;
}

static int sort_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    return keys_generic(argc, argv, argl, pos, max, 0);
}

static int sort_ro_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    return keys_generic(argc, argv, argl, pos, max, 1);
}

/* For GETKEYSANDFLAGS and ACL checks: the sorted key (read) and the last
 * STORE destination (overwritten), found by skipping LIMIT's, GET's and
 * BY's arguments as Redis's sortGetKeys does, without parsing the rest. */
static int sort_keyflags(int argc, const char **argv, const size_t *argl, int *pos, uint16_t *flags, int max) {
    if (argc < 2 || max < 2) return 0;
    pos[0] = 1;
    flags[0] = KS_RO | KS_ACCESS;
    int n = 1;
    for (int i = 2; i < argc; i++) {
        if (str_eq_ci(argv[i], argl[i], "limit")) {
            i += 2;
        } else if (str_eq_ci(argv[i], argl[i], "get") || str_eq_ci(argv[i], argl[i], "by")) {
            i += 1;
        } else if (str_eq_ci(argv[i], argl[i], "store") && i + 1 < argc) {
            pos[1] = i + 1;
            flags[1] = KS_OW | KS_UPDATE;
            n = 2;
        }
    }
    return n;
}

static int sort_ro_keyflags(int argc, const char **argv, const size_t *argl, int *pos, uint16_t *flags, int max) {
    if (argc < 2 || max < 1) return 0;
    pos[0] = 1;
    flags[0] = KS_RO | KS_ACCESS;
    return 1;
}

/* Every shard when a pattern names other keys, else the key positions. */
static int route_generic(int argc, const char **argv, const size_t *argl, int readonly) {
    sort_opts o = {.lcount = -1};
    if (sort_parse(argc, argv, argl, readonly, &o) == ST_OK && o.lookups) return ROUTE_ALL;
    return ROUTE_KEYS;
}

static int sort_route(int argc, const char **argv, const size_t *argl, int nshards) {
    (void)nshards;
    return route_generic(argc, argv, argl, 0);
}

static int sort_ro_route(int argc, const char **argv, const size_t *argl, int nshards) {
    (void)nshards;
    return route_generic(argc, argv, argl, 1);
}

/* ---- pattern lookups ---- */

/* Scratch space of one command: the composed key and a spelled integer. */
typedef struct sort_scratch {
    buf key;
    char num[PACK_INTBUF];
} sort_scratch;

/* The value pattern argv[pi] names for element el: el itself for "#", a
 * string key's value, or a hash field's value for "key->field"; NULL when
 * the key is missing, of another type, or the pattern has no '*'. The
 * bytes stay valid until the next lookup. */
static const char *pattern_value(cmd_ctx *c, int pi, const char *el, size_t elen, sort_scratch *sc, size_t *vl) {
    const char *pat = c->argv[pi];
    size_t plen = c->argl[pi], clen = cstr_len(pat, plen);
    if (clen == 1 && pat[0] == '#') {
        *vl = elen;
        return el;
    }
    const char *star = memchr(pat, '*', clen);
    if (!star) return NULL;
    size_t pre = (size_t)(star - pat);
    const char *field = NULL, *arrow = NULL, *cend = pat + clen;
    size_t flen = 0;
    for (const char *q = star + 1; q + 1 < cend && !arrow; q++)
        if (q[0] == '-' && q[1] == '>') arrow = q;
    if (arrow && arrow + 2 < cend) {
        field = arrow + 2;
        flen = plen - (size_t)(field - pat);
    }
    size_t post = plen - pre - 1 - (field ? flen + 2 : 0);
    sc->key.len = 0;
    buf_add(&sc->key, pat, pre);
    buf_add(&sc->key, el, elen);
    buf_add(&sc->key, star + 1, post);
    db *d = ctx_db(c, sc->key.p ? sc->key.p : "", sc->key.len);
    entry *e = db_find(d, sc->key.p ? sc->key.p : "", sc->key.len, ctx_now(c));
    if (e) c->sh->stat_hits++;
    else c->sh->stat_misses++;
    if (!e) return NULL;
    if (!field) return entry_type(e) == T_STRING ? db_str(e, sc->num, vl) : NULL;
    if (entry_type(e) != T_HASH) return NULL;
    return hash_value_get(entry_obj(e), field, flen, vl, sc->num);
}

/* ---- the vector ---- */

typedef struct sort_item {
    size_t off, len;   /* element bytes in the arena */
    size_t coff, clen; /* ALPHA: the BY value in the arena */
    int has_cmp;
    double score;
} sort_item;

typedef struct sort_vec {
    sort_item *v;
    size_t n, cap;
    buf arena;
} sort_vec;

static void vec_add(sort_vec *sv, const char *s, size_t len) {
    if (sv->n == sv->cap) return; /* cap is the value's size: never reached */
    sort_item *it = &sv->v[sv->n++];
    memset(it, 0, sizeof *it);
    it->off = sv->arena.len;
    it->len = len;
    buf_add(&sv->arena, s, len);
}

static const char *item_str(const sort_vec *sv, const sort_item *it) { return sv->arena.p + it->off; }

static void vec_add_cb(void *ud, const char *s, size_t len) { vec_add(ud, s, len); }

/* Elements [first, first + n) of a list, from the tail when desc (index
 * first counted from the tail). */
static void load_list(sort_vec *sv, const void *o, size_t first, size_t n, int desc) {
    lobj_pos p;
    long idx = desc ? -(long)first - 1 : (long)first;
    if (n == 0 || !lobj_index(o, idx, &p)) return;
    char tmp[PACK_INTBUF];
    for (size_t i = 0; i < n && lobj_pos_ok(&p); i++) {
        pack_val v;
        size_t len;
        lobj_get(&p, &v);
        const char *s = pack_val_str(&v, tmp, &len);
        vec_add(sv, s, len);
        if (desc) lobj_prev(&p);
        else lobj_next(&p);
    }
}

/* Members of ranks [first, first + n) of a sorted set, counted from the
 * highest score when desc. */
static void load_zset(sort_vec *sv, void *o, size_t first, size_t n, int desc) {
    size_t total = zobj_size(o);
    zcur cu;
    if (n == 0 || first >= total || !zcur_seek(&cu, o, desc ? total - 1 - first : first)) return;
    for (size_t i = 0; i < n; i++) {
        zitem it;
        zcur_get(&cu, &it);
        vec_add(sv, it.m, it.ml);
        if (!(desc ? zcur_prev(&cu) : zcur_next(&cu))) break;
    }
}

static size_t value_len(const entry *e) {
    if (!e) return 0;
    void *o = entry_obj(e);
    switch (entry_type(e)) {
    case T_LIST: return lobj_count(o);
    case T_SET: return set_value_len(o);
    default: return zobj_size(o);
    }
}

/* The LIMIT range [*start, *end] over len elements, clamped as Redis
 * 7.0 does (an empty range has end = start - 1). */
static void limit_range(const sort_opts *o, long long len, long long *start, long long *end) {
    long long s = o->lstart < 0 ? 0 : o->lstart, cnt = o->lcount < -1 ? -1 : o->lcount;
    if (s > len) s = len;
    if (cnt > len) cnt = len;
    long long e = cnt < 0 ? len - 1 : s + cnt - 1;
    if (s >= len) {
        s = len - 1;
        e = len - 2;
    }
    if (e >= len) e = len - 1;
    *start = s;
    *end = e;
}

/* Loads the elements of e (NULL: none) into sv. With BY nosort a list or
 * sorted set loads only [*start, *end], which then becomes [0, n - 1]. */
static void load_value(sort_vec *sv, const entry *e, const sort_opts *o, long long *start, long long *end) {
    size_t len = value_len(e);
    int ranged = e && o->dontsort && entry_type(e) != T_SET;
    size_t first = ranged ? (size_t)*start : 0, n = ranged ? (size_t)(*end - *start + 1) : len;
    sv->cap = n;
    sv->v = zmalloc(sizeof(sort_item) * (n ? n : 1));
    if (ranged) {
        *end -= *start;
        *start = 0;
    }
    if (!e || n == 0) return;
    void *obj = entry_obj(e);
    if (entry_type(e) == T_LIST) load_list(sv, obj, first, n, ranged && o->desc);
    else if (entry_type(e) == T_SET) set_value_foreach(obj, vec_add_cb, sv);
    else load_zset(sv, obj, first, n, ranged && o->desc);
}

/* A number as Redis's SORT reads it: strtod over the C string, which must
 * be consumed entirely, without overflow or NaN. */
static int parse_score(const char *s, size_t n, buf *tmp, double *d) {
    n = cstr_len(s, n);
    tmp->len = 0;
    buf_add(tmp, s, n);
    buf_addc(tmp, 0);
    char *endp;
    errno = 0;
    *d = strtod(tmp->p, &endp);
    return *endp == 0 && errno != ERANGE && !isnan(*d);
}

/* Fills the score (or the ALPHA BY value) of every item; 0 when some
 * value is not a number. */
static int load_scores(cmd_ctx *c, sort_vec *sv, const sort_opts *o, sort_scratch *sc) {
    int ok = 1;
    buf tmp = {0};
    for (size_t j = 0; j < sv->n; j++) {
        sort_item *it = &sv->v[j];
        const char *v = item_str(sv, it);
        size_t vl = it->len;
        if (o->by) {
            v = pattern_value(c, o->by, v, vl, sc, &vl);
            if (!v) continue;
        }
        if (o->alpha) {
            if (!o->by) continue;
            it->has_cmp = 1;
            it->clen = vl;
            /* v may point into the arena (BY #), which may move */
            buf_add(&tmp, v, vl);
            it->coff = sv->arena.len;
            buf_add(&sv->arena, tmp.p, vl);
            tmp.len = 0;
        } else if (!parse_score(v, vl, &tmp, &it->score)) {
            ok = 0;
        }
    }
    buf_free(&tmp);
    return ok;
}

/* ---- ordering ---- */

typedef struct sort_order {
    const char *base;
    int alpha, by, store, desc;
} sort_order;

/* compareStringObjects: bytes, then length. */
static int bin_cmp(const char *a, size_t al, const char *b, size_t bl) {
    int r = memcmp(a, b, al < bl ? al : bl);
    if (r) return r;
    return al < bl ? -1 : al > bl;
}

/* strcoll in the C locale: bytes up to the first NUL. */
static int coll_cmp(const char *a, size_t al, const char *b, size_t bl) {
    return bin_cmp(a, cstr_len(a, al), b, cstr_len(b, bl));
}

static int item_cmp(const sort_order *so, const sort_item *x, const sort_item *y) {
    const char *xs = so->base + x->off, *ys = so->base + y->off;
    int r;
    if (!so->alpha) {
        if (x->score != y->score) r = x->score > y->score ? 1 : -1;
        else r = bin_cmp(xs, x->len, ys, y->len);
    } else if (so->by) {
        if (!x->has_cmp || !y->has_cmp) r = x->has_cmp - y->has_cmp;
        else r = (so->store ? bin_cmp : coll_cmp)(so->base + x->coff, x->clen, so->base + y->coff, y->clen);
    } else {
        r = (so->store ? bin_cmp : coll_cmp)(xs, x->len, ys, y->len);
    }
    return so->desc ? -r : r;
}

/* Stable merge sort of v[0, n) using tmp (n items). */
static void merge_sort(const sort_order *so, sort_item *v, sort_item *tmp, size_t n) {
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(so, v, tmp, h);
    merge_sort(so, v + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = item_cmp(so, &v[j], &v[i]) < 0 ? v[j++] : v[i++];
    while (i < h) tmp[k++] = v[i++];
    memcpy(v, tmp, sizeof(sort_item) * k);
}

static void sort_vector(sort_vec *sv, const sort_opts *o) {
    sort_order so = {sv->arena.p, o->alpha, o->by, o->store != 0, o->desc};
    sort_item *tmp = zmalloc(sizeof(sort_item) * (sv->n ? sv->n : 1));
    merge_sort(&so, sv->v, tmp, sv->n);
    zfree(tmp);
}

/* ---- output ---- */

static void reply_range(cmd_ctx *c, const sort_vec *sv, const sort_opts *o, long long start, long long end,
                        sort_scratch *sc) {
    long long n = end - start + 1;
    reply_array(c, o->ngets ? o->ngets * n : n);
    for (long long j = start; j <= end; j++) {
        const sort_item *it = &sv->v[j];
        if (!o->ngets) reply_bulk(c, item_str(sv, it), it->len);
        for (int g = 0; g < o->ngets; g++) {
            size_t vl;
            const char *v = pattern_value(c, o->gets[g], item_str(sv, it), it->len, sc, &vl);
            if (v) reply_bulk(c, v, vl);
            else reply_null(c);
        }
    }
}

/* Writes the range as a list at the STORE key (an empty one deletes the
 * key) and replies its length. */
static void store_range(cmd_ctx *c, const sort_vec *sv, const sort_opts *o, long long start, long long end,
                        sort_scratch *sc) {
    void *ql = list_new();
    int fill = list_config_fill();
    for (long long j = start; j <= end; j++) {
        const sort_item *it = &sv->v[j];
        if (!o->ngets) lobj_push(&ql, fill, QL_TAIL, item_str(sv, it), it->len);
        for (int g = 0; g < o->ngets; g++) {
            size_t vl = 0;
            const char *v = pattern_value(c, o->gets[g], item_str(sv, it), it->len, sc, &vl);
            lobj_push(&ql, fill, QL_TAIL, v ? v : "", v ? vl : 0);
        }
    }
    const char *k = c->argv[o->store];
    size_t kl = c->argl[o->store];
    db *d = ctx_db(c, k, kl);
    size_t n = lobj_count(ql);
    if (n == 0) {
        lobj_free(ql);
        if (db_delete(d, k, kl, ctx_now(c))) notify_key(NOTIFY_GENERIC, "del", k, kl, c->dbid);
    } else {
        entry **l = db_find_link(d, k, kl, ctx_now(c));
        entry *ne = entry_new_obj(k, kl, T_LIST, ql, -1);
        if (l) db_replace(d, l, ne, 0);
        else db_add(d, ne);
        notify_key(NOTIFY_LIST, "sortstore", k, kl, c->dbid);
    }
    reply_int(c, (long long)n);
}

/* Steps 2 and 3 once the options are known and the key checked. */
static void sort_run(cmd_ctx *c, const entry *e, sort_opts *o) {
    /* A set has no order of its own: when one is stored or goes to a script, sort it (as Redis). */
    if (o->dontsort && e && entry_type(e) == T_SET && (o->store || dispatch_in_script())) {
        o->dontsort = 0;
        o->alpha = 1;
        o->by = 0;
    }
    long long start, end;
    limit_range(o, (long long)value_len(e), &start, &end);
    sort_vec sv = {0};
    sort_scratch sc = {0};
    load_value(&sv, e, o, &start, &end);
    int ok = 1;
    if (!o->dontsort) {
        ok = load_scores(c, &sv, o, &sc);
        sort_vector(&sv, o);
    }
    if (!ok) reply_error(c, "ERR One or more scores can't be converted into double");
    else if (o->store) store_range(c, &sv, o, start, end, &sc);
    else reply_range(c, &sv, o, start, end, &sc);
    zfree(sv.v);
    buf_free(&sv.arena);
    buf_free(&sc.key);
}

static void sort_generic(cmd_ctx *c, int readonly) {
    int *gets = zmalloc(sizeof(int) * (size_t)c->argc);
    sort_opts o = {.lcount = -1, .gets = gets};
    int st = sort_parse(c->argc, c->argv, c->argl, readonly, &o);
    if (st != ST_OK) {
        reply_status(c, st);
    } else {
        entry **l = ctx_lookup(c, 1, 1, NULL);
        entry *e = l ? *l : NULL;
        if (e && entry_type(e) != T_LIST && entry_type(e) != T_SET && entry_type(e) != T_ZSET)
            reply_status(c, ST_WRONGTYPE);
        else
            sort_run(c, e, &o);
    }
    zfree(gets);
}

/* SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE destination] */
static void sort_cmd(cmd_ctx *c) { sort_generic(c, 0); }

/* SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] */
static void sort_ro_cmd(cmd_ctx *c) { sort_generic(c, 1); }

static const command rows[] = {
    {.name = "sort", .hops = cross_gather, .proc = sort_cmd, .arity = -2, .flags = CMD_WRITE | CMD_DENYOOM | CMD_MOVABLEKEYS, .first = 1,
     .last = 1, .step = 1, .keys = sort_keys, .keyflags = sort_keyflags,
     KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RO | KS_ACCESS, KS_UNKNOWN,
                .notes = "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from "
                         "the content of the key we sort"},
               {KS_OW | KS_UPDATE, KS_UNKNOWN,
                .notes = "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear "
                         "anywhere in the argument array"}),
     .route = sort_route, .group = "generic", .since = "1.0.0",
     .acl = "write set sortedset list slow dangerous",
     .summary = "Sort the elements in a list, set or sorted set, optionally storing the result"},
    {.name = "sort_ro", .hops = cross_gather, .proc = sort_ro_cmd, .arity = -2, .flags = CMD_READONLY | CMD_MOVABLEKEYS, .first = 1,
     .last = 1, .step = 1, .keys = sort_ro_keys, .keyflags = sort_ro_keyflags,
     KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_RO | KS_ACCESS, KS_UNKNOWN,
                .notes = "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from "
                         "the content of the key we sort"}),
     .route = sort_ro_route, .group = "generic", .since = "7.0.0",
     .acl = "read set sortedset list slow dangerous", .summary = "Sort the elements in a list, set or sorted set. Read-only variant of SORT."},
};

void sort_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
