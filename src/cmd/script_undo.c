/* script_undo.c - putting a script's writes back (see script.h).
 *
 * A script runs holding the shards of its declared keys. When it reaches a
 * key of another shard it stops and runs again holding every shard; if it
 * already wrote, its writes must first be undone. So while a run may still
 * start again, each key it writes is copied before its first write (the
 * entry with its TTL, or "absent"). Copies are bounded: past 256 keys or a
 * value of more than 64 KB the run gives up the possibility (a later
 * undeclared key is then an error, as before the undo existed). */
#include "cmd/script.h"
#include "lib/mem.h"
#include "shard/db.h"
#include "shard/shard.h"
#include <string.h>

enum { UNDO_MAX_KEYS = 256, UNDO_MAX_BYTES = 64 * 1024 };

typedef struct undo_rec {
    db *d;
    char *key;
    size_t klen;
    entry *saved; /* NULL: the key did not exist */
} undo_rec;

typedef struct undo_sink {
    script_run *r;
    cmd_ctx *sub;
    int ok;
} undo_sink;

static void save_key(void *ud, const char *key, size_t klen) {
    undo_sink *s = ud;
    script_run *r = s->r;
    if (!s->ok) return;
    db *d = ctx_db(s->sub, key, klen);
    for (int i = 0; i < r->nundo; i++)
        if (r->undo[i].d == d && r->undo[i].klen == klen && !memcmp(r->undo[i].key, key, klen)) return;
    if (r->nundo >= UNDO_MAX_KEYS) {
        s->ok = 0;
        return;
    }
    entry *e = db_find(d, key, klen, ctx_now(s->sub));
    if (e && entry_usage(e) > UNDO_MAX_BYTES) {
        s->ok = 0;
        return;
    }
    if (r->nundo == r->capundo) {
        r->capundo = r->capundo ? r->capundo * 2 : 8;
        r->undo = zrealloc(r->undo, sizeof(undo_rec) * (size_t)r->capundo);
    }
    undo_rec *u = &r->undo[r->nundo++];
    u->d = d;
    u->key = zmalloc(klen + 1);
    memcpy(u->key, key, klen);
    u->klen = klen;
    u->saved = e ? entry_copy(e, key, klen, entry_expire(e)) : NULL;
}

int sundo_save(script_run *r, cmd_ctx *sub) {
    undo_sink s = {.r = r, .sub = sub, .ok = 1};
    cmd_each_key(sub->cmd, sub->argc, sub->argv, sub->argl, save_key, &s);
    return s.ok;
}

void sundo_restore(script_run *r) {
    int64_t now = ctx_now(r->c);
    for (int i = r->nundo - 1; i >= 0; i--) {
        undo_rec *u = &r->undo[i];
        entry **link = db_find_link(u->d, u->key, u->klen, now);
        if (link) db_delete_link(u->d, link);
        if (u->saved) db_add(u->d, u->saved);
        u->saved = NULL;
    }
}

void sundo_free(script_run *r) {
    for (int i = 0; i < r->nundo; i++) {
        if (r->undo[i].saved) entry_free(r->undo[i].saved);
        zfree(r->undo[i].key);
    }
    zfree(r->undo);
    r->undo = NULL;
    r->nundo = r->capundo = 0;
}
