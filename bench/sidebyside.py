"""Pieces the side-by-side benches share: a pinned server (redis-server or
shoal --threads 1), loading it through redis-cli --pipe, and one
redis-benchmark run measured as rps and server CPU per request.

The server runs on CPU 1 (shoal with --cpu-affinity 1 too), every client on
CPU 0. A server's CPU time is the sum over its threads of
/proc/<pid>/task/*/schedstat, in ns.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOAL = os.environ.get("SHOAL_BIN", os.path.join(ROOT, "build", "shoal-server"))
SERVER_CPU, CLIENT_CPU = "1", "0"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def resp(*args):
    """One command in RESP, for a --pipe load file."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Server:
    def __init__(self, kind, prefix="bench-"):
        self.kind = kind
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix=prefix)
        if kind == "redis":
            cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no", "--dir", self.dir]
        else:
            cmd = [SHOAL, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--dir", self.dir,
                   "--threads", "1", "--cpu-affinity", SERVER_CPU]
        self.p = subprocess.Popen(["taskset", "-c", SERVER_CPU] + cmd, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.cli("ping").strip() == "PONG":
                return
            time.sleep(0.05)
        self.stop()
        sys.exit("%s did not start" % kind)

    def cli(self, *args, stdin=None, timeout=60):
        r = subprocess.run(["redis-cli", "-p", str(self.port)] + list(args), capture_output=True, text=True,
                           stdin=stdin, timeout=timeout)
        return r.stdout

    def info(self, field, section="memory"):
        for line in self.cli("info", section).splitlines():
            if line.startswith(field + ":"):
                return int(line.split(":", 1)[1])
        sys.exit("%s: no %s in INFO %s" % (self.kind, field, section))

    def rss_kb(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def load(self, path):
        with open(path, "rb") as f:
            out = self.cli("--pipe", stdin=f, timeout=600)
        if "errors: 0" not in out:
            self.stop()
            sys.exit("%s: load failed: %s" % (self.kind, out))

    def cpu_ns(self):
        total = 0
        for t in os.listdir("/proc/%d/task" % self.p.pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (self.p.pid, t)) as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
        return total

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def bench(srv, pipeline, args, n):
    """(rps, server CPU µs per request) of one redis-benchmark -c 50 run."""
    cpu0 = srv.cpu_ns()
    r = subprocess.run(["taskset", "-c", CLIENT_CPU, "redis-benchmark", "-p", str(srv.port), "-c", "50",
                        "-n", str(n), "-P", str(pipeline), "--csv"] + args,
                       capture_output=True, text=True, timeout=600)
    cpu = srv.cpu_ns() - cpu0
    rows = [l for l in r.stdout.splitlines() if l.startswith('"') and not l.startswith('"test"')]
    if r.returncode != 0 or not rows or "ERR" in r.stdout + r.stderr:
        sys.exit("%s: redis-benchmark %s failed: %s %s" % (srv.kind, " ".join(args), r.stdout, r.stderr))
    rps = float(rows[-1].split(",")[1].strip('"'))
    return rps, cpu / 1000.0 / n


def alternate(servers, workloads, rounds, requests):
    """Runs every workload (name, pipeline, multiple of requests, args) on
    both servers for a number of rounds, alternating which goes first; before
    each run, workload.prepare(server) when a workload has a fifth item.
    Returns {name: {kind: [(rps, µs), ...]}}."""
    res = {w[0]: {"redis": [], "shoal": []} for w in workloads}
    for rnd in range(rounds):
        order = ("redis", "shoal") if rnd % 2 == 0 else ("shoal", "redis")
        for w in workloads:
            name, pipe, mult, wargs = w[:4]
            n = max(1000, int(requests * mult))
            for kind in order:
                if len(w) > 4:
                    w[4](servers[kind], n)
                res[name][kind].append(bench(servers[kind], pipe, wargs, n))
    return res


def table(title, workloads, res, rounds):
    """Prints the median rps and µs per request of each workload, with the
    ratios shoal/redis (rps: above 1 is better for shoal; CPU: below 1 is)."""
    import statistics
    print("\n== %s, redis-benchmark -c 50, median of %d rounds ==" % (title, rounds))
    print("%-16s %12s %12s %8s   %10s %10s %8s" % ("test", "redis rps", "shoal rps", "ratio",
                                                   "redis us", "shoal us", "ratio"))
    for w in workloads:
        r, s = res[w[0]]["redis"], res[w[0]]["shoal"]
        rr, sr = statistics.median(x[0] for x in r), statistics.median(x[0] for x in s)
        rc, sc = statistics.median(x[1] for x in r), statistics.median(x[1] for x in s)
        print("%-16s %12.0f %12.0f %8.2f   %10.2f %10.2f %8.2f" % (w[0], rr, sr, sr / rr, rc, sc, sc / rc))
