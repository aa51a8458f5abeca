/* keyspec.c - the keys of a call and how it uses each one, from the key
 * specs of its command row (cmd.h: kflags, or specs/nspecs).
 *
 * This is what COMMAND GETKEYS and GETKEYSANDFLAGS answer and what ACL key
 * permissions test, found the way Redis 7.0 finds them: every spec in order
 * gives its keys (begin at an index or after a keyword, then a range or a
 * counted list), each with the spec's flags. When the specs cannot tell -
 * a spec whose flags vary by the arguments, an unknown or incomplete one,
 * or one that points outside the call - the row's keyflags function (SET,
 * BITFIELD, SORT) or keys function answers instead, the latter with no
 * flags. Routing does not use this: it takes cmd_key_positions. */
#include "cmd/cmd.h"
#include "lib/mem.h"
#include "lib/util.h"
#include <string.h>

int cmd_key_specs(const command *cmd, key_spec *one, const key_spec **specs) {
    if (cmd->nspecs > 0) {
        *specs = cmd->specs;
        return cmd->nspecs;
    }
    if (cmd->first <= 0) {
        *specs = NULL;
        return 0;
    }
    memset(one, 0, sizeof *one);
    one->flags = cmd->kflags;
    one->bs = KS_BS_INDEX;
    one->pos = (int16_t)cmd->first;
    one->fk = KS_FK_RANGE;
    one->a = (int16_t)(cmd->last < 0 ? cmd->last : cmd->last - cmd->first);
    one->b = (int16_t)(cmd->step > 0 ? cmd->step : 1);
    *specs = one;
    return 1;
}

int cmd_has_keys(const command *cmd) {
    if (cmd->keys || cmd->keyflags) return 1;
    key_spec one;
    const key_spec *specs;
    int n = cmd_key_specs(cmd, &one, &specs);
    for (int i = 0; i < n; i++)
        if (!(specs[i].flags & KS_NOT_KEY)) return 1;
    return 0;
}

static void refs_add(key_refs *r, int pos, uint16_t flags) {
    if (r->n == r->cap) {
        int cap = r->cap * 2;
        key_ref *v = zmalloc(sizeof *v * (size_t)cap);
        memcpy(v, r->v, sizeof *v * (size_t)r->n);
        if (r->v != r->buf) zfree(r->v);
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n].pos = pos;
    r->v[r->n].flags = flags;
    r->n++;
}

/* argv index where spec s begins finding keys; 0 when its keyword is absent. */
static int spec_begin(const key_spec *s, int argc, const char **argv, const size_t *argl) {
    if (s->bs == KS_BS_INDEX) return s->pos;
    int start = s->pos > 0 ? s->pos : argc + s->pos;
    int end = s->pos > 0 ? argc - 1 : 1;
    for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (str_eq_ci(argv[i], argl[i], s->keyword)) return i + 1;
    }
    return 0;
}

/* The keys of every spec, or -1 when a spec cannot tell (Redis's
 * getKeysUsingKeySpecs without partial results). */
static int keys_by_specs(const command *cmd, int argc, const char **argv, const size_t *argl, key_refs *r) {
    key_spec one;
    const key_spec *specs;
    int n = cmd_key_specs(cmd, &one, &specs);
    for (int j = 0; j < n; j++) {
        const key_spec *s = &specs[j];
        if (s->flags & KS_NOT_KEY) continue;
        if (s->bs != KS_BS_INDEX && s->bs != KS_BS_KEYWORD) return -1;
        int first = spec_begin(s, argc, argv, argl), last, step;
        if (!first) continue;
        if (s->fk == KS_FK_RANGE) {
            step = s->b;
            if (s->a >= 0)
                last = first + s->a;
            else if (!s->c)
                last = argc + s->a;
            else
                last = first + ((argc - first) / s->c + s->a);
        } else if (s->fk == KS_FK_KEYNUM) {
            step = s->c;
            long long numkeys;
            if (s->a >= argc || first + s->a >= argc) return -1;
            int ki = first + s->a;
            if (!str2ll(argv[ki], argl[ki], &numkeys) || numkeys < 0 || numkeys > argc) return -1;
            first += s->b;
            last = first + (int)numkeys - 1;
        } else {
            return -1;
        }
        if (last >= argc || last < first || first >= argc) return -1;
        for (int i = first; i <= last; i += step > 0 ? step : 1)
            refs_add(r, i, s->flags);
        if (s->flags & KS_INCOMPLETE) return -1;
    }
    return r->n;
}

int cmd_key_refs(const command *cmd, int argc, const char **argv, const size_t *argl, key_refs *r) {
    r->n = 0;
    r->cap = (int)(sizeof r->buf / sizeof r->buf[0]);
    r->v = r->buf;
    key_spec one;
    const key_spec *specs;
    int n = cmd_key_specs(cmd, &one, &specs), keyed = 0, variable = 0;
    for (int i = 0; i < n; i++) {
        keyed |= !(specs[i].flags & KS_NOT_KEY);
        variable |= (specs[i].flags & KS_VARIABLE_FLAGS) != 0;
    }
    if (keyed && !variable) {
        int got = keys_by_specs(cmd, argc, argv, argl, r);
        if (got >= 0) return got;
        r->n = 0;
    }
    if (!cmd->keyflags && !cmd->keys) return 0;
    int posbuf[16];
    uint16_t flagbuf[16] = {0};
    int big = argc > 16; /* the ACL check runs this per call: no allocation for short ones */
    int *pos = big ? zmalloc(sizeof(int) * (size_t)argc) : posbuf;
    uint16_t *flags = big ? zcalloc(sizeof(uint16_t) * (size_t)argc) : flagbuf;
    int max = big ? argc : 16;
    int got = cmd->keyflags ? cmd->keyflags(argc, argv, argl, pos, flags, max) : cmd->keys(argc, argv, argl, pos, max);
    for (int i = 0; i < got; i++)
        refs_add(r, pos[i], flags[i]);
    if (big) {
        zfree(pos);
        zfree(flags);
    }
    return r->n;
}

void key_refs_free(key_refs *r) {
    if (r->v && r->v != r->buf) zfree(r->v);
    r->v = NULL;
    r->n = 0;
}
