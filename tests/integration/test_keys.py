"""Generic keyspace commands: DEL UNLINK EXISTS TYPE TOUCH KEYS SCAN
RANDOMKEY DBSIZE FLUSHDB FLUSHALL SWAPDB RENAME RENAMENX COPY MOVE, OBJECT
and MEMORY. Keys are spread over many names so that, on shoal --threads 4,
multi-key commands cross shards."""
import time

import pytest
import redis

from helpers import raw_exchange

INT_RANGE_ERR = "value is out of range, value must between -2147483648 and 2147483647"


def err(fn, *args):
    with pytest.raises(redis.ResponseError) as e:
        fn(*args)
    return str(e.value)


def scan_all(r, **kw):
    """Full SCAN iteration; returns (keys seen as a list, number of calls)."""
    cur, seen, calls = 0, [], 0
    while True:
        cur, keys = r.scan(cur, **kw)
        seen.extend(keys)
        calls += 1
        assert calls < 100000
        if cur == 0:
            return seen, calls


# ---- DEL UNLINK EXISTS TYPE TOUCH ----

def test_del_unlink_exists(r):
    r.mset({"k%d" % i: i for i in range(20)})
    assert r.exists("k1", "k1", "nokey", "k2") == 3
    assert r.delete("k1", "k2", "nokey", "k1") == 2
    assert r.unlink("k3", "k4", "k5") == 3
    assert r.exists(*["k%d" % i for i in range(20)]) == 15
    assert err(r.execute_command, "DEL") == "wrong number of arguments for 'del' command"
    assert err(r.execute_command, "EXISTS") == "wrong number of arguments for 'exists' command"


def test_type(r):
    r.set("s", "v")
    assert r.type("s") == b"string"
    assert r.type("nokey") == b"none"
    r.set("n", 12)
    assert r.type("n") == b"string"


def test_touch(r):
    r.mset({"t%d" % i: i for i in range(10)})
    assert r.touch("t1", "t2", "nokey", "t1", "t9") == 4
    assert r.touch("nokey") == 0
    assert err(r.execute_command, "TOUCH") == "wrong number of arguments for 'touch' command"


# ---- KEYS DBSIZE FLUSHDB FLUSHALL ----

def test_keys_patterns(r):
    r.mset({"foo": 1, "foobar": 2, "fxo": 3, "bar": 4, "f*x": 5})
    assert sorted(r.keys("*")) == [b"bar", b"f*x", b"foo", b"foobar", b"fxo"]
    assert sorted(r.keys("f?o")) == [b"foo", b"fxo"]
    assert sorted(r.keys("foo*")) == [b"foo", b"foobar"]
    assert sorted(r.keys("f[ox]o")) == [b"foo", b"fxo"]
    assert sorted(r.keys("f[^o]o")) == [b"fxo"]
    assert r.keys("f\\*x") == [b"f*x"]
    assert r.keys("nomatch*") == []


def test_keys_skips_expired(r):
    r.set("live", 1)
    for i in range(20):
        r.set("gone%d" % i, 1, px=1)
    time.sleep(0.02)
    assert r.keys("*") == [b"live"]


def test_keys_many_stars_is_fast(r):
    r.set("a" * 5000, 1)
    t = time.time()
    assert r.keys("*" * 20 + "b") == []
    assert r.keys("a" + "*a" * 20) == [b"a" * 5000]
    assert time.time() - t < 2


def test_dbsize_flushdb_flushall(r):
    r.mset({"d%d" % i: i for i in range(30)})
    assert r.dbsize() == 30
    r.execute_command("SELECT", 1)
    r.set("other", 1)
    assert r.dbsize() == 1
    r.execute_command("SELECT", 0)
    assert r.execute_command("FLUSHDB", "SYNC") is True
    assert r.dbsize() == 0
    r.execute_command("SELECT", 1)
    assert r.dbsize() == 1
    assert r.execute_command("FLUSHALL", "ASYNC") is True
    assert r.dbsize() == 0
    r.execute_command("SELECT", 0)
    assert err(r.execute_command, "FLUSHDB", "FOO") == "syntax error"
    assert err(r.execute_command, "FLUSHALL", "SYNC", "ASYNC") == "syntax error"
    assert err(r.execute_command, "DBSIZE", "x") == "wrong number of arguments for 'dbsize' command"


# ---- SCAN ----

