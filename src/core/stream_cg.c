/* stream_cg.c - consumer groups of a stream (see stream.h): groups and
 * consumers in arrays sorted by name (byte order, as Redis's rax lists
 * them), pending entries in sorted vectors, and the lag arithmetic of
 * Redis 7.0. */
#include "core/stream.h"
#include "lib/mem.h"
#include <string.h>

static int name_cmp(const char *a, size_t al, const char *b, size_t bl) {
    int c = memcmp(a, b, al < bl ? al : bl);
    if (c) return c;
    return al < bl ? -1 : al > bl;
}

/* Lower bound of name in an array of objects whose name/nlen we read
 * through get. */
#define LOWER(arr, n_, key_, kl_, out)                                                                                   \
    do {                                                                                                               \
        size_t lo_ = 0, hi_ = (n_);                                                                                     \
        while (lo_ < hi_) {                                                                                            \
            size_t mid_ = lo_ + (hi_ - lo_) / 2;                                                                       \
            if (name_cmp((arr)[mid_]->name, (arr)[mid_]->nlen, key_, kl_) < 0) lo_ = mid_ + 1;                         \
            else hi_ = mid_;                                                                                           \
        }                                                                                                              \
        (out) = lo_;                                                                                                   \
    } while (0)

static void ptr_insert(void ***arr, size_t *n, size_t *cap, size_t at, void *p) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *arr = zrealloc(*arr, *cap * sizeof(void *));
    }
    memmove(*arr + at + 1, *arr + at, (*n - at) * sizeof(void *));
    (*arr)[at] = p;
    (*n)++;
}

static void ptr_remove(void **arr, size_t *n, size_t at) {
    memmove(arr + at, arr + at + 1, (*n - at - 1) * sizeof(void *));
    (*n)--;
}

cgroup *stream_group(const stream *s, const char *name, size_t nl) {
    size_t i;
    LOWER(s->groups, s->ngroups, name, nl, i);
    if (i < s->ngroups && name_cmp(s->groups[i]->name, s->groups[i]->nlen, name, nl) == 0) return s->groups[i];
    return NULL;
}

cgroup *stream_group_add(stream *s, const char *name, size_t nl, const sid *last, long long entries_read) {
    size_t i;
    LOWER(s->groups, s->ngroups, name, nl, i);
    if (i < s->ngroups && name_cmp(s->groups[i]->name, s->groups[i]->nlen, name, nl) == 0) return NULL;
    cgroup *g = zcalloc(sizeof *g + nl + 1);
    g->last_id = *last;
    g->entries_read = entries_read;
    g->nlen = nl;
    memcpy(g->name, name, nl);
    ptr_insert((void ***)&s->groups, &s->ngroups, &s->capgroups, i, g);
    return g;
}

static void consumer_free(consumer *c) {
    sidx_free(&c->pel);
    zfree(c);
}

static void group_free(cgroup *g) {
    for (size_t i = 0; i < g->pel.len; i++) zfree(sidx_at(&g->pel, i)->p);
    sidx_free(&g->pel);
    for (size_t i = 0; i < g->ncons; i++) consumer_free(g->cons[i]);
    zfree(g->cons);
    zfree(g);
}

int stream_group_del(stream *s, const char *name, size_t nl) {
    size_t i;
    LOWER(s->groups, s->ngroups, name, nl, i);
    if (i >= s->ngroups || name_cmp(s->groups[i]->name, s->groups[i]->nlen, name, nl) != 0) return 0;
    group_free(s->groups[i]);
    ptr_remove((void **)s->groups, &s->ngroups, i);
    return 1;
}

void stream_cg_free_all(stream *s) {
    for (size_t i = 0; i < s->ngroups; i++) group_free(s->groups[i]);
    zfree(s->groups);
    s->groups = NULL;
    s->ngroups = s->capgroups = 0;
}

consumer *cg_consumer(const cgroup *g, const char *name, size_t nl) {
    size_t i;
    LOWER(g->cons, g->ncons, name, nl, i);
    if (i < g->ncons && name_cmp(g->cons[i]->name, g->cons[i]->nlen, name, nl) == 0) return g->cons[i];
    return NULL;
}

consumer *cg_consumer_add(cgroup *g, const char *name, size_t nl, int64_t now) {
    size_t i;
    LOWER(g->cons, g->ncons, name, nl, i);
    if (i < g->ncons && name_cmp(g->cons[i]->name, g->cons[i]->nlen, name, nl) == 0) return NULL;
    consumer *c = zcalloc(sizeof *c + nl + 1);
    c->seen_time = now;
    c->nlen = nl;
    memcpy(c->name, name, nl);
    ptr_insert((void ***)&g->cons, &g->ncons, &g->capcons, i, c);
    return c;
}

