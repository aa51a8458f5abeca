"""RDB interchange of streams with redis-server 7.0, both ways: consumer
groups, pending entries, consumers with and without a PEL, deleted entries
and entries over several nodes. A file saved by redis-server loads here with
the same XINFO STREAM FULL, XRANGE and XPENDING, and a file saved here
passes redis-check-rdb and loads into redis-server the same way."""
import os
import shutil
import subprocess
import tempfile

import pytest

from helpers import Server

CHECK_RDB = shutil.which("redis-check-rdb") or "/usr/bin/redis-check-rdb"


def fill(c):
    c.config_set("stream-node-max-entries", 7)  # several nodes
    p = c.pipeline(transaction=False)
    for i in range(1, 61):
        p.xadd("st", {"f": i, "g": "v%d" % i} if i % 5 else {"other": i}, id="%d-%d" % (1000 + i, i % 3))
    p.execute()
    c.xdel("st", "1004-1", "1020-2", "1033-0")  # tombstones inside nodes
    c.xgroup_create("st", "g1", id="0")
    c.xgroup_create("st", "g2", id="1030-0")
    c.xreadgroup("g1", "alice", {"st": ">"}, count=10)
    c.xreadgroup("g1", "bob", {"st": ">"}, count=5)
    c.xack("st", "g1", "1002-2", "1003-0")
    c.xreadgroup("g2", "carol", {"st": ">"}, count=3, noack=True)
    c.xgroup_createconsumer("st", "g2", "idle")
    c.execute_command("XCLAIM", "st", "g1", "carol", "0", "1005-2", "RETRYCOUNT", "7")
    c.xadd("empty", {"a": "b"}, id="5-5")
    c.xdel("empty", "5-5")
    c.xgroup_create("empty", "g", id="$")
    c.config_set("stream-node-max-entries", 100)


def snapshot(c):
    for name in list(c.response_callbacks):
        if name.startswith("XINFO") or name == "XPENDING":
            c.response_callbacks.pop(name)  # the raw replies
    out = {}
    for k in (b"st", b"empty"):
        full = c.execute_command("XINFO", "STREAM", k, "FULL")
        out[k] = (full, c.xrange(k), c.execute_command("XPENDING", k, "g1" if k == b"st" else "g", "-", "+", "100"))
    return out


def strip_times(v):
    """What differs by design: XPENDING's idle time (it runs on), and
    radix-tree-nodes, which shoal estimates (docs/architecture.md)."""
    full, rng, pending = v
    full = list(full)
    i = full.index(b"radix-tree-nodes")
    full[i + 1] = None
    return full, rng, [p[:2] + p[3:] for p in pending]


def test_redis_stream_file_loads_here(spawn, target):
    ref = Server("redis")
    ref.start()
    try:
        rr = ref.new_client()
        fill(rr)
        assert rr.save()
        want = snapshot(rr)
        d = tempfile.mkdtemp(prefix="shoal-rdb-st-")
        shutil.copy(os.path.join(ref.dir, "dump.rdb"), os.path.join(d, "dump.rdb"))
    finally:
        ref.stop()
    s = spawn("--dir", d)
    c = s.new_client()
    got = snapshot(c)
    assert {k: strip_times(v) for k, v in got.items()} == {k: strip_times(v) for k, v in want.items()}
    c.close()


def test_our_stream_file_loads_in_redis(spawn, target):
    s = spawn()
    c = s.new_client()
    fill(c)
    assert c.save()
    want = snapshot(c)
    path = os.path.join(s.dir, "dump.rdb")
    chk = subprocess.run([CHECK_RDB, path], capture_output=True, text=True, timeout=30)
    assert chk.returncode == 0 and "RDB looks OK" in chk.stdout, chk.stdout + chk.stderr
    d = tempfile.mkdtemp(prefix="shoal-rdb-st-")
    shutil.copy(path, os.path.join(d, "dump.rdb"))
    ref = Server("redis", ["--dir", d])
    ref.start()
    try:
        got = snapshot(ref.new_client())
        assert {k: strip_times(v) for k, v in got.items()} == {k: strip_times(v) for k, v in want.items()}
    finally:
        ref.stop()
    c.close()