def test_scan_returns_every_key(r):
    keys = {("key:%d" % i).encode() for i in range(1000)}
    p = r.pipeline(transaction=False)
    for k in keys:
        p.set(k, 1)
    p.execute()
    seen, _ = scan_all(r)
    assert set(seen) == keys
    seen, calls = scan_all(r, count=100)
    assert set(seen) == keys
    assert calls < 1000 // 10
    seen, _ = scan_all(r, count=1)
    assert set(seen) == keys


def test_scan_survives_growth(r):
    """Keys present for the whole scan come back even while the table grows."""
    base = {("base:%d" % i).encode() for i in range(200)}
    r.mset({k: 1 for k in base})
    cur, seen, n = 0, set(), 0
    while True:
        cur, got = r.scan(cur, count=5)
        seen.update(got)
        r.mset({"grow:%d:%d" % (n, j): 1 for j in range(20)})
        n += 1
        if cur == 0:
            break
    assert base <= seen


def test_scan_match_and_type(r):
    r.mset({"user:%d" % i: i for i in range(50)})
    r.mset({"item:%d" % i: i for i in range(50)})
    seen, _ = scan_all(r, match="user:*")
    assert sorted(seen) == sorted(("user:%d" % i).encode() for i in range(50))
    seen, _ = scan_all(r, match="user:1?", count=7)
    assert sorted(seen) == sorted(("user:1%d" % i).encode() for i in range(10))
    seen, _ = scan_all(r, _type="string")
    assert len(seen) == 100
    seen, _ = scan_all(r, _type="STRING", match="item:4*")
    assert sorted(seen) == sorted([b"item:4"] + [("item:4%d" % i).encode() for i in range(10)])
    seen, _ = scan_all(r, _type="list")
    assert seen == []
    seen, _ = scan_all(r, _type="nosuchtype")
    assert seen == []


def test_scan_skips_expired(r):
    r.mset({"keep:%d" % i: 1 for i in range(100)})
    for i in range(100):
        r.set("exp:%d" % i, 1, px=1)
    time.sleep(0.02)
    seen, _ = scan_all(r)
    assert sorted(seen) == sorted(("keep:%d" % i).encode() for i in range(100))


def test_scan_empty_and_other_db(r):
    seen, _ = scan_all(r)
    assert seen == []
    r.execute_command("SELECT", 2)
    r.mset({"db2:%d" % i: 1 for i in range(40)})
    seen, _ = scan_all(r)
    assert len(seen) == 40
    r.execute_command("SELECT", 0)
    assert scan_all(r)[0] == []


def test_scan_reply_shape(r):
    r.set("a", 1)
    r.set_response_callback("SCAN", lambda resp, **kw: resp)
    reply = r.execute_command("SCAN", "0", "COUNT", "1000")
    assert isinstance(reply[0], bytes)
    assert isinstance(reply[1], list)
    cur, keys = reply
    while cur != b"0":
        cur, more = r.execute_command("SCAN", cur, "COUNT", "1000")
        keys += more
    assert keys == [b"a"]


def test_scan_cursor_parsing(r):
    r.set("a", 1)
    for ok in ("-1", "+5", "", "18446744073709551615", "00"):
        reply = r.execute_command("SCAN", ok)
        assert len(reply) == 2
    for bad in (" 1", "abc", "1x", "18446744073709551616", "-", "0x10"):
        assert err(r.execute_command, "SCAN", bad) == "invalid cursor"


def test_scan_errors(r):
    scan = r.execute_command
    assert err(scan, "SCAN", "0", "COUNT", "0") == "syntax error"
    assert err(scan, "SCAN", "0", "COUNT", "-1") == "syntax error"
    assert err(scan, "SCAN", "0", "COUNT", "x") == "value is not an integer or out of range"
    assert err(scan, "SCAN", "0", "MATCH") == "syntax error"
    assert err(scan, "SCAN", "0", "TYPE") == "syntax error"
    assert err(scan, "SCAN", "0", "FOO", "bar") == "syntax error"
    assert err(scan, "SCAN") == "wrong number of arguments for 'scan' command"
    # an invalid cursor wins over a bad option
    assert err(scan, "SCAN", "x", "COUNT", "0") == "invalid cursor"


# ---- RANDOMKEY ----

def test_randomkey(r):
    assert r.randomkey() is None
    keys = {("r%d" % i).encode() for i in range(50)}
    r.mset({k: 1 for k in keys})
    got = {r.randomkey() for _ in range(200)}
    assert got <= keys
    assert len(got) > 5
    assert err(r.execute_command, "RANDOMKEY", "x") == "wrong number of arguments for 'randomkey' command"


