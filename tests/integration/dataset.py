"""A dataset covering every type and encoding (with TTLs and two
databases), and a client-side picture of a server's contents to compare
after a save and restart. Shared by the persistence tests."""
import os

import redis


def has_list(r):
    try:
        r.execute_command("RPUSH", "__probe", "x")
        r.delete("__probe")
        return True
    except redis.ResponseError:
        return False


def fill(r, lists=True):
    """A dataset covering every type and encoding, with TTLs and 2 dbs."""
    r.set("s:embstr", "hello")
    r.set("s:int", "12345")
    r.set("s:bigint", "9223372036854775807")
    r.set("s:neg", "-129")
    r.set("s:raw", "x" * 100)          # LZF compressed
    r.set("s:rnd", os.urandom(300))    # incompressible raw
    r.set("s:empty", "")
    r.set("s:ttl", "v", px=500000)
    r.hset("h:lp", mapping={"a": "1", "b": "hello", "n": "-5000", "m": "100000", "q": "5000000000"})
    r.hset("h:ht", mapping={"f%d" % i: "v%d" % i for i in range(600)})
    r.hset("h:long", mapping={"a": "y" * 80})
    r.sadd("set:int", 1, 2, 3, -70000, 5000000000)
    r.sadd("set:ht", "a", "b", "c", 1)
    r.sadd("set:bigint", *range(1000))
    r.zadd("z:lp", {"a": 1, "b": 2.5, "c": -3, "d": 1e20, "e": float("inf"), "f": float("-inf"), "g": -0.0})
    r.zadd("z:sl", {"m%d" % i: i * 1.5 for i in range(200)})
    r.zadd("z:long", {"k" * 100: 1})
    r.expire("z:sl", 100000)
    if lists:
        r.rpush("l:small", "a", "b", "c", 1, 2, 300000)
        r.rpush("l:big", *["e%d" % i for i in range(5000)])
    r.execute_command("SELECT", 7)
    r.set("db7:key", "seven")
    r.hset("db7:h", "f", "v")
    r.execute_command("SELECT", 0)


def snapshot(r):
    """Every key of dbs 0 and 7 with type, value and TTL (seconds)."""
    out = {}
    for dbid in (0, 7):
        r.execute_command("SELECT", dbid)
        for k in r.keys("*"):
            t = r.type(k)
            if t == b"string":
                v = r.get(k)
            elif t == b"hash":
                v = r.hgetall(k)
            elif t == b"set":
                v = r.smembers(k)
            elif t == b"zset":
                v = r.zrange(k, 0, -1, withscores=True)
            elif t == b"list":
                v = r.lrange(k, 0, -1)
            else:
                v = None
            ttl = r.ttl(k)
            out[(dbid, k)] = (t, v, ttl > 0, r.object("encoding", k))
    r.execute_command("SELECT", 0)
    return out
