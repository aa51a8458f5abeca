/* rdb_stream.c - streams in RDB files and DUMP payloads, as Redis 7.0
 * writes them (type 19, STREAM_LISTPACKS_2; type 15 of 5.0-6.2 is read too):
 *
 *   nodes(len) { master-id(str, 16 bytes BE) listpack(str) }*
 *   length(len) last-id(ms len, seq len)
 *   [v2] first-id(2 len) max-deleted-id(2 len) entries-added(len)
 *   groups(len) { name(str) last-id(2 len) [v2] entries-read(len)
 *                 pel(len) { id(16 raw BE) delivery-time(8 LE) count(len) }*
 *                 consumers(len) { name(str) seen-time(8 LE)
 *                                  pel(len) { id(16 raw BE) }* }* }*
 *
 * Nodes are the listpacks the stream keeps (core/stream.h), written as they
 * are. The reader trusts nothing: every node passes stream_node_check (the
 * deep rules of Redis's streamValidateListpackIntegrity plus strictly
 * increasing IDs), node masters increase, the length matches the live
 * entries, no entry is past last-id, PELs are sorted without duplicates,
 * every consumer's entry is in its group's PEL once, and every group entry
 * has an owner. Anything else is RDB_EFORMAT. */
#include "core/stream.h"
#include "lib/mem.h"
#include "persist/rdb.h"
#include <string.h>

static void put_id_raw(buf *o, const sid *id) {
    uint8_t b[16];
    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t)(id->ms >> (56 - 8 * i));
        b[8 + i] = (uint8_t)(id->seq >> (56 - 8 * i));
    }
    buf_add(o, b, 16);
}

static void get_id_raw(const uint8_t *b, sid *id) {
    id->ms = id->seq = 0;
    for (int i = 0; i < 8; i++) {
        id->ms = (id->ms << 8) | b[i];
        id->seq = (id->seq << 8) | b[8 + i];
    }
}

static void put_ms(buf *o, int64_t t) {
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)t >> (8 * i));
    buf_add(o, b, 8);
}

static void put_id(buf *o, const sid *id) {
    rdb_put_len(o, id->ms);
    rdb_put_len(o, id->seq);
}

void rdb_put_stream(buf *o, const void *obj) {
    const stream *s = obj;
    rdb_put_len(o, s->nodes.len);
    for (size_t i = 0; i < s->nodes.len; i++) {
        const sidx_item *it = sidx_at(&s->nodes, i);
        buf key = {0};
        put_id_raw(&key, &it->id);
        rdb_put_str(o, key.p, 16);
        buf_free(&key);
        rdb_put_str(o, (const char *)it->p, lpk_bytes(it->p));
    }
    rdb_put_len(o, s->length);
    put_id(o, &s->last_id);
    put_id(o, &s->first_id);
    put_id(o, &s->max_deleted);
    rdb_put_len(o, s->entries_added);
    rdb_put_len(o, s->ngroups);
    for (size_t g = 0; g < s->ngroups; g++) {
        const cgroup *cg = s->groups[g];
        rdb_put_str(o, cg->name, cg->nlen);
        put_id(o, &cg->last_id);
        rdb_put_len(o, (uint64_t)cg->entries_read);
        rdb_put_len(o, cg->pel.len);
        for (size_t k = 0; k < cg->pel.len; k++) {
            const sidx_item *it = sidx_at(&cg->pel, k);
            const nack *n = it->p;
            put_id_raw(o, &it->id);
            put_ms(o, n->delivery_time);
            rdb_put_len(o, n->delivery_count);
        }
        rdb_put_len(o, cg->ncons);
        for (size_t k = 0; k < cg->ncons; k++) {
            const consumer *c = cg->cons[k];
            rdb_put_str(o, c->name, c->nlen);
            put_ms(o, c->seen_time);
            rdb_put_len(o, c->pel.len);
            for (size_t m = 0; m < c->pel.len; m++) put_id_raw(o, &sidx_at(&c->pel, m)->id);
        }
    }
}

static int get_id(rdb_in *in, sid *id) {
    int st = rdb_get_len(in, &id->ms);
    return st ? st : rdb_get_len(in, &id->seq);
}

static int get_ms(rdb_in *in, int64_t *t) {
    const uint8_t *p;
    int st = rdb_get_bytes(in, 8, &p);
    if (st) return st;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    *t = (int64_t)v;
    return RDB_OK;
}

/* A count of records at least min bytes each (never more than the input holds). */
static int get_count(rdb_in *in, uint64_t *n, size_t min) {
    int st = rdb_get_len(in, n);
    if (st) return st;
    return *n > (in->n - in->pos) / min ? RDB_ESHORT : RDB_OK;
}