def test_randomkey_skips_expired(r):
    for i in range(30):
        r.set("e%d" % i, 1, px=1)
    r.set("live", 1)
    time.sleep(0.02)
    for _ in range(10):
        assert r.randomkey() == b"live"
    r.delete("live")
    assert r.randomkey() is None


# ---- RENAME RENAMENX ----

def test_rename(r):
    r.set("src", "v")
    assert r.rename("src", "dst") is True
    assert r.get("src") is None and r.get("dst") == b"v"
    assert err(r.rename, "src", "dst") == "no such key"
    assert err(r.rename, "nokey", "nokey") == "no such key"
    assert r.rename("dst", "dst") is True
    assert r.get("dst") == b"v"


def test_rename_keeps_ttl_and_replaces(r):
    r.set("a", "1", ex=100)
    r.set("b", "2", ex=500)
    assert r.rename("a", "b") is True
    assert r.get("b") == b"1"
    assert 90 <= r.ttl("b") <= 100
    r.set("c", "3")
    r.set("d", "4", ex=500)
    r.rename("c", "d")
    assert r.ttl("d") == -1


def test_rename_across_shards(r):
    pairs = [("ra%d" % i, "rb%d" % i) for i in range(40)]
    for i, (a, _) in enumerate(pairs):
        r.set(a, i, ex=1000 + i)
    for a, b in pairs:
        assert r.rename(a, b) is True
    for i, (a, b) in enumerate(pairs):
        assert r.exists(a) == 0
        assert r.get(b) == str(i).encode()
        assert 990 + i <= r.ttl(b) <= 1000 + i
    assert r.dbsize() == 40


def test_renamenx(r):
    r.set("a", 1)
    r.set("b", 2)
    assert r.renamenx("a", "b") is False
    assert r.get("a") == b"1" and r.get("b") == b"2"
    assert r.renamenx("a", "c") is True
    assert r.get("c") == b"1" and r.exists("a") == 0
    assert r.renamenx("c", "c") is False
    assert err(r.renamenx, "nokey", "x") == "no such key"
    for i in range(30):
        r.set("nx%d" % i, i)
        assert r.renamenx("nx%d" % i, "ny%d" % i) is True
        assert r.get("ny%d" % i) == str(i).encode()


# ---- COPY ----

def test_copy(r):
    r.set("a", "hello", ex=100)
    assert r.copy("a", "b") is True
    assert r.get("b") == b"hello"
    assert 90 <= r.ttl("b") <= 100
    r.set("a", "changed")
    assert r.get("b") == b"hello"
    assert r.copy("a", "b") is False
    assert r.get("b") == b"hello"
    assert r.copy("a", "b", replace=True) is True
    assert r.get("b") == b"changed"
    assert r.ttl("b") == -1
    assert r.copy("nokey", "x") is False
    assert r.exists("x") == 0


def test_copy_across_shards(r):
    for i in range(30):
        r.set("ca%d" % i, i)
        assert r.copy("ca%d" % i, "cb%d" % i) is True
    for i in range(30):
        assert r.get("ca%d" % i) == r.get("cb%d" % i) == str(i).encode()


def test_copy_db(r):
    r.set("a", "v")
    assert r.execute_command("COPY", "a", "a", "DB", "3") == 1
    assert r.execute_command("COPY", "a", "a", "DB", "3") == 0
    assert r.execute_command("COPY", "a", "a", "DB", "3", "REPLACE") == 1
    assert r.execute_command("COPY", "a", "zz", "DB", "1", "DB", "3") == 1
    r.execute_command("SELECT", 3)
    assert sorted(r.keys("*")) == [b"a", b"zz"]
    r.execute_command("SELECT", 0)
    assert r.keys("*") == [b"a"]


def test_copy_errors(r):
    r.set("a", "v")
    cp = r.execute_command
    assert err(cp, "COPY", "a", "a") == "source and destination objects are the same"
    assert err(cp, "COPY", "a", "a", "DB", "0") == "source and destination objects are the same"
    assert err(cp, "COPY", "a", "b", "DB", "99") == "DB index is out of range"
    assert err(cp, "COPY", "a", "b", "DB", "-1") == "DB index is out of range"
    assert err(cp, "COPY", "a", "b", "DB", "x") == "value is not an integer or out of range"
    assert err(cp, "COPY", "a", "b", "DB", "99999999999") == INT_RANGE_ERR
    assert err(cp, "COPY", "a", "b", "DB", "99", "FOO") == "DB index is out of range"
    assert err(cp, "COPY", "a", "b", "FOO", "DB", "99") == "syntax error"
    assert err(cp, "COPY", "a", "b", "REPLACE", "DB") == "syntax error"
    assert err(cp, "COPY", "a") == "wrong number of arguments for 'copy' command"


