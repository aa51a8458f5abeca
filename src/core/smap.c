/* smap.c - see smap.h. The table follows core/table.c:
 *
 *   b[0] -> [ e | . | e->e | . ]        size 2^k
 *   b[1] -> [ ... 2^(k+-1) ... ]        only while resizing
 *   rehash_idx: buckets of b[0] below it have moved to b[1].
 *
 * paused counts live iterators; while it is non-zero no bucket moves and
 * no shrink starts, so an iterator walking b[0] then b[1] sees every
 * element once. */
#include "core/smap.h"
#include "lib/mem.h"
#include "lib/util.h"

struct smap {
    smap_elem **b[2];
    uint64_t mask[2];
    size_t count;
    size_t elem_bytes;  /* allocator block sizes of all elements */
    int64_t rehash_idx; /* -1 when not resizing */
    uint32_t paused;
    int kind;
    uint32_t chain_bound; /* the longest chain smap_random met (it only grows) */
};

#define INITIAL_BUCKETS 4

smap *smap_create(int kind) {
    smap *m = zcalloc(sizeof *m);
    m->rehash_idx = -1;
    m->kind = kind;
    return m;
}

void smap_free(smap **mp) {
    smap *m = *mp;
    if (!m) return;
    for (int i = 0; i < 2; i++) {
        if (!m->b[i]) continue;
        for (uint64_t j = 0; j <= m->mask[i]; j++) {
            smap_elem *e = m->b[i][j];
            while (e) {
                smap_elem *n = e->next;
                zfree(e);
                e = n;
            }
        }
        zfree(m->b[i]);
    }
    zfree(m);
    *mp = NULL;
}

int smap_kind(const smap *m) { return m->kind; }
size_t smap_size(const smap *m) { return m->count; }
size_t smap_buckets(const smap *m) { return (m->b[0] ? m->mask[0] + 1 : 0) + (m->b[1] ? m->mask[1] + 1 : 0); }
size_t smap_mem_usage(const smap *m) {
    size_t n = zmalloc_size(m) + m->elem_bytes;
    for (int i = 0; i < 2; i++)
        if (m->b[i]) n += zmalloc_size(m->b[i]);
    return n;
}

/* ---- elements ---- */

static uint8_t *value_part(const smap_elem *e) {
    size_t l;
    const char *f = smap_elem_field(e, &l);
    return (uint8_t *)f + l;
}

static size_t value_bytes(int kind, size_t vl) {
    if (kind == SMAP_SET) return 0;
    if (kind == SMAP_U64) return 8;
    return varint_len(vl) + vl;
}

static void put_value(int kind, uint8_t *p, const char *v, size_t vl) {
    if (kind == SMAP_U64) {
        memcpy(p, v, 8);
    } else if (kind == SMAP_BYTES) {
        p += varint_put(p, vl);
        if (vl) memmove(p, v, vl);
    }
}

static smap_elem *elem_new(smap *m, const char *f, size_t fl, const char *v, size_t vl) {
    size_t n = sizeof(smap_elem) + varint_len(fl) + fl + value_bytes(m->kind, vl);
    smap_elem *e = zmalloc(n);
    e->next = NULL;
    uint8_t *p = e->data + varint_put(e->data, fl);
    if (fl) memcpy(p, f, fl);
    put_value(m->kind, p + fl, v, vl);
    m->elem_bytes += zmalloc_size(e);
    return e;
}

static void elem_free(smap *m, smap_elem *e) {
    m->elem_bytes -= zmalloc_size(e);
    zfree(e);
}

static int field_eq(const smap_elem *e, const char *f, size_t fl) {
    size_t l;
    const char *ef = smap_elem_field(e, &l);
    return l == fl && (fl == 0 || memcmp(ef, f, fl) == 0);
}

static uint64_t elem_hash(const smap_elem *e) {
    size_t l;
    const char *f = smap_elem_field(e, &l);
    return hash_bytes(f, l);
}

const char *smap_elem_value(const smap *m, const smap_elem *e, size_t *len) {
    const uint8_t *p = value_part(e);
    if (m->kind == SMAP_SET) {
        *len = 0;
        return NULL;
    }
    if (m->kind == SMAP_U64) {
        *len = 8;
        return (const char *)p;
    }
    uint64_t l;
    p += varint_get(p, &l);
    *len = (size_t)l;
    return (const char *)p;
}

/* ---- resizing ---- */

static int rehashing(const smap *m) { return m->rehash_idx >= 0; }
static void maybe_shrink(smap *m);

