/* msg.c - see msg.h. */
#include "shard/msg.h"
#include "lib/mem.h"

msg *msg_new(int type, int from) {
    msg *m = zcalloc(sizeof *m);
    m->type = (uint8_t)type;
    m->from = (uint8_t)from;
    return m;
}

void msg_free(msg *m) {
    if (!m) return;
    zfree(m->items);
    buf_free(&m->args);
    buf_free(&m->replies);
    zfree(m);
}

batch_item *msg_batch_add(msg *m, const struct command *cmd, int argc, const char **argv, const size_t *argl) {
    if (m->nitems == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->items = zrealloc(m->items, m->cap * sizeof *m->items);
    }
    batch_item *it = &m->items[m->nitems++];
    memset(it, 0, sizeof *it);
    it->cmd = cmd;
    it->argc = (uint32_t)argc;
    it->args = m->args.len;
    size_t total = 0;
    for (int i = 0; i < argc; i++) total += 8 + argl[i];
    buf_reserve(&m->args, total);
    for (int i = 0; i < argc; i++) {
        uint64_t l = argl[i];
        buf_add(&m->args, &l, 8);
        buf_add(&m->args, argv[i], argl[i]);
    }
    return it;
}

const char *msg_batch_arg(const msg *m, const batch_item *it, uint32_t i, size_t *len) {
    const char *p = m->args.p + it->args;
    uint64_t l;
    for (;;) {
        memcpy(&l, p, 8);
        if (i-- == 0) break;
        p += 8 + l;
    }
    *len = (size_t)l;
    return p + 8;
}

void msg_batch_args(const msg *m, const batch_item *it, const char **argv, size_t *argl) {
    const char *p = m->args.p + it->args;
    for (uint32_t i = 0; i < it->argc; i++) {
        uint64_t l;
        memcpy(&l, p, 8);
        argv[i] = p + 8;
        argl[i] = (size_t)l;
        p += 8 + l;
    }
}
