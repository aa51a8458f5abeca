/* bitmap.c - the bit commands over string values: SETBIT GETBIT BITCOUNT
 * BITPOS BITOP BITFIELD BITFIELD_RO.
 *
 * A bitmap is a plain string; bit 0 is the most significant bit of byte 0.
 * Readers look at the string as it is stored (an integer value is read
 * through its decimal digits, as Redis does). Writers leave a raw string:
 * an EK_RAW entry long enough is edited in place, anything else is rebuilt
 * (zero padded to the length needed) with string_replace_raw, which keeps
 * the key's expire. Bit offsets are limited by proto-max-bulk-len, so no
 * client input can make a string larger than that (plus the 8 bytes a
 * BITFIELD field may reach past its offset). */
#include "cmd/cross.h"
#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "cmd/string.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/evict.h"
#include "shard/shard.h"

/* ---- parsing ---- */

/* Bit offset argument i. With bits > 0 a "#N" form means N * bits (the
 * multiplication wraps as Redis's does). Replies the error and returns 0
 * when it is not an integer, negative, or its byte is past
 * proto-max-bulk-len. */
static int arg_bit_offset(cmd_ctx *c, int i, int bits, uint64_t *off) {
    const char *s = c->argv[i];
    size_t n = c->argl[i];
    int hash = bits > 0 && n > 0 && s[0] == '#';
    long long v;
    if (!str2ll(s + hash, n - (size_t)hash, &v)) {
        reply_status(c, ST_BADBIT);
        return 0;
    }
    if (hash) v = (long long)((unsigned long long)v * (unsigned long long)bits);
    if (v < 0 || (v >> 3) >= cfg_get(proto_max_bulk_len)) {
        reply_status(c, ST_BADBIT);
        return 0;
    }
    *off = (uint64_t)v;
    return 1;
}

/* ---- key access ---- */

/* The string at key argument i for reading: sets *e (NULL when missing)
 * and returns ST_OK, or ST_WRONGTYPE. Counts a keyspace hit or miss. */
static int bitmap_read(cmd_ctx *c, int i, entry **e) {
    entry **l = ctx_lookup(c, i, 1, NULL);
    *e = l ? *l : NULL;
    return *e && entry_type(*e) != T_STRING ? ST_WRONGTYPE : ST_OK;
}

/* Bytes of a string entry (EK_INT digits go to tmp, >= 24 bytes). */
static const uint8_t *bitmap_bytes(const entry *e, char *tmp, size_t *len) {
    if (!e) {
        *len = 0;
        return NULL;
    }
    return (const uint8_t *)entry_str(e, tmp, len);
}

/* The writable bytes of the raw string at key, at least `need` long: a
 * missing key is created, a shorter or non-raw value is rebuilt zero padded
 * (keeping its expire). Sets *len to the final length. Returns NULL with
 * *st = ST_WRONGTYPE when the key holds another type. The pointer is valid
 * until the key is next modified. */
/* *grew (when given) is 1 when the key was created or lengthened. */
static uint8_t *bitmap_write(cmd_ctx *c, const char *key, size_t klen, size_t need, size_t *len, int *st, int *grew) {
    db *d = ctx_db(c, key, klen);
    entry **link = db_find_link(d, key, klen, ctx_now(c));
    if (link && entry_type(*link) != T_STRING) {
        *st = ST_WRONGTYPE;
        return NULL;
    }
    char tmp[24];
    size_t old = 0;
    const char *p = link ? entry_str(*link, tmp, &old) : NULL;
    entry *e;
    if (grew) *grew = !link || old < need;
    if (link && entry_kind(*link) == EK_RAW && old >= need) {
        e = *link;
        evict_touch(c->sh, e);
    } else {
        size_t n = old > need ? old : need;
        char *buf = zcalloc(n);
        if (old) memcpy(buf, p, old);
        if (link) {
            string_replace_raw(d, link, buf, n);
            e = *link;
        } else {
            e = entry_new_raw(key, klen, buf, n, -1);
            db_add(d, e);
        }
        zfree(buf);
    }
    uint8_t *v = entry_valp(e);
    uint64_t l;
    v += varint_get(v, &l);
    *len = (size_t)l;
    return v;
}

/* ---- SETBIT GETBIT ---- */

