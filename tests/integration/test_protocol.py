"""Protocol-level tests over raw sockets: Redis 7.0's protocol errors (exact
bytes, then the connection closes), inline commands, limits (64 KB inline
line and count strings, proto-max-bulk-len, client-query-buffer-limit),
big pipelines and commands split across many writes. After every bad input
the server must still serve other clients and keep their data."""
import socket
import time

import pytest


def read_all(s, timeout=5):
    """Everything the server sends until it closes; (data, closed)."""
    s.settimeout(timeout)
    chunks = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            return b"".join(chunks), False
        except ConnectionResetError:
            return b"".join(chunks), True
        if not d:
            return b"".join(chunks), True
        chunks.append(d)
    return b"".join(chunks), False


def read_exactly(s, n, timeout=10):
    s.settimeout(timeout)
    data = b""
    while len(data) < n:
        d = s.recv(max(65536, n - len(data)))
        if not d:
            break
        data += d
    return data


def expect_error_close(server, payload, reply):
    """Sends payload; the server must answer exactly `reply` and close."""
    s = server.raw()
    try:
        s.sendall(payload)
        data, closed = read_all(s)
    finally:
        s.close()
    assert data == reply
    assert closed


def expect_reply_open(server, payload, reply, sock=None):
    """Sends payload; the server must answer exactly `reply` and keep the
    connection usable (a PING afterwards gets PONG)."""
    s = sock or server.raw()
    try:
        s.sendall(payload)
        assert read_exactly(s, len(reply)) == reply
        s.sendall(b"PING\r\n")
        assert read_exactly(s, 7) == b"+PONG\r\n"
    finally:
        if sock is None:
            s.close()


@pytest.fixture
def keeper(r):
    """Data of another client that every bad input must leave alone."""
    r.set("keeper", "still here")
    yield r
    assert r.get("keeper") == b"still here"
    assert r.ping() is True


PE = b"-ERR Protocol error: "


@pytest.mark.parametrize("payload", [
    b"*abc\r\n",
    b"*3000000000\r\n",
    b"*2147483648\r\n",
    b"*\r\n",
    b"*+1\r\n",
    b"*01\r\n",
    b"*1 \r\n",
    b"*-0\r\n",
])
def test_invalid_multibulk_length(server, keeper, payload):
    expect_error_close(server, payload, PE + b"invalid multibulk length\r\n")


@pytest.mark.parametrize("payload", [
    b"*1\r\n$-3\r\n",
    b"*1\r\n$-1\r\n",
    b"*1\r\n$abc\r\n",
    b"*1\r\n$\r\n",
    b"*1\r\n$04\r\n",
    b"*1\r\n$+4\r\n",
    b"*2\r\n$3\r\nGET\r\n$2000000000000\r\n",
])
def test_invalid_bulk_length(server, keeper, payload):
    expect_error_close(server, payload, PE + b"invalid bulk length\r\n")


