/* geo.c - the geo commands over sorted sets: GEOADD GEODIST GEOHASH GEOPOS
 * GEOSEARCH GEOSEARCHSTORE GEORADIUS GEORADIUSBYMEMBER and the _RO forms.
 *
 * A geo set is an ordinary sorted set whose scores are 52-bit geohashes
 * (core/geohash.h). A search scans the score ranges of up to nine cells
 * around the centre, keeps the points inside the shape with their
 * distance, sorts them when asked (or when COUNT is given without ANY) and
 * replies or stores them. The argument parsing, its order of checks and
 * every error text are Redis 7.0's. GEORADIUS and GEORADIUSBYMEMBER name
 * their STORE key through a key function, so a store into another shard
 * runs under whole-shard locks like any multi-shard write. */
#include "cmd/cmd.h"
#include "cmd/zset.h"
#include "core/geohash.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "shard/shard.h"
#include <stdio.h>
#include <stdlib.h>

/* ---- arguments ---- */

/* A double as Redis's getDoubleFromObjectOrReply; err: the error text when
 * not a number (NULL: "value is not a valid float"). */
static int arg_geo_double(cmd_ctx *c, int i, double *v, const char *err) {
    if (zs_parse_double(c->argv[i], c->argl[i], v)) return 1;
    if (err) reply_errorf(c, "ERR %s", err);
    else reply_status(c, ST_NOTFLOAT);
    return 0;
}

