"""Keyspace notifications (notify-keyspace-events): the class string in
CONFIG GET/SET, and the events each command family emits, in order, on
__keyspace@<db>__:<key> and __keyevent@<db>__:<event>.

Every test subscribes with PSUBSCRIBE on its own connection and compares
the exact messages with what redis-server 7.0 sends. Keys of one test share
a hashtag: events of keys on different shards may reach a subscriber in
either order, events of one shard arrive in the order they happened."""
import time

import pytest
import redis

from test_connection import RawConn, plain


@pytest.fixture
def events(server, r):
    """events(flags) -> a reader: read(n) returns the next n messages as
    (channel, payload) pairs of str."""
    opened = []

    class Reader:
        def __init__(self, flags, pattern):
            r.config_set("notify-keyspace-events", flags)
            self.c = RawConn(server)
            opened.append(self.c)
            assert plain(self.c.call("PSUBSCRIBE", pattern))[0] == b"psubscribe"

        def read(self, n):
            out = []
            for _ in range(n):
                m = plain(self.c.read())
                assert m[0] == b"pmessage"
                out.append((m[2].decode(), m[3].decode()))
            return out

        def none_pending(self, r):
            """Nothing else is queued: a marker published now is the next message."""
            r.publish("__marker__", "m")
            m = plain(self.c.read())
            return m[2] == b"__marker__"

    def make(flags, pattern="*"):
        return Reader(flags, pattern)

    yield make
    for c in opened:
        c.close()
    r.config_set("notify-keyspace-events", "")


def ks(key, db=0):
    return "__keyspace@%d__:%s" % (db, key)


def ke(event, db=0):
    return "__keyevent@%d__:%s" % (db, event)


def test_flags_config(r):
    for given, shown in [("gKE", "gKE"), ("$lshzxeKE", "$lshzxeKE"), ("KA", "AK"), ("EA", "AE"),
                         ("AnKm", "AKm"), ("Kgn", "gnK"), ("tdE", "tdE"), ("", "")]:
        r.config_set("notify-keyspace-events", given)
        assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": shown}
    with pytest.raises(redis.ResponseError, match="Invalid event class character. Use 'Ag\\$lshzxeKEtmdn'."):
        r.config_set("notify-keyspace-events", "Kb")
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": ""}


def test_keyspace_and_keyevent(r, events):
    ev = events("KEA")
    r.set("foo", "bar")
    assert ev.read(2) == [(ks("foo"), "set"), (ke("set"), "foo")]
    r.execute_command("SELECT", 3)
    r.set("foo", "bar")
    assert ev.read(2) == [(ks("foo", 3), "set"), (ke("set", 3), "foo")]
    r.execute_command("SELECT", 0)


def test_masking(r, events):
    ev = events("KEl")
    r.set("{m}foo", "bar")
    r.lpush("{m}list", "a")
    assert ev.read(2) == [(ks("{m}list"), "lpush"), (ke("lpush"), "{m}list")]
    assert ev.none_pending(r)


def test_generic_events(r, events):
    ev = events("Kg")
    r.set("{g}a", "1")
    r.expire("{g}a", 100)
    r.persist("{g}a")
    r.rename("{g}a", "{g}b")
    r.copy("{g}b", "{g}c")
    r.pexpire("{g}c", -1)  # in the past: deleted
    r.delete("{g}b", "{g}nope")
    r.set("{g}d", "1")
    r.getdel("{g}d")
    r.set("{g}e", "1")
    r.execute_command("MOVE", "{g}e", "5")
    assert ev.read(9) == [(ks("{g}a"), "expire"), (ks("{g}a"), "persist"), (ks("{g}a"), "rename_from"),
                          (ks("{g}b"), "rename_to"), (ks("{g}c"), "copy_to"), (ks("{g}c"), "del"),
                          (ks("{g}b"), "del"), (ks("{g}d"), "del"), (ks("{g}e"), "move_from")]
    assert ev.read(1) == [(ks("{g}e", 5), "move_to")]
    r.execute_command("SELECT", 5)
    r.delete("{g}e")
    r.execute_command("SELECT", 0)
    assert ev.read(1) == [(ks("{g}e", 5), "del")]