/* SETBIT key offset value */
static void setbit_cmd(cmd_ctx *c) {
    uint64_t off;
    if (!arg_bit_offset(c, 2, 0, &off)) return;
    const char *v = c->argv[3];
    if (c->argl[3] != 1 || (v[0] != '0' && v[0] != '1')) {
        reply_error(c, "ERR bit is not an integer or out of range");
        return;
    }
    size_t len, byte = (size_t)(off >> 3);
    int st, grew;
    uint8_t *p = bitmap_write(c, c->argv[1], c->argl[1], byte + 1, &len, &st, &grew);
    if (!p) {
        reply_status(c, st);
        return;
    }
    uint8_t mask = (uint8_t)(0x80 >> (off & 7));
    int old = (p[byte] & mask) != 0;
    c->unchanged = !grew && old == (v[0] == '1'); /* as Redis 7.0.15: no dirty count */
    if (v[0] == '1')
        p[byte] |= mask;
    else
        p[byte] &= (uint8_t)~mask;
    reply_int(c, old);
    if (!c->unchanged) ctx_notify(c, NOTIFY_STRING, "setbit", 1);
}

/* GETBIT key offset */
static void getbit_cmd(cmd_ctx *c) {
    uint64_t off;
    if (!arg_bit_offset(c, 2, 0, &off)) return;
    entry *e;
    int st = bitmap_read(c, 1, &e);
    if (st != ST_OK) {
        reply_status(c, st);
        return;
    }
    char tmp[24];
    size_t len;
    const uint8_t *p = bitmap_bytes(e, tmp, &len);
    uint64_t byte = off >> 3;
    reply_int(c, byte < len ? (p[byte] >> (7 - (off & 7))) & 1 : 0);
}

/* ---- BITCOUNT BITPOS ---- */

/* Clamps [*start, *end] (negative indexes count back from n) to a string of
 * n units the way Redis does: both ends are first made non-negative, then
 * end is cut at n - 1. Returns 0 when the range is empty. */
static int clamp_range(long long *start, long long *end, long long n) {
    if (*start < 0) *start += n;
    if (*end < 0) *end += n;
    if (*start < 0) *start = 0;
    if (*end < 0) *end = 0;
    if (*end >= n) *end = n - 1;
    return *start <= *end;
}

/* Argument i as BYTE (0) or BIT (1); -1 after replying a syntax error. */
static int arg_unit(cmd_ctx *c, int i) {
    if (arg_is(c, i, "bit")) return 1;
    if (arg_is(c, i, "byte")) return 0;
    reply_status(c, ST_SYNTAX);
    return -1;
}

