/* zindex.c - see zindex.h. A counted B+tree over element pointers.
 *
 *   height 0: root is a leaf.  Inner node: child[i] with cnt[i] elements,
 *   key[i] = first element of child[i] (so key[0] is the node's first).
 *   Every leaf is at depth height; leaves form a doubly linked list.
 *
 * Searches descend with a monotone predicate p (false ... false true ...
 * true in index order): in an inner node take the child before the first
 * key for which p holds; in the leaf the first slot for which it holds,
 * stepping to the next leaf when none does. The counts of the children
 * skipped give the rank on the way down.
 *
 * Insert splits full nodes in half, except a leaf taking a new first or
 * last element of the whole index, which splits off just that element (so
 * ascending or descending loads fill leaves completely). Delete merges a
 * node that dropped below half with a sibling when both fit in one node,
 * else evens the two out. Keys are refreshed on the way back up, so no
 * inner node ever points at a removed element. */
#include "core/zindex.h"
#include "lib/mem.h"

#define LEAF_CAP 61  /* 512-byte leaf */
#define INNER_CAP 42 /* 1016 bytes -> 1024-byte block */
#define LEAF_MIN (LEAF_CAP / 2)
#define INNER_MIN (INNER_CAP / 2)

typedef struct zleaf {
    struct zleaf *prev, *next;
    uint32_t n;
    smap_elem *e[LEAF_CAP];
} zleaf;

typedef struct zinner {
    uint32_t n;
    void *child[INNER_CAP];
    smap_elem *key[INNER_CAP];
    size_t cnt[INNER_CAP];
} zinner;

struct zindex {
    void *root; /* NULL when empty */
    zleaf *first, *last;
    size_t count;
    size_t node_bytes;
    int height;
};

/* ---- keys and predicates ---- */

typedef struct zkey {
    double score;
    const char *m;
    size_t ml;
} zkey;

typedef struct zpred {
    int (*fn)(const void *arg, const smap_elem *e);
    const void *arg;
} zpred;

static int bytes_cmp(const char *a, size_t al, const char *b, size_t bl) {
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return al < bl ? -1 : al > bl;
}

/* <0, 0, >0 as k sorts before, equal to, after e. */
static int key_cmp(const zkey *k, const smap_elem *e) {
    double s = zelem_score(e);
    if (k->score < s) return -1;
    if (k->score > s) return 1;
    size_t l;
    const char *m = zelem_member(e, &l);
    return bytes_cmp(k->m, k->ml, m, l);
}

static zkey key_of(const smap_elem *e) {
    zkey k;
    k.score = zelem_score(e);
    k.m = zelem_member(e, &k.ml);
    return k;
}

static int p_gt_key(const void *a, const smap_elem *e) { return key_cmp(a, e) < 0; }
static int p_ge_key(const void *a, const smap_elem *e) { return key_cmp(a, e) <= 0; }
static int p_score_ge(const void *a, const smap_elem *e) { return zelem_score(e) >= *(const double *)a; }
static int p_score_gt(const void *a, const smap_elem *e) { return zelem_score(e) > *(const double *)a; }

static int member_cmp(const smap_elem *e, const zlex_bound *b) {
    size_t l;
    const char *m = zelem_member(e, &l);
    return bytes_cmp(m, l, b->p, b->len);
}
/* e is not below the lower bound b. */
static int p_lex_in_min(const void *a, const smap_elem *e) {
    const zlex_bound *b = a;
    if (b->kind == ZLEX_MINUS) return 1;
    if (b->kind == ZLEX_PLUS) return 0;
    int c = member_cmp(e, b);
    return b->kind == ZLEX_INCL ? c >= 0 : c > 0;
}
/* e is above the upper bound b. */
static int p_lex_over_max(const void *a, const smap_elem *e) {
    const zlex_bound *b = a;
    if (b->kind == ZLEX_MINUS) return 1;
    if (b->kind == ZLEX_PLUS) return 0;
    int c = member_cmp(e, b);
    return b->kind == ZLEX_INCL ? c > 0 : c >= 0;
}

