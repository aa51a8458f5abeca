"""HyperLogLog: PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST.

Checked against a small Python model of Redis's HLL (MurmurHash64A with
seed 0xadc83b19, 14-bit register index, Ertl's estimator) rather than
against fixed numbers: the registers PFDEBUG GETREG shows must be the
model's, the sparse opcodes PFDEBUG DECODE shows must expand to them, and
PFCOUNT must be the model's estimate of them. Also the string layout
(header, cached cardinality), corruption detection, keys spread over
shards (no hashtags), and DUMP/RESTORE."""
import math
import random
import struct

import pytest
import redis

NOTHLL = "WRONGTYPE Key is not a valid HyperLogLog string value."
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
INVALID = "INVALIDOBJ Corrupted HLL object detected"
M64 = (1 << 64) - 1
REGS = 16384
DENSE_LEN = 16 + REGS * 6 // 8


def murmur64a(data, seed=0xADC83B19):
    m, r = 0xC6A4A7935BD1E995, 47
    h = (seed ^ (len(data) * m)) & M64
    n8 = len(data) // 8
    for i in range(n8):
        k = struct.unpack_from("<Q", data, i * 8)[0]
        k = (k * m) & M64
        k ^= k >> r
        k = (k * m) & M64
        h ^= k
        h = (h * m) & M64
    tail = data[n8 * 8:]
    if tail:
        for i in reversed(range(len(tail))):
            h ^= tail[i] << (8 * i)
        h = (h * m) & M64
    h ^= h >> r
    h = (h * m) & M64
    h ^= h >> r
    return h


def reg_of(ele):
    h = murmur64a(ele)
    index = h & (REGS - 1)
    h = (h >> 14) | (1 << 50)
    count = 1
    while not h & 1:
        count += 1
        h >>= 1
    return index, count


def model(elements):
    regs = [0] * REGS
    for e in elements:
        i, v = reg_of(e)
        regs[i] = max(regs[i], v)
    return regs


def estimate(regs):
    """Ertl's improved raw estimator, as Redis computes it."""
    m = float(REGS)
    histo = [0] * 64
    for v in regs:
        histo[v] += 1

    def tau(x):
        if x == 0.0 or x == 1.0:
            return 0.0
        y, z = 1.0, 1 - x
        while True:
            x = math.sqrt(x)
            zp = z
            y *= 0.5
            z -= math.pow(1 - x, 2) * y
            if zp == z:
                return z / 3

    def sigma(x):
        if x == 1.0:
            return math.inf
        y, z = 1.0, x
        while True:
            x *= x
            zp = z
            z += x * y
            y += y
            if zp == z:
                return z

    z = m * tau((m - histo[51]) / m)
    for j in range(50, 0, -1):
        z += histo[j]
        z *= 0.5
    z += m * sigma(histo[0] / m)
    e = 0.721347520444481703680 * m * m / z
    return int(math.floor(e + 0.5))


def expand_decode(text):
    regs = []
    for op in text.split():
        kind, arg = op.split(":")
        if kind in ("z", "Z"):
            regs += [0] * int(arg)
        else:
            v, n = arg.split(",")
            regs += [int(v)] * int(n)
    return regs


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def elements(n, seed):
    rnd = random.Random(seed)
    return [str(rnd.random()).encode() for _ in range(n)]


def test_new_key_is_sparse_string(r):
    assert r.pfadd("h") == 1
    raw = r.get("h")
    # magic, sparse, 3 unused, card 0 with the stale bit, XZERO of 16384
    assert raw == b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80" + b"\x7f\xff"
    assert r.pfcount("h") == 0
    assert r.get("h")[8:16] == b"\x00" * 8
    assert r.type("h") == b"string"
    assert r.pfadd("h") == 0


