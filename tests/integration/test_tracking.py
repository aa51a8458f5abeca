"""Client-side caching: CLIENT TRACKING (default, REDIRECT, BCAST with
PREFIX, OPTIN/OPTOUT with CLIENT CACHING, NOLOOP), CLIENT GETREDIR and
TRACKINGINFO, invalidations in RESP3 pushes and through a RESP2 redirect on
__redis__:invalidate, the null invalidation of FLUSHALL/FLUSHDB, a broken
redirect, tracking-table-max-keys, and the INFO / CLIENT LIST fields.

Keys are read on one connection and written on another; without hashtags
they live on different shards at --threads 4."""
import time

import pytest
import redis

from test_connection import RawConn, plain


def tracker(server, *opts, resp=3):
    c = RawConn(server)
    if resp == 3:
        assert c.call("HELLO", "3")[0] == "%"
    assert c.call("CLIENT", "TRACKING", "on", *opts) == ("+", "OK")
    return c


def redirect_target(server):
    t = RawConn(server)
    tid = t.call("CLIENT", "ID")[1]
    assert plain(t.call("SUBSCRIBE", "__redis__:invalidate"))[0] == b"subscribe"
    return t, tid


def tinfo(c):
    """CLIENT TRACKINGINFO as a dict, from RESP2 or RESP3."""
    v = plain(c.call("CLIENT", "TRACKINGINFO"))
    return v if isinstance(v, dict) else dict(zip(v[::2], v[1::2]))


def inval(c):
    """The next invalidation a RESP3 connection got: its keys, None for null."""
    t, v = c.read()
    assert t == ">", (t, v)
    assert v[0] == ("$", b"invalidate")
    return None if v[1][1] is None else sorted(plain(v[1]))


def redirected(t):
    """The next invalidation a RESP2 redirect target got."""
    m = plain(t.read())
    assert m[:2] == [b"message", b"__redis__:invalidate"]
    return None if m[2] is None else sorted(m[2])


@pytest.fixture
def conns():
    opened = []
    yield opened
    for c in opened:
        c.close()


def test_resp3_invalidation_keys_on_every_shard(server, r, conns):
    c = tracker(server)
    conns.append(c)
    keys = ["key%d" % i for i in range(16)]
    for k in keys:
        r.set(k, "1")
    for k in keys:
        assert c.call("GET", k) == ("$", b"1")
    r.set("untracked", "2")  # never read: no message
    for k in keys:
        r.incr(k)
        assert inval(c) == [k.encode()]
    # an invalidated key is forgotten until read again
    r.incr(keys[0])
    assert c.call("PING") == ("+", "PONG")


def test_invalidation_after_own_reply(server, r, conns):
    c = tracker(server)
    conns.append(c)
    c.call("HSET", "myhash", "f", "1")
    c.call("HGET", "myhash", "f")
    assert c.call("HDEL", "myhash", "f") == (":", 1)  # the reply first
    assert inval(c) == [b"myhash"]


def test_resp2_redirect(server, r, conns):
    t, tid = redirect_target(server)
    conns.append(t)
    c = tracker(server, "REDIRECT", tid, resp=2)
    conns.append(c)
    r.set("a{t}", "1")
    r.set("b{t}", "1")
    c.call("GET", "a{t}")
    r.incr("b{t}")  # not read: nothing
    r.incr("a{t}")
    assert redirected(t) == [b"a{t}"]
    assert c.call("CLIENT", "GETREDIR") == (":", tid)
    assert tinfo(c) == {b"flags": [b"on"], b"redirect": tid, b"prefixes": []}


def test_bcast_prefixes_and_noloop(server, r, conns):
    t, tid = redirect_target(server)
    conns.append(t)
    c = tracker(server, "BCAST", "REDIRECT", tid, "PREFIX", "a:", "PREFIX", "b:", resp=2)
    conns.append(c)
    p = r.pipeline(transaction=True)
    for k in ("a:1{t}", "a:2{t}", "b:1{t}", "c:1{t}"):
        p.incr(k)
    p.execute()
    got = redirected(t) + redirected(t)  # one message per prefix
    assert sorted(got) == [b"a:1{t}", b"a:2{t}", b"b:1{t}"]
    assert c.call("CLIENT", "TRACKING", "off") == ("+", "OK")
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(tid), "NOLOOP")
    r.set("other", "1")
    c.call("SET", "loop", "1")  # its own write: not sent
    r.set("other2", "1")
    assert redirected(t) == [b"other"]
    assert redirected(t) == [b"other2"]
    info = tinfo(c)
    assert info[b"flags"] == [b"on", b"bcast", b"noloop"] and info[b"prefixes"] == [b""]


