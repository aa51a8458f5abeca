/* acl_check.c - is this command, with these arguments, allowed for this
 * user? (Redis 7.0's ACLCheckAllUserCommandPerm.)
 *
 * Each key argument needs read and/or write permission by how the command
 * uses it, as Redis's key specs say: a key that is read (ACCESS) needs
 * %R, one that is changed, added to or deleted from needs %W, and one only
 * tested for existence or size (EXISTS, TYPE, STRLEN, HEXISTS, ...) needs
 * a matching pattern of either kind. The default comes from the row's
 * flags (readonly: R, write or other: RW); the table below lists the
 * commands whose keys Redis specifies otherwise, one token per key
 * position, the last one repeating. SET and BITFIELD decide by their
 * arguments, as Redis's key functions do.
 *
 * The cost on the hot path is in acl_gate (acl.c): a user with every
 * permission (the default user as it starts) is one flag test. */
#include "cmd/acl.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <stdio.h>
#include <string.h>

enum { KS_PLAIN, KS_SET, KS_BITFIELD, KS_NOTKEY };

typedef struct key_spec {
    uint8_t n;    /* tokens in f (the last repeats) */
    uint8_t f[4]; /* ACL_R / ACL_W / both / 0: needs any matching pattern */
    uint8_t special;
} key_spec;

typedef struct chan_spec {
    int8_t first, last; /* argv range of channels; last < 0 counts from the end */
    uint8_t pattern;
    uint8_t on;
} chan_spec;

static key_spec *kspecs;
static chan_spec *cspecs;

/* clang-format off */
static const struct {
    const char *name, *spec;
} key_table[] = {
    /* tested for existence or size only */
    {"exists", "-"}, {"type", "-"}, {"touch", "-"}, {"strlen", "-"}, {"hlen", "-"}, {"llen", "-"},
    {"scard", "-"}, {"zcard", "-"}, {"xlen", "-"}, {"hexists", "-"}, {"hstrlen", "-"}, {"sismember", "-"},
    {"smismember", "-"}, {"memory|usage", "-"}, {"object|encoding", "-"}, {"object|freq", "-"},
    {"object|idletime", "-"}, {"object|refcount", "-"}, {"ttl", "-"}, {"pttl", "-"}, {"expiretime", "-"},
    {"pexpiretime", "-"}, {"watch", "-"},
    /* written without being read */
    {"del", "W"}, {"unlink", "W"}, {"expire", "W"}, {"pexpire", "W"}, {"expireat", "W"}, {"pexpireat", "W"},
    {"persist", "W"}, {"setnx", "W"}, {"setex", "W"}, {"psetex", "W"}, {"mset", "W"}, {"msetnx", "W"},
    {"append", "W"}, {"setrange", "W"}, {"hset", "W"}, {"hmset", "W"}, {"hsetnx", "W"}, {"hdel", "W"},
    {"sadd", "W"}, {"srem", "W"}, {"zadd", "W"}, {"zincrby", "W"}, {"zrem", "W"}, {"zremrangebyscore", "W"},
    {"zremrangebyrank", "W"}, {"zremrangebylex", "W"}, {"lpush", "W"}, {"rpush", "W"}, {"lpushx", "W"},
    {"rpushx", "W"}, {"linsert", "W"}, {"lset", "W"}, {"ltrim", "W"}, {"lrem", "W"}, {"restore", "W"},
    {"xadd", "W"}, {"xdel", "W"}, {"xtrim", "W"}, {"xsetid", "W"}, {"xack", "W"}, {"xclaim", "W"},
    {"xautoclaim", "W"}, {"xreadgroup", "W"}, {"xgroup|create", "W"}, {"xgroup|setid", "W"},
    {"xgroup|destroy", "W"}, {"xgroup|createconsumer", "W"}, {"xgroup|delconsumer", "W"}, {"pfadd", "W"},
    {"geoadd", "W"},
    /* a destination written from sources read */
    {"bitop", "- W R"}, {"sinterstore", "W R"}, {"sunionstore", "W R"}, {"sdiffstore", "W R"},
    {"zunionstore", "W R"}, {"zinterstore", "W R"}, {"zdiffstore", "W R"}, {"zrangestore", "W R"},
    {"copy", "R W"}, {"sort", "R W"}, {"pfmerge", "RW R"},
    /* a source taken from, a destination added to */
    {"smove", "RW W"}, {"lmove", "RW W"}, {"blmove", "RW W"}, {"rpoplpush", "RW W"}, {"brpoplpush", "RW W"},
    {"rename", "RW W"}, {"renamenx", "RW W"},
    /* a source read, then an optional STORE/STOREDIST destination */
    {"georadius", "R W"}, {"georadiusbymember", "R W"}, {"geosearchstore", "W R"},
};

/* Shard channels are keys to COMMAND GETKEYS and the cluster, but Redis
 * flags them "not a key": the check takes them as channels only. */
static const char *const not_key_table[] = {"spublish", "ssubscribe", "sunsubscribe"};

static const struct {
    const char *name;
    int first, last, pattern;
} chan_table[] = {
    {"publish", 1, 1, 0}, {"spublish", 1, 1, 0}, {"subscribe", 1, -1, 0}, {"ssubscribe", 1, -1, 0},
    {"psubscribe", 1, -1, 1},
};
/* clang-format on */

