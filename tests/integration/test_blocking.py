"""Blocking pops and moves (BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP BZPOPMIN
BZPOPMAX BZMPOP): immediate answers, FIFO order among blocked clients,
timeouts, wake-ups from other connections (and, with --threads 4, other
shards), disconnects, deleted keys and type changes, errors.

Blocked clients are raw sockets: the test sends the command, waits until
INFO shows the expected number of blocked clients, acts, then reads the
exact reply bytes."""
import socket
import time

import pytest
import redis

from helpers import raw_exchange

# Keys in many slots: with --threads 4 they spread over the shards.
KEYS = [f"{{k{i}}}list" for i in range(8)]


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def bulk(s):
    s = s.encode() if isinstance(s, str) else s
    return b"$%d\r\n%s\r\n" % (len(s), s)


def arr(*items):
    return b"*%d\r\n" % len(items) + b"".join(items)


def blocked_clients(r):
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if blocked_clients(r) == n:
            return
        time.sleep(0.01)
    raise AssertionError(f"expected {n} blocked clients, have {blocked_clients(r)}")


def read_exact(sock, want, timeout=5.0):
    sock.settimeout(timeout)
    got = b""
    while len(got) < len(want):
        d = sock.recv(65536)
        if not d:
            break
        got += d
    assert got == want
    return got


def nothing_pending(sock, wait=0.2):
    sock.settimeout(wait)
    try:
        d = sock.recv(65536)
    except socket.timeout:
        return True
    return d == b""


class Blocker:
    """A raw connection that sends a blocking command and is read later."""

    def __init__(self, server, *cmd):
        self.s = server.raw(timeout=10)
        self.s.sendall(resp(*cmd))

    def expect(self, want):
        return read_exact(self.s, want)

    def close(self):
        self.s.close()


@pytest.fixture
def blockers(server):
    made = []

    def make(*cmd):
        b = Blocker(server, *cmd)
        made.append(b)
        return b

    yield make
    for b in made:
        b.close()


# ---- immediate answers ----

def test_blpop_brpop_immediate(rs):
    rs.rpush(KEYS[1], "a", "b", "c")
    assert rs.blpop([KEYS[0], KEYS[1]], 1) == (KEYS[1], "a")
    assert rs.brpop([KEYS[0], KEYS[1]], 1) == (KEYS[1], "c")
    assert list(rs.execute_command("BLPOP", KEYS[1], 0)) == [KEYS[1], "b"]
    assert rs.exists(KEYS[1]) == 0


def test_blmove_brpoplpush_immediate(rs):
    rs.rpush("{a}src", "1", "2", "3")
    assert rs.execute_command("BLMOVE", "{a}src", "{b}dst", "LEFT", "RIGHT", 1) == "1"
    assert rs.brpoplpush("{a}src", "{b}dst", 1) == "3"
    assert rs.lrange("{b}dst", 0, -1) == ["3", "1"]
    assert rs.execute_command("BLMOVE", "{a}src", "{a}src", "LEFT", "RIGHT", 0) == "2"
    assert rs.lrange("{a}src", 0, -1) == ["2"]


def test_blmpop_bzmpop_immediate(rs):
    rs.rpush(KEYS[2], "a", "b", "c")
    assert rs.execute_command("BLMPOP", 1, 2, KEYS[0], KEYS[2], "RIGHT", "COUNT", 2) == [KEYS[2], ["c", "b"]]
    assert rs.execute_command("BLMPOP", 0, 1, KEYS[2], "LEFT", "COUNT", 9) == [KEYS[2], ["a"]]
    rs.zadd("{z}b", {"x": 1, "y": 2, "w": 3})
    assert rs.execute_command("BZMPOP", 1, 2, "{z}a", "{z}b", "MAX", "COUNT", 2) == ["{z}b", [["w", "3"], ["y", "2"]]]
    assert rs.execute_command("BZPOPMIN", "{z}a", "{z}b", 1) == ("{z}b", "x", 1.0)
    rs.zadd("{z}c", {"p": 1.5, "q": 2})
    assert rs.execute_command("BZPOPMAX", "{z}c", 0) == ("{z}c", "q", 2.0)


