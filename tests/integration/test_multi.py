"""MULTI / EXEC / DISCARD: queueing, the errors that doom a transaction,
replies, SELECT inside, blocking commands inside (they do not block),
blocked clients woken by EXEC (served after the whole block), and
isolation across shards: with --threads 4 the keys below live on
different shards, and concurrent readers never see half a transaction."""
import threading
import time

import pytest
import redis

from helpers import raw_exchange
from test_blocking import arr, blockers, bulk, wait_blocked  # noqa: F401 (blockers is a fixture)


def exchange(server, *lines):
    return raw_exchange(server, b"".join(l.encode() + b"\r\n" for l in lines))


def test_errors_outside_and_inside(server, r):
    out = exchange(server, "EXEC", "DISCARD", "MULTI", "MULTI", "SET a 1", "GET", "NOSUCH x", "EXEC", "GET a")
    assert out == (b"-ERR EXEC without MULTI\r\n-ERR DISCARD without MULTI\r\n+OK\r\n"
                   b"-ERR MULTI calls can not be nested\r\n+QUEUED\r\n"
                   b"-ERR wrong number of arguments for 'get' command\r\n"
                   b"-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n"
                   b"-EXECABORT Transaction discarded because of previous errors.\r\n$-1\r\n")


def test_not_allowed_inside(server, r):
    out = exchange(server, "MULTI", "SAVE", "SHUTDOWN", "SET a 1", "EXEC", "GET a")
    assert out == (b"+OK\r\n-ERR Command not allowed inside a transaction\r\n"
                   b"-ERR Command not allowed inside a transaction\r\n+QUEUED\r\n"
                   b"-EXECABORT Transaction discarded because of previous errors.\r\n$-1\r\n")


