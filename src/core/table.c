/* table.c - see table.h.
 *
 *   b[0] -> [ e | . | e->e | . ]        size 2^k
 *   b[1] -> [ ... 2^(k+1) ... ]         only while rehashing
 *   rehash_idx: buckets of b[0] below it have moved to b[1]. */
#include "core/table.h"
#include "lib/mem.h"
#include "lib/util.h"

struct table {
    entry **b[2];
    uint64_t mask[2];
    size_t count;
    int64_t rehash_idx; /* -1 when not rehashing */
};

#define INITIAL_BUCKETS 4

table *table_create(void) {
    table *t = zcalloc(sizeof *t);
    t->rehash_idx = -1;
    return t;
}

static uint64_t entry_hash(const entry *e) {
    size_t kl;
    const uint8_t *k = entry_keyp(e, &kl);
    return hash_bytes(k, kl);
}

void table_destroy(table **tp, void (*free_entry)(entry *e)) {
    table *t = *tp;
    if (!t) return;
    for (int i = 0; i < 2; i++) {
        if (!t->b[i]) continue;
        for (uint64_t j = 0; j <= t->mask[i]; j++) {
            entry *e = t->b[i][j];
            while (e) {
                entry *n = e->next;
                if (free_entry) free_entry(e);
                e = n;
            }
        }
        zfree(t->b[i]);
    }
    zfree(t);
    *tp = NULL;
}

size_t table_size(const table *t) { return t->count; }
size_t table_buckets(const table *t) {
    return (t->b[0] ? t->mask[0] + 1 : 0) + (t->b[1] ? t->mask[1] + 1 : 0);
}
size_t table_overhead(const table *t) { return table_buckets(t) * sizeof(entry *) + sizeof *t; }

static int rehashing(const table *t) { return t->rehash_idx >= 0; }

static void start_resize(table *t, uint64_t nbuckets) {
    t->b[1] = zcalloc(nbuckets * sizeof(entry *));
    t->mask[1] = nbuckets - 1;
    t->rehash_idx = 0;
}

int table_rehash_step(table *t, int n) {
    if (!rehashing(t)) return 0;
    int empty_visits = n * 10;
    while (n-- && (uint64_t)t->rehash_idx <= t->mask[0]) {
        while ((uint64_t)t->rehash_idx <= t->mask[0] && t->b[0][t->rehash_idx] == NULL) {
            t->rehash_idx++;
            if (--empty_visits == 0) return 1;
        }
        if ((uint64_t)t->rehash_idx > t->mask[0]) break;
        entry *e = t->b[0][t->rehash_idx];
        while (e) {
            entry *next = e->next;
            uint64_t i = entry_hash(e) & t->mask[1];
            e->next = t->b[1][i];
            t->b[1][i] = e;
            e = next;
        }
        t->b[0][t->rehash_idx] = NULL;
        t->rehash_idx++;
    }
    if ((uint64_t)t->rehash_idx > t->mask[0]) {
        zfree(t->b[0]);
        t->b[0] = t->b[1];
        t->mask[0] = t->mask[1];
        t->b[1] = NULL;
        t->mask[1] = 0;
        t->rehash_idx = -1;
        return 0;
    }
    return 1;
}

int (*table_grow_allowed)(size_t bytes, double fill);

static void maybe_grow(table *t) {
    if (rehashing(t)) return;
    if (!t->b[0]) {
        t->b[0] = zcalloc(INITIAL_BUCKETS * sizeof(entry *));
        t->mask[0] = INITIAL_BUCKETS - 1;
        return;
    }
    uint64_t n = t->mask[0] + 1;
    if (t->count < n) return;
    double fill = (double)t->count / (double)n;
    if (table_grow_allowed && fill <= 1.618 && !table_grow_allowed(2 * n * sizeof(entry *), fill)) return;
    start_resize(t, n * 2);
}

void table_reserve(table *t, size_t n) {
    if (t->count || rehashing(t) || n <= INITIAL_BUCKETS) return;
    uint64_t size = INITIAL_BUCKETS;
    while (size < n && size < (1ull << 40)) size *= 2;
    if (t->b[0] && t->mask[0] + 1 >= size) return;
    zfree(t->b[0]);
    t->b[0] = zcalloc(size * sizeof(entry *));
    t->mask[0] = size - 1;
}

void table_maybe_shrink(table *t) {
    if (rehashing(t) || !t->b[0]) return;
    uint64_t size = t->mask[0] + 1;
    if (size <= INITIAL_BUCKETS || t->count * 8 >= size) return;
    uint64_t n = INITIAL_BUCKETS;
    while (n < t->count) n *= 2;
    if (n < size) start_resize(t, n);
}

void table_prefetch_bucket(const table *t, uint64_t h) {
    for (int i = 0; i < 2 && t->b[i]; i++)
        __builtin_prefetch(&t->b[i][h & t->mask[i]]);
}

void table_prefetch_entry(const table *t, uint64_t h) {
    for (int i = 0; i < 2 && t->b[i]; i++) {
        const entry *e = t->b[i][h & t->mask[i]];
        if (e) __builtin_prefetch(e);
    }
}

