/* hll.h - HyperLogLog sketches in Redis's exact byte layout.
 *
 * An HLL is a plain string value (so DUMP, RDB and APPEND see its bytes):
 *
 *   0      4     5       8                16
 *   +------+-----+-------+----------------+---------------------------+
 *   | HYLL | enc | 0 0 0 | card (8, LE)   | registers                 |
 *   +------+-----+-------+----------------+---------------------------+
 *   enc: 0 dense, 1 sparse. card: the cached cardinality; bit 7 of its
 *   last byte set means "stale, recompute".
 *   dense: 16384 registers of 6 bits, register i at bit 6i, least
 *     significant bits first (12288 bytes; the string is exactly 12304).
 *   sparse: run-length opcodes over the registers in order:
 *     00xxxxxx           ZERO   xxxxxx+1 (1..64) zero registers
 *     01xxxxxx yyyyyyyy  XZERO  14-bit length+1 (1..16384) zero registers
 *     1vvvvvxx           VAL    xx+1 (1..4) registers of value vvvvv+1
 *   A sparse HLL turns dense when a register needs a value above 32 or
 *   when it would grow past hll-sparse-max-bytes.
 *
 * Elements are hashed with MurmurHash64A (seed 0xadc83b19): the low 14 bits
 * pick the register, the run of zero bits above them (plus one, at most
 * 51) is the value. Cardinality uses Ertl's improved raw estimator, so
 * counts equal Redis's for the same registers.
 *
 * Every function here checks the bytes it walks: corrupt input gives -1
 * (or *invalid), never a read or write outside the buffer. Pure functions
 * of their arguments; any thread. */
#ifndef SHOAL_HLL_H
#define SHOAL_HLL_H
#include <stddef.h>
#include <stdint.h>

#define HLL_P 14
#define HLL_Q (64 - HLL_P)
#define HLL_REGISTERS (1 << HLL_P)
#define HLL_HDR_SIZE 16
#define HLL_DENSE_SIZE (HLL_HDR_SIZE + (HLL_REGISTERS * 6 + 7) / 8)
#define HLL_SPARSE_NEW_SIZE (HLL_HDR_SIZE + 2)
enum { HLL_DENSE = 0, HLL_SPARSE = 1 };

/* A growable copy of an HLL string (zmalloc'd; the owner frees p). */
typedef struct hll_buf {
    uint8_t *p;
    size_t len, cap;
} hll_buf;

/* 0 when p/len looks like an HLL (magic, known encoding, dense length),
 * else -1: Redis then answers WRONGTYPE "Key is not a valid HyperLogLog". */
int hll_check(const uint8_t *p, size_t len);
/* The empty sparse HLL (cache valid, 0) into b (allocated here). */
void hll_new(hll_buf *b);
/* Register index and value of an element. */
int hll_hash(const void *ele, size_t len, long *index);
uint64_t hll_murmur64a(const void *key, size_t len, uint64_t seed);

/* Cached cardinality: 1 and *card when valid, else 0. */
int hll_cache_get(const uint8_t *p, uint64_t *card);
void hll_cache_set(uint8_t *p, uint64_t card);
static inline void hll_invalidate(uint8_t *p) { p[15] |= 0x80; }

/* Dense registers (the 12288 bytes after the header). */
int hll_dense_get(const uint8_t *regs, long i);
/* Raises register i to v; 1 when it changed, else 0. */
int hll_dense_set(uint8_t *regs, long i, uint8_t v);

/* Adds an element to the HLL in b (either encoding): 1 when a register
 * changed, 0 when not, -1 when the sparse bytes are corrupt. May turn a
 * sparse HLL dense (sparse_max: hll-sparse-max-bytes). Does not touch the
 * cache bytes; the caller invalidates. */
int hll_add(hll_buf *b, const void *ele, size_t len, size_t sparse_max);
/* Raises register i to v in b; as hll_add. */
int hll_set(hll_buf *b, long i, uint8_t v, size_t sparse_max);
/* Turns a sparse HLL dense in place (header copied). 0, or -1 when the
 * sparse bytes are corrupt (b unchanged). A dense one is left alone. */
int hll_to_dense(hll_buf *b);
/* max[i] = MAX(max[i], register i) over the HLL p/len; 0, or -1 when it is
 * corrupt. */
int hll_merge(uint8_t *max, const uint8_t *p, size_t len);
/* Estimated cardinality of the HLL p/len (either encoding); *invalid set
 * to 1 when the sparse bytes are corrupt. */
uint64_t hll_count(const uint8_t *p, size_t len, int *invalid);
/* The same over one byte per register (a merge result). */
uint64_t hll_count_raw(const uint8_t *max);
/* The sparse opcodes as text ("z:3 v:2,1 Z:100"), into out (zmalloc'd,
 * NUL-terminated); returns its length. */
size_t hll_decode(const uint8_t *p, size_t len, char **out);
/* Redis's PFSELFTEST checks; 0, or -1 with a message in err. */
int hll_selftest(char *err, size_t errlen);
#endif