size_t cg_consumer_del(cgroup *g, consumer *c) {
    size_t n = c->pel.len;
    for (size_t i = 0; i < c->pel.len; i++) {
        sid id = sidx_at(&c->pel, i)->id;
        zfree(sidx_del(&g->pel, &id));
    }
    size_t i;
    LOWER(g->cons, g->ncons, c->name, c->nlen, i);
    ptr_remove((void **)g->cons, &g->ncons, i);
    consumer_free(c);
    return n;
}

void cg_pel_remove(cgroup *g, const sid *id) {
    nack *n = sidx_del(&g->pel, id);
    if (!n) return;
    if (n->consumer) sidx_del(&n->consumer->pel, id);
    zfree(n);
}

stream *stream_cg_dup_into(const stream *s, stream *d) {
    for (size_t i = 0; i < s->ngroups; i++) {
        const cgroup *g = s->groups[i];
        cgroup *ng = stream_group_add(d, g->name, g->nlen, &g->last_id, g->entries_read);
        for (size_t k = 0; k < g->ncons; k++) {
            consumer *c = cg_consumer_add(ng, g->cons[k]->name, g->cons[k]->nlen, g->cons[k]->seen_time);
            (void)c;
        }
        for (size_t k = 0; k < g->pel.len; k++) {
            const sidx_item *it = sidx_at(&g->pel, k);
            const nack *on = it->p;
            nack *nn = zmalloc(sizeof *nn);
            *nn = *on;
            nn->consumer = on->consumer ? cg_consumer(ng, on->consumer->name, on->consumer->nlen) : NULL;
            sidx_insert(&ng->pel, ng->pel.len, &it->id, nn);
            if (nn->consumer) sidx_insert(&nn->consumer->pel, nn->consumer->pel.len, &it->id, nn);
        }
    }
    return d;
}

size_t stream_cg_mem(const stream *s) {
    size_t n = s->groups ? zmalloc_size(s->groups) : 0;
    for (size_t i = 0; i < s->ngroups; i++) {
        const cgroup *g = s->groups[i];
        n += zmalloc_size(g) + (g->pel.a ? zmalloc_size(g->pel.a) : 0) + g->pel.len * sizeof(nack);
        for (size_t k = 0; k < g->ncons; k++)
            n += zmalloc_size(g->cons[k]) + (g->cons[k]->pel.a ? zmalloc_size(g->cons[k]->pel.a) : 0);
    }
    return n;
}

/* ---- lag (Redis 7.0's streamEstimateDistanceFromFirstEverEntry and friends) ---- */

long long stream_estimate_read(const stream *s, const sid *id) {
    if (!s->entries_added) return 0;
    if (!s->length && sid_cmp(id, &s->last_id) < 1) return (long long)s->entries_added;
    int cmp_last = sid_cmp(id, &s->last_id);
    if (cmp_last == 0) return (long long)s->entries_added;
    if (cmp_last > 0) return CG_NO_ENTRIES_READ;
    int cmp_id_first = sid_cmp(id, &s->first_id);
    int cmp_xdel_first = sid_cmp(&s->max_deleted, &s->first_id);
    if (sid_zero(&s->max_deleted) || cmp_xdel_first < 0) {
        if (cmp_id_first < 0) return (long long)(s->entries_added - s->length);
        if (cmp_id_first == 0) return (long long)(s->entries_added - s->length + 1);
    }
    return CG_NO_ENTRIES_READ;
}

int stream_range_has_tombstones(const stream *s, const sid *start, const sid *end) {
    if (!s->length || sid_zero(&s->max_deleted)) return 0;
    if (sid_cmp(&s->first_id, &s->max_deleted) > 0) return 0;
    sid a = start ? *start : (sid){0, 0}, b = end ? *end : (sid){UINT64_MAX, UINT64_MAX};
    return sid_cmp(&a, &s->max_deleted) <= 0 && sid_cmp(&s->max_deleted, &b) <= 0;
}

int stream_cg_lag(const stream *s, const cgroup *g, long long *lag) {
    if (!s->entries_added) {
        *lag = 0;
        return 1;
    }
    if (g->entries_read != CG_NO_ENTRIES_READ && !stream_range_has_tombstones(s, &g->last_id, NULL)) {
        *lag = (long long)s->entries_added - g->entries_read;
        return 1;
    }
    long long r = stream_estimate_read(s, &g->last_id);
    if (r == CG_NO_ENTRIES_READ) return 0;
    *lag = (long long)s->entries_added - r;
    return 1;
}