def test_rename_across_shards(r, events):
    ev = events("Eg")
    r.set("src", "1")
    r.rename("src", "dst")  # at 4 shards the keys live apart
    got = ev.read(2)
    assert sorted(got) == sorted([(ke("rename_from"), "src"), (ke("rename_to"), "dst")])


def test_string_events(r, events):
    ev = events("K$")
    r.set("{s}a", "1")
    r.incr("{s}a")
    r.incrbyfloat("{s}a", 1.5)
    r.append("{s}a", "x")
    r.setrange("{s}a", 0, "y")
    r.setex("{s}b", 100, "v")
    r.set("{s}c", "v", nx=True)
    r.set("{s}c", "v", nx=True)  # not set: no event
    r.mset({"{s}d": "1", "{s}e": "2"})
    r.setbit("{s}f", 3, 1)
    r.getset("{s}a", "z")
    assert ev.read(11) == [(ks("{s}a"), "set"), (ks("{s}a"), "incrby"), (ks("{s}a"), "incrbyfloat"),
                           (ks("{s}a"), "append"), (ks("{s}a"), "setrange"), (ks("{s}b"), "set"),
                           (ks("{s}c"), "set"), (ks("{s}d"), "set"), (ks("{s}e"), "set"),
                           (ks("{s}f"), "setbit"), (ks("{s}a"), "set")]
    assert ev.none_pending(r)


def test_list_events(r, events):
    ev = events("Klg")
    r.lpush("{l}a", "x", "y")
    r.rpush("{l}a", "z")
    r.linsert("{l}a", "BEFORE", "z", "w")
    r.lset("{l}a", 0, "v")
    r.lrem("{l}a", 0, "nope")  # nothing removed: no event
    r.lrem("{l}a", 1, "w")
    r.ltrim("{l}a", 0, 1)
    r.lmove("{l}a", "{l}b", "LEFT", "RIGHT")
    r.rpop("{l}a")  # empties it
    r.lpop("{l}b")
    assert ev.read(12) == [(ks("{l}a"), "lpush"), (ks("{l}a"), "rpush"), (ks("{l}a"), "linsert"),
                           (ks("{l}a"), "lset"), (ks("{l}a"), "lrem"), (ks("{l}a"), "ltrim"),
                           (ks("{l}b"), "rpush"), (ks("{l}a"), "lpop"), (ks("{l}a"), "rpop"),
                           (ks("{l}a"), "del"), (ks("{l}b"), "lpop"), (ks("{l}b"), "del")]


def test_set_events(r, events):
    ev = events("Ksg")
    r.sadd("{t}a", "1", "2", "3")
    r.sadd("{t}a", "1")  # nothing added
    r.srem("{t}a", "9")  # nothing removed
    r.srem("{t}a", "1")
    r.smove("{t}a", "{t}b", "2")
    r.sinterstore("{t}c", ["{t}a", "{t}b"])  # empty result, no key: nothing
    r.sunionstore("{t}c", ["{t}a", "{t}b"])
    r.spop("{t}a")
    r.sdiffstore("{t}c", ["{t}a", "{t}b"])  # empty: deletes c
    assert ev.read(8) == [(ks("{t}a"), "sadd"), (ks("{t}a"), "srem"), (ks("{t}a"), "srem"),
                          (ks("{t}b"), "sadd"), (ks("{t}c"), "sunionstore"), (ks("{t}a"), "spop"),
                          (ks("{t}a"), "del"), (ks("{t}c"), "del")]


def test_hash_events(r, events):
    ev = events("Khg")
    r.hset("{h}a", mapping={"f": "1", "g": "2"})
    r.hsetnx("{h}a", "f", "9")  # exists: nothing
    r.hincrby("{h}a", "f", 10)
    r.hincrbyfloat("{h}a", "f", 0.5)
    r.hdel("{h}a", "nope")
    r.hdel("{h}a", "f", "g")
    assert ev.read(5) == [(ks("{h}a"), "hset"), (ks("{h}a"), "hincrby"), (ks("{h}a"), "hincrbyfloat"),
                          (ks("{h}a"), "hdel"), (ks("{h}a"), "del")]