static const command *find_row(const char *name) {
    const char *bar = strchr(name, '|');
    if (!bar) return cmd_lookup(name, strlen(name));
    const command *p = cmd_lookup(name, (size_t)(bar - name));
    return p ? cmd_lookup_sub(p, bar + 1, strlen(bar + 1)) : NULL;
}

static void parse_spec(key_spec *k, const char *s) {
    k->n = 0;
    while (*s && k->n < 4) {
        while (*s == ' ')
            s++;
        uint8_t f = 0;
        for (; *s && *s != ' '; s++)
            f |= *s == 'R' ? ACL_R : *s == 'W' ? ACL_W : 0;
        k->f[k->n++] = f;
    }
}

static void default_spec(const command *c, void *ud) {
    (void)ud;
    int id = cmd_index(c);
    key_spec *k = &kspecs[id];
    k->n = 1;
    k->f[0] = (c->flags & CMD_READONLY) && !(c->flags & CMD_WRITE) ? ACL_R : ACL_RW;
    for (int i = 0; i < c->nsubs; i++)
        default_spec(&c->subs[i], NULL);
}

void acl_check_init(void) {
    if (kspecs) return;
    int n = cmd_index_count();
    kspecs = zcalloc(sizeof *kspecs * (size_t)(n + 1));
    cspecs = zcalloc(sizeof *cspecs * (size_t)(n + 1));
    cmd_foreach(default_spec, NULL);
    for (size_t i = 0; i < sizeof key_table / sizeof key_table[0]; i++) {
        const command *c = find_row(key_table[i].name);
        if (c) parse_spec(&kspecs[cmd_index(c)], key_table[i].spec);
    }
    const command *c = cmd_lookup("set", 3);
    if (c) kspecs[cmd_index(c)].special = KS_SET;
    c = cmd_lookup("bitfield", 8);
    if (c) kspecs[cmd_index(c)].special = KS_BITFIELD;
    for (size_t i = 0; i < sizeof not_key_table / sizeof not_key_table[0]; i++) {
        c = cmd_lookup(not_key_table[i], strlen(not_key_table[i]));
        if (c) kspecs[cmd_index(c)].special = KS_NOTKEY;
    }
    for (size_t i = 0; i < sizeof chan_table / sizeof chan_table[0]; i++) {
        c = cmd_lookup(chan_table[i].name, strlen(chan_table[i].name));
        if (!c) continue; /* pub/sub not built: nothing to check */
        chan_spec *cs = &cspecs[cmd_index(c)];
        cs->first = (int8_t)chan_table[i].first;
        cs->last = (int8_t)chan_table[i].last;
        cs->pattern = (uint8_t)chan_table[i].pattern;
        cs->on = 1;
    }
}

/* The access the k-th key (of n) of this call needs. */
static int key_access(const key_spec *k, int kth, int argc, const char **argv, const size_t *argl) {
    if (k->special == KS_SET) {
        for (int i = 3; i < argc; i++)
            if (str_eq_ci(argv[i], argl[i], "get")) return ACL_RW;
        return ACL_W;
    }
    if (k->special == KS_BITFIELD) {
        for (int i = 2; i < argc; i++) {
            int rem = argc - i - 1;
            if (str_eq_ci(argv[i], argl[i], "get") && rem >= 2)
                i += 2;
            else if (str_eq_ci(argv[i], argl[i], "overflow") && rem >= 1)
                i += 1;
            else
                return ACL_RW;
        }
        return ACL_R;
    }
    return k->f[kth < k->n ? kth : k->n - 1];
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

typedef struct keys_cache {
    int init, n;
    int *pos;
    int buf[16];
} keys_cache;

static void keys_fill(keys_cache *kc, const command *cmd, int argc, const char **argv, const size_t *argl) {
    if (kc->init) return;
    kc->init = 1;
    kc->pos = argc > 16 ? zmalloc(sizeof(int) * (size_t)argc) : kc->buf;
    kc->n = cmd_key_positions(cmd, argc, argv, argl, kc->pos, argc > 16 ? argc : 16);
}

static int sel_cmd_ok(const acl_sel *s, const command *cmd, int id, int argc, const char **argv, const size_t *argl) {
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
    if (kspecs[id].special == KS_NOTKEY) {
        /* no keys: the channels below */
    } else if (!(s->flags & SEL_ALLKEYS) && cmd->keys) {
        keys_fill(kc, cmd, argc, argv, argl);
        const key_spec *k = &kspecs[id];
        for (int i = 0; i < kc->n; i++) {
            int p = kc->pos[i];
            if (!key_ok(s, argv[p], argl[p], key_access(k, i, argc, argv, argl))) {
                *errpos = p;
                return ACL_DENIED_KEY;
            }
        }
    } else if (!(s->flags & SEL_ALLKEYS) && cmd->first > 0) { /* the key range of the row, walked directly */
        const key_spec *k = &kspecs[id];
        int last = cmd->last < 0 ? argc + cmd->last : cmd->last, step = cmd->step > 0 ? cmd->step : 1;
        for (int p = cmd->first, i = 0; p <= last && p < argc; p += step, i++)
            if (!key_ok(s, argv[p], argl[p], key_access(k, i, argc, argv, argl))) {
                *errpos = p;
                return ACL_DENIED_KEY;
            }
    }
    const chan_spec *cs = &cspecs[id];
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
    kc.pos = NULL;
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
    if (kc.pos && kc.pos != kc.buf) zfree(kc.pos);
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
