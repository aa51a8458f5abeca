"""Pub/Sub: SUBSCRIBE PSUBSCRIBE SSUBSCRIBE and their UNSUBSCRIBEs, PUBLISH,
SPUBLISH, PUBSUB, RESP2 subscribed mode, RESP3 push messages, RESET, output
buffer limits of subscribers, and the INFO / CLIENT LIST fields.

Subscribers are opened many at a time so that at --threads 4 they land on
every shard (the kernel spreads new connections over the shards' accept
queues); publishers too. Replies are read with RawConn, which shows the
RESP types ('>' push frames in RESP3)."""
import socket
import time

import pytest
import redis

from test_connection import RawConn, plain


def sub_conn(server, cmd, *names, resp=2):
    c = RawConn(server)
    if resp == 3:
        c.call("HELLO", "3")
    c.send(cmd, *names)
    got = [plain(c.read()) for _ in names]
    return c, got


def msg(kind, *parts):
    return [kind.encode()] + [p if isinstance(p, (bytes, int)) else p.encode() for p in parts]


@pytest.fixture
def subs(server, r):
    opened = []

    def make(cmd, *names, resp=2):
        c, got = sub_conn(server, cmd, *names, resp=resp)
        opened.append(c)
        return c, got

    yield make
    for c in opened:
        c.close()


def test_subscribe_publish_basics(r, subs):
    c, got = subs("SUBSCRIBE", "chan1", "chan2")
    assert got == [msg("subscribe", "chan1", 1), msg("subscribe", "chan2", 2)]
    assert r.publish("chan1", "hello") == 1
    assert r.publish("chan2", "world") == 1
    assert plain(c.read()) == msg("message", "chan1", "hello")
    assert plain(c.read()) == msg("message", "chan2", "world")
    assert plain(c.call("UNSUBSCRIBE", "chan1")) == msg("unsubscribe", "chan1", 1)
    assert r.publish("chan1", "hello") == 0
    assert r.publish("chan2", "again") == 1
    assert plain(c.read()) == msg("message", "chan2", "again")
    assert plain(c.call("UNSUBSCRIBE")) == msg("unsubscribe", "chan2", 0)
    assert r.publish("chan2", "x") == 0
    # nothing subscribed: one reply with a null name
    assert c.call("UNSUBSCRIBE") == ("*", [("$", b"unsubscribe"), ("$", None), (":", 0)])
    assert c.call("PUNSUBSCRIBE") == ("*", [("$", b"punsubscribe"), ("$", None), (":", 0)])
    assert c.call("SUNSUBSCRIBE") == ("*", [("$", b"sunsubscribe"), ("$", None), (":", 0)])
    # back to normal mode
    assert c.call("SET", "k", "v") == ("+", "OK")


def test_subscribe_twice_and_unsubscribe_unknown(r, subs):
    c, got = subs("SUBSCRIBE", "a", "a", "a")
    assert got == [msg("subscribe", "a", 1)] * 3
    assert r.publish("a", "m") == 1
    assert plain(c.read()) == msg("message", "a", "m")
    c2, got = subs("UNSUBSCRIBE", "x", "y")
    assert got == [msg("unsubscribe", "x", 0), msg("unsubscribe", "y", 0)]


def test_subscribers_on_every_shard_are_counted_and_reached(server, r, subs):
    conns = [subs("SUBSCRIBE", "news")[0] for _ in range(12)]
    pats = [subs("PSUBSCRIBE", "ne*")[0] for _ in range(5)]
    publishers = [server.new_client() for _ in range(4)]
    try:
        for i, p in enumerate(publishers):
            assert p.publish("news", "m%d" % i) == 17
        for c in conns:
            for i in range(4):
                assert plain(c.read()) == msg("message", "news", "m%d" % i)
        for c in pats:
            for i in range(4):
                assert plain(c.read()) == msg("pmessage", "ne*", "news", "m%d" % i)
        assert r.execute_command("PUBSUB", "NUMSUB", "news", "other") == [b"news", 12, b"other", 0]
        assert r.execute_command("PUBSUB", "NUMPAT") == 1
    finally:
        for p in publishers:
            p.close()


def test_order_per_publisher(server, r, subs):
    """Several publishers, each on its own connection, publish numbered
    messages; every subscriber sees each publisher's messages in order."""
    subscribers = [subs("SUBSCRIBE", "seq")[0] for _ in range(6)]
    psubscribers = [subs("PSUBSCRIBE", "se?")[0] for _ in range(2)]
    pubs = [RawConn(server) for _ in range(4)]
    n = 300
    try:
        for k in range(n):  # interleaved, pipelined: no waiting for replies
            for i, p in enumerate(pubs):
                p.send("PUBLISH", "seq", "%d:%d" % (i, k))
        for p in pubs:
            counts = [plain(p.read()) for _ in range(n)]
            assert counts == [8] * n
        for c in subscribers + psubscribers:
            last = [-1] * len(pubs)
            for _ in range(n * len(pubs)):
                m = plain(c.read())
                i, k = map(int, m[-1].split(b":"))
                assert k == last[i] + 1
                last[i] = k
            assert last == [n - 1] * len(pubs)
    finally:
        for p in pubs:
            p.close()


