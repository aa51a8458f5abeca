/* acl_check.c - is this command, with these arguments, allowed for this
 * user? (Redis 7.0's ACLCheckAllUserCommandPerm.)
 *
 * Each key argument needs read and/or write permission by how the command
 * uses it, as its key specs say (cmd/keyspec.c finds the keys of the call
 * with their flags, as Redis does): a key that is read (ACCESS) needs %R,
 * one that is changed, added to or deleted from (UPDATE, INSERT, DELETE)
 * needs %W, and one with neither (EXISTS, TYPE, STRLEN, ...; or found
 * without flags) needs a matching pattern of either kind.
 *
 * The cost on the hot path is in acl_gate (acl.c): a user with every
 * permission (the default user as it starts) is one flag test. */
#include "cmd/acl.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <stdio.h>
#include <string.h>

typedef struct chan_spec {
    int8_t first, last; /* argv range of channels; last < 0 counts from the end */
    uint8_t pattern;
    uint8_t on;
    int16_t key_pos;    /* > 0: the command's one key is argv[key_pos] (GET, SET...) */
    uint16_t key_flags; /* its KS_* flags; KS_VARIABLE_FLAGS: the arguments decide them (SET ... GET) */
} chan_spec;

static chan_spec *cspecs;
static const command *sort_cmd, *sort_ro_cmd;

/* A command whose keys are one key at a fixed position, by its one key
 * spec (what cmd_key_refs finds, without walking the specs on every call;
 * with variable flags only the position is known). */
static void simple_key(const command *c, chan_spec *cs) {
    key_spec one;
    const key_spec *specs;
    if (cmd_key_specs(c, &one, &specs) != 1) return;
    const key_spec *k = &specs[0];
    if (k->flags & (KS_NOT_KEY | KS_INCOMPLETE)) return;
    if (k->bs != KS_BS_INDEX || k->fk != KS_FK_RANGE || k->a != 0 || k->pos <= 0) return;
    cs->key_pos = k->pos;
    cs->key_flags = k->flags;
}

/* clang-format off */
static const struct {
    const char *name;
    int first, last, pattern;
} chan_table[] = {
    {"publish", 1, 1, 0}, {"spublish", 1, 1, 0}, {"subscribe", 1, -1, 0}, {"ssubscribe", 1, -1, 0},
    {"psubscribe", 1, -1, 1},
};
/* clang-format on */