def test_registers_match_model(r):
    els = [b""] + elements(300, 1)
    for i in range(0, len(els), 50):
        r.pfadd("h", *els[i:i + 50])
    want = model(els)
    assert r.execute_command("PFDEBUG", "ENCODING", "h") == b"sparse"
    decoded = r.execute_command("PFDEBUG", "DECODE", "h").decode()
    assert expand_decode(decoded) == want
    assert r.pfcount("h") == estimate(want)
    assert r.execute_command("PFDEBUG", "GETREG", "h") == want
    # GETREG turned it dense
    assert r.execute_command("PFDEBUG", "ENCODING", "h") == b"dense"
    assert r.strlen("h") == DENSE_LEN
    assert r.pfcount("h") == estimate(want)


def test_pfadd_return_and_cache(r):
    assert r.pfadd("h", "a", "b", "c") == 1
    assert r.pfadd("h", "a", "b", "c") == 0
    card = r.pfcount("h")
    assert card == estimate(model([b"a", b"b", b"c"])) == 3
    assert struct.unpack("<Q", r.get("h")[8:16])[0] == 3
    r.pfadd("h", "a")  # no change keeps the cache
    assert r.getrange("h", 15, 15) == b"\x00"
    r.pfadd("h", "1", "2", "3")
    assert r.getrange("h", 15, 15) == b"\x80"
    assert r.pfcount("h") == 6


def test_promotion_to_dense(r):
    r.config_set("hll-sparse-max-bytes", 300)
    try:
        els = elements(2000, 2)
        seen = []
        encodings = set()
        for i in range(0, len(els), 100):
            r.pfadd("h", *els[i:i + 100])
            seen += els[i:i + 100]
            enc = r.execute_command("PFDEBUG", "ENCODING", "h")
            encodings.add(enc)
            if enc == b"sparse":
                assert r.strlen("h") <= 300
            else:
                assert r.strlen("h") == DENSE_LEN
            assert r.pfcount("h") == estimate(model(seen))
        assert encodings == {b"sparse", b"dense"}
        assert r.execute_command("PFDEBUG", "GETREG", "h") == model(els)
    finally:
        r.config_set("hll-sparse-max-bytes", 3000)
    assert r.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "3000"}


def test_sparse_and_dense_agree(r):
    for n in (0, 1, 7, 60, 250):
        r.delete("s", "d")
        r.pfadd("d")
        assert r.execute_command("PFDEBUG", "TODENSE", "d") == 1
        assert r.execute_command("PFDEBUG", "TODENSE", "d") == 0
        els = elements(n, n)
        if els:
            r.pfadd("s", *els)
            r.pfadd("d", *els)
        else:
            r.pfadd("s")
        assert r.execute_command("PFDEBUG", "ENCODING", "s") == b"sparse"
        assert r.pfcount("s") == r.pfcount("d") == estimate(model(els))


def test_merge_and_union_over_shards(r):
    keys = ["hll:%d" % i for i in range(6)]  # no hashtag: several shards
    sets = [elements(400, 10 + i) for i in range(6)]
    for k, els in zip(keys, sets):
        r.pfadd(k, *els)
    r.execute_command("PFDEBUG", "TODENSE", keys[0])
    union = [e for els in sets for e in els]
    want = model(union)
    assert r.pfcount(*keys) == estimate(want)
    assert r.pfcount(*keys, "missing") == estimate(want)
    assert r.pfmerge("dest", *keys) is True
    assert r.execute_command("PFDEBUG", "ENCODING", "dest") == b"dense"
    assert r.execute_command("PFDEBUG", "GETREG", "dest") == want
    # sparse sources stay a sparse destination
    assert r.pfmerge("dest2", keys[1], keys[2]) is True
    assert r.execute_command("PFDEBUG", "ENCODING", "dest2") == b"sparse"
    assert r.pfcount("dest2") == estimate(model(sets[1] + sets[2]))
    # the destination is a source too
    r.pfadd("acc", "x")
    r.pfmerge("acc", keys[3])
    assert r.pfcount("acc") == estimate(model(sets[3] + [b"x"]))
    assert r.pfmerge("empty") is True
    assert r.get("empty")[:5] == b"HYLL\x01"


