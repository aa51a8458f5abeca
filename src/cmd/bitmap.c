/* bitmap.c - SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO. */
#include "cmd/cmd.h"

void bitmap_register(void) {}
