"""A pipelining client's commands take effect in the order it sent them,
key by key, also when some of them run as transactions over several shards
(MGET, MSET, DEL, EXISTS split per shard; EXEC of commands on several
shards run as one batch per shard) and the client does not wait for them.
With --threads 4 the key pairs below live on different shards."""
import redis

from helpers import raw_exchange
from test_atomicity import keys_on_distinct_shards
from test_blocking import arr, blockers, bulk, wait_blocked  # noqa: F401 (blockers is a fixture)


def test_pipelined_split_commands_keep_per_key_order(r):
    p = r.pipeline(transaction=False)
    n = 150
    for i in range(n):
        a, b = "po:a%d" % i, "po:b%d" % i
        p.mset({a: i, b: i})
        p.mget(a, b)
        p.incr(a)
        p.mget(a, b)
        p.delete(a, b)
        p.exists(a, b)
        p.set(b, "x")
        p.get(b)
    out = p.execute()
    for i in range(n):
        s = str(i).encode()
        assert out[8 * i:8 * i + 8] == [True, [s, s], i + 1, [str(i + 1).encode(), s], 2, 0, True, b"x"]


def test_pipelined_reads_after_writes_on_other_shards(r):
    a, b, c = keys_on_distinct_shards("pw", 3)
    p = r.pipeline(transaction=False)
    for i in range(200):
        p.mset({a: i, b: i})
        p.get(a)
        p.get(b)
        p.mget(c, a, b)
        p.set(c, i)
    out = p.execute()
    for i in range(200):
        s = str(i).encode()
        prev = str(i - 1).encode() if i else None
        assert out[5 * i:5 * i + 5] == [True, s, s, [prev, s, s], True]


def test_exec_across_shards_then_pipelined_reads(server, r):
    a, b, c = keys_on_distinct_shards("ex", 3)
    send, want = [], []
    for i in range(100):
        send.append("MULTI\r\nSET %s %d\r\nINCR %s\r\nRPUSH %s %d\r\nGET %s\r\nEXEC\r\n"
                    "MGET %s %s\r\nLLEN %s\r\n" % (a, i, b, c, i, a, a, b, c))
        s, n = str(i), str(i + 1)
        want.append("+OK\r\n" + "+QUEUED\r\n" * 4 +
                    "*4\r\n+OK\r\n:%s\r\n:%s\r\n$%d\r\n%s\r\n" % (n, n, len(s), s) +
                    "*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n:%s\r\n" % (len(s), s, len(n), n, n))
    want = "".join(want).encode()
    assert raw_exchange(server, "".join(send).encode(), read_until=want) == want


def test_exec_across_shards_reply_shapes(server, r):
    a, b = keys_on_distinct_shards("es", 2)
    r.set(b, "str")
    out = raw_exchange(server, ("MULTI\r\nSET %s 1\r\nLPUSH %s x\r\nBLPOP %s 0\r\nPING\r\nINCR %s\r\n"
                                "GET %s\r\nEXEC\r\n" % (a, b, a, a, a)).encode())
    assert out == (b"+OK\r\n" + b"+QUEUED\r\n" * 6 + b"*6\r\n+OK\r\n"
                   b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
                   b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
                   b"+PONG\r\n:2\r\n$1\r\n2\r\n")


def test_exec_across_shards_serves_blocked_client_after_the_block(r, blockers):
    a, q = keys_on_distinct_shards("eb", 2)
    b = blockers("BLPOP", q, 0)
    wait_blocked(r, 1)
    p = r.pipeline(transaction=True)
    p.set(a, "1").rpush(q, "x").lpop(q).rpush(q, "y").incr(a)
    assert p.execute() == [True, 1, b"x", 1, 2]
    b.expect(arr(bulk(q), bulk("y")))
    assert r.exists(q) == 0


def test_exec_across_shards_with_watch(server, r):
    a, b = keys_on_distinct_shards("ew", 2)
    r.set(a, "1")
    c = server.new_client()
    with r.pipeline(transaction=True) as p:
        p.watch(a)
        c.set(a, "2")
        p.multi()
        p.set(a, "3").set(b, "3")
        try:
            p.execute()
            ran = True
        except redis.WatchError:
            ran = False
    assert not ran
    assert r.mget(a, b) == [b"2", None]


def test_rename_across_shards_moves_value_and_ttl(r):
    a, b, c = keys_on_distinct_shards("rn", 3)
    r.rpush(a, "x", "y")
    r.pexpire(a, 100000)
    r.set(b, "old")
    assert r.rename(a, b) is True
    assert r.exists(a) == 0
    assert r.lrange(b, 0, -1) == [b"x", b"y"]
    assert 90000 < r.pttl(b) <= 100000
    assert r.renamenx(b, c) is True
    assert r.renamenx(c, c) is False
    r.set(a, "1")
    assert r.renamenx(a, c) is False
    assert r.get(a) == b"1"
    try:
        r.rename(b, a)
        raised = None
    except redis.ResponseError as e:
        raised = str(e)
    assert raised == "no such key"
    assert r.type(c) == b"list" and r.ttl(c) > 0


def test_rename_across_shards_wakes_blocked_client(r, blockers):
    a, q = keys_on_distinct_shards("rw", 2)
    b = blockers("BLPOP", q, 0)
    wait_blocked(r, 1)
    r.rpush(a, "v")
    assert r.rename(a, q) is True
    b.expect(arr(bulk(q), bulk("v")))
    assert r.exists(q) == 0


def test_rename_pipelined_then_read(r):
    a, b = keys_on_distinct_shards("rp", 2)
    p = r.pipeline(transaction=False)
    for i in range(100):
        p.set(a, i)
        p.rename(a, b)
        p.get(b)
        p.exists(a)
    out = p.execute()
    for i in range(100):
        assert out[4 * i:4 * i + 4] == [True, True, str(i).encode(), 0]
