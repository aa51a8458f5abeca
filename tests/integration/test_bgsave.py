"""Background saves: BGSAVE writes the dataset as it was when the command
ran, whatever writes come after (shoal without fork, redis by fork), the
save rules, the final save at SHUTDOWN and on SIGTERM, MISCONF after a
failed save, and a failed save keeping the previous file. Every test runs
on shoal --threads 1, --threads 4 and redis-server 7.0.

rdb-key-save-delay (microseconds per key, a Redis testing aid shoal also
reads) keeps a save running long enough to meet the writes that follow."""
import os
import shutil
import subprocess
import threading
import time

import pytest
import redis

from dataset import fill, has_list, snapshot
from helpers import raw_exchange

CHECK_RDB = shutil.which("redis-check-rdb") or "/usr/bin/redis-check-rdb"


def wait_bgsave(c, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = c.info("persistence")
        if not info["rdb_bgsave_in_progress"]:
            return info
        time.sleep(0.02)
    raise AssertionError("the background save did not finish")


def temp_files(d):
    return [f for f in os.listdir(d) if f.startswith("temp-")]


def restart(spawn, s):
    s.stop()
    return spawn("--dir", s.dir)


def test_bgsave_restart_keeps_everything(spawn):
    s = spawn()
    c = s.new_client()
    fill(c, has_list(c))
    before = snapshot(c)
    assert c.execute_command("BGSAVE") is True
    info = wait_bgsave(c)
    assert info["rdb_last_bgsave_status"] == "ok"
    assert info["rdb_changes_since_last_save"] == 0
    assert not temp_files(s.dir)
    path = os.path.join(s.dir, "dump.rdb")
    out = subprocess.run([CHECK_RDB, path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "RDB looks OK" in out.stdout, out.stdout + out.stderr
    c2 = restart(spawn, s).new_client()
    assert snapshot(c2) == before


def load_strings(c, n, value):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set("k:%d" % i, "%s:%d" % (value, i))
        if i % 1000 == 999:
            p.execute()
    p.execute()


def strings_of(c, n):
    vals = []
    for i in range(0, n, 1000):
        vals += c.mget(["k:%d" % j for j in range(i, min(n, i + 1000))])
    return vals


N = 20000


def test_bgsave_is_point_in_time(spawn):
    """Writes of every kind right after BGSAVE: the file has none of them."""
    s = spawn("--rdb-key-save-delay", "30")
    c = s.new_client()
    lists = has_list(c)
    fill(c, lists)
    before = snapshot(c)
    load_strings(c, N, "old")
    old = strings_of(c, N)
    assert c.execute_command("BGSAVE") is True
    p = c.pipeline(transaction=False)
    for i in range(0, N, 3):
        p.set("k:%d" % i, "new")
    for i in range(1, N, 3):
        p.delete("k:%d" % i)
    for i in range(2, N, 3):
        p.append("k:%d" % i, "+")
    p.expire("k:2", 1)
    p.hset("h:ht", "f1", "changed")
    p.hdel("h:lp", "a")
    p.sadd("set:int", 99)
    p.srem("set:ht", "a")
    p.zadd("z:lp", {"a": 100})
    p.zincrby("z:sl", 5, "m1")
    p.persist("z:sl")
    p.incr("s:int")
    p.setrange("s:raw", 0, "Z")
    p.rename("s:embstr", "s:renamed")
    p.move("s:neg", 7)
    p.set("brand:new", "x")
    if lists:
        p.lpush("l:big", "front")
        p.rpop("l:small")
        p.lset("l:big", 100, "changed")
    p.execute()
    info = wait_bgsave(c)
    assert info["rdb_last_bgsave_status"] == "ok"
    c2 = restart(spawn, s).new_client()
    assert strings_of(c2, N) == old
    c2.delete(*["k:%d" % i for i in range(N)])
    assert snapshot(c2) == before


def test_bgsave_survives_flushdb_and_swapdb(spawn):
    s = spawn("--rdb-key-save-delay", "30")
    c = s.new_client()
    fill(c, has_list(c))
    before = snapshot(c)
    load_strings(c, N, "old")
    old = strings_of(c, N)
    assert c.execute_command("BGSAVE") is True
    c.swapdb(0, 7)
    c.flushdb()
    c.execute_command("SELECT", 7)
    c.flushdb(asynchronous=True)
    c.execute_command("SELECT", 0)
    c.set("after", "1")
    wait_bgsave(c)
    c2 = restart(spawn, s).new_client()
    assert strings_of(c2, N) == old
    c2.delete(*["k:%d" % i for i in range(N)])
    assert snapshot(c2) == before


def test_flushall_abandons_the_save(spawn):
    """As Redis: FLUSHALL ends a running save (nothing written) and, when
    save rules exist, saves the empty dataset at once."""
    s = spawn("--rdb-key-save-delay", "1000")
    c = s.new_client()
    load_strings(c, 3000, "v")
    assert c.execute_command("BGSAVE") is True
    c.flushall()
    info = wait_bgsave(c, timeout=10)
    assert info["rdb_bgsave_in_progress"] == 0
    assert not os.path.exists(os.path.join(s.dir, "dump.rdb"))
    assert not temp_files(s.dir)
    c.set("x", "1")
    c.config_set("save", "3600 1")
    assert c.execute_command("BGSAVE") is True  # a new save may start
    c.flushall()
    assert os.path.exists(os.path.join(s.dir, "dump.rdb"))
    assert restart(spawn, s).new_client().dbsize() == 0


def test_bgsave_while_running(spawn):
    s = spawn("--rdb-key-save-delay", "1000")
    c = s.new_client()
    load_strings(c, 3000, "v")  # about 3 s of saving
    assert c.execute_command("BGSAVE") is True
    info = c.info("persistence")
    assert info["rdb_bgsave_in_progress"] == 1
    for cmd in (("BGSAVE",), ("BGSAVE", "SCHEDULE"), ("SAVE",)):
        with pytest.raises(redis.ResponseError, match="Background save already in progress"):
            c.execute_command(*cmd)
    with pytest.raises(redis.ResponseError, match="syntax error"):
        c.execute_command("BGSAVE", "NOW")
    assert c.set("during", "1")  # the server keeps serving
    assert c.get("k:1") == b"v:1"
    try:
        c.shutdown(nosave=True)
    except redis.ConnectionError:
        pass
    assert s.proc.wait(10) is not None
    assert not temp_files(s.dir)  # the unfinished save left nothing behind
    assert not os.path.exists(os.path.join(s.dir, "dump.rdb"))


def test_bgsave_schedule_starts_when_idle(spawn):
    s = spawn()
    c = s.new_client()
    c.set("a", "1")
    assert raw_exchange(s, b"BGSAVE SCHEDULE\r\n") == b"+Background saving started\r\n"
    assert wait_bgsave(c)["rdb_last_bgsave_status"] == "ok"
    assert restart(spawn, s).new_client().get("a") == b"1"


def test_save_rules_trigger_a_background_save(spawn):
    s = spawn("--save", "1 3")
    c = s.new_client()
    c.set("a", "1")
    time.sleep(2.2)  # one change: the rule (3 changes) does not hold
    assert not os.path.exists(os.path.join(s.dir, "dump.rdb"))
    c.set("b", "2")
    c.set("c", "3")
    deadline = time.time() + 15
    while time.time() < deadline:
        info = c.info("persistence")
        if info["rdb_changes_since_last_save"] == 0 and not info["rdb_bgsave_in_progress"]:
            break
        time.sleep(0.1)
    assert info["rdb_changes_since_last_save"] == 0
    assert info["rdb_last_bgsave_status"] == "ok"
    assert "changes in" in s.read_log()
    assert restart(spawn, s).new_client().mget("a", "b", "c") == [b"1", b"2", b"3"]


def test_sigterm_saves_when_rules_exist(spawn):
    s = spawn("--save", "3600 1")
    c = s.new_client()
    c.set("kept", "yes")
    s.stop()  # SIGTERM
    assert os.path.exists(os.path.join(s.dir, "dump.rdb"))
    assert spawn("--dir", s.dir).new_client().get("kept") == b"yes"


def test_sigterm_without_rules_does_not_save(spawn):
    s = spawn()
    s.new_client().set("gone", "1")
    s.stop()
    assert not os.path.exists(os.path.join(s.dir, "dump.rdb"))


def shutdown(c, **kw):
    try:
        c.shutdown(**kw)
    except redis.ConnectionError:
        pass


def test_shutdown_save_and_nosave(spawn):
    s = spawn()
    c = s.new_client()
    c.set("a", "1")
    shutdown(c, save=True)
    assert s.proc.wait(10) == 0
    assert os.path.exists(os.path.join(s.dir, "dump.rdb"))
    s2 = spawn("--dir", s.dir, "--save", "3600 1")
    c2 = s2.new_client()
    assert c2.get("a") == b"1"
    c2.set("a", "2")
    shutdown(c2, nosave=True)
    s2.proc.wait(10)
    assert spawn("--dir", s.dir).new_client().get("a") == b"1"


def test_shutdown_refuses_when_the_save_fails(spawn):
    s = spawn("--save", "3600 1")
    c = s.new_client()
    c.set("a", "1")
    os.makedirs(os.path.join(s.dir, "dump.rdb", "x"))  # rename onto it fails
    with pytest.raises(redis.ResponseError, match="Errors trying to SHUTDOWN"):
        c.shutdown()
    assert c.get("a") == b"1"
    shutil.rmtree(os.path.join(s.dir, "dump.rdb"))


MISCONF = "MISCONF Redis is configured to save RDB snapshots"


def test_misconf_after_a_failed_save(spawn):
    s = spawn("--save", "3600 1")
    c = s.new_client()
    c.set("a", "1")
    blocker = os.path.join(s.dir, "dump.rdb", "x")
    os.makedirs(blocker)
    c.execute_command("BGSAVE")
    info = wait_bgsave(c)
    assert info["rdb_last_bgsave_status"] == "err"
    assert not temp_files(s.dir)
    for cmd in (("SET", "a", "2"), ("DEL", "a"), ("PING",)):
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command(*cmd)
        assert str(e.value).startswith(MISCONF)
    assert c.get("a") == b"1"  # reads still work
    c.config_set("stop-writes-on-bgsave-error", "no")
    assert c.set("a", "3")
    c.config_set("stop-writes-on-bgsave-error", "yes")
    with pytest.raises(redis.ResponseError, match="MISCONF"):
        c.set("a", "4")
    c.config_set("save", "")  # no save rules: writes go on
    assert c.set("a", "5")
    c.config_set("save", "3600 1")
    shutil.rmtree(os.path.join(s.dir, "dump.rdb"))
    c.execute_command("BGSAVE")
    assert wait_bgsave(c)["rdb_last_bgsave_status"] == "ok"
    assert c.set("a", "6")
    assert c.ping()


@pytest.fixture
def small_disk(tmp_path):
    d = tmp_path / "disk"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(d)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: %s" % r.stderr.decode(errors="replace"))
    yield str(d)
    subprocess.run(["umount", "-l", str(d)])


def test_disk_full_keeps_the_old_file(spawn, small_disk):
    s = spawn("--dir", small_disk)
    c = s.new_client()
    c.set("small", "v")
    assert c.save()
    good = open(os.path.join(small_disk, "dump.rdb"), "rb").read()
    c.set("big", os.urandom(3 << 20))  # more than the disk holds
    c.execute_command("BGSAVE")
    info = wait_bgsave(c)
    assert info["rdb_last_bgsave_status"] == "err"
    assert open(os.path.join(small_disk, "dump.rdb"), "rb").read() == good
    assert not temp_files(small_disk)
    c.delete("big")  # space comes back
    c.execute_command("BGSAVE")
    assert wait_bgsave(c)["rdb_last_bgsave_status"] == "ok"
    s.stop()
    assert spawn("--dir", small_disk).new_client().keys("*") == [b"small"]


def test_consistent_cut_across_shards(spawn):
    """Writers keep pairs of keys (on different shards) equal; a save taken
    while they run must hold only equal pairs."""
    s = spawn("--rdb-key-save-delay", "5")
    c = s.new_client()
    pairs = 500
    c.mset({"%s:%d" % (side, i): "0" for i in range(pairs) for side in ("left", "right")})
    stop = threading.Event()
    errors = []

    def writer(seed):
        w = s.new_client()
        v = 0
        try:
            while not stop.is_set():
                v += 1
                i = (v * 7919 + seed) % pairs
                w.mset({"left:%d" % i: "%d.%d" % (seed, v), "right:%d" % i: "%d.%d" % (seed, v)})
        except Exception as e:  # surfaces below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    for _ in range(3):
        c.execute_command("BGSAVE")
        wait_bgsave(c)
    stop.set()
    for t in threads:
        t.join(10)
    assert not errors
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    c2 = restart(spawn, s).new_client()
    left = c2.mget(["left:%d" % i for i in range(pairs)])
    right = c2.mget(["right:%d" % i for i in range(pairs)])
    assert left == right
    assert any(v != b"0" for v in left)  # the saves did see the writers