/* longitude latitude at argv[i], argv[i+1]. */
static int arg_lonlat(cmd_ctx *c, int i, double xy[2]) {
    if (!arg_geo_double(c, i, &xy[0], NULL) || !arg_geo_double(c, i + 1, &xy[1], NULL)) return 0;
    if (xy[0] < GEO_LONG_MIN || xy[0] > GEO_LONG_MAX || xy[1] < GEO_LAT_MIN || xy[1] > GEO_LAT_MAX) {
        reply_errorf(c, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return 0;
    }
    return 1;
}

/* Metres per unit of argv[i]; -1 after replying the error. */
static double arg_unit(cmd_ctx *c, int i) {
    if (arg_is(c, i, "m")) return 1;
    if (arg_is(c, i, "km")) return 1000;
    if (arg_is(c, i, "ft")) return 0.3048;
    if (arg_is(c, i, "mi")) return 1609.34;
    reply_error(c, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

/* radius unit at argv[i]. */
static int arg_radius(cmd_ctx *c, int i, geo_shape *s) {
    double r;
    if (!arg_geo_double(c, i, &r, "need numeric radius")) return 0;
    if (r < 0) {
        reply_error(c, "ERR radius cannot be negative");
        return 0;
    }
    double conv = arg_unit(c, i + 1);
    if (conv < 0) return 0;
    s->type = GEO_CIRCLE;
    s->radius = r;
    s->conversion = conv;
    return 1;
}

/* width height unit at argv[i]. */
static int arg_box(cmd_ctx *c, int i, geo_shape *s) {
    double w, h;
    if (!arg_geo_double(c, i, &w, "need numeric width") || !arg_geo_double(c, i + 1, &h, "need numeric height"))
        return 0;
    if (h < 0 || w < 0) {
        reply_error(c, "ERR height or width cannot be negative");
        return 0;
    }
    double conv = arg_unit(c, i + 2);
    if (conv < 0) return 0;
    s->type = GEO_BOX;
    s->width = w;
    s->height = h;
    s->conversion = conv;
    return 1;
}

/* ---- replies ---- */

/* A distance as Redis prints it: "%.4f", a bulk string in RESP2 and 3. */
static void reply_distance(cmd_ctx *c, double d) {
    char b[512];
    int n = snprintf(b, sizeof b, "%.4f", d);
    reply_bulk(c, b, (size_t)n);
}

/* A coordinate in Redis's "human" long double form. */
static void reply_coord(cmd_ctx *c, double d) {
    char b[5120];
    int n = ld2str(b, sizeof b, (long double)d);
    if (c->resp >= 3) {
        buf_add(c->out, ",", 1);
        buf_add(c->out, b, (size_t)n);
        buf_add(c->out, "\r\n", 2);
    } else {
        reply_bulk(c, b, (size_t)n);
    }
}

/* The geo set at argv[i] for reading: 1 with *o (NULL: missing), or 0
 * after replying WRONGTYPE. */
static int geo_lookup(cmd_ctx *c, int i, void **o) {
    entry *e = zs_lookup(c, i, 1, NULL);
    if (zs_wrong_type(c, e)) return 0;
    *o = e ? entry_obj(e) : NULL;
    return 1;
}

/* ---- GEOADD ---- */

/* GEOADD key [NX|XX] [CH] longitude latitude member [...] */
static void geoadd_cmd(cmd_ctx *c) {
    int nx = 0, xx = 0, ch = 0, at = 2;
    for (; at < c->argc; at++) {
        if (arg_is(c, at, "nx")) nx = 1;
        else if (arg_is(c, at, "xx")) xx = 1;
        else if (arg_is(c, at, "ch")) ch = 1;
        else break;
    }
    int n = (c->argc - at) / 3;
    if ((c->argc - at) % 3 || (nx && xx) || n == 0) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    double *scores = zmalloc((size_t)n * sizeof *scores);
    for (int j = 0; j < n; j++) {
        double xy[2];
        geo_bits h;
        if (!arg_lonlat(c, at + 3 * j, xy)) goto out;
        geo_encode(xy[0], xy[1], &h);
        scores[j] = (double)geo_align52(h);
    }
    db *d;
    entry *e = zs_lookup(c, 1, 0, &d);
    if (zs_wrong_type(c, e)) goto out;
    if (!e) {
        if (xx) {
            reply_int(c, 0);
            goto out;
        }
        db_add(d, entry_new_obj(c->argv[1], c->argl[1], T_ZSET, zobj_new(c->argl[at + 2]), -1));
        e = db_find(d, c->argv[1], c->argl[1], ctx_now(c));
    }
    void *o = entry_obj(e);
    long long added = 0, changed = 0;
    for (int j = 0; j < n; j++) {
        const char *m = c->argv[at + 3 * j + 2];
        size_t ml = c->argl[at + 3 * j + 2];
        double cur;
        int fresh;
        if (zobj_score(o, m, ml, &cur)) {
            if (nx || cur == scores[j]) continue;
            o = zobj_set(o, m, ml, scores[j], &fresh);
            changed++;
        } else if (!xx) {
            o = zobj_set(o, m, ml, scores[j], &fresh);
            added++;
        }
    }
    zs_settle(c, d, 1, e, o);
    reply_int(c, added + (ch ? changed : 0));
out:
    zfree(scores);
}

/* ---- GEOPOS GEOHASH GEODIST ---- */

/* GEOPOS key [member ...] */
static void geopos_cmd(cmd_ctx *c) {
    void *o;
    if (!geo_lookup(c, 1, &o)) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double score, xy[2];
        if (!o || !zobj_score(o, c->argv[j], c->argl[j], &score)) {
            reply_null_array(c);
            continue;
        }
        geo_decode_score(score, xy);
        reply_array(c, 2);
        reply_coord(c, xy[0]);
        reply_coord(c, xy[1]);
    }
}

/* GEOHASH key [member ...] */
static void geohash_cmd(cmd_ctx *c) {
    void *o;
    if (!geo_lookup(c, 1, &o)) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double score;
        if (!o || !zobj_score(o, c->argv[j], c->argl[j], &score)) {
            reply_null(c);
            continue;
        }
        char s[11];
        geo_hash_string(score, s);
        reply_bulk(c, s, 11);
    }
}

/* GEODIST key member1 member2 [M|KM|FT|MI] */
static void geodist_cmd(cmd_ctx *c) {
    double to_m = 1;
    if (c->argc == 5) {
        to_m = arg_unit(c, 4);
        if (to_m < 0) return;
    } else if (c->argc > 5) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    void *o;
    if (!geo_lookup(c, 1, &o)) return;
    double s1, s2, a[2], b[2];
    if (!o || !zobj_score(o, c->argv[2], c->argl[2], &s1) || !zobj_score(o, c->argv[3], c->argl[3], &s2)) {
        reply_null(c);
        return;
    }
    geo_decode_score(s1, a);
    geo_decode_score(s2, b);
    reply_distance(c, geo_distance(a[0], a[1], b[0], b[1]) / to_m);
}

/* ---- searches ---- */

enum {
    RADIUS_COORDS = 1,  /* GEORADIUS: centre from arguments */
    RADIUS_MEMBER = 2,  /* GEORADIUSBYMEMBER: centre from a member */
    RADIUS_NOSTORE = 4, /* the _RO forms */
    GEOSEARCH = 8,
    GEOSEARCHSTORE = 16,
};
enum { SORT_NONE, SORT_ASC, SORT_DESC };

typedef struct geo_point {
    double lon, lat, dist, score;
    size_t moff, mlen; /* member bytes in the result's arena */
} geo_point;

typedef struct geo_result {
    geo_point *pts;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
} geo_result;

static void result_add(geo_result *r, const zitem *it, double xy[2], double dist) {
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->pts = zrealloc(r->pts, r->cap * sizeof *r->pts);
    }
    if (r->acap - r->alen < it->ml) {
        r->acap = (r->acap + it->ml) * 2;
        r->arena = zrealloc(r->arena, r->acap);
    }
    geo_point *p = &r->pts[r->n++];
    p->lon = xy[0];
    p->lat = xy[1];
    p->dist = dist;
    p->score = it->score;
    p->moff = r->alen;
    p->mlen = it->ml;
    if (it->ml) memcpy(r->arena + r->alen, it->m, it->ml);
    r->alen += it->ml;
}

