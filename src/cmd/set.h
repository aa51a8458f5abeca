/* set.h - the set value as other modules see it (RDB / DUMP): walking its
 * members, and building one from decoded parts with the encoding rules
 * Redis's loader applies. The value is the tagged pointer described at the
 * top of set.c; these functions run on the thread that owns it. */
#ifndef SHOAL_CMD_SET_H
#define SHOAL_CMD_SET_H
#include "core/intset.h"
#include <stddef.h>

size_t set_value_len(const void *o);
/* The intset of an "intset" set; NULL for "hashtable". */
const intset *set_value_intset(const void *o);
/* Calls fn with every member of a hashtable set, or of an intset spelled
 * in decimal (bytes valid during the call only). */
void set_value_foreach(const void *o, void (*fn)(void *ud, const char *m, size_t ml), void *ud);

/* An empty value for a set that will get `hint` members: a hashtable when
 * hint exceeds set-max-intset-entries, else an intset. */
void *set_value_new(size_t hint);
/* Adds a member as SADD would (converting as needed). Returns 1 when it
 * was new, 0 when already there. */
int set_value_add(void **o, const char *m, size_t ml);
/* Takes ownership of a valid intset; converts it to a hashtable when it
 * has more than set-max-intset-entries members. */
void *set_value_from_intset(intset *is);
void set_value_free(void *o);
#endif
