/* entry.c - construction of keyspace entries; see entry.h for the layout. */
#include "core/entry.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "lib/util.h"

int entry_lfu;

static entry *alloc_entry(int type, int kind, const char *key, size_t klen, size_t vbytes, int64_t ttl,
                          uint8_t **valp) {
    /* data[] starts at offset 12; sizeof(entry) would add the struct's tail
     * padding (16) and push a 30-byte entry into the 48-byte size class. */
    size_t hdr = offsetof(entry, data) + (ttl >= 0 ? 8 : 0) + varint_len(klen);
    entry *e = zmalloc(hdr + klen + vbytes);
    e->next = NULL;
    e->info = (uint8_t)(type | (kind << 3) | (ttl >= 0 ? ENTRY_HAS_TTL : 0));
    entry_touch(e, entry_fresh_lru(mstime()));
    uint8_t *p = e->data;
    if (ttl >= 0) {
        memcpy(p, &ttl, 8);
        p += 8;
    }
    p += varint_put(p, klen);
    memcpy(p, key, klen);
    *valp = p + klen;
    return e;
}

const char *entry_str(const entry *e, char *tmp, size_t *len) {
    const uint8_t *v = entry_valp(e);
    if (entry_kind(e) == EK_INT) {
        int64_t x;
        memcpy(&x, v, 8);
        *len = (size_t)ll2str(tmp, x);
        return tmp;
    }
    uint64_t l;
    v += varint_get(v, &l);
    *len = (size_t)l;
    return (const char *)v;
}

entry *entry_new_raw(const char *key, size_t klen, const char *val, size_t vlen, int64_t ttl) {
    uint8_t *v;
    entry *e = alloc_entry(T_STRING, EK_RAW, key, klen, varint_len(vlen) + vlen, ttl, &v);
    v += varint_put(v, vlen);
    memcpy(v, val, vlen);
    return e;
}

entry *entry_new_int(const char *key, size_t klen, int64_t x, int64_t ttl) {
    uint8_t *v;
    entry *e = alloc_entry(T_STRING, EK_INT, key, klen, 8, ttl, &v);
    memcpy(v, &x, 8);
    return e;
}

entry *entry_new_str(const char *key, size_t klen, const char *val, size_t vlen, int64_t ttl, int allow_int) {
    long long x;
    if (allow_int && vlen <= 20 && str2ll(val, vlen, &x)) return entry_new_int(key, klen, x, ttl);
    entry *e = entry_new_raw(key, klen, val, vlen, ttl);
    if (vlen <= EMBSTR_MAX) e->info = (uint8_t)((e->info & ~0x18) | (EK_EMB << 3));
    return e;
}

entry *entry_new_obj(const char *key, size_t klen, int type, void *obj, int64_t ttl) {
    uint8_t *v;
    entry *e = alloc_entry(type, EK_OBJ, key, klen, sizeof obj, ttl, &v);
    memcpy(v, &obj, sizeof obj);
    return e;
}

static size_t value_bytes(const entry *e) {
    const uint8_t *v = entry_valp(e);
    if (entry_kind(e) == EK_INT || entry_kind(e) == EK_OBJ) return 8;
    uint64_t l;
    size_t h = varint_get(v, &l);
    return h + (size_t)l;
}

entry *entry_rekey(const entry *e, const char *key, size_t klen, int64_t ttl) {
    uint8_t *v;
    size_t vb = value_bytes(e);
    entry *n = alloc_entry(entry_type(e), entry_kind(e), key, klen, vb, ttl, &v);
    memcpy(v, entry_valp(e), vb);
    memcpy(n->lru, e->lru, 3);
    return n;
}

entry *entry_with_expire(const entry *e, int64_t ttl) {
    size_t kl;
    const uint8_t *k = entry_keyp(e, &kl);
    return entry_rekey(e, (const char *)k, kl, ttl);
}

size_t entry_alloc_size(const entry *e) { return zmalloc_size(e); }
