"""RDB interchange of HyperLogLogs (sparse, dense, cached or stale
cardinality) and geo sets (listpack and skiplist sized) with redis-server
7.0, both ways: a file saved by redis-server loads here with the same
bytes, PFCOUNT and GEOPOS, and a file saved here passes redis-check-rdb and
loads into redis-server the same way. DUMP payloads of the HLLs are
redis-server's bytes."""
import os
import random
import shutil
import subprocess
import tempfile

import pytest

from helpers import Server

CHECK_RDB = shutil.which("redis-check-rdb") or "/usr/bin/redis-check-rdb"


@pytest.fixture
def ref():
    s = Server("redis")
    s.start()
    yield s
    s.stop()


def fill(c):
    rnd = random.Random(11)
    c.pfadd("hll:sparse", *["s%d" % i for i in range(200)])
    c.pfadd("hll:cached", *["c%d" % i for i in range(50)])
    c.pfcount("hll:cached")  # valid cache in the header
    c.pfadd("hll:dense", *["d%d" % i for i in range(5000)])
    c.pfadd("hll:empty")
    c.pfmerge("hll:merged", "hll:sparse", "hll:dense")
    for key, n in (("geo:small", 40), ("geo:big", 600)):
        args = []
        for i in range(n):
            args += [repr(rnd.uniform(-180, 180)), repr(rnd.uniform(-85, 85)), "m%d" % i]
        c.execute_command("GEOADD", key, *args)


def geo_raw(c):
    for name in ("GEOPOS", "GEOSEARCH"):
        c.response_callbacks.pop(name, None)
    return c


def snapshot(c):
    geo_raw(c)
    out = {}
    for k in sorted(c.keys("*")):
        if c.type(k) == b"string":
            out[k] = (c.get(k), c.dump(k), c.pfcount(k))
        else:
            members = [m for m, _ in c.zrange(k, 0, -1, withscores=True)]
            out[k] = (c.zrange(k, 0, -1, withscores=True), c.object("encoding", k),
                      c.execute_command("GEOPOS", k, *members),
                      c.execute_command("GEOSEARCH", k, "FROMLONLAT", "0", "0", "BYRADIUS", "3000", "km", "ASC",
                                        "WITHDIST"))
    return out


def test_redis_file_loads_here(spawn, ref, target):
    rr = ref.new_client()
    fill(rr)
    assert rr.execute_command("PFDEBUG", "ENCODING", "hll:sparse") == b"sparse"
    assert rr.execute_command("PFDEBUG", "ENCODING", "hll:dense") == b"dense"
    assert rr.object("encoding", "geo:small") == b"listpack" and rr.object("encoding", "geo:big") == b"skiplist"
    assert rr.save()
    d = tempfile.mkdtemp(prefix="shoal-rdb-hg-")
    shutil.copy(os.path.join(ref.dir, "dump.rdb"), os.path.join(d, "dump.rdb"))
    want = snapshot(rr)
    s = spawn("--dir", d)
    c = s.new_client()
    assert snapshot(c) == want
    c.close()
    rr.close()


def test_our_file_loads_in_redis(spawn, target):
    s = spawn()
    c = s.new_client()
    fill(c)
    assert c.save()
    want = snapshot(c)
    path = os.path.join(s.dir, "dump.rdb")
    chk = subprocess.run([CHECK_RDB, path], capture_output=True, text=True, timeout=30)
    assert chk.returncode == 0 and "RDB looks OK" in chk.stdout, chk.stdout + chk.stderr
    d = tempfile.mkdtemp(prefix="shoal-rdb-hg-")
    shutil.copy(path, os.path.join(d, "dump.rdb"))
    ref = Server("redis", ["--dir", d])
    ref.start()
    try:
        assert snapshot(ref.new_client()) == want
    finally:
        ref.stop()
    c.close()


def test_dumps_are_redis_bytes(r, ref):
    rr = ref.new_client()
    for c in (r, rr):
        fill(c)
    for k in (b"hll:sparse", b"hll:cached", b"hll:dense", b"hll:empty", b"hll:merged"):
        assert r.dump(k) == rr.dump(k)
        assert r.get(k) == rr.get(k)
    rr.close()
