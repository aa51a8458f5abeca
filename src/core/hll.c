/* hll.c - see hll.h.
 *
 * The sparse update follows Redis's steps so the bytes come out the same:
 * find the opcode covering the register; a VAL already high enough is no
 * change; a one-register VAL or ZERO is rewritten in place; anything else
 * is split into at most three opcodes (run before, the new VAL, run after),
 * promoting to dense when that would pass hll-sparse-max-bytes; then
 * neighbouring VALs of one value are merged over at most five opcodes from
 * the one before the change. */
#include "core/hll.h"
#include "lib/mem.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SP_IS_ZERO(b) (((b) & 0xc0) == 0)
#define SP_IS_XZERO(b) (((b) & 0xc0) == 0x40)
#define SP_IS_VAL(b) (((b) & 0x80) != 0)
#define SP_ZERO_LEN(b) (((b) & 0x3f) + 1)
#define SP_XZERO_LEN(p) (((((p)[0]) & 0x3f) << 8 | (p)[1]) + 1)
#define SP_VAL_VALUE(b) ((((b) >> 2) & 0x1f) + 1)
#define SP_VAL_LEN(b) (((b) & 3) + 1)
#define SP_VAL_MAX_VALUE 32
#define SP_VAL_MAX_LEN 4
#define SP_ZERO_MAX_LEN 64
#define SP_XZERO_MAX_LEN 16384

static uint8_t op_val(int v, int len) { return (uint8_t)(0x80 | (v - 1) << 2 | (len - 1)); }
static uint8_t op_zero(int len) { return (uint8_t)(len - 1); }
static void op_xzero(uint8_t *p, int len) {
    p[0] = (uint8_t)(0x40 | (len - 1) >> 8);
    p[1] = (uint8_t)((len - 1) & 0xff);
}

/* ---- hashing ---- */

