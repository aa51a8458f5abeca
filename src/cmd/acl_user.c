/* acl_user.c - the ACL model: users and selectors, the rules that change
 * them, and their descriptions (ACL LIST, GETUSER, SAVE). See acl.h.
 *
 * Command permissions are a bitmap over cmd_index (commands and their
 * subcommands), plus a last "future commands" bit that only +@all sets
 * and -@all clears: a description starts from "+@all" when it is set, else
 * from "-@all". The description is computed from the bitmap as Redis 7.0
 * does: first the categories that fit best (more commands in common than
 * different, fewest differences first), then single commands, subcommands
 * and allowed first arguments for what is left. So "+@all -@string +get"
 * reads back as it was given, and redundant rules disappear. */
#include "cmd/acl.h"
#include "lib/mem.h"
#include "lib/sha256.h"
#include "lib/util.h"
#include "server/config.h"
#include <ctype.h>
#include <limits.h>
#include <string.h>

static acl_user **users; /* sorted by name (bytes) */
static int nusers, capusers;
static acl_user *default_user;

static int nbits(void) { return cmd_index_count() + 1; }
static int future_bit(void) { return cmd_index_count(); }
static size_t bits_words(void) { return ((size_t)nbits() + 63) / 64; }

static int bit_get(const acl_sel *s, int i) { return (int)((s->bits[i >> 6] >> (i & 63)) & 1); }
static void bit_put(acl_sel *s, int i, int v) {
    if (v)
        s->bits[i >> 6] |= 1ull << (i & 63);
    else
        s->bits[i >> 6] &= ~(1ull << (i & 63));
}

/* ---- selectors ---- */

static int pubsub_default_all(void) { return cfg_get(acl_pubsub_default) == 0; /* allchannels */ }

static acl_sel *sel_new(void) {
    acl_sel *s = zcalloc(sizeof *s);
    s->bits = zcalloc(bits_words() * 8);
    if (pubsub_default_all()) s->flags |= SEL_ALLCHANNELS;
    return s;
}

static void firstargs_reset_one(acl_sel *s, int id) {
    if (!s->firstargs || !s->firstargs[id]) return;
    for (char **a = s->firstargs[id]; *a; a++)
        zfree(*a);
    zfree(s->firstargs[id]);
    s->firstargs[id] = NULL;
}

static void firstargs_reset(acl_sel *s) {
    if (!s->firstargs) return;
    for (int i = 0; i < nbits(); i++)
        firstargs_reset_one(s, i);
    zfree(s->firstargs);
    s->firstargs = NULL;
}

static void pats_free(acl_pat *p, int n) {
    for (int i = 0; i < n; i++)
        zfree(p[i].p);
    zfree(p);
}

static void sel_free(acl_sel *s) {
    if (!s) return;
    firstargs_reset(s);
    zfree(s->bits);
    pats_free(s->keys, s->nkeys);
    pats_free(s->chans, s->nchans);
    zfree(s);
}

static acl_pat *pats_copy(const acl_pat *p, int n) {
    if (!n) return NULL;
    acl_pat *o = zmalloc(sizeof *o * (size_t)n);
    for (int i = 0; i < n; i++) {
        o[i] = p[i];
        o[i].p = zstrndup(p[i].p, p[i].len);
    }
    return o;
}

static acl_sel *sel_copy(const acl_sel *s) {
    acl_sel *o = zcalloc(sizeof *o);
    o->flags = s->flags;
    o->bits = zmalloc(bits_words() * 8);
    memcpy(o->bits, s->bits, bits_words() * 8);
    if (s->firstargs) {
        o->firstargs = zcalloc(sizeof(char **) * (size_t)nbits());
        for (int i = 0; i < nbits(); i++) {
            if (!s->firstargs[i]) continue;
            int n = 0;
            while (s->firstargs[i][n])
                n++;
            o->firstargs[i] = zcalloc(sizeof(char *) * (size_t)(n + 1));
            for (int k = 0; k < n; k++)
                o->firstargs[i][k] = zstrndup(s->firstargs[i][k], strlen(s->firstargs[i][k]));
        }
    }
    o->keys = pats_copy(s->keys, s->nkeys);
    o->nkeys = s->nkeys;
    o->chans = pats_copy(s->chans, s->nchans);
    o->nchans = s->nchans;
    return o;
}

