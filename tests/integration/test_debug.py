"""DEBUG subcommands (behind enable-debug-command, as in Redis): DIGEST and
DIGEST-VALUE give Redis's own digests for the same data, OBJECT, PROTOCOL,
SET-ACTIVE-EXPIRE, POPULATE, LOADAOF, QUICKLIST-PACKED-THRESHOLD,
REPLYBUFFER, and the refusal when the command is off."""
import time

import pytest
import redis


@pytest.fixture
def dbg(spawn):
    s = spawn("--enable-debug-command", "yes")
    c = s.new_client()
    yield c
    c.close()


def load_dataset(c):
    c.set("str", "hello")
    c.set("int", 12345)
    c.rpush("list", "a", "b", "c", 12)
    c.sadd("set", "x", "y", "z")
    c.sadd("intset", 1, 2, 3)
    c.zadd("zset", {"a": 1, "b": 2.5, "c": -3})
    c.hset("hash", mapping={"f": "v", "g": "w"})
    c.xadd("stream", {"f": "v"}, id="1-1")
    c.xadd("stream", {"f": "w", "g": "x"}, id="2-0")
    c.set("ttl", "v", ex=1000)
    c.select(3)
    c.set("db3", "v")
    c.select(0)


# Digests that redis-server 7.0 computes for load_dataset (the same values
# are asserted against every target, redis-server included).
VALUE_DIGESTS = {
    b"str": "36b23a1456b2dce2c3ed252c456761301dba8060",
    b"int": "e1cf90774e995ae03de66e8109dc5cb9d9c2dc83",
}


def test_digest_of_empty_dataset(dbg):
    assert dbg.execute_command("DEBUG", "DIGEST") == b"0" * 40
    assert dbg.execute_command("DEBUG", "DIGEST-VALUE", "missing") == [b"0" * 40]


def test_digest_matches_reference(dbg, target):
    load_dataset(dbg)
    digest = dbg.execute_command("DEBUG", "DIGEST")
    assert len(digest) == 40 and digest != b"0" * 40
    values = dbg.execute_command("DEBUG", "DIGEST-VALUE", "str", "int", "list", "set", "intset", "zset",
                                 "hash", "stream", "ttl")
    assert len(set(values)) == len(values)  # every value digests differently
    # Redis's definition, so both servers agree on every value
    assert values[:2] == [VALUE_DIGESTS[b"str"].encode(), VALUE_DIGESTS[b"int"].encode()]


def test_digest_same_after_reload_and_copy(dbg):
    load_dataset(dbg)
    before = dbg.execute_command("DEBUG", "DIGEST")
    assert dbg.execute_command("DEBUG", "RELOAD") == b"OK"
    assert dbg.execute_command("DEBUG", "DIGEST") == before
    for key in ("list", "set", "zset", "hash", "stream"):
        dbg.copy(key, key + "-copy")
        a, b = dbg.execute_command("DEBUG", "DIGEST-VALUE", key, key + "-copy")
        assert a == b
    dbg.delete("hash-copy")
    assert dbg.execute_command("DEBUG", "DIGEST") != before


def test_digest_changes_with_order_of_list_not_of_set(dbg):
    dbg.rpush("l1", "a", "b")
    dbg.rpush("l2", "b", "a")
    dbg.sadd("s1", "a", "b")
    dbg.sadd("s2", "b", "a")
    l1, l2, s1, s2 = dbg.execute_command("DEBUG", "DIGEST-VALUE", "l1", "l2", "s1", "s2")
    assert l1 != l2
    assert s1 == s2


def test_debug_object(dbg):
    dbg.set("n", 20000)
    line = dbg.execute_command("DEBUG", "OBJECT", "n").decode()
    assert line.startswith("Value at:")
    assert "encoding:int" in line and "serializedlength:" in line and "lru_seconds_idle:" in line
    dbg.rpush("l", *range(10))
    line = dbg.execute_command("DEBUG", "OBJECT", "l").decode()
    assert "encoding:quicklist" in line and "ql_nodes:1" in line
    dbg.hset("h", "f", "x" * 1024)
    assert "encoding:hashtable" in dbg.execute_command("DEBUG", "OBJECT", "h").decode()
    with pytest.raises(redis.ResponseError, match="no such key"):
        dbg.execute_command("DEBUG", "OBJECT", "nokey")


def test_debug_protocol_resp2(dbg):
    assert dbg.execute_command("DEBUG", "PROTOCOL", "string") == b"Hello World"
    assert dbg.execute_command("DEBUG", "PROTOCOL", "integer") == 12345
    assert dbg.execute_command("DEBUG", "PROTOCOL", "double") == b"3.141"
    assert dbg.execute_command("DEBUG", "PROTOCOL", "bignum") == b"1234567999999999999999999999999999999"
    assert dbg.execute_command("DEBUG", "PROTOCOL", "null") is None
    assert dbg.execute_command("DEBUG", "PROTOCOL", "array") == [0, 1, 2]
    assert dbg.execute_command("DEBUG", "PROTOCOL", "set") == [0, 1, 2]
    assert dbg.execute_command("DEBUG", "PROTOCOL", "map") == [0, 0, 1, 1, 2, 0]
    assert dbg.execute_command("DEBUG", "PROTOCOL", "true") == 1
    assert dbg.execute_command("DEBUG", "PROTOCOL", "false") == 0
    assert dbg.execute_command("DEBUG", "PROTOCOL", "verbatim") == b"This is a verbatim\nstring"
    assert dbg.execute_command("DEBUG", "PROTOCOL", "attrib") == b"Some real reply following the attribute"
    with pytest.raises(redis.ResponseError, match="RESP2 is not supported"):
        dbg.execute_command("DEBUG", "PROTOCOL", "push")
    with pytest.raises(redis.ResponseError, match="Wrong protocol type name"):
        dbg.execute_command("DEBUG", "PROTOCOL", "nosuch")


