/* set.c - the set command family (in progress). */
#include "cmd/cmd.h"

void set_register(void) {}