int zlex_parse(const char *s, size_t n, zlex_bound *out) {
    if (n == 0) return -1;
    out->p = s + 1;
    out->len = n - 1;
    switch (s[0]) {
    case '-':
        out->kind = ZLEX_MINUS;
        return n == 1 ? 0 : -1;
    case '+':
        out->kind = ZLEX_PLUS;
        return n == 1 ? 0 : -1;
    case '[':
        out->kind = ZLEX_INCL;
        return 0;
    case '(':
        out->kind = ZLEX_EXCL;
        return 0;
    default:
        return -1;
    }
}

/* ---- nodes ---- */

static zleaf *leaf_new(zindex *z) {
    zleaf *l = zmalloc(sizeof *l);
    l->prev = l->next = NULL;
    l->n = 0;
    z->node_bytes += zmalloc_size(l);
    return l;
}

static zinner *inner_new(zindex *z) {
    zinner *in = zmalloc(sizeof *in);
    in->n = 0;
    z->node_bytes += zmalloc_size(in);
    return in;
}

static void node_free(zindex *z, void *n) {
    z->node_bytes -= zmalloc_size(n);
    zfree(n);
}

static uint32_t node_n(const void *n, int h) { return h ? ((const zinner *)n)->n : ((const zleaf *)n)->n; }
static smap_elem *node_min(const void *n, int h) { return h ? ((const zinner *)n)->key[0] : ((const zleaf *)n)->e[0]; }
static size_t node_count(const void *n, int h) {
    if (!h) return ((const zleaf *)n)->n;
    const zinner *in = n;
    size_t s = 0;
    for (uint32_t i = 0; i < in->n; i++)
        s += in->cnt[i];
    return s;
}