/* Allows or forbids one command; a container takes its subcommands along. */
static void change_perm(acl_sel *s, const command *c, int allow) {
    int id = cmd_index(c);
    if (id < 0) return;
    bit_put(s, id, allow);
    if (!allow) s->flags &= ~SEL_ALLCOMMANDS;
    firstargs_reset_one(s, id);
    for (int i = 0; i < c->nsubs; i++) {
        int sid = cmd_index(&c->subs[i]);
        if (sid >= 0) bit_put(s, sid, allow);
    }
}

typedef struct cat_walk {
    acl_sel *s;
    uint32_t mask;
    int allow;
    unsigned long on, off;
} cat_walk;

static void cat_set_row(const command *c, cat_walk *w) {
    if (cmd_acl_cats(c) & w->mask) change_perm(w->s, c, w->allow);
    for (int i = 0; i < c->nsubs; i++)
        if (cmd_acl_cats(&c->subs[i]) & w->mask) change_perm(w->s, &c->subs[i], w->allow);
}

/* Counts top-level commands only, as Redis 7.0 does (setting a category
 * reaches subcommands too). */
static void cat_count_row(const command *c, cat_walk *w) {
    if (cmd_acl_cats(c) & w->mask) {
        if (bit_get(w->s, cmd_index(c)))
            w->on++;
        else
            w->off++;
    }
}

static void cat_set_cb(const command *c, void *ud) { cat_set_row(c, ud); }
static void cat_count_cb(const command *c, void *ud) { cat_count_row(c, ud); }

static void cat_set(acl_sel *s, int cat, int allow) {
    cat_walk w = {.s = s, .mask = 1u << cat, .allow = allow};
    cmd_foreach(cat_set_cb, &w);
}

static void cat_count(acl_sel *s, int cat, unsigned long *on, unsigned long *off) {
    cat_walk w = {.s = s, .mask = 1u << cat};
    cmd_foreach(cat_count_cb, &w);
    *on = w.on;
    *off = w.off;
}

static void all_commands(acl_sel *s, int allow) {
    memset(s->bits, allow ? 0xff : 0, bits_words() * 8);
    if (allow)
        s->flags |= SEL_ALLCOMMANDS;
    else
        s->flags &= ~SEL_ALLCOMMANDS;
    firstargs_reset(s);
}

static int has_space(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)p[i]) || p[i] == 0) return 1;
    return 0;
}

/* The command named by a rule: "get", "config|get" (case-insensitive). */
static const command *lookup_full(const char *p, size_t n) {
    const char *bar = memchr(p, '|', n);
    if (!bar) return cmd_lookup(p, n);
    if (memchr(bar + 1, '|', n - (size_t)(bar - p) - 1)) return NULL;
    const command *parent = cmd_lookup(p, (size_t)(bar - p));
    if (!parent || !parent->nsubs) return NULL;
    return cmd_lookup_sub(parent, bar + 1, n - (size_t)(bar - p) - 1);
}

static void add_firstarg(acl_sel *s, int id, const char *a, size_t n) {
    if (!s->firstargs) s->firstargs = zcalloc(sizeof(char **) * (size_t)nbits());
    int k = 0;
    if (s->firstargs[id])
        for (; s->firstargs[id][k]; k++)
            if (strlen(s->firstargs[id][k]) == n && !strncasecmp(s->firstargs[id][k], a, n)) return;
    s->firstargs[id] = zrealloc(s->firstargs[id], sizeof(char *) * (size_t)(k + 2));
    s->firstargs[id][k] = zstrndup(a, n);
    s->firstargs[id][k + 1] = NULL;
}

static int set_err(char *err, size_t el, const char *why) {
    if (err && el) {
        size_t n = strlen(why);
        if (n >= el) n = el - 1;
        memcpy(err, why, n);
        err[n] = 0;
    }
    return -1;
}

#define E_SYNTAX "Syntax error"
#define E_UNKNOWN "Unknown command or category name in ACL"
#define E_KEYS_ALL                                                                                                     \
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try "     \
    "'resetkeys' to start with an empty list of patterns"
#define E_CHANS_ALL                                                                                                    \
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. "     \
    "Try 'resetchannels' to start with an empty list of channels"
#define E_NOPASS "The password you are trying to remove from the user does not exist"
#define E_BADHASH "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
#define E_FIRSTARG "Allowing first-arg of a subcommand is not supported"

static int eq_ci(const char *op, size_t n, const char *lit) { return str_eq_ci(op, n, lit); }

