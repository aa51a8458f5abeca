"""Append-only file (Redis 7.0 multi-part layout): write, restart and find
the same data (every type, TTLs as absolute deadlines), commands logged in
their deterministic form, multi-shard commands logged atomically, files
crossing between shoal and redis-server (and passing redis-check-aof),
damaged files (truncated tail, garbage, unknown command, unfinished MULTI),
kill -9 while clients write (appendfsync always and everysec), a full disk,
CONFIG SET appendonly at run time, the directives and INFO persistence.
Every test runs on shoal --threads 1, --threads 4 and redis-server."""
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from helpers import Server, raw_exchange
from dataset import fill, snapshot

AOF = ("--appendonly", "yes")
# redis-server may postpone an everysec write while a sync runs: tests that
# read the file while the server runs use always, which never postpones
LIVE = AOF + ("--appendfsync", "always")
CHECK_AOF = shutil.which("redis-check-aof") or "/usr/bin/redis-check-aof"
AOFDIR = "appendonlydir"


def manifest(d):
    """[(name, seq, type)] of d's manifest."""
    with open(os.path.join(d, AOFDIR, "appendonly.aof.manifest")) as f:
        rows = [line.split() for line in f if line.strip()]
    return [(w[1], int(w[3]), w[5]) for w in rows]


def incr_path(d):
    return os.path.join(d, AOFDIR, [n for n, _, t in manifest(d) if t == "i"][-1])


def read(path):
    with open(path, "rb") as f:
        return f.read()


def data_dir(s):
    c = s.new_client(decode_responses=True)
    d = c.config_get("dir")["dir"]
    c.close()
    return d


def restart(spawn, s, *extra):
    """Stops s and starts a server of the same target on its data."""
    d = data_dir(s)
    s.stop()
    return spawn(*AOF, "--dir", d, *extra)


def refused_log(target, *args):
    """Starts a server that must refuse to start; returns its log."""
    s = Server(target, list(args))
    with pytest.raises(RuntimeError):
        s.start(timeout=5)
    return s.read_log()


def deadlines(c, dbs=(0, 7)):
    out = {}
    for dbid in dbs:
        c.execute_command("SELECT", dbid)
        for k in c.keys("*"):
            out[(dbid, k)] = c.pexpiretime(k)
    c.execute_command("SELECT", 0)
    return out


@contextlib.contextmanager
def reference(*args):
    """A client of a private redis-server started with args."""
    ref = Server("redis", list(args))
    ref.start()
    try:
        yield ref.new_client()
    finally:
        ref.stop()


def check_aof(d):
    chk = subprocess.run([CHECK_AOF, os.path.join(d, AOFDIR, "appendonly.aof.manifest")],
                         capture_output=True, text=True, timeout=30)
    return chk.returncode, chk.stdout + chk.stderr


# ---- writing, restarting, the forms in the file ----

def nondeterministic(c):
    """Commands Redis logs in another form than they arrive."""
    c.sadd("pop", *range(20))
    c.spop("pop")
    c.spop("pop", 3)
    c.sadd("popall", "a", "b")
    c.spop("popall", 5)
    c.set("f", "10.5")
    c.incrbyfloat("f", 0.1)
    c.hincrbyfloat("hf", "x", 2.5)
    c.set("rel", "v")
    c.expire("rel", 1000)
    c.setex("sx", 1000, "v")
    c.psetex("psx", 1000000, "v")
    c.set("setex", "v", ex=1000, get=True)
    c.set("gx", "v")
    c.getex("gx", px=500000)
    c.set("gp", "v", ex=100)
    c.getex("gp", persist=True)
    c.set("gd", "v")
    c.getdel("gd")
    c.set("src", "payload")
    c.restore("restored", 300000, c.dump("src"))
    c.set("gone", "v")
    c.expire("gone", -1)


def served_later(s):
    """A BLPOP served by a later RPUSH (logged as LPOP)."""
    waiter = s.new_client()
    got = []
    t = threading.Thread(target=lambda: got.append(waiter.blpop("bl", 10)))
    t.start()
    c = s.new_client()
    deadline = time.time() + 5
    while time.time() < deadline and c.info("clients")["blocked_clients"] < 1:
        time.sleep(0.01)
    c.rpush("bl", "a", "b")
    t.join(10)
    assert got == [(b"bl", b"a")]


