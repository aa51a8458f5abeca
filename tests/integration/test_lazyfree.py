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


def big_set(r, key, n=20000):
    for start in range(0, n, 5000):
        r.sadd(key, *range(start, start + 5000))


def lazy_count(r, do):
    """lazyfreed_objects after CONFIG RESETSTAT and do()."""
    assert lazy_done(r)
    r.config_resetstat()
    do()
    assert lazy_done(r)
    return r.info("memory")["lazyfreed_objects"]


def test_lazyfree_directives_choose_the_thread(r):
    """Each cause of a free follows its directive, all "no" by default as in
    Redis: DEL by lazyfree-lazy-user-del, an expiry by lazyfree-lazy-expire,
    an overwrite by lazyfree-lazy-server-del, FLUSHALL without ASYNC/SYNC by
    lazyfree-lazy-user-flush; UNLINK and FLUSHALL ASYNC always go to the
    background, FLUSHALL SYNC never. lazyfreed_objects tells which."""
    names = ("lazyfree-lazy-user-del", "lazyfree-lazy-expire", "lazyfree-lazy-server-del",
             "lazyfree-lazy-eviction", "lazyfree-lazy-user-flush")
    old = {n: r.config_get(n)[n] for n in names}
    assert old == {n: "no" for n in names}
    assert r.config_get("lazyfree-lazy-*") == old
    try:
        big_set(r, "a")
        assert lazy_count(r, lambda: r.delete("a")) == 0
        big_set(r, "a")
        assert lazy_count(r, lambda: r.unlink("a")) == 1
        r.config_set("lazyfree-lazy-user-del", "yes")
        big_set(r, "a")
        assert lazy_count(r, lambda: r.delete("a")) == 1

        big_set(r, "a")
        assert lazy_count(r, lambda: r.set("a", "x")) == 0  # an overwrite is a server delete
        r.config_set("lazyfree-lazy-server-del", "yes")
        r.delete("a")
        big_set(r, "a")
        assert lazy_count(r, lambda: r.set("a", "x")) == 1

        for policy, want in (("no", 0), ("yes", 1)):
            r.config_set("lazyfree-lazy-expire", policy)
            big_set(r, "e")

            def expire():  # gone by a lookup or the active cycle: an expiry either way
                r.pexpire("e", 1)
                time.sleep(0.01)
                assert r.exists("e") == 0
            assert lazy_count(r, expire) == want

        big_set(r, "f")
        assert lazy_count(r, lambda: r.flushall()) == 0
        r.config_set("lazyfree-lazy-user-flush", "yes")
        big_set(r, "f")
        assert lazy_count(r, lambda: r.flushall()) == 1  # the whole keyspace, one object
        big_set(r, "f")
        assert lazy_count(r, lambda: r.execute_command("FLUSHALL", "SYNC")) == 0
        assert r.dbsize() == 0
    finally:
        for n, v in old.items():
            r.config_set(n, v)


def test_big_command_buffers_come_back(r):
    """One command with 100,000 arguments grows the connection's query
    buffer and argument arrays; once later commands are small, they shrink
    back and used_memory returns near where it started (Redis's clientsCron
    resizes the query buffer the same way)."""
    r.flushall()
    assert lazy_done(r)
    base = used_memory(r)
    r.sadd("myset", *range(100000))
    assert r.scard("myset") == 100000
    assert r.unlink("myset") == 1
    deadline = time.time() + 10
    while used_memory(r) > base * 2 + 100_000 and time.time() < deadline:
        time.sleep(0.1)
    assert used_memory(r) <= base * 2 + 100_000