def test_optin_optout(server, r, conns):
    c = tracker(server, "OPTIN")
    conns.append(c)
    r.set("k1", "1")
    r.set("k2", "1")
    c.call("GET", "k1")  # not cached: no CACHING yes
    assert c.call("CLIENT", "CACHING", "yes") == ("+", "OK")
    assert tinfo(c)[b"flags"] == [b"on", b"optin", b"caching-yes"]
    c.call("GET", "k2")
    r.incr("k1")
    r.incr("k2")
    assert inval(c) == [b"k2"]
    o = tracker(server, "OPTOUT")
    conns.append(o)
    o.call("CLIENT", "CACHING", "no")
    o.call("GET", "k1")  # not cached
    o.call("GET", "k2")
    r.incr("k1")
    r.incr("k2")
    assert inval(o) == [b"k2"]


def test_flush_sends_null(server, r, conns):
    c = tracker(server)
    conns.append(c)
    t, tid = redirect_target(server)
    conns.append(t)
    d = tracker(server, "REDIRECT", tid, resp=2)
    conns.append(d)
    c.call("GET", "x")
    r.flushall()
    assert inval(c) is None
    assert redirected(t) is None
    r.flushdb()
    assert inval(c) is None
    assert redirected(t) is None


def test_broken_redirect(server, r, conns):
    t, tid = redirect_target(server)
    c = tracker(server, "REDIRECT", tid)
    conns.append(c)
    r.set("k", "1")
    c.call("GET", "k")
    t.call("QUIT")
    t.close()
    deadline = time.time() + 5
    while time.time() < deadline and tid in [int(x["id"]) for x in r.client_list()]:
        time.sleep(0.01)
    r.set("k", "2")
    assert plain(c.read()) == [b"tracking-redir-broken", tid]
    assert tinfo(c)[b"flags"] == [b"on", b"broken_redirect"]


def test_table_max_keys(server, r, conns):
    t, tid = redirect_target(server)
    conns.append(t)
    c = tracker(server, "REDIRECT", tid, resp=2)
    conns.append(c)
    keys = ["mk%d" % i for i in range(40)]
    for k in keys:
        c.call("GET", k)
    assert r.info("stats")["tracking_total_keys"] == 40
    r.config_set("tracking-table-max-keys", "1")
    try:
        got = []
        for _ in range(39):
            got += redirected(t)
        assert len(set(got)) == 39 and set(got) <= {k.encode() for k in keys}
        assert r.info("stats")["tracking_total_keys"] == 1
    finally:
        r.config_set("tracking-table-max-keys", "1000000")