# ---- MOVE ----

def test_move(r):
    r.set("a", "v", ex=100)
    assert r.move("a", 1) is True
    assert r.exists("a") == 0
    r.execute_command("SELECT", 1)
    assert r.get("a") == b"v"
    assert 90 <= r.ttl("a") <= 100
    r.execute_command("SELECT", 0)
    r.set("a", "other")
    assert r.move("a", 1) is False
    assert r.get("a") == b"other"
    assert r.move("nokey", 1) is False
    for i in range(20):
        r.set("mv%d" % i, i)
        assert r.move("mv%d" % i, 5) is True
    r.execute_command("SELECT", 5)
    assert r.dbsize() == 20


def test_move_errors(r):
    r.set("a", "v")
    mv = r.execute_command
    assert err(mv, "MOVE", "a", "0") == "source and destination objects are the same"
    assert err(mv, "MOVE", "nokey", "0") == "source and destination objects are the same"
    assert err(mv, "MOVE", "a", "99") == "DB index is out of range"
    assert err(mv, "MOVE", "a", "-1") == "DB index is out of range"
    assert err(mv, "MOVE", "a", "x") == "value is not an integer or out of range"
    assert err(mv, "MOVE", "a", "99999999999") == INT_RANGE_ERR
    assert err(mv, "MOVE", "a") == "wrong number of arguments for 'move' command"


# ---- SWAPDB ----

def test_swapdb(r, server):
    r.mset({"zero:%d" % i: 0 for i in range(20)})
    r.execute_command("SELECT", 1)
    r.mset({"one:%d" % i: 1 for i in range(5)})
    other = server.new_client()
    try:
        assert other.get("zero:1") == b"0"
        assert r.swapdb(0, 1) is True
        assert other.get("zero:1") is None
        assert other.get("one:1") == b"1"
        assert other.dbsize() == 5
        assert r.dbsize() == 20
        assert r.get("zero:3") == b"0"
        assert r.swapdb(1, 1) is True
        assert r.dbsize() == 20
    finally:
        other.close()
        r.execute_command("SELECT", 0)


def test_swapdb_keeps_ttls(r):
    r.set("t", 1, ex=100)
    r.swapdb(0, 7)
    r.execute_command("SELECT", 7)
    assert 90 <= r.ttl("t") <= 100
    r.execute_command("SELECT", 0)


def test_swapdb_errors(r):
    sw = r.execute_command
    assert err(sw, "SWAPDB", "x", "0") == "invalid first DB index"
    assert err(sw, "SWAPDB", "0", "x") == "invalid second DB index"
    assert err(sw, "SWAPDB", "99999999999", "0") == "invalid first DB index"
    assert err(sw, "SWAPDB", "0", "99999999999") == "invalid second DB index"
    assert err(sw, "SWAPDB", "0", "99") == "DB index is out of range"
    assert err(sw, "SWAPDB", "-1", "0") == "DB index is out of range"
    assert err(sw, "SWAPDB", "0") == "wrong number of arguments for 'swapdb' command"


# ---- OBJECT ----

def test_object_encoding(r):
    r.set("i", 12345)
    r.set("e", "short")
    r.set("raw", "x" * 100)
    assert r.object("encoding", "i") == b"int"
    assert r.object("encoding", "e") == b"embstr"
    assert r.object("encoding", "raw") == b"raw"
    assert r.object("encoding", "nokey") is None
    r.set("e", "x" * 44)
    assert r.object("encoding", "e") == b"embstr"
    r.set("e", "x" * 45)
    assert r.object("encoding", "e") == b"raw"


def test_object_refcount(r):
    r.set("small", 5)
    r.set("edge", 9999)
    r.set("big", 10000)
    r.set("neg", -1)
    r.set("str", "hello")
    assert r.object("refcount", "small") == 2147483647
    assert r.object("refcount", "edge") == 2147483647
    assert r.object("refcount", "big") == 1
    assert r.object("refcount", "neg") == 1
    assert r.object("refcount", "str") == 1
    assert r.object("refcount", "nokey") is None