static void start_resize(smap *m, uint64_t nbuckets) {
    m->b[1] = zcalloc(nbuckets * sizeof(smap_elem *));
    m->mask[1] = nbuckets - 1;
    m->rehash_idx = 0;
}

static void move_bucket(smap *m, uint64_t j) {
    smap_elem *e = m->b[0][j];
    while (e) {
        smap_elem *next = e->next;
        uint64_t i = elem_hash(e) & m->mask[1];
        e->next = m->b[1][i];
        m->b[1][i] = e;
        e = next;
    }
    m->b[0][j] = NULL;
}

static void finish_resize(smap *m) {
    zfree(m->b[0]);
    m->b[0] = m->b[1];
    m->mask[0] = m->mask[1];
    m->b[1] = NULL;
    m->mask[1] = 0;
    m->rehash_idx = -1;
}

int smap_rehash_step(smap *m, int n) {
    if (!rehashing(m)) return 0;
    if (m->paused) return 1;
    int empty_visits = n * 10;
    while (n-- > 0 && (uint64_t)m->rehash_idx <= m->mask[0]) {
        while ((uint64_t)m->rehash_idx <= m->mask[0] && m->b[0][m->rehash_idx] == NULL) {
            m->rehash_idx++;
            if (--empty_visits == 0) break;
        }
        if ((uint64_t)m->rehash_idx > m->mask[0] || empty_visits == 0) break;
        move_bucket(m, (uint64_t)m->rehash_idx);
        m->rehash_idx++;
    }
    if ((uint64_t)m->rehash_idx > m->mask[0]) {
        finish_resize(m);
        maybe_shrink(m); /* deletes went on during a shrink */
        return rehashing(m);
    }
    return 1;
}

static void step(smap *m) {
    if (rehashing(m) && !m->paused) smap_rehash_step(m, 1);
}

static void maybe_grow(smap *m) {
    if (rehashing(m)) return;
    if (!m->b[0]) {
        m->b[0] = zcalloc(INITIAL_BUCKETS * sizeof(smap_elem *));
        m->mask[0] = INITIAL_BUCKETS - 1;
        return;
    }
    if (m->count >= m->mask[0] + 1) start_resize(m, (m->mask[0] + 1) * 2);
}

/* Shrinks (incrementally) to the smallest power of two holding count once
 * the fill drops below 1/8; the last element gone frees the arrays. */
static void maybe_shrink(smap *m) {
    if (m->paused || !m->b[0]) return;
    if (m->count == 0) {
        for (int i = 0; i < 2; i++) {
            zfree(m->b[i]);
            m->b[i] = NULL;
            m->mask[i] = 0;
        }
        m->rehash_idx = -1;
        return;
    }
    if (rehashing(m)) return;
    uint64_t size = m->mask[0] + 1;
    if (size <= INITIAL_BUCKETS || m->count * 8 >= size) return;
    uint64_t n = INITIAL_BUCKETS;
    while (n < m->count)
        n *= 2;
    start_resize(m, n);
}

/* ---- lookup and update ---- */

/* The link (bucket slot or predecessor's next) pointing at field's
 * element, or NULL. Valid until the next change of m. */
static smap_elem **find_link(smap *m, const char *f, size_t fl, uint64_t h) {
    if (m->count == 0) return NULL;
    for (int i = 0; i < 2; i++) {
        if (!m->b[i]) break;
        uint64_t idx = h & m->mask[i];
        if (i == 0 && rehashing(m) && (int64_t)idx < m->rehash_idx) continue;
        for (smap_elem **l = &m->b[i][idx]; *l; l = &(*l)->next)
            if (field_eq(*l, f, fl)) return l;
        if (!rehashing(m)) break;
    }
    return NULL;
}

static void link_new(smap *m, smap_elem *e, uint64_t h) {
    maybe_grow(m);
    int i = rehashing(m) ? 1 : 0;
    uint64_t idx = h & m->mask[i];
    e->next = m->b[i][idx];
    m->b[i][idx] = e;
    m->count++;
}

int smap_add(smap *m, const char *f, size_t fl, const char *v, size_t vl) {
    step(m);
    uint64_t h = hash_bytes(f, fl);
    if (find_link(m, f, fl, h)) return 0;
    link_new(m, elem_new(m, f, fl, v, vl), h);
    return 1;
}

