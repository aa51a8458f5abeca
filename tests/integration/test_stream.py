"""Streams: XADD XRANGE XREVRANGE XLEN XDEL XTRIM XSETID, consumer groups
(XGROUP XREADGROUP XACK XPENDING XCLAIM XAUTOCLAIM XINFO), blocking XREAD
and XREADGROUP (woken from other connections and shards, inside MULTI),
persistence (SAVE + restart, DUMP/RESTORE, the AOF's generated IDs), and
refused corrupt payloads. Every expectation holds on redis-server 7.0."""
import threading
import time

import pytest
import redis

AOF = ("--appendonly", "yes", "--appendfsync", "always")


def blocked(r):
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if blocked(r) == n:
            return
        time.sleep(0.01)
    raise AssertionError(f"expected {n} blocked clients, have {blocked(r)}")


class Bg:
    """Runs one command on its own connection in a thread."""

    def __init__(self, server, *args):
        self.c = server.new_client()
        self.out = None
        self.t = threading.Thread(target=self._run, args=args, daemon=True)
        self.t.start()

    def _run(self, *args):
        try:
            self.out = self.c.execute_command(*args)
        except redis.ResponseError as e:
            self.out = e

    def result(self, timeout=5.0):
        self.t.join(timeout)
        assert not self.t.is_alive()
        self.c.close()
        return self.out


