"""Multi-key commands whose keys live on different shards are atomic and
isolated: readers never observe half of an MSET or of a RENAME.

The keys are chosen so that with 4 shards each pair spans two shards (no
shared {hashtag}). ATOMICITY_SECONDS (default 4) bounds each test; the
acceptance run uses 60."""
import os
import threading
import time

import pytest

SECONDS = float(os.environ.get("ATOMICITY_SECONDS", "4"))


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def shard_of(key, nshards=4):
    return (crc16(key.encode()) % 16384) % nshards


def keys_on_distinct_shards(prefix, count):
    out, used = [], set()
    i = 0
    while len(out) < count:
        k = "%s%d" % (prefix, i)
        if shard_of(k) not in used:
            used.add(shard_of(k))
            out.append(k)
        i += 1
    return out


def run_threads(fns, seconds):
    stop = time.time() + seconds
    errors = []

    def wrap(fn):
        try:
            fn(stop)
        except Exception as e:  # surfaced below
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(f,)) for f in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(seconds + 30)
    assert not errors, errors


def test_keys_span_shards():
    a, b = keys_on_distinct_shards("pair", 2)
    assert shard_of(a) != shard_of(b)


def test_mset_mget_atomic(server, r):
    a, b, c = keys_on_distinct_shards("m", 3)
    r.mset({a: 0, b: 0, c: 0})
    checks = [0]
    bad = []

    def writer(stop):
        cl = server.new_client()
        v = 0
        while time.time() < stop:
            v += 1
            cl.mset({a: v, b: v, c: v})

    def reader(stop):
        cl = server.new_client()
        while time.time() < stop:
            x = cl.mget(a, b, c)
            checks[0] += 1
            if not (x[0] == x[1] == x[2]):
                bad.append(x)

    run_threads([writer, writer, reader, reader], SECONDS)
    assert bad == []
    assert checks[0] > 100
    x = r.mget(a, b, c)
    assert x[0] == x[1] == x[2]


def test_rename_pingpong_atomic(server, r):
    x, y = keys_on_distinct_shards("rn", 2)
    r.set(x, "v")
    bad = []
    checks = [0]

    def renamer(stop):
        cl = server.new_client()
        src, dst = x, y
        while time.time() < stop:
            cl.rename(src, dst)
            src, dst = dst, src

    def reader(stop):
        cl = server.new_client()
        while time.time() < stop:
            n = cl.exists(x, y)
            checks[0] += 1
            if n != 1:
                bad.append(n)
            got = cl.mget(x, y)
            if sorted(g is None for g in got) != [False, True]:
                bad.append(got)

    run_threads([renamer, reader, reader], SECONDS)
    assert bad == []
    assert checks[0] > 100
    assert r.exists(x, y) == 1


def test_del_all_or_nothing(server, r):
    keys = keys_on_distinct_shards("d", 4)
    bad = []

    def writer(stop):
        cl = server.new_client()
        while time.time() < stop:
            cl.mset({k: 1 for k in keys})
            cl.delete(*keys)

    def reader(stop):
        cl = server.new_client()
        while time.time() < stop:
            n = cl.exists(*keys)
            if n not in (0, 4):
                bad.append(n)

    run_threads([writer, reader], SECONDS)
    assert bad == []