def test_write_restart_same_data(spawn, target):
    s = spawn(*AOF)
    c = s.new_client()
    fill(c)
    nondeterministic(c)
    served_later(s)
    want, when = snapshot(c), deadlines(c)
    assert c.lrange("bl", 0, -1) == [b"b"]
    s2 = restart(spawn, s)
    c2 = s2.new_client()
    assert snapshot(c2) == want
    assert deadlines(c2) == when  # absolute, to the millisecond
    assert c2.get("f") == b"10.6" and c2.hget("hf", "x") == b"2.5"
    assert c2.exists("gd", "gone", "popall") == 0
    assert c2.ttl("gp") == -1 and 0 < c2.pttl("gx") <= 500000


def test_relative_forms_in_file(spawn, target):
    s = spawn(*LIVE)
    c = s.new_client()
    c.set("a", "1", ex=100)
    c.expire("a", 200)
    c.incrbyfloat("f", 1.5)
    c.sadd("s", "m")
    c.spop("s")
    c.set("d", "v")
    c.getdel("d")
    c.delete("nosuchkey")
    text = read(incr_path(s.dir))
    assert b"$4\r\nPXAT\r\n" in text and b"$9\r\nPEXPIREAT\r\n" in text
    assert b"$2\r\nEX\r\n" not in text.upper() and b"$6\r\nEXPIRE\r\n" not in text.upper()
    assert b"$3\r\nSET\r\n$1\r\nf\r\n$3\r\n1.5\r\n$7\r\nKEEPTTL\r\n" in text
    assert b"$6\r\nGETDEL" not in text.upper() and b"$4\r\nSPOP" not in text.upper()
    assert b"nosuchkey" not in text  # nothing changed, nothing logged


def test_cross_shard_commands_atomic(spawn, target):
    s = spawn(*LIVE, "--hz", "1")
    c = s.new_client()
    keys = ["k%d" % i for i in range(16)]
    c.mset({k: k for k in keys})
    c.rename("k0", "renamed")
    c.set("t", "1", px=100)
    time.sleep(0.2)
    assert c.delete("k1", "t", "k2") == 2  # t expires on the way: two commands
    text = read(incr_path(s.dir)).lower()
    mset = text.index(b"$4\r\nmset\r\n")
    assert text.count(b"mset") == 1 and all(k.encode() in text[mset:mset + 400] for k in keys)
    if target != "shoal1":  # one shard: no transaction, so no block (redis-server wraps it too)
        block = text[text.index(b"multi"):text.index(b"exec")]
        assert b"$3\r\ndel\r\n$1\r\nt\r\n" in block and b"$3\r\ndel\r\n$2\r\nk1\r\n" in block
    want = snapshot(c)
    c2 = restart(spawn, s).new_client()
    assert snapshot(c2) == want and c2.get("renamed") == b"k0"


def test_exec_is_one_block(spawn, target):
    """A MULTI/EXEC transaction is logged as one MULTI ... EXEC block, on one
    shard or several, and replays."""
    s = spawn(*LIVE)
    c = s.new_client()
    p = c.pipeline(transaction=True)
    p.set("{a}x", "1").incr("{b}y").rpush("{c}l", "v").set("{a}x", "2")
    assert p.execute() == [True, 1, 1, True]
    text = read(incr_path(s.dir)).lower()
    block = text[text.index(b"multi"):text.index(b"exec")]
    for part in (b"$3\r\nset\r\n$4\r\n{a}x\r\n$1\r\n1", b"$6\r\nincrby\r\n$4\r\n{b}y",
                 b"$5\r\nrpush\r\n$4\r\n{c}l", b"$4\r\n{a}x\r\n$1\r\n2"):
        assert part in block
    c2 = restart(spawn, s).new_client()
    assert c2.mget("{a}x", "{b}y") == [b"2", b"1"] and c2.lrange("{c}l", 0, -1) == [b"v"]


def test_replay_does_not_expire(spawn, target):
    """A key changed before its deadline and loaded after it: the replay
    must not see it expired halfway (APPEND would make a new key)."""
    s = spawn(*AOF)
    c = s.new_client()
    c.set("k", "v", px=700)
    c.append("k", "x")
    s.stop()
    time.sleep(0.8)
    c2 = spawn(*AOF, "--dir", s.dir).new_client()
    assert c2.get("k") is None


def test_timestamp_annotations(spawn, target):
    s = spawn(*LIVE, "--aof-timestamp-enabled", "yes")
    c = s.new_client()
    c.set("a", "1")
    assert b"#TS:" in read(incr_path(s.dir))
    assert restart(spawn, s).new_client().get("a") == b"1"


