/* expire.c - EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL EXPIRETIME
 * PEXPIRETIME PERSIST. */
#include "cmd/cmd.h"

void expire_register(void) {}
