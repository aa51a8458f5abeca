"""Configuration: CONFIG GET/SET/REWRITE at run time, and startup options
(config file, `--name value` arguments, their errors, and the directives
that change behaviour: databases, maxclients, timeout, unixsocket, logfile,
loglevel, bind, threads, cpu-affinity).

Every test runs against redis-server 7.0 too, except those for shoal's own
directives (threads, cpu-affinity, hugepages) and for changing `port`, which
Redis can do at run time and shoal cannot (by design; setting the port it
has is OK on both). Startup errors are compared on the
parts both servers print the same way (line number, quoted line, reason)."""
import gc
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time

import pytest
import redis

from helpers import REDIS, SHOAL, Server
from test_connection import RawConn


@pytest.fixture(autouse=True)
def raw_replies(r):
    r.response_callbacks.clear()


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def cget(r, *patterns):
    flat = r.execute_command("CONFIG", "GET", *patterns)
    return {k.decode(): v.decode() for k, v in zip(flat[::2], flat[1::2])}


@pytest.fixture
def restore(r):
    """Puts back every directive a test changes on the shared server."""
    saved = {}

    def remember(*names):
        for n in names:
            saved.update(cget(r, n))

    yield remember
    for name, value in saved.items():
        r.execute_command("CONFIG", "SET", name, value)


def shoal_only(target):
    if target == "redis":
        pytest.skip("shoal's own directive")


def failed_start(target, args, cwd):
    """Runs a server that must refuse to start; returns what it printed."""
    binary = REDIS if target == "redis" else SHOAL
    p = subprocess.run([binary] + args, cwd=cwd, capture_output=True, timeout=10)
    assert p.returncode != 0
    return (p.stdout + p.stderr).decode(errors="replace")


class ConfServer(Server):
    """A Server started with a config file (the first argument)."""

    def __init__(self, target, conf, extra=None):
        super().__init__(target, extra)
        self.conf = conf

    def argv(self):
        a = super().argv()
        return [a[0], self.conf] + a[1:]


class FileBindServer(ConfServer):
    """A ConfServer that leaves `bind` to its config file."""

    def argv(self):
        a = super().argv()
        k = a.index("--bind")
        return a[:k] + a[k + 2:]


@pytest.fixture
def start_conf(target):
    started = []

    def make(conf, *extra):
        s = ConfServer(target, str(conf), list(extra))
        s.start()
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


# ---- CONFIG GET ----

def test_config_get_patterns(r):
    got = cget(r, "maxmemory*")
    assert got["maxmemory"] == "0" and got["maxmemory-policy"] == "noeviction"
    assert all(k.startswith("maxmemory") for k in got)
    assert cget(r, "timeout", "maxclients") == {"timeout": "0", "maxclients": "10000"}
    assert cget(r, "tim?out", "timeout", "proto-max-bulk-le?") == {"timeout": "0",
                                                                  "proto-max-bulk-len": "536870912"}
    assert cget(r, "nosuchdirective") == {}
    assert cget(r, "nosuch*") == {}
    # a plain name is looked up as given, any case
    assert cget(r, "MAXCLIENTS") == {"MAXCLIENTS": "10000"}
    assert err(r, "CONFIG", "GET") == "wrong number of arguments for 'config|get' command"


def test_config_get_values(r, server):
    got = cget(r, "port", "bind", "databases", "save", "appendonly", "dir", "loglevel", "unixsocketperm")
    assert got["port"] == str(server.port)
    assert got["bind"] == "127.0.0.1"
    assert got["databases"] == "16"
    assert got["save"] == ""
    assert got["appendonly"] == "no"
    assert got["loglevel"] == "notice"
    assert got["unixsocketperm"] == "0"
    assert os.path.realpath(got["dir"]) == os.path.realpath(server.dir)
    assert cget(r, "client-output-buffer-limit") == {
        "client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"}


# ---- CONFIG SET ----

def test_config_set_several(r, restore):
    restore("timeout", "maxclients", "maxmemory", "hz")
    assert r.execute_command("CONFIG", "SET", "timeout", "300", "maxclients", "5000") == b"OK"
    assert cget(r, "timeout", "maxclients") == {"timeout": "300", "maxclients": "5000"}
    assert r.execute_command("CONFIG", "SET", "maxmemory", "10mb") == b"OK"
    assert cget(r, "maxmemory") == {"maxmemory": "10485760"}
    assert r.execute_command("CONFIG", "SET", "MAXMEMORY", "1gb") == b"OK"
    assert cget(r, "maxmemory") == {"maxmemory": "1073741824"}
    r.execute_command("CONFIG", "SET", "hz", "1000")
    assert cget(r, "hz") == {"hz": "500"}  # clamped, as Redis
    r.execute_command("CONFIG", "SET", "hz", "0")
    assert cget(r, "hz") == {"hz": "1"}


