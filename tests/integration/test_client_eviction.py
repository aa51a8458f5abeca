"""Client eviction (maxmemory-clients): the directive's values and errors,
CONFIG GET's forms, clients with a big query buffer or a big unread reply
disconnected while a CLIENT NO-EVICT one survives, the largest clients
going first when CONFIG SET lowers the limit, INFO evicted_clients, and
the memory coming back. Each test has its own server (the limit is
global). Waits are bounded loops over the server's state, never timing
thresholds."""
import socket
import time

import pytest
import redis

MB = 1024 * 1024


def cfg_err(e):
    return "CONFIG SET failed (possibly related to argument 'maxmemory-clients') - " + e


def clients(c):
    """name -> CLIENT LIST fields, for named clients."""
    return {x["name"]: x for x in c.client_list() if x["name"]}


def wait_for(pred, rounds=200):
    """Polls pred up to `rounds` times (10 ms apart); True when it held."""
    for _ in range(rounds):
        if pred():
            return True
        time.sleep(0.01)
    return False


def named_socket(server, name):
    s = socket.create_connection((server.host, server.port), timeout=10)
    payload = b"*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$%d\r\n%s\r\n" % (len(name), name.encode())
    s.sendall(payload)
    assert s.recv(5) == b"+OK\r\n"
    return s


def send_command(s, *args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    s.sendall(out)


def closed_by_server(s, rounds=400):
    """Reads what is left until the server closes s; True when it did."""
    s.settimeout(0.05)
    for _ in range(rounds):
        try:
            d = s.recv(1 << 20)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return True
        if not d:
            return True
    return False


def no_evict_socket(server, name):
    s = named_socket(server, name)
    send_command(s, "CLIENT", "NO-EVICT", "on")
    assert s.recv(5) == b"+OK\r\n"
    return s


def with_big_key(server, limit):
    """The control client, a 1 MB key "big" and the limit set."""
    c = control(server)
    c.setrange("big", MB - 1, "v")
    c.config_set("maxmemory-clients", limit)
    return c


def control(server):
    c = server.new_client(decode_responses=True)
    c.client_setname("control")
    c.execute_command("CLIENT", "NO-EVICT", "on")
    return c


VALUES = [
    ("0", "0"), ("10%", "10%"), ("100%", "100%"), ("0%", "0"), ("1gb", "1073741824"), ("1GB", "1073741824"),
    ("1k", "1000"), ("10mb", "10485760"), ("128", "128"), ("00", "0"), ("", "0"),
]

ERRORS = [
    ("200%", "percentage argument must be less or equal to 100"),
    ("101%", "percentage argument must be less or equal to 100"),
    ("-1", "argument must be a memory or percent value"),
    ("-1%", "argument must be a memory or percent value"),
    ("abc", "argument must be a memory or percent value"),
    ("1.5%", "argument must be a memory or percent value"),
    ("05%", "argument must be a memory or percent value"),
    ("+5%", "argument must be a memory or percent value"),
    ("1gb%", "argument must be a memory or percent value"),
    ("%", "argument must be a memory or percent value"),
    ("0x10", "argument must be a memory or percent value"),
]


def test_config_values(spawn):
    c = spawn().new_client(decode_responses=True)
    assert c.config_get("maxmemory-clients") == {"maxmemory-clients": "0"}
    for value, shown in VALUES:
        assert c.config_set("maxmemory-clients", value) is True, value
        assert c.config_get("maxmemory-clients") == {"maxmemory-clients": shown}, value


def test_config_errors_keep_the_value(spawn):
    c = spawn().new_client(decode_responses=True)
    c.config_set("maxmemory-clients", "7%")
    for value, err in ERRORS:
        with pytest.raises(redis.ResponseError) as e:
            c.config_set("maxmemory-clients", value)
        assert str(e.value) == cfg_err(err), value
        assert c.config_get("maxmemory-clients") == {"maxmemory-clients": "7%"}
    # several pairs: a bad one puts back the good one before it
    with pytest.raises(redis.ResponseError):
        c.execute_command("CONFIG", "SET", "maxmemory-clients", "1mb", "maxmemory", "x")
    assert c.config_get("maxmemory-clients") == {"maxmemory-clients": "7%"}


def test_config_at_startup_and_info(spawn):
    s = spawn("--maxmemory-clients", "5%")
    c = s.new_client(decode_responses=True)
    assert c.config_get("maxmemory-clients") == {"maxmemory-clients": "5%"}
    assert c.config_get("maxmemory-client*") == {"maxmemory-clients": "5%"}
    assert c.info("stats")["evicted_clients"] == 0


def test_no_evict_flag_in_client_list(spawn):
    s = spawn()
    c = s.new_client(decode_responses=True)
    c.client_setname("me")
    assert clients(c)["me"]["flags"] == "N"
    c.execute_command("CLIENT", "NO-EVICT", "on")
    assert clients(c)["me"]["flags"] == "e"
    info = c.execute_command("CLIENT", "INFO")
    assert " flags=e " in info and " argv-mem=10 " in info  # "client" + "info"
    c.execute_command("CLIENT", "NO-EVICT", "off")
    assert clients(c)["me"]["flags"] == "N"


def test_big_query_buffer_evicted_no_evict_survives(spawn):
    s = spawn()
    c = control(s)
    c.config_set("maxmemory-clients", "1mb")
    keep = no_evict_socket(s, "keep")
    victim = named_socket(s, "victim")
    before = c.info("memory")["used_memory"]
    # an argument of 3 MB announced and partly sent: the query buffer is
    # sized for all of it, over the limit, and the client goes
    try:
        victim.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + b"v" * 200000)
    except OSError:
        pass  # closed while it was sending
    assert closed_by_server(victim)
    victim.close()
    assert wait_for(lambda: "victim" not in clients(c))
    assert c.info("stats")["evicted_clients"] == 1
    assert "keep" in clients(c) and "control" in clients(c)
    # its memory came back
    assert wait_for(lambda: c.info("memory")["used_memory"] < before + MB)
    # the same from the no-evict client: over the limit, and it stays
    keep.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + b"v" * 200000)
    assert wait_for(lambda: int(clients(c)["keep"]["tot-mem"]) > 3000000)
    assert clients(c)["keep"]["flags"] == "e"
    assert c.info("stats")["evicted_clients"] == 1
    # it finishes its command and is served
    keep.sendall(b"v" * (3000000 - 200000) + b"\r\n")
    keep.settimeout(10)
    assert keep.recv(5) == b"+OK\r\n"
    assert c.strlen("k") == 3000000
    keep.close()


