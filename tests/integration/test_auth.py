"""Authentication: requirepass, AUTH, HELLO AUTH, NOAUTH/WRONGPASS, the
limits on unauthenticated clients, RESET, redaction and protected mode.
Each test runs on a private server (spawn) so passwords never leak into
other tests."""
import socket
import time

import pytest

from helpers import raw_exchange
from resp_client import RespError, raw

PASS = "s3cret"


@pytest.fixture
def srv(spawn):
    return spawn()


def client(srv, **kw):
    return raw(srv, **kw)


def with_pass(srv, password=PASS):
    """Sets requirepass through an already authenticated connection."""
    admin = client(srv)
    assert admin.cmd("CONFIG", "SET", "requirepass", password) == "OK"
    return admin


def err(c, *args):
    e = c.cmd(*args)
    assert isinstance(e, RespError), e
    return str(e)


def test_auth_without_password_configured(srv):
    c = client(srv)
    assert "any password configured for the default user" in err(c, "AUTH", "foo")
    assert err(c, "AUTH", "a", "b", "c") == "ERR syntax error"
    assert err(c, "AUTH", "nouser", "x") == "WRONGPASS invalid username-password pair or user is disabled."
    assert c.cmd("AUTH", "default", "anything") == "OK"  # nopass takes any password


def test_requirepass_noauth_and_wrongpass(srv):
    admin = with_pass(srv)
    assert admin.cmd("PING") == "PONG"  # connections made before stay authenticated
    c = client(srv)
    for cmd in (("SET", "k", "v"), ("PING",), ("GET", "k"), ("CLIENT", "ID")):
        assert err(c, *cmd) == "NOAUTH Authentication required."
    assert err(c, "AUTH", "wrong!") == "WRONGPASS invalid username-password pair or user is disabled."
    assert c.cmd("AUTH", PASS) == "OK"
    assert c.cmd("SET", "foo", "100") == "OK"
    assert c.cmd("INCR", "foo") == 101
    assert c.cmd("AUTH", "default", PASS) == "OK"
    admin.cmd("CONFIG", "SET", "requirepass", "")
    assert client(srv).cmd("PING") == "PONG"


def test_hello_auth_and_setname(srv):
    with_pass(srv)
    c = client(srv)
    e = err(c, "HELLO", "3")
    assert e.startswith("NOAUTH HELLO must be called with the client already authenticated")
    assert err(c, "HELLO", "3", "AUTH", "default", "bad") == \
        "WRONGPASS invalid username-password pair or user is disabled."
    r = c.cmd("HELLO", "2", "AUTH", "default", PASS, "SETNAME", "me")
    d = dict(zip(r[::2], r[1::2]))
    assert d["proto"] == 2 and d["server"] == "redis"
    assert c.cmd("CLIENT", "GETNAME") == "me"
    assert c.cmd("ACL", "WHOAMI") == "default"


def test_unauthenticated_limits(srv):
    with_pass(srv)
    out = raw_exchange(srv, b"*100\r\n", expect_close=True)
    assert b"Protocol error: unauthenticated multibulk length" in out
    out = raw_exchange(srv, b"*1\r\n$100000000\r\n", expect_close=True)
    assert b"Protocol error: unauthenticated bulk length" in out
    # once authenticated the usual limits apply
    s = srv.raw()
    s.sendall(b"AUTH %s\r\n*11\r\n$4\r\nMSET\r\n" % PASS.encode() + b"$1\r\na\r\n$1\r\nb\r\n" * 5)
    s.settimeout(3)
    got = b""
    while got.count(b"\r\n") < 2:
        d = s.recv(4096)
        if not d:
            break
        got += d
    s.close()
    assert got == b"+OK\r\n+OK\r\n"


def test_reset_returns_to_default_user(srv):
    c = client(srv)
    c.cmd("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@all")
    assert c.cmd("AUTH", "alice", "pw") == "OK"
    assert c.cmd("ACL", "WHOAMI") == "alice"
    assert c.cmd("RESET") == "RESET"
    assert c.cmd("ACL", "WHOAMI") == "default"
    # with a password, RESET leaves the connection unauthenticated
    c.cmd("AUTH", "alice", "pw")
    c.cmd("CONFIG", "SET", "requirepass", PASS)
    assert c.cmd("RESET") == "RESET"
    assert err(c, "GET", "x") == "NOAUTH Authentication required."


def test_passwords_never_in_slowlog_or_client_list(srv):
    c = client(srv)
    c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.cmd("ACL", "SETUSER", "bob", "on", ">hunter2", "~*", "+@all")
    c.cmd("SLOWLOG", "RESET")
    c.cmd("AUTH", "bob", "hunter2")
    c.cmd("HELLO", "2", "AUTH", "bob", "hunter2")
    c.cmd("CONFIG", "SET", "requirepass", "topsecret")
    entries = c.cmd("SLOWLOG", "GET", "10")
    args = [e[3] for e in entries]
    assert args, entries
    flat = " ".join(" ".join(a) for a in args)
    assert "hunter2" not in flat and "topsecret" not in flat
    assert ["auth", "(redacted)", "(redacted)"] in [[x.lower() if i == 0 else x for i, x in enumerate(a)]
                                                    for a in args]
    lst = c.cmd("CLIENT", "LIST")
    assert "hunter2" not in lst and "user=bob" in lst
    c.cmd("AUTH", "default", "topsecret")
    c.cmd("CONFIG", "SET", "requirepass", "")