def test_debug_protocol_resp3_raw(spawn):
    import socket
    s = spawn("--enable-debug-command", "yes")
    sock = socket.create_connection((s.host, s.port))
    sock.sendall(b"HELLO 3\r\nDEBUG PROTOCOL bignum\r\nDEBUG PROTOCOL true\r\nDEBUG PROTOCOL attrib\r\nPING\r\n")
    data = b""
    deadline = time.time() + 5
    while not data.endswith(b"+PONG\r\n") and time.time() < deadline:
        data += sock.recv(65536)
    sock.close()
    tail = data[data.index(b"(1234567999"):]
    assert tail == (b"(1234567999999999999999999999999999999\r\n#t\r\n|1\r\n$14\r\nkey-popularity\r\n"
                    b"*2\r\n$7\r\nkey:123\r\n:90\r\n$39\r\nSome real reply following the attribute\r\n+PONG\r\n")


def test_set_active_expire(dbg):
    dbg.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    dbg.set("gone", "v", px=1)
    time.sleep(0.3)  # several expire cycles
    assert dbg.info("keyspace")["db0"]["keys"] == 1  # still in the table, logically expired
    assert dbg.get("gone") is None
    dbg.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    dbg.set("gone2", "v", px=1)
    deadline = time.time() + 5
    while dbg.dbsize() and time.time() < deadline:
        time.sleep(0.05)
    assert dbg.dbsize() == 0


def test_populate(dbg):
    dbg.set("key:3", "mine")
    assert dbg.execute_command("DEBUG", "POPULATE", "10") == b"OK"
    assert dbg.dbsize() == 10
    assert dbg.get("key:3") == b"mine"  # existing keys are left alone
    assert dbg.get("key:9") == b"value:9"
    dbg.execute_command("DEBUG", "POPULATE", "5", "p", "12")
    assert dbg.get("p:4") == b"value:4\x00\x00\x00\x00\x00"
    dbg.execute_command("DEBUG", "POPULATE", "5", "q", "3")
    assert dbg.get("q:4") == b"val"


def test_loadaof(spawn):
    s = spawn("--enable-debug-command", "yes", "--appendonly", "yes")
    c = s.new_client()
    load_dataset(c)
    c.incr("int")
    before = c.execute_command("DEBUG", "DIGEST")
    assert c.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert c.execute_command("DEBUG", "DIGEST") == before
    assert c.get("int") == b"12346"
    c.close()


def test_quicklist_packed_threshold(dbg):
    assert dbg.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b") == b"OK"
    dbg.rpush("l", "xxxxxxxxxx", "9", "yyyyyyyyyy")
    dbg.linsert("l", "before", "9", "8")
    dbg.lset("l", 0, "zzzzzzzzzz")
    assert dbg.lrange("l", 0, -1) == [b"zzzzzzzzzz", b"8", b"9", b"yyyyyyyyyy"]
    assert dbg.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0") == b"OK"
    with pytest.raises(redis.ResponseError, match="memory value"):
        dbg.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb")


def test_replybuffer_shrinks_idle_and_grows_busy(dbg, server, target):
    dbg.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100")
    other = redis.Redis(host=dbg.connection_pool.connection_kwargs["host"],
                        port=dbg.connection_pool.connection_kwargs["port"])
    other.client_setname("watched")

    def rbs():
        for line in dbg.execute_command("CLIENT", "LIST").decode().splitlines():
            if "name=watched" in line:
                return int(line.split("rbs=")[1].split()[0])

    deadline = time.time() + 5
    while not (1024 <= rbs() < 2048) and time.time() < deadline:
        time.sleep(0.1)
    assert 1024 <= rbs() < 2048
    dbg.set("big", "x" * 32768)
    dbg.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never")
    deadline = time.time() + 5
    while time.time() < deadline:
        other.get("big")
        if 16384 <= rbs() < 32768:
            break
        time.sleep(0.1)
    assert 16384 <= rbs() < 32768
    dbg.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset")
    other.close()


def test_debug_refused_when_disabled(r):
    with pytest.raises(redis.ResponseError, match="DEBUG command not allowed"):
        r.execute_command("DEBUG", "DIGEST")


def test_unknown_subcommand(dbg):
    with pytest.raises(redis.ResponseError, match="unknown subcommand or wrong number of arguments for 'NOSUCH'"):
        dbg.execute_command("DEBUG", "NOSUCH")
    with pytest.raises(redis.ResponseError, match="unknown subcommand"):
        dbg.execute_command("DEBUG", "OBJECT")