# ---- files across servers ----

def test_redis_loads_ours_and_check_aof_accepts(spawn, target):
    s = spawn(*AOF)
    c = s.new_client()
    fill(c)
    nondeterministic(c)
    want = snapshot(c)
    s.stop()
    names = manifest(s.dir)
    assert [t for _, _, t in names] == ["b", "i"]
    assert names[0][0] == "appendonly.aof.1.base.rdb" and names[1][0] == "appendonly.aof.1.incr.aof"
    rc, out = check_aof(s.dir)
    assert rc == 0 and "All AOF files and manifest are valid" in out, out
    with reference(*AOF, "--dir", s.dir) as rc:
        assert snapshot(rc) == want


def test_ours_loads_redis(spawn, target, tmp_path):
    d = str(tmp_path)
    with reference(*AOF, "--dir", d) as rc:
        fill(rc)
        nondeterministic(rc)
        want = snapshot(rc)
    c = spawn(*AOF, "--dir", d).new_client()
    assert snapshot(c) == want


# ---- damaged files ----

def written(spawn, target, n=20):
    """A stopped server's directory with keys a0..a{n-1} in its incr file."""
    s = spawn(*AOF)
    c = s.new_client()
    for i in range(n):
        c.set("a%d" % i, i)
    s.stop()
    return s.dir


def test_truncated_tail_loads_and_appends(spawn, target):
    d = written(spawn, target)
    path = incr_path(d)
    data = read(path)
    with open(path, "wb") as f:
        f.write(data[:-5])  # inside the last SET
    s = spawn(*AOF, "--dir", d)
    assert "Truncating the AOF" in s.read_log() and "loaded anyway" in s.read_log()
    c = s.new_client()
    assert c.get("a18") == b"18" and c.get("a19") is None
    c.set("after", "1")
    s2 = restart(spawn, s)
    c2 = s2.new_client()
    assert c2.get("a18") == b"18" and c2.get("after") == b"1"
    s2.stop()
    rc, out = check_aof(d)
    assert rc == 0, out


def test_truncated_tail_refused_without_load_truncated(spawn, target):
    d = written(spawn, target)
    path = incr_path(d)
    data = read(path)
    with open(path, "wb") as f:
        f.write(data[:-5])
    log = refused_log(target, *AOF, "--dir", d, "--aof-load-truncated", "no")
    assert "Unexpected end of file reading the append only file" in log
    assert len(read(path)) == len(data) - 5  # left alone


def test_garbage_in_the_middle_refused(spawn, target):
    d = written(spawn, target)
    path = incr_path(d)
    data = read(path)
    at = data.index(b"*3\r\n$3\r\nSET\r\n$2\r\na5\r\n")
    with open(path, "wb") as f:
        f.write(data[:at] + b"garbage\r\n" + data[at:])
    log = refused_log(target, *AOF, "--dir", d)
    assert "Bad file format reading the append only file" in log
    if target != "redis":  # redis-server does not say where
        assert "at offset %d" % at in log


def test_unknown_command_refused(spawn, target):
    d = written(spawn, target)
    with open(incr_path(d), "ab") as f:
        f.write(b"*2\r\n$7\r\nFOOBARX\r\n$1\r\nk\r\n*3\r\n$3\r\nset\r\n$1\r\nz\r\n$1\r\n1\r\n")
    log = refused_log(target, *AOF, "--dir", d)
    assert "Unknown command 'FOOBARX' reading the append only file" in log