def test_errors_and_info(server, r, conns):
    c = RawConn(server)
    conns.append(c)
    errs = [
        (("CLIENT", "TRACKING", "on", "PREFIX", "a"), "ERR PREFIX option requires BCAST mode to be enabled"),
        (("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"), "ERR You can't specify both OPTIN mode and OPTOUT mode"),
        (("CLIENT", "TRACKING", "on", "BCAST", "OPTIN"), "ERR OPTIN and OPTOUT are not compatible with BCAST"),
        (("CLIENT", "TRACKING", "on", "REDIRECT", "999999"), "ERR The client ID you want redirect to does not exist"),
        (("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOOBAR", "PREFIX", "FOO"),
         "ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. Prefixes for a single client must not "
         "overlap."),
        (("CLIENT", "TRACKING", "maybe"), "ERR syntax error"),
        (("CLIENT", "CACHING", "yes"), "ERR CLIENT CACHING can be called only when the client is in tracking mode "
         "with OPTIN or OPTOUT mode enabled"),
    ]
    for cmd, e in errs:
        assert c.call(*cmd) == ("-", e)
    assert c.call("CLIENT", "GETREDIR") == (":", -1)
    assert tinfo(c) == {b"flags": [b"off"], b"redirect": -1, b"prefixes": []}
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOO", "PREFIX", "BAR")
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FO") == (
        "-", "ERR Prefix 'FO' overlaps with an existing prefix 'FOO'. Prefixes for a single client must not overlap.")
    assert c.call("CLIENT", "TRACKING", "on") == (
        "-", "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then "
             "re-enabling it with a different mode.")
    assert c.call("CLIENT", "CACHING", "yes") == (
        "-", "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
    mine = [x for x in r.client_list() if x["cmd"] == "client|caching"]
    assert len(mine) == 1 and mine[0]["flags"] == "tB" and mine[0]["redir"] == "0"
    d = tracker(server)
    conns.append(d)
    d.call("GET", "i1")
    d.call("GET", "i2")
    info = r.info()
    assert (info["tracking_clients"], info["tracking_total_prefixes"]) == (2, 2)
    assert (info["tracking_total_keys"], info["tracking_total_items"]) == (2, 2)
    assert c.call("RESET") == ("+", "RESET")
    assert r.info()["tracking_clients"] == 1


def test_scripts_track_declared_keys_and_noloop(server, r, conns):
    """A script that calls a read command makes its caller track the keys
    it declared (not the ones it touched); one that only writes or pings
    tracks nothing; a NOLOOP caller gets no invalidation for its script's
    writes, on whichever shard the script ran."""
    c = tracker(server)
    conns.append(c)
    for k in ("s1", "s2", "s3"):
        r.set(k, "1")
    c.call("EVAL", "redis.call('set', 'w{x}', '1')", 1, "s1")  # no read: nothing tracked
    r.incr("s1")
    c.call("EVAL", "return redis.call('get', 'w{x}')", 2, "s2", "s3")  # a read: s2 and s3 tracked
    r.incr("w{x}")  # read, not declared: no message
    r.incr("s2")
    assert inval(c) == [b"s2"]
    r.incr("s3")
    assert inval(c) == [b"s3"]
    assert c.call("EVAL_RO", "return redis.call('ping')", 1, "s1") == ("+", "PONG")  # no read command
    r.incr("s1")
    assert c.call("PING") == ("+", "PONG")  # nothing came before it
    n = tracker(server, "NOLOOP")
    conns.append(n)
    for k in ("n1", "n2", "n3", "n4"):
        r.set(k, "1")
        assert n.call("GET", k) == ("$", b"1")
        assert n.call("EVAL", "return redis.call('incr', KEYS[1])", 1, k) == (":", 2)
        assert n.call("PING") == ("+", "PONG")  # its own script's write: no message
        r.incr(k)
        assert n.call("GET", k) == ("$", b"3")


def test_eviction_invalidation_before_reply(server, r, conns):
    """Keys evicted before a command are invalidated before its reply (Redis
    evicts ahead of the command), also when the evicted key lives on
    another shard than the command's key (no hashtags: at --threads 4 the
    only volatile key is elsewhere, so the command evicts there first)."""
    r.flushall()
    c = tracker(server)
    conns.append(c)
    old = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        r.config_set("maxmemory-policy", "volatile-random")
        assert c.call("SETEX", "volatile-key", 10000, "x") == ("+", "OK")
        assert c.call("GET", "volatile-key") == ("$", b"x")
        mem = r.info("memory")  # measured once the key and its structures exist
        used = mem["used_memory"] - mem["mem_not_counted_for_evict"]
        r.config_set("maxmemory", used + 100 * 1024)
        assert c.call("SETBIT", "big-key", 1600000, 0) == (":", 0)  # about 200 kB: over the limit
        c.send("GETBIT", "big-key", 0)
        assert inval(c) == [b"volatile-key"]
        assert c.read() == (":", 0)
    finally:
        r.config_set("maxmemory", 0)
        r.config_set("maxmemory-policy", old)


def test_lowered_table_limit_before_next_command(spawn, conns):
    """A lowered tracking-table-max-keys takes effect before the next
    command, even one that MULTI only queues: the tracking client gets an
    invalidation of one of its keys ahead of QUEUED (with the cron paused,
    so only the command path can do it). The keys are on different shards
    at --threads 4."""
    server = spawn("--enable-debug-command", "yes")
    r = server.new_client()
    c = tracker(server)
    conns.append(c)
    try:
        r.config_set("tracking-table-max-keys", 2)
        r.execute_command("DEBUG", "PAUSE-CRON", 1)
        assert c.call("MGET", "lim-a", "lim-b") == ("*", [("_", None), ("_", None)])
        assert r.info("stats")["tracking_total_keys"] == 2
        assert c.call("MULTI") == ("+", "OK")
        r.config_set("tracking-table-max-keys", 1)
        c.send("PING")
        gone = inval(c)
        assert gone in ([b"lim-a"], [b"lim-b"])
        assert c.read() == ("+", "QUEUED")
        assert c.call("EXEC") == ("*", [("+", "PONG")])
        assert r.info("stats")["tracking_total_keys"] == 1
    finally:
        r.execute_command("DEBUG", "PAUSE-CRON", 0)
        r.close()
