"""The server family: COMMAND (COUNT INFO DOCS LIST GETKEYS GETKEYSANDFLAGS
HELP), INFO, CONFIG RESETSTAT/HELP, DEBUG SLEEP and SHUTDOWN, checked
against Redis 7.0 (the same tests run on redis-server). CONFIG GET/SET/
REWRITE and startup options are in test_config.py.

COMMAND COUNT differs by design (shoal has fewer commands); COMMAND INFO
entries are compared in full for a few commands whose rows match Redis."""
import socket
import subprocess
import time

import pytest
import redis

from test_connection import RawConn, encode, plain


@pytest.fixture(autouse=True)
def raw_replies(r):
    """Exact replies: no redis-py conversions except INFO's parser."""
    info = r.response_callbacks.get("INFO")
    r.response_callbacks.clear()
    r.response_callbacks["INFO"] = info


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def info_text(r, *sections):
    """INFO's reply as text, without redis-py's parsing."""
    r.response_callbacks.pop("INFO", None)
    return r.execute_command("INFO", *sections).decode()


def pairs(flat):
    return dict(zip(flat[::2], flat[1::2]))


# ---- COMMAND INFO ----

GET_INFO = [b"get", 2, [b"readonly", b"fast"], 1, 1, 1, [b"@read", b"@string", b"@fast"], [],
            [[b"flags", [b"RO", b"access"],
              b"begin_search", [b"type", b"index", b"spec", [b"index", 1]],
              b"find_keys", [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]]],
            []]


def test_command_info_get(r):
    assert r.execute_command("COMMAND", "INFO", "get") == [GET_INFO]
    assert r.execute_command("COMMAND", "INFO", "GET") == [GET_INFO]


def test_command_info_mset_and_unknown(r):
    missing, mset = r.execute_command("COMMAND", "INFO", "nosuchcmd", "mset")
    assert missing is None
    assert mset[:6] == [b"mset", -3, [b"write", b"denyoom"], 1, -1, 2]
    assert mset[6] == [b"@write", b"@string", b"@slow"]
    assert len(mset) == 10 and mset[9] == []
    spec = pairs(mset[8][0])
    assert spec[b"find_keys"] == [b"type", b"range", b"spec", [b"lastkey", -1, b"keystep", 2, b"limit", 0]]


def test_command_info_connection_commands(r):
    ping, select, hello, echo = r.execute_command("COMMAND", "INFO", "ping", "select", "hello", "echo")
    assert ping[:7] == [b"ping", -1, [b"fast"], 0, 0, 0, [b"@fast", b"@connection"]]
    assert select[:7] == [b"select", 2, [b"loading", b"stale", b"fast"], 0, 0, 0, [b"@fast", b"@connection"]]
    assert hello[2] == [b"noscript", b"loading", b"stale", b"fast", b"no_auth", b"allow_busy"]
    assert echo[1] == 2 and echo[8] == [] and echo[9] == []


def test_command_info_container(r):
    (config,) = r.execute_command("COMMAND", "INFO", "config")
    assert config[:7] == [b"config", -2, [], 0, 0, 0, [b"@slow"]]
    subs = {e[0]: e for e in config[9]}
    assert set(subs) == {b"config|get", b"config|set", b"config|resetstat", b"config|rewrite", b"config|help"}
    assert subs[b"config|get"][:7] == [b"config|get", -3, [b"admin", b"noscript", b"loading", b"stale"], 0, 0, 0,
                                       [b"@admin", b"@slow", b"@dangerous"]]
    assert subs[b"config|help"][2] == [b"loading", b"stale"]
    assert r.execute_command("COMMAND", "INFO", "config|get") == [subs[b"config|get"]]
    assert r.execute_command("COMMAND", "INFO", "CLIENT|ID")[0][:3] == \
        [b"client|id", 2, [b"noscript", b"loading", b"stale"]]
    assert r.execute_command("COMMAND", "INFO", "config|nosuch") == [None]