def test_psubscribe(r, subs):
    c, got = subs("PSUBSCRIBE", "foo.*", "bar.*")
    assert got == [msg("psubscribe", "foo.*", 1), msg("psubscribe", "bar.*", 2)]
    assert r.publish("foo.1", "hello") == 1
    assert r.publish("bar.1", "hello") == 1
    assert r.publish("foo1", "hello") == 0
    assert r.publish("barfoo.1", "hello") == 0
    assert plain(c.read()) == msg("pmessage", "foo.*", "foo.1", "hello")
    assert plain(c.read()) == msg("pmessage", "bar.*", "bar.1", "hello")
    assert plain(c.call("PUNSUBSCRIBE", "foo.*")) == msg("punsubscribe", "foo.*", 1)
    assert r.publish("foo.1", "x") == 0
    c.send("PUNSUBSCRIBE")
    assert plain(c.read()) == msg("punsubscribe", "bar.*", 0)
    assert r.publish("bar.1", "x") == 0


def test_mixed_channel_and_pattern_count(r, subs):
    c, got = subs("SUBSCRIBE", "foo.bar")
    assert got == [msg("subscribe", "foo.bar", 1)]
    assert plain(c.call("PSUBSCRIBE", "foo.*")) == msg("psubscribe", "foo.*", 2)
    assert plain(c.call("SSUBSCRIBE", "s1")) == msg("ssubscribe", "s1", 1)
    assert r.publish("foo.bar", "hi") == 2
    assert plain(c.read()) == msg("message", "foo.bar", "hi")
    assert plain(c.read()) == msg("pmessage", "foo.*", "foo.bar", "hi")
    assert r.execute_command("SPUBLISH", "s1", "x") == 1
    assert plain(c.read()) == msg("smessage", "s1", "x")
    # a shard channel is not a channel
    assert r.publish("s1", "y") == 0
    assert r.execute_command("SPUBLISH", "foo.bar", "y") == 0
    assert plain(c.call("SUNSUBSCRIBE", "s1")) == msg("sunsubscribe", "s1", 0)
    assert plain(c.call("PING")) == [b"pong", b""]  # still subscribed to two


def test_resp2_subscribed_mode(subs):
    c, _ = subs("SUBSCRIBE", "ch")
    t, e = c.call("GET", "k")
    assert t == "-"
    assert e == ("ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
                 "are allowed in this context")
    t, e = c.call("CLIENT", "ID")
    assert "'client|id'" in e
    assert plain(c.call("PING")) == [b"pong", b""]
    assert plain(c.call("PING", "foo")) == [b"pong", b"foo"]
    assert plain(c.call("UNSUBSCRIBE", "ch")) == msg("unsubscribe", "ch", 0)
    assert c.call("PING") == ("+", "PONG")


def test_resp2_subscribed_mode_refusal_dooms_multi(subs):
    c, _ = subs("PSUBSCRIBE", "p*")
    assert c.call("MULTI")[0] == "-"  # refused like any other command


def test_resp3_push_and_commands_while_subscribed(r, subs):
    c, got = subs("SUBSCRIBE", "ch", resp=3)
    assert got == [msg("subscribe", "ch", 1)]
    c.send("SET", "k", "v")
    assert c.read() == ("+", "OK")
    assert r.publish("ch", "hello") == 1
    assert c.read() == (">", [("$", b"message"), ("$", b"ch"), ("$", b"hello")])
    assert c.call("GET", "k") == ("$", b"v")
    assert c.call("PING") == ("+", "PONG")
    assert c.call("UNSUBSCRIBE", "ch") == (">", [("$", b"unsubscribe"), ("$", b"ch"), (":", 0)])
    assert c.call("UNSUBSCRIBE") == (">", [("$", b"unsubscribe"), ("_", None), (":", 0)])


def test_confirmations_with_client_reply_off(server, r):
    c = RawConn(server)
    try:
        c.call("HELLO", "3")
        c.send("CLIENT", "REPLY", "OFF")
        assert plain(c.call("SUBSCRIBE", "channel")) == msg("subscribe", "channel", 1)
        assert plain(c.call("PSUBSCRIBE", "ch*")) == msg("psubscribe", "ch*", 2)
        assert r.publish("channel", "hello") == 2
        assert plain(c.read()) == msg("message", "channel", "hello")
        assert plain(c.read()) == msg("pmessage", "ch*", "channel", "hello")
        assert plain(c.call("UNSUBSCRIBE", "channel")) == msg("unsubscribe", "channel", 1)
        c.send("GET", "k")  # its reply is off
        assert plain(c.call("PUNSUBSCRIBE", "ch*")) == msg("punsubscribe", "ch*", 0)
    finally:
        c.close()


