"""Socket-level behaviour of accepted connections: keepalive as set by
tcp-keepalive (also after CONFIG SET), the local address CLIENT INFO shows,
and replies far larger than the socket takes at once (partial writes, then
EPOLLOUT).

The server side of a connection is found in /proc/net/tcp by the client's
port: its `tr` field is 2 while a keepalive timer is armed, and tm->when
gives the jiffies left (USER_HZ, 100 a second)."""
import socket



def server_side_timer(server, client_port):
    """(timer kind, seconds left) of the server's socket for client_port."""
    want_local = "0100007F:%04X" % server.port
    want_remote = "0100007F:%04X" % client_port
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            p = line.split()
            if p[1] == want_local and p[2] == want_remote:
                tr, when = p[5].split(":")
                return int(tr, 16), int(when, 16) / 100.0
    raise AssertionError("no server socket for client port %d" % client_port)


def fresh_conn(server):
    s = socket.create_connection((server.host, server.port), timeout=5)
    s.sendall(b"PING\r\n")
    assert s.recv(64) == b"+PONG\r\n"  # accepted and served
    return s


def test_keepalive_follows_tcp_keepalive(spawn):
    srv = spawn("--tcp-keepalive", "100")
    s = fresh_conn(srv)
    kind, left = server_side_timer(srv, s.getsockname()[1])
    assert kind == 2 and 90 < left <= 100
    c = srv.new_client()
    assert c.config_set("tcp-keepalive", "0")
    s2 = fresh_conn(srv)
    assert server_side_timer(srv, s2.getsockname()[1])[0] == 0
    assert c.config_set("tcp-keepalive", "40")
    s3 = fresh_conn(srv)
    kind, left = server_side_timer(srv, s3.getsockname()[1])
    assert kind == 2 and 30 < left <= 40
    for x in (s, s2, s3):
        x.close()
    c.close()


def test_client_info_laddr(r, server):
    line = r.execute_command("CLIENT", "INFO").decode()
    d = dict(kv.split("=", 1) for kv in line.rstrip("\n").split(" "))
    assert d["laddr"] == "127.0.0.1:%d" % server.port


def test_large_pipelined_replies_arrive_whole(r, server):
    # 40 replies of ~1 MB each are queued in one turn; every byte must
    # arrive, in order, while another client is still served.
    value = b"".join(b"%07d" % i for i in range(150000))  # 1,050,000 bytes
    r.set("big", value)
    r.rpush("l", *[b"e%05d" % i for i in range(5000)])
    s = socket.create_connection((server.host, server.port), timeout=20)
    s.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * 20 + b"*4\r\n$6\r\nLRANGE\r\n$1\r\nl\r\n$1\r\n0\r\n$2\r\n-1\r\n" * 20)
    other = server.new_client()
    assert other.ping()
    one_get = b"$%d\r\n%s\r\n" % (len(value), value)
    one_range = b"*5000\r\n" + b"".join(b"$6\r\ne%05d\r\n" % i for i in range(5000))
    want = one_get * 20 + one_range * 20
    got = bytearray()
    while len(got) < len(want):
        chunk = s.recv(1 << 20)
        assert chunk, "connection closed after %d of %d bytes" % (len(got), len(want))
        got += chunk
    assert bytes(got) == want
    s.sendall(b"PING\r\n")
    assert s.recv(64) == b"+PONG\r\n"
    s.close()
    other.close()
