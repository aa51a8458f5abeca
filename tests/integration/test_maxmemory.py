"""maxmemory and eviction: OOM refusals under noeviction (plain, inside
MULTI, EXEC), each eviction policy keeping the server under its limit and
choosing among the keys it may choose, LRU quality against Redis, LFU
counters (OBJECT FREQ), CONFIG SET maxmemory evicting at once, INFO fields,
the AOF record of an eviction. Each test has its own server (the limits
are global). Every loop is bounded in count."""
import glob
import os
import time

import pytest
import redis

OOM = "OOM command not allowed when used memory > 'maxmemory'."
VAL = "v" * 100


def used(c):
    return c.info("memory")["used_memory"]


def stat(c, name):
    return c.info("stats")[name]


def plain(s):
    """A client that hands back replies as they are ("QUEUED", OBJECT's)."""
    c = s.new_client(decode_responses=True)
    c.response_callbacks.clear()
    return c


def fill_until_oom(c, prefix, limit=100000):
    """SET keys until the server answers OOM; returns how many went in."""
    for i in range(limit):
        try:
            c.set("%s:%d" % (prefix, i), VAL)
        except redis.ResponseError as e:
            assert str(e) == OOM
            return i
    raise AssertionError("no OOM after %d keys" % limit)


def test_noeviction_refuses_denyoom_commands(spawn):
    s = spawn("--maxmemory-policy", "noeviction")
    c = s.new_client(decode_responses=True)
    c.config_set("maxmemory", used(c) + 200 * 1024)
    n = fill_until_oom(c, "k")
    assert n > 100
    assert c.dbsize() == n
    # deny-oom commands are refused, the others run
    for cmd in (("SET", "x", "1"), ("LPUSH", "l", "a"), ("HSET", "h", "f", "v"), ("APPEND", "k:0", "z")):
        with pytest.raises(redis.ResponseError, match="^OOM command not allowed"):
            c.execute_command(*cmd)
    assert c.get("k:0") == VAL
    assert c.exists("x") == 0
    assert c.delete("k:1") == 1
    assert c.expire("k:2", 100) is True
    assert stat(c, "evicted_keys") == 0
    oom = c.info("errorstats")["errorstat_OOM"]  # "count=N", parsed or not
    assert int(oom["count"] if isinstance(oom, dict) else oom.split("=")[1]) >= 4
    # under the limit again, writes go through
    c.config_set("maxmemory", 0)
    assert c.set("x", "1") is True


