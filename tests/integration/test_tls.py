"""TLS on tls-port (OpenSSL), beside the plain port.

A test CA and certificates are made at test time by the openssl CLI in a
temporary directory: the CA, a server and a client certificate it signed,
a second CA with a client certificate of its own (a "rogue" client the
server must refuse), and two more server certificates for CONFIG SET
reloads. Every test starts its own server of the target with both ports."""
import os
import shutil
import socket
import ssl
import subprocess
import tempfile

import pytest
import redis

from helpers import SHOAL, REDIS, free_port

OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"


def run(*args, **kw):
    subprocess.run(list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, **kw)


def make_ca(d, name):
    run(OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "30",
        "-subj", "/O=shoal test/CN=%s" % name,
        "-keyout", os.path.join(d, name + ".key"), "-out", os.path.join(d, name + ".crt"))


def make_cert(d, name, ca, cn):
    key, csr, crt = (os.path.join(d, name + x) for x in (".key", ".csr", ".crt"))
    run(OPENSSL, "req", "-new", "-newkey", "rsa:2048", "-nodes", "-sha256", "-subj", "/O=shoal test/CN=%s" % cn,
        "-keyout", key, "-out", csr)
    run(OPENSSL, "x509", "-req", "-sha256", "-days", "30", "-in", csr, "-CA", os.path.join(d, ca + ".crt"),
        "-CAkey", os.path.join(d, ca + ".key"), "-CAcreateserial", "-out", crt)


@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="shoal-tls-")
    make_ca(d, "ca")
    make_ca(d, "rogue-ca")
    make_cert(d, "server", "ca", "server-one")
    make_cert(d, "server2", "ca", "server-two")
    make_cert(d, "server3", "ca", "server-three")
    make_cert(d, "client", "ca", "client")
    make_cert(d, "rogue", "rogue-ca", "rogue-client")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def p(certs, name):
    return os.path.join(certs, name)


@pytest.fixture
def tls_server(spawn, certs):
    """start(*extra): a server of the target with port and tls-port."""
    def start(*extra, ca=True):
        tport = free_port()
        args = ["--tls-port", str(tport), "--tls-cert-file", p(certs, "server.crt"),
                "--tls-key-file", p(certs, "server.key")]
        if ca:
            args += ["--tls-ca-cert-file", p(certs, "ca.crt")]
        srv = spawn(*(args + list(extra)))
        srv.tls_port = tport
        return srv
    return start


def tls_client(srv, certs, cert="client", **kw):
    args = dict(host=srv.host, port=srv.tls_port, ssl=True, ssl_ca_certs=p(certs, "ca.crt"),
                ssl_cert_reqs="required", socket_timeout=10)
    if cert:
        args.update(ssl_certfile=p(certs, cert + ".crt"), ssl_keyfile=p(certs, cert + ".key"))
    args.update(kw)
    return redis.Redis(**args)