/* Points of o inside shape s, cell by cell in Redis's order; with limit,
 * stops once that many were found. */
static void search(void *o, const geo_shape *s, size_t limit, geo_result *r) {
    uint64_t min[9], max[9];
    int cells = geo_search_ranges(s, min, max);
    for (int i = 0; i < cells; i++) {
        if (limit && r->n >= limit) break;
        zscore_range range = {(double)min[i], (double)max[i], 0, 1};
        size_t first, cnt = zobj_score_span(o, &range, &first);
        zcur cu;
        if (!cnt || !zcur_seek(&cu, o, first)) continue;
        for (size_t k = 0; k < cnt; k++) {
            zitem it;
            zcur_get(&cu, &it);
            double xy[2], dist;
            geo_decode_score(it.score, xy);
            if (geo_in_shape(s, xy[0], xy[1], &dist)) {
                result_add(r, &it, xy, dist);
                if (limit && r->n >= limit) break;
            }
            if (k + 1 < cnt && !zcur_next(&cu)) break;
        }
    }
}

static int by_dist_asc(const void *a, const void *b) {
    double x = ((const geo_point *)a)->dist, y = ((const geo_point *)b)->dist;
    return x < y ? -1 : x > y;
}
static int by_dist_desc(const void *a, const void *b) { return by_dist_asc(b, a); }

/* Moves the k points that sort first under cmp to the front, sorted (the
 * rest keep no order): a heap of k holding the worst of the best at its
 * root, so O(n log k) for COUNT k over n matches. */
static void sort_first(geo_point *p, size_t n, size_t k, int (*cmp)(const void *, const void *)) {
    if (k >= n) {
        if (n > 1) qsort(p, n, sizeof *p, cmp);
        return;
    }
#define SWAP(a, b) do { geo_point t_ = p[a]; p[a] = p[b]; p[b] = t_; } while (0)
    for (size_t i = 1; i < k; i++) /* sift up: root is the largest under cmp */
        for (size_t c = i; c > 0 && cmp(&p[(c - 1) / 2], &p[c]) < 0; c = (c - 1) / 2) SWAP(c, (c - 1) / 2);
    for (size_t i = k; i < n; i++) {
        if (cmp(&p[i], &p[0]) >= 0) continue;
        SWAP(0, i);
        for (size_t c = 0;;) { /* sift down */
            size_t l = 2 * c + 1, r = l + 1, m = c;
            if (l < k && cmp(&p[l], &p[m]) > 0) m = l;
            if (r < k && cmp(&p[r], &p[m]) > 0) m = r;
            if (m == c) break;
            SWAP(c, m);
            c = m;
        }
    }
#undef SWAP
    if (k > 1) qsort(p, k, sizeof *p, cmp);
}