def test_unfinished_multi_is_reverted(spawn, target):
    d = written(spawn, target)
    path = incr_path(d)
    size = len(read(path))
    with open(path, "ab") as f:
        f.write(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nset\r\n$1\r\nx\r\n$1\r\n1\r\n")
    s = spawn(*AOF, "--dir", d)
    assert "Revert incomplete MULTI/EXEC transaction" in s.read_log()
    c = s.new_client()
    assert c.get("x") is None and c.get("a19") == b"19"
    assert len(read(path)) == size  # cut back to before MULTI
    c.set("after", "1")
    assert restart(spawn, s).new_client().get("after") == b"1"


def test_complete_multi_block_loads(spawn, target):
    d = written(spawn, target)
    with open(incr_path(d), "ab") as f:
        f.write(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nset\r\n$1\r\nx\r\n$1\r\n1\r\n"
                b"*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*3\r\n$3\r\nset\r\n$1\r\ny\r\n$1\r\n2\r\n*1\r\n$4\r\nEXEC\r\n")
    c = spawn(*AOF, "--dir", d).new_client()
    assert c.get("x") == b"1"
    c.execute_command("SELECT", 2)
    assert c.get("y") == b"2"


def test_bad_manifest_refused(spawn, target):
    d = written(spawn, target)
    with open(os.path.join(d, AOFDIR, "appendonly.aof.manifest"), "a") as f:
        f.write("file appendonly.aof.1.incr.aof seq 1 type i\n")
    log = refused_log(target, *AOF, "--dir", d)
    assert "FATAL AOF MANIFEST FILE ERROR" in log and "Found a non-monotonic sequence number" in log


# ---- kill -9 while clients write ----

DROPPED = (redis.ConnectionError, redis.TimeoutError, ConnectionResetError, OSError)


def write_until_killed(s, tag, seconds, acked):
    """Three clients write until the server is SIGKILLed after `seconds`;
    every acknowledged key goes into acked with its time. Returns the
    time of the kill."""
    stop = threading.Event()

    def writer(n):
        c = s.new_client(socket_timeout=5)
        i = 0
        try:
            while not stop.is_set() and i < 200000:
                k = "%s:%d:%d" % (tag, n, i)
                c.set(k, i)
                acked.append((k, time.time()))
                i += 1
        except DROPPED:
            pass

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    killed = time.time()
    os.kill(s.proc.pid, signal.SIGKILL)
    s.proc.wait(10)
    stop.set()
    for t in threads:
        t.join(10)
    return killed


def missing(c, acked):
    p = c.pipeline(transaction=False)
    for k, _ in acked:
        p.exists(k)
    return [a for a, there in zip(acked, p.execute()) if not there]


@pytest.mark.parametrize("policy", ["always", "everysec"])
def test_kill9_keeps_acknowledged_writes(target, policy, tmp_path):
    d = str(tmp_path)
    acked = []
    for rnd in range(20):
        s = Server(target, list(AOF) + ["--appendfsync", policy, "--dir", d])
        s.start()
        killed = write_until_killed(s, "r%d" % rnd, 0.2 + (rnd % 4) * 0.1, acked)
        s2 = Server(target, list(AOF) + ["--dir", d])
        s2.start()
        try:
            lost = missing(s2.new_client(), acked)
        finally:
            s2.stop()
        if policy == "always":
            assert lost == [], "round %d lost %d acknowledged writes" % (rnd, len(lost))
        else:  # at most the last two seconds (redis-server may postpone a write by 2 s)
            assert all(t > killed - 2.5 for _, t in lost), "round %d lost old writes" % rnd
            acked = [a for a in acked if a not in lost]
    assert len(acked) > 100


# ---- a full disk ----

@pytest.fixture
def small_fs():
    mnt = tempfile.mkdtemp(prefix="shoal-aof-full-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: %s" % r.stderr.strip())
    yield mnt
    if subprocess.run(["umount", "-l", mnt], capture_output=True).returncode == 0:
        os.rmdir(mnt)


def test_disk_full_refuses_writes_then_recovers(spawn, target, small_fs):
    s = spawn(*AOF, "--dir", small_fs, "--appendfsync", "everysec")
    c = s.new_client()
    filler = os.path.join(small_fs, "filler")
    with open(filler, "wb") as f:
        f.write(b"\0" * (1200 * 1024))
    acked, err = [], None
    for i in range(4000):
        try:
            c.set("k%d" % i, "x" * 1000)
            acked.append(i)
        except redis.ResponseError as e:
            err = str(e)
            break
    assert err and err.startswith("MISCONF Errors writing to the AOF file: No space left on device"), err
    assert c.info("persistence")["aof_last_write_status"] == "err"
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        c.set("more", "1")
    assert c.get("k0") == b"x" * 1000  # reads still answer
    os.unlink(filler)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            c.set("after", "1")
            break
        except redis.ResponseError:
            time.sleep(0.1)
    assert c.get("after") == b"1"
    assert c.info("persistence")["aof_last_write_status"] == "ok"
    c2 = restart(spawn, s).new_client()
    assert sum(c2.exists("k%d" % i) for i in acked) == len(acked)
    assert c2.get("after") == b"1"


# ---- CONFIG and INFO ----

def test_config_set_appendonly_at_run_time(spawn, target):
    s = spawn()
    c = s.new_client()
    fill(c)
    assert c.config_set("appendonly", "yes")
    deadline = time.time() + 10
    info = c.info("persistence")
    while time.time() < deadline and (info["aof_rewrites"] < 1 or info["aof_rewrite_in_progress"]):
        time.sleep(0.05)  # redis-server rewrites in a child; shoal is done at once
        info = c.info("persistence")
    assert info["aof_enabled"] == 1 and info["aof_rewrite_in_progress"] == 0
    c.set("after", "1")
    c.incr("counter")
    want = snapshot(c)
    s2 = restart(spawn, s)
    assert snapshot(s2.new_client()) == want
    d = data_dir(s2)
    s2.stop()
    rc, out = check_aof(d)  # a base with every type in it
    assert rc == 0, out


def test_config_set_appendonly_no_stops_logging(spawn, target):
    s = spawn(*LIVE)
    c = s.new_client()
    c.set("before", "1")
    assert c.config_set("appendonly", "no")
    assert c.info("persistence")["aof_enabled"] == 0
    c.set("unlogged", "1")
    assert b"unlogged" not in read(incr_path(s.dir))


def test_directives(rs):
    defaults = {"appendonly": "no", "appendfsync": "everysec", "appenddirname": "appendonlydir",
                "appendfilename": "appendonly.aof", "aof-use-rdb-preamble": "yes", "aof-load-truncated": "yes",
                "aof-timestamp-enabled": "no", "auto-aof-rewrite-percentage": "100",
                "auto-aof-rewrite-min-size": "67108864"}
    for k, v in defaults.items():
        assert rs.config_get(k) == {k: v}
    assert rs.config_set("appendfsync", "ALWAYS")
    assert rs.config_get("appendfsync") == {"appendfsync": "always"}
    assert rs.config_set("appendfsync", "everysec")
    with pytest.raises(redis.ResponseError, match="argument\\(s\\) must be one of the following: everysec, always, no"):
        rs.config_set("appendfsync", "sometimes")
    for k in ("appenddirname", "appendfilename"):
        with pytest.raises(redis.ResponseError, match="can't set immutable config"):
            rs.config_set(k, "x")
    with pytest.raises(redis.ResponseError, match="argument must be between 0 and 2147483647 inclusive"):
        rs.config_set("auto-aof-rewrite-percentage", "-1")
    assert rs.config_set("auto-aof-rewrite-min-size", "1k")
    assert rs.config_get("auto-aof-rewrite-min-size") == {"auto-aof-rewrite-min-size": "1000"}
    assert rs.config_set("auto-aof-rewrite-min-size", "64mb")


def test_dirname_must_not_be_a_path(target):
    log = refused_log(target, "--appenddirname", "a/b")
    assert "appenddirname can't be a path, just a dirname" in log


def test_info_persistence(spawn, target):
    off = spawn().new_client().info("persistence")
    assert off["aof_enabled"] == 0 and off["aof_last_write_status"] == "ok"
    assert "aof_current_size" not in off
    s = spawn(*AOF)
    c = s.new_client()
    c.set("a", "1")
    info = c.info("persistence")
    assert info["aof_current_size"] > 0
    info = restart(spawn, s).new_client().info("persistence")
    for k in ("aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled", "aof_last_rewrite_time_sec",
              "aof_current_rewrite_time_sec", "aof_last_bgrewrite_status", "aof_rewrites",
              "aof_rewrites_consecutive_failures", "aof_last_write_status", "aof_last_cow_size",
              "aof_current_size", "aof_base_size", "aof_pending_rewrite", "aof_buffer_length",
              "aof_pending_bio_fsync", "aof_delayed_fsync"):
        assert k in info, k
    assert info["aof_enabled"] == 1 and info["aof_rewrite_in_progress"] == 0
    assert info["aof_current_size"] > info["aof_base_size"] > 0


# ---- BGREWRITEAOF (shoal: the base comes from a fork-free snapshot) ----

def wait_rewrite(c, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = c.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info.get("aof_rewrite_scheduled"):
            return info
        time.sleep(0.02)
    raise AssertionError("the AOF rewrite did not finish")


def test_bgrewriteaof_new_base_and_restart(spawn, target):
    s = spawn(*LIVE)
    c = s.new_client()
    fill(c)
    before_files = manifest(s.dir)
    assert raw_exchange(s, b"BGREWRITEAOF\r\n") == b"+Background append only file rewriting started\r\n"
    info = wait_rewrite(c)
    assert info["aof_last_bgrewrite_status"] == "ok"
    files = manifest(s.dir)
    assert [t for _, _, t in files] == ["b", "i"]
    assert files[0][1] == before_files[0][1] + 1 and files[1][1] == before_files[-1][1] + 1
    assert sorted(os.listdir(os.path.join(s.dir, AOFDIR))) == sorted([n for n, _, _ in files] +
                                                                       ["appendonly.aof.manifest"])
    c.set("after", "1")
    want = snapshot(c)
    check_aof(s.dir)
    c2 = restart(spawn, s).new_client()
    assert snapshot(c2) == want


def test_bgrewriteaof_with_appendonly_no_writes_a_base(spawn, target):
    """As Redis 7.0: the rewrite still makes a base and a manifest that
    lists it alone; DEBUG LOADAOF loads it; a restart with appendonly no
    does not."""
    s = spawn("--enable-debug-command", "yes")
    c = s.new_client()
    fill(c)
    want = snapshot(c)
    assert raw_exchange(s, b"BGREWRITEAOF\r\n") == b"+Background append only file rewriting started\r\n"
    assert wait_rewrite(c)["aof_last_bgrewrite_status"] == "ok"
    files = manifest(s.dir)
    assert [t for _, _, t in files] == ["b"]
    c.set("later", "1")  # not in the AOF: it is off
    assert c.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert snapshot(c) == want
    assert c.info("persistence")["aof_enabled"] == 0


def test_writes_during_rewrite_are_kept(spawn, target):
    s = spawn(*LIVE, "--rdb-key-save-delay", "500")
    c = s.new_client()
    # about 1 s of rewriting: raw_exchange alone waits 0.5 s for silence
    c.mset({"k%d" % i: "old" for i in range(2000)})
    assert raw_exchange(s, b"BGREWRITEAOF\r\n") == b"+Background append only file rewriting started\r\n"
    assert c.info("persistence")["aof_rewrite_in_progress"] == 1
    with pytest.raises(redis.ResponseError, match="rewriting already in progress"):
        c.execute_command("BGREWRITEAOF")
    with pytest.raises(redis.ResponseError, match="Another child process is active"):
        c.execute_command("BGSAVE")
    for i in range(0, 2000, 2):
        c.set("k%d" % i, "new")
    c.delete("k1")
    wait_rewrite(c)
    names = ["k%d" % i for i in range(2000)]
    want = dict(zip(names, c.mget(names)))
    c2 = restart(spawn, s).new_client()
    got = dict(zip(want, c2.mget(list(want))))
    assert got == want and got["k0"] == b"new" and got["k1"] is None and got["k3"] == b"old"


def test_rewrite_and_bgsave_schedule_each_other(spawn, target):
    s = spawn(*LIVE, "--rdb-key-save-delay", "300")
    c = s.new_client()
    c.mset({"k%d" % i: "v" for i in range(3000)})  # ~0.9 s per save: outlasts raw_exchange's 0.5 s
    assert c.execute_command("BGSAVE") is True
    assert raw_exchange(s, b"BGREWRITEAOF\r\n") == b"+Background append only file rewriting scheduled\r\n"
    info = wait_rewrite(c)
    assert info["aof_last_bgrewrite_status"] == "ok" and info["rdb_last_bgsave_status"] == "ok"
    assert os.path.exists(os.path.join(s.dir, "dump.rdb"))
    assert raw_exchange(s, b"BGREWRITEAOF\r\n") == b"+Background append only file rewriting started\r\n"
    assert raw_exchange(s, b"BGSAVE SCHEDULE\r\n") == b"+Background saving scheduled\r\n"
    wait_rewrite(c)
    deadline = time.time() + 30
    while c.info("persistence")["rdb_bgsave_in_progress"] or time.time() < deadline and \
            c.info("persistence")["rdb_saves"] < 2:
        time.sleep(0.05)
    assert c.info("persistence")["rdb_saves"] >= 2


def test_auto_rewrite(spawn, target):
    s = spawn(*LIVE, "--auto-aof-rewrite-percentage", "100", "--auto-aof-rewrite-min-size", "4096")
    c = s.new_client()
    seq = manifest(s.dir)[0][1]
    for i in range(200):
        c.set("key%d" % i, "x" * 100)
    deadline = time.time() + 20
    while time.time() < deadline and manifest(s.dir)[0][1] == seq:
        time.sleep(0.1)
    assert manifest(s.dir)[0][1] > seq
    assert "rewrit" in s.read_log().lower()
