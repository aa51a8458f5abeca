/* notify.c - see notify.h. */
#include "shard/notify.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "shard/pubsub.h"
#include "shard/shard.h"
#include <stdio.h>
#include <string.h>

int notify_parse_flags(const char *s) {
    static const char *const chars = "g$lshzxeKEtmdn";
    static const int bits[] = {NOTIFY_GENERIC, NOTIFY_STRING,  NOTIFY_LIST,     NOTIFY_SET,      NOTIFY_HASH,
                               NOTIFY_ZSET,    NOTIFY_EXPIRED, NOTIFY_EVICTED,  NOTIFY_KEYSPACE, NOTIFY_KEYEVENT,
                               NOTIFY_STREAM,  NOTIFY_KEY_MISS, NOTIFY_MODULE,  NOTIFY_NEW};
    int flags = 0;
    for (; *s; s++) {
        if (*s == 'A') {
            flags |= NOTIFY_ALL;
            continue;
        }
        const char *k = strchr(chars, *s);
        if (!k) return -1;
        flags |= bits[k - chars];
    }
    return flags;
}

void notify_format_flags(int flags, char *out) {
    char *p = out;
    if ((flags & NOTIFY_ALL) == NOTIFY_ALL) {
        *p++ = 'A';
    } else {
        static const char *const chars = "g$lshzxetdn";
        static const int bits[] = {NOTIFY_GENERIC, NOTIFY_STRING,  NOTIFY_LIST,   NOTIFY_SET,
                                   NOTIFY_HASH,    NOTIFY_ZSET,    NOTIFY_EXPIRED, NOTIFY_EVICTED,
                                   NOTIFY_STREAM,  NOTIFY_MODULE,  NOTIFY_NEW};
        for (int i = 0; chars[i]; i++)
            if (flags & bits[i]) *p++ = chars[i];
    }
    if (flags & NOTIFY_KEYSPACE) *p++ = 'K';
    if (flags & NOTIFY_KEYEVENT) *p++ = 'E';
    if (flags & NOTIFY_KEY_MISS) *p++ = 'm';
    *p = 0;
}

/* "__key<what>@<db>__:<tail>" into buf (grown when the tail is long). */
static size_t channel(buf *b, const char *what, int dbid, const char *tail, size_t tl) {
    b->len = 0;
    buf_printf(b, "__key%s@%d__:", what, dbid);
    buf_add(b, tail, tl);
    return b->len;
}

void notify_keyspace_event(int type, const char *event, const char *key, size_t klen, int dbid) {
    int flags = (int)cfg_get(notify_keyspace_events);
    if (!(flags & type) || !pubsub_any()) return;
    shard *sh = shard_self();
    if (!sh) return; /* not a shard's thread: no Pub/Sub here */
    buf ch = {0};
    if (flags & NOTIFY_KEYSPACE) {
        channel(&ch, "space", dbid, key, klen);
        pubsub_publish(sh, PS_CHANNEL, ch.p, ch.len, event, strlen(event));
    }
    if (flags & NOTIFY_KEYEVENT) {
        channel(&ch, "event", dbid, event, strlen(event));
        pubsub_publish(sh, PS_CHANNEL, ch.p, ch.len, key, klen);
    }
    buf_free(&ch);
}