def test_type_checks(r):
    r.set("str", "bar")
    r.set("num", "12345")
    r.rpush("list", "a")
    for k in ("str", "num"):
        assert err(r, "PFADD", k, "1") == NOTHLL
        assert err(r, "PFCOUNT", k) == NOTHLL
        assert err(r, "PFCOUNT", k, "other") == NOTHLL
        assert err(r, "PFMERGE", "dst", k) == NOTHLL
        assert err(r, "PFMERGE", k, "src") == NOTHLL
        assert err(r, "PFDEBUG", "ENCODING", k) == NOTHLL
    assert err(r, "PFADD", "list", "1") == WRONGTYPE
    assert err(r, "PFCOUNT", "list") == WRONGTYPE
    assert err(r, "PFMERGE", "dst", "list") == WRONGTYPE
    assert r.exists("dst") == 0


def test_corruption_detected(r):
    r.pfadd("h", "a", "b", "c")
    r.append("h", "hello")
    assert err(r, "PFCOUNT", "h") == INVALID
    assert err(r, "PFCOUNT", "h", "x") == INVALID
    assert err(r, "PFMERGE", "x", "h") == INVALID
    r.delete("h")
    r.pfadd("h", "a", "b", "c")
    r.setrange("h", 0, "0123")
    assert err(r, "PFCOUNT", "h") == NOTHLL
    r.delete("h")
    r.pfadd("h", "a", "b", "c")
    r.setrange("h", 4, "x")
    assert err(r, "PFCOUNT", "h") == NOTHLL
    r.delete("h")
    r.pfadd("h", "a", "b", "c")
    r.setrange("h", 4, "\x00")  # says dense, has the sparse length
    assert err(r, "PFCOUNT", "h") == NOTHLL
    # a valid cache answers without looking at the registers
    r.delete("h")
    r.pfadd("h", "a", "b", "c")
    assert r.pfcount("h") == 3
    r.append("h", "\x01")
    assert r.pfcount("h") == 3
    r.pfadd("h", "d")
    assert err(r, "PFCOUNT", "h") == INVALID


def test_dense_registers_all_at_their_top(r):
    """A dense HLL written by hand with every register at 63 and its cache
    marked stale: the estimate divides by zero, and Redis answers the
    64-bit overflow it rounds to; one at 15 gives an ordinary figure."""
    header = b"HYLL\x00" + b"\x00" * 10 + b"\x80"
    r.set("h", header + b"\xff" * 12288)
    assert r.pfcount("h") == -9223372036854775808
    r.set("h", header + b"\xcf" * 12288)  # registers 15, 63, 60, 51 over and over
    assert r.pfcount("h") == 1549082005


def test_random_corruption_never_crashes(r):
    rnd = random.Random(5)
    outcomes = set()
    for j in range(150):
        r.delete("h")
        r.pfadd("h", *elements(rnd.randrange(1, 2500), j))
        for _ in range(rnd.randrange(1, 5)):
            pos = rnd.randrange(r.strlen("h"))
            r.setrange("h", pos, bytes([rnd.randrange(256)]))
        for args in (("PFCOUNT", "h"), ("PFADD", "h", str(j)), ("PFCOUNT", "h", "h2"),
                     ("PFMERGE", "m", "h"), ("PFDEBUG", "DECODE", "h"), ("PFDEBUG", "GETREG", "h")):
            try:
                r.execute_command(*args)
                outcomes.add("ok")
            except redis.ResponseError as e:
                outcomes.add(str(e).split()[0])
    assert r.ping()
    assert "INVALIDOBJ" in outcomes and "ok" in outcomes


def test_pfdebug_errors(r):
    assert err(r, "PFDEBUG", "ENCODING", "nokey") == "The specified key does not exist"
    r.pfadd("h", "a")
    assert err(r, "PFDEBUG", "Foo", "h") == "Unknown PFDEBUG subcommand 'Foo'"
    assert r.execute_command("PFDEBUG", "DECODE", "h").startswith(b"Z:")
    r.execute_command("PFDEBUG", "TODENSE", "h")
    assert err(r, "PFDEBUG", "DECODE", "h") == "HLL encoding is not sparse"
    assert err(r, "PFDEBUG", "ENCODING") == "wrong number of arguments for 'pfdebug' command"
    assert err(r, "PFCOUNT") == "wrong number of arguments for 'pfcount' command"