def test_unread_replies_evicted_no_evict_survives(spawn):
    s = spawn()
    c = with_big_key(s, "4mb")
    keep = no_evict_socket(s, "keep")
    victim = named_socket(s, "victim")
    # 24 MB of replies each, more than the sockets hold, never read
    for sock in (keep, victim):
        sock.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * 24)
    assert closed_by_server(victim)
    assert wait_for(lambda: "victim" not in clients(c))
    assert c.info("stats")["evicted_clients"] == 1
    row = clients(c)["keep"]
    assert row["flags"] == "e"
    # the kept client reads every reply in full
    keep.settimeout(10)
    want = 24 * (len(b"$1048576\r\n") + MB + 2)
    got = 0
    while got < want:
        d = keep.recv(1 << 20)
        assert d
        got += len(d)
    assert got == want
    keep.close()
    victim.close()


def test_lower_limit_evicts_largest_first(spawn):
    s = spawn()
    c = control(s)
    socks = {}
    for name, size in (("small", 100 * 1024), ("mid", 600 * 1024), ("large", 3 * MB)):
        socks[name] = named_socket(s, name)
        socks[name].sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % size + b"v" * 1000)
    assert wait_for(lambda: all(name in clients(c) and int(clients(c)[name]["tot-mem"]) > 100 * 1024
                                for name in socks))
    rows = clients(c)
    total = sum(int(x["tot-mem"]) for x in c.client_list())
    large = int(rows["large"]["tot-mem"])
    assert large > int(rows["mid"]["tot-mem"]) > int(rows["small"]["tot-mem"])
    # room for everything but the largest client
    c.config_set("maxmemory-clients", total - large + 64 * 1024)
    left = clients(c)
    assert "large" not in left
    assert "mid" in left and "small" in left and "control" in left
    assert c.info("stats")["evicted_clients"] == 1
    assert closed_by_server(socks["large"])
    # room for the small one only: the middle one goes next
    c.config_set("maxmemory-clients", total - large - int(rows["mid"]["tot-mem"]) + 64 * 1024)
    left = clients(c)
    assert "mid" not in left and "small" in left
    assert c.info("stats")["evicted_clients"] == 2
    c.config_resetstat()
    assert c.info("stats")["evicted_clients"] == 0
    for x in socks.values():
        x.close()


def test_percentage_of_maxmemory(spawn):
    s = spawn()
    c = control(s)
    c.config_set("maxmemory-clients", "1%")  # no maxmemory: no limit
    victim = named_socket(s, "victim")
    victim.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n" + b"v" * 1000)
    assert wait_for(lambda: int(clients(c).get("victim", {}).get("tot-mem", 0)) > 2000000)
    # 1% of 100 MB is 1 MB: the client is over it at once
    c.config_set("maxmemory", "100mb")
    assert "victim" not in clients(c)
    assert c.info("stats")["evicted_clients"] == 1
    assert closed_by_server(victim)
    victim.close()


def test_multi_queue_counts(spawn):
    s = spawn()
    c = control(s)
    c.config_set("maxmemory-clients", "2mb")
    m = named_socket(s, "queuer")  # (a client library would reconnect and go on outside MULTI)
    send_command(m, "MULTI")
    send_command(m, "SET", "k", "v" * 600000)
    assert wait_for(lambda: int(clients(c)["queuer"]["multi-mem"]) >= 600000)
    assert int(clients(c)["queuer"]["tot-mem"]) >= 600000
    # three more of them pass the limit: the client goes (redis-server may
    # notice in its clients cron only, after the last one was queued)
    try:
        for _ in range(3):
            send_command(m, "SET", "k", "v" * 600000)
    except OSError:
        pass
    assert wait_for(lambda: "queuer" not in clients(c), rounds=500)
    assert closed_by_server(m)
    m.close()
    assert c.info("stats")["evicted_clients"] == 1
    assert c.exists("k") == 0


def test_no_evict_off_evicts_itself(spawn):
    s = spawn()
    c = with_big_key(s, "1mb")
    x = no_evict_socket(s, "flagged")
    # 32 MB of replies it does not read: far over the limit, but flagged
    x.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * 32)
    assert wait_for(lambda: int(clients(c)["flagged"]["tot-mem"]) > 4 * MB)
    assert c.info("stats")["evicted_clients"] == 0
    # its own CLIENT NO-EVICT off makes it evictable, and it goes
    send_command(x, "CLIENT", "NO-EVICT", "off")
    assert closed_by_server(x, rounds=2000)
    assert wait_for(lambda: "flagged" not in clients(c))
    assert c.info("stats")["evicted_clients"] == 1
    x.close()