def test_binary_safe_password_via_acl(srv):
    c = client(srv)
    c.cmd("ACL", "SETUSER", "bin", "on", b">abc\x00def", "+@all", "~*")
    other = client(srv)
    assert err(other, "AUTH", "bin", "abc") == "WRONGPASS invalid username-password pair or user is disabled."
    assert other.cmd("AUTH", "bin", b"abc\x00def") == "OK"


def raw_from(srv, source, payload):
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(3)
    s.connect((srv.host, srv.port))
    s.sendall(payload)
    got = b""
    deadline = time.time() + 3
    while time.time() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        got += d
        if got.endswith(b"\r\n"):
            break
    s.close()
    return got


def test_protected_mode_refuses_non_loopback_peer(spawn):
    """The peer's address is 127.0.0.2: outside loopback for Redis 7.0,
    which admits only 127.0.0.1 and ::1 in protected mode."""
    s = spawn("--protected-mode", "yes")
    got = raw_from(s, "127.0.0.2", b"PING\r\n")
    assert got.startswith(b"-DENIED Redis is running in protected mode because protected mode is enabled and no "
                          b"password is set for the default user.")
    assert b"4) Setup a an authentication password for the default user." in got
    assert raw_from(s, "127.0.0.1", b"PING\r\n") == b"+PONG\r\n"
    c = client(s)
    c.cmd("CONFIG", "SET", "protected-mode", "no")
    assert raw_from(s, "127.0.0.2", b"PING\r\n") == b"+PONG\r\n"
    c.cmd("CONFIG", "SET", "protected-mode", "yes")
    c.cmd("CONFIG", "SET", "requirepass", PASS)  # a password lifts the protection
    assert raw_from(s, "127.0.0.2", b"PING\r\n") == b"-NOAUTH Authentication required.\r\n"
    assert raw_from(s, "127.0.0.2", b"AUTH %s\r\nPING\r\n" % PASS.encode()).startswith(b"+OK\r\n")


def test_local_only_options_refuse_non_loopback_peer(spawn):
    """enable-debug-command and enable-protected-configs `local`: allowed
    from 127.0.0.1, refused from 127.0.0.2 (not local for Redis 7.0)."""
    s = spawn("--protected-mode", "no", "--enable-debug-command", "local", "--enable-protected-configs", "local")
    here, there = client(s), client(s, source="127.0.0.2")
    assert here.cmd("DEBUG", "SLEEP", "0") == "OK"
    assert there.cmd("DEBUG", "SLEEP", "0").startswith("ERR DEBUG command not allowed. If the enable-debug-command "
                                                       "option is set to \"local\", you can run it from a local "
                                                       "connection")
    assert here.cmd("CONFIG", "SET", "dbfilename", "a.rdb") == "OK"
    assert there.cmd("CONFIG", "SET", "dbfilename", "b.rdb") == \
        "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config"
    assert here.cmd("CONFIG", "GET", "dbfilename") == ["dbfilename", "a.rdb"]


def test_binary_passwords(srv):
    """Passwords are byte strings: a NUL byte in requirepass, an ACL
    SETUSER `>` rule or AUTH counts, in full, and CONFIG GET shows it."""
    admin = with_pass(srv, b"abc\x00def")
    c = client(srv)
    assert err(c, "AUTH", "abc") == "WRONGPASS invalid username-password pair or user is disabled."
    assert err(c, "AUTH", b"abc\x00de") == "WRONGPASS invalid username-password pair or user is disabled."
    assert c.cmd("AUTH", b"abc\x00def") == "OK"
    assert admin.cmd("CONFIG", "GET", "requirepass") == ["requirepass", "abc\x00def"]
    # a password differing only after the NUL is another password
    assert admin.cmd("CONFIG", "SET", "requirepass", b"abc\x00xyz") == "OK"
    assert err(client(srv), "AUTH", b"abc\x00def") == "WRONGPASS invalid username-password pair or user is disabled."
    assert client(srv).cmd("AUTH", b"abc\x00xyz") == "OK"
    assert admin.cmd("CONFIG", "SET", "requirepass", "abc") == "OK"
    assert client(srv).cmd("AUTH", "abc") == "OK"
    assert admin.cmd("ACL", "SETUSER", "bin", "on", b">p\x00q", "+@all") == "OK"
    assert err(client(srv), "AUTH", "bin", "p") == "WRONGPASS invalid username-password pair or user is disabled."
    assert client(srv).cmd("AUTH", "bin", b"p\x00q") == "OK"
    assert admin.cmd("CONFIG", "SET", "requirepass", "") == "OK"
    assert client(srv).cmd("PING") == "PONG"
