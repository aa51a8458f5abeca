/* hash.h - the hash value as other modules see it (RDB / DUMP): walking
 * its pairs, and building one from decoded parts with the encoding rules
 * Redis's loader applies. The value is the tagged pointer described at the
 * top of hash.c; these functions run on the thread that owns it. */
#ifndef SHOAL_CMD_HASH_H
#define SHOAL_CMD_HASH_H
#include "core/hpack.h"
#include "core/pack.h"
#include <stddef.h>

typedef void hash_pair_fn(void *ud, const char *f, size_t fl, const char *v, size_t vl);

size_t hash_value_len(const void *o);
/* The hpack of a "listpack" hash; NULL for "hashtable". */
const hpack *hash_value_hpack(const void *o);
/* Calls fn for every pair (strings valid during the call only). */
void hash_value_foreach(const void *o, hash_pair_fn *fn, void *ud);

/* An empty value for a hash that will get `hint` pairs: a hashtable when
 * hint exceeds hash-max-listpack-entries, else a listpack. */
void *hash_value_new(size_t hint);
/* Adds a pair as HSET would (converting past the limits). Returns 1 when
 * the field was new, 0 when it was already there (the caller treats that
 * as corrupt input). */
int hash_value_add(void **o, const char *f, size_t fl, const char *v, size_t vl);
/* Takes ownership of a pack of field, value pairs with distinct fields
 * (frees it) and returns the value: an hpack of the same pairs, or a
 * hashtable when it has more than hash-max-listpack-entries pairs. */
void *hash_value_from_pack(pack *p);
void hash_value_free(void *o);
/* The value of field f, or NULL when absent. *vl gets its length; an
 * integer of a listpack is spelled into intbuf (PACK_INTBUF bytes). The
 * bytes stay valid until the hash changes. */
const char *hash_value_get(const void *o, const char *f, size_t fl, size_t *vl, char *intbuf);
#endif