/* Index of the STORE / STOREDIST key of GEORADIUS(BYMEMBER), or 0. */
static int store_key_index(int argc, const char **argv, const size_t *argl, int from) {
    int k = 0;
    for (int i = from; i < argc; i++)
        if ((str_eq_ci(argv[i], argl[i], "store") || str_eq_ci(argv[i], argl[i], "storedist")) && i + 1 < argc) {
            k = i + 1;
            i++;
        }
    return k;
}

/* The search commands, as Redis's georadiusGeneric: src is the source key's
 * index, flags the command's form. */
static void geo_search_cmd(cmd_ctx *c, int src, int flags) {
    void *o;
    if (!geo_lookup(c, src, &o)) return;
    geo_shape s = {0};
    int base, store = 0, storedist = 0;
    if (flags & RADIUS_COORDS) {
        base = 6;
        if (!arg_lonlat(c, 2, s.xy) || !arg_radius(c, 4, &s)) return;
    } else if (flags & RADIUS_MEMBER) {
        base = 5;
        if (o) {
            double score;
            if (!zobj_score(o, c->argv[2], c->argl[2], &score)) {
                reply_error(c, "ERR could not decode requested zset member");
                return;
            }
            geo_decode_score(score, s.xy);
            if (!arg_radius(c, 3, &s)) return;
        }
    } else {
        base = 2;
        if (flags & GEOSEARCHSTORE) {
            base = 3;
            store = 1;
        }
    }
    int withdist = 0, withhash = 0, withcoord = 0, frommember = 0, fromloc = 0, byradius = 0, bybox = 0;
    int sort = SORT_NONE, any = 0;
    long long count = 0;
    int rest = c->argc - base;
    for (int i = 0; i < rest; i++) {
        int a = base + i;
        if (arg_is(c, a, "withdist")) {
            withdist = 1;
        } else if (arg_is(c, a, "withhash")) {
            withhash = 1;
        } else if (arg_is(c, a, "withcoord")) {
            withcoord = 1;
        } else if (arg_is(c, a, "any")) {
            any = 1;
        } else if (arg_is(c, a, "asc")) {
            sort = SORT_ASC;
        } else if (arg_is(c, a, "desc")) {
            sort = SORT_DESC;
        } else if (arg_is(c, a, "count") && i + 1 < rest) {
            if (!arg_ll(c, a + 1, &count)) return;
            if (count <= 0) {
                reply_error(c, "ERR COUNT must be > 0");
                return;
            }
            i++;
        } else if ((arg_is(c, a, "store") || arg_is(c, a, "storedist")) && i + 1 < rest &&
                   !(flags & (RADIUS_NOSTORE | GEOSEARCH))) {
            store = a + 1;
            storedist = arg_is(c, a, "storedist");
            i++;
        } else if (arg_is(c, a, "storedist") && (flags & GEOSEARCH) && (flags & GEOSEARCHSTORE)) {
            storedist = 1;
        } else if (arg_is(c, a, "frommember") && i + 1 < rest && (flags & GEOSEARCH) && !fromloc) {
            if (o) {
                double score;
                if (!zobj_score(o, c->argv[a + 1], c->argl[a + 1], &score)) {
                    reply_error(c, "ERR could not decode requested zset member");
                    return;
                }
                geo_decode_score(score, s.xy);
            }
            frommember = 1;
            i++;
        } else if (arg_is(c, a, "fromlonlat") && i + 2 < rest && (flags & GEOSEARCH) && !frommember) {
            if (!arg_lonlat(c, a + 1, s.xy)) return;
            fromloc = 1;
            i += 2;
        } else if (arg_is(c, a, "byradius") && i + 2 < rest && (flags & GEOSEARCH) && !bybox) {
            if (!arg_radius(c, a + 1, &s)) return;
            byradius = 1;
            i += 2;
        } else if (arg_is(c, a, "bybox") && i + 3 < rest && (flags & GEOSEARCH) && !byradius) {
            if (!arg_box(c, a + 1, &s)) return;
            bybox = 1;
            i += 3;
        } else {
            reply_status(c, ST_SYNTAX);
            return;
        }
    }
    if (store && (withdist || withhash || withcoord)) {
        reply_errorf(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                     (flags & GEOSEARCHSTORE) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return;
    }
    if ((flags & GEOSEARCH) && !(frommember || fromloc)) {
        reply_errorf(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %.*s", (int)c->argl[0],
                     c->argv[0]);
        return;
    }
    if ((flags & GEOSEARCH) && !(byradius || bybox)) {
        reply_errorf(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s", (int)c->argl[0],
                     c->argv[0]);
        return;
    }
    if (any && !count) {
        reply_error(c, "ERR the ANY argument requires COUNT argument");
        return;
    }
    if (!o) {
        if (store) zs_store(c, store, NULL);
        else reply_array(c, 0);
        return;
    }
    if (count && sort == SORT_NONE && !any) sort = SORT_ASC;

    geo_result r = {0};
    search(o, &s, any ? (size_t)count : 0, &r);
    if (r.n == 0 && !store) {
        reply_array(c, 0);
        goto out;
    }
    size_t n = count == 0 || r.n < (size_t)count ? r.n : (size_t)count;
    if (sort != SORT_NONE) sort_first(r.pts, r.n, n, sort == SORT_ASC ? by_dist_asc : by_dist_desc);
    if (!store) {
        int opts = withdist + withhash + withcoord;
        reply_array(c, (long long)n);
        for (size_t i = 0; i < n; i++) {
            geo_point *p = &r.pts[i];
            if (opts) reply_array(c, opts + 1);
            reply_bulk(c, r.arena + p->moff, p->mlen);
            if (withdist) reply_distance(c, p->dist / s.conversion);
            if (withhash) reply_int(c, (long long)p->score);
            if (withcoord) {
                reply_array(c, 2);
                reply_coord(c, p->lon);
                reply_coord(c, p->lat);
            }
        }
    } else {
        void *z = NULL;
        if (n) {
            z = zobj_new(0);
            for (size_t i = 0; i < n; i++) {
                geo_point *p = &r.pts[i];
                int fresh;
                z = zobj_set(z, r.arena + p->moff, p->mlen, storedist ? p->dist / s.conversion : p->score, &fresh);
            }
            z = zobj_fit(z);
        }
        zs_store(c, store, z);
    }
out:
    zfree(r.pts);
    zfree(r.arena);
}

static void georadius_cmd(cmd_ctx *c) { geo_search_cmd(c, 1, RADIUS_COORDS); }
static void georadius_ro_cmd(cmd_ctx *c) { geo_search_cmd(c, 1, RADIUS_COORDS | RADIUS_NOSTORE); }
static void georadiusbymember_cmd(cmd_ctx *c) { geo_search_cmd(c, 1, RADIUS_MEMBER); }
static void georadiusbymember_ro_cmd(cmd_ctx *c) { geo_search_cmd(c, 1, RADIUS_MEMBER | RADIUS_NOSTORE); }
static void geosearch_cmd(cmd_ctx *c) { geo_search_cmd(c, 1, GEOSEARCH); }
static void geosearchstore_cmd(cmd_ctx *c) { geo_search_cmd(c, 2, GEOSEARCH | GEOSEARCHSTORE); }

/* Keys of GEORADIUS (from 6) and GEORADIUSBYMEMBER (from 5): the source
 * and the last STORE/STOREDIST key. */
static int radius_keys_from(int from, int argc, const char **argv, const size_t *argl, int *pos, int max) {
    int n = 0;
    if (max > n) pos[n++] = 1;
    int k = store_key_index(argc, argv, argl, from);
    if (k && max > n) pos[n++] = k;
    return n;
}
static int georadius_keys(int argc, const char **argv, const size_t *argl, int *pos, int max) {
    return radius_keys_from(5, argc, argv, argl, pos, max);
}

#define GEO_ROW(nm, fn, ar, fl, f, l, sm, ver, ac, ...)                                                                \
    {                                                                                                                  \
        .name = nm, .proc = fn, .arity = ar, .flags = fl, .first = f, .last = l, .step = 1, .group = "geo",            \
        .since = ver, .acl = ac, .summary = sm, __VA_ARGS__                                                            \
    }
#define RO (CMD_READONLY)
#define RW (CMD_WRITE | CMD_DENYOOM)

static const command rows[] = {
    GEO_ROW("geoadd", geoadd_cmd, -5, RW, 1, 1,
            "Add one or more geospatial items in the geospatial index represented using a sorted set", "3.2.0",
            "write geo slow", .kflags = KS_RW | KS_UPDATE),
    GEO_ROW("geodist", geodist_cmd, -4, RO, 1, 1, "Returns the distance between two members of a geospatial index",
            "3.2.0", "read geo slow", .kflags = KS_RO | KS_ACCESS),
    GEO_ROW("geohash", geohash_cmd, -2, RO, 1, 1, "Returns members of a geospatial index as standard geohash strings",
            "3.2.0", "read geo slow", .kflags = KS_RO | KS_ACCESS),
    GEO_ROW("geopos", geopos_cmd, -2, RO, 1, 1, "Returns longitude and latitude of members of a geospatial index",
            "3.2.0", "read geo slow", .kflags = KS_RO | KS_ACCESS),
    GEO_ROW("geosearch", geosearch_cmd, -7, RO, 1, 1,
            "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
            "6.2.0", "read geo slow", .kflags = KS_RO | KS_ACCESS),
    GEO_ROW("geosearchstore", geosearchstore_cmd, -8, RW, 1, 2,
            "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a "
            "circle, and store the result in another key.",
            "6.2.0", "write geo slow",
            KEY_SPECS({KS_OW | KS_UPDATE, KS_INDEX(1), KS_RANGE(0, 1, 0)},
                      {KS_RO | KS_ACCESS, KS_INDEX(2), KS_RANGE(0, 1, 0)})),
    {.name = "georadius",
     KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_OW | KS_UPDATE, KS_KEYWORD("STORE", 6), KS_RANGE(0, 1, 0)},
               {KS_OW | KS_UPDATE, KS_KEYWORD("STOREDIST", 6), KS_RANGE(0, 1, 0)}),
     .proc = georadius_cmd,
     .arity = -6,
     .flags = RW | CMD_MOVABLEKEYS,
     .first = 1,
     .last = 1,
     .step = 1,
     .keys = georadius_keys,
     .group = "geo",
     .since = "3.2.0",
     .acl = "write geo slow",
     .summary = "Query a sorted set representing a geospatial index to fetch members matching a given maximum "
                "distance from a point"},
    GEO_ROW("georadius_ro", georadius_ro_cmd, -6, RO, 1, 1, "A read-only variant for GEORADIUS", "3.2.10",
            "read geo slow", .kflags = KS_RO | KS_ACCESS),
    {.name = "georadiusbymember",
     KEY_SPECS({KS_RO | KS_ACCESS, KS_INDEX(1), KS_RANGE(0, 1, 0)},
               {KS_OW | KS_UPDATE, KS_KEYWORD("STORE", 5), KS_RANGE(0, 1, 0)},
               {KS_OW | KS_UPDATE, KS_KEYWORD("STOREDIST", 5), KS_RANGE(0, 1, 0)}),
     .proc = georadiusbymember_cmd,
     .arity = -5,
     .flags = RW | CMD_MOVABLEKEYS,
     .first = 1,
     .last = 1,
     .step = 1,
     .keys = georadius_keys,
     .group = "geo",
     .since = "3.2.0",
     .acl = "write geo slow",
     .summary = "Query a sorted set representing a geospatial index to fetch members matching a given maximum "
                "distance from a member"},
    GEO_ROW("georadiusbymember_ro", georadiusbymember_ro_cmd, -5, RO, 1, 1, "A read-only variant for GEORADIUSBYMEMBER",
            "3.2.10", "read geo slow", .kflags = KS_RO | KS_ACCESS),
};

void geo_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