def test_bzpop_resp3_shape(server, r):
    r.zadd("zz", {"m": 2.5})
    out = raw_exchange(server, b"HELLO 3\r\nBZPOPMIN zz 1\r\nBZPOPMIN zz 0.01\r\n", read_until=b"_\r\n")
    assert out.endswith(b"*3\r\n$2\r\nzz\r\n$1\r\nm\r\n,2.5\r\n_\r\n")


def test_timeout_reply_resp2_shapes(server):
    out = raw_exchange(server, b"BLPOP nokey 0.01\r\nBLMOVE nokey d LEFT LEFT 0.01\r\nBZMPOP 0.01 1 nz MIN\r\n",
                       read_until=b"*-1\r\n*-1\r\n*-1\r\n")
    # BLMOVE too answers a null array on timeout (Redis 7.0)
    assert out == b"*-1\r\n*-1\r\n*-1\r\n"


# ---- errors ----

@pytest.mark.parametrize("bad,err", [
    ("-1", "timeout is negative"),
    ("abc", "timeout is not a float or out of range"),
    ("nan", "timeout is not a float or out of range"),
    ("inf", "timeout is negative"),
    ("1e300", "timeout is negative"),
    ("", "timeout is not a float or out of range"),
])
def test_timeout_errors(r, bad, err):
    for cmd in (["BLPOP", "k"], ["BRPOP", "k"], ["BZPOPMIN", "k"], ["BZPOPMAX", "k"],
                ["BRPOPLPUSH", "k", "d"], ["BLMOVE", "k", "d", "LEFT", "LEFT"]):
        with pytest.raises(redis.ResponseError, match=f"^{err}$"):
            r.execute_command(*cmd, bad)
    with pytest.raises(redis.ResponseError, match=f"^{err}$"):
        r.execute_command("BLMPOP", bad, 1, "k", "LEFT")
    with pytest.raises(redis.ResponseError, match=f"^{err}$"):
        r.execute_command("BZMPOP", bad, 1, "k", "MIN")


def test_argument_errors(r):
    cases = [
        (["BLMPOP", 0, 0, "k", "LEFT"], "numkeys should be greater than 0"),
        (["BLMPOP", 0, -3, "k", "LEFT"], "numkeys should be greater than 0"),
        (["BLMPOP", 0, 5, "k", "LEFT"], "syntax error"),
        (["BLMPOP", 0, 1, "k", "MIDDLE"], "syntax error"),
        (["BLMPOP", 0, 1, "k", "LEFT", "COUNT", 0], "count should be greater than 0"),
        (["BLMPOP", 0, 1, "k", "LEFT", "COUNT"], "syntax error"),
        (["BLMPOP", "x", 1, "k", "LEFT"], "timeout is not a float or out of range"),
        (["BZMPOP", 0, 0, "k", "MIN"], "numkeys should be greater than 0"),
        (["BZMPOP", 0, 1, "k", "LOW"], "syntax error"),
        (["BZMPOP", 0, 1, "k", "MIN", "COUNT", -1], "count should be greater than 0"),
        (["BLMOVE", "a", "b", "UP", "LEFT", 0], "syntax error"),
        (["BLPOP", "k"], "wrong number of arguments for 'blpop' command"),
        (["BZPOPMIN", "k"], "wrong number of arguments for 'bzpopmin' command"),
        (["BLMOVE", "a", "b", "LEFT", "LEFT"], "wrong number of arguments for 'blmove' command"),
    ]
    for cmd, err in cases:
        with pytest.raises(redis.ResponseError, match=f"^{err}$"):
            r.execute_command(*cmd)


def test_wrong_type_is_immediate(r):
    r.set("str", "v")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        r.blpop(["nokey", "str"], 0)
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        r.bzpopmin(["str"], 0)
    r.rpush("l", "x")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        r.execute_command("BLMOVE", "l", "str", "LEFT", "LEFT", 0)
    assert r.lrange("l", 0, -1) == [b"x"]