def test_bulk_over_proto_max_bulk_len(spawn):
    srv = spawn("--proto-max-bulk-len", "1mb")
    c = srv.new_client()
    c.set("keeper", "v")
    # One byte over the limit is refused before any of it arrives ...
    expect_error_close(srv, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n", PE + b"invalid bulk length\r\n")
    expect_error_close(srv, b"*2\r\n$3\r\nGET\r\n$2000000\r\n", PE + b"invalid bulk length\r\n")
    # ... exactly the limit is fine.
    big = b"x" * (1024 * 1024)
    expect_reply_open(srv, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048576\r\n" + big + b"\r\n", b"+OK\r\n")
    assert c.strlen("k") == 1024 * 1024
    assert c.get("keeper") == b"v"


@pytest.mark.parametrize("payload,got", [
    (b"*1\r\nx3\r\nfoo\r\n", b"x"),
    (b"*2\r\n$3\r\nGET\r\n:1\r\n", b":"),
    (b"*1\r\n*1\r\n", b"*"),
    (b"*1\r\n\xff\r\n", b"\xff"),
    (b"*1\r\n\r\n", b" "),  # the CR itself, shown as a space
])
def test_expected_dollar(server, keeper, payload, got):
    expect_error_close(server, payload, PE + b"expected '$', got '" + got + b"'\r\n")


@pytest.mark.parametrize("payload", [
    b'SET "a b\r\n',
    b"SET 'a\r\n",
    b'ECHO "a"b\r\n',
    b"ECHO 'a'b\r\n",
    b'ECHO a"b"c\r\n',
    b'ECHO "a\\\r\n',
])
def test_unbalanced_quotes(server, keeper, payload):
    expect_error_close(server, payload, PE + b"unbalanced quotes in request\r\n")


def test_inline_commands(server, keeper):
    expect_reply_open(server, b"SET a b\r\nGET a\r\n", b"+OK\r\n$1\r\nb\r\n")
    # LF alone ends a line too; spaces and tabs separate arguments.
    expect_reply_open(server, b"  SET\ta  c \nGET a\n", b"+OK\r\n$1\r\nc\r\n")
    # Quoting and escapes as redis-cli.
    expect_reply_open(server, b'SET "a b" "x\\x41\\n\\"y"\r\nGET "a b"\r\n', b'+OK\r\n$5\r\nxA\n"y\r\n')
    expect_reply_open(server, b"SET 'c d' 'it\\'s'\r\nGET 'c d'\r\n", b"+OK\r\n$4\r\nit's\r\n")
    expect_reply_open(server, b'ECHO ""\r\nECHO \'\'\r\n', b"$0\r\n\r\n$0\r\n\r\n")
    # A CR inside the line is a separator.
    expect_reply_open(server, b"PING\rPING\n", b"$4\r\nPING\r\n")


def test_inline_and_multibulk_mixed(server, keeper):
    payload = (b"SET m 1\r\n*2\r\n$4\r\nINCR\r\n$1\r\nm\r\nINCR m\r\n"
               b"*2\r\n$3\r\nGET\r\n$1\r\nm\r\n")
    expect_reply_open(server, payload, b"+OK\r\n:2\r\n:3\r\n$1\r\n3\r\n")


def test_too_big_inline_request(server, keeper):
    expect_error_close(server, b"A" * 70000, PE + b"too big inline request\r\n")


def test_inline_at_the_limit_still_waits(server, keeper):
    # 65536 bytes without a newline are not too many yet; the newline
    # then completes the command.
    s = server.raw()
    try:
        s.sendall(b"ECHO " + b"a" * (65536 - 5))
        time.sleep(0.2)
        expect_reply_open(server, b"\r\n", b"$65531\r\n" + b"a" * 65531 + b"\r\n", sock=s)
    finally:
        s.close()


def test_too_big_count_strings(server, keeper):
    expect_error_close(server, b"*" + b"1" * 70000, PE + b"too big mbulk count string\r\n")
    expect_error_close(server, b"*1\r\n$" + b"1" * 70000, PE + b"too big bulk count string\r\n")


def test_nul_hides_the_line_end(server, keeper):
    # Redis finds line ends with strchr: after a NUL the CRLF is not seen,
    # so the command waits for more until the 64 KB limit.
    expect_error_close(server, b"ECHO a\x00b\r\nPING\r\n" + b"x" * 70000, PE + b"too big inline request\r\n")
    expect_error_close(server, b"*1\r\n$4\x00\r\nPING\r\n" + b"x" * 70000, PE + b"too big bulk count string\r\n")


def test_query_buffer_limit(spawn):
    srv = spawn("--client-query-buffer-limit", "1mb")
    c = srv.new_client()
    c.set("keeper", "v")
    s = srv.raw()
    closed = False
    try:
        # A 2 MB argument, of which 1.5 MB arrive: over the limit while
        # the command is still incomplete.
        s.sendall(b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$2000000\r\n")
        chunk = b"y" * 65536
        for _ in range(24):
            s.sendall(chunk)
        data, closed = read_all(s)
    except (BrokenPipeError, ConnectionResetError):
        data, closed = b"", True
    finally:
        s.close()
    # Redis 7.0 closes without a reply.
    assert data == b""
    assert closed
    assert c.get("keeper") == b"v"
    assert c.exists("big") == 0
    expect_reply_open(srv, b"GET keeper\r\n", b"$1\r\nv\r\n")


def test_pipeline_10000_commands_one_write(server, keeper):
    cmds, expect = [], []
    for i in range(5000):
        k, v = b"pk:%d" % i, b"%d" % i
        cmds.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
        cmds.append(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k))
        expect.append(b"+OK\r\n$%d\r\n%s\r\n" % (len(v), v))
    expect_reply_open(server, b"".join(cmds), b"".join(expect))


def test_pipeline_10000_inline_commands(server, keeper):
    payload = b"DEL ctr\r\n" + b"INCR ctr\r\n" * 10000
    reply = b":0\r\n" + b"".join(b":%d\r\n" % i for i in range(1, 10001))
    expect_reply_open(server, payload, reply)


def test_command_split_across_tiny_writes(server, keeper):
    val = bytes(range(256)) * 2
    payload = (b"*3\r\n$3\r\nSET\r\n$5\r\ntiny1\r\n$512\r\n" + val + b"\r\n"
               b"GET tiny1\r\n")
    s = server.raw()
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(payload)):
            s.sendall(payload[i:i + 1])
            if i % 64 == 0:
                time.sleep(0.002)
        assert read_exactly(s, 5 + 6 + 512 + 2) == b"+OK\r\n$512\r\n" + val + b"\r\n"
    finally:
        s.close()


def test_big_argument_in_pieces(server, keeper):
    val = b"0123456789abcdef" * 65536  # 1 MB
    payload = b"*3\r\n$3\r\nSET\r\n$4\r\nbig1\r\n$%d\r\n" % len(val) + val + b"\r\nSTRLEN big1\r\n"
    s = server.raw()
    try:
        for at in range(0, len(payload), 150000):
            s.sendall(payload[at:at + 150000])
            time.sleep(0.01)
        assert read_exactly(s, 5 + 10) == b"+OK\r\n:1048576\r\n"
    finally:
        s.close()
    assert keeper.get("big1") == val


def test_empty_lines_and_empty_multibulk_ignored(server, keeper):
    expect_reply_open(server, b"\r\n\n   \r\n*0\r\n*-1\r\n*-5\r\nPING\r\n", b"+PONG\r\n")


def test_unknown_command_keeps_connection(server, keeper):
    expect_reply_open(server, b"NOSUCH x\r\nPING\r\n",
                      b"-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n+PONG\r\n")
    expect_reply_open(server, b"*2\r\n$3\r\nFOO\r\n$3\r\nbar\r\n",
                      b"-ERR unknown command 'FOO', with args beginning with: 'bar' \r\n")
    # Other RESP types are not requests: they are inline command names.
    expect_reply_open(server, b"+PING\r\n", b"-ERR unknown command '+PING', with args beginning with: \r\n")


def test_commands_before_an_error_run_and_after_do_not(server, keeper):
    keeper.delete("pa", "pb")
    expect_error_close(server, b"SET pa 1\r\n*abc\r\nSET pb 1\r\n",
                       b"+OK\r\n" + PE + b"invalid multibulk length\r\n")
    assert keeper.get("pa") == b"1"
    assert keeper.get("pb") is None


def test_error_after_a_pipeline_over_many_keys(server, keeper):
    # With several shards some replies come back from other threads; the
    # protocol error must still come last, after every earlier reply.
    cmds = b"".join(b"SET ek:%d %d\r\n" % (i, i) for i in range(200))
    expect_error_close(server, cmds + b"*1\r\n$-3\r\n", b"+OK\r\n" * 200 + PE + b"invalid bulk length\r\n")
    assert keeper.get("ek:199") == b"199"


def test_unchecked_byte_after_cr(server, keeper):
    # Like Redis, the byte after a header's CR is taken as LF unchecked, and
    # a bulk's trailing CRLF is skipped without looking.
    expect_reply_open(server, b"*1\rX$4\r\nPING\r\n", b"+PONG\r\n")
    expect_reply_open(server, b"*2\r\n$4\r\nECHO\r\n$2\r\nabXY", b"$2\r\nab\r\n")
