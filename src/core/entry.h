/* entry.h - one key of the keyspace, stored in a single allocation.
 *
 *   0        8      9        12
 *   +--------+------+--------+-------------+-----------+------+---------+
 *   | next   | info | lru[3] | [expire ms] | klen (v)  | key  | value   |
 *   +--------+------+--------+-------------+-----------+------+---------+
 *   next: chain link inside a table bucket; info: type (3 bits), value kind
 *   (2 bits), has-expire (1 bit), snapshot mark (1 bit, persist/snapshot.h); lru: 24-bit seconds clock of last access,
 *   or under an LFU maxmemory-policy (as Redis) 16 bits of minutes of the last
 *   decrement and an 8-bit logarithmic access counter (shard/evict.h);
 *   expire: present only when the has-expire bit is set (8 bytes, ms since
 *   the epoch); klen: LEB128 varint; value by kind:
 *     EK_RAW / EK_EMB   vlen (varint) + bytes   (EMB reports "embstr")
 *     EK_INT            8-byte int64            (reports "int")
 *     EK_OBJ            8-byte pointer to a type-specific object
 *
 * A 12-byte key with a 16-byte value is 42 bytes (a 48-byte block); the
 * allocation counts the header as 12 bytes (offsetof data), not
 * sizeof(entry), which has 4 bytes of tail padding. The
 * entry is owned by the table that links it; changing its size (a longer
 * value, adding an expire) makes a new entry that replaces the old one. */
#ifndef SHOAL_ENTRY_H
#define SHOAL_ENTRY_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { T_STRING = 0, T_LIST = 1, T_SET = 2, T_ZSET = 3, T_HASH = 4, T_STREAM = 5 };
enum { EK_RAW = 0, EK_EMB = 1, EK_INT = 2, EK_OBJ = 3 };
#define EMBSTR_MAX 44

typedef struct entry {
    struct entry *next;
    uint8_t info;
    uint8_t lru[3];
    uint8_t data[];
} entry;

#define ENTRY_HAS_TTL 0x20
#define ENTRY_SNAP 0x40

static inline int entry_type(const entry *e) { return e->info & 7; }
static inline int entry_kind(const entry *e) { return (e->info >> 3) & 3; }
static inline int entry_has_ttl(const entry *e) { return (e->info & ENTRY_HAS_TTL) != 0; }

static inline size_t varint_get(const uint8_t *p, uint64_t *v) {
    uint64_t r = 0;
    size_t i = 0;
    int shift = 0;
    for (;;) {
        uint8_t b = p[i++];
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
        shift += 7;
    }
    *v = r;
    return i;
}
static inline size_t varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}
static inline size_t varint_put(uint8_t *p, uint64_t v) {
    size_t i = 0;
    while (v >= 0x80) {
        p[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[i++] = (uint8_t)v;
    return i;
}

static inline int64_t entry_expire(const entry *e) {
    if (!entry_has_ttl(e)) return -1;
    int64_t t;
    memcpy(&t, e->data, 8);
    return t;
}
static inline const uint8_t *entry_keyp(const entry *e, size_t *klen) {
    const uint8_t *p = e->data + (entry_has_ttl(e) ? 8 : 0);
    uint64_t l;
    p += varint_get(p, &l);
    *klen = (size_t)l;
    return p;
}
/* Start of the value part. */
static inline uint8_t *entry_valp(const entry *e) {
    size_t kl;
    const uint8_t *k = entry_keyp(e, &kl);
    return (uint8_t *)(k + kl);
}
static inline int entry_key_eq(const entry *e, const char *key, size_t klen) {
    size_t kl;
    const uint8_t *k = entry_keyp(e, &kl);
    return kl == klen && memcmp(k, key, klen) == 0;
}

/* String value bytes. For EK_INT the digits are formatted into tmp (>= 24
 * bytes). */
const char *entry_str(const entry *e, char *tmp, size_t *len);
static inline int64_t entry_int(const entry *e) {
    int64_t v;
    memcpy(&v, entry_valp(e), 8);
    return v;
}
static inline void *entry_obj(const entry *e) {
    void *o;
    memcpy(&o, entry_valp(e), sizeof o);
    return o;
}
static inline void entry_set_obj(entry *e, void *o) { memcpy(entry_valp(e), &o, sizeof o); }
static inline void entry_set_int(entry *e, int64_t v) { memcpy(entry_valp(e), &v, 8); }

/* New string entry: integer kind when the value is a canonical int64
 * (and allow_int), embstr when short, raw otherwise. ttl_ms < 0: none. */
entry *entry_new_str(const char *key, size_t klen, const char *val, size_t vlen, int64_t ttl_ms, int allow_int);
/* Like entry_new_str, but kind forced to EK_RAW (after APPEND, SETRANGE). */
entry *entry_new_raw(const char *key, size_t klen, const char *val, size_t vlen, int64_t ttl_ms);
entry *entry_new_int(const char *key, size_t klen, int64_t v, int64_t ttl_ms);
entry *entry_new_obj(const char *key, size_t klen, int type, void *obj, int64_t ttl_ms);
/* Copy of e with another expire (-1 removes it); e is not freed. */
entry *entry_with_expire(const entry *e, int64_t ttl_ms);
/* Copy of e under another key (same value, expire kept or dropped). The
 * object of an EK_OBJ entry is shared: the caller decides who frees it. */
entry *entry_rekey(const entry *e, const char *key, size_t klen, int64_t ttl_ms);
/* In-place expire update when e already has an expire slot. */
static inline void entry_put_expire(entry *e, int64_t t) { memcpy(e->data, &t, 8); }
/* Bytes of the allocation (for MEMORY USAGE). */
size_t entry_alloc_size(const entry *e);

/* 24-bit LRU clock in seconds, as Redis's. */
static inline uint32_t entry_lru(const entry *e) {
    return (uint32_t)e->lru[0] | ((uint32_t)e->lru[1] << 8) | ((uint32_t)e->lru[2] << 16);
}
static inline void entry_touch(entry *e, uint32_t clock) {
    e->lru[0] = (uint8_t)clock;
    e->lru[1] = (uint8_t)(clock >> 8);
    e->lru[2] = (uint8_t)(clock >> 16);
}
#define LRU_CLOCK_MAX ((1u << 24) - 1)
/* LFU: what a new key's counter starts at (Redis's LFU_INIT_VAL), so that
 * a key gets a chance to be accessed before it is the first to go. */
#define LFU_INIT_VAL 5
/* Set while an LFU maxmemory-policy is on (relaxed; shard/evict.c writes
 * it): new entries then start with the LFU form of the field. */
extern int entry_lfu;
static inline uint32_t entry_fresh_lru(int64_t now_ms) {
    if (__atomic_load_n(&entry_lfu, __ATOMIC_RELAXED)) return (((uint32_t)(now_ms / 60000) & 0xffff) << 8) | LFU_INIT_VAL;
    return (uint32_t)(now_ms / 1000) & LRU_CLOCK_MAX;
}
#endif