static uint64_t load64(const uint8_t *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* Set bits in n whole bytes. */
static long long popcount_bytes(const uint8_t *p, size_t n) {
    long long r = 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        r += __builtin_popcountll(load64(p + i)) + __builtin_popcountll(load64(p + i + 8)) +
             __builtin_popcountll(load64(p + i + 16)) + __builtin_popcountll(load64(p + i + 24));
    for (; i + 8 <= n; i += 8)
        r += __builtin_popcountll(load64(p + i));
    for (; i < n; i++)
        r += __builtin_popcount(p[i]);
    return r;
}

/* Masks keeping the bits of a byte from bit index b on (head) or up to it
 * (tail); bit 0 is the most significant. */
static uint8_t head_mask(uint64_t b) { return (uint8_t)(0xff >> (b & 7)); }
static uint8_t tail_mask(uint64_t b) { return (uint8_t)(0xff << (7 - (b & 7))); }

/* Set bits among bit indexes [from, to] of p. */
static long long count_bits(const uint8_t *p, uint64_t from, uint64_t to) {
    uint64_t first = from >> 3, last = to >> 3;
    if (first == last) return __builtin_popcount(p[first] & head_mask(from) & tail_mask(to));
    return __builtin_popcount(p[first] & head_mask(from)) + __builtin_popcount(p[last] & tail_mask(to)) +
           popcount_bytes(p + first + 1, (size_t)(last - first - 1));
}

/* Index of the first bit equal to `bit` among bit indexes [from, to] of p,
 * or -1. Whole words holding no such bit are skipped. */
static long long find_bit(const uint8_t *p, uint64_t from, uint64_t to, int bit) {
    uint8_t flip = bit ? 0 : 0xff;
    uint64_t skip = bit ? 0 : ~(uint64_t)0;
    uint64_t first = from >> 3, last = to >> 3;
    for (uint64_t i = first; i <= last; i++) {
        if (i > first) {
            while (i + 8 <= last && load64(p + i) == skip)
                i += 8;
        }
        uint8_t b = (uint8_t)(p[i] ^ flip);
        if (i == first) b &= head_mask(from);
        if (i == last) b &= tail_mask(to);
        if (b) return (long long)(i * 8) + __builtin_clz(b) - 24;
    }
    return -1;
}

/* BITCOUNT key [start end [BYTE|BIT]] */
static void bitcount_cmd(cmd_ctx *c) {
    entry *e;
    int st = bitmap_read(c, 1, &e);
    if (st != ST_OK) {
        reply_status(c, st);
        return;
    }
    if (!e) { /* a missing key answers before its arguments are read */
        reply_int(c, 0);
        return;
    }
    char tmp[24];
    size_t len;
    const uint8_t *p = bitmap_bytes(e, tmp, &len);
    long long start = 0, end = (long long)len - 1;
    int isbit = 0;
    if (c->argc == 4 || c->argc == 5) {
        if (!arg_ll(c, 2, &start) || !arg_ll(c, 3, &end)) return;
        if (start < 0 && end < 0 && start > end) {
            reply_int(c, 0);
            return;
        }
        if (c->argc == 5 && (isbit = arg_unit(c, 4)) < 0) return;
        if (!clamp_range(&start, &end, isbit ? (long long)len * 8 : (long long)len)) {
            reply_int(c, 0);
            return;
        }
    } else if (c->argc != 2) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (start > end) { /* empty string, no range given */
        reply_int(c, 0);
        return;
    }
    uint64_t from = (uint64_t)start, to = (uint64_t)end;
    if (!isbit) {
        from *= 8;
        to = to * 8 + 7;
    }
    reply_int(c, count_bits(p, from, to));
}

/* The answer of BITPOS on a bit range; missing 0 bits are found just past
 * the string unless an end was given. */
static long long bitpos_range(const uint8_t *p, uint64_t from, uint64_t to, int bit, int end_given) {
    long long pos = find_bit(p, from, to, bit);
    if (pos < 0 && bit == 0 && !end_given) pos = (long long)to + 1;
    return pos;
}

/* BITPOS key bit [start [end [BYTE|BIT]]] */
static void bitpos_cmd(cmd_ctx *c) {
    long long bit;
    if (!arg_ll(c, 2, &bit)) return;
    if (bit != 0 && bit != 1) {
        reply_error(c, "ERR The bit argument must be 1 or 0.");
        return;
    }
    entry *e;
    int st = bitmap_read(c, 1, &e);
    if (st != ST_OK) {
        reply_status(c, st);
        return;
    }
    if (!e) { /* a missing key answers before its arguments are read */
        reply_int(c, bit ? -1 : 0);
        return;
    }
    char tmp[24];
    size_t len;
    const uint8_t *p = bitmap_bytes(e, tmp, &len);
    long long start = 0, end = (long long)len - 1;
    int isbit = 0, end_given = c->argc >= 5;
    if (c->argc > 6) {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (c->argc >= 4) {
        if (!arg_ll(c, 3, &start)) return;
        if (c->argc == 6 && (isbit = arg_unit(c, 5)) < 0) return;
        if (end_given && !arg_ll(c, 4, &end)) return;
        long long n = isbit ? (long long)len * 8 : (long long)len;
        if (!end_given) end = n - 1;
        clamp_range(&start, &end, n);
    }
    if (start > end) {
        reply_int(c, -1);
        return;
    }
    uint64_t from = (uint64_t)start, to = (uint64_t)end;
    if (!isbit) {
        from *= 8;
        to = to * 8 + 7;
    }
    reply_int(c, bitpos_range(p, from, to, (int)bit, end_given));
}

/* ---- BITOP ---- */

enum { OP_AND, OP_OR, OP_XOR, OP_NOT };

/* res[i] = res[i] op src[i] for i < len, eight bytes at a time. */
static void bitop_bytes(uint8_t *res, const uint8_t *src, size_t len, int op) {
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t a = load64(res + i), b = load64(src + i);
        a = op == OP_AND ? a & b : op == OP_OR ? a | b : a ^ b;
        memcpy(res + i, &a, 8);
    }
    for (; i < len; i++)
        res[i] = (uint8_t)(op == OP_AND ? res[i] & src[i] : op == OP_OR ? res[i] | src[i] : res[i] ^ src[i]);
}

/* Combines src (len bytes, zero padded to n) into res (n bytes). */
static void bitop_apply(uint8_t *res, size_t n, const uint8_t *src, size_t len, int op) {
    bitop_bytes(res, src, len, op);
    if (op == OP_AND) memset(res + len, 0, n - len);
}

/* Stores the BITOP result under argv[2] (a fresh raw string without expire,
 * whatever the key held), or deletes the key when the result is empty. */
static void bitop_store(cmd_ctx *c, const uint8_t *res, size_t n) {
    const char *key = c->argv[2];
    size_t kl = c->argl[2];
    db *d = ctx_db(c, key, kl);
    if (!n) {
        if (db_delete(d, key, kl, ctx_now(c))) ctx_notify(c, NOTIFY_GENERIC, "del", 2);
        return;
    }
    entry *e = entry_new_raw(key, kl, (const char *)res, n, -1);
    entry **link = db_find_link(d, key, kl, ctx_now(c));
    if (link)
        db_replace(d, link, e, 0);
    else
        db_add(d, e);
    ctx_notify(c, NOTIFY_STRING, "set", 2);
}

typedef struct bitop_src {
    const uint8_t *p;
    size_t len;
    char tmp[24];
} bitop_src;

/* Looks up the n source keys from argv[3]; missing ones are empty. Returns
 * ST_OK with the longest length in *maxlen, or ST_WRONGTYPE. */
static int bitop_sources(cmd_ctx *c, bitop_src *src, int n, size_t *maxlen) {
    *maxlen = 0;
    for (int j = 0; j < n; j++) {
        entry *e;
        if (bitmap_read(c, 3 + j, &e) != ST_OK) return ST_WRONGTYPE;
        src[j].p = bitmap_bytes(e, src[j].tmp, &src[j].len);
        if (src[j].len > *maxlen) *maxlen = src[j].len;
    }
    return ST_OK;
}

/* BITOP AND|OR|XOR|NOT destkey key [key ...] */
static void bitop_cmd(cmd_ctx *c) {
    int op;
    if (arg_is(c, 1, "and"))
        op = OP_AND;
    else if (arg_is(c, 1, "or"))
        op = OP_OR;
    else if (arg_is(c, 1, "xor"))
        op = OP_XOR;
    else if (arg_is(c, 1, "not"))
        op = OP_NOT;
    else {
        reply_status(c, ST_SYNTAX);
        return;
    }
    if (op == OP_NOT && c->argc != 4) {
        reply_error(c, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    int n = c->argc - 3;
    bitop_src *src = zmalloc(sizeof *src * (size_t)n);
    size_t maxlen;
    if (bitop_sources(c, src, n, &maxlen) != ST_OK) {
        zfree(src);
        reply_status(c, ST_WRONGTYPE);
        return;
    }
    uint8_t *res = zcalloc(maxlen ? maxlen : 1);
    if (src[0].len) memcpy(res, src[0].p, src[0].len);
    if (op == OP_NOT)
        for (size_t i = 0; i < maxlen; i++)
            res[i] = (uint8_t)~res[i];
    for (int j = 1; j < n; j++)
        bitop_apply(res, maxlen, src[j].p, src[j].len, op);
    bitop_store(c, res, maxlen);
    zfree(res);
    zfree(src);
    reply_int(c, (long long)maxlen);
}

/* ---- BITFIELD ---- */

enum { BF_GET, BF_SET, BF_INCRBY };
enum { OVF_WRAP, OVF_SAT, OVF_FAIL };

typedef struct bf_op {
    uint64_t off;
    int64_t val; /* SET value or INCRBY increment */
    uint8_t kind, sign, bits, ovf;
} bf_op;

/* Type argument i ("i1".."i64", "u1".."u63"). Replies the error and returns
 * 0 when invalid. */
static int arg_bf_type(cmd_ctx *c, int i, bf_op *op) {
    const char *s = c->argv[i];
    size_t n = c->argl[i];
    long long bits = 0;
    int ok = n >= 2 && (s[0] == 'i' || s[0] == 'u') && str2ll(s + 1, n - 1, &bits);
    op->sign = s[0] == 'i';
    if (!ok || bits < 1 || bits > (op->sign ? 64 : 63)) {
        reply_error(c,
                    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
        return 0;
    }
    op->bits = (uint8_t)bits;
    return 1;
}

/* Parses the subcommands from argv[2] into ops (room for argc / 2).
 * Returns the op count with *writes set when some SET/INCRBY is present,
 * or -1 after replying an error. */
static int bf_parse(cmd_ctx *c, bf_op *ops, int *writes) {
    int n = 0, ovf = OVF_WRAP;
    *writes = 0;
    for (int j = 2; j < c->argc; j++) {
        int rem = c->argc - j - 1;
        bf_op *op = &ops[n];
        if (arg_is(c, j, "get") && rem >= 2)
            op->kind = BF_GET;
        else if (arg_is(c, j, "set") && rem >= 3)
            op->kind = BF_SET;
        else if (arg_is(c, j, "incrby") && rem >= 3)
            op->kind = BF_INCRBY;
        else if (arg_is(c, j, "overflow") && rem >= 1) {
            j++;
            if (arg_is(c, j, "wrap"))
                ovf = OVF_WRAP;
            else if (arg_is(c, j, "sat"))
                ovf = OVF_SAT;
            else if (arg_is(c, j, "fail"))
                ovf = OVF_FAIL;
            else {
                reply_error(c, "ERR Invalid OVERFLOW type specified");
                return -1;
            }
            continue;
        } else {
            reply_status(c, ST_SYNTAX);
            return -1;
        }
        if (!arg_bf_type(c, j + 1, op) || !arg_bit_offset(c, j + 2, op->bits, &op->off)) return -1;
        op->val = 0;
        op->ovf = (uint8_t)ovf;
        if (op->kind != BF_GET) {
            long long v;
            if (!arg_ll(c, j + 3, &v)) return -1;
            op->val = v;
            *writes = 1;
        }
        j += op->kind == BF_GET ? 2 : 3;
        n++;
    }
    return n;
}

/* The bits-wide big-endian field at bit offset off; bytes past len read 0. */
static uint64_t bf_get(const uint8_t *p, size_t len, uint64_t off, int bits) {
    uint64_t v = 0;
    for (int i = 0; i < bits; i++, off++) {
        uint64_t byte = off >> 3;
        unsigned b = byte < len ? (p[byte] >> (7 - (off & 7))) & 1 : 0;
        v = v << 1 | b;
    }
    return v;
}

/* Writes the low `bits` bits of v at bit offset off (inside p). */
static void bf_put(uint8_t *p, uint64_t off, int bits, uint64_t v) {
    for (int i = bits - 1; i >= 0; i--, off++) {
        uint8_t mask = (uint8_t)(0x80 >> (off & 7));
        if ((v >> i) & 1)
            p[off >> 3] |= mask;
        else
            p[off >> 3] &= (uint8_t)~mask;
    }
}

/* The low `bits` bits of v as a signed number (higher bits ignored). */
static int64_t sign_extend(uint64_t v, int bits) {
    if (bits == 64) return (int64_t)v;
    uint64_t high = ~(uint64_t)0 << bits;
    v = (v >> (bits - 1)) & 1 ? v | high : v & ~high;
    return (int64_t)v;
}

/* v + incr in a signed field of `bits`: returns 0 with the sum in *out, or
 * the overflow direction (1 or -1) with the wrapped or saturated value.
 * Redis 7.0 computes the headroom max - v in 64 bits, so a SET value so
 * far below the field that the headroom exceeds INT64_MAX counts as an
 * overflow upwards (SAT stores the maximum); we answer the same. */
static int bf_signed(int64_t v, int64_t incr, int bits, int ovf, int64_t *out) {
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1), min = -max - 1;
    int64_t sum;
    int dir = 0;
    if (__builtin_add_overflow(v, incr, &sum))
        dir = incr > 0 ? 1 : -1;
    else if (sum > max)
        dir = 1;
    else if (sum < min)
        dir = bits < 64 && (uint64_t)max - (uint64_t)v > (uint64_t)INT64_MAX ? 1 : -1;
    if (!dir)
        *out = sum;
    else if (ovf == OVF_SAT)
        *out = dir > 0 ? max : min;
    else
        *out = sign_extend((uint64_t)v + (uint64_t)incr, bits);
    return dir;
}

/* The same for an unsigned field (bits <= 63); v may exceed the field
 * (a SET of a negative or too large value), which overflows upwards. */
static int bf_unsigned(uint64_t v, int64_t incr, int bits, int ovf, uint64_t *out) {
    uint64_t max = (UINT64_C(1) << bits) - 1;
    uint64_t mag = incr < 0 ? UINT64_C(0) - (uint64_t)incr : (uint64_t)incr;
    int dir = 0;
    if (v > max || (incr > 0 && mag > max - v))
        dir = 1;
    else if (incr < 0 && mag > v)
        dir = -1;
    if (!dir)
        *out = v + (uint64_t)incr;
    else if (ovf == OVF_SAT)
        *out = dir > 0 ? max : 0;
    else
        *out = (v + (uint64_t)incr) & max;
    return dir;
}

/* Runs one SET or INCRBY on p and replies its result: the old value for
 * SET, the new one for INCRBY, null when OVERFLOW FAIL refused it. */
/* Returns 1 when the field's bits changed. */
static int bf_write(cmd_ctx *c, uint8_t *p, size_t len, const bf_op *op) {
    uint64_t raw = bf_get(p, len, op->off, op->bits), nv;
    long long reply;
    int over;
    if (op->sign) {
        int64_t old = sign_extend(raw, op->bits), out;
        over = op->kind == BF_SET ? bf_signed(op->val, 0, op->bits, op->ovf, &out)
                                  : bf_signed(old, op->val, op->bits, op->ovf, &out);
        nv = (uint64_t)out;
        reply = op->kind == BF_SET ? old : out;
    } else {
        uint64_t out;
        over = op->kind == BF_SET ? bf_unsigned((uint64_t)op->val, 0, op->bits, op->ovf, &out)
                                  : bf_unsigned(raw, op->val, op->bits, op->ovf, &out);
        nv = out;
        reply = (long long)(op->kind == BF_SET ? raw : out);
    }
    if (over && op->ovf == OVF_FAIL) {
        reply_null(c);
        return 0;
    }
    uint64_t mask = op->bits == 64 ? ~0ull : (1ull << op->bits) - 1;
    bf_put(p, op->off, op->bits, nv);
    reply_int(c, reply);
    return (raw & mask) != (nv & mask);
}

static void bf_reply_get(cmd_ctx *c, const uint8_t *p, size_t len, const bf_op *op) {
    uint64_t v = bf_get(p, len, op->off, op->bits);
    reply_int(c, op->sign ? sign_extend(v, op->bits) : (long long)v);
}

/* Executes parsed ops on the key: read-only ops see the string as stored,
 * writing ones first grow it to the farthest bit they touch. */
static void bf_run(cmd_ctx *c, const bf_op *ops, int n, int writes) {
    char tmp[24];
    size_t len = 0;
    const uint8_t *rp;
    uint8_t *wp = NULL;
    int st, changed = 0;
    if (!writes) {
        entry *e;
        if ((st = bitmap_read(c, 1, &e)) != ST_OK) {
            reply_status(c, st);
            return;
        }
        rp = bitmap_bytes(e, tmp, &len);
    } else {
        uint64_t top = 0;
        for (int i = 0; i < n; i++)
            if (ops[i].kind != BF_GET && ops[i].off + ops[i].bits - 1 > top) top = ops[i].off + ops[i].bits - 1;
        if (!(wp = bitmap_write(c, c->argv[1], c->argl[1], (size_t)(top >> 3) + 1, &len, &st, &changed))) {
            reply_status(c, st);
            return;
        }
        rp = wp;
    }
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        if (ops[i].kind == BF_GET)
            bf_reply_get(c, rp, len, &ops[i]);
        else
            changed |= bf_write(c, wp, len, &ops[i]);
    }
    if (writes) {
        c->unchanged = !changed;
        if (changed) ctx_notify(c, NOTIFY_STRING, "setbit", 1);
    }
}

/* Shared body of BITFIELD and BITFIELD_RO (ro: only GET allowed). */
static void bitfield_generic(cmd_ctx *c, int ro) {
    bf_op *ops = zmalloc(sizeof *ops * (size_t)(c->argc / 2 + 1));
    int writes, n = bf_parse(c, ops, &writes);
    if (n >= 0) {
        if (ro && writes)
            reply_error(c, "ERR BITFIELD_RO only supports the GET subcommand");
        else
            bf_run(c, ops, n, writes);
    }
    zfree(ops);
}

/* BITFIELD key [GET type offset] [SET type offset value]
 *   [INCRBY type offset increment] [OVERFLOW WRAP|SAT|FAIL] ... */
/* BITFIELD only reads its key when every operation is a GET (OVERFLOW
 * aside); anything else, a syntax error included, counts as a write (as
 * Redis's bitfieldGetKeys). */
static int bitfield_keyflags(int argc, const char **argv, const size_t *argl, int *pos, uint16_t *flags, int max) {
    if (argc < 2 || max < 1) return 0;
    pos[0] = 1;
    flags[0] = KS_RO | KS_ACCESS;
    for (int i = 2; i < argc; i++) {
        int rem = argc - i - 1;
        if (str_eq_ci(argv[i], argl[i], "get") && rem >= 2) {
            i += 2;
        } else if (str_eq_ci(argv[i], argl[i], "overflow") && rem >= 1) {
            i += 1;
        } else {
            flags[0] = KS_RW | KS_ACCESS | KS_UPDATE;
            break;
        }
    }
    return 1;
}

static void bitfield_cmd(cmd_ctx *c) { bitfield_generic(c, 0); }

/* BITFIELD_RO key [GET type offset ...] */
static void bitfield_ro_cmd(cmd_ctx *c) { bitfield_generic(c, 1); }

#define RW CMD_WRITE | CMD_DENYOOM
static const command rows[] = {
    {.name = "setbit",
     .kflags = KS_RW | KS_ACCESS | KS_UPDATE,
     .proc = setbit_cmd,
     .arity = 4,
     .flags = RW,
     .first = 1,
     .last = 1,
     .step = 1,
     .group = "bitmap",
     .since = "2.2.0",
     .acl = "write bitmap slow",
     .summary = "Sets or clears the bit at offset in the string value stored at key"},
    {.name = "getbit",
     .kflags = KS_RO | KS_ACCESS,
     .proc = getbit_cmd,
     .arity = 3,
     .flags = CMD_READONLY | CMD_FAST,
     .first = 1,
     .last = 1,
     .step = 1,
     .group = "bitmap",
     .since = "2.2.0",
     .acl = "read bitmap fast",
     .summary = "Returns the bit value at offset in the string value stored at key"},
    {.name = "bitcount",
     .kflags = KS_RO | KS_ACCESS,
     .proc = bitcount_cmd,
     .arity = -2,
     .flags = CMD_READONLY,
     .first = 1,
     .last = 1,
     .step = 1,
     .group = "bitmap",
     .since = "2.6.0",
     .acl = "read bitmap slow",
     .summary = "Count set bits in a string"},
    {.name = "bitpos",
     .kflags = KS_RO | KS_ACCESS,
     .proc = bitpos_cmd,
     .arity = -3,
     .flags = CMD_READONLY,
     .first = 1,
     .last = 1,
     .step = 1,
     .group = "bitmap",
     .since = "2.8.7",
     .acl = "read bitmap slow",
     .summary = "Find first bit set or clear in a string"},
    {.name = "bitop",
     KEY_SPECS({KS_OW | KS_UPDATE, KS_INDEX(2), KS_RANGE(0, 1, 0)},
               {KS_RO | KS_ACCESS, KS_INDEX(3), KS_RANGE(-1, 1, 0)}),
     .hops = cross_gather,
     .proc = bitop_cmd,
     .arity = -4,
     .flags = RW,
     .first = 2,
     .last = -1,
     .step = 1,
     .group = "bitmap",
     .since = "2.6.0",
     .acl = "write bitmap slow",
     .summary = "Perform bitwise operations between strings"},
    {.name = "bitfield",
     KEY_SPECS({KS_RW | KS_ACCESS | KS_UPDATE | KS_VARIABLE_FLAGS, KS_INDEX(1), KS_RANGE(0, 1, 0),
                .notes = "This command allows both access and modification of the key"}),
     .keyflags = bitfield_keyflags,
     .proc = bitfield_cmd,
     .arity = -2,
     .flags = RW,
     .first = 1,
     .last = 1,
     .step = 1,
     .group = "bitmap",
     .since = "3.2.0",
     .acl = "write bitmap slow",
     .summary = "Perform arbitrary bitfield integer operations on strings"},
    {.name = "bitfield_ro",
     .kflags = KS_RO | KS_ACCESS,
     .proc = bitfield_ro_cmd,
     .arity = -2,
     .flags = CMD_READONLY | CMD_FAST,
     .first = 1,
     .last = 1,
     .step = 1,
     .group = "bitmap",
     .since = "6.0.0",
     .acl = "read bitmap fast",
     .summary = "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD"},
};

void bitmap_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