static void pats_clear(acl_pat **p, int *n) {
    pats_free(*p, *n);
    *p = NULL;
    *n = 0;
}

static int pat_kind(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\')
            return s[i] == '*' && i == len - 1 ? PAT_PREFIX : PAT_GLOB;
    return PAT_EXACT;
}

static void pat_add(acl_pat **p, int *n, const char *s, size_t len, int flags) {
    for (int i = 0; i < *n; i++)
        if ((*p)[i].len == len && !memcmp((*p)[i].p, s, len)) {
            (*p)[i].flags |= flags;
            return;
        }
    *p = zrealloc(*p, sizeof **p * (size_t)(*n + 1));
    (*p)[*n].p = zstrndup(s, len);
    (*p)[*n].len = len;
    (*p)[*n].flags = flags;
    (*p)[*n].kind = pat_kind(s, len);
    (*n)++;
}

/* One rule on one selector (Redis's ACLSetSelector). */
static int sel_rule(acl_sel *s, const char *op, size_t n, char *err, size_t el) {
    if (n == 0) return set_err(err, el, E_SYNTAX);
    if (eq_ci(op, n, "allkeys") || (n == 2 && !memcmp(op, "~*", 2))) {
        s->flags |= SEL_ALLKEYS;
        pats_clear(&s->keys, &s->nkeys);
    } else if (eq_ci(op, n, "resetkeys")) {
        s->flags &= ~SEL_ALLKEYS;
        pats_clear(&s->keys, &s->nkeys);
    } else if (eq_ci(op, n, "allchannels") || (n == 2 && !memcmp(op, "&*", 2))) {
        s->flags |= SEL_ALLCHANNELS;
        pats_clear(&s->chans, &s->nchans);
    } else if (eq_ci(op, n, "resetchannels")) {
        s->flags &= ~SEL_ALLCHANNELS;
        pats_clear(&s->chans, &s->nchans);
    } else if (eq_ci(op, n, "allcommands") || eq_ci(op, n, "+@all")) {
        all_commands(s, 1);
    } else if (eq_ci(op, n, "nocommands") || eq_ci(op, n, "-@all")) {
        all_commands(s, 0);
    } else if (op[0] == '~' || op[0] == '%') {
        if (s->flags & SEL_ALLKEYS) return set_err(err, el, E_KEYS_ALL);
        int flags = 0;
        size_t off = 1;
        if (op[0] == '%') {
            int tilde = 0;
            for (; off < n; off++) {
                char ch = (char)toupper((unsigned char)op[off]);
                if (ch == 'R' && !(flags & ACL_R))
                    flags |= ACL_R;
                else if (ch == 'W' && !(flags & ACL_W))
                    flags |= ACL_W;
                else if (op[off] == '~') {
                    off++;
                    tilde = 1;
                    break;
                } else
                    return set_err(err, el, E_SYNTAX);
            }
            if (!flags || !tilde) return set_err(err, el, E_SYNTAX);
        } else {
            flags = ACL_RW;
        }
        if (has_space(op + off, n - off)) return set_err(err, el, E_SYNTAX);
        if (flags == ACL_RW && n - off == 1 && op[off] == '*') {
            s->flags |= SEL_ALLKEYS;
            pats_clear(&s->keys, &s->nkeys);
        } else {
            pat_add(&s->keys, &s->nkeys, op + off, n - off, flags);
        }
    } else if (op[0] == '&') {
        if (s->flags & SEL_ALLCHANNELS) return set_err(err, el, E_CHANS_ALL);
        if (has_space(op + 1, n - 1)) return set_err(err, el, E_SYNTAX);
        pat_add(&s->chans, &s->nchans, op + 1, n - 1, ACL_RW);
    } else if ((op[0] == '+' || op[0] == '-') && n > 1 && op[1] == '@') {
        int cat = cmd_acl_cat_index(op + 2, n - 2);
        if (cat < 0) return set_err(err, el, E_UNKNOWN);
        cat_set(s, cat, op[0] == '+');
    } else if (op[0] == '+' && n > 1) {
        const char *bar = NULL;
        for (size_t i = n; i > 1; i--)
            if (op[i - 1] == '|') {
                bar = op + i - 1;
                break;
            }
        if (!bar) {
            const command *c = cmd_lookup(op + 1, n - 1);
            if (!c) return set_err(err, el, E_UNKNOWN);
            change_perm(s, c, 1);
        } else {
            const char *name = op + 1;
            size_t namel = (size_t)(bar - name);
            const char *sub = bar + 1;
            size_t subl = n - (size_t)(sub - op);
            const command *c = lookup_full(name, namel);
            if (!c) return set_err(err, el, E_UNKNOWN);
            if (memchr(name, '|', namel)) return set_err(err, el, E_FIRSTARG); /* c is a subcommand */
            if (subl == 0) return set_err(err, el, E_SYNTAX);
            if (c->nsubs) {
                const command *sc = cmd_lookup_sub(c, sub, subl);
                if (!sc) return set_err(err, el, E_UNKNOWN);
                change_perm(s, sc, 1);
            } else {
                add_firstarg(s, cmd_index(c), sub, subl);
            }
        }
    } else if (op[0] == '-' && n > 1) {
        const command *c = lookup_full(op + 1, n - 1);
        if (!c) return set_err(err, el, E_UNKNOWN);
        change_perm(s, c, 0);
    } else {
        return set_err(err, el, E_SYNTAX);
    }
    return 0;
}