def test_xadd_ids_and_errors(r):
    assert r.xadd("s", {"a": 1}, id="1-1") == b"1-1"
    assert r.xadd("s", {"a": 2}, id="1-*") == b"1-2"
    assert r.xadd("s", {"a": 3}, id="2") == b"2-0"
    with pytest.raises(redis.ResponseError, match="equal or smaller"):
        r.xadd("s", {"a": 1}, id="1-5")
    with pytest.raises(redis.ResponseError, match="greater than 0-0"):
        r.xadd("s2", {"a": 1}, id="0-0")
    with pytest.raises(redis.ResponseError, match="Invalid stream ID"):
        r.xadd("s", {"a": 1}, id="x-1")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        r.execute_command("XADD", "s", "*", "a")
    assert r.execute_command("XADD", "nokey", "NOMKSTREAM", "*", "a", "b") is None
    assert r.exists("nokey") == 0
    auto = r.xadd("s", {"a": 4})
    ms, seq = map(int, auto.split(b"-"))
    assert ms > 2
    r.set("str", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.xadd("str", {"a": 1})
    assert r.type("s") == b"stream"
    assert r.object("encoding", "s") == b"stream"


def test_range_and_revrange(r):
    for i in range(1, 6):
        r.xadd("s", {"f": i, "g": "v%d" % i}, id="%d-0" % i)
    assert r.xlen("s") == 5
    assert [e[0] for e in r.xrange("s")] == [b"1-0", b"2-0", b"3-0", b"4-0", b"5-0"]
    assert r.xrange("s", "2", "3") == [(b"2-0", {b"f": b"2", b"g": b"v2"}), (b"3-0", {b"f": b"3", b"g": b"v3"})]
    assert [e[0] for e in r.xrange("s", "(2-0", "(5-0")] == [b"3-0", b"4-0"]
    assert [e[0] for e in r.xrevrange("s", "+", "-", count=2)] == [b"5-0", b"4-0"]
    assert r.execute_command("XRANGE", "s", "-", "+", "COUNT", "0") is None
    assert r.xrange("missing") == []
    with pytest.raises(redis.ResponseError, match="invalid start ID"):
        r.xrange("s", "(18446744073709551615-18446744073709551615", "+")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("XRANGE", "s", "-", "+", "LIMIT", "1")


def test_many_entries_over_nodes(r):
    p = r.pipeline(transaction=False)
    for i in range(1, 1001):
        if i % 3:
            p.xadd("big", {"a": i, "b": "x"}, id="%d-1" % i)
        else:
            p.xadd("big", {"other": i}, id="%d-1" % i)
    p.execute()
    assert r.xlen("big") == 1000
    got = r.xrange("big", "500-1", "+", count=3)
    assert got == [(b"500-1", {b"a": b"500", b"b": b"x"}), (b"501-1", {b"other": b"501"}), (b"502-1", {b"a": b"502", b"b": b"x"})]
    rev = r.xrevrange("big", "+", "-")
    assert len(rev) == 1000 and rev[0][0] == b"1000-1" and rev[-1][0] == b"1-1"
    assert r.xdel("big", *["%d-1" % i for i in range(1, 201)]) == 200
    assert r.xlen("big") == 800
    assert r.xrange("big", count=1)[0][0] == b"201-1"
    info = r.xinfo_stream("big")
    assert info["max-deleted-entry-id"] == b"200-1"
    assert info["recorded-first-entry-id"] == b"201-1"
    assert info["entries-added"] == 1000


def test_xdel_xtrim_xsetid(r):
    for i in range(1, 11):
        r.xadd("s", {"i": i}, id="%d-0" % i)
    assert r.xdel("s", "3-0", "3-0", "99-0") == 1
    with pytest.raises(redis.ResponseError, match="Invalid stream ID"):
        r.xdel("s", "4-0", "bad")
    assert r.xlen("s") == 9
    assert r.xtrim("s", maxlen=5, approximate=False) == 4
    assert [e[0] for e in r.xrange("s")] == [b"6-0", b"7-0", b"8-0", b"9-0", b"10-0"]
    assert r.xtrim("s", minid="8", approximate=False) == 2
    assert r.xlen("s") == 3
    with pytest.raises(redis.ResponseError, match="XTRIM must be called with a trimming strategy"):
        r.execute_command("XTRIM", "s", "LIMIT", "0")
    with pytest.raises(redis.ResponseError, match="LIMIT cannot be used without specifying a trimming strategy"):
        r.execute_command("XTRIM", "s", "LIMIT", "1")
    with pytest.raises(redis.ResponseError, match="LIMIT cannot be used without the special ~ option"):
        r.execute_command("XTRIM", "s", "MAXLEN", "1", "LIMIT", "1")
    with pytest.raises(redis.ResponseError, match="MAXLEN argument must be >= 0"):
        r.execute_command("XTRIM", "s", "MAXLEN", "-1")
    assert r.execute_command("XADD", "s", "MAXLEN", "2", "11-0", "i", "11") == b"11-0"
    assert [e[0] for e in r.xrange("s")] == [b"10-0", b"11-0"]
    with pytest.raises(redis.ResponseError, match="smaller than the target stream top item"):
        r.execute_command("XSETID", "s", "5-0")
    assert r.execute_command("XSETID", "s", "20-0", "ENTRIESADDED", "50", "MAXDELETEDID", "15-0") == b"OK"
    info = r.xinfo_stream("s")
    assert info["last-generated-id"] == b"20-0" and info["entries-added"] == 50
    assert info["max-deleted-entry-id"] == b"15-0"
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.execute_command("XSETID", "nokey", "1-0")
    assert r.xadd("s", {"i": 1}, id="20-*") == b"20-1"


def test_consumer_group_flow(r):
    for i in range(1, 6):
        r.xadd("s", {"i": i}, id="%d-0" % i)
    assert r.xgroup_create("s", "g", id="0") is True
    with pytest.raises(redis.ResponseError, match="BUSYGROUP"):
        r.xgroup_create("s", "g", id="0")
    with pytest.raises(redis.ResponseError, match="requires the key to exist"):
        r.xgroup_create("nokey", "g", id="0")
    assert r.execute_command("XGROUP", "CREATE", "mk", "g", "$", "MKSTREAM") == b"OK"
    assert r.xlen("mk") == 0
    got = r.xreadgroup("g", "alice", {"s": ">"}, count=2)
    assert got == [[b"s", [(b"1-0", {b"i": b"1"}), (b"2-0", {b"i": b"2"})]]]
    got = r.xreadgroup("g", "bob", {"s": ">"}, count=1)
    assert got[0][1][0][0] == b"3-0"
    assert r.xreadgroup("g", "alice", {"s": "0"}) == [[b"s", [(b"1-0", {b"i": b"1"}), (b"2-0", {b"i": b"2"})]]]
    summary = r.xpending("s", "g")
    assert summary == {"pending": 3, "min": b"1-0", "max": b"3-0",
                       "consumers": [{"name": b"alice", "pending": 2}, {"name": b"bob", "pending": 1}]}
    ext = r.xpending_range("s", "g", "-", "+", 10, consumername="alice")
    assert [e["message_id"] for e in ext] == [b"1-0", b"2-0"]
    assert ext[0]["consumer"] == b"alice" and ext[0]["times_delivered"] == 2
    assert r.xack("s", "g", "1-0", "9-0") == 1
    with pytest.raises(redis.ResponseError, match="Invalid stream ID"):
        r.xack("s", "g", "2-0", "bad")
    assert r.xack("s", "nogroup", "2-0") == 0
    claimed = r.xclaim("s", "g", "carol", 0, ["2-0", "3-0"], justid=True)
    assert claimed == [b"2-0", b"3-0"]
    assert r.xpending("s", "g")["consumers"] == [{"name": b"carol", "pending": 2}]
    ac = r.xautoclaim("s", "g", "dave", 0, "0", count=1)
    assert ac == [b"3-0", [(b"2-0", {b"i": b"2"})], []]
    r.xdel("s", "3-0")
    ac = r.xautoclaim("s", "g", "dave", 0, "0")
    assert ac == [b"0-0", [(b"2-0", {b"i": b"2"})], [b"3-0"]]
    with pytest.raises(redis.ResponseError, match="NOGROUP"):
        r.execute_command("XCLAIM", "s", "nog", "c", "0", "1-0")
    with pytest.raises(redis.ResponseError, match="NOGROUP"):
        r.xreadgroup("nog", "c", {"s": ">"})
    with pytest.raises(redis.ResponseError, match="meaningless"):
        r.xreadgroup("g", "c", {"s": "$"})
    assert r.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "erin") == 1
    assert r.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "erin") == 0
    names = [c["name"] for c in r.xinfo_consumers("s", "g")]
    assert names == [b"alice", b"bob", b"carol", b"dave", b"erin"]
    assert r.execute_command("XGROUP", "DELCONSUMER", "s", "g", "dave") == 1
    assert r.execute_command("XGROUP", "DESTROY", "s", "g") == 1
    assert r.execute_command("XGROUP", "DESTROY", "s", "g") == 0
    with pytest.raises(redis.ResponseError, match="NOGROUP"):
        r.execute_command("XGROUP", "SETID", "s", "g", "0")


