/* hash.c - the hash command family (in progress). */
#include "cmd/cmd.h"

void hash_register(void) {}
