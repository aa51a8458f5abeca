"""MONITOR: the line format (`+<sec>.<usec> [<db> <addr>] "arg" ...`), commands
run on every shard, SELECT's database, MULTI/EXEC contents, the quoting of
odd bytes, HELLO AUTH redaction, admin commands left out, RESET and closing
ending the mode, and the O flag in CLIENT LIST."""
import re
import time

import pytest

from test_connection import RawConn, plain

LINE = re.compile(r'^(\d+)\.(\d{6}) \[(\d+) ([^\]]+)\] (.*)$')


@pytest.fixture
def mon(server, r):
    c = RawConn(server)
    assert c.call("MONITOR") == ("+", "OK")
    yield c
    c.close()


def lines(mon, n):
    out = []
    for _ in range(n):
        t, v = mon.read()
        assert t == "+"
        m = LINE.match(v)
        assert m, v
        out.append((int(m.group(3)), m.group(4), m.group(5)))
    return out


def my_addr(r):
    return r.client_info()["addr"]


def test_monitor_format_and_order(r, mon):
    addr = my_addr(r)
    before = time.time()
    keys = ["k%d" % i for i in range(12)]  # spread over the shards
    for k in keys:
        r.set(k, "v")
    for k in keys:
        r.get(k)
    got = lines(mon, 25)
    assert got[0] == (0, addr, '"CLIENT" "INFO"')
    assert [g[2] for g in got[1:]] == ['"SET" "%s" "v"' % k for k in keys] + ['"GET" "%s"' % k for k in keys]
    assert all(g[:2] == (0, addr) for g in got[1:])
    r.ping()
    t, v = mon.read()
    secs = float(v.split(" ")[0])
    assert before - 1 <= secs <= time.time() + 1


def test_monitor_database_and_quoting(r, mon):
    addr = my_addr(r)
    lines(mon, 1)  # CLIENT INFO
    r.execute_command("SELECT", "3")
    r.set("a\nb", b'\x01"\\\t')
    r.execute_command("SELECT", "0")
    assert lines(mon, 3) == [(3, addr, '"SELECT" "3"'), (3, addr, r'"SET" "a\nb" "\x01\"\\\t"'),
                             (0, addr, '"SELECT" "0"')]


def test_monitor_multi_exec(server, r, mon):
    lines(mon, 0)
    p = r.pipeline(transaction=True)
    p.set("foo", "bar")
    p.incr("ctr")
    p.execute()
    assert [g[2] for g in lines(mon, 4)] == ['"MULTI"', '"SET" "foo" "bar"', '"INCRBY" "ctr" "1"', '"EXEC"']
    c = RawConn(server)
    try:
        c.call("MULTI")
        c.call("NOSUCHCOMMAND")
        c.call("EXEC")
    finally:
        c.close()
    assert [g[2] for g in lines(mon, 2)] == ['"MULTI"', '"EXEC"']


def test_monitor_script_calls(server, r, mon):
    """A script shows as its EVAL/FCALL line, then one line per redis.call
    from "lua", in the script's database, whichever shard holds its keys.
    With several shards a script may run on its keys' shard, whose lines
    reach a monitor apart from the EVAL line of the connection's shard: the
    calls keep their order, the EVAL line may come on either side."""
    addr = my_addr(r)
    lines(mon, 1)  # CLIENT INFO
    ordered = server.target != "shoal4"
    for k in ("foo", "k1", "k2", "k3"):  # keys on different shards at --threads 4
        r.eval("redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])", 1, k, "bar")
        got = lines(mon, 3)
        ev = (0, addr, '"EVAL" "redis.call(\'set\', KEYS[1], ARGV[1]); return redis.call(\'get\', KEYS[1])" '
                       '"1" "%s" "bar"' % k)
        calls = [(0, "lua", '"set" "%s" "bar"' % k), (0, "lua", '"get" "%s"' % k)]
        if ordered:
            assert got == [ev] + calls
        else:
            assert ev in got and [g for g in got if g != ev] == calls
    r.execute_command("SELECT", "2")
    r.eval("return redis.call('incr', KEYS[1])", 1, "n")
    r.execute_command("SELECT", "0")
    got = [g[:2] + (g[2].split(" ")[0],) for g in lines(mon, 4)]
    if ordered:
        assert got == [(2, addr, '"SELECT"'), (2, addr, '"EVAL"'), (2, "lua", '"incr"'), (0, addr, '"SELECT"')]
    else:
        assert got[0] == (2, addr, '"SELECT"') and sorted(got[1:3]) == [(2, addr, '"EVAL"'), (2, "lua", '"incr"')]


def test_monitor_redacts_and_skips_admin(r, mon):
    r.execute_command("HELLO", "2", "AUTH", "default", "secret")
    r.config_get("maxmemory")  # admin: not shown
    r.echo("after")
    assert [g[2] for g in lines(mon, 2)] == ['"HELLO" "2" "AUTH" "(redacted)" "(redacted)"', '"ECHO" "after"']


def test_monitor_client_list_flag_and_reset(server, r):
    m = RawConn(server)
    try:
        assert m.call("MONITOR") == ("+", "OK")
        listed = [x for x in r.client_list() if x["cmd"] == "monitor"]
        assert len(listed) == 1 and listed[0]["flags"] == "O"
        assert m.call("RESET") == ("+", "RESET")
        r.set("x", "1")
        assert m.call("PING") == ("+", "PONG")  # no monitor line before it
    finally:
        m.close()


def test_closed_monitor_stops(server, r):
    ms = [RawConn(server) for _ in range(5)]
    for m in ms:
        assert m.call("MONITOR") == ("+", "OK")
    r.set("a", "1")
    for m in ms:
        t, v = m.read()
        assert t == "+" and v.endswith('"SET" "a" "1"')
        m.close()
    deadline = time.time() + 5
    while time.time() < deadline and any("monitor" == x["cmd"] for x in r.client_list()):
        time.sleep(0.01)
    assert not [x for x in r.client_list() if x["cmd"] == "monitor"]
