/* slowlog.c - one shard's slow log (see slowlog.h): a ring of entries,
 * each one allocation for the entry, its argument vectors and strings. */
#include "shard/slowlog.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/shard.h"
#include <stdio.h>
#include <string.h>

#define MAX_ARGC 32
#define MAX_STRING 128

static uint64_t next_id; /* atomic: ids for the whole server */

int slowlog_wanted(int64_t dur_us) {
    int64_t t = cfg_get(slowlog_log_slower_than);
    return t >= 0 && dur_us >= t;
}

static void sl_entry_free(slowlog_entry *e) { zfree(e); }

/* The entry for argv with Redis's trimming, in one block. */
static slowlog_entry *entry_new(int argc, const char *const *argv, const size_t *argl, const char *addr,
                                const char *name) {
    int keep = argc > MAX_ARGC ? MAX_ARGC : argc;
    char tail[2][64];
    size_t tl[2] = {0, 0};
    size_t bytes = sizeof(slowlog_entry) + (sizeof(char *) + sizeof(size_t)) * (size_t)keep;
    size_t al = addr ? strlen(addr) : 0, nl = name ? strlen(name) : 0;
    bytes += al + nl + 2;
    size_t len[MAX_ARGC];
    for (int i = 0; i < keep; i++) {
        if (argc > MAX_ARGC && i == MAX_ARGC - 1) {
            tl[0] = (size_t)snprintf(tail[0], sizeof tail[0], "... (%d more arguments)", argc - MAX_ARGC + 1);
            len[i] = tl[0];
        } else if (argl[i] > MAX_STRING) {
            len[i] = MAX_STRING + (size_t)snprintf(tail[1], sizeof tail[1], "... (%zu more bytes)", argl[i] - MAX_STRING);
        } else {
            len[i] = argl[i];
        }
        bytes += len[i] + 1;
    }
    slowlog_entry *e = zmalloc(bytes);
    char *p = (char *)(e + 1);
    e->argv = (char **)p;
    p += sizeof(char *) * (size_t)keep;
    e->argl = (size_t *)p;
    p += sizeof(size_t) * (size_t)keep;
    e->argc = keep;
    for (int i = 0; i < keep; i++) {
        e->argv[i] = p;
        e->argl[i] = len[i];
        if (argc > MAX_ARGC && i == MAX_ARGC - 1) {
            memcpy(p, tail[0], tl[0]);
        } else if (argl[i] > MAX_STRING) {
            memcpy(p, argv[i], MAX_STRING);
            snprintf(p + MAX_STRING, len[i] - MAX_STRING + 1, "... (%zu more bytes)", argl[i] - MAX_STRING);
        } else {
            memcpy(p, argv[i], argl[i]);
        }
        p[len[i]] = 0;
        p += len[i] + 1;
    }
    e->addr = p;
    if (al) memcpy(p, addr, al);
    p[al] = 0;
    p += al + 1;
    e->name = p;
    if (nl) memcpy(p, name, nl);
    p[nl] = 0;
    return e;
}

void slowlog_push(shard *sh, int argc, const char *const *argv, const size_t *argl, int64_t dur_us, const char *addr,
                  const char *name) {
    int64_t max = cfg_get(slowlog_max_len);
    slowlog *l = &sh->slowlog;
    slowlog_entry *e = entry_new(argc, argv, argl, addr, name);
    e->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
    e->time = sh->now_ms / 1000;
    e->dur_us = dur_us;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        slowlog_entry **ne = zmalloc(sizeof *ne * (size_t)cap);
        for (int i = 0; i < l->n; i++) ne[i] = l->e[(l->head + i) % l->cap];
        zfree(l->e);
        l->e = ne;
        l->head = 0;
        l->cap = cap;
    }
    l->e[(l->head + l->n) % l->cap] = e;
    l->n++;
    while (l->n > max) { /* the oldest go */
        sl_entry_free(l->e[l->head]);
        l->head = (l->head + 1) % l->cap;
        l->n--;
    }
}

void slowlog_reset(shard *sh) {
    slowlog *l = &sh->slowlog;
    for (int i = 0; i < l->n; i++) sl_entry_free(l->e[(l->head + i) % l->cap]);
    zfree(l->e);
    memset(l, 0, sizeof *l);
}

int slowlog_len(shard *sh) { return sh->slowlog.n; }

const slowlog_entry *slowlog_at(shard *sh, int i) {
    slowlog *l = &sh->slowlog;
    return l->e[(l->head + l->n - 1 - i) % l->cap];
}
