"""The MEMORY container (STATS, DOCTOR, MALLOC-STATS, PURGE, USAGE, HELP)
against Redis 7.0's reply shapes. Figures differ between servers, so the
tests check names, order, types and relations between the figures."""
import pytest
import redis

from test_connection import RawConn

HEAD = [b"peak.allocated", b"total.allocated", b"startup.allocated", b"replication.backlog",
        b"clients.slaves", b"clients.normal", b"cluster.links", b"aof.buffer", b"lua.caches",
        b"functions.caches"]
TAIL = [b"overhead.total", b"keys.count", b"keys.bytes-per-key", b"dataset.bytes",
        b"dataset.percentage", b"peak.percentage", b"allocator.allocated", b"allocator.active",
        b"allocator.resident", b"allocator-fragmentation.ratio", b"allocator-fragmentation.bytes",
        b"allocator-rss.ratio", b"allocator-rss.bytes", b"rss-overhead.ratio", b"rss-overhead.bytes",
        b"fragmentation", b"fragmentation.bytes"]
DOUBLES = {b"dataset.percentage", b"peak.percentage", b"allocator-fragmentation.ratio",
           b"allocator-rss.ratio", b"rss-overhead.ratio", b"fragmentation"}
EMPTY = (b"Hi Sam, this instance is empty or is using very little memory, my issues detector can't be "
         b"used in these conditions. Please, leave for your mission on Earth and fill it with some data. "
         b"The new Sam and I will be back to our programming as soon as I finished rebooting.\n")
HELP = [
    b"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    b"DOCTOR",
    b"    Return memory problems reports.",
    b"MALLOC-STATS",
    b"    Return internal statistics report from the memory allocator.",
    b"PURGE",
    b"    Attempt to purge dirty pages for reclamation by the allocator.",
    b"STATS",
    b"    Return information about the memory usage of the server.",
    b"USAGE <key> [SAMPLES <count>]",
    b"    Return memory in bytes used by <key> and its value. Nested values are",
    b"    sampled up to <count> times (default: 5, 0 means sample all).",
    b"HELP",
    b"    Prints this help.",
]


def stats2(r):
    """MEMORY STATS in RESP2 as an ordered list of (name, value)."""
    flat = r.execute_command("MEMORY", "STATS")
    assert isinstance(flat, list) and len(flat) % 2 == 0
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def test_stats_resp2_names_order_types(r):
    r.set("a", "1")
    r.set("b", "2", ex=100)
    r.execute_command("SELECT", 2)
    r.set("c", "3")
    r.execute_command("SELECT", 0)
    pairs = stats2(r)
    names = [k for k, _ in pairs]
    assert names == HEAD + [b"db.0", b"db.2"] + TAIL
    for k, v in pairs:
        if k.startswith(b"db."):
            assert v[0::2] == [b"overhead.hashtable.main", b"overhead.hashtable.expires",
                               b"overhead.hashtable.slot-to-keys"]
            assert all(isinstance(x, int) for x in v[1::2])
        elif k in DOUBLES:
            assert isinstance(v, bytes)
            float(v)
        else:
            assert isinstance(v, int), k
    d = dict(pairs)
    assert d[b"keys.count"] == 3
    assert d[b"replication.backlog"] == 0 and d[b"clients.slaves"] == 0 and d[b"cluster.links"] == 0
    assert d[b"peak.allocated"] >= d[b"total.allocated"] > d[b"startup.allocated"] > 0
    assert d[b"dataset.bytes"] == d[b"total.allocated"] - d[b"overhead.total"]


def test_stats_empty_has_no_db_entry(r):
    names = [k for k, _ in stats2(r)]
    assert names == HEAD + TAIL


def test_stats_resp3_map(server):
    c = RawConn(server)
    try:
        assert c.call("HELLO", "3")[0] == "%"
        c.call("FLUSHALL")
        c.call("SET", "k", "v")
        t, pairs = c.call("MEMORY", "STATS")
        assert t == "%"
        names = [k[1] for k, _ in pairs]
        assert names == HEAD + [b"db.0"] + TAIL
        for (_, k), (vt, v) in pairs:
            if k == b"db.0":
                assert vt == "%"
                assert [x[1] for x, _ in v] == [b"overhead.hashtable.main", b"overhead.hashtable.expires",
                                                b"overhead.hashtable.slot-to-keys"]
            elif k in DOUBLES:
                assert vt == ","
            else:
                assert vt == ":", k
        c.call("FLUSHALL")
    finally:
        c.close()


