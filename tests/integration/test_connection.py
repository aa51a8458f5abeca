"""The connection family: PING ECHO SELECT HELLO QUIT RESET TIME and CLIENT
(ID SETNAME GETNAME INFO LIST KILL REPLY NO-EVICT HELP), in RESP2 and RESP3.

redis-py 4.3 has no RESP3, so protocol-level checks go through RawConn, a
socket that sends commands and reads one typed reply at a time. Every
expectation also runs against redis-server 7.0.

CLIENT KILL in shoal marks the connection and its own shard closes it (it
may live on another thread), so tests wait up to a second for the close."""
import socket
import time

import pytest
import redis


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RawConn:
    """A raw RESP connection. read() returns (type, value): '+' str, '-' str,
    ':' int, '$' bytes, '_' None, '*' / '~' / '>' list, '%' list of pairs,
    '=' bytes (verbatim, with its 'txt:' prefix), ',' str, '#' bool; a RESP2
    null bulk or array is ('$', None) / ('*', None)."""

    def __init__(self, server, timeout=5, sock=None):
        self.sock = sock or socket.create_connection((server.host, server.port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.buf = b""
        self.used = 0  # bytes of buf consumed by complete replies

    def close(self):
        self.sock.close()

    def send(self, *args):
        self.sock.sendall(encode(*args))

    def call(self, *args):
        self.send(*args)
        return self.read()

    def call_bytes(self, *args):
        """The exact bytes of the reply to one command."""
        self.send(*args)
        start = self.used
        self.read()
        return self.buf[start:self.used]

    def _fill(self):
        d = self.sock.recv(65536)
        if not d:
            raise EOFError("connection closed by the server")
        self.buf += d

    def _line(self):
        while True:
            end = self.buf.find(b"\r\n", self.used)
            if end >= 0:
                line = self.buf[self.used:end]
                self.used = end + 2
                return line
            self._fill()

    def _bytes(self, n):
        while len(self.buf) < self.used + n + 2:
            self._fill()
        data = self.buf[self.used:self.used + n]
        self.used += n + 2
        return data

    def read(self):
        line = self._line()
        t, rest = chr(line[0]), line[1:]
        if t in "+-,":
            return t, rest.decode()
        if t == ":":
            return t, int(rest)
        if t == "_":
            return t, None
        if t == "#":
            return t, rest == b"t"
        if t in "$=":
            n = int(rest)
            return t, None if n < 0 else self._bytes(n)
        if t in "*~>":
            n = int(rest)
            return t, None if n < 0 else [self.read() for _ in range(n)]
        if t == "%":
            return t, [(self.read(), self.read()) for _ in range(int(rest))]
        raise AssertionError("bad reply type %r" % line)

    def closed_within(self, seconds):
        """True when the server closes the connection within `seconds`."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.time()))
            try:
                if not self.sock.recv(65536):
                    return True
            except socket.timeout:
                return False
            except ConnectionResetError:
                return True
        return False


def plain(v):
    """A typed reply without its types: maps become dicts of plain values."""
    t, x = v
    if t in "*~>" and x is not None:
        return [plain(e) for e in x]
    if t == "%":
        return {plain(k): plain(e) for k, e in x}
    return x


@pytest.fixture
def conn(server, r):
    c = RawConn(server)
    yield c
    c.close()


@pytest.fixture(autouse=True)
def raw_replies(r):
    """Exact replies: no redis-py conversions."""
    r.response_callbacks.clear()


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def wait_for(pred, seconds=1.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


# ---- PING ECHO TIME ----

def test_ping_echo(conn):
    assert conn.call_bytes("PING") == b"+PONG\r\n"
    assert conn.call_bytes("PING", "hi") == b"$2\r\nhi\r\n"
    assert conn.call_bytes("ECHO", "") == b"$0\r\n\r\n"
    assert conn.call_bytes("PING", "a", "b") == b"-ERR wrong number of arguments for 'ping' command\r\n"
    assert conn.call_bytes("ECHO") == b"-ERR wrong number of arguments for 'echo' command\r\n"
    conn.call("HELLO", "3")
    assert conn.call_bytes("PING") == b"+PONG\r\n"
    assert conn.call_bytes("ECHO", "x") == b"$1\r\nx\r\n"


def test_time(r):
    sec, usec = r.execute_command("TIME")
    assert abs(int(sec) - time.time()) < 5
    assert 0 <= int(usec) < 1000000
    assert err(r, "TIME", "x") == "wrong number of arguments for 'time' command"


# ---- HELLO and RESP3 ----

def test_hello3_map(conn):
    t, pairs = conn.call("HELLO", "3")
    assert t == "%"
    assert [plain(k) for k, _ in pairs] == [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]
    m = plain((t, pairs))
    assert m[b"server"] == b"redis"
    assert m[b"version"] == b"7.0.15"
    assert m[b"proto"] == 3
    assert m[b"mode"] == b"standalone"
    assert m[b"role"] == b"master"
    assert m[b"modules"] == []
    assert m[b"id"] == plain(conn.call("CLIENT", "ID"))
    assert conn.call_bytes("HELLO", "3")[:4] == b"%7\r\n"


def test_hello2_flat_array(r):
    reply = r.execute_command("HELLO", "2")
    assert len(reply) == 14
    m = dict(zip(reply[::2], reply[1::2]))
    assert m[b"proto"] == 2 and m[b"version"] == b"7.0.15" and m[b"modules"] == []
    assert m[b"id"] == r.execute_command("CLIENT", "ID")


def test_null_resp2_vs_resp3(conn):
    assert conn.call_bytes("GET", "missing") == b"$-1\r\n"
    assert conn.call_bytes("CLIENT", "GETNAME") == b"$-1\r\n"
    conn.call("HELLO", "3")
    assert conn.call_bytes("GET", "missing") == b"_\r\n"
    assert conn.call_bytes("CLIENT", "GETNAME") == b"_\r\n"
    conn.call("HELLO", "2")
    assert conn.call_bytes("GET", "missing") == b"$-1\r\n"


def test_hello_errors(conn):
    assert conn.call_bytes("HELLO", "4") == b"-NOPROTO unsupported protocol version\r\n"
    assert conn.call_bytes("HELLO", "1") == b"-NOPROTO unsupported protocol version\r\n"
    assert conn.call_bytes("HELLO", "abc") == b"-ERR Protocol version is not an integer or out of range\r\n"
    assert conn.call_bytes("HELLO", "3", "foo") == b"-ERR Syntax error in HELLO option 'foo'\r\n"
    assert conn.call_bytes("HELLO", "3", "auth", "default") == b"-ERR Syntax error in HELLO option 'auth'\r\n"
    assert conn.call_bytes("HELLO", "3", "setname") == b"-ERR Syntax error in HELLO option 'setname'\r\n"
    assert conn.call_bytes("HELLO", "3", "auth", "nosuchuser", "pw") == \
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    assert conn.call_bytes("HELLO", "3", "setname", "a b") == \
        b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n"
    # none of the failed HELLOs switched the protocol
    assert conn.call_bytes("GET", "missing") == b"$-1\r\n"


def test_hello_auth_and_setname(conn):
    t, _ = conn.call("HELLO", "3", "AUTH", "default", "anything", "SETNAME", "hello-name")
    assert t == "%"
    assert conn.call("CLIENT", "GETNAME") == ("$", b"hello-name")
    t, _ = conn.call("HELLO")  # no version: keeps the protocol
    assert t == "%"


# ---- SELECT QUIT RESET ----

def test_select(r):
    assert r.execute_command("SELECT", "15") == b"OK"
    assert err(r, "SELECT", "16") == "DB index is out of range"
    assert err(r, "SELECT", "-1") == "DB index is out of range"
    assert err(r, "SELECT", "abc") == "value is not an integer or out of range"
    assert err(r, "SELECT", "1.5") == "value is not an integer or out of range"
    assert err(r, "SELECT") == "wrong number of arguments for 'select' command"


def test_select_isolates_databases(r):
    r.execute_command("SELECT", "3")
    r.set("k", "in3")
    r.execute_command("SELECT", "0")
    assert r.get("k") is None
    r.execute_command("SELECT", "3")
    assert r.get("k") == b"in3"
    assert b" db=3 " in r.execute_command("CLIENT", "INFO")


def test_quit_closes_after_reply(server):
    s = socket.create_connection((server.host, server.port), timeout=3)
    s.sendall(encode("QUIT") + encode("PING"))
    got = b""
    while True:
        d = s.recv(1024)
        if not d:
            break
        got += d
    s.close()
    assert got == b"+OK\r\n"


def test_reset(conn):
    conn.call("SELECT", "2")
    conn.call("CLIENT", "SETNAME", "before-reset")
    conn.call("HELLO", "3")
    conn.call("CLIENT", "NO-EVICT", "on")
    assert conn.call_bytes("RESET") == b"+RESET\r\n"
    assert conn.call_bytes("CLIENT", "GETNAME") == b"$-1\r\n"  # RESP2 again
    info = plain(conn.call("CLIENT", "INFO")).decode()
    assert " db=0 " in info and " name= " in info and info.rstrip().endswith("resp=2")
    assert conn.call_bytes("RESET", "x") == b"-ERR wrong number of arguments for 'reset' command\r\n"


def test_reset_turns_replies_back_on(conn):
    conn.send("CLIENT", "REPLY", "OFF")
    assert conn.call_bytes("RESET") == b"+RESET\r\n"
    assert conn.call_bytes("PING") == b"+PONG\r\n"


# ---- CLIENT ID SETNAME GETNAME INFO ----

def test_client_id(r, server):
    a = r.execute_command("CLIENT", "ID")
    assert isinstance(a, int) and a > 0
    other = server.new_client()
    b = other.execute_command("CLIENT", "ID")
    other.close()
    assert b != a
    assert r.execute_command("CLIENT", "ID") == a
    assert err(r, "CLIENT", "ID", "x") == "wrong number of arguments for 'client|id' command"


def test_client_setname_getname(r):
    assert r.execute_command("CLIENT", "GETNAME") is None
    assert r.execute_command("CLIENT", "SETNAME", "worker-1") == b"OK"
    assert r.execute_command("CLIENT", "GETNAME") == b"worker-1"
    for bad in ("a b", "a\nb", "caf\xe9"):
        assert err(r, "CLIENT", "SETNAME", bad) == \
            "Client names cannot contain spaces, newlines or special characters."
    assert r.execute_command("CLIENT", "GETNAME") == b"worker-1"
    assert r.execute_command("CLIENT", "SETNAME", "") == b"OK"
    assert r.execute_command("CLIENT", "GETNAME") is None
    assert err(r, "CLIENT", "SETNAME") == "wrong number of arguments for 'client|setname' command"


LIST_FIELDS = ["id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub", "multi",
               "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem",
               "events", "cmd", "user", "redir", "resp"]


def fields(line):
    return [kv.split("=", 1) for kv in line.split(" ")]


def test_client_info(r):
    r.execute_command("CLIENT", "SETNAME", "info-me")
    line = r.execute_command("CLIENT", "INFO").decode()
    assert line.endswith("\n") and line.count("\n") == 1
    f = fields(line.rstrip("\n"))
    assert [k for k, _ in f] == LIST_FIELDS
    d = dict(f)
    assert d["id"] == str(r.execute_command("CLIENT", "ID"))
    assert d["name"] == "info-me"
    assert d["cmd"] == "client|info"
    assert d["user"] == "default" and d["resp"] == "2" and d["db"] == "0" and d["flags"] == "N"
    host, port = d["addr"].rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0


def test_client_info_resp3_is_verbatim(conn):
    conn.call("HELLO", "3")
    t, v = conn.call("CLIENT", "INFO")
    assert t == "=" and v.startswith(b"txt:id=") and v.endswith(b" resp=3\n")


def client_lines(r, *args):
    text = r.execute_command("CLIENT", "LIST", *args).decode()
    assert text == "" or text.endswith("\n")
    return [dict(fields(l)) for l in text.splitlines()]


def test_client_list(r, server):
    other = server.new_client()
    other.execute_command("CLIENT", "SETNAME", "the-other")
    other_id = other.execute_command("CLIENT", "ID")
    my_id = r.execute_command("CLIENT", "ID")
    lines = client_lines(r)
    ids = {int(l["id"]) for l in lines}
    assert {my_id, other_id} <= ids
    line = [l for l in lines if int(l["id"]) == other_id][0]
    assert line["name"] == "the-other"
    assert list(line) == LIST_FIELDS
    me = [l for l in lines if int(l["id"]) == my_id][0]
    assert me["cmd"] == "client|list"
    assert [int(l["id"]) for l in client_lines(r, "ID", other_id)] == [other_id]
    assert sorted(int(l["id"]) for l in client_lines(r, "ID", other_id, my_id, 999999)) == \
        sorted([my_id, other_id])
    assert {int(l["id"]) for l in client_lines(r, "TYPE", "normal")} >= {my_id, other_id}
    assert client_lines(r, "TYPE", "pubsub") == []
    assert client_lines(r, "ID", 0) == []
    other.close()


def test_client_list_errors(r):
    assert err(r, "CLIENT", "LIST", "TYPE", "foo") == "Unknown client type 'foo'"
    assert err(r, "CLIENT", "LIST", "ID", "abc") == "Invalid client ID"
    assert err(r, "CLIENT", "LIST", "ID", "1", "abc") == "Invalid client ID"
    assert err(r, "CLIENT", "LIST", "foo") == "syntax error"
    assert err(r, "CLIENT", "LIST", "ID") == "syntax error"


def test_client_list_many_ids(r):
    my_id = r.execute_command("CLIENT", "ID")
    ids = list(range(my_id + 1000, my_id + 1100)) + [my_id]
    assert [int(l["id"]) for l in client_lines(r, "ID", *ids)] == [my_id]


# ---- CLIENT KILL ----

def victim(server):
    """A raw connection and its client id."""
    c = RawConn(server)
    return c, plain(c.call("CLIENT", "ID"))


def test_client_kill_by_id(r, server):
    c, cid = victim(server)
    assert r.execute_command("CLIENT", "KILL", "ID", cid) == 1
    assert c.closed_within(1.0)
    c.close()
    assert wait_for(lambda: cid not in {int(l["id"]) for l in client_lines(r)})
    assert r.execute_command("CLIENT", "KILL", "ID", cid) == 0
    assert r.ping()


def test_client_kill_by_addr(r, server):
    c, cid = victim(server)
    addr = [l["addr"] for l in client_lines(r) if int(l["id"]) == cid][0]
    assert r.execute_command("CLIENT", "KILL", "ADDR", addr) == 1
    assert c.closed_within(1.0)
    c.close()
    assert r.execute_command("CLIENT", "KILL", "ADDR", "1.2.3.4:5") == 0


def test_client_kill_legacy_form(r, server):
    c, cid = victim(server)
    addr = [l["addr"] for l in client_lines(r) if int(l["id"]) == cid][0]
    assert r.execute_command("CLIENT", "KILL", addr) == b"OK"
    assert c.closed_within(1.0)
    c.close()
    assert err(r, "CLIENT", "KILL", "1.2.3.4:5") == "No such client"


def test_client_kill_skipme(server):
    c, cid = victim(server)
    assert c.call("CLIENT", "KILL", "ID", cid) == (":", 0)  # SKIPME yes by default
    assert c.call("PING") == ("+", "PONG")
    assert c.call("CLIENT", "KILL", "ID", cid, "SKIPME", "no") == (":", 1)
    assert c.closed_within(1.0)
    c.close()


def test_client_kill_several_filters(r, server):
    c, cid = victim(server)
    addr = [l["addr"] for l in client_lines(r) if int(l["id"]) == cid][0]
    assert r.execute_command("CLIENT", "KILL", "ID", cid, "ADDR", "1.2.3.4:5") == 0  # both must match
    assert r.execute_command("CLIENT", "KILL", "ID", cid, "ADDR", addr, "TYPE", "normal", "USER", "default") == 1
    assert c.closed_within(1.0)
    c.close()


def test_client_kill_errors(r):
    assert err(r, "CLIENT", "KILL", "ID", "abc") == "client-id should be greater than 0"
    assert err(r, "CLIENT", "KILL", "ID", "0") == "client-id should be greater than 0"
    assert err(r, "CLIENT", "KILL", "foo", "bar") == "syntax error"
    assert err(r, "CLIENT", "KILL", "ID", "1", "foo") == "syntax error"
    assert err(r, "CLIENT", "KILL", "SKIPME", "maybe") == "syntax error"
    assert err(r, "CLIENT", "KILL", "TYPE", "foo") == "Unknown client type 'foo'"
    assert err(r, "CLIENT", "KILL", "USER", "nosuchuser") == "No such user 'nosuchuser'"
    assert err(r, "CLIENT", "KILL") == "wrong number of arguments for 'client|kill' command"


# ---- CLIENT REPLY NO-EVICT HELP ----

def test_client_reply_off_on(server):
    s = socket.create_connection((server.host, server.port), timeout=3)
    s.sendall(encode("CLIENT", "REPLY", "OFF") + encode("PING", "a") + encode("SET", "k", "v") +
              encode("CLIENT", "REPLY", "ON") + encode("GET", "k"))
    want = b"+OK\r\n$1\r\nv\r\n"
    got = b""
    while len(got) < len(want):
        got += s.recv(1024)
    s.close()
    assert got == want


def test_client_reply_skip(server):
    s = socket.create_connection((server.host, server.port), timeout=3)
    s.sendall(encode("CLIENT", "REPLY", "SKIP") + encode("PING", "a") + encode("PING", "b") +
              encode("CLIENT", "REPLY", "SKIP") + encode("CLIENT", "REPLY", "ON") + encode("PING", "c"))
    want = b"$1\r\nb\r\n+OK\r\n$1\r\nc\r\n"
    got = b""
    while len(got) < len(want):
        got += s.recv(1024)
    s.close()
    assert got == want


def test_client_reply_errors(r):
    assert err(r, "CLIENT", "REPLY", "foo") == "syntax error"
    assert err(r, "CLIENT", "REPLY") == "wrong number of arguments for 'client|reply' command"


def test_client_no_evict(r):
    assert r.execute_command("CLIENT", "NO-EVICT", "on") == b"OK"
    assert r.execute_command("CLIENT", "NO-EVICT", "OFF") == b"OK"
    assert err(r, "CLIENT", "NO-EVICT", "foo") == "syntax error"


def test_client_help_and_unknown(r):
    lines = r.execute_command("CLIENT", "HELP")
    assert lines[0] == b"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    for entry in (b"ID", b"INFO", b"HELP", b"    Return the ID of the current connection."):
        assert entry in lines
    assert err(r, "CLIENT", "foo") == "unknown subcommand 'foo'. Try CLIENT HELP."
    assert err(r, "CLIENT") == "wrong number of arguments for 'client' command"
