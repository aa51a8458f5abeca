/* stream.c - see stream.h: IDs, the sorted vector, nodes, iteration,
 * deletion and trimming. Consumer groups are in stream_cg.c. */
#include "core/stream.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <string.h>

#define LP_MAX_SIZE (1u << 30) /* a node never grows past this (Redis's STREAM_LISTPACK_MAX_SIZE) */

/* ---- IDs ---- */

int sid_incr(sid *id) {
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX) return -1;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return 0;
}

int sid_decr(sid *id) {
    if (id->seq == 0) {
        if (id->ms == 0) return -1;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return 0;
}

int sid_fmt(char *buf, const sid *id) {
    int n = ull2str(buf, id->ms);
    buf[n++] = '-';
    return n + ull2str(buf + n, id->seq);
}

/* ---- the sorted vector ---- */

size_t sidx_lower(const sidx *x, const sid *id) {
    size_t lo = 0, hi = x->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sid_cmp(&sidx_at(x, mid)->id, id) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void *sidx_get(const sidx *x, const sid *id) {
    size_t i = sidx_lower(x, id);
    return i < x->len && sid_cmp(&sidx_at(x, i)->id, id) == 0 ? sidx_at(x, i)->p : NULL;
}

void sidx_insert(sidx *x, size_t i, const sid *id, void *p) {
    size_t sz = sizeof(sidx_item);
    if (x->head > 0 && (i < x->len / 2 || x->head + x->len == x->cap)) {
        memmove(x->a + x->head - 1, x->a + x->head, i * sz);
        x->head--;
    } else {
        if (x->head + x->len == x->cap) {
            x->cap = x->cap ? x->cap * 2 : 4;
            x->a = zrealloc(x->a, x->cap * sz);
        }
        memmove(x->a + x->head + i + 1, x->a + x->head + i, (x->len - i) * sz);
    }
    x->a[x->head + i].id = *id;
    x->a[x->head + i].p = p;
    x->len++;
}

void sidx_remove(sidx *x, size_t i) {
    size_t sz = sizeof(sidx_item);
    if (i < x->len / 2) {
        memmove(x->a + x->head + 1, x->a + x->head, i * sz);
        x->head++;
    } else {
        memmove(x->a + x->head + i, x->a + x->head + i + 1, (x->len - i - 1) * sz);
    }
    x->len--;
    if (x->len == 0) x->head = 0;
    if (x->cap > 16 && x->len < x->cap / 8) { /* compact */
        memmove(x->a, x->a + x->head, x->len * sz);
        x->head = 0;
        x->cap /= 2;
        x->a = zrealloc(x->a, x->cap * sz);
    }
}

void *sidx_del(sidx *x, const sid *id) {
    size_t i = sidx_lower(x, id);
    if (i >= x->len || sid_cmp(&sidx_at(x, i)->id, id) != 0) return NULL;
    void *p = sidx_at(x, i)->p;
    sidx_remove(x, i);
    return p;
}

void sidx_free(sidx *x) {
    zfree(x->a);
    memset(x, 0, sizeof *x);
}

/* ---- the value ---- */

stream *stream_new(void) { return zcalloc(sizeof(stream)); }

void stream_cg_free_all(stream *s); /* stream_cg.c */

void stream_free(stream *s) {
    if (!s) return;
    for (size_t i = 0; i < s->nodes.len; i++) zfree(sidx_at(&s->nodes, i)->p);
    sidx_free(&s->nodes);
    stream_cg_free_all(s);
    zfree(s);
}

stream *stream_cg_dup_into(const stream *s, stream *d); /* stream_cg.c */

stream *stream_dup(const stream *s) {
    stream *d = stream_new();
    *d = *s;
    memset(&d->nodes, 0, sizeof d->nodes);
    d->groups = NULL;
    d->ngroups = d->capgroups = 0;
    for (size_t i = 0; i < s->nodes.len; i++) {
        const sidx_item *it = sidx_at(&s->nodes, i);
        size_t n = lpk_bytes(it->p);
        lpk *c = zmalloc(n);
        memcpy(c, it->p, n);
        sidx_insert(&d->nodes, i, &it->id, c);
    }
    return stream_cg_dup_into(s, d);
}

size_t stream_cg_mem(const stream *s); /* stream_cg.c */

size_t stream_mem(const stream *s) {
    size_t n = zmalloc_size(s) + (s->nodes.a ? zmalloc_size(s->nodes.a) : 0);
    for (size_t i = 0; i < s->nodes.len; i++) n += zmalloc_size(sidx_at(&s->nodes, i)->p);
    return n + stream_cg_mem(s);
}

/* ---- nodes ---- */

/* Master entry of lp: counts and the position of its first field; returns
 * the position of the node's first entry (0 when none). */
static size_t master_parse(const lpk *l, long long *count, long long *deleted, long long *nf, size_t *fields) {
    size_t p = lpk_first(l);
    *count = lpk_get_int(l, p);
    p = lpk_next(l, p);
    *deleted = lpk_get_int(l, p);
    p = lpk_next(l, p);
    *nf = lpk_get_int(l, p);
    p = lpk_next(l, p);
    *fields = p;
    for (long long i = 0; i < *nf; i++) p = lpk_next(l, p);
    return lpk_next(l, p); /* past the 0 terminator */
}

/* The index of the node that would hold id: the last with master <= id
 * (0 when id is before every node). */
static size_t node_for(const stream *s, const sid *id) {
    size_t i = sidx_lower(&s->nodes, id);
    if (i < s->nodes.len && sid_cmp(&sidx_at(&s->nodes, i)->id, id) == 0) return i;
    return i ? i - 1 : 0;
}

/* An entry header at p: flags, ID, fields; returns the position of its first
 * field or value, and *next the position of the next entry (0: none). */
static size_t entry_parse(const lpk *l, size_t p, const sid *master, long long nmaster, int *flags, sid *id,
                          long long *nf, size_t *next) {
    *flags = (int)lpk_get_int(l, p);
    p = lpk_next(l, p);
    id->ms = master->ms + (uint64_t)lpk_get_int(l, p);
    p = lpk_next(l, p);
    id->seq = master->seq + (uint64_t)lpk_get_int(l, p);
    p = lpk_next(l, p);
    long long skip;
    if (*flags & SE_SAMEFIELDS) {
        *nf = nmaster;
        skip = nmaster;
    } else {
        *nf = lpk_get_int(l, p);
        p = lpk_next(l, p);
        skip = *nf * 2;
    }
    size_t first = p, q = p;
    for (long long i = 0; i < skip; i++) q = lpk_next(l, q);
    *next = lpk_next(l, q); /* past lp-count */
    return first;
}

static int same_fields(const lpk *l, size_t mf, long long nm, const char *const *argv, const size_t *argl, int n) {
    if (nm != n) return 0;
    char tmp[LPK_INTBUF];
    for (int i = 0; i < n; i++, mf = lpk_next(l, mf)) {
        size_t fl;
        const char *f = lpk_get_str(l, mf, tmp, &fl);
        if (fl != argl[2 * i] || memcmp(f, argv[2 * i], fl)) return 0;
    }
    return 1;
}

void stream_append(stream *s, const sid *id, const char *const *argv, const size_t *argl, int npairs,
                   size_t max_bytes, long long max_entries) {
    size_t total = 0;
    for (int i = 0; i < 2 * npairs; i++) total += argl[i];
    if (max_bytes == 0 || max_bytes > LP_MAX_SIZE) max_bytes = LP_MAX_SIZE;
    lpk *l = NULL;
    size_t ni = 0;
    if (s->nodes.len) {
        ni = s->nodes.len - 1;
        l = sidx_at(&s->nodes, ni)->p;
        long long cnt, del, nm;
        size_t mf;
        master_parse(l, &cnt, &del, &nm, &mf);
        if (lpk_bytes(l) + total >= max_bytes || (max_entries > 0 && cnt + del >= max_entries)) l = NULL;
    }
    sid master;
    size_t need = 0;
    uint8_t stackb[512], *b = stackb;
    int flags = 0;
    if (!l) { /* a new node: the master entry takes this entry's fields */
        master = *id;
        need = lpk_int_size(1) + lpk_int_size(0) + lpk_int_size(npairs) + lpk_int_size(0);
        for (int i = 0; i < npairs; i++) need += lpk_str_size(argv[2 * i], argl[2 * i]);
        flags = SE_SAMEFIELDS;
    } else {
        master = sidx_at(&s->nodes, ni)->id;
        long long cnt, del, nm;
        size_t mf;
        master_parse(l, &cnt, &del, &nm, &mf);
        if (same_fields(l, mf, nm, argv, argl, npairs)) flags = SE_SAMEFIELDS;
        sidx_at(&s->nodes, ni)->p = l = lpk_replace_int(l, lpk_first(l), cnt + 1);
    }
    int64_t dms = (int64_t)(id->ms - master.ms), dseq = (int64_t)(id->seq - master.seq);
    long long lpcount = 3 + npairs + (flags & SE_SAMEFIELDS ? 0 : npairs + 1);
    need += lpk_int_size(flags) + lpk_int_size(dms) + lpk_int_size(dseq) + lpk_int_size(lpcount);
    if (!(flags & SE_SAMEFIELDS)) need += lpk_int_size(npairs);
    for (int i = 0; i < 2 * npairs; i++)
        if ((flags & SE_SAMEFIELDS) == 0 || (i & 1)) need += lpk_str_size(argv[i], argl[i]);
    if (need > sizeof stackb) b = zmalloc(need);
    size_t w = 0;
    unsigned nelem = 0;
    if (!l) {
        w += lpk_put_int(b + w, 1);
        w += lpk_put_int(b + w, 0);
        w += lpk_put_int(b + w, npairs);
        for (int i = 0; i < npairs; i++) w += lpk_put_str(b + w, argv[2 * i], argl[2 * i]);
        w += lpk_put_int(b + w, 0);
        nelem += 4 + (unsigned)npairs;
    }
    w += lpk_put_int(b + w, flags);
    w += lpk_put_int(b + w, dms);
    w += lpk_put_int(b + w, dseq);
    nelem += 3;
    if (!(flags & SE_SAMEFIELDS)) {
        w += lpk_put_int(b + w, npairs);
        nelem++;
    }
    for (int i = 0; i < 2 * npairs; i++) {
        if ((flags & SE_SAMEFIELDS) && !(i & 1)) continue;
        w += lpk_put_str(b + w, argv[i], argl[i]);
        nelem++;
    }
    w += lpk_put_int(b + w, lpcount);
    nelem++;
    if (!l) {
        l = lpk_append_raw(lpk_new(), b, w, nelem);
        sidx_insert(&s->nodes, s->nodes.len, &master, l);
    } else {
        sidx_at(&s->nodes, ni)->p = lpk_append_raw(l, b, w, nelem);
    }
    if (b != stackb) zfree(b);
    if (s->length == 0) s->first_id = *id;
    s->length++;
    s->entries_added++;
    s->last_id = *id;
}

/* Finds the live entry id: its node index and flags position; 0 if none. */
static size_t find_entry(const stream *s, const sid *id, size_t *nodei) {
    if (!s->nodes.len) return 0;
    size_t ni = node_for(s, id);
    const sidx_item *it = sidx_at(&s->nodes, ni);
    if (sid_cmp(&it->id, id) > 0) return 0;
    long long cnt, del, nm;
    size_t mf, p = master_parse(it->p, &cnt, &del, &nm, &mf);
    while (p) {
        int flags;
        sid e;
        long long nf;
        size_t next;
        entry_parse(it->p, p, &it->id, nm, &flags, &e, &nf, &next);
        int c = sid_cmp(&e, id);
        if (c > 0) return 0;
        if (c == 0) {
            if (flags & SE_DELETED) return 0;
            *nodei = ni;
            return p;
        }
        p = next;
    }
    return 0;
}

int stream_has(const stream *s, const sid *id) {
    size_t ni;
    return find_entry(s, id, &ni) != 0;
}

/* Marks the entry at p of node ni deleted and fixes the counts; frees the
 * node when no live entry is left. */
static void mark_deleted(stream *s, size_t ni, size_t p) {
    sidx_item *it = sidx_at(&s->nodes, ni);
    lpk *l = it->p;
    int flags = (int)lpk_get_int(l, p);
    l = lpk_replace_int(l, p, flags | SE_DELETED);
    size_t f = lpk_first(l);
    long long cnt = lpk_get_int(l, f), del = lpk_get_int(l, lpk_next(l, f));
    s->length--;
    if (cnt - 1 == 0) {
        zfree(l);
        sidx_remove(&s->nodes, ni);
        return;
    }
    l = lpk_replace_int(l, f, cnt - 1);
    l = lpk_replace_int(l, lpk_next(l, lpk_first(l)), del + 1);
    it->p = l;
}

int stream_delete(stream *s, const sid *id) {
    size_t ni, p = find_entry(s, id, &ni);
    if (!p) return 0;
    mark_deleted(s, ni, p);
    return 1;
}

int stream_first(const stream *s, sid *id) {
    stream_iter it;
    sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    long long nf;
    stream_iter_start(&it, s, &lo, &hi, 0);
    int r = stream_iter_next(&it, id, &nf);
    stream_iter_stop(&it);
    return r;
}

int stream_last(const stream *s, sid *id) {
    stream_iter it;
    sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    long long nf;
    stream_iter_start(&it, s, &lo, &hi, 1);
    int r = stream_iter_next(&it, id, &nf);
    stream_iter_stop(&it);
    return r;
}

static void update_first(stream *s) {
    if (s->length == 0 || !stream_first(s, &s->first_id)) s->first_id = (sid){0, 0};
}

long long stream_trim(stream *s, const trim_args *t) {
    if (t->strategy == TRIM_NONE) return 0;
    long long deleted = 0;
    while (s->nodes.len) {
        if (t->strategy == TRIM_MAXLEN && (long long)s->length <= t->maxlen) break;
        sidx_item *it = sidx_at(&s->nodes, 0);
        lpk *l = it->p;
        long long cnt, del, nm;
        size_t mf, p = master_parse(l, &cnt, &del, &nm, &mf);
        if (t->limit && deleted + cnt > t->limit) break;
        int remove;
        if (t->strategy == TRIM_MAXLEN) {
            remove = (long long)s->length - cnt >= t->maxlen;
        } else {
            sid last = it->id; /* the node's last entry, deleted or not */
            for (size_t q = p; q;) {
                int fl;
                long long nf;
                size_t next;
                entry_parse(l, q, &it->id, nm, &fl, &last, &nf, &next);
                q = next;
            }
            remove = sid_cmp(&last, &t->minid) < 0;
        }
        if (remove) {
            zfree(l);
            sidx_remove(&s->nodes, 0);
            s->length -= (uint64_t)cnt;
            deleted += cnt;
            continue;
        }
        if (t->approx) break;
        long long from_node = 0;
        while (p) {
            int fl;
            sid e;
            long long nf;
            size_t next;
            entry_parse(l, p, &it->id, nm, &fl, &e, &nf, &next);
            int stop = t->strategy == TRIM_MAXLEN ? (long long)s->length <= t->maxlen : sid_cmp(&e, &t->minid) >= 0;
            if (stop) break;
            if (!(fl & SE_DELETED)) {
                size_t off = next ? next - p : 0;
                size_t before = lpk_bytes(l);
                l = lpk_replace_int(l, p, fl | SE_DELETED);
                if (next) next = p + off + (lpk_bytes(l) - before);
                from_node++;
                s->length--;
            }
            p = next;
        }
        deleted += from_node;
        size_t f = lpk_first(l);
        l = lpk_replace_int(l, f, cnt - from_node);
        l = lpk_replace_int(l, lpk_next(l, lpk_first(l)), del + from_node);
        it->p = l;
        break;
    }
    update_first(s);
    return deleted;
}

/* ---- iteration ---- */

void stream_iter_start(stream_iter *it, const stream *s, const sid *start, const sid *end, int rev) {
    memset(it, 0, sizeof *it);
    it->s = s;
    it->start = *start;
    it->end = *end;
    it->rev = rev;
}

/* Opens node it->node: parses its master, sets the first entry to look at. */
static void open_node(stream_iter *it) {
    const sidx_item *n = sidx_at(&it->s->nodes, it->node);
    it->lp = n->p;
    it->master = n->id;
    long long cnt, del;
    it->cur = master_parse(it->lp, &cnt, &del, &it->nmaster, &it->master_fields);
    if (!it->rev) return;
    it->npos = 0;
    for (size_t p = it->cur; p;) {
        if (it->npos == it->cappos) {
            it->cappos = it->cappos ? it->cappos * 2 : 128;
            it->pos = zrealloc(it->pos, it->cappos * sizeof(size_t));
        }
        it->pos[it->npos++] = p;
        int fl;
        sid e;
        long long nf;
        entry_parse(it->lp, p, &it->master, it->nmaster, &fl, &e, &nf, &p);
    }
    it->posi = it->npos;
}

int stream_iter_next(stream_iter *it, sid *id, long long *nfields) {
    const stream *s = it->s;
    if (!s->nodes.len || sid_cmp(&it->start, &it->end) > 0) return 0;
    if (!it->started) {
        it->started = 1;
        it->node = node_for(s, it->rev ? &it->end : &it->start);
        open_node(it);
    }
    for (;;) {
        size_t p;
        if (!it->rev) {
            p = it->cur;
        } else {
            p = it->posi ? it->pos[--it->posi] : 0;
        }
        if (!p) { /* next node */
            if (!it->rev) {
                if (++it->node >= s->nodes.len) return 0;
                if (sid_cmp(&sidx_at(&s->nodes, it->node)->id, &it->end) > 0) return 0;
            } else {
                if (it->node == 0) return 0;
                it->node--;
            }
            open_node(it);
            continue;
        }
        int fl;
        sid e;
        long long nf;
        size_t next;
        size_t first = entry_parse(it->lp, p, &it->master, it->nmaster, &fl, &e, &nf, &next);
        if (!it->rev) it->cur = next;
        if (fl & SE_DELETED) continue;
        if (!it->rev) {
            if (sid_cmp(&e, &it->start) < 0) continue;
            if (sid_cmp(&e, &it->end) > 0) return 0;
        } else {
            if (sid_cmp(&e, &it->end) > 0) continue;
            if (sid_cmp(&e, &it->start) < 0) return 0;
        }
        it->same = (fl & SE_SAMEFIELDS) != 0;
        it->nfields = it->left = nf;
        it->fpos = it->same ? it->master_fields : first;
        it->vpos = first;
        *id = e;
        *nfields = nf;
        return 1;
    }
}

void stream_iter_field(stream_iter *it, const char **f, size_t *fl, const char **v, size_t *vl) {
    const lpk *l = it->lp;
    if (it->same) {
        *f = lpk_get_str(l, it->fpos, it->fbuf, fl);
        *v = lpk_get_str(l, it->vpos, it->vbuf, vl);
        it->fpos = lpk_next(l, it->fpos);
        it->vpos = lpk_next(l, it->vpos);
    } else {
        *f = lpk_get_str(l, it->fpos, it->fbuf, fl);
        size_t vp = lpk_next(l, it->fpos);
        *v = lpk_get_str(l, vp, it->vbuf, vl);
        it->fpos = lpk_next(l, vp);
    }
    it->left--;
}

void stream_iter_stop(stream_iter *it) {
    zfree(it->pos);
    it->pos = NULL;
}

/* ---- loading ---- */

void stream_add_node(stream *s, const sid *master, lpk *lp) { sidx_insert(&s->nodes, s->nodes.len, master, lp); }

/* The integer at p (a string must spell one); 0 when it is not. */
static int int_at(const lpk *l, size_t p, int64_t *v) {
    if (!p) return 0;
    lpv x;
    lpk_get(l, p, &x);
    if (!x.s) {
        *v = x.v;
        return 1;
    }
    long long y;
    if (!str2ll(x.s, x.len, &y)) return 0;
    *v = y;
    return 1;
}

int stream_node_check(const lpk *l, size_t n, const sid *master, sid *prev, uint64_t *live) {
    size_t count;
    if (lpk_validate(l, n, &count) < 0) return -1;
    size_t p = lpk_first(l);
    int64_t cnt, del, nm, zero;
    if (!int_at(l, p, &cnt)) return -1;
    p = lpk_next(l, p);
    if (!int_at(l, p, &del)) return -1;
    p = lpk_next(l, p);
    if (!int_at(l, p, &nm) || nm < 0 || (uint64_t)nm > count) return -1;
    p = lpk_next(l, p);
    for (int64_t i = 0; i < nm; i++) {
        if (!p) return -1;
        p = lpk_next(l, p);
    }
    if (!int_at(l, p, &zero) || zero != 0) return -1;
    p = lpk_next(l, p);
    if (cnt < 0 || del < 0 || cnt + del <= 0 || (uint64_t)(cnt + del) > count) return -1;
    int64_t nlive = 0, ndel = 0;
    for (int64_t k = 0; k < cnt + del; k++) {
        int64_t flags, dms, dseq, nf = nm, lpc;
        if (!int_at(l, p, &flags) || flags < 0 || flags > 3) return -1;
        p = lpk_next(l, p);
        if (!int_at(l, p, &dms)) return -1;
        p = lpk_next(l, p);
        if (!int_at(l, p, &dseq)) return -1;
        p = lpk_next(l, p);
        int64_t extra = 3;
        if (!(flags & SE_SAMEFIELDS)) {
            if (!int_at(l, p, &nf) || nf < 0 || (uint64_t)nf > count) return -1;
            p = lpk_next(l, p);
            for (int64_t j = 0; j < 2 * nf; j++) {
                if (!p) return -1;
                p = lpk_next(l, p);
            }
            extra += nf + 1;
        } else {
            for (int64_t j = 0; j < nf; j++) {
                if (!p) return -1;
                p = lpk_next(l, p);
            }
        }
        if (!int_at(l, p, &lpc) || lpc != nf + extra) return -1;
        p = lpk_next(l, p);
        sid e = {master->ms + (uint64_t)dms, master->seq + (uint64_t)dseq};
        if (k == 0 && sid_cmp(&e, master) < 0) return -1;
        if (sid_cmp(&e, prev) <= 0) return -1; /* IDs strictly increase; none is 0-0 */
        *prev = e;
        if (flags & SE_DELETED) ndel++;
        else nlive++;
    }
    if (p) return -1; /* bytes after the last entry */
    if (nlive != cnt || ndel != del) return -1;
    *live += (uint64_t)nlive;
    return 0;
}
