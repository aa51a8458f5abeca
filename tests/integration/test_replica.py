"""The replica side of replication: the target (shoal --threads 1, 4, or
redis-server 7.0) replicates from a redis-server 7.0 master that each test
starts on a port of its own.

Covered: the full sync of every type across databases, the command stream
after it (SET, EXPIRE, MULTI/EXEC, DEL, INCR, SELECT, lists, hashes, sorted
sets), REPLCONF GETACK (the master's WAIT counts the replica), read-only
refusals and MASTERDOWN, REPLICAOF NO ONE keeping the data, masterauth
wrong then right, the link dropping when the master is killed and coming
back when it restarts, expired keys left to the master's DEL, and the
replies and directives of REPLICAOF, ROLE, CONFIG and INFO replication.

Waits poll with a bounded deadline; none asserts on how long anything took."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest
import redis

from helpers import REDIS, free_port, wait_until


class Master:
    """A redis-server 7.0 master on a fixed port, restartable on it."""

    def __init__(self, *extra):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="shoal-master-")
        self.extra = list(extra)
        self.proc = None

    def start(self):
        argv = [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir, "--save", "",
                "--appendonly", "no", "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes",
                "--logfile", "master.log"] + self.extra
        self.proc = subprocess.Popen(argv, cwd=self.dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: self._pings(), "master to start")
        return self

    def _pings(self):
        try:
            c = redis.Redis(port=self.port, socket_timeout=1, password=self.password())
            ok = c.ping()
            c.close()
            return ok
        except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError):
            return False
        except redis.AuthenticationError:
            return True

    def password(self):
        if "--requirepass" in self.extra:
            return self.extra[self.extra.index("--requirepass") + 1]
        return None

    def client(self, **kw):
        return redis.Redis(port=self.port, socket_timeout=10, password=self.password(), **kw)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        self.proc = None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


def info_repl(c):
    return c.info("replication")


def link_up(c):
    return info_repl(c).get("master_link_status") == "up"


def link_down(c):
    return info_repl(c).get("master_link_status") == "down"


@pytest.fixture
def master():
    started = []

    def make(*extra):
        m = Master(*extra).start()
        started.append(m)
        return m

    yield make
    for m in started:
        m.stop()


def dump_db(c):
    """Every key of the selected database with its type, value and whether
    it has a deadline: what a replica must hold the same as its master."""
    out = {}
    for k in c.scan_iter(count=100):
        t = c.type(k)
        if t == b"string":
            v = c.get(k)
        elif t == b"list":
            v = c.lrange(k, 0, -1)
        elif t == b"hash":
            v = sorted(c.hgetall(k).items())
        elif t == b"set":
            v = sorted(c.smembers(k))
        elif t == b"zset":
            v = c.zrange(k, 0, -1, withscores=True)
        elif t == b"stream":
            v = c.xrange(k)
        else:
            v = None
        out[k] = (t, v, c.pttl(k) > 0)
    return out


def dump_all(port, dbs, password=None):
    res = {}
    for d in dbs:
        c = redis.Redis(port=port, db=d, socket_timeout=10, password=password)
        res[d] = dump_db(c)
        c.close()
    return res


def populate(m):
    """Keys of every type in databases 0, 3 and 9, small and large
    encodings, some with deadlines."""
    c0 = m.client()
    c0.set("str", "hello")
    c0.set("int", 12345)
    c0.set("big", "x" * 5000)
    c0.set("ttl", "v", ex=1000)
    c0.rpush("list", *[str(i) for i in range(10)])
    c0.rpush("biglist", *[str(i) * 20 for i in range(300)])
    c0.hset("hash", mapping={"a": "1", "b": "2"})
    c0.hset("bighash", mapping={"f%d" % i: "v" * 80 for i in range(200)})
    c0.sadd("intset", 1, 2, 3)
    c0.sadd("set", "a", "b", "c")
    c0.zadd("zset", {"a": 1, "b": 2.5})
    c0.zadd("bigzset", {"m%d" % i: i for i in range(200)})
    c0.xadd("stream", {"f": "v"})
    c0.pfadd("hll", "a", "b", "c")
    c3 = m.client(db=3)
    c3.set("k3", "v3")
    c3.lpush("l3", "x", "y")
    c9 = m.client(db=9)
    c9.hset("h9", "f", "v")
    c9.zadd("z9", {"q": 9})
    for c in (c0, c3, c9):
        c.close()


def start_replica(spawn, m, *extra):
    s = spawn(*extra)
    c = s.new_client()
    assert c.replicaof("127.0.0.1", m.port) == b"OK"
    return s, c


DBS = (0, 3, 5, 9)


def synced(s, m, password=None):
    """The master's WAIT counts the replica (its REPLCONF ACK), then the
    replica's data is the master's."""
    mc = m.client()
    assert mc.execute_command("WAIT", 1, 10000) == 1
    mc.close()
    want = dump_all(m.port, DBS, password)
    wait_until(lambda: dump_all(s.port, DBS) == want, "the replica's data to match the master's")
    return want


def test_full_sync_every_type(spawn, master):
    m = master()
    populate(m)
    s, c = start_replica(spawn, m)
    wait_until(lambda: link_up(c), "link up")
    want = synced(s, m)
    assert len(want[0]) == 14 and len(want[3]) == 2 and len(want[9]) == 2
    assert want[0][b"ttl"][2] is True  # the deadline came along
    assert c.pttl("ttl") > 0
    info = info_repl(c)
    assert info["role"] == "slave"
    assert info["master_host"] == "127.0.0.1" and info["master_port"] == m.port
    assert info["master_sync_in_progress"] == 0
    assert info["slave_read_only"] == 1 and info["slave_priority"] == 100
    assert info["connected_slaves"] == 0
    assert info["master_replid"] == info_repl(m.client())["master_replid"]
    log = s.read_log()
    assert "Connecting to MASTER 127.0.0.1:%d" % m.port in log
    assert "MASTER <-> REPLICA sync: Finished with success" in log


def test_stream_of_writes(spawn, master):
    m = master()
    s, c = start_replica(spawn, m)
    wait_until(lambda: link_up(c), "link up")
    mc = m.client()
    mc.set("a", 1)
    mc.incr("a")
    mc.incrby("a", 10)
    mc.set("gone", "x")
    mc.delete("gone")
    mc.set("e", "v")
    mc.expire("e", 500)
    mc.rpush("l", "1", "2", "3")
    mc.lpop("l")
    mc.hset("h", mapping={"f": "1", "g": "2"})
    mc.hincrby("h", "f", 5)
    mc.hdel("h", "g")
    mc.zadd("z", {"x": 1, "y": 2})
    mc.zincrby("z", 5, "x")
    mc.sadd("s", "m", "n")
    mc.srem("s", "m")
    p = mc.pipeline(transaction=True)
    p.set("t1", "a")
    p.set("t2", "b")
    p.incr("t3")
    p.lpush("tl", "q")
    p.execute()
    for d in (3, 5):
        cd = m.client(db=d)
        cd.set("k%d" % d, d)
        cd.rpush("l%d" % d, "x")
        p = cd.pipeline(transaction=True)
        p.incr("n%d" % d)
        p.hset("h%d" % d, "f", "v")
        p.execute()
        cd.close()
    mc.set("after", "select")  # db 0 again after the master's SELECTs
    want = synced(s, m)
    assert want[0][b"a"][1] == b"12" and want[0][b"e"][2] is True
    assert want[5][b"n5"][1] == b"1"
    assert c.get("after") == b"select"
    # the offsets the replica reports are the master's
    mo = info_repl(mc)["master_repl_offset"]
    wait_until(lambda: info_repl(c)["slave_repl_offset"] == mo, "offset to reach the master's")
    info = info_repl(c)
    assert info["slave_read_repl_offset"] == mo and info["master_repl_offset"] == mo
    role = c.execute_command("ROLE")
    assert role[:4] == [b"slave", b"127.0.0.1", m.port, b"connected"] and role[4] == mo
    mc.close()


def test_read_only_and_stale_data(spawn, master):
    m = master()
    m.client().set("k", "v")
    s, c = start_replica(spawn, m)
    wait_until(lambda: link_up(c), "link up")
    synced(s, m)
    with pytest.raises(redis.ReadOnlyError, match="You can't write against a read only replica."):
        c.set("x", 1)
    with pytest.raises(redis.ReadOnlyError):
        c.incr("k")
    one = s.new_client(single_connection_client=True)
    assert one.execute_command("MULTI") == b"OK"
    with pytest.raises(redis.ReadOnlyError):
        one.execute_command("SET", "x", 1)
    with pytest.raises(redis.exceptions.ExecAbortError, match="previous errors"):
        one.execute_command("EXEC")
    one.close()
    assert c.get("k") == b"v"
    assert c.config_set("replica-read-only", "no")
    assert info_repl(c)["slave_read_only"] == 0
    assert c.set("local", "w") is True
    assert c.config_get("slave-read-only") == {"slave-read-only": "no"}
    c.config_set("slave-read-only", "yes")
    # the link down under replica-serve-stale-data no: MASTERDOWN
    assert c.config_set("replica-serve-stale-data", "no")
    m.kill()
    wait_until(lambda: link_down(c), "link down")
    with pytest.raises(redis.ResponseError, match="MASTERDOWN Link with MASTER is down and "
                       "replica-serve-stale-data is set to 'no'."):
        c.get("k")
    assert c.execute_command("ROLE")[0] == b"slave"  # stale-ok commands still run
    assert c.config_set("replica-serve-stale-data", "yes")
    assert c.get("k") == b"v"
    assert info_repl(c)["master_link_down_since_seconds"] >= 0


def test_replicaof_no_one_keeps_data(spawn, master):
    m = master()
    populate(m)
    s, c = start_replica(spawn, m)
    wait_until(lambda: link_up(c), "link up")
    want = synced(s, m)
    assert c.replicaof("no", "one") == b"OK"
    assert c.execute_command("ROLE")[0] == b"master"
    assert info_repl(c)["role"] == "master"
    assert c.set("mine", "1") is True
    c.delete("mine")
    assert dump_all(s.port, DBS) == want
    # the old master's writes no longer arrive
    m.client().set("str", "changed")
    assert m.client().execute_command("WAIT", 1, 300) == 0
    assert c.get("str") == b"hello"
    assert c.config_get("replicaof") == {"replicaof": ""}


def test_masterauth_wrong_then_right(spawn, master):
    m = master("--requirepass", "s3cret")
    m.client().set("secret", "data")
    s = spawn("--masterauth", "wrong")
    c = s.new_client()
    c.replicaof("127.0.0.1", m.port)
    wait_until(lambda: "Unable to AUTH to MASTER" in s.read_log(), "the AUTH failure in the log")
    assert link_down(c)
    assert c.get("secret") is None
    assert c.config_set("masterauth", "s3cret")
    wait_until(lambda: link_up(c), "link up")
    wait_until(lambda: c.get("secret") == b"data", "the data")


def test_masteruser(spawn, master):
    m = master()
    mc = m.client()
    mc.execute_command("ACL", "SETUSER", "repl", "on", ">rpw", "+@all", "~*")
    mc.set("k", "v")
    s = spawn("--masteruser", "repl", "--masterauth", "rpw")
    c = s.new_client()
    c.replicaof("127.0.0.1", m.port)
    wait_until(lambda: link_up(c), "link up")
    wait_until(lambda: c.get("k") == b"v", "the data")


def test_link_drop_and_reconnect(spawn, master):
    m = master()
    m.client().set("before", "1")
    s, c = start_replica(spawn, m)
    wait_until(lambda: link_up(c), "link up")
    synced(s, m)
    m.kill()
    wait_until(lambda: link_down(c), "link down")
    assert c.get("before") == b"1"  # stale data is served by default
    assert c.execute_command("ROLE")[3] in (b"connect", b"connecting")
    m.start()  # empty: the full sync replaces the replica's data
    mc = m.client()
    mc.set("after", "2")
    wait_until(lambda: link_up(c), "link up again")
    synced(s, m)
    assert c.get("before") is None and c.get("after") == b"2"
    mc.rpush("l", "x")
    synced(s, m)
    assert "Connecting to MASTER" in s.read_log()


def test_expired_keys_wait_for_the_masters_del(spawn, master):
    m = master()
    mc = m.client()
    mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    s, c = start_replica(spawn, m)
    wait_until(lambda: link_up(c), "link up")
    mc.set("keep", "v")
    synced(s, m)
    mc.set("short", "v", px=200)  # (no SCAN on the master from here: it would expire the key there)
    assert mc.execute_command("WAIT", 1, 10000) == 1
    wait_until(lambda: c.dbsize() == 2, "the key on the replica")
    wait_until(lambda: c.pttl("short") == -2, "the key to pass its deadline")
    # reads report it missing, but the replica does not delete it
    assert c.get("short") is None and c.exists("short") == 0
    assert c.type("short") == b"none" and c.ttl("short") == -2
    assert c.keys("*") == [b"keep"]
    assert sorted(c.scan_iter()) == [b"keep"]
    assert c.dbsize() == 2
    # the master's lazy expiry sends DEL
    assert mc.get("short") is None
    assert mc.execute_command("WAIT", 1, 10000) == 1
    wait_until(lambda: c.dbsize() == 1, "the master's DEL")


def test_replicaof_replies_and_directives(spawn, master):
    m = master()
    s = spawn()
    c = s.new_client(decode_responses=True)
    assert c.execute_command("ROLE") == ["master", 0, []]
    assert c.config_get("replicaof") == {"replicaof": ""}
    for bad in ("abc", "-1", "65536"):
        with pytest.raises(redis.ResponseError, match="^Invalid master port$"):
            c.execute_command("REPLICAOF", "127.0.0.1", bad)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'replicaof' command"):
        c.execute_command("REPLICAOF", "127.0.0.1")
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        c.config_set("replicaof", "127.0.0.1 %d" % m.port)
    assert c.execute_command("REPLICAOF", "no", "one") == "OK"  # already a master
    assert c.execute_command("SLAVEOF", "127.0.0.1", str(m.port)) is True  # (redis-py reads +OK as True)
    assert c.execute_command("REPLICAOF", "127.0.0.1", str(m.port)) == "OK Already connected to specified master"
    assert c.config_get("replicaof") == {"replicaof": "127.0.0.1 %d" % m.port}
    assert c.config_get("slaveof") == {"slaveof": "127.0.0.1 %d" % m.port}
    wait_until(lambda: link_up(c), "link up")
    with pytest.raises(redis.ResponseError, match="argument\\(s\\) must be one of the following: "
                       "disabled, on-empty-db, swapdb"):
        c.config_set("repl-diskless-load", "foo")
    assert c.config_set("repl-diskless-load", "swapdb")
    with pytest.raises(redis.ResponseError, match="argument must be between 1 and 2147483647"):
        c.config_set("repl-timeout", "0")
    with pytest.raises(redis.ResponseError, match="argument must be between 0 and 65535"):
        c.config_set("replica-announce-port", "70000")
    assert c.config_set("slave-priority", "7")
    assert c.info("replication")["slave_priority"] == 7
    assert c.config_get("replica-priority") == {"replica-priority": "7"}
    got = c.config_get("replica-*")
    for name in ("replica-read-only", "replica-serve-stale-data", "replica-priority", "replica-announce-ip",
                 "replica-announce-port", "replica-announced", "replica-lazy-flush"):
        assert name in got
    assert c.config_get("repl-timeout") == {"repl-timeout": "60"}
    assert c.config_get("masterauth") == {"masterauth": ""}
    assert c.execute_command("REPLICAOF", "no", "one") == "OK"


def test_replicaof_directive_at_start(spawn, master):
    m = master()
    m.client().set("k", "v")
    s = spawn("--replicaof", "127.0.0.1", str(m.port))
    c = s.new_client()
    wait_until(lambda: link_up(c), "link up")
    wait_until(lambda: c.get("k") == b"v", "the data")
    assert c.config_get("replicaof") == {"replicaof": "127.0.0.1 %d" % m.port}


def test_scripts_on_a_replica(spawn, master):
    m = master()
    mc = m.client()
    mc.set("x", "1")
    mc.execute_command("FUNCTION", "LOAD", "#!lua name=lib\n"
                       "redis.register_function('w', function() return redis.call('set','y','1') end)\n"
                       "redis.register_function{function_name='r', callback=function() return redis.call('get','x') "
                       "end, flags={'no-writes'}}")
    s, c = start_replica(spawn, m)
    wait_until(lambda: link_up(c), "link up")
    synced(s, m)
    wait_until(lambda: c.execute_command("FUNCTION", "LIST") != [], "the library")
    # no shebang (Redis 6 semantics): the write is refused by the call
    with pytest.raises(redis.ReadOnlyError, match="^You can't write against a read only replica. script:"):
        c.eval("return redis.call('set','x','2')", 0)
    assert c.eval("return redis.call('get','x')", 0) == b"1"
    # flags: a script that may write is refused before it runs
    with pytest.raises(redis.ReadOnlyError, match="^You can't write against a read only replica.$"):
        c.eval("#!lua\nreturn redis.call('set','x','2')", 0)
    with pytest.raises(redis.ResponseError, match="Write commands are not allowed from read-only scripts"):
        c.eval("#!lua flags=no-writes\nreturn redis.call('set','x','2')", 0)
    assert c.eval("#!lua flags=no-writes\nreturn redis.call('get','x')", 0) == b"1"
    with pytest.raises(redis.ReadOnlyError):
        c.execute_command("FCALL", "w", 0)
    with pytest.raises(redis.ReadOnlyError):
        c.execute_command("FCALL_RO", "w", 0)
    assert c.execute_command("FCALL", "r", 0) == b"1"
    # the link down under replica-serve-stale-data no
    c.config_set("replica-serve-stale-data", "no")
    m.kill()
    wait_until(lambda: link_down(c), "link down")
    for body in ("return redis.call('get','x')", "#!lua flags=no-writes\nreturn 1"):
        with pytest.raises(redis.ResponseError, match="^MASTERDOWN "):
            c.eval(body, 0)
    with pytest.raises(redis.ResponseError, match="^Can not execute the command on a stale replica script:"):
        c.eval("#!lua flags=no-writes,allow-stale\nreturn redis.call('get','x')", 0)
    assert c.eval("#!lua flags=no-writes,allow-stale\nreturn 7", 0) == 7


def test_master_client_kill_and_list(spawn, master):
    m = master()
    s, c = start_replica(spawn, m)
    wait_until(lambda: link_up(c), "link up")
    mc = m.client()
    mc.set("a", "1")
    synced(s, m)
    listed = c.execute_command("CLIENT", "LIST", "TYPE", "master").decode().strip().splitlines()
    assert len(listed) == 1 and " flags=M " in listed[0]
    assert "addr=127.0.0.1:%d " % m.port in listed[0]
    assert all(" flags=M " not in l for l in c.execute_command("CLIENT", "LIST", "TYPE", "normal").decode().splitlines())
    assert c.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") == 0
    assert link_up(c)
    assert c.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
    wait_until(lambda: link_up(c) and c.execute_command("CLIENT", "LIST", "TYPE", "master"), "the link back")
    mc.set("b", "2")
    synced(s, m)


@pytest.mark.parametrize("lazy", ["no", "yes"])
def test_sync_with_aof_and_lazy_flush(spawn, master, lazy):
    m = master()
    populate(m)
    s = spawn("--appendonly", "yes", "--replica-lazy-flush", lazy)
    c = s.new_client()
    c.set("old", "local")  # the full sync flushes it
    c.replicaof("127.0.0.1", m.port)
    wait_until(lambda: link_up(c), "link up")
    mc = m.client()
    mc.set("streamed", "1")
    mc.lpush("list", "head")
    want = synced(s, m)
    assert c.get("old") is None
    assert c.replicaof("no", "one") == b"OK"
    wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0 and
               c.info("persistence")["aof_rewrite_scheduled"] == 0, "the AOF rewrite")
    c.close()
    s.stop()
    s.start()  # loads the AOF: the synced data, not the old key
    assert dump_all(s.port, DBS) == want


def test_announced_address(spawn, master):
    m = master()
    s = spawn("--replica-announce-ip", "10.1.2.3", "--replica-announce-port", "4242")
    c = s.new_client()
    c.replicaof("127.0.0.1", m.port)
    wait_until(lambda: link_up(c), "link up")
    mc = m.client()
    wait_until(lambda: "slave0" in info_repl(mc), "the master to list its replica")
    slave0 = info_repl(mc)["slave0"]
    assert slave0["ip"] == "10.1.2.3" and slave0["port"] == 4242


def test_repl_timeout(spawn, master):
    m = master()
    m.client().set("k", "v")
    s = spawn("--repl-timeout", "2")
    c = s.new_client()
    c.replicaof("127.0.0.1", m.port)
    wait_until(lambda: link_up(c), "link up")
    os.kill(m.proc.pid, signal.SIGSTOP)  # the master goes silent: no data, no PING
    try:
        wait_until(lambda: "MASTER timeout: no data nor PING received" in s.read_log(), "the timeout")
        assert link_down(c)
    finally:
        os.kill(m.proc.pid, signal.SIGCONT)
    wait_until(lambda: link_up(c), "link up again")
    assert c.get("k") == b"v"


def test_masterauth_binary_password(spawn, master):
    # as the suite's "MASTERAUTH test with binary password", with a
    # redis-server master
    m = master()
    mc = m.client()
    mc.set("k", "v")
    mc.config_set("requirepass", b"abc\x00def")
    s = spawn()
    c = s.new_client()
    c.replicaof("127.0.0.1", m.port)
    c.config_set("masterauth", "abc")
    wait_until(lambda: "Unable to AUTH to MASTER" in s.read_log(), "the AUTH failure in the log")
    assert link_down(c)
    c.config_set("masterauth", b"abc\x00def")
    wait_until(lambda: link_up(c), "link up")
    wait_until(lambda: c.get("k") == b"v", "the data")


def test_info_during_the_transfer(spawn, master):
    m = master("--rdb-key-save-delay", "1000")  # the master's payload takes about 2 s
    mc = m.client()
    for i in range(0, 2000, 500):
        mc.mset({"key:%d" % j: j for j in range(i, i + 500)})
    s = spawn()
    c = s.new_client()
    c.replicaof("127.0.0.1", m.port)
    seen = {}

    def in_transfer():
        info = info_repl(c)
        if info["master_sync_in_progress"] == 1:
            seen["info"] = info
            seen["role"] = c.execute_command("ROLE")
            return True
        return False

    wait_until(in_transfer, "the transfer")
    info = seen["info"]
    assert info["master_link_status"] == "down" and info["master_last_io_seconds_ago"] == -1
    assert info["master_sync_total_bytes"] == -1  # the diskless $EOF: form has no length
    assert info["master_sync_left_bytes"] == -1 - info["master_sync_read_bytes"]
    assert info["master_sync_perc"] <= 0 and info["master_sync_last_io_seconds_ago"] >= 0
    assert seen["role"][3] == b"sync" and seen["role"][4] == -1
    wait_until(lambda: link_up(c), "link up")
    assert c.dbsize() == 2000