def test_command_info_self(r):
    (cmd,) = r.execute_command("COMMAND", "INFO", "command")
    assert cmd[:7] == [b"command", -1, [b"loading", b"stale"], 0, 0, 0, [b"@slow", b"@connection"]]
    subs = {e[0]: e[1] for e in cmd[9]}
    assert subs == {b"command|count": 2, b"command|info": -2, b"command|docs": -2, b"command|list": -2,
                    b"command|getkeys": -4, b"command|getkeysandflags": -4, b"command|help": 2}


def test_bare_command_lists_every_command(r):
    entries = r.execute_command("COMMAND")
    assert all(len(e) == 10 for e in entries)
    names = [e[0] for e in entries]
    assert len(names) == len(set(names)) == r.execute_command("COMMAND", "COUNT")
    assert {b"get", b"set", b"ping", b"client", b"config", b"command", b"info"} <= set(names)
    assert [e for e in entries if e[0] == b"get"] == [GET_INFO]
    assert sorted(e[0] for e in r.execute_command("COMMAND", "INFO")) == sorted(names)


def test_command_parsed_by_redis_py(server):
    c = server.new_client(decode_responses=True)
    cmds = c.command()
    c.close()
    assert cmds["get"]["arity"] == 2 and cmds["get"]["flags"] == ["readonly", "fast"]
    assert (cmds["get"]["first_key_pos"], cmds["get"]["last_key_pos"], cmds["get"]["step_count"]) == (1, 1, 1)


def test_command_count(r):
    n = r.execute_command("COMMAND", "COUNT")
    assert isinstance(n, int) and n > 0
    assert err(r, "COMMAND", "COUNT", "x") == "wrong number of arguments for 'command|count' command"


def test_command_info_resp3_types(server):
    c = RawConn(server)
    c.call("HELLO", "3")
    t, entries = c.call("COMMAND", "INFO", "get", "config")
    c.close()
    assert t == "*"
    get, config = [e[1] for e in entries]
    # flags, ACL categories, tips, key specs are sets; no subcommands is an empty set
    assert [get[i][0] for i in (2, 6, 7, 8, 9)] == ["~", "~", "~", "~", "~"]
    assert get[8][1][0][0] == "%"
    assert config[9][0] == "*" and len(config[9][1]) == 5


# ---- COMMAND DOCS / LIST / GETKEYS / HELP ----

def test_command_docs(r):
    docs = pairs(r.execute_command("COMMAND", "DOCS", "get", "nosuchcmd"))
    assert list(docs) == [b"get"]
    get = pairs(docs[b"get"])
    assert get[b"summary"] == b"Get the value of a key"
    assert get[b"since"] == b"1.0.0" and get[b"group"] == b"string"
    config = pairs(pairs(r.execute_command("COMMAND", "DOCS", "config"))[b"config"])
    assert config[b"group"] == b"server"
    subs = pairs(config[b"subcommands"])
    assert pairs(subs[b"config|get"])[b"summary"] == b"Get the values of configuration parameters"
    assert r.execute_command("COMMAND", "DOCS", "nosuchcmd") == []
    everything = pairs(r.execute_command("COMMAND", "DOCS"))
    assert len(everything) == r.execute_command("COMMAND", "COUNT")


