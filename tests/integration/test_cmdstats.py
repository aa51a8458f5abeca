"""INFO commandstats, errorstats, latencystats, total_error_replies and
LATENCY HISTOGRAM, checked against Redis 7.0 (the same tests run on
redis-server). Every test starts with CONFIG RESETSTAT on the shared server.

Multi-key commands whose keys live on several shards (MGET, MSET, DEL) and
EXEC of commands on several shards are counted once, as Redis counts them."""
import re
import threading
import time

import pytest
import redis


def info_section(r, name):
    raw = r.execute_command("INFO", name)
    if isinstance(raw, bytes):
        raw = raw.decode()
    if isinstance(raw, dict):  # redis-py parsed it
        return raw
    out = {}
    for line in raw.split("\r\n"):
        if line and not line.startswith("#") and ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


def raw_info(r, *names):
    conn = r.connection_pool.get_connection("INFO")
    try:
        conn.send_command("INFO", *names)
        raw = conn.read_response()
    finally:
        r.connection_pool.release(conn)
    return raw.decode() if isinstance(raw, bytes) else raw


def stat_line(r, section, prefix):
    """The value after `prefix:` in INFO section, or None."""
    m = re.search(r"\r\n" + re.escape(prefix) + r":(.*?)\r\n", raw_info(r, section))
    return m.group(1) if m else None


def cmdstat(r, name):
    v = stat_line(r, "commandstats", "cmdstat_" + name)
    if v is None:
        return None
    return {k: float(x) if "." in x else int(x) for k, x in (kv.split("=") for kv in v.split(","))}


def errorstat(r, code):
    v = stat_line(r, "errorstats", "errorstat_" + code)
    return None if v is None else int(v.split("=")[1])


def percentiles(r):
    v = r.execute_command("CONFIG", "GET", "latency-tracking-info-percentiles")
    v = v[1] if isinstance(v, list) else list(v.values())[0]
    return v.decode() if isinstance(v, bytes) else v


def total_errors(r):
    return int(stat_line(r, "stats", "total_error_replies"))


@pytest.fixture
def c(r):
    r.config_set("latency-tracking", "yes")
    r.config_set("latency-tracking-info-percentiles", "50 99 99.9")
    r.execute_command("CONFIG", "RESETSTAT")
    return r


def test_calls_and_usec(c):
    c.set("k", "v")
    c.set("k", "w")
    c.get("k")
    s = cmdstat(c, "set")
    assert s["calls"] == 2 and s["rejected_calls"] == 0 and s["failed_calls"] == 0
    assert s["usec"] >= 0 and s["usec_per_call"] == pytest.approx(s["usec"] / 2, abs=0.01)
    assert cmdstat(c, "get")["calls"] == 1
    assert cmdstat(c, "lpush") is None


def test_failed_call_and_errorstats(c):
    c.set("k", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.lpush("k", "x")
    s = cmdstat(c, "lpush")
    assert (s["calls"], s["rejected_calls"], s["failed_calls"]) == (1, 0, 1)
    assert errorstat(c, "WRONGTYPE") == 1
    assert total_errors(c) == 1


def test_rejected_by_arity_then_counted_properly(c):
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'set'"):
        c.execute_command("SET", "k")
    s = cmdstat(c, "set")
    assert (s["calls"], s["rejected_calls"], s["failed_calls"]) == (0, 1, 0)
    c.set("k1", "v1")
    c.set("k2", "v2")
    s = cmdstat(c, "set")
    assert (s["calls"], s["rejected_calls"], s["failed_calls"]) == (2, 1, 0)
    assert errorstat(c, "ERR") == 1 and total_errors(c) == 1


def test_unknown_command_and_subcommand(c):
    with pytest.raises(redis.ResponseError, match="unknown command"):
        c.execute_command("ASDFGH")
    with pytest.raises(redis.ResponseError, match="unknown subcommand"):
        c.execute_command("CONFIG", "NOSUCH")
    assert errorstat(c, "ERR") == 2
    assert total_errors(c) == 2
    assert cmdstat(c, "config") is None  # an unknown subcommand is no command


def test_subcommands_by_full_name(c):
    c.execute_command("CLIENT", "ID")
    c.config_get("maxmemory")
    assert cmdstat(c, "client|id")["calls"] == 1
    assert cmdstat(c, "config|get")["calls"] == 1
    assert stat_line(c, "latencystats", "latency_percentiles_usec_client|id") is not None


def test_exec_counts_its_commands(c):
    p = c.pipeline(transaction=True)
    p.set("a{x}", "1").set("b", "2").execute_command("INCR", "c").get("a{x}")
    p.execute()
    assert cmdstat(c, "multi")["calls"] == 1
    assert cmdstat(c, "exec")["calls"] == 1
    assert cmdstat(c, "set")["calls"] == 2
    assert cmdstat(c, "incr")["calls"] == 1


def test_exec_error_counts_to_its_command(c):
    c.set("s", "v")
    p = c.pipeline(transaction=True)
    p.set("a", "b").lpush("s", "x")
    res = p.execute(raise_on_error=False)
    assert isinstance(res[1], redis.ResponseError)
    assert cmdstat(c, "lpush")["failed_calls"] == 1
    assert cmdstat(c, "exec")["failed_calls"] == 0
    assert cmdstat(c, "set")["failed_calls"] == 0
    with pytest.raises(redis.ResponseError, match="EXEC without MULTI"):
        c.execute_command("EXEC")
    e = cmdstat(c, "exec")
    assert (e["calls"], e["failed_calls"]) == (2, 1)
    assert errorstat(c, "WRONGTYPE") == 1 and errorstat(c, "ERR") == 1


def test_execabort_rejected_queueing(server, c):
    conn = server.new_client()
    try:
        conn.execute_command("MULTI")
        with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
            conn.execute_command("SET")
        with pytest.raises(redis.ResponseError, match="discarded because of previous errors"):
            conn.execute_command("EXEC")
    finally:
        conn.close()
    s = cmdstat(c, "set")
    assert (s["calls"], s["rejected_calls"]) == (0, 1)
    e = cmdstat(c, "exec")
    assert (e["calls"], e["failed_calls"]) == (1, 1)
    assert errorstat(c, "ERR") == 1 and errorstat(c, "EXECABORT") == 1
    assert total_errors(c) == 2


def test_multi_key_commands_count_once(c):
    keys = ["k%d" % i for i in range(12)]
    c.mset({k: "v" for k in keys})
    c.mget(keys)
    c.exists(*keys)
    c.delete(*keys)
    for name in ("mset", "mget", "exists", "del"):
        assert cmdstat(c, name)["calls"] == 1, name


def test_blocked_command_counted_when_served(server, c):
    c.delete("bl")
    waiter = server.new_client()
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("v", waiter.blpop(["bl"], 0)))
    t.start()
    deadline = time.time() + 10
    while int(stat_line(c, "clients", "blocked_clients")) < 1 and time.time() < deadline:
        time.sleep(0.01)
    assert cmdstat(c, "blpop")["calls"] == 1  # a call when it runs (Redis 7.0)
    assert stat_line(c, "latencystats", "latency_percentiles_usec_blpop") is None
    c.lpush("bl", "a")
    t.join(10)
    waiter.close()
    assert got["v"] == (b"bl", b"a")
    assert cmdstat(c, "blpop")["calls"] == 1  # serving is not another call
    assert stat_line(c, "latencystats", "latency_percentiles_usec_blpop") is not None