def test_oom_inside_multi_and_at_exec(spawn):
    s = spawn("--maxmemory-policy", "noeviction")
    c = plain(s)
    other = s.new_client(decode_responses=True)
    for i in range(500):
        c.set("k:%d" % i, VAL)
    # queued while under the limit, EXEC after it dropped: the block is discarded
    c.execute_command("MULTI")
    assert c.execute_command("SET", "a", "1") == "QUEUED"
    assert c.execute_command("GET", "k:1") == "QUEUED"
    other.config_set("maxmemory", used(other) // 2)
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("EXEC")
    assert str(e.value) == "Transaction discarded because of: " + OOM
    assert c.exists("a") == 0
    # over the limit, anything queued is refused and dooms the block
    c.execute_command("MULTI")
    with pytest.raises(redis.ResponseError, match="^OOM"):
        c.execute_command("GET", "k:1")
    with pytest.raises(redis.ResponseError, match="Transaction discarded because of previous errors"):
        c.execute_command("EXEC")
    # a block of reads only: EXEC runs
    c.execute_command("MULTI")
    c.execute_command("DISCARD")
    assert c.get("k:1") == VAL
    other.config_set("maxmemory", 0)


def test_volatile_policy_without_volatile_keys_refuses(spawn):
    s = spawn("--maxmemory-policy", "volatile-lru")
    c = s.new_client(decode_responses=True)
    c.config_set("maxmemory", used(c) + 200 * 1024)
    n = fill_until_oom(c, "k")
    assert n > 100 and c.dbsize() == n
    assert stat(c, "evicted_keys") == 0


POLICIES = ["allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu",
            "volatile-random", "volatile-ttl"]


@pytest.mark.parametrize("policy", POLICIES)
def test_policy_keeps_memory_under_limit(spawn, policy):
    s = spawn("--maxmemory-policy", policy)
    c = s.new_client(decode_responses=True)
    limit = used(c) + 400 * 1024
    c.config_set("maxmemory", limit)
    # one key in six persistent, the rest with an expire (longer for later
    # keys); about three times what fits
    n = 6000
    for i in range(n):
        if i % 6 == 0:
            c.set("key:%d" % i, VAL)
        else:
            c.set("key:%d" % i, VAL, ex=10000 + i)
    assert used(c) < limit + 8192
    c.config_set("maxmemory", 0)  # nothing more goes while we count
    evicted = stat(c, "evicted_keys")
    assert evicted > 1000
    assert c.dbsize() == n - evicted
    p = c.pipeline(transaction=False)
    for i in range(0, n, 6):
        p.exists("key:%d" % i)
    persistent_alive = sum(p.execute())
    if policy.startswith("volatile-"):
        assert persistent_alive == n // 6  # only keys with an expire may go
    else:
        assert persistent_alive < n // 6
    if policy == "volatile-ttl":
        # the nearest deadlines go first: the later (longer TTL) volatile
        # keys survive far more often than the early ones
        p = c.pipeline(transaction=False)
        vol = [i for i in range(n) if i % 6]
        for i in vol:
            p.exists("key:%d" % i)
        e = p.execute()
        assert sum(e[-1000:]) > 2 * sum(e[:1000])
    c.config_set("maxmemory", 0)


def test_allkeys_lru_keeps_recently_touched_keys(spawn, target):
    """4000 keys, then (two seconds later on the LRU clock) every other one
    read, then 2000 new keys under a limit that holds about 4000: the read
    keys survive about as often as the new ones, the others rarely. The
    reads start as the clock (seconds) ticks, so that the new keys almost
    always share their second; new keys a second younger would make the
    read ones the older candidates. Measured (samples 5, 4000 keys, 8 runs
    each): Redis 7.0 read 0.91-0.93, unread 0.16-0.18; shoal --threads 1
    0.91-0.92, 0.19-0.20; --threads 4 0.85-0.87, 0.27-0.31 (ASan too)."""
    s = spawn("--maxmemory-policy", "allkeys-lru")
    c = s.new_client(decode_responses=True)
    p = c.pipeline(transaction=False)
    for i in range(4000):
        p.set("old:%d" % i, VAL)
    p.execute()
    time.sleep(2.2)  # the LRU clock counts seconds
    tick = c.info("server")["lru_clock"]
    for _ in range(300):  # at most 1.5 s
        if c.info("server")["lru_clock"] != tick:
            break
        time.sleep(0.005)
    p = c.pipeline(transaction=False)
    for i in range(0, 4000, 2):
        p.get("old:%d" % i)
    p.execute()
    c.config_set("maxmemory", 0)  # the first INFO and CONFIG SET allocate their statistics
    c.config_set("maxmemory", used(c))
    for i in range(2000):
        c.set("new:%d" % i, VAL)
    assert stat(c, "evicted_keys") >= 1800
    c.config_set("maxmemory", 0)  # no eviction while we look
    p = c.pipeline(transaction=False)
    for i in range(4000):
        p.exists("old:%d" % i)
    e = p.execute()
    touched, untouched = sum(e[0::2]) / 2000, sum(e[1::2]) / 2000
    assert touched >= 0.7, (target, touched, untouched)
    assert untouched <= 0.45, (target, touched, untouched)


def test_allkeys_lfu_keeps_frequently_used_keys(spawn):
    s = spawn("--maxmemory-policy", "allkeys-lfu")
    c = s.new_client(decode_responses=True)
    p = c.pipeline(transaction=False)
    for i in range(2000):
        p.set("old:%d" % i, VAL)
    p.execute()
    p = c.pipeline(transaction=False)
    for _ in range(30):
        for i in range(0, 2000, 2):
            p.get("old:%d" % i)
    p.execute()
    c.config_set("maxmemory", 0)  # the first INFO and CONFIG SET allocate their statistics
    c.config_set("maxmemory", used(c))
    for i in range(1000):
        c.set("new:%d" % i, VAL)
    c.config_set("maxmemory", 0)
    p = c.pipeline(transaction=False)
    for i in range(2000):
        p.exists("old:%d" % i)
    e = p.execute()
    hot, cold = sum(e[0::2]) / 1000, sum(e[1::2]) / 1000
    assert hot >= 0.9, (hot, cold)
    assert cold <= 0.6, (hot, cold)


def test_object_freq_and_idletime(spawn):
    s = spawn()
    c = plain(s)
    c.set("k", "v")
    with pytest.raises(redis.ResponseError, match="^An LFU maxmemory policy is not selected, access frequency not tracked"):
        c.execute_command("OBJECT", "FREQ", "k")
    assert c.execute_command("OBJECT", "IDLETIME", "k") == 0
    c.config_set("maxmemory-policy", "allkeys-lfu")
    with pytest.raises(redis.ResponseError, match="^An LFU maxmemory policy is selected, idle time not tracked"):
        c.execute_command("OBJECT", "IDLETIME", "k")
    c.set("f", "v")
    assert c.execute_command("OBJECT", "FREQ", "f") == 5  # a new key starts at 5
    c.get("f")
    assert c.execute_command("OBJECT", "FREQ", "f") == 6  # the first access always counts
    c.set("f", "w")  # a new value keeps the key's counter
    assert c.execute_command("OBJECT", "FREQ", "f") >= 6
    for _ in range(200):
        c.get("f")
    assert 7 <= c.execute_command("OBJECT", "FREQ", "f") <= 30  # logarithmic
    dump = s.new_client().dump("f")
    c.execute_command("RESTORE", "g", 0, dump, "FREQ", 100)
    assert c.execute_command("OBJECT", "FREQ", "g") == 100
    assert c.execute_command("OBJECT", "FREQ", "missing") is None
    c.config_set("lfu-log-factor", 0)  # every access counts
    c.set("h", "v")
    for _ in range(20):
        c.get("h")
    assert c.execute_command("OBJECT", "FREQ", "h") == 25


def test_config_set_maxmemory_evicts_at_once(spawn):
    s = spawn("--maxmemory-policy", "allkeys-random")
    c = s.new_client(decode_responses=True)
    p = c.pipeline(transaction=False)
    for i in range(3000):
        p.set("k:%d" % i, VAL)
    p.execute()
    before = used(c)
    c.config_set("maxmemory", before - 200 * 1024)
    # the eviction happened inside CONFIG SET: the next command sees it
    assert stat(c, "evicted_keys") > 500
    # and brought the memory under the new limit. At 4 shards on a loaded
    # machine (CI, under ASan) the INFO right after can count up to about
    # 30 KB above it that is gone 200 ms later, so the memory is read
    # until it settles, for at most 3 s.
    limit = before - 200 * 1024
    deadline = time.time() + 3
    while used(c) >= limit + 8192 and time.time() < deadline:
        time.sleep(0.05)
    assert used(c) < limit + 8192
    c.config_set("maxmemory", 0)
    assert c.dbsize() == 3000 - stat(c, "evicted_keys")


def test_info_and_config_fields(spawn):
    s = spawn()
    c = s.new_client(decode_responses=True)
    got = c.config_get("maxmemory*")
    assert got["maxmemory-samples"] == "5" and got["maxmemory-eviction-tenacity"] == "10"
    got = c.config_get("lfu-*")
    assert got == {"lfu-log-factor": "10", "lfu-decay-time": "1"}
    c.config_set("maxmemory", "100mb")
    c.config_set("maxmemory-policy", "volatile-ttl")
    m = c.info("memory")
    assert m["maxmemory"] == 104857600 and m["maxmemory_human"] == "100.00M"
    assert m["maxmemory_policy"] == "volatile-ttl" and m["mem_not_counted_for_evict"] == 0
    assert c.info("stats")["evicted_keys"] == 0
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("maxmemory-samples", 0)
    assert "argument must be between 1 and 2147483647 inclusive" in str(e.value)
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("maxmemory-eviction-tenacity", 101)
    assert "argument must be between 0 and 100 inclusive" in str(e.value)
    c.config_set("maxmemory", 0)


def test_evictions_reach_the_aof_as_del(spawn):
    s = spawn("--appendonly", "yes", "--maxmemory-policy", "allkeys-lru")
    c = s.new_client(decode_responses=True)
    for i in range(3):
        c.set("asdf%d" % i, i)
    c.config_set("maxmemory", 1)
    assert c.dbsize() == 0
    c.config_set("maxmemory", 0)
    c.set("after", 1)
    deadline = time.time() + 10
    text = ""
    while time.time() < deadline and "after" not in text:  # appendfsync everysec: written within the turn
        text = "".join(open(f, "rb").read().decode(errors="replace")
                       for f in glob.glob(os.path.join(s.dir, "appendonlydir", "*.incr.aof")))
        time.sleep(0.05)
    for i in range(3):
        assert "DEL\r\n$5\r\nasdf%d" % i in text
    assert text.index("asdf2\r\n$1\r\n2") < text.index("DEL\r\n$5\r\nasdf") < text.index("after")
