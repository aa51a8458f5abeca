/* test_rand.c - the shards' random generator (shard_rand, src/shard/shard.c).
 * Samplers draw a bucket index and then a position from two outputs in a
 * row; the position must not follow from the index. With bare xorshift64*
 * the low bits of the next output were a function of the low bits of the
 * last one, so SPOP found every bucket "used up" at its fixed position and
 * fell back to a scan on each call. No sockets. */
#include "shard/shard.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static shard s;

/* Low bits of one output (an index into 1,024 buckets) against the low 3
 * bits of the next (a position below 8): every bucket must see most of the
 * eight positions. */
static void test_next_low_bits_independent(void) {
    static uint8_t seen[1024];
    memset(seen, 0, sizeof seen);
    s.rnd = 0x9e3779b97f4a7c15ull;
    uint64_t prev = shard_rand(&s);
    for (int i = 0; i < 400000; i++) {
        uint64_t next = shard_rand(&s);
        seen[prev & 1023] |= (uint8_t)(1u << (next & 7));
        prev = next;
    }
    int poor = 0;
    for (int b = 0; b < 1024; b++)
        if (__builtin_popcount(seen[b]) < 6) poor++;
    CHECK(poor == 0);
}

/* Every low bit is set about half the time. */
static void test_low_bits_balanced(void) {
    s.rnd = 12345;
    int ones[8] = {0};
    for (int i = 0; i < 80000; i++) {
        uint64_t r = shard_rand(&s);
        for (int b = 0; b < 8; b++) ones[b] += (int)(r >> b & 1);
    }
    for (int b = 0; b < 8; b++) CHECK(ones[b] > 38000 && ones[b] < 42000);
}

int main(void) {
    test_next_low_bits_independent();
    test_low_bits_balanced();
    return check_report();
}