def test_blocked_command_timeout_counted(c):
    c.delete("none")
    assert c.blpop(["none"], 0.01) is None
    assert cmdstat(c, "blpop")["calls"] == 1


def test_resetstat_clears(c):
    c.set("k", "v")
    with pytest.raises(redis.ResponseError):
        c.lpush("k", "v")
    c.execute_command("CONFIG", "RESETSTAT")
    assert cmdstat(c, "lpush") is None
    assert errorstat(c, "WRONGTYPE") is None
    assert total_errors(c) == 0
    assert stat_line(c, "latencystats", "latency_percentiles_usec_lpush") is None


def test_latencystats_percentiles_config(c):
    c.set("a", "b")
    line = stat_line(c, "latencystats", "latency_percentiles_usec_set")
    assert re.fullmatch(r"p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}", line)
    c.config_set("latency-tracking-info-percentiles", "0.0 50.0 100.0")
    assert percentiles(c) == "0 50 100"
    assert re.fullmatch(r"p0=[\d.]+,p50=[\d.]+,p100=[\d.]+",
                        stat_line(c, "latencystats", "latency_percentiles_usec_set"))
    with pytest.raises(redis.ResponseError, match="Invalid latency-tracking-info-percentiles parameters"):
        c.config_set("latency-tracking-info-percentiles", "10.0 50.0 a")
    with pytest.raises(redis.ResponseError, match=r"should sit between \[0.0,100.0\]"):
        c.config_set("latency-tracking-info-percentiles", "10.0 101")
    assert percentiles(c) == "0 50 100"
    c.config_set("latency-tracking-info-percentiles", "50 99 99.9")


def test_latency_tracking_off(c):
    c.config_set("latency-tracking", "no")
    c.set("a", "b")
    assert stat_line(c, "latencystats", "latency_percentiles_usec_set") is None
    assert cmdstat(c, "set")["calls"] == 1
    c.config_set("latency-tracking", "yes")
    c.set("a", "b")
    assert stat_line(c, "latencystats", "latency_percentiles_usec_set") is not None


def test_info_sections_commandstats_not_default(c):
    c.set("a", "b")
    assert "rejected_calls" not in raw_info(c, "default")
    assert "rejected_calls" in raw_info(c, "all")
    assert "rejected_calls" in raw_info(c, "everything")
    assert "latency_percentiles_usec" in raw_info(c, "everything")
    both = raw_info(c, "cpu", "commandstats")
    assert "used_cpu_user" in both and "cmdstat_set" in both and "used_memory" not in both
    assert "cmdstat_set" in raw_info(c, "commandSTATS")


def test_latency_histogram(c):
    for _ in range(3):
        c.set("a", "b")
    c.get("a")
    h = c.execute_command("LATENCY", "HISTOGRAM", "set", "get", "nosuch")
    d = dict(zip(h[0::2], h[1::2]))
    assert set(d) == {b"set", b"get"}
    s = dict(zip(d[b"set"][0::2], d[b"set"][1::2]))
    assert s[b"calls"] == 3
    buckets = s[b"histogram_usec"]
    counts = buckets[1::2]
    assert counts == sorted(counts) and counts[-1] == 3  # cumulative
    for b in buckets[0::2]:  # Redis's bucket names: 1, 2, 4, 8, 16, 33, 66, 132, ...
        assert b in (1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16909, 33818)
    allh = c.execute_command("LATENCY", "HISTOGRAM")
    names = allh[0::2]
    assert b"set" in names and b"get" in names  # and the first LATENCY HISTOGRAM
    assert c.execute_command("LATENCY", "HISTOGRAM", "nosuch") == []
