/* zset.c - the zset command family (in progress). */
#include "cmd/cmd.h"

void zset_register(void) {}