# ---- blocking and waking ----

def test_timeout_fractional(r):
    t0 = time.time()
    assert r.blpop(["nokey"], 0.2) is None
    took = time.time() - t0
    assert 0.15 <= took < 3
    t0 = time.time()
    assert r.execute_command("BZPOPMIN", "nokey", "0.1") is None
    assert 0.05 <= time.time() - t0 < 3
    assert blocked_clients(r) == 0


def test_zero_timeout_blocks_until_served(r, blockers):
    b = blockers("BLPOP", KEYS[3], 0)
    wait_blocked(r, 1)
    time.sleep(0.4)
    assert nothing_pending(b.s, 0.1)
    r.rpush(KEYS[3], "late")
    b.expect(arr(bulk(KEYS[3]), bulk("late")))
    wait_blocked(r, 0)


def test_fifo_order_one_push(r, blockers):
    bs = []
    for i in range(3):
        bs.append(blockers("BLPOP", KEYS[4], 0))
        wait_blocked(r, i + 1)
    r.rpush(KEYS[4], "a", "b", "c", "d")
    for b, v in zip(bs, "abc"):
        b.expect(arr(bulk(KEYS[4]), bulk(v)))
    assert r.lrange(KEYS[4], 0, -1) == [b"d"]


def test_fifo_order_separate_pushes(r, blockers):
    bs = []
    for i in range(3):
        bs.append(blockers("BRPOP", KEYS[5], 0))
        wait_blocked(r, i + 1)
    for v in "xyz":
        r.lpush(KEYS[5], v)
    for b, v in zip(bs, "xyz"):
        b.expect(arr(bulk(KEYS[5]), bulk(v)))
    assert r.exists(KEYS[5]) == 0


def test_wake_on_any_of_many_keys(r, blockers):
    # Each key in turn: a client blocked on all eight keys is woken by a push
    # to that one, wherever its shard is.
    for k in KEYS:
        b = blockers("BLPOP", *KEYS, 0)
        wait_blocked(r, 1)
        r.rpush(k, "v-" + k)
        b.expect(arr(bulk(k), bulk("v-" + k)))
        wait_blocked(r, 0)
        assert r.exists(*KEYS) == 0


def test_first_key_listed_wins_when_both_ready(r, blockers):
    b = blockers("BLPOP", KEYS[0], KEYS[1], 0)
    wait_blocked(r, 1)
    r.rpush(KEYS[1], "one")
    b.expect(arr(bulk(KEYS[1]), bulk("one")))


def test_keys_served_in_the_order_they_got_values(r, blockers):
    # one transaction fills two keys of one slot: the key pushed first is
    # served first, to the first client, whichever key each client listed first
    a, b = "{t}blist", "{t}blist2"
    bs = []
    for i, cmd in enumerate([("BLMPOP", 0, 2, b, a, "LEFT", "COUNT", 1), ("BLMPOP", 0, 2, a, b, "RIGHT", "COUNT", 10),
                             ("BLMPOP", 0, 2, a, b, "LEFT", "COUNT", 10), ("BLMPOP", 0, 2, a, b, "RIGHT", "COUNT", 1)]):
        bs.append(blockers(*cmd))
        wait_blocked(r, i + 1)
    p = r.pipeline(transaction=True)
    p.lpush(a, "a", "b", "c", "d", "e")
    p.lpush(b, "1", "2", "3", "4", "5")
    p.execute()
    bs[0].expect(arr(bulk(a), arr(bulk("e"))))
    bs[1].expect(arr(bulk(a), arr(*[bulk(v) for v in "abcd"])))
    bs[2].expect(arr(bulk(b), arr(*[bulk(v) for v in "54321"])))
    r.lpush(b, "1", "2", "3")
    bs[3].expect(arr(bulk(b), arr(bulk("1"))))
    wait_blocked(r, 0)