def test_exec_replies_in_order(server, r):
    out = exchange(server, "MULTI", "SET {a}x 1", "INCR {b}y", "LPUSH {a}x z", "GET {a}x", "INCRBY {b}y 5",
                   "EXEC")
    assert out == (b"+OK\r\n" + b"+QUEUED\r\n" * 5 + b"*5\r\n+OK\r\n:1\r\n"
                   b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n$1\r\n1\r\n:6\r\n")


def test_empty_exec_and_discard(server, r):
    out = exchange(server, "MULTI", "EXEC", "MULTI", "SET a 1", "DISCARD", "GET a", "EXEC")
    assert out == b"+OK\r\n*0\r\n+OK\r\n+QUEUED\r\n+OK\r\n$-1\r\n-ERR EXEC without MULTI\r\n"


def test_reset_discards(server, r):
    out = exchange(server, "MULTI", "SET a 1", "RESET", "EXEC", "GET a")
    assert out == b"+OK\r\n+QUEUED\r\n+RESET\r\n-ERR EXEC without MULTI\r\n$-1\r\n"


def test_select_inside_sticks(server, r):
    out = exchange(server, "MULTI", "SELECT 3", "SET k v", "EXEC", "GET k", "SELECT 0", "GET k")
    assert out == (b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n+OK\r\n$1\r\nv\r\n+OK\r\n$-1\r\n")


def test_blocking_inside_does_not_block(server, r):
    out = exchange(server, "MULTI", "BLPOP {a}l 0", "BRPOPLPUSH {a}l {b}m 0", "BZPOPMIN {c}z 0", "EXEC")
    assert out == b"+OK\r\n" + b"+QUEUED\r\n" * 3 + b"*3\r\n*-1\r\n$-1\r\n*-1\r\n"


def test_pipeline_transaction(r):
    p = r.pipeline(transaction=True)
    p.set("{a}k", "1").incr("{b}n").rpush("{c}l", "x", "y").lrange("{c}l", 0, -1)
    assert p.execute() == [True, 1, 2, [b"x", b"y"]]


def test_exec_wakes_blocked_client(r, blockers):
    b = blockers("BLPOP", "{e}q", 0)
    wait_blocked(r, 1)
    p = r.pipeline(transaction=True)
    p.set("{f}other", "1").rpush("{e}q", "a", "b").rpush("{g}more", "c")
    assert p.execute() == [True, 2, 1]
    b.expect(arr(bulk("{e}q"), bulk("a")))
    assert r.lrange("{e}q", 0, -1) == [b"b"]


def test_blocked_client_served_after_the_whole_block(r, blockers):
    """A push and a pop in one EXEC: the blocked client sees nothing."""
    b = blockers("BLPOP", "{e}q", 0)
    wait_blocked(r, 1)
    p = r.pipeline(transaction=True)
    p.rpush("{e}q", "a").lpop("{e}q").rpush("{e}q", "b")
    assert p.execute() == [1, b"a", 1]
    b.expect(arr(bulk("{e}q"), bulk("b")))
    assert r.exists("{e}q") == 0


def test_transfers_are_isolated(server, r):
    """Writers move amounts between accounts on different shards inside
    MULTI; readers MGET every account and must always see the same total."""
    accounts = ["acct:%d" % i for i in range(8)]
    r.mset({a: 100 for a in accounts})
    total = 100 * len(accounts)
    stop = time.time() + 3
    bad = []

    def writer(seed):
        c = server.new_client()
        i = seed
        while time.time() < stop:
            i += 1
            src, dst = accounts[i % 8], accounts[(i * 3 + 1) % 8]
            p = c.pipeline(transaction=True)
            p.decrby(src, 7).incrby(dst, 7)
            p.execute()

    def reader():
        c = server.new_client()
        while time.time() < stop:
            vals = [int(v) for v in c.mget(accounts)]
            if sum(vals) != total:
                bad.append(vals)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(2)] + \
              [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not bad, bad[:3]
    assert sum(int(v) for v in r.mget(accounts)) == total


# ---- WATCH ----

def test_watch_untouched_runs(server, r):
    r.set("{a}w", "1")
    out = exchange(server, "WATCH {a}w {b}v", "GET {a}w", "MULTI", "SET {a}w 2", "SET {c}u 3", "EXEC", "GET {a}w")
    assert out == b"+OK\r\n$1\r\n1\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n+OK\r\n$1\r\n2\r\n"


@pytest.mark.parametrize("change", [
    ["SET", "{a}w", "x"], ["DEL", "{a}w"], ["INCR", "{a}w"], ["EXPIRE", "{a}w", "100"],
    ["RENAME", "{a}w", "{a}w2"], ["APPEND", "{a}w", "z"], ["FLUSHDB"], ["FLUSHALL"], ["SWAPDB", "0", "1"],
    ["MSET", "{q}other", "1", "{a}w", "2"],
])
def test_watch_sees_changes_from_other_clients(server, r, change):
    r.set("{a}w", "1")
    c = server.raw()
    c.sendall(b"WATCH {a}w\r\nMULTI\r\nSET {b}v 1\r\n")
    got = b""
    while got.count(b"\r\n") < 3:
        got += c.recv(1000)
    assert got == b"+OK\r\n+OK\r\n+QUEUED\r\n"
    r.execute_command(*change)
    c.sendall(b"EXEC\r\nGET {b}v\r\n")
    got = b""
    while got.count(b"\r\n") < 2:
        got += c.recv(1000)
    assert got == b"*-1\r\n$-1\r\n"
    c.close()


@pytest.mark.parametrize("member,runs", [("a", True), ("b", False)])
def test_watch_smove_touches_destination_only_when_added(server, r, member, runs):
    """SMOVE of a member the destination has already changes only the
    source: a WATCH on the destination still lets EXEC run (Redis 7.0)."""
    r.delete("src{s}", "dst{s}")
    r.sadd("src{s}", "a", "b")
    r.sadd("dst{s}", "a")
    c = server.raw()
    c.sendall(b"WATCH dst{s}\r\nMULTI\r\nSADD dst{s} c\r\n")
    got = b""
    while got.count(b"\r\n") < 3:
        got += c.recv(1000)
    assert r.smove("src{s}", "dst{s}", member) is True
    c.sendall(b"EXEC\r\n")
    got = b""
    while got.count(b"\r\n") < (2 if runs else 1):
        got += c.recv(1000)
    assert got == (b"*1\r\n:1\r\n" if runs else b"*-1\r\n")
    assert r.smembers("dst{s}") == ({b"a", b"c"} if runs else {b"a", b"b"})
    c.close()


def test_unwatch_discard_and_exec_forget(server, r):
    r.set("{a}w", "1")
    c = server.new_client()
    c.execute_command("WATCH", "{a}w")
    c.execute_command("UNWATCH")
    r.set("{a}w", "2")
    p = c.pipeline(transaction=True)
    p.set("{b}v", "1")
    assert p.execute() == [True]


def test_watch_inside_multi(server, r):
    out = exchange(server, "MULTI", "WATCH {a}w", "SET {a}w 1", "EXEC")
    assert out == b"+OK\r\n-ERR WATCH inside MULTI is not allowed\r\n+QUEUED\r\n*1\r\n+OK\r\n"


def test_watch_counter_increment_retries(server, r):
    """The classic optimistic-locking loop: two clients increment through
    WATCH/GET/MULTI/SET; no increment is lost."""
    r.set("{n}counter", "0")
    per = 150

    def worker():
        c = server.new_client()
        done = 0
        while done < per:
            with c.pipeline(transaction=True) as p:
                try:
                    p.watch("{n}counter")
                    v = int(p.get("{n}counter"))
                    p.multi()
                    p.set("{n}counter", v + 1)
                    p.execute()
                    done += 1
                except redis.WatchError:
                    pass

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert int(r.get("{n}counter")) == 3 * per


# ---- WATCH: what does and does not count as a change (Redis 7.0) ----

def watched_exec(c, key, *between, db=0):
    """WATCH key (in db), run the commands `between` on another connection
    (callables taking no argument), then MULTI/PING/EXEC: the EXEC reply."""
    c.execute_command("SELECT", db)
    c.execute_command("WATCH", key)
    for fn in between:
        fn()
    c.execute_command("MULTI")
    c.execute_command("PING")
    return c.execute_command("EXEC")


@pytest.mark.parametrize("flush", ["FLUSHDB", "FLUSHALL"])
def test_flush_of_absent_watched_key_is_no_change(server, r, flush):
    c = server.new_client()
    r.set("{o}other", "1")
    assert watched_exec(c, "{w}absent", lambda: r.execute_command(flush)) == [b"PONG"]
    r.set("{w}present", "1")
    assert watched_exec(c, "{w}present", lambda: r.execute_command(flush)) is None
    c.close()


def test_swapdb_touches_watched_keys_that_exist_on_either_side(server, r):
    c = server.new_client()
    r.set("x", "30")
    assert watched_exec(c, "x", lambda: r.swapdb(0, 1)) is None  # x leaves db 0
    r.flushall()
    r.execute_command("SELECT", 1)
    r.set("x", "30")
    r.execute_command("SELECT", 0)
    assert watched_exec(c, "x", lambda: r.swapdb(0, 1)) is None  # x arrives in db 0
    r.flushall()
    assert watched_exec(c, "x", lambda: r.swapdb(0, 1)) == [b"PONG"]  # absent on both sides
    c.close()


@pytest.fixture
def dbg(spawn):
    s = spawn("--enable-debug-command", "yes")
    c = s.new_client()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    yield s, c
    c.close()


def stale(c, key, db=0):
    c.execute_command("SELECT", db)
    c.set(key, "v", px=1)
    time.sleep(0.01)
    c.execute_command("SELECT", 0)


def test_watched_stale_key_deleted_is_no_change(dbg):
    s, c = dbg
    w = s.new_client()
    stale(c, "x")
    assert watched_exec(w, "x") == [b"PONG"]
    stale(c, "x")
    assert watched_exec(w, "x", lambda: c.exists("x")) == [b"PONG"]  # lazy deletion
    stale(c, "x")
    assert watched_exec(w, "x", lambda: c.flushdb()) == [b"PONG"]
    stale(c, "x", db=1)
    assert watched_exec(w, "x", lambda: c.swapdb(0, 1), db=1) == [b"PONG"]
    w.close()


def test_watched_live_key_that_expires_fails_exec(dbg):
    s, c = dbg
    w = s.new_client()
    for _ in range(10):
        c.set("key", "1", px=100)
        w.execute_command("WATCH", "key")
        time.sleep(0.12)
        w.execute_command("MULTI")
        w.execute_command("INCR", "key")
        if w.execute_command("EXEC") is None:
            break
    else:
        pytest.fail("EXEC ran although its watched key expired")
    # and the same when something deleted it lazily meanwhile
    c.set("key", "1", px=50)
    w.execute_command("WATCH", "key")
    time.sleep(0.08)
    assert c.get("key") is None
    w.execute_command("MULTI")
    w.execute_command("PING")
    assert w.execute_command("EXEC") is None
    w.close()
