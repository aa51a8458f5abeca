/* ring.c - see ring.h. */
#include "lib/ring.h"
#include "lib/mem.h"

ring *ring_create(size_t cap) {
    ring *r = zcalloc(sizeof *r);
    size_t c = 1;
    while (c < cap) c <<= 1;
    r->mask = c - 1;
    r->slot = zcalloc(c * sizeof(void *));
    return r;
}

void ring_destroy(ring **r) {
    if (!*r) return;
    zfree((*r)->slot);
    zfree(*r);
    *r = NULL;
}
