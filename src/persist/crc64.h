/* crc64.h - CRC-64 with the Jones polynomial (0xad93d23594c935a9, reflected input and output,
 * initial value 0, no final xor): the checksum of Redis's RDB files and
 * DUMP payloads. crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
 * Tables are built on first use (thread-safe); any thread may call. */
#ifndef SHOAL_CRC64_H
#define SHOAL_CRC64_H
#include <stddef.h>
#include <stdint.h>

/* Continues crc over n more bytes (start with 0). */
uint64_t crc64(uint64_t crc, const void *p, size_t n);
#endif