def test_config_set_enums_and_bools(r, restore):
    restore("loglevel", "maxmemory-policy", "protected-mode")
    assert r.execute_command("CONFIG", "SET", "loglevel", "WARNING") == b"OK"
    assert cget(r, "loglevel") == {"loglevel": "warning"}
    assert r.execute_command("CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LRU") == b"OK"
    assert cget(r, "maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
    assert r.execute_command("CONFIG", "SET", "protected-mode", "no") == b"OK"
    assert cget(r, "protected-mode") == {"protected-mode": "no"}


def test_config_set_save(r, restore):
    restore("save")
    assert r.execute_command("CONFIG", "SET", "save", "100 10 60 1000") == b"OK"
    assert cget(r, "save") == {"save": "100 10 60 1000"}
    assert r.execute_command("CONFIG", "SET", "save", "") == b"OK"
    assert cget(r, "save") == {"save": ""}


def failed(name, why):
    return "CONFIG SET failed (possibly related to argument '%s') - %s" % (name, why)


def test_config_set_errors(r):
    assert err(r, "CONFIG", "SET", "maxclients", "abc") == \
        failed("maxclients", "argument couldn't be parsed into an integer")
    assert err(r, "CONFIG", "SET", "maxclients", "0") == \
        failed("maxclients", "argument must be between 1 and 4294967295 inclusive")
    assert err(r, "CONFIG", "SET", "timeout", "-1") == \
        failed("timeout", "argument must be between 0 and 2147483647 inclusive")
    assert err(r, "CONFIG", "SET", "timeout", "1.5") == \
        failed("timeout", "argument couldn't be parsed into an integer")
    assert err(r, "CONFIG", "SET", "nosuchdirective", "1") == \
        "Unknown option or number of arguments for CONFIG SET - 'nosuchdirective'"
    assert err(r, "CONFIG", "SET", "databases", "4") == failed("databases", "can't set immutable config")
    assert err(r, "CONFIG", "SET", "daemonize", "yes") == failed("daemonize", "can't set immutable config")
    assert err(r, "CONFIG", "SET", "logfile", "x.log") == failed("logfile", "can't set immutable config")
    assert err(r, "CONFIG", "SET", "dir", "/tmp") == failed("dir", "can't set protected config")
    assert err(r, "CONFIG", "SET", "loglevel", "loud") == failed(
        "loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning")
    assert err(r, "CONFIG", "SET", "protected-mode", "maybe") == failed("protected-mode", "argument must be 'yes' or 'no'")
    assert err(r, "CONFIG", "SET", "maxmemory", "1xb") == failed("maxmemory", "argument must be a memory value")
    assert err(r, "CONFIG", "SET", "maxmemory", "-1") == failed("maxmemory", "argument must be a memory value")
    assert err(r, "CONFIG", "SET", "proto-max-bulk-len", "10") == failed(
        "proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive")
    assert err(r, "CONFIG", "SET", "save", "10") == failed("save", "Invalid save parameters")
    assert err(r, "CONFIG", "SET", "save", "a b") == failed("save", "Invalid save parameters")
    assert err(r, "CONFIG", "SET", "maxmemory-policy", "lru") == failed(
        "maxmemory-policy", "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
        "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction")
    assert err(r, "CONFIG", "SET", "client-output-buffer-limit", "normal 1 2") == failed(
        "client-output-buffer-limit", "Wrong number of arguments in buffer limit configuration.")
    assert err(r, "CONFIG", "SET", "maxclients", "10", "MAXCLIENTS", "20") == \
        failed("MAXCLIENTS", "duplicate parameter")
    assert err(r, "CONFIG", "SET", "timeout", "0", "hz") == "syntax error"
    assert err(r, "CONFIG", "SET", "timeout") == "wrong number of arguments for 'config|set' command"


def test_config_set_is_all_or_nothing(r):
    assert err(r, "CONFIG", "SET", "maxclients", "123", "timeout", "abc") == \
        failed("timeout", "argument couldn't be parsed into an integer")
    assert cget(r, "maxclients", "timeout") == {"maxclients": "10000", "timeout": "0"}
    # unknown names are found before anything changes
    assert err(r, "CONFIG", "SET", "maxclients", "123", "nosuch", "1") == \
        "Unknown option or number of arguments for CONFIG SET - 'nosuch'"
    assert cget(r, "maxclients") == {"maxclients": "10000"}


def test_config_set_port_moves_the_listener(spawn):
    s = spawn()
    c = s.new_client()
    c.set("k", "v")
    from helpers import free_port
    new = free_port()
    assert c.execute_command("CONFIG", "SET", "port", str(new)) == b"OK"
    assert c.get("k") == b"v"  # this connection stays
    moved = redis.Redis(host="127.0.0.1", port=new, socket_timeout=5)
    assert moved.get("k") == b"v"
    with pytest.raises(redis.ConnectionError):
        redis.Redis(host="127.0.0.1", port=s.port, socket_timeout=2).ping()
    assert cget(c, "port") == {"port": str(new)}
    s.port = new  # so the fixture stops it through the new port
    moved.close()
    c.close()


def test_config_set_port_in_use_rolls_back(spawn):
    import socket
    s = spawn()
    c = s.new_client()
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    used = busy.getsockname()[1]
    try:
        assert err(c, "CONFIG", "SET", "maxmemory", "10000001", "port", str(used)) == \
            failed("port", "Unable to listen on this port. Check server logs.")
        assert cget(c, "port", "maxmemory") == {"port": str(s.port), "maxmemory": "0"}
        assert redis.Redis(host="127.0.0.1", port=s.port, socket_timeout=5).ping()
    finally:
        busy.close()
    c.close()


def test_config_set_bind(spawn):
    s = spawn()
    c = s.new_client()
    assert err(c, "CONFIG", "SET", "bind", "203.0.113.7") == failed("bind", "Failed to bind to specified addresses.")
    assert c.execute_command("CONFIG", "SET", "bind", "127.0.0.2 127.0.0.1") == b"OK"
    assert redis.Redis(host="127.0.0.2", port=s.port, socket_timeout=5).ping()
    assert c.execute_command("CONFIG", "SET", "bind", "127.0.0.1") == b"OK"
    with pytest.raises(redis.ConnectionError):
        redis.Redis(host="127.0.0.2", port=s.port, socket_timeout=2).ping()
    c.close()


def test_config_set_port_and_bind_they_have(r, server):
    assert r.execute_command("CONFIG", "SET", "port", str(server.port), "bind", "127.0.0.1") == b"OK"
    assert r.ping()


# Directives that CONFIG SET refuses on both servers even with the value
# they have (Redis's immutable ones, those that shoal's harness or Redis's
# own test skip, and protected ones).
NOT_SETTABLE = {
    "rdbchecksum", "daemonize", "io-threads-do-reads", "tcp-backlog", "always-show-logo", "syslog-enabled",
    "cluster-enabled", "disable-thp", "aclfile", "unixsocket", "pidfile", "syslog-ident", "appendfilename",
    "appenddirname", "supervised", "syslog-facility", "databases", "io-threads", "logfile", "unixsocketperm",
    "replicaof", "slaveof", "requirepass", "server_cpulist", "bio_cpulist", "aof_rewrite_cpulist",
    "bgsave_cpulist", "set-proc-title", "cluster-config-file", "cluster-port", "oom-score-adj",
    "oom-score-adj-values", "enable-protected-configs", "enable-debug-command", "enable-module-command",
    "dbfilename", "dir", "socket-mark-id"}


def test_config_set_every_directive_to_its_value(r):
    # as Redis's "CONFIG sanity": every directive CONFIG GET * lists takes
    # back the value it shows, and shows it again
    before = {k: v for k, v in cget(r, "*").items() if k not in NOT_SETTABLE and not k.startswith("tls-")}
    for k, v in before.items():
        assert r.execute_command("CONFIG", "SET", k, v) == b"OK", k
    after = cget(r, "*")
    assert {k: after[k] for k in before} == before


# ---- aliases, hidden directives, several names ----

ALIASES = {"hash-max-ziplist-entries": "hash-max-listpack-entries",
           "hash-max-ziplist-value": "hash-max-listpack-value",
           "zset-max-ziplist-entries": "zset-max-listpack-entries",
           "zset-max-ziplist-value": "zset-max-listpack-value",
           "list-max-ziplist-size": "list-max-listpack-size"}


def test_config_aliases(r, restore):
    restore(*ALIASES.values())
    defaults = {"hash-max-listpack-entries": "512", "hash-max-listpack-value": "64",
                "zset-max-listpack-entries": "128", "zset-max-listpack-value": "64",
                "list-max-listpack-size": "-2"}
    for alias, name in ALIASES.items():
        assert cget(r, alias) == {alias: defaults[name]}
        assert r.execute_command("CONFIG", "SET", alias, "7") == b"OK"
        assert cget(r, name, alias) == {name: "7", alias: "7"}
        assert r.execute_command("CONFIG", "SET", name, defaults[name]) == b"OK"
        assert cget(r, alias) == {alias: defaults[name]}
    # a pattern finds both names, each under its own
    assert cget(r, "*ziplist*") == {a: defaults[n] for a, n in ALIASES.items()}
    assert cget(r, "list-max-*") == {"list-max-listpack-size": "-2", "list-max-ziplist-size": "-2"}
    # a directive and its alias are two names: no duplicate, the last wins
    assert r.execute_command("CONFIG", "SET", "list-max-ziplist-size", "1", "list-max-listpack-size", "2") == b"OK"
    assert cget(r, "list-max-ziplist-size") == {"list-max-ziplist-size": "2"}
    assert err(r, "CONFIG", "SET", "list-max-ziplist-size", "1", "LIST-MAX-ZIPLIST-SIZE", "2") == \
        failed("LIST-MAX-ZIPLIST-SIZE", "duplicate parameter")
    # a bad value names the alias, in its own spelling
    assert err(r, "CONFIG", "SET", "LIST-MAX-ZIPLIST-SIZE", "x") == \
        failed("list-max-ziplist-size", "argument couldn't be parsed into an integer")
    assert err(r, "CONFIG", "SET", "HASH-max-listpack-entries", "x") == \
        failed("hash-max-listpack-entries", "argument couldn't be parsed into an integer")
    assert err(r, "CONFIG", "SET", "hash-max-ziplist-entries", "-1") == \
        failed("hash-max-ziplist-entries", "argument must be between 0 and 9223372036854775807 inclusive")
    # the old list-max-ziplist-entries/value of Redis 3.0 are gone
    assert err(r, "CONFIG", "SET", "list-max-ziplist-entries", "5") == \
        "Unknown option or number of arguments for CONFIG SET - 'list-max-ziplist-entries'"
    assert cget(r, "list-max-ziplist-entries", "list-max-ziplist-value", "set-max-listpack-entries") == {}


def test_config_aliases_drive_encodings(r, restore):
    restore("hash-max-listpack-entries", "hash-max-listpack-value", "zset-max-listpack-entries",
            "zset-max-listpack-value", "set-max-intset-entries")
    r.execute_command("CONFIG", "SET", "hash-max-ziplist-entries", "2", "zset-max-ziplist-entries", "2",
                      "set-max-intset-entries", "2")
    r.execute_command("HSET", "h", "a", "1", "b", "2")
    r.execute_command("ZADD", "z", "1", "a", "2", "b")
    r.execute_command("SADD", "s", "1", "2")
    assert [r.execute_command("OBJECT", "ENCODING", k) for k in ("h", "z", "s")] == [b"listpack", b"listpack",
                                                                                   b"intset"]
    r.execute_command("HSET", "h", "c", "3")
    r.execute_command("ZADD", "z", "3", "c")
    r.execute_command("SADD", "s", "3")
    assert [r.execute_command("OBJECT", "ENCODING", k) for k in ("h", "z", "s")] == [b"hashtable", b"skiplist",
                                                                                   b"hashtable"]
    # the *-value thresholds are memory values
    r.execute_command("CONFIG", "SET", "hash-max-ziplist-value", "1kb", "zset-max-ziplist-value", "4")
    assert cget(r, "hash-max-listpack-value", "zset-max-listpack-value") == {
        "hash-max-listpack-value": "1024", "zset-max-listpack-value": "4"}
    r.execute_command("HSET", "h2", "f", "x" * 1000)
    r.execute_command("ZADD", "z2", "1", "abcde")
    assert [r.execute_command("OBJECT", "ENCODING", k) for k in ("h2", "z2")] == [b"listpack", b"skiplist"]
    assert err(r, "CONFIG", "SET", "zset-max-ziplist-value", "x") == \
        failed("zset-max-ziplist-value", "argument must be a memory value")


def test_config_get_hidden(r, restore):
    restore("rdb-key-save-delay", "key-load-delay")
    everything = cget(r, "*")
    assert "rdb-key-save-delay" not in everything and "key-load-delay" not in everything
    assert cget(r, "*delay*").keys() <= {"repl-diskless-sync-delay", "repl-disable-tcp-nodelay"}
    assert cget(r, "key-load-delay", "rdb-key-save-delay") == {"key-load-delay": "0", "rdb-key-save-delay": "0"}
    assert r.execute_command("CONFIG", "SET", "key-load-delay", "-10", "rdb-key-save-delay", "5") == b"OK"
    assert cget(r, "KEY-LOAD-DELAY") == {"KEY-LOAD-DELAY": "-10"}
    assert err(r, "CONFIG", "SET", "key-load-delay", "abc") == \
        failed("key-load-delay", "argument couldn't be parsed into an integer")


def test_config_get_several_patterns(r):
    got = r.execute_command("CONFIG", "GET", "maxmemory", "maxmemory*", "bind", "*ziplist-entries", "MAXMEMORY",
                            "hash-max-*-entries")
    names = [k.decode() for k in got[::2]]
    assert len(names) == len(set(names))  # each name once
    assert set(names) >= {"maxmemory", "maxmemory-policy", "bind", "hash-max-ziplist-entries",
                          "zset-max-ziplist-entries", "hash-max-listpack-entries"}
    assert "MAXMEMORY" not in names


def test_config_set_error_order(r):
    # names first, in order; the first bad one wins, before any value is read
    assert err(r, "CONFIG", "SET", "daemonize", "no", "foo", "1") == failed("daemonize", "can't set immutable config")
    assert err(r, "CONFIG", "SET", "foo", "1", "daemonize", "no") == \
        "Unknown option or number of arguments for CONFIG SET - 'foo'"
    assert err(r, "CONFIG", "SET", "maxmemory", "x", "foo", "1") == \
        "Unknown option or number of arguments for CONFIG SET - 'foo'"
    assert err(r, "CONFIG", "SET", "maxmemory", "x", "maxmemory", "1") == failed("maxmemory", "duplicate parameter")
    assert err(r, "CONFIG", "SET", "DAEMONIZE", "no") == failed("DAEMONIZE", "can't set immutable config")
    assert err(r, "CONFIG", "SET", "MAXCLIENTS", "x") == failed("maxclients", "argument couldn't be parsed into an integer")


def test_config_set_rollback(r, restore):
    restore("maxmemory", "timeout", "hash-max-listpack-entries", "client-query-buffer-limit")
    assert r.execute_command("CONFIG", "SET", "maxmemory", "10000002") == b"OK"
    assert err(r, "CONFIG", "SET", "maxmemory", "10000001", "timeout", "77", "hash-max-ziplist-entries", "3",
               "client-query-buffer-limit", "invalid") == \
        failed("client-query-buffer-limit", "argument must be a memory value")
    assert cget(r, "maxmemory", "timeout", "hash-max-listpack-entries", "client-query-buffer-limit") == {
        "maxmemory": "10000002", "timeout": "0", "hash-max-listpack-entries": "512",
        "client-query-buffer-limit": "1073741824"}
    # an alias and its name in one call roll back to the value before both
    assert err(r, "CONFIG", "SET", "list-max-ziplist-size", "5", "list-max-listpack-size", "6", "timeout", "x") == \
        failed("timeout", "argument couldn't be parsed into an integer")
    assert cget(r, "list-max-listpack-size") == {"list-max-listpack-size": "-2"}


def test_config_set_validation(r, restore):
    restore("list-max-listpack-size", "list-compress-depth", "save", "active-expire-effort", "activerehashing")
    assert r.execute_command("CONFIG", "SET", "list-max-listpack-size", "-100") == b"OK"
    assert err(r, "CONFIG", "SET", "list-max-listpack-size", "99999999999") == failed(
        "list-max-listpack-size", "argument must be between -2147483648 and 2147483647 inclusive")
    assert err(r, "CONFIG", "SET", "list-compress-depth", "-1") == failed(
        "list-compress-depth", "argument must be between 0 and 2147483647 inclusive")
    assert err(r, "CONFIG", "SET", "save", "0 1") == failed("save", "Invalid save parameters")
    assert r.execute_command("CONFIG", "SET", "save", "1 0") == b"OK"
    assert cget(r, "save") == {"save": "1 0"}
    assert err(r, "CONFIG", "SET", "active-expire-effort", "11") == failed(
        "active-expire-effort", "argument must be between 1 and 10 inclusive")
    assert err(r, "CONFIG", "SET", "active-expire-effort", "0") == failed(
        "active-expire-effort", "argument must be between 1 and 10 inclusive")
    assert r.execute_command("CONFIG", "SET", "active-expire-effort", "10", "activerehashing", "no") == b"OK"
    assert cget(r, "active-expire-effort", "activerehashing") == {"active-expire-effort": "10",
                                                                  "activerehashing": "no"}
    assert err(r, "CONFIG", "SET", "activerehashing", "maybe") == failed("activerehashing",
                                                                        "argument must be 'yes' or 'no'")
    assert err(r, "CONFIG", "SET", "tcp-backlog", "99999999999") == failed("tcp-backlog",
                                                                          "can't set immutable config")


def test_active_expire_effort_expires(spawn):
    # (activerehashing stays on: with it off, redis-server's expires table
    # stays at 256 slots, and its cycle skips a table under 1 % full, so
    # the last two or three keys may wait for a lookup)
    s = spawn("--active-expire-effort", "10")
    c = s.new_client()
    c.response_callbacks.clear()
    for i in range(200):
        c.execute_command("SET", "k%d" % i, "v", "PX", "50")
    c.execute_command("SET", "keep", "v")
    deadline = time.time() + 5  # the active cycle, not lookups, removes them
    while c.execute_command("DBSIZE") != 1 and time.time() < deadline:
        time.sleep(0.05)
    assert c.execute_command("DBSIZE") == 1
    c.close()


def test_dbfilename_is_a_file_name(spawn):
    s = spawn("--enable-protected-configs", "yes")
    c = s.new_client()
    c.response_callbacks.clear()
    assert err(c, "CONFIG", "SET", "dbfilename", "a/b.rdb") == failed("dbfilename",
                                                                     "dbfilename can't be a path, just a filename")
    assert c.execute_command("CONFIG", "SET", "dbfilename", "b.rdb") == b"OK"
    c.close()


def test_config_set_timeout_applies(spawn):
    s = spawn()
    c = s.new_client()
    c.response_callbacks.clear()
    assert c.execute_command("CONFIG", "SET", "timeout", "1") == b"OK"
    idle = RawConn(s)
    assert idle.call("PING") == ("+", "PONG")
    assert idle.closed_within(4.0)
    idle.close()
    c.close()


# ---- CONFIG REWRITE ----

def test_config_rewrite_without_file(r):
    assert err(r, "CONFIG", "REWRITE") == "The server is running without a config file"


def test_config_rewrite(target, tmp_path, start_conf):
    conf = tmp_path / "server.conf"
    conf.write_text("# my own comment\nmaxclients 100\n  # don't lose me\ntimeout 5\n\ntimeout 6\n")
    s = start_conf(conf)
    c = s.new_client()
    c.response_callbacks.clear()
    assert cget(c, "timeout", "maxclients") == {"timeout": "6", "maxclients": "100"}
    assert c.execute_command("CONFIG", "SET", "timeout", "9", "hz", "20") == b"OK"
    assert c.execute_command("CONFIG", "REWRITE") == b"OK"
    c.close()
    lines = conf.read_text().splitlines()
    assert lines[0] == "# my own comment" and "# don't lose me" in lines
    assert "maxclients 100" in lines and "timeout 9" in lines and "hz 20" in lines
    assert "timeout 5" not in lines and "timeout 6" not in lines
    assert sum(l.startswith("timeout ") for l in lines) == 1
    s.stop()
    s2 = start_conf(conf)
    c = s2.new_client()
    c.response_callbacks.clear()
    assert cget(c, "timeout", "maxclients", "hz") == {"timeout": "9", "maxclients": "100", "hz": "20"}
    c.close()


def test_config_rewrite_bind(target, tmp_path, start_conf):
    # several bind addresses are written back as several words, and load again
    conf = tmp_path / "server.conf"
    conf.write_text("maxclients 100\n")
    s = start_conf(conf, "--bind", "127.0.0.1", "-::1")  # after the harness's own --bind
    c = s.new_client()
    c.response_callbacks.clear()
    assert cget(c, "bind") == {"bind": "127.0.0.1 -::1"}
    assert c.execute_command("CONFIG", "REWRITE") == b"OK"
    c.close()
    assert "bind 127.0.0.1 -::1" in conf.read_text().splitlines()
    s.stop()
    s2 = FileBindServer(target, str(conf))  # the file's bind, not the harness's
    s2.start()
    try:
        c = s2.new_client()
        c.response_callbacks.clear()
        assert cget(c, "bind") == {"bind": "127.0.0.1 -::1"}
        c.close()
    finally:
        s2.stop()


def test_config_file_aliases_and_rewrite(target, tmp_path, start_conf):
    conf = tmp_path / "server.conf"
    conf.write_text("hash-max-ziplist-entries 21\nhash-max-listpack-entries 20\nlist-max-ziplist-entries 5\n"
                    "list-max-ziplist-value 64\nzset-max-ziplist-value 7\n")
    s = start_conf(conf)
    c = s.new_client()
    c.response_callbacks.clear()
    assert cget(c, "hash-max-listpack-entries", "hash-max-ziplist-entries", "zset-max-listpack-value") == {
        "hash-max-listpack-entries": "20", "hash-max-ziplist-entries": "20", "zset-max-listpack-value": "7"}
    assert c.execute_command("CONFIG", "SET", "hash-max-listpack-entries", "100", "list-max-ziplist-size", "5") == b"OK"
    assert c.execute_command("CONFIG", "REWRITE") == b"OK"
    c.close()
    lines = [l for l in conf.read_text().splitlines() if l]
    # the first line of a directive (by either name) takes its own name and
    # the new value; the later ones go; deprecated lines become comments
    assert lines[0] == "hash-max-listpack-entries 100"
    assert not any(l.startswith("hash-max-ziplist-entries") for l in lines)
    assert sum(l.startswith("hash-max-listpack-entries") for l in lines) == 1
    assert "# ??? list-max-ziplist-entries 5" in lines and "# ??? list-max-ziplist-value 64" in lines
    assert "zset-max-listpack-value 7" in lines and "list-max-listpack-size 5" in lines
    s.stop()
    s2 = start_conf(conf)
    c = s2.new_client()
    c.response_callbacks.clear()
    assert cget(c, "hash-max-listpack-entries", "list-max-listpack-size", "zset-max-listpack-value") == {
        "hash-max-listpack-entries": "100", "list-max-listpack-size": "5", "zset-max-listpack-value": "7"}
    c.close()


def test_config_file_deprecated_directives(target, tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("port 0\nlist-max-ziplist-entries 5 6\n")  # ignored with one value only
    out = failed_start(target, [str(conf)], tmp_path)
    assert "at line 2\n>>> 'list-max-ziplist-entries 5 6'\nBad directive or wrong number of arguments" in out


class FileSaveServer(ConfServer):
    """A ConfServer without the harness's `--save ""` (its file decides)."""

    def argv(self):
        a = super().argv()
        k = a.index("--save")
        return a[:k] + a[k + 2:]


def test_config_file_save_lines(target, tmp_path):
    # the first save line replaces the default rules, later ones add theirs
    conf = tmp_path / "save.conf"
    conf.write_text("save 900 1\nsave 300 10\n")
    for extra, want in (([], "900 1 300 10"), (["--save", "100", "100"], "900 1 300 10 100 100"),
                        (["--save", ""], ""), (["--save", "", "--save", "7 7"], "7 7")):
        s = FileSaveServer(target, str(conf), extra)
        s.start()
        try:
            c = s.new_client()
            c.response_callbacks.clear()
            assert cget(c, "save") == {"save": want}, extra
            c.close()
        finally:
            s.stop()
    conf.write_text("save 0 1\n")
    out = failed_start(target, [str(conf), "--port", "0"], tmp_path)
    assert ">>> 'save 0 1'\nInvalid save parameters" in out


# ---- startup: file, arguments, errors ----

def test_startup_args(spawn, target):
    s = spawn("--maxclients", "77", "--timeout", "30", "--save", "60 5")
    c = s.new_client()
    c.response_callbacks.clear()
    got = cget(c, "port", "maxclients", "timeout", "save", "dir")
    assert got["port"] == str(s.port) and got["maxclients"] == "77" and got["timeout"] == "30"
    assert got["save"] == "60 5"
    assert os.path.realpath(got["dir"]) == os.path.realpath(s.dir)
    c.close()


def test_startup_file_then_args(tmp_path, start_conf):
    conf = tmp_path / "s.conf"
    conf.write_text("maxclients 100\ntimeout 5\n")
    s = start_conf(conf, "--timeout", "7")  # arguments come after the file
    c = s.new_client()
    c.response_callbacks.clear()
    assert cget(c, "maxclients", "timeout") == {"maxclients": "100", "timeout": "7"}
    c.close()


def test_startup_bad_directive(target, tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("port 0\nfoo bar\n")
    out = failed_start(target, [str(conf)], tmp_path)
    assert "Reading the configuration file, at line 2\n>>> 'foo bar'\nBad directive or wrong number of arguments" in out
    # comments are skipped whole, lone quotes and all
    conf.write_text("# don't panic\nport 0\n   # it's fine\n\nfoo bar\n")
    out = failed_start(target, [str(conf)], tmp_path)
    assert "at line 5\n>>> 'foo bar'\n" in out


def test_startup_bad_value(target, tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("port 0\n# comment\nmaxclients abc\n")
    out = failed_start(target, [str(conf)], tmp_path)
    assert "at line 3\n>>> 'maxclients abc'\nargument couldn't be parsed into an integer" in out


def test_startup_bad_values_more(target, tmp_path):
    cases = [("timeout\n", "'timeout'\nwrong number of arguments"),
             ("loglevel loud\n", "'loglevel loud'\nargument(s) must be one of the following: debug, verbose, "
                                 "notice, warning"),
             ("appendonly maybe\n", "'appendonly maybe'\nargument must be 'yes' or 'no'"),
             ('logfile "abc\n', "Unbalanced quotes in configuration line"),
             ("databases 0\n", "'databases 0'\nargument must be between 1 and "),
             ("bind" + " 127.0.0.1" * 17 + "\n", "\nToo many bind addresses specified.")]
    for text, want in cases:
        conf = tmp_path / "bad.conf"
        conf.write_text("port 0\n" + text)
        out = failed_start(target, [str(conf)], tmp_path)
        assert "at line 2\n" in out and want in out, (text, out)


def test_startup_bad_argument(target, tmp_path):
    out = failed_start(target, ["--port", "0", "--maxclients", "abc"], tmp_path)
    assert ">>> 'maxclients \"abc\"'\nargument couldn't be parsed into an integer" in out
    out = failed_start(target, ["--port", "0", "--nosuchdirective", "1"], tmp_path)
    assert ">>> 'nosuchdirective \"1\"'\nBad directive or wrong number of arguments" in out


def test_startup_missing_file(target, tmp_path):
    out = failed_start(target, [str(tmp_path / "nope.conf")], tmp_path)
    assert "Fatal error, can't open config file '%s': No such file or directory" % (tmp_path / "nope.conf") in out


# ---- startup directives ----

def test_databases(spawn):
    s = spawn("--databases", "4")
    c = s.new_client()
    c.response_callbacks.clear()
    assert c.execute_command("SELECT", "3") == b"OK"
    assert err(c, "SELECT", "4") == "DB index is out of range"
    assert cget(c, "databases") == {"databases": "4"}
    c.close()


def wait_clients(c, n):
    deadline = time.time() + 2
    while time.time() < deadline:
        gc.collect()  # Server.start's probe client closes its socket only when collected
        text = c.execute_command("INFO", "clients").decode()
        if "connected_clients:%d\r\n" % n in text:
            return
        time.sleep(0.02)
    raise AssertionError("connected_clients never reached %d" % n)


def test_maxclients(spawn):
    s = spawn("--maxclients", "2")
    first = s.new_client()
    first.response_callbacks.clear()
    wait_clients(first, 1)  # the start-up probe has gone
    second = RawConn(s)
    assert second.call("PING") == ("+", "PONG")
    third = socket.create_connection((s.host, s.port), timeout=3)
    got = b""
    while True:
        d = third.recv(1024)
        if not d:
            break
        got += d
    third.close()
    assert got == b"-ERR max number of clients reached\r\n"
    second.close()
    wait_clients(first, 1)
    again = RawConn(s)
    assert again.call("PING") == ("+", "PONG")
    again.close()
    assert b"rejected_connections:1\r\n" in first.execute_command("INFO", "stats")
    first.close()


def test_timeout_closes_idle_clients(spawn):
    s = spawn("--timeout", "1")
    busy, idle = RawConn(s), RawConn(s)
    assert idle.call("PING") == ("+", "PONG")
    t = time.time()
    while time.time() - t < 1.3:
        assert busy.call("PING") == ("+", "PONG")
        time.sleep(0.1)
    assert idle.closed_within(3.0)
    assert time.time() - t >= 0.9
    assert busy.call("PING") == ("+", "PONG")
    busy.close()
    idle.close()


def test_unixsocket(spawn):
    sockdir = tempfile.mkdtemp(prefix="shoal-us-")  # short: sun_path holds 107 bytes
    path = os.path.join(sockdir, "srv.sock")
    s = spawn("--unixsocket", path, "--unixsocketperm", "700")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    c = redis.Redis(unix_socket_path=path, socket_timeout=5)
    c.response_callbacks.clear()
    assert c.execute_command("PING") == b"PONG"
    assert cget(c, "unixsocket", "unixsocketperm") == {"unixsocket": path, "unixsocketperm": "700"}
    assert (" addr=%s:0 " % path).encode() in c.execute_command("CLIENT", "INFO")
    c.close()
    assert s.new_client().ping()  # TCP still listens
    s.stop()
    shutil.rmtree(sockdir, ignore_errors=True)


def test_logfile_and_loglevel(spawn, tmp_path):
    log = tmp_path / "notice.log"
    s = spawn("--logfile", str(log))
    deadline = time.time() + 3  # written once the listeners are open: maybe after the first reply
    while "Ready to accept connections" not in log.read_text() and time.time() < deadline:
        time.sleep(0.02)
    assert "Ready to accept connections" in log.read_text()
    c = s.new_client()
    c.response_callbacks.clear()
    assert cget(c, "logfile", "loglevel") == {"logfile": str(log), "loglevel": "notice"}
    c.close()
    quiet = tmp_path / "warning.log"
    s = spawn("--logfile", str(quiet), "--loglevel", "warning")
    assert not quiet.exists() or "Ready to accept connections" not in quiet.read_text()
    c = s.new_client()
    c.response_callbacks.clear()
    assert cget(c, "loglevel") == {"loglevel": "warning"}
    c.close()


def test_bind(target):
    s = Server(target, ["--bind", "127.0.0.2"])
    s.host = "127.0.0.2"
    try:
        s.start()
        c = s.new_client()
        c.response_callbacks.clear()
        assert cget(c, "bind") == {"bind": "127.0.0.2"}
        c.close()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", s.port), timeout=1).close()
    finally:
        s.stop()


def test_threads(spawn, target):
    shoal_only(target)
    s = spawn("--threads", "3")
    c = s.new_client()
    c.response_callbacks.clear()
    assert cget(c, "threads") == {"threads": "3"}
    assert b"\r\nshards:3\r\n" in c.execute_command("INFO", "server")
    c.close()


def test_threads_out_of_range(target, tmp_path):
    shoal_only(target)
    out = failed_start(target, ["--port", "0", "--threads", "65"], tmp_path)
    assert ">>> 'threads \"65\"'\nargument must be between 0 and 64 inclusive" in out


def shard_cpus(pid):
    """{thread name: Cpus_allowed_list} of a process's shard threads."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            name = f.read().strip()
        if name.startswith("shard-"):
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        out[name] = line.split(":", 1)[1].strip()
    return out


def test_cpu_affinity(spawn, target):
    shoal_only(target)
    cpus = sorted(os.sched_getaffinity(0))[:2]
    s = spawn("--cpu-affinity", ",".join(map(str, cpus)))
    n = 4 if target == "shoal4" else 1
    want = {"shard-%d" % i: str(cpus[i % len(cpus)]) for i in range(n)}
    # the main thread pins each shard thread right after creating it
    deadline = time.time() + 3
    while shard_cpus(s.proc.pid) != want and time.time() < deadline:
        time.sleep(0.05)
    assert shard_cpus(s.proc.pid) == want


def test_cpu_affinity_bad(target, tmp_path):
    shoal_only(target)
    out = failed_start(target, ["--port", "0", "--cpu-affinity", "0,x"], tmp_path)
    assert ">>> 'cpu-affinity \"0,x\"'\nargument must be a list of CPU numbers" in out


def thp_disabled(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(l.split(":", 1)[1].strip() for l in f if l.startswith("THP_enabled:")) == "0"


def test_hugepages(spawn, target):
    shoal_only(target)
    for mode, disabled in (("never", True), ("madvise", False), ("always", False)):
        s = spawn("--hugepages", mode)
        c = s.new_client()
        c.response_callbacks.clear()
        assert cget(c, "hugepages") == {"hugepages": mode}
        mem = c.execute_command("INFO", "memory")
        assert b"\r\nhugepages:%s\r\n" % mode.encode() in mem
        assert b"\r\nhuge_pages_bytes:" in mem
        assert thp_disabled(s.proc.pid) == disabled
        other = "never" if mode != "never" else "always"
        assert err(c, "CONFIG", "SET", "hugepages", other) == failed("hugepages", "can't set immutable config")
        assert c.execute_command("CONFIG", "SET", "hugepages", mode) == b"OK"  # what it is: nothing to do
        c.close()


def test_hugepages_bad(target, tmp_path):
    shoal_only(target)
    out = failed_start(target, ["--port", "0", "--hugepages", "sometimes"], tmp_path)
    assert ">>> 'hugepages \"sometimes\"'\nargument(s) must be one of the following: never, madvise, always" in out