/* New value for the element at link; may reallocate (the link follows). */
static smap_elem *replace_value(smap *m, smap_elem **link, const char *v, size_t vl) {
    smap_elem *e = *link;
    if (m->kind == SMAP_SET) return e;
    if (m->kind == SMAP_U64) {
        memcpy(value_part(e), v, 8);
        return e;
    }
    size_t head = (size_t)(value_part(e) - (uint8_t *)e);
    size_t old = zmalloc_size(e);
    smap_elem *n = zrealloc(e, head + varint_len(vl) + vl);
    m->elem_bytes = m->elem_bytes - old + zmalloc_size(n);
    put_value(m->kind, (uint8_t *)n + head, v, vl);
    *link = n;
    return n;
}

smap_elem *smap_set(smap *m, const char *f, size_t fl, const char *v, size_t vl, int *added) {
    step(m);
    uint64_t h = hash_bytes(f, fl);
    smap_elem **link = find_link(m, f, fl, h);
    if (added) *added = link == NULL;
    if (link) return replace_value(m, link, v, vl);
    smap_elem *e = elem_new(m, f, fl, v, vl);
    link_new(m, e, h);
    return e;
}

smap_elem *smap_find(smap *m, const char *f, size_t fl) {
    step(m);
    smap_elem **l = find_link(m, f, fl, hash_bytes(f, fl));
    return l ? *l : NULL;
}

const char *smap_get(smap *m, const char *f, size_t fl, size_t *vl) {
    smap_elem *e = smap_find(m, f, fl);
    if (!e) return NULL;
    if (m->kind == SMAP_SET) {
        *vl = 0;
        return (const char *)value_part(e);
    }
    return smap_elem_value(m, e, vl);
}

int smap_exists(smap *m, const char *f, size_t fl) { return smap_find(m, f, fl) != NULL; }

static void unlink_free(smap *m, smap_elem **link) {
    smap_elem *e = *link;
    *link = e->next;
    m->count--;
    elem_free(m, e);
    maybe_shrink(m);
}

int smap_delete(smap *m, const char *f, size_t fl) {
    step(m);
    smap_elem **l = find_link(m, f, fl, hash_bytes(f, fl));
    if (!l) return 0;
    unlink_free(m, l);
    return 1;
}

void smap_remove(smap *m, smap_elem *e) {
    size_t fl;
    const char *f = smap_elem_field(e, &fl);
    smap_elem **l = find_link(m, f, fl, hash_bytes(f, fl));
    if (l) unlink_free(m, l);
}

/* ---- iteration ---- */

void smap_iter_start(smap_iter *it, smap *m) {
    it->m = m;
    it->next = NULL;
    it->bucket = 0;
    it->table = 0;
    m->paused++;
}

smap_elem *smap_iter_next(smap_iter *it) {
    smap *m = it->m;
    while (!it->next) {
        if (it->table > 1 || !m->b[it->table]) return NULL;
        if (it->bucket > m->mask[it->table]) {
            it->table++;
            it->bucket = 0;
            continue;
        }
        it->next = m->b[it->table][it->bucket++];
    }
    smap_elem *e = it->next;
    it->next = e->next; /* taken now: e may be deleted or reallocated */
    return e;
}

void smap_iter_stop(smap_iter *it) {
    if (!it->m) return;
    it->m->paused--;
    it->m = NULL;
}

/* ---- scan ---- */

static uint64_t rev64(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0full) | ((v & 0x0f0f0f0f0f0f0f0full) << 4);
    v = ((v >> 8) & 0x00ff00ff00ff00ffull) | ((v & 0x00ff00ff00ff00ffull) << 8);
    v = ((v >> 16) & 0x0000ffff0000ffffull) | ((v & 0x0000ffff0000ffffull) << 16);
    return (v >> 32) | (v << 32);
}

/* Increments the high bits of the cursor under mask m (reverse binary). */
static uint64_t cursor_next(uint64_t v, uint64_t mask) {
    v |= ~mask;
    v = rev64(v);
    v++;
    return rev64(v);
}

static void visit(smap_elem *e, void (*fn)(void *, smap_elem *), void *ud) {
    while (e) {
        smap_elem *n = e->next;
        fn(ud, e);
        e = n;
    }
}