void acl_check_init(void) {
    if (cspecs) return;
    int n = cmd_index_count();
    cspecs = zcalloc(sizeof *cspecs * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        if (cmd_by_index(i)) simple_key(cmd_by_index(i), &cspecs[i]);
    for (size_t i = 0; i < sizeof chan_table / sizeof chan_table[0]; i++) {
        const command *c = cmd_lookup(chan_table[i].name, strlen(chan_table[i].name));
        if (!c) continue; /* pub/sub not built: nothing to check */
        chan_spec *cs = &cspecs[cmd_index(c)];
        cs->first = (int8_t)chan_table[i].first;
        cs->last = (int8_t)chan_table[i].last;
        cs->pattern = (uint8_t)chan_table[i].pattern;
        cs->on = 1;
    }
    sort_cmd = cmd_lookup("sort", 4);
    sort_ro_cmd = cmd_lookup("sort_ro", 7);
}

int acl_sort_kind(const command *cmd) { return cmd == sort_cmd ? 1 : cmd == sort_ro_cmd ? 2 : 0; }

/* The permissions a key with these KS_* flags needs (Redis's
 * ACLSelectorCheckKey). */
static int key_access(uint16_t flags) {
    return ((flags & KS_ACCESS) ? ACL_R : 0) | ((flags & (KS_INSERT | KS_DELETE | KS_UPDATE)) ? ACL_W : 0);
}

static int key_ok(const acl_sel *s, const char *key, size_t klen, int need) {
    for (int i = 0; i < s->nkeys; i++) {
        const acl_pat *p = &s->keys[i];
        if ((p->flags & need) != need) continue;
        if (acl_pat_match(p, key, klen)) return 1;
    }
    return 0;
}

int acl_channel_ok(const acl_user *u, const char *ch, size_t len, int pattern) {
    for (int k = 0; k < u->nsels; k++) {
        const acl_sel *s = u->sels[k];
        if (s->flags & SEL_ALLCHANNELS) return 1;
        for (int i = 0; i < s->nchans; i++) {
            const acl_pat *p = &s->chans[i];
            if (pattern ? (p->len == len && !memcmp(p->p, ch, len)) : acl_pat_match(p, ch, len)) return 1;
        }
    }
    return 0;
}

static int chan_ok_sel(const acl_sel *s, const char *ch, size_t len, int pattern) {
    for (int i = 0; i < s->nchans; i++) {
        const acl_pat *p = &s->chans[i];
        if (pattern ? (p->len == len && !memcmp(p->p, ch, len)) : acl_pat_match(p, ch, len)) return 1;
    }
    return 0;
}

/* The call's keys, found once for every selector that needs them. */
typedef struct keys_cache {
    int init;
    key_refs r;
} keys_cache;

static void keys_fill(keys_cache *kc, const command *cmd, int argc, const char **argv, const size_t *argl) {
    if (kc->init) return;
    kc->init = 1;
    cmd_key_refs(cmd, argc, argv, argl, &kc->r);
}

static inline int sel_cmd_ok(const acl_sel *s, const command *cmd, int id, int argc, const char **argv, const size_t *argl) {
    if ((s->flags & SEL_ALLCOMMANDS) || (cmd->flags & CMD_NOAUTH)) return 1;
    if ((s->bits[id >> 6] >> (id & 63)) & 1) return 1;
    int idx = strchr(cmd->name, '|') ? 2 : 1;
    if (argc <= idx || !s->firstargs || !s->firstargs[id]) return 0;
    for (char **a = s->firstargs[id]; *a; a++)
        if (str_eq_ci(argv[idx], argl[idx], *a)) return 1;
    return 0;
}

static int sel_check(const acl_sel *s, const command *cmd, int id, int argc, const char **argv, const size_t *argl,
                     keys_cache *kc, int *errpos) {
    if (!sel_cmd_ok(s, cmd, id, argc, argv, argl)) return ACL_DENIED_CMD;
    const chan_spec *cs = &cspecs[id];
    int one = !(s->flags & SEL_ALLKEYS) && cs->key_pos > 0 && cs->key_pos < argc;
    if (one && !(cs->key_flags & KS_VARIABLE_FLAGS)) { /* one key, its need known: no key walk */
        if (!key_ok(s, argv[cs->key_pos], argl[cs->key_pos], key_access(cs->key_flags))) {
            *errpos = cs->key_pos;
            return ACL_DENIED_KEY;
        }
    } else if (one && key_ok(s, argv[cs->key_pos], argl[cs->key_pos], ACL_R | ACL_W)) {
        /* one key whose need the arguments decide, and a pattern allows both */
    } else if (!(s->flags & SEL_ALLKEYS) && cmd_has_keys(cmd)) {
        keys_fill(kc, cmd, argc, argv, argl);
        for (int i = 0; i < kc->r.n; i++) {
            int p = kc->r.v[i].pos;
            if (!key_ok(s, argv[p], argl[p], key_access(kc->r.v[i].flags))) {
                *errpos = p;
                return ACL_DENIED_KEY;
            }
        }
    }
    if (!(s->flags & SEL_ALLCHANNELS) && cs->on) {
        int last = cs->last < 0 ? argc + cs->last : cs->last;
        for (int i = cs->first; i <= last && i < argc; i++)
            if (!chan_ok_sel(s, argv[i], argl[i], cs->pattern)) {
                *errpos = i;
                return ACL_DENIED_CHANNEL;
            }
    }
    return ACL_OK;
}

int acl_check(const acl_user *u, const command *cmd, int argc, const char **argv, const size_t *argl, int *errpos) {
    if (u->flags & USER_ALLPERM) return ACL_OK;
    int id = cmd_index(cmd);
    if (id < 0) return ACL_OK;
    keys_cache kc;
    kc.init = 0;
    int relevant = ACL_DENIED_CMD, last = 0;
    *errpos = 0;
    for (int k = 0; k < u->nsels; k++) {
        int pos = 0;
        int r = sel_check(u->sels[k], cmd, id, argc, argv, argl, &kc, &pos);
        if (r == ACL_OK) {
            relevant = ACL_OK;
            break;
        }
        if (r > relevant || (r == relevant && pos > last)) {
            relevant = r;
            last = pos;
        }
    }
    if (kc.init) key_refs_free(&kc.r);
    if (relevant != ACL_OK) *errpos = last;
    return relevant;
}

int acl_full_key_read(const acl_user *u, const command *cmd, int argc, const char **argv, const size_t *argl) {
    if (u->flags & USER_ALLPERM) return 1;
    int id = cmd_index(cmd);
    for (int k = 0; k < u->nsels; k++) {
        const acl_sel *s = u->sels[k];
        if (!sel_cmd_ok(s, cmd, id, argc, argv, argl)) continue;
        if (s->flags & SEL_ALLKEYS) return 1;
        for (int i = 0; i < s->nkeys; i++)
            if ((s->keys[i].flags & ACL_R) && s->keys[i].len == 1 && s->keys[i].p[0] == '*') return 1;
    }
    return 0;
}

void acl_denied_text(int why, const command *cmd, const char *obj, size_t objlen, char *err, size_t el) {
    (void)obj;
    (void)objlen;
    if (why == ACL_DENIED_CMD)
        snprintf(err, el, "NOPERM this user has no permissions to run the '%s' command", cmd->name);
    else if (why == ACL_DENIED_KEY)
        snprintf(err, el, "NOPERM this user has no permissions to access one of the keys used as arguments");
    else
        snprintf(err, el, "NOPERM this user has no permissions to access one of the channels used as arguments");
}