def test_sorted_sets_served_in_the_order_they_got_values(r, blockers):
    a, b = "{t}zset", "{t}zset2"
    first = blockers("BZMPOP", 0, 2, b, a, "MIN", "COUNT", 1)
    wait_blocked(r, 1)
    second = blockers("BZMPOP", 0, 2, a, b, "MIN", "COUNT", 1)
    wait_blocked(r, 2)
    p = r.pipeline(transaction=True)
    p.zadd(a, {"x": 1})
    p.zadd(b, {"y": 2})
    p.execute()
    first.expect(arr(bulk(a), arr(arr(bulk("x"), bulk("1")))))
    second.expect(arr(bulk(b), arr(arr(bulk("y"), bulk("2")))))
    wait_blocked(r, 0)


def test_swapdb_wakes_blocked_client(r, server):
    # a client blocked in db 9 is served when SWAPDB brings a value there
    c = server.new_client()
    c.execute_command("SELECT", 1)
    c.rpush("k", "hello")
    c.execute_command("SELECT", 3)
    c.zadd("zk", {"m": 1})
    c.close()
    s = server.raw(timeout=10)
    try:
        s.sendall(resp("SELECT", 9) + resp("BRPOP", "k", 5) + resp("BZPOPMIN", "zk", 5))
        read_exact(s, b"+OK\r\n")
        wait_blocked(r, 1)
        r.swapdb(1, 9)
        read_exact(s, arr(bulk("k"), bulk("hello")))
        wait_blocked(r, 1)
        r.swapdb(3, 9)
        read_exact(s, arr(bulk("zk"), bulk("m"), bulk("1")))
        wait_blocked(r, 0)
    finally:
        s.close()


def test_many_clients_many_shards(r, blockers):
    bs = [blockers("BRPOP", k, 5) for k in KEYS]
    wait_blocked(r, len(KEYS))
    for k in reversed(KEYS):
        r.rpush(k, k)
    for b, k in zip(bs, KEYS):
        b.expect(arr(bulk(k), bulk(k)))


def test_blmove_blocked_cross_shard(r, blockers):
    b = blockers("BLMOVE", "{a}src", "{b}dst", "RIGHT", "LEFT", 0)
    wait_blocked(r, 1)
    r.rpush("{a}src", "v1", "v2")
    b.expect(bulk("v2"))
    assert r.lrange("{b}dst", 0, -1) == [b"v2"]
    assert r.lrange("{a}src", 0, -1) == [b"v1"]


def test_brpoplpush_blocked_chain(r, blockers):
    # first waits on src; a second client waits on dst: the move wakes it.
    b1 = blockers("BRPOPLPUSH", "{c}src", "{d}dst", 0)
    wait_blocked(r, 1)
    b2 = blockers("BLPOP", "{d}dst", 0)
    wait_blocked(r, 2)
    r.rpush("{c}src", "item")
    b1.expect(bulk("item"))
    b2.expect(arr(bulk("{d}dst"), bulk("item")))
    assert r.exists("{c}src", "{d}dst") == 0


def test_lmove_into_key_wakes(r, blockers):
    b = blockers("BLPOP", "{e}target", 0)
    wait_blocked(r, 1)
    r.rpush("{f}from", "moved")
    assert r.lmove("{f}from", "{e}target", "LEFT", "RIGHT") == b"moved"
    b.expect(arr(bulk("{e}target"), bulk("moved")))


def test_blmpop_blocked_count(r, blockers):
    b = blockers("BLMPOP", 0, 2, KEYS[6], KEYS[7], "LEFT", "COUNT", 2)
    wait_blocked(r, 1)
    r.rpush(KEYS[7], "a", "b", "c")
    b.expect(arr(bulk(KEYS[7]), arr(bulk("a"), bulk("b"))))
    assert r.lrange(KEYS[7], 0, -1) == [b"c"]


