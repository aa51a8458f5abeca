/* notify.h - keyspace notifications (notify-keyspace-events): an event
 * about a key becomes a Pub/Sub message on `__keyspace@<db>__:<key>`
 * (message: the event) and/or `__keyevent@<db>__:<event>` (message: the
 * key), published from the calling thread's shard.
 *
 * Command handlers (cmd/) call notify_key with Redis's event name and
 * class; the keyspace itself emits "new" (a key added), "expired" (lazy and
 * active expiry) and "keymiss"; eviction will emit "evicted". The class bits
 * are Redis's, so the configured string reads and prints as in Redis. With
 * the class off (the default) a call costs one relaxed load. */
#ifndef SHOAL_NOTIFY_H
#define SHOAL_NOTIFY_H
#include "server/config.h"
#include <stddef.h>

enum {
    NOTIFY_KEYSPACE = 1 << 0, /* K */
    NOTIFY_KEYEVENT = 1 << 1, /* E */
    NOTIFY_GENERIC = 1 << 2,  /* g */
    NOTIFY_STRING = 1 << 3,   /* $ */
    NOTIFY_LIST = 1 << 4,     /* l */
    NOTIFY_SET = 1 << 5,      /* s */
    NOTIFY_HASH = 1 << 6,     /* h */
    NOTIFY_ZSET = 1 << 7,     /* z */
    NOTIFY_EXPIRED = 1 << 8,  /* x */
    NOTIFY_EVICTED = 1 << 9,  /* e */
    NOTIFY_STREAM = 1 << 10,  /* t */
    NOTIFY_KEY_MISS = 1 << 11, /* m (not part of A) */
    NOTIFY_LOADED = 1 << 12,  /* modules only */
    NOTIFY_MODULE = 1 << 13,  /* d */
    NOTIFY_NEW = 1 << 14,     /* n (not part of A) */
    NOTIFY_ALL = NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET |
                 NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE, /* A */
};

/* The class bits of a notify-keyspace-events string, or -1 for a bad
 * character. */
int notify_parse_flags(const char *s);
/* The string CONFIG GET shows for flags (Redis's order; "A" for all);
 * out has room for 32 bytes. */
void notify_format_flags(int flags, char *out);

/* Publishes event `event` of class `type` about key in database dbid. */
void notify_keyspace_event(int type, const char *event, const char *key, size_t klen, int dbid);

static inline int notify_wanted(int type) {
    return (cfg_get(notify_keyspace_events) & type) != 0;
}
static inline void notify_key(int type, const char *event, const char *key, size_t klen, int dbid) {
    if (__builtin_expect(notify_wanted(type), 0)) notify_keyspace_event(type, event, key, klen, dbid);
}
#endif