def test_stats_follow_the_data(r):
    before = dict(stats2(r))
    pipe = r.pipeline(transaction=False)
    for i in range(2000):
        pipe.set("key:%d" % i, "x" * 100)
    pipe.execute()
    after = dict(stats2(r))
    assert after[b"keys.count"] == r.dbsize() == 2000
    assert after[b"total.allocated"] > before[b"total.allocated"] + 2000 * 100
    assert after[b"keys.bytes-per-key"] > 100
    assert after[b"peak.allocated"] >= after[b"total.allocated"]


def test_doctor_empty_instance(r):
    assert r.execute_command("MEMORY", "DOCTOR") == EMPTY


def test_doctor_resp3_verbatim(server):
    c = RawConn(server)
    try:
        c.call("HELLO", "3")
        c.call("FLUSHALL")
        assert c.call("MEMORY", "DOCTOR") == ("=", b"txt:" + EMPTY)
    finally:
        c.close()


def test_purge_and_malloc_stats(r):
    assert r.execute_command("MEMORY", "PURGE") == b"OK"
    text = r.execute_command("MEMORY", "MALLOC-STATS")
    assert isinstance(text, bytes) and len(text) > 0


def test_help(r):
    assert r.execute_command("MEMORY", "HELP") == HELP


@pytest.mark.parametrize("args,name", [
    (["STATS", "x"], "memory|stats"),
    (["DOCTOR", "x"], "memory|doctor"),
    (["PURGE", "x"], "memory|purge"),
    (["MALLOC-STATS", "x"], "memory|malloc-stats"),
    (["HELP", "x"], "memory|help"),
    (["USAGE"], "memory|usage"),
])
def test_wrong_arity(r, args, name):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("MEMORY", *args)
    assert str(e.value) == "wrong number of arguments for '%s' command" % name


def test_unknown_subcommand(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("MEMORY", "FOO")
    assert str(e.value) == "unknown subcommand 'FOO'. Try MEMORY HELP."


def test_command_info(server):
    special = [b"nondeterministic_output", b"request_policy:all_shards", b"response_policy:special"]
    want = {
        b"memory|stats": (2, [], [b"@slow"], special),
        b"memory|doctor": (2, [], [b"@slow"], special),
        b"memory|malloc-stats": (2, [], [b"@slow"], special),
        b"memory|purge": (2, [], [b"@slow"], [b"request_policy:all_shards", b"response_policy:all_succeeded"]),
        b"memory|usage": (-3, [b"readonly"], [b"@read", b"@slow"], []),
        b"memory|help": (2, [b"loading", b"stale"], [b"@slow"], []),
    }
    c = RawConn(server)
    try:
        t, rows = c.call("COMMAND", "INFO", *[k.decode() for k in want])
        assert t == "*" and len(rows) == len(want)
        for _, row in rows:
            vals = [x[1] for x in row]
            name, arity = vals[0], vals[1]
            as_bytes = lambda xs: [x if isinstance(x, bytes) else x.encode() for _, x in xs]
            flags, acl, tips = as_bytes(vals[2]), as_bytes(vals[6]), as_bytes(vals[7])
            assert (arity, flags, acl, tips) == want[name], name
    finally:
        c.close()


def test_acl_subcommand_rules(server):
    r = server.new_client()
    try:
        r.execute_command("ACL", "SETUSER", "memuser", "on", "nopass", "-@all", "+memory|doctor")
        u = server.new_client()
        try:
            u.execute_command("AUTH", "memuser", "x")
            assert u.execute_command("MEMORY", "DOCTOR")
            with pytest.raises(redis.ResponseError) as e:
                u.execute_command("MEMORY", "STATS")
            assert "no permissions to run the 'memory|stats' command" in str(e.value)
        finally:
            u.close()
    finally:
        r.execute_command("ACL", "DELUSER", "memuser")
        r.close()
