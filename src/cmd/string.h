/* string.h - string value helpers other families share (bitmap, keys). */
#ifndef SHOAL_CMD_STRING_H
#define SHOAL_CMD_STRING_H
#include "shard/db.h"

/* Stores val under key, replacing any value. ttl_ms: absolute expire or -1;
 * keep_ttl keeps the old key's expire. The entry is reused in place when the
 * new value has the old one's size. */
void string_set(db *d, const char *key, size_t klen, const char *val, size_t vlen, int64_t ttl_ms, int keep_ttl,
                int64_t now);
/* Like string_set on a key known to exist at link (raw encoding). */
void string_replace_raw(db *d, entry **link, const char *val, size_t vlen);
#endif