def client_ctx(certs, cert="client", min_version=None, max_version=None, ciphers=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(p(certs, "ca.crt"))
    if cert:
        ctx.load_cert_chain(p(certs, cert + ".crt"), p(certs, cert + ".key"))
    if min_version:
        ctx.minimum_version = min_version
    if max_version:
        ctx.maximum_version = max_version
    if ciphers:
        ctx.set_ciphers(ciphers)
    return ctx


def ssl_socket(srv, certs, cert="client", min_version=None, max_version=None, ciphers=None, ctx=None, session=None):
    """A raw TLS socket, handshake done (raises on failure)."""
    ctx = ctx or client_ctx(certs, cert, min_version, max_version, ciphers)
    raw = socket.create_connection((srv.host, srv.tls_port), timeout=10)
    return ctx.wrap_socket(raw, session=session)


def ping_raw(s):
    """PING over a TLS socket: the reply, or None when the server closed or refused."""
    try:
        s.sendall(b"PING\r\n")
        data = s.recv(64)
        return data or None
    except (ssl.SSLError, ConnectionError, OSError):
        return None


def refused(srv, certs, cert):
    """True when the server does not serve a client with this certificate
    (the refusal may come in the handshake or, with TLS 1.3, at the first read)."""
    try:
        s = ssl_socket(srv, certs, cert=cert)
    except (ssl.SSLError, ConnectionError, OSError):
        return True
    r = ping_raw(s)
    s.close()
    return r is None


def peer_cn(srv, certs):
    s = ssl_socket(srv, certs)
    subject = dict(x[0] for x in s.getpeercert()["subject"])
    assert ping_raw(s) == b"+PONG\r\n"
    s.close()
    return subject["commonName"]


def test_tls_and_plain_ports_together(tls_server, certs):
    srv = tls_server()
    t = tls_client(srv, certs)
    plain = srv.new_client()
    assert t.ping()
    assert t.set("k", "over-tls")
    assert plain.get("k") == b"over-tls"
    assert plain.set("k2", "over-tcp")
    assert t.get("k2") == b"over-tcp"
    lines = t.execute_command("CLIENT", "LIST").decode().splitlines()
    laddrs = sorted(dict(kv.split("=", 1) for kv in line.split(" "))["laddr"] for line in lines)
    assert laddrs == sorted(["127.0.0.1:%d" % srv.port, "127.0.0.1:%d" % srv.tls_port])
    t.close()
    plain.close()


def test_plain_client_on_tls_port_gets_no_reply(tls_server, certs):
    srv = tls_server()
    s = socket.create_connection((srv.host, srv.tls_port), timeout=5)
    s.sendall(b"PING\r\n")
    try:
        data = s.recv(64)
    except ConnectionError:
        data = b""
    assert b"PONG" not in data
    s.close()
    # and a TLS client on the plain port fails its handshake
    ctx = ssl.create_default_context(cafile=p(certs, "ca.crt"))
    ctx.check_hostname = False
    raw = socket.create_connection((srv.host, srv.port), timeout=5)
    with pytest.raises((ssl.SSLError, ConnectionError, OSError, socket.timeout)):
        ctx.wrap_socket(raw).do_handshake()
    raw.close()
    assert srv.new_client().ping()
    assert tls_client(srv, certs).ping()


def test_auth_clients_yes_requires_a_trusted_certificate(tls_server, certs):
    srv = tls_server()
    assert srv.new_client().config_get("tls-auth-clients") == {"tls-auth-clients": "yes"}
    assert refused(srv, certs, None)
    assert refused(srv, certs, "rogue")
    assert not refused(srv, certs, "client")
    assert srv.alive()


def test_auth_clients_optional_and_no(tls_server, certs):
    srv = tls_server()
    c = srv.new_client()
    assert c.config_set("tls-auth-clients", "optional")
    assert not refused(srv, certs, None)
    assert not refused(srv, certs, "client")
    assert refused(srv, certs, "rogue")  # sent, so verified
    assert c.config_set("tls-auth-clients", "no")
    assert not refused(srv, certs, None)
    assert not refused(srv, certs, "rogue")  # not asked for
    assert c.config_set("tls-auth-clients", "yes")
    assert refused(srv, certs, None)
    with pytest.raises(redis.ResponseError, match="argument\\(s\\) must be one of the following: no, yes, optional"):
        c.config_set("tls-auth-clients", "maybe")


def test_auth_clients_no_needs_no_ca(tls_server, certs):
    srv = tls_server("--tls-auth-clients", "no", ca=False)
    assert tls_client(srv, certs, cert=None).ping()


def test_large_values_and_pipelines(tls_server, certs):
    srv = tls_server()
    t = tls_client(srv, certs)
    big = os.urandom(3 * 1024 * 1024 + 17)
    assert t.set("big", big)
    assert t.get("big") == big
    pipe = t.pipeline(transaction=False)
    for i in range(3000):
        pipe.set("key:%d" % i, "value-%d" % i)
    for i in range(3000):
        pipe.get("key:%d" % i)
    res = pipe.execute()
    assert res[:3000] == [True] * 3000
    assert res[3000:] == [b"value-%d" % i for i in range(3000)]
    # replies much larger than the socket takes at once: partial writes
    pipe = t.pipeline(transaction=False)
    for _ in range(12):
        pipe.get("big")
    assert pipe.execute() == [big] * 12
    assert t.mget(["key:%d" % i for i in range(0, 3000, 7)]) == [b"value-%d" % i for i in range(0, 3000, 7)]
    t.close()


def test_redis_cli_over_tls(tls_server, certs):
    srv = tls_server()
    base = ["redis-cli", "-h", srv.host, "-p", str(srv.tls_port), "--tls", "--cacert", p(certs, "ca.crt"),
            "--cert", p(certs, "client.crt"), "--key", p(certs, "client.key")]
    out = subprocess.run(base + ["SET", "cli", "works"], capture_output=True, timeout=20)
    assert out.stdout.strip() == b"OK"
    out = subprocess.run(base + ["GET", "cli"], capture_output=True, timeout=20)
    assert out.stdout.strip() == b"works"


def test_config_set_reloads_certificates(tls_server, certs):
    srv = tls_server()
    c = srv.new_client()
    assert peer_cn(srv, certs) == "server-one"
    old = tls_client(srv, certs)
    assert old.set("x", "1")
    assert c.execute_command("CONFIG", "SET", "tls-cert-file", p(certs, "server2.crt"),
                             "tls-key-file", p(certs, "server2.key")) == b"OK"
    assert peer_cn(srv, certs) == "server-two"
    assert old.get("x") == b"1"  # connections made before keep their session
    # the same file names again read the files again
    live = os.path.join(certs, "live")
    os.makedirs(live, exist_ok=True)
    shutil.copy(p(certs, "server2.crt"), os.path.join(live, "cert.pem"))
    shutil.copy(p(certs, "server2.key"), os.path.join(live, "key.pem"))
    assert c.execute_command("CONFIG", "SET", "tls-cert-file", os.path.join(live, "cert.pem"),
                             "tls-key-file", os.path.join(live, "key.pem")) == b"OK"
    assert peer_cn(srv, certs) == "server-two"
    shutil.copy(p(certs, "server3.crt"), os.path.join(live, "cert.pem"))
    shutil.copy(p(certs, "server3.key"), os.path.join(live, "key.pem"))
    assert c.config_set("tls-cert-file", os.path.join(live, "cert.pem"))
    assert peer_cn(srv, certs) == "server-three"
    # a certificate that does not match the key is refused; the old one stays
    with pytest.raises(redis.ResponseError,
                       match="CONFIG SET failed \\(possibly related to argument 'tls-cert-file'\\) - "
                             "Unable to update TLS configuration. Check server logs."):
        c.config_set("tls-cert-file", p(certs, "server.crt"))
    assert c.config_get("tls-cert-file") == {"tls-cert-file": os.path.join(live, "cert.pem")}
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-ca-cert-file", os.path.join(certs, "missing.crt"))
    assert c.config_get("tls-ca-cert-file") == {"tls-ca-cert-file": p(certs, "ca.crt")}
    assert peer_cn(srv, certs) == "server-three"
    assert old.get("x") == b"1"
    old.close()


def test_tls_protocols(tls_server, certs):
    srv = tls_server()
    c = srv.new_client()
    s = ssl_socket(srv, certs)
    assert s.version() == "TLSv1.3"
    s.close()
    assert c.config_set("tls-protocols", "TLSv1.2")
    s = ssl_socket(srv, certs)
    assert s.version() == "TLSv1.2"
    assert ping_raw(s) == b"+PONG\r\n"
    s.close()
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        s = ssl_socket(srv, certs, min_version=ssl.TLSVersion.TLSv1_3)
        if ping_raw(s) is None:
            raise ConnectionError("refused")
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-protocols", "TLSv1.2 TLSv9")
    assert c.config_get("tls-protocols") == {"tls-protocols": "TLSv1.2"}
    assert c.config_set("tls-protocols", "")
    s = ssl_socket(srv, certs)
    assert s.version() == "TLSv1.3"
    s.close()


def test_tls_ciphers(tls_server, certs):
    srv = tls_server("--tls-protocols", "TLSv1.2")
    c = srv.new_client()
    assert c.config_set("tls-ciphers", "DEFAULT:-AES128-SHA256")
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        ssl_socket(srv, certs, ciphers="AES128-SHA256")
    s = ssl_socket(srv, certs, ciphers="AES256-SHA256")
    assert s.cipher()[0] == "AES256-SHA256"
    s.close()
    # the client's order wins unless the server prefers its own
    assert c.config_set("tls-ciphers", "AES128-SHA256:AES256-SHA256")
    s = ssl_socket(srv, certs, ciphers="AES256-SHA256:AES128-SHA256")
    assert s.cipher()[0] == "AES256-SHA256"
    s.close()
    assert c.config_set("tls-prefer-server-ciphers", "yes")
    s = ssl_socket(srv, certs, ciphers="AES256-SHA256:AES128-SHA256")
    assert s.cipher()[0] == "AES128-SHA256"
    s.close()
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-ciphers", "NO-SUCH-CIPHER")


def test_encrypted_key_file(tls_server, certs):
    srv = tls_server()
    c = srv.new_client()
    enc = os.path.join(certs, "server-enc.key")
    run(OPENSSL, "rsa", "-in", p(certs, "server.key"), "-out", enc, "-aes256", "-passout", "pass:1234")
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-key-file", enc)
    assert c.config_set("tls-key-file-pass", "1234")
    assert c.config_set("tls-key-file", enc)
    assert peer_cn(srv, certs) == "server-one"


def test_session_resumption(tls_server, certs):
    srv = tls_server()
    ctx = client_ctx(certs, max_version=ssl.TLSVersion.TLSv1_2)

    def resumed():
        s = ssl_socket(srv, certs, ctx=ctx)
        assert ping_raw(s) == b"+PONG\r\n"
        sess = s.session
        s.close()
        s = ssl_socket(srv, certs, ctx=ctx, session=sess)
        assert ping_raw(s) == b"+PONG\r\n"
        again = s.session_reused
        s.close()
        return again

    assert resumed()
    c = srv.new_client()
    # (with caching off, redis-server fails the handshake of a client that
    # offers a session, where shoal does a full one: not compared here)
    assert c.config_set("tls-session-caching", "no")
    assert tls_client(srv, certs).ping()
    assert c.config_set("tls-session-cache-size", "100")
    assert c.config_set("tls-session-caching", "yes")
    assert resumed()


def test_stalled_handshake_does_not_stop_others(tls_server, certs):
    srv = tls_server()
    # half a ClientHello: a record header announcing 512 bytes, then 10
    stalled = socket.create_connection((srv.host, srv.tls_port), timeout=5)
    stalled.sendall(b"\x16\x03\x01\x02\x00" + b"\x01" * 10)
    idle = socket.create_connection((srv.host, srv.tls_port), timeout=5)  # nothing at all
    t = tls_client(srv, certs, socket_timeout=5)
    assert t.set("a", "b")
    assert srv.new_client(socket_timeout=5).get("a") == b"b"
    # the half hello is then completed with garbage: that session fails alone
    stalled.sendall(b"\x00" * 502)
    try:
        stalled.recv(64)
    except (ConnectionError, socket.timeout):
        pass
    assert t.get("a") == b"b"
    stalled.close()
    idle.close()
    t.close()


def test_tls_config_defaults(tls_server, certs):
    srv = tls_server()
    got = srv.new_client().config_get("tls-*")
    want = {"tls-auth-clients": "yes", "tls-session-caching": "yes", "tls-session-cache-size": "20480",
            "tls-session-cache-timeout": "300", "tls-prefer-server-ciphers": "no", "tls-protocols": "",
            "tls-ciphers": "", "tls-ciphersuites": "", "tls-ca-cert-dir": "", "tls-dh-params-file": "",
            "tls-key-file-pass": "", "tls-port": str(srv.tls_port)}
    for k, v in want.items():
        assert got[k] == v


def test_startup_without_certificate_fails(target, certs):
    binary = REDIS if target == "redis" else SHOAL
    d = tempfile.mkdtemp(prefix="shoal-tls-start-")
    try:
        proc = subprocess.run([binary, "--port", "0", "--tls-port", str(free_port()), "--bind", "127.0.0.1",
                               "--save", "", "--dir", d, "--tls-key-file", p(certs, "server.key"),
                               "--tls-ca-cert-file", p(certs, "ca.crt")],
                              capture_output=True, timeout=20, cwd=d)
        assert proc.returncode != 0
        assert b"No tls-cert-file configured!" in proc.stdout + proc.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_ca_cert_dir(tls_server, certs):
    srv = tls_server()
    c = srv.new_client()
    cadir = os.path.join(certs, "cadir")
    os.makedirs(cadir, exist_ok=True)
    shutil.copy(p(certs, "ca.crt"), os.path.join(cadir, "ca.pem"))
    run(OPENSSL, "rehash", cadir)
    assert c.execute_command("CONFIG", "SET", "tls-ca-cert-file", "", "tls-ca-cert-dir", cadir) == b"OK"
    assert not refused(srv, certs, "client")
    assert refused(srv, certs, "rogue")
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-ca-cert-dir", "")  # no CA left while clients must be verified
    assert not refused(srv, certs, "client")


def test_dh_params_file(tls_server, certs):
    srv = tls_server("--tls-protocols", "TLSv1.2")
    c = srv.new_client()
    dh = os.path.join(certs, "dh.pem")
    if not os.path.exists(dh):
        run(OPENSSL, "genpkey", "-genparam", "-algorithm", "DH", "-pkeyopt", "group:ffdhe2048", "-out", dh)
    assert c.config_set("tls-dh-params-file", dh)
    s = ssl_socket(srv, certs, ciphers="DHE-RSA-AES256-GCM-SHA384")
    assert s.cipher()[0] == "DHE-RSA-AES256-GCM-SHA384"
    assert ping_raw(s) == b"+PONG\r\n"
    s.close()
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-dh-params-file", p(certs, "ca.crt"))
    assert c.config_get("tls-dh-params-file") == {"tls-dh-params-file": dh}


def test_switch_between_tcp_and_tls_ports(tls_server, certs):
    """CONFIG SET port and tls-port move the listeners, as Redis does."""
    srv = tls_server()
    t = tls_client(srv, certs)
    assert t.config_set("tls-port", 0)
    assert t.config_set("port", srv.tls_port)  # the plain port takes the TLS one's number
    t.close()
    plain = redis.Redis(host=srv.host, port=srv.tls_port, socket_timeout=10)
    assert plain.ping()
    assert plain.config_set("port", 0)
    assert plain.config_set("tls-port", srv.tls_port)
    plain.close()
    t = tls_client(srv, certs)
    assert t.ping()
    assert t.config_get("port")["port"] == "0"
    assert t.config_get("tls-port")["tls-port"] == str(srv.tls_port)
    t.close()


def test_tls_port_set_at_runtime(spawn, certs):
    """A server started without TLS configures it when tls-port is set;
    without a certificate that fails with Redis's error and changes nothing."""
    srv = spawn()
    c = srv.new_client()
    tport = free_port()
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-port", tport)
    assert c.config_get("tls-port")["tls-port"] == "0"
    assert c.config_set("tls-cert-file", p(certs, "server.crt"))
    assert c.config_set("tls-key-file", p(certs, "server.key"))
    assert c.config_set("tls-ca-cert-file", p(certs, "ca.crt"))
    assert c.config_set("tls-port", tport)
    srv.tls_port = tport
    t = tls_client(srv, certs)
    assert t.set("k", "v")
    assert c.get("k") == b"v"
    t.close()
    c.close()