def test_lag_and_entries_read(r):
    for i in range(1, 6):
        r.xadd("s", {"i": i}, id="%d-0" % i)
    r.xgroup_create("s", "g", id="0")
    g = r.xinfo_groups("s")[0]
    assert g["entries-read"] is None and g["lag"] == 5
    r.xreadgroup("g", "c", {"s": ">"}, count=2)
    g = r.xinfo_groups("s")[0]
    assert g["entries-read"] == 2 and g["lag"] == 3
    r.xdel("s", "4-0")
    g = r.xinfo_groups("s")[0]
    assert g["entries-read"] == 2 and g["lag"] is None
    r.xreadgroup("g", "c", {"s": ">"})
    g = r.xinfo_groups("s")[0]
    assert g["entries-read"] == 5 and g["lag"] == 0
    assert r.execute_command("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0") == b"OK"
    assert r.xinfo_groups("s")[0]["lag"] is None
    full = r.xinfo_stream("s", full=True)
    assert full["length"] == 4 and full["groups"][0]["pel-count"] == 4


def test_xread(r):
    r.xadd("a", {"x": 1}, id="1-0")
    r.xadd("b", {"y": 2}, id="2-0")
    assert r.xread({"a": "0", "b": "0"}) == [[b"a", [(b"1-0", {b"x": b"1"})]], [b"b", [(b"2-0", {b"y": b"2"})]]]
    assert r.xread({"a": "$"}) == []
    assert r.xread({"a": "0", "nokey": "0"}, count=1) == [[b"a", [(b"1-0", {b"x": b"1"})]]]
    with pytest.raises(redis.ResponseError, match="Unbalanced"):
        r.execute_command("XREAD", "STREAMS", "a", "b", "0")
    with pytest.raises(redis.ResponseError, match="can be specified only when calling XREADGROUP"):
        r.execute_command("XREAD", "STREAMS", "a", ">")


def test_blocking_xread_woken_by_xadd(r, server):
    r.xadd("a", {"x": 1}, id="1-0")
    bg = Bg(server, "XREAD", "BLOCK", "0", "STREAMS", "{o}other", "a", "0", "$")
    wait_blocked(r, 1)
    r.xadd("a", {"x": 2}, id="2-0")
    assert bg.result() == [[b"a", [(b"2-0", {b"x": b"2"})]]]
    bg = Bg(server, "XREAD", "BLOCK", "50", "STREAMS", "a", "$")
    assert bg.result() == []


