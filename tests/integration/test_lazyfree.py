"""Freeing big values and whole databases: DEL / UNLINK of large
collections, FLUSHDB ASYNC and FLUSHALL ASYNC answer at once, the keys are
gone for every later command, and the memory comes back (shoal frees such
values on a background thread, as Redis's lazyfree does)."""
import time


def used_memory(r):
    return int(r.info("memory")["used_memory"])


def fill_hash(r, key, n):
    for start in range(0, n, 5000):
        r.hset(key, mapping={f"f{i}": f"v{i}" for i in range(start, min(n, start + 5000))})


def wait_memory_below(r, limit, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if used_memory(r) < limit:
            return True
        time.sleep(0.05)
    return False


def test_unlink_and_del_big_values(r):
    base = used_memory(r)
    fill_hash(r, "bighash", 60000)
    for start in range(0, 60000, 5000):  # small commands: no big query buffers stay behind
        r.sadd("bigset", *[f"m{i}" for i in range(start, start + 5000)])
        r.zadd("bigz", {f"z{i}": i for i in range(start, start + 5000)})
    grown = used_memory(r)
    assert grown > base + 3_000_000
    assert r.unlink("bighash", "nokey") == 1
    assert r.delete("bigset", "bigz") == 2
    assert r.exists("bighash", "bigset", "bigz") == 0
    assert r.hget("bighash", "f1") is None
    # the same names are usable at once
    r.hset("bighash", "f1", "new")
    assert r.hgetall("bighash") == {b"f1": b"new"}
    assert wait_memory_below(r, base + (grown - base) // 4)
    assert int(r.info("memory")["lazyfree_pending_objects"]) >= 0


def test_flush_async(r):
    r.select(0)
    # the connection's buffers grow to these commands' size first, so the
    # base counts them and only the data is compared
    fill_hash(r, "warm", 8000)
    r.mset({f"s{i}": "x" * 50 for i in range(5000)})
    r.flushall()
    base = used_memory(r)
    for k in range(8):
        fill_hash(r, f"h{k}", 8000)
    for start in range(0, 20000, 5000):
        r.mset({f"s{i}": "x" * 50 for i in range(start, start + 5000)})
    grown = used_memory(r)
    assert r.dbsize() == 20008
    assert r.flushdb(asynchronous=True) is True
    assert r.dbsize() == 0
    assert r.get("s1") is None
    r.set("after", "1")
    assert r.get("after") == b"1"
    for k in range(4):
        fill_hash(r, f"h{k}", 8000)
    assert r.execute_command("FLUSHALL", "ASYNC") is True
    assert r.dbsize() == 0
    assert wait_memory_below(r, base + (grown - base) // 4)


def test_flush_mode_errors(r):
    import pytest
    import redis
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("FLUSHALL", "LATER")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("FLUSHDB", "ASYNC", "SYNC")


def lazy_done(r, timeout=10.0):
    deadline = time.time() + timeout
    while r.info("memory")["lazyfree_pending_objects"] and time.time() < deadline:
        time.sleep(0.02)
    return r.info("memory")["lazyfree_pending_objects"] == 0


def test_streams_lazy_freed_by_their_allocations(r):
    """A stream goes to the background by Redis's effort (nodes, groups and
    PEL entries over 64), counted in lazyfreed_objects; a small one with a
    destroyed group is freed at once; CONFIG RESETSTAT zeroes the count."""
    assert lazy_done(r)
    r.config_resetstat()
    old = r.config_get("stream-node-max-entries")["stream-node-max-entries"]
    try:
        r.config_set("stream-node-max-entries", 5)
        p = r.pipeline(transaction=False)
        for j in range(1000):
            p.xadd("big", {"foo": j})
        p.execute()
        r.xgroup_create("big", "g", id="0")
        r.xreadgroup("g", "alice", {"big": ">"}, count=2)
        assert r.unlink("big") == 1
        assert lazy_done(r)
        assert r.info("memory")["lazyfreed_objects"] == 1
        r.config_resetstat()
        r.xadd("small", {"a": "b"})
        r.xgroup_create("small", "bla", id="$")
        r.xgroup_destroy("small", "bla")
        assert r.unlink("small") == 1
        assert lazy_done(r)
        assert r.info("memory")["lazyfreed_objects"] == 0
    finally:
        r.config_set("stream-node-max-entries", old)
