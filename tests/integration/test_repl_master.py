"""The master side of replication: the target (shoal t1, t4 or redis-server)
is the master; a redis-server 7.0 started here replicates from it, and raw
SYNC connections read the stream itself. Every expectation also holds with
redis-server as the master."""
import socket
import time

import pytest
import redis

from helpers import Server, wait_until


@pytest.fixture
def server(spawn):
    """A master of the target's kind for this test alone: replication leaves
    state behind (a backlog, replicas) that other tests must not see."""
    return spawn()


@pytest.fixture
def r(server):
    c = server.new_client()
    yield c
    c.close()


@pytest.fixture
def rs(server):
    c = server.new_client(decode_responses=True)
    yield c
    c.close()


@pytest.fixture
def replica(server):
    """A redis-server replicating from the target."""
    rep = Server("redis", ["--replicaof", "127.0.0.1", str(server.port)])
    rep.start()
    c = rep.new_client(decode_responses=True)
    wait_until(lambda: c.info("replication").get("master_link_status") == "up", "the replica's link")
    yield c
    c.close()
    rep.stop()


def synced(master, replica_client):
    off = master.info("replication")["master_repl_offset"]
    wait_until(lambda: replica_client.info("replication").get("slave_repl_offset", -1) >= off, "replica offset")


def test_full_sync_then_stream(server, rs, replica):
    rs.mset({"a": "1", "b": "2", "c": "3"})
    rs.rpush("l", "x", "y", "z")
    rs.hset("h", mapping={"f1": "v1", "f2": "v2"})
    rs.zadd("z", {"m1": 1.5, "m2": 2})
    rs.execute_command("SELECT", 3)
    rs.set("in3", "v")
    rs.execute_command("SELECT", 0)
    # writes after the link is up travel in the stream
    rs.incr("a")
    rs.expire("b", 100)
    rs.delete("c")
    p = rs.pipeline(transaction=True)
    p.set("t1", "1")
    p.lpush("l", "w")
    p.execute()
    db5 = server.new_client(decode_responses=True, db=5)
    db5.set("x5", "y")
    db5.close()
    synced(rs, replica)
    assert replica.mget("a", "b", "c", "t1") == ["2", "2", None, "1"]
    assert 0 < replica.ttl("b") <= 100
    assert replica.lrange("l", 0, -1) == ["w", "x", "y", "z"]
    assert replica.hgetall("h") == {"f1": "v1", "f2": "v2"}
    assert replica.zrange("z", 0, -1, withscores=True) == [("m1", 1.5), ("m2", 2.0)]
    replica.execute_command("SELECT", 3)
    assert replica.get("in3") == "v"
    replica.execute_command("SELECT", 5)
    assert replica.get("x5") == "y"


def test_info_replication_with_replica(server, rs, replica):
    wait_until(lambda: rs.info("replication").get("slave0", {}).get("state") == "online", "the replica online")
    info = rs.info("replication")
    assert info["role"] == "master"
    assert info["connected_slaves"] == 1
    assert info["slave0"]["state"] == "online"
    assert info["slave0"]["port"] == replica.connection_pool.connection_kwargs["port"]
    assert info["repl_backlog_active"] == 1
    assert info["repl_backlog_first_byte_offset"] >= 1
    assert len(info["master_replid"]) == 40
    wait_until(lambda: "S" in [c["flags"] for c in rs.client_list()], "a replica in CLIENT LIST")


def read_stream(sock, until, timeout=5):
    """Bytes of the stream until `until` is in them."""
    sock.settimeout(timeout)
    data = b""
    while until not in data:
        d = sock.recv(65536)
        if not d:
            break
        data += d
    return data


def attach(server, cmd=b"SYNC\r\n"):
    s = socket.create_connection((server.host, server.port))
    s.sendall(cmd)
    f = s.makefile("rb")
    first = f.readline()
    while first.strip() == b"":
        first = f.readline()
    head = first
    if first.startswith(b"+FULLRESYNC"):
        first = f.readline()
        while first.strip() == b"":
            first = f.readline()
    assert first.startswith(b"$"), first
    payload = f.read(int(first[1:]))
    assert payload.startswith(b"REDIS")
    return s, f, head