def test_blocking_xreadgroup(r, server):
    r.xgroup_create("s", "g", id="$", mkstream=True)
    bg = Bg(server, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    r.xadd("s", {"v": 1}, id="5-0")
    assert bg.result() == [[b"s", [(b"5-0", {b"v": b"1"})]]]
    assert r.xpending("s", "g")["pending"] == 1
    bg = Bg(server, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    r.delete("s")
    out = bg.result()
    assert isinstance(out, redis.ResponseError) and "no longer exists" in str(out)


def test_block_inside_multi_answers_at_once(r):
    r.xadd("s", {"v": 1}, id="1-0")
    p = r.pipeline(transaction=True)
    p.execute_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    p.xadd("s", {"v": 2}, id="2-0")
    p.execute_command("XREAD", "BLOCK", "0", "STREAMS", "s", "1-0")
    assert p.execute() == [[], b"2-0", [[b"s", [(b"2-0", {b"v": b"2"})]]]]


def fill(c):
    for i in range(1, 301):
        c.xadd("s", {"f": i, "g": "x" * (i % 7)}, id="%d-1" % i)
    c.xdel("s", "10-1", "11-1")
    c.xgroup_create("s", "g1", id="0")
    c.xreadgroup("g1", "alice", {"s": ">"}, count=3)
    c.xreadgroup("g1", "bob", {"s": ">"}, count=2)
    c.execute_command("XGROUP", "CREATECONSUMER", "s", "g1", "carol")
    c.xgroup_create("s", "g2", id="$")
    c.xadd("e", {"a": 1}, id="1-1")
    c.xdel("e", "1-1")


def test_save_restart_and_dump_restore(r, spawn):
    s = spawn()
    c = s.new_client()
    fill(c)
    full = c.xinfo_stream("s", full=True)
    entries = c.xrange("s")
    payload = c.dump("s")
    c.restore("copy", 0, payload)
    assert c.xrange("copy") == entries
    assert c.xinfo_stream("copy", full=True)["groups"] == full["groups"]
    with pytest.raises(redis.ResponseError):
        c.restore("bad", 0, payload[:40] + bytes([payload[40] ^ 0x55]) + payload[41:])
    assert c.save()
    d = c.config_get("dir")["dir"]
    c.close()
    s.stop()
    s2 = spawn("--dir", d)
    c2 = s2.new_client()
    assert c2.xrange("s") == entries
    full2 = c2.xinfo_stream("s", full=True)
    for k in ("length", "last-generated-id", "max-deleted-entry-id", "entries-added", "recorded-first-entry-id", "groups"):
        assert full2[k] == full[k]
    assert c2.xinfo_stream("e")["length"] == 0
    c2.close()


def test_aof_logs_generated_ids(spawn):
    s = spawn(*AOF)
    c = s.new_client()
    ids = [c.xadd("s", {"n": i}) for i in range(5)]
    c.xadd("s", {"n": "x"}, id="%d-*" % (int(ids[-1].split(b"-")[0]) + 1))
    c.xgroup_create("s", "g", id="0")
    c.xreadgroup("g", "c", {"s": ">"}, count=2)
    c.xack("s", "g", ids[0])
    before = c.xrange("s")
    d = c.config_get("dir")["dir"]
    c.close()
    s.stop()
    s2 = spawn(*AOF, "--dir", d)
    c2 = s2.new_client()
    assert c2.xrange("s") == before
    assert c2.xpending("s", "g")["pending"] == 1
    c2.close()


@pytest.mark.parametrize("trim", [["MAXLEN", "~", "100"], ["MAXLEN", "~", "55", "LIMIT", "30"], ["MINID", "~", "MID"]])
def test_aof_logs_approximate_trims_exactly(spawn, trim):
    """XADD/XTRIM with "~" are logged with "=" and what the stream holds
    after them, so loading the log with other node sizes trims the same."""
    s = spawn(*AOF, "--stream-node-max-entries", "10", "--enable-debug-command", "yes")
    c = s.new_client()
    ids = [c.xadd("s", {"x": "v"}) for _ in range(100)]
    args = [ids[50] if a == "MID" else a for a in trim]
    c.execute_command("XADD", "s", *args, "*", "x", "v")
    c.execute_command("XTRIM", "s", *args)
    want = c.xrange("s")
    c.config_set("stream-node-max-entries", 1)
    c.execute_command("DEBUG", "LOADAOF")
    assert c.xrange("s") == want
    c.xadd("s", {"x": "v"})
    assert c.xlen("s") == len(want) + 1


def test_blocked_xreadgroup_creates_its_consumer_with_data(r, server):
    """A blocked XREADGROUP's consumer exists once it is served, not while it
    waits; an unblock with NOGROUP counts as a failed call."""
    r.xgroup_create("s", "g", id="$", mkstream=True)
    r.config_resetstat()
    bg = Bg(server, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    assert r.xinfo_groups("s")[0]["consumers"] == 0
    r.xgroup_destroy("s", "g")
    out = bg.result()
    assert isinstance(out, redis.ResponseError) and "NOGROUP" in str(out)
    stat = r.info("commandstats")["cmdstat_xreadgroup"]
    assert (stat["calls"], stat["rejected_calls"], stat["failed_calls"]) == (1, 0, 1)
    r.xgroup_create("s", "g", id="$")
    bg = Bg(server, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    r.xadd("s", {"v": 1}, id="5-0")
    assert bg.result() == [[b"s", [(b"5-0", {b"v": b"1"})]]]
    assert r.xinfo_groups("s")[0]["consumers"] == 1