def test_command_list(r):
    names = r.execute_command("COMMAND", "LIST")
    assert len(names) == len(set(names))
    assert {b"get", b"config", b"config|get", b"client|kill", b"command|list"} <= set(names)
    assert set(r.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN", "config*")) == \
        {b"config", b"config|get", b"config|set", b"config|resetstat", b"config|rewrite", b"config|help"}
    assert set(r.execute_command("COMMAND", "LIST", "FILTERBY", "pattern", "CONFIG|G*")) == {b"config|get"}
    conn = set(r.execute_command("COMMAND", "LIST", "FILTERBY", "ACLCAT", "connection"))
    assert {b"ping", b"echo", b"hello", b"select", b"client|id", b"command|info"} <= conn
    assert b"get" not in conn and b"client" not in conn
    assert r.execute_command("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcat") == []
    assert r.execute_command("COMMAND", "LIST", "FILTERBY", "MODULE", "nosuchmodule") == []


def test_command_list_errors(r):
    assert err(r, "COMMAND", "LIST", "FILTERBY") == "syntax error"
    assert err(r, "COMMAND", "LIST", "FILTERBY", "nosuch", "x") == "syntax error"
    assert err(r, "COMMAND", "LIST", "x", "y", "z") == "syntax error"


def test_command_getkeys(r):
    assert r.execute_command("COMMAND", "GETKEYS", "mset", "a", "1", "b", "2") == [b"a", b"b"]
    assert r.execute_command("COMMAND", "GETKEYS", "set", "k", "v", "EX", "10") == [b"k"]
    assert r.execute_command("COMMAND", "GETKEYS", "DEL", "x", "y", "z") == [b"x", b"y", b"z"]
    assert err(r, "COMMAND", "GETKEYS", "get", "a", "b") == "Invalid number of arguments specified for command"
    assert err(r, "COMMAND", "GETKEYS", "ping", "a") == "The command has no key arguments"
    assert err(r, "COMMAND", "GETKEYS", "config", "get", "x") == "The command has no key arguments"
    assert err(r, "COMMAND", "GETKEYS", "nosuchcmd", "a") == "Invalid command specified"
    assert err(r, "COMMAND", "GETKEYS", "config", "nosuch") == "Invalid command specified"
    assert err(r, "COMMAND", "GETKEYS", "get") == "wrong number of arguments for 'command|getkeys' command"


def test_command_getkeysandflags(r):
    assert r.execute_command("COMMAND", "GETKEYSANDFLAGS", "get", "k") == [[b"k", [b"RO", b"access"]]]
    keys = r.execute_command("COMMAND", "GETKEYSANDFLAGS", "mset", "a", "1", "b", "2")
    assert [k for k, _ in keys] == [b"a", b"b"]
    assert err(r, "COMMAND", "GETKEYSANDFLAGS", "ping", "x") == "The command has no key arguments"


def test_command_help_and_unknown(r):
    lines = r.execute_command("COMMAND", "HELP")
    assert lines[0] == b"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"GETKEYS <full-command>" in lines and lines[-1] == b"    Prints this help."
    assert err(r, "COMMAND", "nosuch") == "unknown subcommand 'nosuch'. Try COMMAND HELP."
    assert err(r, "COMMAND", "HELP", "x") == "wrong number of arguments for 'command|help' command"


# ---- INFO ----

DEFAULT_SECTIONS = ["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules",
                    "Errorstats", "Cluster", "Keyspace"]


def headers(text):
    return [l[2:] for l in text.split("\r\n") if l.startswith("# ")]


def test_info_default_sections(r):
    text = info_text(r)
    # shoal adds "# Shards"; everything else is Redis's order
    assert [h for h in headers(text) if h != "Shards"] == DEFAULT_SECTIONS
    assert [h for h in headers(info_text(r, "default")) if h != "Shards"] == DEFAULT_SECTIONS
    assert not text.endswith("\r\n\r\n") and text.endswith("\r\n")
    assert "\r\n\r\n# Clients\r\n" in text


def test_info_sections_by_name(r):
    assert headers(info_text(r, "server")) == ["Server"]
    assert headers(info_text(r, "KEYSPACE", "clients")) == ["Clients", "Keyspace"]  # Redis's order
    assert headers(info_text(r, "cpu", "memory", "stats")) == ["Memory", "Stats", "CPU"]
    assert info_text(r, "nosuchsection") == ""
    for word in ("all", "everything"):
        h = headers(info_text(r, word))
        assert {"Server", "Clients", "Memory", "Stats", "CPU", "Keyspace"} <= set(h)


def test_info_keyspace_lines(r):
    assert info_text(r, "keyspace") == "# Keyspace\r\n"
    r.set("a", "1")
    assert info_text(r, "keyspace") == "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"
    r.set("b", "2")
    r.execute_command("SELECT", "2")
    r.set("c", "3")
    assert info_text(r, "keyspace") == \
        "# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\ndb2:keys=1,expires=0,avg_ttl=0\r\n"
    r.execute_command("SELECT", "0")


def test_info_fields(r):
    info = r.info()
    assert info["redis_version"] == "7.0.15"
    assert info["redis_mode"] == "standalone"
    assert info["role"] == "master"
    assert info["loading"] == 0
    assert info["tcp_port"] == r.connection_pool.connection_kwargs["port"]
    for f in ("used_memory", "used_memory_rss", "used_memory_peak", "total_system_memory", "maxmemory",
              "connected_clients", "total_commands_processed", "instantaneous_ops_per_sec",
              "total_connections_received", "uptime_in_seconds", "process_id"):
        assert isinstance(info[f], int), f
    assert info["used_memory"] > 0 and info["used_memory_rss"] > 0
    assert isinstance(info["mem_fragmentation_ratio"], float)
    assert isinstance(info["used_cpu_sys"], float)
    assert info["connected_clients"] >= 1
    assert info["used_memory_human"][-1] in "BKMG"
    assert info["maxmemory_policy"] == "noeviction"


def test_info_everything_parses(r):
    r.set("k", "v")
    info = r.info("everything")
    assert info["db0"] == {"keys": 1, "expires": 0, "avg_ttl": 0}
    assert r.info("keyspace") == {"db0": {"keys": 1, "expires": 0, "avg_ttl": 0}}


def test_info_counts_clients_and_commands(r, server):
    before = r.info("clients")["connected_clients"]
    other = server.new_client()
    other.ping()
    assert r.info("clients")["connected_clients"] == before + 1
    other.close()
    n1 = r.info("stats")["total_commands_processed"]
    for _ in range(5):
        r.ping()
    n2 = r.info("stats")["total_commands_processed"]
    assert n2 - n1 == 6  # five PINGs and the first INFO


def test_info_resp3_verbatim(server):
    c = RawConn(server)
    c.call("HELLO", "3")
    t, v = c.call("INFO", "server")
    c.close()
    assert t == "=" and v.startswith(b"txt:# Server\r\nredis_version:7.0.15\r\n")


# ---- CONFIG RESETSTAT / HELP ----

def test_config_resetstat(r):
    for _ in range(10):
        r.ping()
    assert r.info("stats")["total_commands_processed"] > 10
    assert r.execute_command("CONFIG", "RESETSTAT") == b"OK"
    stats = r.info("stats")
    assert stats["total_commands_processed"] == 1  # the INFO itself, as Redis counts
    assert stats["keyspace_misses"] == 0 and stats["expired_keys"] == 0
    assert err(r, "CONFIG", "RESETSTAT", "x") == "wrong number of arguments for 'config|resetstat' command"


def test_config_help(r):
    lines = r.execute_command("CONFIG", "HELP")
    assert lines[0] == b"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"RESETSTAT" in lines and b"REWRITE" in lines


# ---- DEBUG ----

DEBUG_DENIED = ("DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it "
                "from a local connection, otherwise you need to set this option in the configuration file, and "
                "then restart the server.")


def test_debug_disabled_by_default(r):
    assert err(r, "DEBUG", "SLEEP", "0") == DEBUG_DENIED
    assert err(r, "DEBUG") == "wrong number of arguments for 'debug' command"


@pytest.mark.parametrize("mode", ["yes", "local"])
def test_debug_sleep(spawn, mode):
    s = spawn("--enable-debug-command", mode)
    c = s.new_client()
    assert c.execute_command("DEBUG", "SLEEP", "0") == b"OK"
    t = time.time()
    assert c.execute_command("DEBUG", "SLEEP", "0.2") == b"OK"
    assert time.time() - t >= 0.19
    assert c.execute_command("DEBUG", "SLEEP", "abc") == b"OK"  # strtod: sleeps 0 s
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("DEBUG", "NOSUCH")
    assert str(e.value).startswith("unknown subcommand")
    c.close()


# ---- SHUTDOWN ----

def test_shutdown_errors(r):
    assert err(r, "SHUTDOWN", "foo") == "syntax error"
    assert err(r, "SHUTDOWN", "NOSAVE", "SAVE") == "syntax error"
    assert err(r, "SHUTDOWN", "ABORT") == "No shutdown in progress."
    assert r.ping()


def test_shutdown_exits(spawn):
    s = spawn()
    c = RawConn(s)
    assert c.call("PING") == ("+", "PONG")
    c.send("SHUTDOWN", "NOSAVE")
    assert c.closed_within(5.0)
    c.close()
    assert s.proc.wait(5) == 0
    with pytest.raises(OSError):
        socket.create_connection((s.host, s.port), timeout=1).close()
