"""CLIENT PAUSE / UNPAUSE (WRITE and ALL, over every shard, expiry held
still), CLIENT UNBLOCK, and CLIENT KILL closing at once."""
import threading
import time

import pytest
import redis


def blocked_clients(c):
    return c.info("clients")["blocked_clients"]


def wait_until(cond, seconds=5):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


class Background:
    """Runs fn(client) on its own connection in a thread; .result when done."""

    def __init__(self, server, fn):
        self.client = server.new_client()
        self.result = None
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self.thread.start()

    def _run(self, fn):
        try:
            self.result = fn(self.client)
        except Exception as e:  # noqa: BLE001 - handed to the test
            self.error = e

    def join(self, timeout=10):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "background command did not finish"
        self.client.close()
        if self.error:
            raise self.error
        return self.result


def test_pause_write_holds_writes_not_reads(r, server):
    r.set("k0", "old")
    assert r.execute_command("CLIENT", "PAUSE", "60000", "WRITE") == b"OK"
    try:
        writers = [Background(server, lambda c, i=i: c.set("k%d" % i, "new")) for i in range(4)]
        assert wait_until(lambda: blocked_clients(r) == 4)
        # reads on every shard go on
        assert r.get("k0") == b"old"
        assert r.mget(["k0", "k1", "k2", "k3"])[0] == b"old"
        assert r.ping()
        with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
            r.execute_command("SET", "x")  # syntax errors are answered at once
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert [w.join() for w in writers] == [True] * 4
    assert r.mget(["k0", "k1", "k2", "k3"]) == [b"new"] * 4
    assert blocked_clients(r) == 0


def test_pause_all_holds_reads_until_timeout(r, server):
    r.set("k", "v")
    r.execute_command("CLIENT", "PAUSE", "300", "ALL")
    start = time.time()
    reader = Background(server, lambda c: c.get("k"))
    assert reader.join() == b"v"
    assert time.time() - start >= 0.2


def test_pause_write_holds_exec_of_writes_only(r, server):
    r.set("foo", "bar")
    r.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    try:
        p = server.new_client().pipeline(transaction=True)
        p.ping()
        p.get("foo")
        assert p.execute() == [True, b"bar"]

        def write_tx(c):
            q = c.pipeline(transaction=True)
            q.set("foo", "baz")
            return q.execute()

        w = Background(server, write_tx)
        assert wait_until(lambda: blocked_clients(r) == 1)
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert w.join() == [True]
    assert r.get("foo") == b"baz"


def test_pause_keeps_expired_keys_until_unpause(r):
    before = r.info("stats")["expired_keys"]
    p = r.pipeline(transaction=True)
    p.set("a{t}", "1", px=10)
    p.set("b{t}", "2", px=10)
    p.execute_command("CLIENT", "PAUSE", "50000", "WRITE")
    p.execute()
    try:
        assert wait_until(lambda: r.get("a{t}") is None and r.get("b{t}") is None)
        time.sleep(0.3)  # active expire cycles pass
        assert r.info("stats")["expired_keys"] == before
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    r.get("a{t}")
    r.get("b{t}")
    assert wait_until(lambda: r.info("stats")["expired_keys"] == before + 2)


def test_pause_errors(r):
    with pytest.raises(redis.ResponseError, match="timeout is not an integer or out of range"):
        r.execute_command("CLIENT", "PAUSE", "abc")
    with pytest.raises(redis.ResponseError, match="timeout is negative"):
        r.execute_command("CLIENT", "PAUSE", "-1")
    with pytest.raises(redis.ResponseError, match="CLIENT PAUSE mode must be WRITE or ALL"):
        r.execute_command("CLIENT", "PAUSE", "100", "READ")


@pytest.mark.parametrize("mode,expect", [(None, None), ("TIMEOUT", None), ("ERROR", "UNBLOCKED")])
def test_client_unblock(r, server, mode, expect):
    c = server.new_client()
    cid = c.client_id()
    result = {}

    def pop():
        try:
            result["v"] = c.blpop(["q%d" % i for i in range(8)], 0)
        except redis.ResponseError as e:
            result["err"] = str(e)

    t = threading.Thread(target=pop, daemon=True)
    t.start()
    assert wait_until(lambda: blocked_clients(r) == 1)
    args = ["CLIENT", "UNBLOCK", cid] + ([mode] if mode else [])
    assert r.execute_command(*args) == 1
    t.join(5)
    assert not t.is_alive()
    if expect:
        assert result["err"].startswith(expect)
    else:
        assert result == {"v": None}
    assert r.execute_command("CLIENT", "UNBLOCK", r.client_id()) == 0  # not blocked
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        r.execute_command("CLIENT", "UNBLOCK", "asd")
    # the unblocked client works on
    r.rpush("q3", "x")
    assert c.blpop(["q3"], 1) == (b"q3", b"x")
    c.close()


def test_client_kill_closes_before_next_command(r, server):
    others = [server.new_client() for _ in range(3)]
    for o in others:
        o.ping()
    n = r.info("clients")["connected_clients"]
    killed = r.execute_command("CLIENT", "KILL", "SKIPME", "yes")
    assert killed == n - 1
    assert r.info("clients")["connected_clients"] == 1
    # gone already: a second kill right after finds none of them
    assert r.execute_command("CLIENT", "KILL", "SKIPME", "yes") == 0
    for o in others:
        o.close()


def test_pause_write_holds_what_may_replicate_but_not_no_writes_scripts(r, server):
    """Under CLIENT PAUSE WRITE, PUBLISH, PFCOUNT and scripts without flags
    wait; a script that declares no-writes (shebang, cached body, function
    flags) runs."""
    r.pfadd("hll", "a")
    r.set("x", "y")
    r.function_load("#!lua name=pauselib\n"
                    "redis.register_function{function_name='pf_ro', callback=function() return 'hi' end,"
                    " flags={'no-writes'}}", replace=True)
    sha = r.script_load("#!lua flags=no-writes\nreturn 2")
    assert r.execute_command("CLIENT", "PAUSE", "60000", "WRITE") == b"OK"
    try:
        held = [Background(server, lambda c: c.publish("ch", "m")),
                Background(server, lambda c: c.pfcount("hll")),
                Background(server, lambda c: c.eval("return 1", 0)),
                Background(server, lambda c: c.eval("#!lua\nreturn 1", 0))]
        assert wait_until(lambda: blocked_clients(r) == 4)
        assert r.eval("#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1, "x") == b"y"
        assert r.evalsha(sha, 0) == 2
        assert r.fcall("pf_ro", 0) == b"hi"
        assert r.eval_ro("return redis.call('get', KEYS[1])", 1, "x") == b"y"
        assert blocked_clients(r) == 4
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert [h.join() for h in held] == [0, 1, 1, 1]
    r.function_delete("pauselib")


def test_read_only_scripts_refuse_what_may_replicate(r):
    with pytest.raises(redis.ResponseError, match="^Write commands are not allowed from read-only scripts"):
        r.eval_ro("return redis.call('publish', 'ch', 'm')", 0)
    with pytest.raises(redis.ResponseError, match="^Write commands are not allowed from read-only scripts"):
        r.eval("#!lua flags=no-writes\nreturn redis.call('publish', 'ch', 'm')", 0)
    assert r.eval("return redis.call('publish', 'ch', 'm')", 0) == 0
