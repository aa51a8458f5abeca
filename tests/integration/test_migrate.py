"""MIGRATE: keys moved to another server as DUMP/RESTORE, with Redis 7.0's
replies and errors. The source is the target under test; the destination is
a second server of the same kind, or redis-server (shoal -> redis-server),
and redis-server sends to a server of the target's kind (redis-server ->
shoal)."""
import socket
import threading

import pytest
import redis

from helpers import Server, free_port, shard_of


@pytest.fixture
def dest(spawn):
    s = spawn()
    c = s.new_client()
    yield s, c
    c.close()


@pytest.fixture
def redis_server():
    s = Server("redis")
    s.start()
    yield s
    s.stop()


def migrate(c, s, key, db, *opts, timeout=5000):
    return c.execute_command("MIGRATE", s.host, s.port, key, db, timeout, *opts)


def err_of(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


# ---- values of every type ----

def fill(c):
    c.set("str", "hello")
    c.set("int", 12345)
    c.set("big", "x" * 200000)
    c.rpush("list", "a", "b", "c", 1, 2)
    c.rpush("biglist", *["item-%d" % i for i in range(2000)])
    c.hset("hash", mapping={"f1": "v1", "f2": 2})
    c.hset("bighash", mapping={"field-%d" % i: "v" * (i % 70) for i in range(600)})
    c.sadd("intset", 1, 2, 3, 100000)
    c.sadd("set", *["m%d" % i for i in range(700)])
    c.zadd("zset", {"a": 1, "b": 2.5, "c": -3})
    c.zadd("bigzset", {"member-%d" % i: i / 3 for i in range(300)})
    for i in range(50):
        c.xadd("stream", {"f": i, "g": "v%d" % i}, id="%d-1" % (i + 1))
    c.xgroup_create("stream", "grp", id="0")
    c.xreadgroup("grp", "alice", {"stream": ">"}, count=5)
    c.pfadd("hll", *["e%d" % i for i in range(100)])
    c.pfadd("hlldense", *["e%d" % i for i in range(20000)])


TYPED_KEYS = ["str", "int", "big", "list", "biglist", "hash", "bighash", "intset", "set", "zset", "bigzset",
              "stream", "hll", "hlldense"]


def value(c, key):
    t = c.type(key).decode()
    if t == "string":
        n = c.pfcount(key) if key.startswith("hll") else None  # first: it caches the count in the value
        v = (c.get(key), n)
    elif t == "list":
        v = c.lrange(key, 0, -1)
    elif t == "hash":
        v = sorted(c.hgetall(key).items())
    elif t == "set":
        v = sorted(c.smembers(key))
    elif t == "zset":
        v = c.zrange(key, 0, -1, withscores=True)
    elif t == "stream":
        groups = [(g["name"], g["last-delivered-id"], g["pending"]) for g in c.xinfo_groups(key)]
        v = (c.xrange(key), groups, c.xpending(key, "grp")["pending"])
    else:
        v = None
    return t, v


def check_moved(src, dst, keys, copy=False):
    for k in keys:
        assert value(dst, k) == value_before[k], k
        assert src.exists(k) == (1 if copy else 0), k


value_before = {}


def snapshot(c, keys):
    value_before.clear()
    for k in keys:
        value_before[k] = value(c, k)
        assert value_before[k][1] is not None


# ---- the basic forms ----

def test_single_key(r, dest):
    s, d = dest
    r.set("key", "Some Value")
    assert migrate(r, s, "key", 0) == b"OK"
    assert r.exists("key") == 0
    assert d.get("key") == b"Some Value"
    assert d.ttl("key") == -1


def test_every_type(r, dest):
    s, d = dest
    fill(r)
    snapshot(r, TYPED_KEYS)
    for k in TYPED_KEYS:
        assert migrate(r, s, k, 0) == b"OK", k
    check_moved(r, d, TYPED_KEYS)


def test_keys_on_several_shards(r, dest, target):
    s, d = dest
    names = ["key:%d" % i for i in range(20)]
    assert len({shard_of(k) for k in names}) > 1
    for i, k in enumerate(names):
        r.set(k, "v%d" % i)
    assert migrate(r, s, "", 0, "KEYS", *names) == b"OK"
    assert r.exists(*names) == 0
    assert d.mget(names) == [b"v%d" % i for i in range(20)]


def test_keys_of_every_type_at_once(r, dest):
    s, d = dest
    fill(r)
    snapshot(r, TYPED_KEYS)
    assert migrate(r, s, "", 0, "KEYS", *TYPED_KEYS) == b"OK"
    check_moved(r, d, TYPED_KEYS)


def test_copy(r, dest):
    s, d = dest
    r.rpush("list", "a", "b", "c", "d")
    assert migrate(r, s, "list", 0, "COPY") == b"OK"
    assert r.lrange("list", 0, -1) == [b"a", b"b", b"c", b"d"]
    assert d.lrange("list", 0, -1) == [b"a", b"b", b"c", b"d"]
    names = ["c:%d" % i for i in range(10)]
    for k in names:
        r.set(k, k)
    assert migrate(r, s, "", 0, "COPY", "KEYS", *names) == b"OK"
    assert r.exists(*names) == 10
    assert d.mget(names) == [k.encode() for k in names]


def test_busykey_and_replace(r, dest):
    s, d = dest
    r.set("key", "new")
    d.set("key", "old")
    e = err_of(r, "MIGRATE", s.host, s.port, "key", 0, 5000)
    assert e == "Target instance replied with error: BUSYKEY Target key name already exists."
    assert r.get("key") == b"new" and d.get("key") == b"old"
    assert migrate(r, s, "key", 0, "REPLACE") == b"OK"
    assert r.exists("key") == 0 and d.get("key") == b"new"
    r.set("key", "newer")
    assert migrate(r, s, "key", 0, "COPY", "REPLACE") == b"OK"
    assert r.get("key") == b"newer" and d.get("key") == b"newer"


def test_busykey_deletes_only_acknowledged_keys(r, dest):
    """Redis's unit/dump case: two keys busy on the target, the other
    keys (on any shard) move."""
    s, d = dest
    names = list("abcdefghilmnopq")
    r.mset({k: i for i, k in enumerate(names)})
    d.mset({"c": "_", "d": "_"})
    e = err_of(r, "MIGRATE", s.host, s.port, "", 0, 5000, "KEYS", *names)
    assert e == "Target instance replied with error: BUSYKEY Target key name already exists."
    assert r.dbsize() == 2 and r.exists("c", "d") == 2
    assert d.dbsize() == 15
    assert d.mget("c", "d") == [b"_", b"_"]


def test_ttl_is_carried(r, dest):
    s, d = dest
    r.set("vol", "x", px=100000)
    r.set("keep", "y")
    assert migrate(r, s, "", 0, "KEYS", "vol", "keep") == b"OK"
    assert 0 < d.pttl("vol") <= 100000
    assert d.ttl("keep") == -1


def test_nokey(r, dest):
    s, d = dest
    assert migrate(r, s, "missing", 0) == b"NOKEY"
    assert migrate(r, s, "", 0, "KEYS", "nokey-1", "nokey-2", "nokey-2") == b"NOKEY"
    assert migrate(r, s, "", 0, "KEYS") == b"NOKEY"
    # no key: nothing is sent, not even to a port where nobody listens
    assert r.execute_command("MIGRATE", "127.0.0.1", free_port(), "missing", 0, 1000) == b"NOKEY"
    assert d.dbsize() == 0


def test_missing_keys_mixed_with_present(r, dest):
    s, d = dest
    r.mset({"key1": "v1", "key2": "v2", "key3": "v3"})
    assert migrate(r, s, "", 0, "KEYS", "nokey-1", "key1", "nokey-2", "key2", "nokey-3", "key3") == b"OK"
    assert r.exists("key1", "key2", "key3") == 0
    assert d.mget("key1", "key2", "key3") == [b"v1", b"v2", b"v3"]
    assert d.exists("nokey-1", "nokey-2", "nokey-3") == 0


def test_destination_db(r, dest):
    s, d = dest
    r.set("key", "v")
    assert migrate(r, s, "key", 9) == b"OK"
    assert d.exists("key") == 0
    d.execute_command("SELECT", 9)
    assert d.get("key") == b"v"
    # the connection is cached with db 9 selected: back to db 0 selects again
    r.set("key2", "w")
    assert migrate(r, s, "key2", 0) == b"OK"
    assert d.exists("key2") == 0
    d.execute_command("SELECT", 0)
    assert d.get("key2") == b"w"
    r.set("key3", "z")
    e = err_of(r, "MIGRATE", s.host, s.port, "key3", 16, 5000)
    assert e == "Target instance replied with error: ERR DB index is out of range"
    assert r.get("key3") == b"z"


def test_auth_and_auth2(r, dest):
    """The keys share a hash tag: one shard's cached connection serves them
    all, as redis-server's one cache does (its login outlives a MIGRATE)."""
    s, d = dest
    d.config_set("requirepass", "foobar")
    d.execute_command("AUTH", "foobar")
    d.execute_command("ACL", "SETUSER", "mover", "on", ">moverpw", "~*", "+@all")
    r.lpush("{m}list", "a", "b", "c", "d")
    e = err_of(r, "MIGRATE", s.host, s.port, "{m}list", 0, 5000)
    assert e == "Target instance replied with error: NOAUTH Authentication required."
    e = err_of(r, "MIGRATE", s.host, s.port, "{m}list", 0, 5000, "AUTH", "wrong")
    assert e == "Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled."
    assert r.exists("{m}list") == 1 and d.exists("{m}list") == 0
    assert migrate(r, s, "{m}list", 0, "AUTH", "foobar") == b"OK"
    assert r.exists("{m}list") == 0 and d.lrange("{m}list", 0, -1) == [b"d", b"c", b"b", b"a"]
    r.set("{m}k2", "v2")
    assert migrate(r, s, "{m}k2", 0, "AUTH2", "mover", "moverpw") == b"OK"
    assert d.get("{m}k2") == b"v2" and r.exists("{m}k2") == 0
    # a failed AUTH fails every key, even when the connection's earlier
    # login let the RESTORE through: the key stays here too
    r.set("{m}k3", "v3")
    e = err_of(r, "MIGRATE", s.host, s.port, "", 0, 5000, "AUTH2", "mover", "nope", "KEYS", "{m}k3")
    assert e.startswith("Target instance replied with error: WRONGPASS")
    assert r.get("{m}k3") == b"v3" and d.get("{m}k3") == b"v3"
    assert migrate(r, s, "", 0, "AUTH2", "default", "foobar", "REPLACE", "KEYS", "{m}k3") == b"OK"
    assert d.get("{m}k3") == b"v3" and r.exists("{m}k3") == 0


def test_auth_to_a_server_without_password_keeps_the_key(r, dest):
    """Redis counts a failed AUTH against every key: the RESTORE went
    through, but the key is not deleted here."""
    s, d = dest
    r.set("key", "v")
    e = err_of(r, "MIGRATE", s.host, s.port, "key", 0, 5000, "AUTH", "x")
    assert e.startswith("Target instance replied with error: ERR AUTH <password> called without any password")
    assert r.get("key") == b"v" and d.get("key") == b"v"


def test_closed_port_and_bad_addresses(r):
    r.set("key", "v")
    port = free_port()  # nobody listens there
    e = err_of(r, "MIGRATE", "127.0.0.1", port, "key", 0, 1000)
    assert e == "IOERR error or timeout writing to target instance"
    e = err_of(r, "MIGRATE", "127.0.0.1", -1, "key", 0, 1000)
    assert e == "IOERR error or timeout connecting to the client"
    e = err_of(r, "MIGRATE", "", port, "key", 0, 1000)
    assert e == "IOERR error or timeout connecting to the client"
    assert r.get("key") == b"v"


def test_wrong_argument_forms(r):
    r.set("key", "v")
    h, p = "127.0.0.1", free_port()
    syntax = "syntax error"
    assert err_of(r, "MIGRATE", h, p, "key", 0, 1000, "bogus") == syntax
    assert err_of(r, "MIGRATE", h, p, "key", 0, 1000, "AUTH") == syntax
    assert err_of(r, "MIGRATE", h, p, "key", 0, 1000, "AUTH2", "user") == syntax
    assert err_of(r, "MIGRATE", h, p, "key", 0, 1000, "COPY", "REPLACE", "AUTH2") == syntax
    keys_err = "When using MIGRATE KEYS option, the key argument must be set to the empty string"
    assert err_of(r, "MIGRATE", h, p, "key", 0, 1000, "KEYS", "a", "b") == keys_err
    assert err_of(r, "MIGRATE", h, p, "NotEmpty", 9, 5000, "keys", "a", "b", "c") == keys_err
    notint = "value is not an integer or out of range"
    assert err_of(r, "MIGRATE", h, p, "key", "x", 1000) == notint
    assert err_of(r, "MIGRATE", h, p, "key", 0, "y") == notint
    assert err_of(r, "MIGRATE", h, p, "key", 0, "1.5") == notint
    assert err_of(r, "MIGRATE", h, p, "key", 0) == "wrong number of arguments for 'migrate' command"
    # the options are checked before the numbers
    assert err_of(r, "MIGRATE", h, p, "key", "x", "y", "bogus") == syntax
    assert r.get("key") == b"v"


def raw(r, *args):
    """The reply as it is (redis-py turns COMMAND replies into dicts)."""
    conn = r.connection_pool.get_connection(args[0])
    try:
        conn.send_command(*args)
        return conn.read_response()
    finally:
        r.connection_pool.release(conn)


def test_command_info_and_getkeys(r):
    info = raw(r, "COMMAND", "INFO", "migrate")[0]
    assert info[1] == -6
    assert sorted(info[2]) == [b"movablekeys", b"write"]
    assert info[3:6] == [3, 3, 1]
    assert sorted(info[6]) == [b"@dangerous", b"@keyspace", b"@slow", b"@write"]
    specs = info[8]
    assert len(specs) == 2

    def gk(*args):
        return raw(r, "COMMAND", "GETKEYS", "MIGRATE", "h", "1", *args)

    assert gk("key", 0, 0) == [b"key"]
    assert gk("", 0, 0, "KEYS", "a", "b") == [b"a", b"b"]
    assert gk("", 0, 0, "AUTH", "keys", "KEYS", "a", "b") == [b"a", b"b"]
    assert gk("", 0, 0, "AUTH2", "keys", "keys", "KEYS", "a") == [b"a"]
    assert gk("", 0, 0, "KEYS") == [b""]
    assert gk("key", 0, 0, "COPY") == [b"key"]
    with pytest.raises(redis.ResponseError):
        gk("key", 0, 0, "KEYS", "a", "b")


def test_info_counts_cached_connections(r, dest):
    s, d = dest
    r.set("key", "v")
    before = r.info("stats")["migrate_cached_sockets"]
    assert migrate(r, s, "key", 9) == b"OK"
    assert r.info("stats")["migrate_cached_sockets"] == before + 1


def test_large_values(r, dest):
    s, d = dest
    r.set("huge", b"\xff" * (3 << 20))
    r.rpush("longlist", *range(20000))
    assert migrate(r, s, "", 0, "KEYS", "huge", "longlist") == b"OK"
    assert d.strlen("huge") == 3 << 20 and d.get("huge") == b"\xff" * (3 << 20)
    assert d.llen("longlist") == 20000 and d.lindex("longlist", -1) == b"19999"


# ---- across kinds of servers ----

def test_to_redis_server(r, redis_server):
    d = redis_server.new_client()
    fill(r)
    snapshot(r, TYPED_KEYS)
    assert migrate(r, redis_server, "", 3, "KEYS", *TYPED_KEYS) == b"OK"
    d.execute_command("SELECT", 3)
    check_moved(r, d, TYPED_KEYS)
    d.close()


def test_from_redis_server(server, r, redis_server):
    src = redis_server.new_client()
    fill(src)
    snapshot(src, TYPED_KEYS)
    assert migrate(src, server, "", 0, "KEYS", *TYPED_KEYS) == b"OK"
    check_moved(src, r, TYPED_KEYS)
    src.close()


# ---- targets that do not answer as they should ----

class FakeTarget:
    """A listener that accepts and then answers `reply` once (None: reads
    and never answers, b"": closes at once)."""

    def __init__(self, reply):
        self.reply = reply
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.conns.append(c)
            if self.reply == b"":
                c.close()
            elif self.reply is not None:
                c.settimeout(2)
                try:
                    c.recv(65536)
                    c.sendall(self.reply)
                except OSError:
                    pass

    def close(self):
        self.stop = True
        self.thread.join(5)
        for c in self.conns:
            c.close()
        self.sock.close()


def error_from_fake_target(r, reply, timeout):
    """MIGRATE of a key to a FakeTarget: the error; the key stays here."""
    t = FakeTarget(reply)
    try:
        r.set("key", "v")
        e = err_of(r, "MIGRATE", "127.0.0.1", t.port, "key", 0, timeout)
        assert r.get("key") == b"v"
        return e
    finally:
        t.close()


def test_silent_target_times_out(r):
    assert error_from_fake_target(r, None, 300) == "IOERR error or timeout reading to target instance"


def test_target_that_closes(r):
    assert error_from_fake_target(r, b"", 1000).startswith("IOERR error or timeout")


@pytest.mark.parametrize("garbage", [b"HTTP/1.1 400 Bad Request\r\n\r\n", b"x" * 5000, b":1\r\n"])
def test_garbage_target_is_an_error(r, target, garbage):
    if target == "redis":
        pytest.skip("departure: redis-server takes any reply line not starting with '-' for success")
    assert error_from_fake_target(r, garbage, 500) == "IOERR error or timeout reading to target instance"


def test_aof_logs_the_moved_keys_as_del(spawn, dest):
    """With the AOF on (keys on several shards then run holding their
    shards), the moved keys reach the log as DEL: a reload keeps them gone
    and keeps what COPY left and what was not moved."""
    s, d = dest
    src_server = spawn("--appendonly", "yes", "--enable-debug-command", "yes")
    src = src_server.new_client()
    names = ["key:%d" % i for i in range(12)]
    src.mset({k: k for k in names})
    src.set("stay", "here")
    d.set("key:3", "busy")
    e = err_of(src, "MIGRATE", s.host, s.port, "", 0, 5000, "KEYS", *names)
    assert e == "Target instance replied with error: BUSYKEY Target key name already exists."
    src.set("copied", "c")
    assert migrate(src, s, "copied", 0, "COPY") == b"OK"
    assert src.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert sorted(src.keys("*")) == [b"copied", b"key:3", b"stay"]
    assert d.dbsize() == 13
    src.close()