def test_object_idletime_freq(r):
    r.set("a", 1)
    assert r.object("idletime", "a") in (0, 1)
    assert r.object("idletime", "nokey") is None
    assert r.object("freq", "nokey") is None
    assert err(r.object, "freq", "a") == (
        "An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.")


def test_object_under_lfu(spawn):
    s = spawn("--maxmemory-policy", "allkeys-lfu")
    c = s.new_client()
    try:
        c.set("a", "v")
        assert isinstance(c.object("freq", "a"), int)
        assert err(c.object, "idletime", "a") == (
            "An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
            "switching between policies at runtime LRU and LFU data will take some time to adjust.")
    finally:
        c.close()


def test_object_help_and_errors(r):
    r.set_response_callback("OBJECT", lambda resp, **kw: resp)
    help_ = r.execute_command("OBJECT", "HELP")
    assert help_[0] == b"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"ENCODING <key>" in help_ and b"REFCOUNT <key>" in help_
    ob = r.execute_command
    assert err(ob, "OBJECT", "FOO", "a") == "unknown subcommand 'FOO'. Try OBJECT HELP."
    assert err(ob, "OBJECT") == "wrong number of arguments for 'object' command"
    assert err(ob, "OBJECT", "ENCODING") == "wrong number of arguments for 'object|encoding' command"
    assert err(ob, "OBJECT", "ENCODING", "a", "b") == "wrong number of arguments for 'object|encoding' command"
    assert err(ob, "OBJECT", "HELP", "x") == "wrong number of arguments for 'object|help' command"


def test_object_across_shards(r):
    for i in range(20):
        r.set("o%d" % i, "x" * (i * 5))
    for i in range(20):
        want = b"embstr" if i * 5 <= 44 else b"raw"
        assert r.object("encoding", "o%d" % i) == want


# ---- MEMORY ----

def test_memory_usage(r):
    r.set("a", "v")
    r.set("big", "x" * 10000)
    for k in ("a", "big"):
        n = r.memory_usage(k)
        assert isinstance(n, int) and n > 0
    assert r.memory_usage("big") > r.memory_usage("a")
    assert r.memory_usage("nokey") is None
    assert r.execute_command("MEMORY", "USAGE", "a", "SAMPLES", "0") > 0
    assert r.execute_command("MEMORY", "USAGE", "a", "SAMPLES", "5", "SAMPLES", "3") > 0


def test_memory_errors(r):
    r.set("a", "v")
    m = r.execute_command
    assert err(m, "MEMORY", "USAGE", "a", "SAMPLES", "x") == "value is not an integer or out of range"
    assert err(m, "MEMORY", "USAGE", "a", "SAMPLES", "-1") == "syntax error"
    assert err(m, "MEMORY", "USAGE", "a", "SAMPLES") == "syntax error"
    assert err(m, "MEMORY", "USAGE", "a", "FOO") == "syntax error"
    assert err(m, "MEMORY", "USAGE") == "wrong number of arguments for 'memory|usage' command"
    assert err(m, "MEMORY") == "wrong number of arguments for 'memory' command"
    assert err(m, "MEMORY", "FOO") == "unknown subcommand 'FOO'. Try MEMORY HELP."
    help_ = m("MEMORY", "HELP")
    assert help_[0] == b"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"USAGE <key> [SAMPLES <count>]" in help_


def test_resp3_nulls(r, server):
    def cmd(*a):
        return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
    payload = cmd(b"HELLO", b"3") + cmd(b"OBJECT", b"ENCODING", b"nokey") + cmd(b"MEMORY", b"USAGE", b"nokey")
    payload += cmd(b"RANDOMKEY") + cmd(b"PING")
    out = raw_exchange(server, payload, read_until=b"+PONG\r\n")
    assert out.endswith(b"_\r\n_\r\n_\r\n+PONG\r\n")


def test_scan_of_a_small_keyspace_returns_it_in_one_call(r):
    # as Redis's first SCAN of a database with fewer keys than COUNT: every
    # key and cursor 0, with keys on every shard
    names = [b"small:%d" % i for i in range(7)]
    for k in names:
        r.set(k, "v")
    cursor, keys = r.scan(0)
    assert cursor == 0 and sorted(keys) == sorted(names)
    cursor, keys = r.scan(0, count=20, match="small:[0-3]")
    assert cursor == 0 and sorted(keys) == names[:4]
