"""Multi-key commands whose keys live on different shards are atomic and
isolated: readers never observe half of an MSET or of a RENAME.

The keys are chosen so that with 4 shards each pair spans two shards (no
shared {hashtag}). ATOMICITY_SECONDS (default 4) bounds each test; the
acceptance run uses 60."""
import os
import threading
import time

import pytest
import redis

from helpers import shard_of

SECONDS = float(os.environ.get("ATOMICITY_SECONDS", "4"))


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


def test_mset_seen_whole_by_single_key_readers(server, r):
    """After a GET returns one MSET's value, a later GET of another of its
    keys returns that MSET's value or a later one (locks are held until
    every shard has the new values)."""
    a, b, c = keys_on_distinct_shards("lin", 3)
    r.mset({a: 0, b: 0, c: 0})
    bad = []
    checks = [0]

    def writer(stop):
        cl = server.new_client()
        v = 0
        while time.time() < stop:
            v += 1
            cl.mset({a: v, b: v, c: v})

    def reader(stop):
        cl = server.new_client()
        while time.time() < stop:
            x = int(cl.get(a))
            y = int(cl.get(b))
            z = int(cl.get(c))
            checks[0] += 1
            if not (x <= y <= z):
                bad.append((x, y, z))

    run_threads([writer, reader, reader], SECONDS)
    assert bad == []
    assert checks[0] > 100


def test_mget_under_single_key_writers(server, r):
    """Single-key SETs on one of an MSET's keys interleave with MSET and
    MGET: an MGET still sees the MSET's other keys equal."""
    a, b, c = keys_on_distinct_shards("sk", 3)
    r.mset({a: "m0", b: "m0", c: "m0"})
    bad = []
    checks = [0]

    def mset_writer(stop):
        cl = server.new_client()
        v = 0
        while time.time() < stop:
            v += 1
            tag = "m%d" % v
            cl.mset({a: tag, b: tag, c: tag})

    def single_writer(stop):
        cl = server.new_client()
        n = 0
        while time.time() < stop:
            n += 1
            cl.set(a, "s%d" % n)

    def reader(stop):
        cl = server.new_client()
        while time.time() < stop:
            x, y, z = cl.mget(a, b, c)
            checks[0] += 1
            if y != z or not (x == y or x.startswith(b"s")):
                bad.append((x, y, z))

    run_threads([mset_writer, single_writer, reader, reader], SECONDS)
    assert bad == []
    assert checks[0] > 100


def test_del_and_exists_counts_all_or_nothing(server, r):
    """Several deleters race one MSET writer: every DEL and EXISTS of the
    four keys counts 0 or 4, and the deleted total is a multiple of 4."""
    keys = keys_on_distinct_shards("dc", 4)
    bad = []
    deleted = [0]
    lock = threading.Lock()

    def writer(stop):
        cl = server.new_client()
        while time.time() < stop:
            cl.mset({k: 1 for k in keys})

    def deleter(stop):
        cl = server.new_client()
        while time.time() < stop:
            n = cl.delete(*keys)
            if n not in (0, 4):
                bad.append(("del", n))
            with lock:
                deleted[0] += n

    def reader(stop):
        cl = server.new_client()
        while time.time() < stop:
            n = cl.exists(*keys)
            if n not in (0, 4):
                bad.append(("exists", n))

    run_threads([writer, deleter, deleter, reader], SECONDS)
    assert bad == []
    assert deleted[0] % 4 == 0 and deleted[0] > 0


def test_smove_and_lmove_chains_keep_totals(server, r):
    """Members moved around a ring of sets and of lists on different
    shards: a MULTI/EXEC reading every size always sees the same total."""
    sets = keys_on_distinct_shards("sr", 4)
    lists = keys_on_distinct_shards("lr", 4)
    for i, k in enumerate(sets):
        r.sadd(k, *["%s-%d" % (k, j) for j in range(5)])
    for k in lists:
        r.rpush(k, *range(5))
    bad = []
    checks = [0]

    def mover(stop, offset):
        cl = server.new_client()
        i = offset
        while time.time() < stop:
            src, dst = sets[i % 4], sets[(i + 1) % 4]
            m = cl.srandmember(src)
            if m is not None:
                cl.smove(src, dst, m)
            cl.lmove(lists[i % 4], lists[(i + 1) % 4], "LEFT", "RIGHT")
            i += 1

    def counter(stop):
        cl = server.new_client()
        while time.time() < stop:
            p = cl.pipeline(transaction=True)
            for k in sets:
                p.scard(k)
            for k in lists:
                p.llen(k)
            got = p.execute()
            checks[0] += 1
            if sum(got[:4]) != 20 or sum(got[4:]) != 20:
                bad.append(got)

    run_threads([lambda s: mover(s, 0), lambda s: mover(s, 2), counter], SECONDS)
    assert bad == []
    assert checks[0] > 20


