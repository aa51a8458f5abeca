"""SLOWLOG GET/LEN/RESET/HELP with slowlog-log-slower-than and
slowlog-max-len, checked against Redis 7.0 (the same tests run on
redis-server). With 4 shards the log is kept per shard and merged by id:
commands whose keys live on other shards are logged too, in order."""
import threading
import time

import pytest
import redis


@pytest.fixture
def c(r):
    r.config_set("slowlog-max-len", 128)
    r.config_set("slowlog-log-slower-than", 0)
    r.execute_command("SLOWLOG", "RESET")
    yield r
    r.config_set("slowlog-log-slower-than", 10000)
    r.config_set("slowlog-max-len", 128)


def entries(r, *count):
    return r.execute_command("SLOWLOG", "GET", *count)


def args_of(e):
    a = [x.decode() for x in e[3]]
    return [a[0].lower()] + [x.lower() if x.isalpha() else x for x in a[1:]]


def logged(r):
    """Every entry, newest first, after logging stops (the CONFIG SET that
    stops it is not logged: the threshold is read after a command ran)."""
    r.config_set("slowlog-log-slower-than", -1)
    return entries(r, -1)


def test_starts_empty_after_reset(r):
    r.config_set("slowlog-log-slower-than", -1)
    r.execute_command("SLOWLOG", "RESET")
    assert r.execute_command("SLOWLOG", "LEN") == 0
    assert entries(r) == []
    r.config_set("slowlog-log-slower-than", 10000)


def test_logs_in_order_across_shards(c):
    keys = ["a", "b", "c", "d", "e", "f"]  # on different shards with 4 shards
    for k in keys:
        c.set(k, "v")
    got = logged(c)
    assert [args_of(e) for e in got[0:6]] == [["set", k, "v"] for k in reversed(keys)]
    ids = [e[0] for e in got]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
    assert args_of(got[-1]) == ["slowlog", "reset"]


def test_entry_fields(server, c):
    conn = server.new_client()
    try:
        conn.client_setname("slowclient")
        conn.set("somekey", "v")
        e = [x for x in logged(c) if args_of(x) == ["set", "somekey", "v"]][0]
        assert len(e) == 6
        assert isinstance(e[0], int) and abs(e[1] - time.time()) < 60 and e[2] >= 0
        addr = conn.client_info()["addr"]
        assert e[4].decode() == addr
        assert e[5] == b"slowclient"
    finally:
        conn.close()


def test_threshold(c):
    c.config_set("slowlog-log-slower-than", 100000000)
    c.execute_command("SLOWLOG", "RESET")
    c.set("k", "v")
    c.get("k")
    assert c.execute_command("SLOWLOG", "LEN") == 0


def test_max_len(c):
    c.config_set("slowlog-max-len", 10)
    for i in range(100):
        c.set("k%d" % i, "v")
    got = logged(c)
    assert len(got) == 10 and c.execute_command("SLOWLOG", "LEN") == 10
    assert [args_of(e) for e in got] == [["set", "k%d" % i, "v"] for i in range(99, 89, -1)]


def test_get_count(c):
    for i in range(20):
        c.set("k%d" % i, "v")
    c.config_set("slowlog-log-slower-than", -1)
    assert len(entries(c)) == 10
    assert len(entries(c, 5)) == 5
    assert len(entries(c, 0)) == 0
    assert len(entries(c, -1)) == c.execute_command("SLOWLOG", "LEN") == 21  # RESET and the SETs
    for bad in ("-2", "-222", "abc"):
        with pytest.raises(redis.ResponseError, match="count should be greater than or equal to -1"):
            entries(c, bad)
    with pytest.raises(redis.ResponseError,
                       match=r"unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP."):
        c.execute_command("SLOWLOG", "GET", "1", "2")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'slowlog|len' command"):
        c.execute_command("SLOWLOG", "LEN", "x")


def test_too_many_arguments_trimmed(c):
    c.sadd("set", *range(3, 34))
    e = logged(c)[0]
    assert args_of(e) == ["sadd", "set"] + [str(i) for i in range(3, 32)] + ["... (2 more arguments)"]


def test_long_argument_trimmed(c):
    c.sadd("set", "foo", "A" * 129)
    e = logged(c)[0]
    assert args_of(e) == ["sadd", "set", "foo", "A" * 128 + "... (1 more bytes)"]


def test_exec_not_logged_its_commands_are(c):
    p = c.pipeline(transaction=True)
    p.set("x1", "1").set("x2", "2").get("x3")
    p.execute()
    names = [args_of(e)[0] for e in logged(c)]
    assert "exec" not in names
    assert names[0:4] == ["get", "set", "set", "multi"]


def test_blocked_command_logged_when_served(server, c):
    c.delete("bl")
    waiter = server.new_client()
    t = threading.Thread(target=lambda: waiter.blpop(["bl"], 0))
    t.start()
    deadline = time.time() + 10
    while c.info("clients")["blocked_clients"] < 1 and time.time() < deadline:
        time.sleep(0.01)
    c.execute_command("SLOWLOG", "RESET")
    c.lpush("bl", "foo")
    t.join(10)
    waiter.close()
    got = [args_of(e) for e in logged(c)]
    assert ["blpop", "bl", "0"] in got and ["lpush", "bl", "foo"] in got


def test_disabled(c):
    c.config_set("slowlog-log-slower-than", -1)
    c.execute_command("SLOWLOG", "RESET")
    c.set("k", "v")
    assert c.execute_command("SLOWLOG", "LEN") == 0


def test_reset_and_help(c):
    c.set("k", "v")
    assert c.execute_command("SLOWLOG", "RESET") == b"OK"
    help_ = c.execute_command("SLOWLOG", "HELP")
    assert help_[0].startswith(b"SLOWLOG <subcommand>") and b"RESET" in help_
    with pytest.raises(redis.ResponseError, match="unknown subcommand 'NOSUCH'. Try SLOWLOG HELP."):
        c.execute_command("SLOWLOG", "NOSUCH")


def test_debug_sleep_logged_with_name(spawn):
    s = spawn("--enable-debug-command", "yes", "--slowlog-log-slower-than", "100000")
    r = s.new_client()
    try:
        r.client_setname("sleeper")
        r.execute_command("DEBUG", "SLEEP", "0.2")
        e = r.execute_command("SLOWLOG", "GET")[0]
        assert args_of(e) == ["debug", "sleep", "0.2"]
        assert e[2] > 100000 and e[5] == b"sleeper"
        p = r.pipeline(transaction=True)
        p.execute_command("DEBUG", "SLEEP", "0.2")
        r.execute_command("SLOWLOG", "RESET")
        p.execute()
        assert r.execute_command("SLOWLOG", "LEN") == 1
        assert args_of(r.execute_command("SLOWLOG", "GET")[0]) == ["debug", "sleep", "0.2"]
    finally:
        r.close()
