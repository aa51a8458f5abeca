"""Starting and stopping servers for the integration tests.

A Server is shoal (build/shoal-server, or $SHOAL_BIN) with --threads 1 or 4,
or redis-server 7.0 from Debian. Each listens on 127.0.0.1 on a free port
and is stopped by its pid."""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHOAL = os.environ.get("SHOAL_BIN", os.path.join(ROOT, "build", "shoal-server"))
REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
TARGETS = ("shoal1", "shoal4", "redis")


def crc16(data):
    """Redis Cluster's key hash (CRC16/XMODEM) over bytes."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def shard_of(key, nshards=4):
    """The shard of shoal --threads nshards that owns key ({hash tag} too)."""
    if "{" in key:
        tag = key[key.index("{") + 1:]
        if "}" in tag and tag.index("}") > 0:
            key = tag[:tag.index("}")]
    return (crc16(key.encode()) % 16384) % nshards


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, target, extra=None):
        self.target = target
        self.extra = list(extra or [])
        self.host = "127.0.0.1"
        self.port = None
        self.proc = None
        self.dir = tempfile.mkdtemp(prefix="shoal-it-")
        self.log = os.path.join(self.dir, "server.log")

    @property
    def is_redis(self):
        return self.target == "redis"

    def argv(self):
        common = ["--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                  "--save", ""]
        if self.is_redis:
            return [REDIS] + common + ["--appendonly", "no"] + self.extra
        threads = "4" if self.target == "shoal4" else "1"
        return [SHOAL] + common + ["--threads", threads] + self.extra

    def start(self, timeout=10):
        for attempt in range(5):
            self.port = free_port()
            logf = open(self.log, "ab")
            self.proc = subprocess.Popen(self.argv(), stdout=logf, stderr=subprocess.STDOUT,
                                         cwd=self.dir)
            logf.close()
            deadline = time.time() + timeout
            while time.time() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    c = redis.Redis(host=self.host, port=self.port, socket_timeout=1)
                    if c.ping():
                        c.connection_pool.disconnect()
                        return self
                except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError):
                    time.sleep(0.02)
            self.stop()
        raise RuntimeError("server %s did not start: %s" % (self.target, self.read_log()))

    def read_log(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def new_client(self, **kw):
        kw.setdefault("socket_timeout", 20)
        return redis.Redis(host=self.host, port=self.port, **kw)

    def raw(self, timeout=5):
        s = socket.create_connection((self.host, self.port), timeout=timeout)
        return s

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None


def raw_exchange(server, payload, expect_close=False, timeout=3, read_until=None):
    """Send raw bytes, return everything received until the server stops
    sending (or closes). Used for protocol-level tests."""
    s = server.raw(timeout=timeout)
    s.sendall(payload)
    chunks = []
    s.settimeout(0.5)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            if read_until is None or read_until in b"".join(chunks):
                break
            continue
        if not d:
            break
        chunks.append(d)
        if read_until is not None and read_until in b"".join(chunks) and not expect_close:
            break
    s.close()
    return b"".join(chunks)


def wait_until(cond, what, timeout=20):
    """Polls cond until it is true; fails naming what after timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)