def test_cross_shard_reads_and_stores_see_whole_moves(server, r):
    """SMOVE between sets on different shards while SUNION, SUNIONSTORE and
    SINTERCARD over all of them run: a member is always in exactly one set,
    so every union has all members and the sets never share one."""
    sets = keys_on_distinct_shards("su", 4)
    dest = keys_on_distinct_shards("sdst", 1)[0]
    members = ["m%d" % j for j in range(12)]
    for j, m in enumerate(members):
        r.sadd(sets[j % 4], m)
    bad = []
    checks = [0]

    def mover(stop, offset):
        cl = server.new_client()
        i = offset
        while time.time() < stop:
            src, dst = sets[i % 4], sets[(i + 3) % 4]
            m = cl.srandmember(src)
            if m is not None:
                cl.smove(src, dst, m)
            i += 1

    def reader(stop):
        cl = server.new_client()
        while time.time() < stop:
            if len(cl.sunion(sets)) != 12:
                bad.append("sunion")
            if cl.sunionstore(dest, sets) != 12 or cl.scard(dest) != 12:
                bad.append("sunionstore")
            if cl.execute_command("SINTERCARD", 2, sets[0], sets[1]) != 0:
                bad.append("sintercard")
            checks[0] += 1

    run_threads([lambda s: mover(s, 0), lambda s: mover(s, 1), reader], SECONDS)
    assert bad == []
    assert checks[0] > 20
    assert sum(r.scard(k) for k in sets) == 12


def test_random_multi_key_load_finishes(server, r):
    """No deadlock: clients run random cross-shard MGET, MSET, DEL, EXISTS,
    RENAME, MULTI/EXEC and single-key commands over a few hot
    keys; every call returns (the clients time out after 20 s)."""
    import random
    keys = keys_on_distinct_shards("hot", 4) + keys_on_distinct_shards("warm", 4)
    done = [0]
    lock = threading.Lock()

    def worker(stop, seed):
        rnd = random.Random(seed)
        cl = server.new_client(socket_timeout=20)
        n = 0
        while time.time() < stop:
            ks = rnd.sample(keys, rnd.randint(2, 5))
            try:  # other workers change the keys' types meanwhile
                op = rnd.randrange(9)
                if op == 0:
                    cl.mget(*ks)
                elif op == 1:
                    cl.mset({k: n for k in ks})
                elif op == 2:
                    cl.delete(*ks)
                elif op == 3:
                    cl.exists(*ks)
                elif op == 4:
                    cl.set(ks[0], n)
                    cl.get(ks[1])
                elif op == 5:
                    cl.set(ks[0], "v")
                    try:
                        cl.rename(ks[0], ks[1])
                    except Exception as e:  # the key may have been deleted meanwhile
                        if "no such key" not in str(e):
                            raise
                elif op == 6:
                    cl.delete(ks[0], ks[1])
                    cl.sadd(ks[0], "a", "b")
                    cl.smove(ks[0], ks[1], "a")
                    cl.sunionstore(ks[0], ks)
                elif op == 7:
                    cl.delete(ks[0])
                    cl.rpush(ks[0], 1, 2)
                    try:
                        cl.lmove(ks[0], ks[1], "LEFT", "RIGHT")
                    except Exception as e:  # ks[1] may hold a set meanwhile
                        if "WRONGTYPE" not in str(e):
                            raise
                else:
                    p = cl.pipeline(transaction=True)
                    p.incr(ks[0])
                    p.mget(*ks)
                    p.delete(ks[1])
                    p.execute(raise_on_error=False)
            except redis.ResponseError as e:
                if not any(w in str(e) for w in ("WRONGTYPE", "no such key", "not an integer")):
                    raise
            n += 1
        with lock:
            done[0] += n

    run_threads([lambda s, i=i: worker(s, i) for i in range(8)], SECONDS)
    assert done[0] > 100
    assert r.ping()