static int read_nodes(rdb_in *in, stream *s, sid *prev, uint64_t *live) {
    uint64_t n;
    int st = get_count(in, &n, 2);
    if (st) return st;
    for (uint64_t i = 0; i < n; i++) {
        rdb_str k, v;
        if ((st = rdb_get_str(in, &k))) return st;
        if (k.len != 16) {
            rdb_str_free(&k);
            return RDB_EFORMAT;
        }
        sid master;
        get_id_raw((const uint8_t *)k.s, &master);
        rdb_str_free(&k);
        if (s->nodes.len && sid_cmp(&master, prev) <= 0) return RDB_EFORMAT;
        if ((st = rdb_get_str(in, &v))) return st;
        if (stream_node_check((const lpk *)v.s, v.len, &master, prev, live) < 0) {
            rdb_str_free(&v);
            return RDB_EFORMAT;
        }
        lpk *lp = zmalloc(v.len);
        memcpy(lp, v.s, v.len);
        rdb_str_free(&v);
        stream_add_node(s, &master, lp);
    }
    return RDB_OK;
}

static int read_group(rdb_in *in, stream *s, int v2) {
    rdb_str name;
    sid last;
    uint64_t er = 0, npel, ncons;
    int st = rdb_get_str(in, &name);
    if (st) return st;
    if ((st = get_id(in, &last)) || (v2 && (st = rdb_get_len(in, &er)))) {
        rdb_str_free(&name);
        return st;
    }
    long long entries_read = v2 ? (long long)er : stream_estimate_read(s, &last);
    if (entries_read < CG_NO_ENTRIES_READ) entries_read = CG_NO_ENTRIES_READ;
    cgroup *g = stream_group_add(s, name.s, name.len, &last, entries_read);
    rdb_str_free(&name);
    if (!g) return RDB_EFORMAT; /* duplicate group */
    if ((st = get_count(in, &npel, 17))) return st;
    for (uint64_t i = 0; i < npel; i++) {
        const uint8_t *raw;
        sid id;
        nack *k;
        if ((st = rdb_get_bytes(in, 16, &raw))) return st;
        get_id_raw(raw, &id);
        if (g->pel.len && sid_cmp(&id, &sidx_at(&g->pel, g->pel.len - 1)->id) <= 0) return RDB_EFORMAT;
        k = zcalloc(sizeof *k);
        sidx_insert(&g->pel, g->pel.len, &id, k);
        if ((st = get_ms(in, &k->delivery_time)) || (st = rdb_get_len(in, &k->delivery_count))) return st;
    }
    if ((st = get_count(in, &ncons, 10))) return st;
    for (uint64_t i = 0; i < ncons; i++) {
        rdb_str cn;
        int64_t seen;
        uint64_t np;
        if ((st = rdb_get_str(in, &cn))) return st;
        consumer *c = cg_consumer_add(g, cn.s, cn.len, 0);
        rdb_str_free(&cn);
        if (!c) return RDB_EFORMAT; /* duplicate consumer */
        if ((st = get_ms(in, &seen))) return st;
        c->seen_time = seen;
        if ((st = get_count(in, &np, 16))) return st;
        for (uint64_t m = 0; m < np; m++) {
            const uint8_t *raw;
            sid id;
            if ((st = rdb_get_bytes(in, 16, &raw))) return st;
            get_id_raw(raw, &id);
            nack *k = sidx_get(&g->pel, &id);
            if (!k || k->consumer) return RDB_EFORMAT; /* not in the group's PEL, or owned twice */
            if (c->pel.len && sid_cmp(&id, &sidx_at(&c->pel, c->pel.len - 1)->id) <= 0) return RDB_EFORMAT;
            k->consumer = c;
            sidx_insert(&c->pel, c->pel.len, &id, k);
        }
    }
    for (size_t i = 0; i < g->pel.len; i++)
        if (!((nack *)sidx_at(&g->pel, i)->p)->consumer) return RDB_EFORMAT; /* an entry nobody owns */
    return RDB_OK;
}

int rdb_read_stream(rdb_in *in, int v2, void **obj) {
    stream *s = stream_new();
    sid prev = {0, 0};
    uint64_t live = 0, length, ngroups;
    int st = read_nodes(in, s, &prev, &live);
    if (!st) st = rdb_get_len(in, &length);
    if (!st) st = get_id(in, &s->last_id);
    if (!st && v2) {
        if (!(st = get_id(in, &s->first_id)) && !(st = get_id(in, &s->max_deleted)))
            st = rdb_get_len(in, &s->entries_added);
    }
    if (!st && (length != live || (s->nodes.len && sid_cmp(&prev, &s->last_id) > 0))) st = RDB_EFORMAT;
    if (!st) {
        s->length = length;
        if (!v2) {
            s->entries_added = length;
            if (!stream_first(s, &s->first_id)) s->first_id = (sid){0, 0};
        }
        st = get_count(in, &ngroups, 4);
    }
    for (uint64_t i = 0; !st && i < ngroups; i++) st = read_group(in, s, v2);
    if (st) {
        stream_free(s);
        return st;
    }
    *obj = s;
    return RDB_OK;
}