def test_reset_leaves_subscriptions(r, subs):
    c, _ = subs("SUBSCRIBE", "a", "b")
    c.call("PSUBSCRIBE", "p*")
    c.call("SSUBSCRIBE", "s")
    assert c.call("RESET") == ("+", "RESET")
    assert r.publish("a", "x") == 0
    assert r.publish("pz", "x") == 0
    assert r.execute_command("SPUBLISH", "s", "x") == 0
    assert r.execute_command("PUBSUB", "NUMPAT") == 0
    assert c.call("GET", "k") == ("$", None)


def test_pubsub_introspection(r, subs):
    subs("SUBSCRIBE", "c1", "c2", "other")
    subs("SUBSCRIBE", "c1")
    subs("PSUBSCRIBE", "foo*", "bar*")
    subs("PSUBSCRIBE", "foo*", "baz*")
    subs("SSUBSCRIBE", "s1", "s2")
    assert sorted(r.execute_command("PUBSUB", "CHANNELS")) == [b"c1", b"c2", b"other"]
    assert sorted(r.execute_command("PUBSUB", "CHANNELS", "c*")) == [b"c1", b"c2"]
    assert r.execute_command("PUBSUB", "CHANNELS", "zz*") == []
    assert r.execute_command("PUBSUB", "NUMSUB", "c1", "c2", "nope") == [b"c1", 2, b"c2", 1, b"nope", 0]
    assert r.execute_command("PUBSUB", "NUMSUB") == []
    assert r.execute_command("PUBSUB", "NUMPAT") == 3
    assert sorted(r.execute_command("PUBSUB", "SHARDCHANNELS")) == [b"s1", b"s2"]
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "s1", "c1") == [b"s1", 1, b"c1", 0]
    info = r.info("stats")
    assert (info["pubsub_channels"], info["pubsub_patterns"], info["pubsubshard_channels"]) == (3, 3, 2)
    help_ = r.execute_command("PUBSUB", "HELP")
    assert help_[0].startswith(b"PUBSUB <subcommand>") and len(help_) == 14
    with pytest.raises(redis.ResponseError, match="unknown subcommand or wrong number of arguments for 'CHANNELS'"):
        r.execute_command("PUBSUB", "CHANNELS", "a", "b")
    with pytest.raises(redis.ResponseError, match="unknown subcommand 'FOO'. Try PUBSUB HELP."):
        r.execute_command("PUBSUB", "FOO")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'subscribe'"):
        r.execute_command("SUBSCRIBE")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'publish'"):
        r.execute_command("PUBLISH", "a")


def test_client_list_fields(r, subs):
    c, _ = subs("SUBSCRIBE", "a", "b")
    c.call("PSUBSCRIBE", "p*")
    c.call("SSUBSCRIBE", "s1", "s2", "s3")
    lines = r.client_list()
    mine = [x for x in lines if x["cmd"] == "ssubscribe"]
    assert len(mine) == 1
    assert (mine[0]["flags"], mine[0]["sub"], mine[0]["psub"], mine[0]["ssub"]) == ("P", "2", "1", "3")
    me = [x for x in lines if x["cmd"] == "client|list"][0]
    assert me["flags"] == "N" and me["sub"] == "0"
    typed = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").decode()
    assert typed.count("\n") == 1 and "cmd=ssubscribe" in typed
    normal = r.execute_command("CLIENT", "LIST", "TYPE", "normal").decode()
    assert "cmd=ssubscribe" not in normal and "cmd=client|list" in normal


def test_closed_subscriber_is_forgotten(server, r):
    cs = [sub_conn(server, "SUBSCRIBE", "gone")[0] for _ in range(6)]
    assert r.publish("gone", "x") == 6
    for c in cs:
        c.close()
    deadline = time.time() + 5
    while time.time() < deadline and r.publish("gone", "x") != 0:
        time.sleep(0.01)
    assert r.publish("gone", "x") == 0
    assert r.execute_command("PUBSUB", "NUMSUB", "gone") == [b"gone", 0]


def test_slow_subscriber_disconnected_at_limit(server, r, subs):
    """A subscriber that stops reading is closed when its output passes the
    pubsub hard limit; the reading subscriber gets every message and the
    publisher never waits."""
    r.config_set("client-output-buffer-limit", "pubsub 1mb 0 0")
    try:
        slow = RawConn(server)
        slow.call("SUBSCRIBE", "flood")
        fast, _ = subs("SUBSCRIBE", "flood")
        payload = "x" * 65536
        sent = 0
        for i in range(400):  # at most 26 MB
            n = r.publish("flood", payload)
            sent += 1
            m = plain(fast.read())
            assert m == msg("message", "flood", payload)
            if n == 1:
                break
        assert n == 1, "the slow subscriber was never disconnected"
        assert slow.closed_within(5)
        assert r.execute_command("PUBSUB", "NUMSUB", "flood") == [b"flood", 1]
        assert r.publish("flood", "after") == 1
        assert plain(fast.read()) == msg("message", "flood", "after")
        slow.close()
    finally:
        r.config_set("client-output-buffer-limit", "pubsub 33554432 8388608 60")