def test_sync_stream_form(server, r):
    r.config_set("repl-ping-replica-period", 3600)
    s, f, _ = attach(server)
    try:
        r.set("k", "v", ex=100)
        r.incrbyfloat("f", 1.5)
        r.getdel("k")
        data = b""
        f.raw._sock.settimeout(5)
        while b"DEL" not in data:
            data += f.read1(65536)
        cmds = data.split(b"*")
        assert data.startswith(b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n")
        assert b"PXAT" in data  # SET ... EX becomes an absolute expiry
        assert b"KEEPTTL" in data  # INCRBYFLOAT becomes SET ... KEEPTTL
        assert len(cmds) > 3
    finally:
        s.close()
        r.config_set("repl-ping-replica-period", 10)


def test_psync_fullresync_reply(server, r):
    s, f, head = attach(server, b"PSYNC ? -1\r\n")
    try:
        parts = head.split()
        assert parts[0] == b"+FULLRESYNC" and len(parts[1]) == 40 and int(parts[2]) >= 0
        assert r.info("replication")["master_replid"] == parts[1].decode()
    finally:
        s.close()


def test_psync_continue_from_backlog(server, r):
    s, f, head = attach(server, b"PSYNC ? -1\r\n")
    replid, off = head.split()[1], int(head.split()[2])
    s.close()
    r.set("after", "1")
    for capa, reply in ((False, b"+CONTINUE\r\n"), (True, b"+CONTINUE " + replid + b"\r\n")):
        s2 = socket.create_connection((server.host, server.port))
        try:
            if capa:
                s2.sendall(b"REPLCONF capa psync2\r\n")
                assert read_stream(s2, b"\r\n") == b"+OK\r\n"
            s2.sendall(b"PSYNC %s %d\r\n" % (replid, off + 1))
            data = read_stream(s2, b"after")
            assert data.startswith(reply)  # the id only for a replica that knows PSYNC2
            assert b"$5\r\nafter\r\n" in data
        finally:
            s2.close()


def test_replconf(r):
    assert r.execute_command("REPLCONF", "listening-port", "7777") == b"OK"
    assert r.execute_command("REPLCONF", "capa", "eof", "capa", "psync2") == b"OK"
    with pytest.raises(redis.ResponseError, match="Unrecognized REPLCONF option: nosuch"):
        r.execute_command("REPLCONF", "nosuch", "1")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("REPLCONF", "listening-port")
    with pytest.raises(redis.ResponseError, match="not an integer"):
        r.execute_command("REPLCONF", "listening-port", "x")


def test_min_replicas_to_write(r):
    wait_until(lambda: r.info("replication")["connected_slaves"] == 0, "earlier replicas to go")
    r.set("x", "1")
    r.config_set("min-replicas-to-write", 1)
    try:
        with pytest.raises(redis.ResponseError, match="^NOREPLICAS Not enough good replicas to write.$"):
            r.set("x", "2")
        assert r.get("x") == b"1"
        assert r.eval("#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1, "x") == b"1"
        assert r.eval("return redis.call('get', KEYS[1])", 1, "x") == b"1"
        with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
            r.eval("#!lua\nreturn redis.call('get', KEYS[1])", 1, "x")
        with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
            r.eval("return redis.call('set', KEYS[1], '3')", 1, "x")
        assert r.config_get("min-slaves-to-write") == {"min-slaves-to-write": "1"}
    finally:
        r.config_set("min-replicas-to-write", 0)
    assert r.set("x", "2")


def test_repl_config_directives(r):
    old = r.config_get("repl-backlog-size")["repl-backlog-size"]
    try:
        assert r.config_set("repl-backlog-size", "10mb")
        assert r.config_get("repl-backlog-size") == {"repl-backlog-size": "10485760"}
        assert r.info("replication")["repl_backlog_size"] == 10485760
    finally:
        r.config_set("repl-backlog-size", old)
    assert r.config_get("repl-ping-slave-period") == {"repl-ping-slave-period": "10"}
    assert r.config_get("repl-backlog-ttl") == {"repl-backlog-ttl": "3600"}
    assert r.config_get("min-replicas-max-lag") == {"min-replicas-max-lag": "10"}


def test_scan_deletes_expired_keys_unwrapped(spawn):
    # Redis propagates the lazy expiry of keys SCAN meets as bare DELs
    server = spawn("--enable-debug-command", "yes")
    r = server.new_client()
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    r.config_set("repl-ping-replica-period", 3600)
    try:
        r.set("foo1", "bar", px=1)
        r.set("foo2", "bar", px=1)
        time.sleep(0.01)
        s, f, _ = attach(server)
        try:
            assert r.scan(0) == (0, [])
            data = read_stream(s, b"foo2")
            if b"foo1" not in data:
                data += read_stream(s, b"foo1")
            assert b"MULTI" not in data
            assert data.count(b"*2\r\n$3\r\nDEL\r\n") == 2
        finally:
            s.close()
    finally:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        r.config_set("repl-ping-replica-period", 10)


@pytest.mark.parametrize("replica_target", ["shoal1", "shoal4"])
def test_shoal_replica_follows_target(server, rs, replica_target):
    """shoal as the replica of the target (shoal or redis-server as master)."""
    rs.set("before", "1")
    rs.rpush("list", "a", "b")
    rep = Server(replica_target, ["--replicaof", "127.0.0.1", str(server.port)])
    rep.start()
    try:
        c = rep.new_client(decode_responses=True)
        wait_until(lambda: c.info("replication").get("master_link_status") == "up", "the replica's link")
        rs.set("after", "2")
        rs.incr("n")
        rs.execute_command("SELECT", 2)
        rs.sadd("s", "x", "y")
        rs.execute_command("SELECT", 0)
        synced(rs, c)
        assert c.mget("before", "after", "n") == ["1", "2", "1"]
        assert c.lrange("list", 0, -1) == ["a", "b"]
        c.execute_command("SELECT", 2)
        assert c.smembers("s") == {"x", "y"}
        with pytest.raises(redis.ResponseError, match="^You can't write against a read only replica.$"):
            c.set("w", "1")
        assert c.execute_command("ROLE")[0] == "slave"
        role = rs.execute_command("ROLE")
        assert role[0] == "master" and len(role[2]) == 1 and role[2][0][1] == str(rep.port)
        c.close()
    finally:
        rep.stop()


def test_client_type_replica_and_memory_fields(server, rs, replica):
    wait_until(lambda: len(rs.client_list(_type="replica")) == 1, "the replica in CLIENT LIST TYPE replica")
    listed = rs.client_list(_type="replica")
    assert "S" in listed[0]["flags"]
    assert all("S" not in c["flags"] for c in rs.client_list(_type="normal"))
    rs.set("k", "v" * 1000)
    mem = rs.info("memory")
    for field in ("mem_replication_backlog", "mem_total_replication_buffers", "mem_clients_slaves",
                  "mem_clients_normal", "mem_not_counted_for_evict", "mem_aof_buffer"):
        assert field in mem
    assert rs.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    assert rs.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == 0
    with pytest.raises(redis.ResponseError, match="Unknown client type 'nosuch'"):
        rs.execute_command("CLIENT", "KILL", "TYPE", "nosuch")