/* "(rule rule ...)" -> a new selector, or NULL with err. */
static acl_sel *sel_from_set(const char *op, size_t n, char *err, size_t el) {
    acl_sel *s = sel_new();
    size_t i = 1, end = n - 1;
    while (i < end) {
        while (i < end && isspace((unsigned char)op[i]))
            i++;
        size_t j = i;
        while (j < end && !isspace((unsigned char)op[j]))
            j++;
        if (j > i && sel_rule(s, op + i, j - i, err, el) < 0) {
            sel_free(s);
            return NULL;
        }
        i = j;
    }
    return s;
}

static int hex_hash_ok(const char *p, size_t n) {
    if (n != 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

static void pass_add(acl_user *u, const char *hex) {
    for (int i = 0; i < u->npass; i++)
        if (!memcmp(u->pass[i], hex, 64)) return;
    u->pass = zrealloc(u->pass, sizeof *u->pass * (size_t)(u->npass + 1));
    memcpy(u->pass[u->npass], hex, 65);
    u->npass++;
}

static int pass_del(acl_user *u, const char *hex) {
    for (int i = 0; i < u->npass; i++)
        if (!memcmp(u->pass[i], hex, 64)) {
            memmove(u->pass + i, u->pass + i + 1, sizeof *u->pass * (size_t)(u->npass - i - 1));
            u->npass--;
            return 0;
        }
    return -1;
}

static void clear_selectors(acl_user *u) {
    for (int i = 1; i < u->nsels; i++)
        sel_free(u->sels[i]);
    u->nsels = 1;
}

int acl_user_rule(acl_user *u, const char *op, size_t n, char *err, size_t el) {
    int rc = 0;
    if (n == 0) return 0; /* an empty rule does nothing, as in Redis */
    if (eq_ci(op, n, "on")) {
        u->flags |= USER_ON;
    } else if (eq_ci(op, n, "off")) {
        u->flags &= ~USER_ON;
    } else if (eq_ci(op, n, "skip-sanitize-payload")) {
        u->flags = (u->flags | USER_SKIP_SANITIZE) & ~USER_SANITIZE;
    } else if (eq_ci(op, n, "sanitize-payload")) {
        u->flags = (u->flags | USER_SANITIZE) & ~USER_SKIP_SANITIZE;
    } else if (eq_ci(op, n, "nopass")) {
        u->flags |= USER_NOPASS;
        u->npass = 0;
    } else if (eq_ci(op, n, "resetpass")) {
        u->flags &= ~USER_NOPASS;
        u->npass = 0;
    } else if (n >= 1 && op[0] == '>') {
        char hex[65];
        sha256_hex(op + 1, n - 1, hex);
        pass_add(u, hex);
        u->flags &= ~USER_NOPASS;
    } else if (n >= 1 && op[0] == '#') {
        if (!hex_hash_ok(op + 1, n - 1)) return set_err(err, el, E_BADHASH);
        char hex[65];
        memcpy(hex, op + 1, 64);
        hex[64] = 0;
        pass_add(u, hex);
        u->flags &= ~USER_NOPASS;
    } else if (n >= 1 && (op[0] == '<' || op[0] == '!')) {
        char hex[65];
        if (op[0] == '<') {
            sha256_hex(op + 1, n - 1, hex);
        } else {
            if (!hex_hash_ok(op + 1, n - 1)) return set_err(err, el, E_BADHASH);
            memcpy(hex, op + 1, 64);
            hex[64] = 0;
        }
        if (pass_del(u, hex) < 0) return set_err(err, el, E_NOPASS);
    } else if (n >= 2 && op[0] == '(' && op[n - 1] == ')') {
        acl_sel *s = sel_from_set(op, n, err, el);
        if (!s) return -1;
        u->sels = zrealloc(u->sels, sizeof *u->sels * (size_t)(u->nsels + 1));
        u->sels[u->nsels++] = s;
    } else if (eq_ci(op, n, "clearselectors")) {
        clear_selectors(u);
    } else if (eq_ci(op, n, "reset")) {
        u->flags &= ~USER_NOPASS;
        u->npass = 0;
        acl_sel *r = u->sels[0];
        r->flags &= ~(SEL_ALLKEYS | SEL_ALLCHANNELS);
        pats_clear(&r->keys, &r->nkeys);
        pats_clear(&r->chans, &r->nchans);
        if (pubsub_default_all()) r->flags |= SEL_ALLCHANNELS;
        u->flags &= ~USER_ON;
        u->flags = (u->flags | USER_SANITIZE) & ~USER_SKIP_SANITIZE;
        clear_selectors(u);
        all_commands(r, 0);
    } else {
        rc = sel_rule(u->sels[0], op, n, err, el);
    }
    acl_user_refresh(u);
    return rc;
}

int acl_user_rules(acl_user *u, int n, const char **ops, const size_t *lens, int *bad, char *err, size_t el) {
    for (int i = 0; i < n; i++) {
        /* A selector over several words: "(~k" "+get)" */
        if (lens[i] > 0 && ops[i][0] == '(' && ops[i][lens[i] - 1] != ')') {
            buf b = {0};
            int j = i;
            for (; j < n; j++) {
                if (j > i) buf_addc(&b, ' ');
                buf_add(&b, ops[j], lens[j]);
                if (j > i && lens[j] > 0 && ops[j][lens[j] - 1] == ')') break;
            }
            if (j == n) {
                buf_free(&b);
                if (bad) *bad = i;
                return set_err(err, el, "Unmatched parenthesis");
            }
            int rc = acl_user_rule(u, b.p, b.len, err, el);
            buf_free(&b);
            if (rc < 0) {
                if (bad) *bad = i;
                return -1;
            }
            i = j;
            continue;
        }
        if (acl_user_rule(u, ops[i], lens[i], err, el) < 0) {
            if (bad) *bad = i;
            return -1;
        }
    }
    return 0;
}

void acl_user_refresh(acl_user *u) {
    const acl_sel *r = u->sels[0];
    int all = (r->flags & (SEL_ALLKEYS | SEL_ALLCHANNELS | SEL_ALLCOMMANDS)) ==
              (SEL_ALLKEYS | SEL_ALLCHANNELS | SEL_ALLCOMMANDS);
    if (all)
        u->flags |= USER_ALLPERM;
    else
        u->flags &= ~USER_ALLPERM;
}

/* ---- users ---- */

acl_user *acl_user_new(const char *name, size_t len) {
    acl_user *u = zcalloc(sizeof *u);
    u->name = zstrndup(name, len);
    u->namelen = len;
    u->sels = zmalloc(sizeof *u->sels);
    u->sels[0] = sel_new();
    u->nsels = 1;
    return u;
}

void acl_user_free(acl_user *u) {
    if (!u) return;
    for (int i = 0; i < u->nsels; i++)
        sel_free(u->sels[i]);
    zfree(u->sels);
    zfree(u->pass);
    zfree(u->name);
    zfree(u);
}

acl_user *acl_user_copy(const acl_user *u) {
    acl_user *o = zcalloc(sizeof *o);
    o->name = zstrndup(u->name, u->namelen);
    o->namelen = u->namelen;
    o->flags = u->flags;
    if (u->npass) {
        o->pass = zmalloc(sizeof *o->pass * (size_t)u->npass);
        memcpy(o->pass, u->pass, sizeof *o->pass * (size_t)u->npass);
    }
    o->npass = u->npass;
    o->sels = zmalloc(sizeof *o->sels * (size_t)u->nsels);
    for (int i = 0; i < u->nsels; i++)
        o->sels[i] = sel_copy(u->sels[i]);
    o->nsels = u->nsels;
    return o;
}

/* Moves o's content into u (u keeps its address; o is freed). */
static void user_take(acl_user *u, acl_user *o) {
    for (int i = 0; i < u->nsels; i++)
        sel_free(u->sels[i]);
    zfree(u->sels);
    zfree(u->pass);
    u->flags = o->flags;
    u->pass = o->pass;
    u->npass = o->npass;
    u->sels = o->sels;
    u->nsels = o->nsels;
    zfree(o->name);
    zfree(o);
}

int acl_name_ok(const char *name, size_t len) { return !has_space(name, len); }

static int name_cmp(const acl_user *u, const char *name, size_t len) {
    size_t m = u->namelen < len ? u->namelen : len;
    int c = memcmp(u->name, name, m);
    if (c) return c;
    return u->namelen < len ? -1 : u->namelen > len;
}

static int find_pos(const char *name, size_t len, int *found) {
    int lo = 0, hi = nusers;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = name_cmp(users[mid], name, len);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

acl_user *acl_find(const char *name, size_t len) {
    int found, i = find_pos(name, len, &found);
    return found ? users[i] : NULL;
}

int acl_count(void) { return nusers; }
acl_user *acl_at(int i) { return i >= 0 && i < nusers ? users[i] : NULL; }
acl_user *acl_default_user(void) { return default_user; }

acl_user *acl_put(acl_user *u) {
    int found, i = find_pos(u->name, u->namelen, &found);
    if (found) { /* sessions point at the user: it keeps its address */
        user_take(users[i], u);
        return NULL;
    }
    if (nusers == capusers) {
        capusers = capusers ? capusers * 2 : 16;
        users = zrealloc(users, sizeof *users * (size_t)capusers);
    }
    memmove(users + i + 1, users + i, sizeof *users * (size_t)(nusers - i));
    users[i] = u;
    nusers++;
    return NULL;
}

int acl_remove(const char *name, size_t len) {
    int found, i = find_pos(name, len, &found);
    if (!found || users[i] == default_user) return -1;
    memmove(users + i, users + i + 1, sizeof *users * (size_t)(nusers - i - 1));
    nusers--;
    return 0;
}

void acl_replace_all(acl_user **nu, int n, void (*kill)(acl_user *old, void *ud), void *ud) {
    acl_user **old = users;
    int nold = nusers;
    users = NULL;
    nusers = capusers = 0;
    for (int i = 0; i < n; i++) {
        if (nu[i]->namelen == 7 && !memcmp(nu[i]->name, "default", 7)) {
            user_take(default_user, nu[i]);
            acl_put(default_user);
        } else {
            acl_put(nu[i]);
        }
    }
    if (!acl_find("default", 7)) acl_put(default_user);
    for (int i = 0; i < nold; i++) {
        if (old[i] == default_user) continue;
        if (kill) kill(old[i], ud);
        acl_user_free(old[i]);
    }
    zfree(old);
}

int acl_user_check_pass(const acl_user *u, const char *pass, size_t len) {
    if (!(u->flags & USER_ON)) return 0;
    if (u->flags & USER_NOPASS) return 1;
    char hex[65];
    sha256_hex(pass, len, hex);
    int ok = 0;
    for (int i = 0; i < u->npass; i++) {
        unsigned diff = 0;
        for (int k = 0; k < 64; k++)
            diff |= (unsigned char)(hex[k] ^ u->pass[i][k]);
        ok |= diff == 0;
    }
    return ok;
}

void acl_init(void) {
    if (default_user) return;
    default_user = acl_user_new("default", 7);
    static const char *const rules[] = {"+@all", "~*", "&*", "on", "nopass"};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        acl_user_rule(default_user, rules[i], strlen(rules[i]), NULL, 0);
    acl_put(default_user);
}

/* ---- descriptions ---- */

static void describe_pat(const acl_pat *p, buf *out) {
    if (p->flags == ACL_R)
        buf_adds(out, "%R~");
    else if (p->flags == ACL_W)
        buf_adds(out, "%W~");
    else
        buf_addc(out, '~');
    buf_add(out, p->p, p->len);
}

void acl_sel_keys(const acl_sel *s, buf *out) {
    if (s->flags & SEL_ALLKEYS) {
        buf_adds(out, "~*");
        return;
    }
    for (int i = 0; i < s->nkeys; i++) {
        if (i) buf_addc(out, ' ');
        describe_pat(&s->keys[i], out);
    }
}

void acl_sel_channels(const acl_sel *s, buf *out) {
    if (s->flags & SEL_ALLCHANNELS) {
        buf_adds(out, "&*");
        return;
    }
    for (int i = 0; i < s->nchans; i++) {
        if (i) buf_addc(out, ' ');
        buf_addc(out, '&');
        buf_add(out, s->chans[i].p, s->chans[i].len);
    }
}

typedef struct diff_walk {
    const acl_sel *user;
    acl_sel *fake;
    buf *out;
} diff_walk;

static void emit(buf *out, char sign, const char *name) {
    buf_addc(out, sign);
    buf_adds(out, name);
    buf_addc(out, ' ');
}

static void diff_row(const command *c, void *ud) {
    diff_walk *w = ud;
    int id = cmd_index(c);
    int ub = bit_get(w->user, id), fb = bit_get(w->fake, id);
    if (ub != fb) {
        emit(w->out, ub ? '+' : '-', c->name);
        change_perm(w->fake, c, ub);
    }
    for (int i = 0; i < c->nsubs; i++) {
        int sid = cmd_index(&c->subs[i]);
        int us = bit_get(w->user, sid), fs = bit_get(w->fake, sid);
        if (us != fs) {
            emit(w->out, us ? '+' : '-', c->subs[i].name);
            change_perm(w->fake, &c->subs[i], us);
        }
    }
    if (!ub && w->user->firstargs && w->user->firstargs[id])
        for (char **a = w->user->firstargs[id]; *a; a++) {
            buf_addc(w->out, '+');
            buf_adds(w->out, c->name);
            buf_addc(w->out, '|');
            buf_adds(w->out, *a);
            buf_addc(w->out, ' ');
        }
}

void acl_sel_commands(const acl_sel *s, buf *out) {
    size_t start = out->len;
    acl_sel *fake = sel_new(), *temp = sel_new();
    int additive = !bit_get(s, future_bit());
    buf_adds(out, additive ? "-@all " : "+@all ");
    all_commands(fake, !additive);
    memcpy(temp->bits, s->bits, bits_words() * 8);
    int ncat = cmd_acl_cat_count();
    char applied[32] = {0};
    for (;;) {
        int best = -1;
        unsigned long mindiff = ULONG_MAX, maxsame = 0;
        for (int j = 0; j < ncat && j < 32; j++) {
            if (applied[j]) continue;
            unsigned long on, off;
            cat_count(temp, j, &on, &off);
            unsigned long diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) break;
        cat_set(fake, best, additive);
        cat_set(temp, best, !additive);
        buf_addc(out, additive ? '+' : '-');
        buf_addc(out, '@');
        buf_adds(out, cmd_acl_cat_name(best));
        buf_addc(out, ' ');
        applied[best] = 1;
    }
    diff_walk w = {.user = s, .fake = fake, .out = out};
    cmd_foreach(diff_row, &w);
    if (out->len > start) out->len--; /* the last space */
    sel_free(fake);
    sel_free(temp);
}

static void describe_sel(const acl_sel *s, buf *out) {
    size_t at = out->len;
    acl_sel_keys(s, out);
    if (out->len > at) buf_addc(out, ' ');
    if (s->flags & SEL_ALLCHANNELS) {
        buf_adds(out, "&* ");
    } else {
        buf_adds(out, "resetchannels ");
        at = out->len;
        acl_sel_channels(s, out);
        if (out->len > at) buf_addc(out, ' ');
    }
    acl_sel_commands(s, out);
}

void acl_user_describe(const acl_user *u, buf *out) {
    buf_adds(out, u->flags & USER_ON ? "on" : "off");
    if (u->flags & USER_NOPASS) buf_adds(out, " nopass");
    if (u->flags & USER_SKIP_SANITIZE) buf_adds(out, " skip-sanitize-payload");
    if (u->flags & USER_SANITIZE) buf_adds(out, " sanitize-payload");
    for (int i = 0; i < u->npass; i++) {
        buf_adds(out, " #");
        buf_add(out, u->pass[i], 64);
    }
    buf_addc(out, ' ');
    describe_sel(u->sels[0], out);
    for (int i = 1; i < u->nsels; i++) {
        buf_adds(out, " (");
        describe_sel(u->sels[i], out);
        buf_addc(out, ')');
    }
}