def test_dump_restore_and_expire_kept(r):
    r.pfadd("s", *elements(100, 3))
    r.pfadd("d", *elements(100, 3))
    r.execute_command("PFDEBUG", "TODENSE", "d")
    for k in ("s", "d"):
        raw = r.get(k)
        payload = r.dump(k)
        r.restore(k + "2", 0, payload)
        assert r.get(k + "2") == raw
        assert r.pfcount(k + "2") == estimate(model(elements(100, 3)))
    r.expire("s", 1000)
    r.pfadd("s", *elements(200, 4))  # grows the sparse string
    assert 0 < r.ttl("s") <= 1000


def test_selftest(r):
    assert r.execute_command("PFSELFTEST") == b"OK"


def test_truncated_sparse_keeps_earlier_elements(r):
    """A sparse string covering only registers 0..8191: an element whose
    register lies there is added, the next one past the end fails the
    command, and what was added stays (Redis changes the string in place)."""
    els = [str(i).encode() for i in range(200)]
    low = next(e for e in els if reg_of(e)[0] < 8000)
    high = next(e for e in els if reg_of(e)[0] >= 8192)
    hdr = b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80"
    r.set("h", hdr + b"\x5f\xff")  # XZERO of 8192
    assert err(r, "PFADD", "h", low, high) == INVALID
    i, v = reg_of(low)
    regs = expand_decode(r.execute_command("PFDEBUG", "DECODE", "h").decode())
    assert len(regs) == 8192 and regs[i] == v and sum(1 for x in regs if x) == 1
    assert err(r, "PFDEBUG", "GETREG", "h") == INVALID
    # runs past 16384 registers are as corrupt as runs short of it
    r.set("h", hdr + b"\x7f\xff\x01")
    assert err(r, "PFDEBUG", "GETREG", "h") == INVALID
    assert err(r, "PFDEBUG", "TODENSE", "h") == INVALID
    assert err(r, "PFCOUNT", "h") == INVALID
    assert err(r, "PFMERGE", "m", "h") == INVALID
    assert r.execute_command("PFDEBUG", "ENCODING", "h") == b"sparse"


def test_union_errors_in_argument_order(r):
    """With keys spread over shards, the error is the one of the first
    failing key in the command, as when Redis walks them in order."""
    keys = ["hll:%d" % i for i in range(6)]
    for i, k in enumerate(keys):
        r.pfadd(k, *elements(50, 40 + i))
    r.set("str:a", "x")
    r.lpush("list:b", "x")
    r.pfadd("bad:c", "a")
    r.append("bad:c", "zz")
    for order in (["str:a", "bad:c", "list:b"], ["bad:c", "list:b", "str:a"], ["list:b", "str:a", "bad:c"]):
        first = {"str:a": NOTHLL, "bad:c": INVALID, "list:b": WRONGTYPE}[order[0]]
        mixed = [keys[0], keys[1], order[0], keys[2], order[1], keys[3], order[2], keys[4]]
        assert err(r, "PFCOUNT", *mixed) == first
        assert err(r, "PFMERGE", "dst", *mixed) == first
    assert r.exists("dst") == 0
    assert r.pfcount(*keys, "nokey:1", "nokey:2") == estimate(model([e for i in range(6)
                                                                      for e in elements(50, 40 + i)]))


def test_pfcount_refreshing_the_cache_is_a_change(r, server):
    """A PFCOUNT that rewrites the cached cardinality is a write to WATCH
    (Redis signals the key as modified); one that reads a valid cache is
    not."""
    other = server.new_client()
    r.pfadd("h", "x", "y")
    for refresh in (True, False):
        p = r.pipeline()
        p.watch("h")
        other.pfcount("h")  # the first one refreshes the cache, the second reads it
        p.multi()
        p.get("h")
        if refresh:
            with pytest.raises(redis.WatchError):
                p.execute()
        else:
            assert p.execute()[0][8:16] == struct.pack("<Q", 2)
    other.close()