uint64_t smap_scan(smap *m, uint64_t v, void (*fn)(void *ud, smap_elem *e), void *ud) {
    if (m->count == 0 || !m->b[0]) return 0;
    if (!rehashing(m)) {
        visit(m->b[0][v & m->mask[0]], fn, ud);
        return cursor_next(v, m->mask[0]);
    }
    /* Visit the small array's bucket, then every bucket of the large one
     * that expands it. Moved buckets of b[0] are empty: harmless. */
    int s = m->mask[0] <= m->mask[1] ? 0 : 1, l = 1 - s;
    uint64_t ms = m->mask[s], ml = m->mask[l];
    visit(m->b[s][v & ms], fn, ud);
    do {
        visit(m->b[l][v & ml], fn, ud);
        v = cursor_next(v, ml);
    } while (v & (ms ^ ml));
    return v;
}

/* ---- random ---- */

/* The chain of a bucket chosen uniformly among the live ones (both arrays
 * while rehashing: b[0] below rehash_idx has moved and is empty); NULL for
 * an empty bucket. */
static smap_elem *random_bucket(smap *m, uint64_t (*rnd)(void)) {
    if (!rehashing(m)) return m->b[0][rnd() & m->mask[0]];
    uint64_t live0 = m->mask[0] + 1 - (uint64_t)m->rehash_idx, n1 = m->mask[1] + 1;
    uint64_t r = rnd() % (live0 + n1);
    return r < live0 ? m->b[0][(uint64_t)m->rehash_idx + r] : m->b[1][r - live0];
}

/* Rejection sampling, so that every element has the same chance: a random
 * bucket and a random position below `bound`, taken when the chain is that
 * long. (A random chain and then a random element of it favours elements
 * of short chains: HRANDFIELD -1000 of 100 fields scored chi-square 466,
 * where Redis's fair sampling stays under 40.) The bound is at least 4 and
 * the longest chain met so far, kept in the map: a bound that rose only
 * within a call would under-sample a long chain in every call that picked
 * another element before it met that chain. A table emptier than the shrink
 * rule allows falls back to the first element found. */
smap_elem *smap_random(smap *m, uint64_t (*rnd)(void)) {
    if (m->count == 0) return NULL;
    step(m);
    size_t bound = m->chain_bound > 4 ? m->chain_bound : 4;
    for (int tries = 0; tries < 100000; tries++) {
        smap_elem *head = random_bucket(m, rnd);
        size_t len = 0;
        for (smap_elem *e = head; e; e = e->next)
            len++;
        if (len > bound) {
            bound = len;
            m->chain_bound = (uint32_t)len;
            continue;
        }
        size_t k = rnd() % bound;
        if (k >= len) continue;
        while (k--)
            head = head->next;
        return head;
    }
    for (int i = 0; i < 2; i++)
        if (m->b[i])
            for (uint64_t j = 0; j <= m->mask[i]; j++)
                if (m->b[i][j]) return m->b[i][j];
    return NULL;
}

/* One pass choosing each element with probability wanted/remaining
 * (Knuth's selection sampling): exactly k, uniformly. */
static size_t sample_dense(smap *m, size_t k, smap_elem **out, uint64_t (*rnd)(void)) {
    size_t got = 0, left = m->count;
    smap_iter it;
    smap_iter_start(&it, m);
    smap_elem *e;
    while (got < k && (e = smap_iter_next(&it))) {
        if (rnd() % left < k - got) out[got++] = e;
        left--;
    }
    smap_iter_stop(&it);
    return got;
}

/* Random draws, rejecting repeats through a small open-addressing set of
 * the pointers taken so far. */
static size_t sample_sparse(smap *m, size_t k, smap_elem **out, uint64_t (*rnd)(void)) {
    size_t cap = 4;
    while (cap < k * 2)
        cap *= 2;
    smap_elem **seen = zcalloc(cap * sizeof *seen);
    size_t got = 0;
    while (got < k) {
        smap_elem *e = smap_random(m, rnd);
        size_t i = (size_t)(((uintptr_t)e >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
        while (seen[i] && seen[i] != e)
            i = (i + 1) & (cap - 1);
        if (seen[i]) continue;
        seen[i] = e;
        out[got++] = e;
    }
    zfree(seen);
    return got;
}

size_t smap_sample(smap *m, size_t k, smap_elem **out, uint64_t (*rnd)(void)) {
    if (k == 0 || m->count == 0) return 0;
    if (k >= m->count) {
        size_t n = 0;
        smap_iter it;
        smap_iter_start(&it, m);
        for (smap_elem *e; (e = smap_iter_next(&it));)
            out[n++] = e;
        smap_iter_stop(&it);
        return n;
    }
    if (k * 3 > m->count) return sample_dense(m, k, out, rnd);
    return sample_sparse(m, k, out, rnd);
}
