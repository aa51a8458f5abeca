/* lock.c - see lock.h. */
#include "shard/lock.h"
#include "lib/mem.h"
#include "lib/util.h"

uint64_t lock_hash(int dbid, const char *key, size_t klen) {
    return hash_bytes(key, klen) ^ ((uint64_t)(dbid + 1) * 0x9e3779b97f4a7c15ull);
}

static inline uint32_t home(const lock_tab *t, uint64_t h) { return (uint32_t)(h ^ (h >> 32)) & (t->cap - 1); }

static lock_cell *find(const lock_tab *t, uint64_t h) {
    if (!t->n) return NULL;
    for (uint32_t i = home(t, h);; i = (i + 1) & (t->cap - 1)) {
        lock_cell *c = &t->cells[i];
        if (!c->s && !c->x) return NULL;
        if (c->h == h) return c;
    }
}

static void grow(lock_tab *t) {
    lock_cell *old = t->cells;
    uint32_t ocap = t->cap;
    t->cap = ocap ? ocap * 2 : 64;
    t->cells = zcalloc(sizeof(lock_cell) * t->cap);
    for (uint32_t i = 0; i < ocap; i++) {
        if (!old[i].s && !old[i].x) continue;
        uint32_t j = home(t, old[i].h);
        while (t->cells[j].s || t->cells[j].x) j = (j + 1) & (t->cap - 1);
        t->cells[j] = old[i];
    }
    zfree(old);
}

void lock_add(lock_tab *t, uint64_t h, int x) {
    lock_cell *c = find(t, h);
    if (!c) {
        if ((t->n + 1) * 2 > t->cap) grow(t);
        uint32_t i = home(t, h);
        while (t->cells[i].s || t->cells[i].x) i = (i + 1) & (t->cap - 1);
        c = &t->cells[i];
        c->h = h;
        t->n++;
    }
    if (x) c->x++;
    else c->s++;
}

void lock_del(lock_tab *t, uint64_t h, int x) {
    lock_cell *c = find(t, h);
    if (!c) return;
    if (x) c->x--;
    else c->s--;
    if (c->s || c->x) return;
    /* The cell is free: shift back the cells after it whose probe passed it. */
    uint32_t mask = t->cap - 1, i = (uint32_t)(c - t->cells);
    for (uint32_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        lock_cell *d = &t->cells[j];
        if (!d->s && !d->x) break;
        uint32_t k = home(t, d->h);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays) continue;
        t->cells[i] = *d;
        d->s = d->x = 0;
        i = j;
    }
    t->n--;
}

int lock_conflicts(const lock_tab *t, uint64_t h, int x) {
    const lock_cell *c = find(t, h);
    return c && (c->x || (x && c->s));
}

void lock_tab_free(lock_tab *t) {
    zfree(t->cells);
    t->cells = NULL;
    t->cap = t->n = 0;
}