/* The child before the first key (from 1) for which p holds. */
static uint32_t inner_pick(const zinner *in, const zpred *p) {
    uint32_t lo = 1, hi = in->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (p->fn(p->arg, in->key[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo - 1;
}

/* The first slot for which p holds, n when none does. */
static uint32_t leaf_pick(const zleaf *l, const zpred *p) {
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (p->fn(p->arg, l->e[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Position of the first element for which p holds (or the end); returns
 * how many elements precede it. */
static size_t lower_bound(const zindex *z, const zpred *p, zpos *pos) {
    pos->leaf = NULL;
    pos->i = 0;
    if (!z->root) return 0;
    size_t rank = 0;
    const void *node = z->root;
    for (int h = z->height; h > 0; h--) {
        const zinner *in = node;
        uint32_t c = inner_pick(in, p);
        for (uint32_t j = 0; j < c; j++)
            rank += in->cnt[j];
        node = in->child[c];
    }
    zleaf *l = (zleaf *)node;
    uint32_t j = leaf_pick(l, p);
    rank += j;
    if (j == l->n) {
        l = l->next;
        j = 0;
    }
    pos->leaf = l;
    pos->i = j;
    return rank;
}

/* ---- create / free ---- */

zindex *zindex_create(void) {
    zindex *z = zcalloc(sizeof *z);
    return z;
}

static void free_tree(zindex *z, void *n, int h) {
    if (h) {
        zinner *in = n;
        for (uint32_t i = 0; i < in->n; i++)
            free_tree(z, in->child[i], h - 1);
    }
    node_free(z, n);
}

void zindex_free(zindex **zp) {
    zindex *z = *zp;
    if (!z) return;
    if (z->root) free_tree(z, z->root, z->height);
    zfree(z);
    *zp = NULL;
}

size_t zindex_size(const zindex *z) { return z->count; }
size_t zindex_mem_usage(const zindex *z) { return zmalloc_size(z) + z->node_bytes; }

/* ---- insert ---- */

static void leaf_link_after(zindex *z, zleaf *l, zleaf *r) {
    r->prev = l;
    r->next = l->next;
    if (l->next)
        l->next->prev = r;
    else
        z->last = r;
    l->next = r;
}

/* Puts e at slot j of a full leaf by splitting; returns the new right leaf. */
static zleaf *leaf_split(zindex *z, zleaf *l, uint32_t j, smap_elem *e) {
    int at_end = j == LEAF_CAP && !l->next, at_start = j == 0 && !l->prev;
    zleaf *r = leaf_new(z);
    leaf_link_after(z, l, r);
    if (at_end) {
        r->e[0] = e;
        r->n = 1;
    } else if (at_start) {
        memcpy(r->e, l->e, sizeof l->e);
        r->n = LEAF_CAP;
        l->e[0] = e;
        l->n = 1;
    } else {
        smap_elem *tmp[LEAF_CAP + 1];
        memcpy(tmp, l->e, j * sizeof *tmp);
        tmp[j] = e;
        memcpy(tmp + j + 1, l->e + j, (LEAF_CAP - j) * sizeof *tmp);
        uint32_t s = (LEAF_CAP + 1) / 2;
        memcpy(l->e, tmp, s * sizeof *tmp);
        l->n = s;
        memcpy(r->e, tmp + s, (LEAF_CAP + 1 - s) * sizeof *tmp);
        r->n = LEAF_CAP + 1 - s;
    }
    return r;
}

static zleaf *leaf_insert(zindex *z, zleaf *l, const zpred *p, smap_elem *e) {
    uint32_t j = leaf_pick(l, p);
    if (l->n == LEAF_CAP) return leaf_split(z, l, j, e);
    memmove(l->e + j + 1, l->e + j, (l->n - j) * sizeof *l->e);
    l->e[j] = e;
    l->n++;
    return NULL;
}

/* Copies n slots src[s..] over dst[d..] (arrays may be the same node). */
static void inner_move(zinner *dst, uint32_t d, const zinner *src, uint32_t s, uint32_t n) {
    memmove(dst->child + d, src->child + s, n * sizeof *dst->child);
    memmove(dst->key + d, src->key + s, n * sizeof *dst->key);
    memmove(dst->cnt + d, src->cnt + s, n * sizeof *dst->cnt);
}

static void inner_put(zinner *in, uint32_t i, void *child, smap_elem *key, size_t cnt) {
    uint32_t tail = in->n - i;
    memmove(in->child + i + 1, in->child + i, tail * sizeof *in->child);
    memmove(in->key + i + 1, in->key + i, tail * sizeof *in->key);
    memmove(in->cnt + i + 1, in->cnt + i, tail * sizeof *in->cnt);
    in->child[i] = child;
    in->key[i] = key;
    in->cnt[i] = cnt;
    in->n++;
}

/* Adds (child, key, cnt) at slot i; returns the new right node on split. */
static zinner *inner_insert(zindex *z, zinner *in, uint32_t i, void *child, smap_elem *key, size_t cnt) {
    if (in->n < INNER_CAP) {
        inner_put(in, i, child, key, cnt);
        return NULL;
    }
    zinner *r = inner_new(z);
    uint32_t s = (INNER_CAP + 1) / 2;
    /* left ends with s slots: move the upper part to r, then put the new
     * slot on its side */
    uint32_t keep = i < s ? s - 1 : s;
    r->n = in->n - keep;
    inner_move(r, 0, in, keep, r->n);
    in->n = keep;
    if (i < s)
        inner_put(in, i, child, key, cnt);
    else
        inner_put(r, i - s, child, key, cnt);
    return r;
}

/* Inserts e below node; returns a new right sibling when node split. */
static void *ins(zindex *z, void *node, int h, const zpred *p, smap_elem *e) {
    if (h == 0) return leaf_insert(z, node, p, e);
    zinner *in = node;
    uint32_t i = inner_pick(in, p);
    void *r = ins(z, in->child[i], h - 1, p, e);
    in->cnt[i]++;
    in->key[i] = node_min(in->child[i], h - 1);
    if (!r) return NULL;
    size_t rc = node_count(r, h - 1);
    in->cnt[i] -= rc;
    return inner_insert(z, in, i + 1, r, node_min(r, h - 1), rc);
}

void zindex_insert(zindex *z, smap_elem *e) {
    z->count++;
    if (!z->root) {
        zleaf *l = leaf_new(z);
        l->e[0] = e;
        l->n = 1;
        z->root = z->first = z->last = l;
        z->height = 0;
        return;
    }
    zkey k = key_of(e);
    zpred p = {p_gt_key, &k};
    void *r = ins(z, z->root, z->height, &p, e);
    if (!r) return;
    zinner *root = inner_new(z);
    inner_put(root, 0, z->root, node_min(z->root, z->height), node_count(z->root, z->height));
    inner_put(root, 1, r, node_min(r, z->height), node_count(r, z->height));
    z->root = root;
    z->height++;
}

/* ---- delete ---- */

static void inner_drop(zinner *in, uint32_t i) {
    uint32_t tail = in->n - i - 1;
    memmove(in->child + i, in->child + i + 1, tail * sizeof *in->child);
    memmove(in->key + i, in->key + i + 1, tail * sizeof *in->key);
    memmove(in->cnt + i, in->cnt + i + 1, tail * sizeof *in->cnt);
    in->n--;
}

static void leaf_merge(zindex *z, zleaf *a, zleaf *b) {
    memcpy(a->e + a->n, b->e, b->n * sizeof *b->e);
    a->n += b->n;
    a->next = b->next;
    if (b->next)
        b->next->prev = a;
    else
        z->last = a;
    node_free(z, b);
}

static void leaf_even(zleaf *a, zleaf *b) {
    uint32_t total = a->n + b->n, na = total / 2;
    if (a->n > na) {
        uint32_t d = a->n - na;
        memmove(b->e + d, b->e, b->n * sizeof *b->e);
        memcpy(b->e, a->e + na, d * sizeof *b->e);
    } else {
        uint32_t d = na - a->n;
        memcpy(a->e + a->n, b->e, d * sizeof *b->e);
        memmove(b->e, b->e + d, (b->n - d) * sizeof *b->e);
    }
    a->n = na;
    b->n = total - na;
}

static void inner_merge(zindex *z, zinner *a, zinner *b) {
    memcpy(a->child + a->n, b->child, b->n * sizeof *b->child);
    memcpy(a->key + a->n, b->key, b->n * sizeof *b->key);
    memcpy(a->cnt + a->n, b->cnt, b->n * sizeof *b->cnt);
    a->n += b->n;
    node_free(z, b);
}

/* Evens two inner siblings out; returns the element count moved a -> b
 * (negative: b -> a). */
static long long inner_even(zinner *a, zinner *b) {
    uint32_t total = a->n + b->n, na = total / 2;
    long long moved = 0;
    if (a->n > na) {
        uint32_t d = a->n - na;
        for (uint32_t i = na; i < a->n; i++)
            moved += (long long)a->cnt[i];
        inner_move(b, d, b, 0, b->n);
        inner_move(b, 0, a, na, d);
    } else {
        uint32_t d = na - a->n;
        for (uint32_t i = 0; i < d; i++)
            moved -= (long long)b->cnt[i];
        inner_move(a, a->n, b, 0, d);
        inner_move(b, 0, b, d, b->n - d);
    }
    a->n = na;
    b->n = total - na;
    return moved;
}

/* After a removal below child i: refresh its key, and merge or even it
 * with a sibling when it fell below half. */
static void fix_child(zindex *z, zinner *in, uint32_t i, int ch) {
    void *c = in->child[i];
    uint32_t n = node_n(c, ch), min = ch ? INNER_MIN : LEAF_MIN;
    if (n >= min || in->n < 2) {
        if (n) in->key[i] = node_min(c, ch);
        return;
    }
    uint32_t a = i > 0 ? i - 1 : i, b = a + 1, cap = ch ? INNER_CAP : LEAF_CAP;
    void *A = in->child[a], *B = in->child[b];
    if (node_n(A, ch) + node_n(B, ch) <= cap) {
        if (ch)
            inner_merge(z, A, B);
        else
            leaf_merge(z, A, B);
        in->cnt[a] += in->cnt[b];
        inner_drop(in, b);
    } else {
        long long moved = ch ? inner_even(A, B) : 0;
        if (ch) {
            in->cnt[a] = (size_t)((long long)in->cnt[a] - moved);
            in->cnt[b] = (size_t)((long long)in->cnt[b] + moved);
        } else {
            leaf_even(A, B);
            in->cnt[a] = ((zleaf *)A)->n;
            in->cnt[b] = ((zleaf *)B)->n;
        }
        in->key[b] = node_min(B, ch);
    }
    in->key[a] = node_min(A, ch);
}

/* Which element to remove: by key (k) or by rank. */
typedef struct ztarget {
    const zkey *k;
    size_t rank;
} ztarget;

static smap_elem *del(zindex *z, void *node, int h, ztarget *t) {
    if (h == 0) {
        zleaf *l = node;
        uint32_t j;
        if (t->k) {
            zpred p = {p_gt_key, t->k};
            j = leaf_pick(l, &p);
            if (j == 0 || key_cmp(t->k, l->e[j - 1]) != 0) return NULL;
            j--;
        } else {
            j = (uint32_t)t->rank;
        }
        smap_elem *e = l->e[j];
        memmove(l->e + j, l->e + j + 1, (l->n - j - 1) * sizeof *l->e);
        l->n--;
        return e;
    }
    zinner *in = node;
    uint32_t i = 0;
    if (t->k) {
        zpred p = {p_gt_key, t->k};
        i = inner_pick(in, &p);
    } else {
        while (t->rank >= in->cnt[i])
            t->rank -= in->cnt[i++];
    }
    smap_elem *e = del(z, in->child[i], h - 1, t);
    if (!e) return NULL;
    in->cnt[i]--;
    fix_child(z, in, i, h - 1);
    return e;
}

static smap_elem *delete_target(zindex *z, ztarget *t) {
    if (!z->root) return NULL;
    smap_elem *e = del(z, z->root, z->height, t);
    if (!e) return NULL;
    z->count--;
    while (z->height > 0 && ((zinner *)z->root)->n == 1) {
        void *c = ((zinner *)z->root)->child[0];
        node_free(z, z->root);
        z->root = c;
        z->height--;
    }
    if (z->height == 0 && ((zleaf *)z->root)->n == 0) {
        node_free(z, z->root);
        z->root = z->first = z->last = NULL;
    }
    return e;
}

smap_elem *zindex_delete(zindex *z, double score, const char *m, size_t ml) {
    zkey k = {score, m, ml};
    ztarget t = {&k, 0};
    return delete_target(z, &t);
}

void zindex_remove(zindex *z, smap_elem *e) {
    zkey k = key_of(e);
    ztarget t = {&k, 0};
    delete_target(z, &t);
}

static smap_elem *delete_rank(zindex *z, size_t rank) {
    if (rank >= z->count) return NULL;
    ztarget t = {NULL, rank};
    return delete_target(z, &t);
}

/* ---- positions ---- */

smap_elem *zpos_elem(const zpos *p) { return p->leaf ? p->leaf->e[p->i] : NULL; }

int zpos_next(zpos *p) {
    if (!p->leaf) return 0;
    if (++p->i >= p->leaf->n) {
        p->leaf = p->leaf->next;
        p->i = 0;
    }
    return p->leaf != NULL;
}

int zpos_prev(zpos *p) {
    if (!p->leaf) return 0;
    if (p->i == 0) {
        p->leaf = p->leaf->prev;
        p->i = p->leaf ? p->leaf->n - 1 : 0;
    } else {
        p->i--;
    }
    return p->leaf != NULL;
}

/* The position before lower_bound's result (the last element for which p
 * is false). */
static smap_elem *last_before(const zindex *z, const zpred *p, zpos *out) {
    zpos pos;
    lower_bound(z, p, &pos);
    if (!pos.leaf) {
        pos.leaf = z->last;
        pos.i = z->last ? z->last->n - 1 : 0;
    } else {
        zpos_prev(&pos);
    }
    if (out) *out = pos;
    return zpos_elem(&pos);
}

static smap_elem *first_at(const zindex *z, const zpred *p, zpos *out) {
    zpos pos;
    lower_bound(z, p, &pos);
    if (out) *out = pos;
    return zpos_elem(&pos);
}

/* ---- queries ---- */

int zindex_rank(const zindex *z, const smap_elem *e, size_t *rank) {
    zkey k = key_of(e);
    zpred p = {p_ge_key, &k};
    zpos pos;
    size_t r = lower_bound(z, &p, &pos);
    if (zpos_elem(&pos) != e) return 0;
    *rank = r;
    return 1;
}

smap_elem *zindex_at(const zindex *z, size_t r, zpos *out) {
    zpos pos = {NULL, 0};
    if (r < z->count) {
        const void *node = z->root;
        for (int h = z->height; h > 0; h--) {
            const zinner *in = node;
            uint32_t c = 0;
            while (r >= in->cnt[c])
                r -= in->cnt[c++];
            node = in->child[c];
        }
        pos.leaf = (zleaf *)node;
        pos.i = (uint32_t)r;
    }
    if (out) *out = pos;
    return zpos_elem(&pos);
}

smap_elem *zindex_first_score(const zindex *z, double x, int excl, zpos *pos) {
    zpred p = {excl ? p_score_gt : p_score_ge, &x};
    return first_at(z, &p, pos);
}

smap_elem *zindex_last_score(const zindex *z, double x, int excl, zpos *pos) {
    zpred p = {excl ? p_score_ge : p_score_gt, &x};
    return last_before(z, &p, pos);
}

smap_elem *zindex_first_lex(const zindex *z, const zlex_bound *min, zpos *pos) {
    zpred p = {p_lex_in_min, min};
    return first_at(z, &p, pos);
}

smap_elem *zindex_last_lex(const zindex *z, const zlex_bound *max, zpos *pos) {
    zpred p = {p_lex_over_max, max};
    return last_before(z, &p, pos);
}

/* Ranks [lo, hi) between two predicates. */
static size_t span(const zindex *z, const zpred *from, const zpred *past, size_t *first) {
    zpos pos;
    size_t lo = lower_bound(z, from, &pos), hi = lower_bound(z, past, &pos);
    if (first) *first = lo;
    return hi > lo ? hi - lo : 0;
}

size_t zindex_score_span(const zindex *z, const zscore_range *r, size_t *first) {
    zpred from = {r->minex ? p_score_gt : p_score_ge, &r->min};
    zpred past = {r->maxex ? p_score_ge : p_score_gt, &r->max};
    return span(z, &from, &past, first);
}

size_t zindex_lex_span(const zindex *z, const zlex_range *r, size_t *first) {
    zpred from = {p_lex_in_min, &r->min};
    zpred past = {p_lex_over_max, &r->max};
    return span(z, &from, &past, first);
}

void zindex_update(zindex *z, smap_elem *e, double score) {
    zkey k = key_of(e);
    zpred p = {p_ge_key, &k};
    zpos pos, prev, next;
    lower_bound(z, &p, &pos);
    prev = next = pos;
    zkey nk = {score, k.m, k.ml};
    int prev_ok = !zpos_prev(&prev) || key_cmp(&nk, zpos_elem(&prev)) > 0;
    int next_ok = !zpos_next(&next) || key_cmp(&nk, zpos_elem(&next)) < 0;
    if (prev_ok && next_ok) { /* order kept: the keys above stay right */
        zelem_set_score(e, score);
        return;
    }
    zindex_remove(z, e);
    zelem_set_score(e, score);
    zindex_insert(z, e);
}

/* ---- range deletion ---- */

size_t zindex_delete_ranks(zindex *z, size_t start, size_t end, zindex_fn fn, void *ud) {
    if (z->count == 0 || start >= z->count) return 0;
    if (end >= z->count) end = z->count - 1;
    if (start > end) return 0;
    size_t n = end - start + 1;
    for (size_t i = 0; i < n; i++) {
        smap_elem *e = delete_rank(z, start);
        if (fn) fn(ud, e);
    }
    return n;
}

size_t zindex_delete_score(zindex *z, const zscore_range *r, zindex_fn fn, void *ud) {
    size_t first, n = zindex_score_span(z, r, &first);
    return n ? zindex_delete_ranks(z, first, first + n - 1, fn, ud) : 0;
}

size_t zindex_delete_lex(zindex *z, const zlex_range *r, zindex_fn fn, void *ud) {
    size_t first, n = zindex_lex_span(z, r, &first);
    return n ? zindex_delete_ranks(z, first, first + n - 1, fn, ud) : 0;
}

/* ---- verification ---- */

typedef struct vstate {
    const zleaf *prev_leaf; /* last leaf seen, in order */
    int err;
} vstate;

static size_t verify_node(const zindex *z, const void *node, int h, vstate *v) {
    uint32_t n = node_n(node, h), cap = h ? INNER_CAP : LEAF_CAP;
    if (n == 0 || n > cap || (h && n < 2)) v->err = -1;
    if (v->err) return 0;
    if (!h) {
        const zleaf *l = node;
        if (l->prev != v->prev_leaf || (v->prev_leaf && v->prev_leaf->next != l)) v->err = -2;
        if (!v->prev_leaf && z->first != l) v->err = -3;
        v->prev_leaf = l;
        return n;
    }
    const zinner *in = node;
    size_t total = 0;
    for (uint32_t i = 0; i < n && !v->err; i++) {
        size_t c = verify_node(z, in->child[i], h - 1, v);
        if (c != in->cnt[i]) v->err = -4;
        if (in->key[i] != node_min(in->child[i], h - 1)) v->err = -5;
        total += c;
    }
    return total;
}

int zindex_verify(const zindex *z) {
    if (!z->root) return z->count == 0 && !z->first && !z->last ? 0 : -10;
    vstate v = {NULL, 0};
    size_t n = verify_node(z, z->root, z->height, &v);
    if (v.err) return v.err;
    if (n != z->count) return -6;
    if (z->last != v.prev_leaf || z->last->next) return -7;
    size_t seen = 0;
    const smap_elem *prev = NULL;
    for (const zleaf *l = z->first; l; l = l->next)
        for (uint32_t i = 0; i < l->n; i++, seen++) {
            if (prev) {
                zkey k = key_of(prev);
                if (key_cmp(&k, l->e[i]) >= 0) return -8;
            }
            prev = l->e[i];
        }
    return seen == z->count ? 0 : -9;
}

/* ---- zset_big ---- */

zset_big *zsetb_create(void) {
    zset_big *z = zmalloc(sizeof *z);
    z->dict = smap_create(SMAP_U64);
    z->idx = zindex_create();
    return z;
}

void zsetb_free(zset_big **zp) {
    zset_big *z = *zp;
    if (!z) return;
    zindex_free(&z->idx);
    smap_free(&z->dict);
    zfree(z);
    *zp = NULL;
}

size_t zsetb_size(const zset_big *z) { return smap_size(z->dict); }
size_t zsetb_mem_usage(const zset_big *z) {
    return zmalloc_size(z) + smap_mem_usage(z->dict) + zindex_mem_usage(z->idx);
}

int zsetb_set(zset_big *z, const char *m, size_t ml, double score) {
    smap_elem *e = smap_find(z->dict, m, ml);
    if (e) {
        if (zelem_score(e) != score) zindex_update(z->idx, e, score);
        return 0;
    }
    uint64_t bits;
    memcpy(&bits, &score, 8);
    e = smap_set(z->dict, m, ml, (const char *)&bits, 8, NULL);
    zindex_insert(z->idx, e);
    return 1;
}

smap_elem *zsetb_find(zset_big *z, const char *m, size_t ml) { return smap_find(z->dict, m, ml); }

int zsetb_score(zset_big *z, const char *m, size_t ml, double *score) {
    smap_elem *e = smap_find(z->dict, m, ml);
    if (!e) return 0;
    *score = zelem_score(e);
    return 1;
}

int zsetb_rank(zset_big *z, const char *m, size_t ml, size_t *rank) {
    smap_elem *e = smap_find(z->dict, m, ml);
    return e ? zindex_rank(z->idx, e, rank) : 0;
}

int zsetb_delete(zset_big *z, const char *m, size_t ml) {
    smap_elem *e = smap_find(z->dict, m, ml);
    if (!e) return 0;
    zindex_remove(z->idx, e);
    smap_remove(z->dict, e);
    return 1;
}

static void drop_elem(void *ud, smap_elem *e) { smap_remove(ud, e); }

size_t zsetb_delete_ranks(zset_big *z, size_t start, size_t end) {
    return zindex_delete_ranks(z->idx, start, end, drop_elem, z->dict);
}
size_t zsetb_delete_score(zset_big *z, const zscore_range *r) {
    return zindex_delete_score(z->idx, r, drop_elem, z->dict);
}
size_t zsetb_delete_lex(zset_big *z, const zlex_range *r) { return zindex_delete_lex(z->idx, r, drop_elem, z->dict); }