def test_bzpopmin_bzmpop_blocked(r, blockers):
    b = blockers("BZPOPMIN", "{z}1", "{z}2", 0)
    wait_blocked(r, 1)
    r.zadd("{z}2", {"m": 7})
    b.expect(arr(bulk("{z}2"), bulk("m"), bulk("7")))
    b2 = blockers("BZMPOP", 0, 2, "{y}1", "{x}2", "MAX", "COUNT", 5)
    wait_blocked(r, 1)
    r.zadd("{x}2", {"a": 1, "b": 2})
    b2.expect(arr(bulk("{x}2"), arr(arr(bulk("b"), bulk("2")), arr(bulk("a"), bulk("1")))))
    b3 = blockers("BZPOPMAX", "zq", 0)
    wait_blocked(r, 1)
    r.zadd("zq", {"only": 1})
    b3.expect(arr(bulk("zq"), bulk("only"), bulk("1")))


def test_disconnect_cleans_up(r, server):
    s = server.raw()
    s.sendall(resp("BLPOP", KEYS[2], 0))
    wait_blocked(r, 1)
    s.close()
    wait_blocked(r, 0)
    r.rpush(KEYS[2], "kept")
    time.sleep(0.1)
    assert r.lrange(KEYS[2], 0, -1) == [b"kept"]


def test_disconnect_does_not_break_fifo(r, server, blockers):
    gone = server.raw()
    gone.sendall(resp("BLPOP", KEYS[3], 0))
    wait_blocked(r, 1)
    b = blockers("BLPOP", KEYS[3], 0)
    wait_blocked(r, 2)
    gone.close()
    wait_blocked(r, 1)
    r.rpush(KEYS[3], "for-b")
    b.expect(arr(bulk(KEYS[3]), bulk("for-b")))


def test_deleted_key_and_type_change_keep_waiting(r, blockers):
    b = blockers("BLPOP", KEYS[1], 0)
    wait_blocked(r, 1)
    r.set(KEYS[1], "a string")
    r.delete(KEYS[1])
    r.zadd(KEYS[1], {"m": 1})  # a sorted set does not serve a list waiter
    time.sleep(0.1)
    assert blocked_clients(r) == 1
    assert nothing_pending(b.s, 0.1)
    r.delete(KEYS[1])
    r.rpush(KEYS[1], "now")
    b.expect(arr(bulk(KEYS[1]), bulk("now")))


def test_pipeline_after_blocking_command_waits(r, server):
    s = server.raw()
    try:
        s.sendall(resp("BLPOP", KEYS[0], 0) + resp("PING") + resp("RPUSH", KEYS[0], "self"))
        wait_blocked(r, 1)
        assert nothing_pending(s, 0.2)
        r.rpush(KEYS[0], "other")
        read_exact(s, arr(bulk(KEYS[0]), bulk("other")) + b"+PONG\r\n" + b":1\r\n")
        assert r.lrange(KEYS[0], 0, -1) == [b"self"]
    finally:
        s.close()


def test_timeout_then_served_by_next(r, blockers):
    short = blockers("BLPOP", KEYS[6], "0.1")
    wait_blocked(r, 1)
    long = blockers("BLPOP", KEYS[6], 0)
    wait_blocked(r, 2)
    short.expect(b"*-1\r\n")
    wait_blocked(r, 1)
    r.rpush(KEYS[6], "v")
    long.expect(arr(bulk(KEYS[6]), bulk("v")))


def test_expired_key_does_not_serve(r, blockers):
    r.rpush(KEYS[4], "x")
    r.pexpire(KEYS[4], 50)
    time.sleep(0.1)
    b = blockers("BLPOP", KEYS[4], 0)
    wait_blocked(r, 1)
    r.rpush(KEYS[4], "fresh")
    b.expect(arr(bulk(KEYS[4]), bulk("fresh")))


def test_client_kill_blocked(r, server):
    s = server.raw()
    s.sendall(resp("CLIENT", "SETNAME", "victim") + resp("BZPOPMIN", "zk", 0))
    read_exact(s, b"+OK\r\n")
    wait_blocked(r, 1)
    for line in r.client_list():
        if line["name"] == "victim":
            r.client_kill_filter(_id=line["id"])
    wait_blocked(r, 0)
    s.close()
    r.zadd("zk", {"m": 1})
    assert r.zcard("zk") == 1