def test_zset_events(r, events):
    ev = events("Kzg")
    r.zadd("{z}a", {"a": 1, "b": 2, "c": 3, "d": 4})
    r.zadd("{z}a", {"a": 1})  # no change
    r.zincrby("{z}a", 1, "a")
    r.zrem("{z}a", "x")
    r.zrem("{z}a", "b")
    r.zremrangebyscore("{z}a", 4, 4)
    r.zpopmin("{z}a")
    r.zunionstore("{z}b", ["{z}a"])
    r.zpopmax("{z}a")
    assert ev.read(8) == [(ks("{z}a"), "zadd"), (ks("{z}a"), "zincr"), (ks("{z}a"), "zrem"),
                          (ks("{z}a"), "zremrangebyscore"), (ks("{z}a"), "zpopmin"),
                          (ks("{z}b"), "zunionstore"), (ks("{z}a"), "zpopmax"), (ks("{z}a"), "del")]


def test_stream_events(r, events):
    ev = events("Kt")
    r.execute_command("XGROUP", "CREATE", "st", "grp", "$", "MKSTREAM")
    r.execute_command("XGROUP", "CREATECONSUMER", "st", "grp", "Bob")
    sid = r.execute_command("XADD", "st", "1", "f", "A")
    r.execute_command("XREADGROUP", "GROUP", "grp", "Alice", "STREAMS", "st", ">")
    r.execute_command("XCLAIM", "st", "grp", "Mike", "0", sid, "FORCE")
    r.execute_command("XGROUP", "DELCONSUMER", "st", "grp", "Lee")  # no such consumer: nothing
    r.execute_command("XAUTOCLAIM", "st", "grp", "Bob", "0", sid)  # Bob exists: nothing
    r.execute_command("XGROUP", "DELCONSUMER", "st", "grp", "Bob")
    r.execute_command("XADD", "st", "MAXLEN", "0", "*", "f", "B")
    r.execute_command("XDEL", "st", "9-9")  # nothing deleted
    r.execute_command("XSETID", "st", "99-0")
    assert ev.read(9) == [(ks("st"), "xgroup-create"), (ks("st"), "xgroup-createconsumer"), (ks("st"), "xadd"),
                          (ks("st"), "xgroup-createconsumer"), (ks("st"), "xgroup-createconsumer"),
                          (ks("st"), "xgroup-delconsumer"), (ks("st"), "xadd"), (ks("st"), "xtrim"),
                          (ks("st"), "xsetid")]


def test_expired_lazy_and_active(r, events):
    ev = events("Ex")
    r.psetex("lazy", 1, "v")
    time.sleep(0.01)
    assert r.get("lazy") is None  # found expired on access
    assert ev.read(1) == [(ke("expired"), "lazy")]
    r.psetex("active", 50, "v")
    assert ev.read(1) == [(ke("expired"), "active")]  # the expire cycle finds it


def test_new_and_keymiss(r, events):
    ev = events("Enm")
    r.set("{n}foo", "bar")
    r.set("{n}foo", "baz")  # not new
    r.get("{n}nope")
    r.set("{n}bar", "bar")
    assert ev.read(3) == [(ke("new"), "{n}foo"), (ke("keymiss"), "{n}nope"), (ke("new"), "{n}bar")]


def test_notifications_reach_every_shard(server, r, events):
    """Subscribers on every shard get the events of keys on every shard."""
    ev = events("E$", "__keyevent@0__:set")
    others = []
    try:
        for _ in range(6):
            c = RawConn(server)
            c.call("SUBSCRIBE", "__keyevent@0__:set")
            others.append(c)
        keys = ["k%d" % i for i in range(20)]
        for k in keys:
            r.set(k, "v")
        assert sorted(v for _, v in ev.read(20)) == sorted(keys)
        for c in others:
            got = [plain(c.read())[2].decode() for _ in range(20)]
            assert sorted(got) == sorted(keys)
    finally:
        for c in others:
            c.close()