uint64_t hll_murmur64a(const void *key, size_t len, uint64_t seed) {
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    const uint8_t *d = key;
    uint64_t h = seed ^ (len * m);
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++, d += 8) {
        uint64_t k = 0;
        for (int b = 7; b >= 0; b--) k = k << 8 | d[b]; /* little endian, any host */
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    switch (len & 7) {
    case 7: h ^= (uint64_t)d[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)d[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)d[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)d[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)d[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)d[1] << 8;  /* fall through */
    case 1:
        h ^= (uint64_t)d[0];
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int hll_hash(const void *ele, size_t len, long *index) {
    uint64_t h = hll_murmur64a(ele, len, 0xadc83b19ULL);
    *index = (long)(h & (HLL_REGISTERS - 1));
    h >>= HLL_P;
    h |= (uint64_t)1 << HLL_Q; /* the count stops at Q+1 */
    int count = 1;
    while (!(h & 1)) {
        count++;
        h >>= 1;
    }
    return count;
}

/* ---- header ---- */

int hll_check(const uint8_t *p, size_t len) {
    if (len < HLL_HDR_SIZE || memcmp(p, "HYLL", 4) != 0) return -1;
    if (p[4] > HLL_SPARSE) return -1;
    if (p[4] == HLL_DENSE && len != HLL_DENSE_SIZE) return -1;
    return 0;
}

void hll_new(hll_buf *b) {
    b->cap = HLL_SPARSE_NEW_SIZE + 8;
    b->p = zcalloc(b->cap);
    b->len = HLL_SPARSE_NEW_SIZE;
    memcpy(b->p, "HYLL", 4);
    b->p[4] = HLL_SPARSE;
    op_xzero(b->p + HLL_HDR_SIZE, HLL_REGISTERS);
}

int hll_cache_get(const uint8_t *p, uint64_t *card) {
    if (p[15] & 0x80) return 0;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[8 + i];
    *card = v;
    return 1;
}

void hll_cache_set(uint8_t *p, uint64_t card) {
    for (int i = 0; i < 8; i++) p[8 + i] = (uint8_t)(card >> (8 * i));
}

/* ---- dense ---- */

int hll_dense_get(const uint8_t *regs, long i) {
    size_t bit = (size_t)i * 6, b = bit >> 3;
    unsigned fb = bit & 7;
    unsigned v = regs[b] >> fb;
    if (fb > 2) v |= (unsigned)regs[b + 1] << (8 - fb);
    return (int)(v & 63);
}

static void dense_put(uint8_t *regs, long i, uint8_t v) {
    size_t bit = (size_t)i * 6, b = bit >> 3;
    unsigned fb = bit & 7;
    regs[b] = (uint8_t)((regs[b] & ~(63u << fb)) | (unsigned)v << fb);
    if (fb > 2) regs[b + 1] = (uint8_t)((regs[b + 1] & ~(63u >> (8 - fb))) | (unsigned)v >> (8 - fb));
}

int hll_dense_set(uint8_t *regs, long i, uint8_t v) {
    if (v <= hll_dense_get(regs, i)) return 0;
    dense_put(regs, i, v);
    return 1;
}

/* ---- sparse ---- */

int hll_to_dense(hll_buf *b) {
    if (b->p[4] == HLL_DENSE) return 0;
    uint8_t *d = zcalloc(HLL_DENSE_SIZE);
    memcpy(d, b->p, HLL_HDR_SIZE);
    d[4] = HLL_DENSE;
    uint8_t *regs = d + HLL_HDR_SIZE;
    const uint8_t *p = b->p + HLL_HDR_SIZE, *end = b->p + b->len;
    long idx = 0;
    while (p < end) {
        long run;
        if (SP_IS_ZERO(*p)) {
            run = SP_ZERO_LEN(*p);
            p++;
        } else if (SP_IS_XZERO(*p)) {
            if (p + 1 >= end) break;
            run = SP_XZERO_LEN(p);
            p += 2;
        } else {
            run = SP_VAL_LEN(*p);
            if (idx + run > HLL_REGISTERS) break;
            for (long k = 0; k < run; k++) dense_put(regs, idx + k, (uint8_t)SP_VAL_VALUE(*p));
            p++;
        }
        idx += run;
        if (idx > HLL_REGISTERS) break;
    }
    if (idx != HLL_REGISTERS || p != end) {
        zfree(d);
        return -1;
    }
    zfree(b->p);
    b->p = d;
    b->len = b->cap = HLL_DENSE_SIZE;
    return 0;
}

/* Raises register `index` of the sparse HLL in b to `count`. */
static int sparse_set(hll_buf *b, long index, uint8_t count, size_t sparse_max) {
    if (count > SP_VAL_MAX_VALUE) goto promote;
    if (b->cap < b->len + 3) {
        b->cap = b->len + 3;
        b->p = zrealloc(b->p, b->cap);
    }
    uint8_t *sparse = b->p + HLL_HDR_SIZE, *p = sparse, *end = b->p + b->len, *prev = NULL, *next;
    long first = 0, span = 0;
    /* Step 1: the opcode covering index. */
    while (p < end) {
        long oplen = 1;
        if (SP_IS_ZERO(*p)) {
            span = SP_ZERO_LEN(*p);
        } else if (SP_IS_VAL(*p)) {
            span = SP_VAL_LEN(*p);
        } else {
            if (p + 1 >= end) return -1;
            span = SP_XZERO_LEN(p);
            oplen = 2;
        }
        if (index <= first + span - 1) break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end) return -1;
    int is_xzero = SP_IS_XZERO(*p), is_zero = SP_IS_ZERO(*p), is_val = SP_IS_VAL(*p);
    next = p + (is_xzero ? 2 : 1);
    if (next >= end) next = NULL;
    long runlen = span;

    /* Step 2: the trivial cases, in place. */
    if (is_val) {
        int old = SP_VAL_VALUE(*p);
        if (old >= count) return 0;
        if (runlen == 1) {
            *p = op_val(count, 1);
            goto updated;
        }
    }
    if (is_zero && runlen == 1) {
        *p = op_val(count, 1);
        goto updated;
    }

    /* Step 3: split the opcode into up to three. */
    uint8_t seq[5], *n = seq;
    long last = first + span - 1;
    if (is_zero || is_xzero) {
        if (index != first) {
            long len = index - first;
            if (len > SP_ZERO_MAX_LEN) {
                op_xzero(n, (int)len);
                n += 2;
            } else {
                *n++ = op_zero((int)len);
            }
        }
        *n++ = op_val(count, 1);
        if (index != last) {
            long len = last - index;
            if (len > SP_ZERO_MAX_LEN) {
                op_xzero(n, (int)len);
                n += 2;
            } else {
                *n++ = op_zero((int)len);
            }
        }
    } else {
        int cur = SP_VAL_VALUE(*p);
        if (index != first) *n++ = op_val(cur, (int)(index - first));
        *n++ = op_val(count, 1);
        if (index != last) *n++ = op_val(cur, (int)(last - index));
    }
    long seqlen = n - seq, oldlen = is_xzero ? 2 : 1, delta = seqlen - oldlen;
    if (delta > 0 && b->len + (size_t)delta > sparse_max) goto promote;
    if (delta && next) memmove(next + delta, next, (size_t)(end - next));
    b->len = (size_t)((long)b->len + delta);
    memcpy(p, seq, (size_t)seqlen);
    end += delta;

updated:
    /* Step 4: merge neighbouring VALs of one value. */
    p = prev ? prev : sparse;
    int scan = 5;
    while (p < end && scan--) {
        if (SP_IS_XZERO(*p)) {
            p += 2;
            continue;
        }
        if (SP_IS_ZERO(*p)) {
            p++;
            continue;
        }
        if (p + 1 < end && SP_IS_VAL(p[1]) && SP_VAL_VALUE(p[0]) == SP_VAL_VALUE(p[1])) {
            int len = SP_VAL_LEN(p[0]) + SP_VAL_LEN(p[1]);
            if (len <= SP_VAL_MAX_LEN) {
                p[1] = op_val(SP_VAL_VALUE(p[0]), len);
                memmove(p, p + 1, (size_t)(end - p - 1));
                b->len--;
                end--;
                continue; /* try the merged one with its right neighbour */
            }
        }
        p++;
    }
    return 1;

promote:
    if (hll_to_dense(b) < 0) return -1;
    hll_dense_set(b->p + HLL_HDR_SIZE, index, count);
    return 1;
}

int hll_set(hll_buf *b, long i, uint8_t v, size_t sparse_max) {
    if (b->p[4] == HLL_DENSE) return hll_dense_set(b->p + HLL_HDR_SIZE, i, v);
    if (b->p[4] == HLL_SPARSE) return sparse_set(b, i, v, sparse_max);
    return -1;
}

int hll_add(hll_buf *b, const void *ele, size_t len, size_t sparse_max) {
    long i;
    int v = hll_hash(ele, len, &i);
    return hll_set(b, i, (uint8_t)v, sparse_max);
}

/* ---- merge and count ---- */

int hll_merge(uint8_t *max, const uint8_t *p, size_t len) {
    if (p[4] == HLL_DENSE) {
        const uint8_t *regs = p + HLL_HDR_SIZE;
        for (long i = 0; i < HLL_REGISTERS; i++) {
            uint8_t v = (uint8_t)hll_dense_get(regs, i);
            if (v > max[i]) max[i] = v;
        }
        return 0;
    }
    const uint8_t *s = p + HLL_HDR_SIZE, *end = p + len;
    long i = 0;
    while (s < end) {
        long run;
        if (SP_IS_ZERO(*s)) {
            run = SP_ZERO_LEN(*s);
            s++;
        } else if (SP_IS_XZERO(*s)) {
            if (s + 1 >= end) return -1;
            run = SP_XZERO_LEN(s);
            s += 2;
        } else {
            run = SP_VAL_LEN(*s);
            if (i + run > HLL_REGISTERS) return -1;
            uint8_t v = (uint8_t)SP_VAL_VALUE(*s);
            for (long k = 0; k < run; k++)
                if (v > max[i + k]) max[i + k] = v;
            s++;
        }
        if (i + run > HLL_REGISTERS) return -1;
        i += run;
    }
    return i == HLL_REGISTERS ? 0 : -1;
}

static double hll_sigma(double x) {
    if (x == 1.) return INFINITY;
    double zp, y = 1, z = x;
    do {
        x *= x;
        zp = z;
        z += x * y;
        y += y;
    } while (zp != z);
    return z;
}

static double hll_tau(double x) {
    if (x == 0. || x == 1.) return 0.;
    double zp, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        zp = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (zp != z);
    return z / 3;
}

/* Ertl's estimator ("New cardinality estimation algorithms for HyperLogLog
 * sketches", 2017) over the histogram of register values. */
static uint64_t estimate(const int *histo) {
    double m = HLL_REGISTERS;
    double z = m * hll_tau((m - histo[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; --j) {
        z += histo[j];
        z *= 0.5;
    }
    z += m * hll_sigma(histo[0] / m);
    double e = (double)llroundl(0.721347520444481703680 * m * m / z);
    /* every register at its top value (a corrupt HLL): z is 0 and the
     * rounding overflows to LLONG_MIN, which Redis's cast turns into 2^63
     * (its PFCOUNT then shows LLONG_MIN); the cast itself is undefined */
    if (!(e >= 0)) return 1ull << 63;
    return (uint64_t)e;
}

uint64_t hll_count(const uint8_t *p, size_t len, int *invalid) {
    int histo[64] = {0};
    if (p[4] == HLL_DENSE) {
        const uint8_t *regs = p + HLL_HDR_SIZE;
        for (long i = 0; i < HLL_REGISTERS; i++) histo[hll_dense_get(regs, i)]++;
        return estimate(histo);
    }
    const uint8_t *s = p + HLL_HDR_SIZE, *end = p + len;
    long idx = 0;
    while (s < end) {
        long run;
        if (SP_IS_ZERO(*s)) {
            run = SP_ZERO_LEN(*s);
            histo[0] += (int)run;
            s++;
        } else if (SP_IS_XZERO(*s)) {
            if (s + 1 >= end) break;
            run = SP_XZERO_LEN(s);
            histo[0] += (int)run;
            s += 2;
        } else {
            run = SP_VAL_LEN(*s);
            if (idx + run > HLL_REGISTERS) break;
            histo[SP_VAL_VALUE(*s)] += (int)run;
            s++;
        }
        idx += run;
        if (idx > HLL_REGISTERS) break;
    }
    if (idx != HLL_REGISTERS || s != end) {
        *invalid = 1;
        return 0;
    }
    return estimate(histo);
}

uint64_t hll_count_raw(const uint8_t *max) {
    int histo[64] = {0};
    for (long i = 0; i < HLL_REGISTERS; i++) histo[max[i] & 63]++;
    return estimate(histo);
}

size_t hll_decode(const uint8_t *p, size_t len, char **out) {
    size_t cap = 64, n = 0;
    char *s = zmalloc(cap);
    const uint8_t *q = p + HLL_HDR_SIZE, *end = p + len;
    while (q < end) {
        if (cap - n < 24) {
            cap *= 2;
            s = zrealloc(s, cap);
        }
        int w;
        if (SP_IS_ZERO(*q)) {
            w = snprintf(s + n, cap - n, "z:%d ", SP_ZERO_LEN(*q));
            q++;
        } else if (SP_IS_XZERO(*q)) {
            int l = ((q[0] & 0x3f) << 8 | (q + 1 < end ? q[1] : 0)) + 1;
            w = snprintf(s + n, cap - n, "Z:%d ", l);
            q += 2;
        } else {
            w = snprintf(s + n, cap - n, "v:%d,%d ", SP_VAL_VALUE(*q), SP_VAL_LEN(*q));
            q++;
        }
        n += (size_t)w;
    }
    if (n) n--; /* the trailing space */
    s[n] = '\0';
    *out = s;
    return n;
}

/* ---- self test ---- */

static uint64_t xorshift(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

int hll_selftest(char *err, size_t errlen) {
    uint8_t *regs = zcalloc(HLL_DENSE_SIZE - HLL_HDR_SIZE + 1);
    uint8_t *want = zmalloc(HLL_REGISTERS);
    uint64_t rs = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)regs;
    int rc = 0;
    /* 1: dense registers read back what was written, neighbours intact */
    for (int round = 0; round < 1000 && !rc; round++) {
        for (long i = 0; i < HLL_REGISTERS; i++) {
            want[i] = (uint8_t)(xorshift(&rs) & 63);
            dense_put(regs, i, want[i]);
        }
        for (long i = 0; i < HLL_REGISTERS; i++)
            if (hll_dense_get(regs, i) != want[i]) {
                snprintf(err, errlen, "TESTFAILED Register error at %ld", i);
                rc = -1;
                break;
            }
    }
    /* 2: error bounds, with a dense and a sparse sketch that must agree */
    hll_buf dense, sparse;
    hll_new(&sparse);
    hll_new(&dense);
    if (!rc) hll_to_dense(&dense);
    double relerr = 1.04 / sqrt(HLL_REGISTERS);
    uint64_t checkpoint = 1, seed = xorshift(&rs);
    for (uint64_t j = 1; j <= 10000000 && !rc; j++) {
        uint64_t ele = j ^ seed;
        hll_add(&dense, &ele, sizeof ele, 3000);
        hll_add(&sparse, &ele, sizeof ele, 3000);
        if (j != checkpoint) continue;
        int inv = 0;
        uint64_t cd = hll_count(dense.p, dense.len, &inv), cs = hll_count(sparse.p, sparse.len, &inv);
        if (j < 1500 && sparse.p[4] != HLL_SPARSE) {
            snprintf(err, errlen, "TESTFAILED sparse encoding not used");
            rc = -1;
        } else if (inv || cd != cs) {
            snprintf(err, errlen, "TESTFAILED dense/sparse disagree");
            rc = -1;
        } else {
            int64_t abserr = (int64_t)checkpoint - (int64_t)cd;
            uint64_t maxerr = (uint64_t)ceil(relerr * 6 * (double)checkpoint);
            if (j == 10) maxerr = 1;
            if (abserr < 0) abserr = -abserr;
            if (abserr > (int64_t)maxerr) {
                snprintf(err, errlen, "TESTFAILED Too big error. card:%llu abserr:%llu",
                         (unsigned long long)checkpoint, (unsigned long long)abserr);
                rc = -1;
            }
        }
        checkpoint *= 10;
    }
    zfree(dense.p);
    zfree(sparse.p);
    zfree(regs);
    zfree(want);
    return rc;
}