entry **table_link(table *t, const char *key, size_t klen) {
    if (table_size(t) == 0) return NULL;
    if (rehashing(t)) table_rehash_step(t, 1);
    uint64_t h = hash_bytes(key, klen);
    for (int i = 0; i < 2; i++) {
        if (!t->b[i]) break;
        uint64_t idx = h & t->mask[i];
        if (i == 0 && rehashing(t) && (int64_t)idx < t->rehash_idx) continue;
        entry **link = &t->b[i][idx];
        while (*link) {
            if (entry_key_eq(*link, key, klen)) return link;
            link = &(*link)->next;
        }
        if (!rehashing(t)) break;
    }
    return NULL;
}

void table_insert(table *t, entry *e) {
    if (rehashing(t)) table_rehash_step(t, 1);
    maybe_grow(t);
    int i = rehashing(t) ? 1 : 0;
    uint64_t idx = entry_hash(e) & t->mask[i];
    e->next = t->b[i][idx];
    t->b[i][idx] = e;
    t->count++;
}

entry *table_unlink(table *t, entry **link) {
    entry *e = *link;
    t->count--;
    *link = e->next;
    e->next = NULL;
    return e;
}

entry *table_replace(table *t, entry **link, entry *n) {
    entry *old = *link;
    n->next = old->next;
    *link = n;
    old->next = NULL;
    return old;
}

static uint64_t rev64(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0full) | ((v & 0x0f0f0f0f0f0f0f0full) << 4);
    v = ((v >> 8) & 0x00ff00ff00ff00ffull) | ((v & 0x00ff00ff00ff00ffull) << 8);
    v = ((v >> 16) & 0x0000ffff0000ffffull) | ((v & 0x0000ffff0000ffffull) << 16);
    return (v >> 32) | (v << 32);
}

static void visit(entry *e, void (*fn)(void *, entry *), void *ud) {
    for (; e; e = e->next) fn(ud, e);
}

uint64_t table_scan(table *t, uint64_t v, void (*fn)(void *ud, entry *e), void *ud) {
    if (table_size(t) == 0 || !t->b[0]) return 0;
    if (!rehashing(t)) {
        uint64_t m0 = t->mask[0];
        visit(t->b[0][v & m0], fn, ud);
        v |= ~m0;
        v = rev64(v);
        v++;
        v = rev64(v);
        return v;
    }
    /* Small and large array: visit the small bucket, then every bucket of
     * the large one that expands it. Buckets of b[0] below rehash_idx are
     * empty, so visiting them is harmless. */
    int s = t->mask[0] <= t->mask[1] ? 0 : 1, l = 1 - s;
    uint64_t m0 = t->mask[s], m1 = t->mask[l];
    visit(t->b[s][v & m0], fn, ud);
    do {
        visit(t->b[l][v & m1], fn, ud);
        v |= ~m1;
        v = rev64(v);
        v++;
        v = rev64(v);
    } while (v & (m0 ^ m1));
    return v;
}

static inline uint64_t mix64(uint64_t *x) { /* splitmix64 */
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int table_sample(table *t, uint64_t seed, entry **out, int max) {
    if (t->count == 0 || !t->b[0] || max <= 0) return 0;
    int tables = rehashing(t) ? 2 : 1;
    uint64_t big = tables == 2 && t->mask[1] > t->mask[0] ? t->mask[1] : t->mask[0];
    uint64_t i = mix64(&seed) & big;
    int got = 0, empty = 0;
    for (long steps = (long)max * 10; got < max && steps > 0; steps--) {
        for (int j = 0; j < tables && got < max; j++) {
            if (i > t->mask[j]) continue; /* the smaller array has no bucket i */
            entry *e = t->b[j][i];     /* moved buckets of b[0] are empty */
            if (!e) {
                if (++empty >= 5 && empty > max) {
                    i = mix64(&seed) & big;
                    empty = 0;
                }
                continue;
            }
            empty = 0;
            for (; e && got < max; e = e->next) out[got++] = e;
        }
        i = (i + 1) & big;
    }
    return got;
}

entry *table_random(table *t, uint64_t (*rnd)(void)) {
    if (table_size(t) == 0) return NULL;
    entry *head = NULL;
    for (int tries = 0; !head; tries++) {
        if (rehashing(t)) {
            uint64_t n0 = t->mask[0] + 1, n1 = t->mask[1] + 1;
            uint64_t r = rnd() % (n0 + n1);
            head = r < n0 ? t->b[0][r] : t->b[1][r - n0];
        } else {
            head = t->b[0][rnd() & t->mask[0]];
        }
        if (tries > 1000 && !head) { /* very sparse: walk from a random point */
            for (int i = 0; i < 2 && !head; i++)
                if (t->b[i])
                    for (uint64_t j = 0; j <= t->mask[i] && !head; j++) head = t->b[i][j];
        }
    }
    size_t len = 0;
    for (entry *e = head; e; e = e->next) len++;
    size_t k = rnd() % len;
    while (k--) head = head->next;
    return head;
}
