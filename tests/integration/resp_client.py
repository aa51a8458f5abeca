"""A minimal RESP client for tests that must see replies exactly as sent
(redis-py rewrites some: NOAUTH becomes an exception without its code, AUTH
becomes True). Errors come back as RespError(text) values, not raised."""
import socket


class RespError(str):
    pass


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = str(a)
        if isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Raw:
    def __init__(self, host, port, source=None, timeout=5):
        self.s = socket.socket()
        if source:
            self.s.bind((source, 0))
        self.s.settimeout(timeout)
        self.s.connect((host, port))
        self.buf = b""

    def close(self):
        self.s.close()

    def _fill(self):
        d = self.s.recv(65536)
        if not d:
            raise ConnectionError("closed")
        self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RespError(rest.decode())
        if t == b":":
            return int(rest)
        if t in (b"$", b"="):
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode(errors="replace")
        if t in (b"*", b"~", b">"):
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b"%":
            n = int(rest)
            items = [self.read() for _ in range(2 * n)]
            return dict(zip(items[::2], items[1::2]))
        if t == b"_":
            return None
        if t == b",":
            return float(rest)
        if t == b"#":
            return rest == b"t"
        raise ValueError("unexpected reply %r" % line)

    def cmd(self, *args):
        self.s.sendall(encode(*args))
        return self.read()


def raw(server, **kw):
    return Raw(server.host, server.port, **kw)
