"""The latency monitor (LATENCY LATEST HISTORY RESET GRAPH DOCTOR HELP,
latency-monitor-threshold) and LOLWUT, against Redis 7.0's replies.

Spikes come from DEBUG SLEEP, so the servers here enable DEBUG. Sleeps are
only ever checked from below (a sleep of 0.25 s is a sample of at least
250 ms); samples of one second merge, so a count of samples from two
sleeps is 1 or 2. LOLWUT's art is random below its first two rows of
squares: only the fixed part and the shape are compared."""
import hashlib
import re
import time

import pytest
import redis

from helpers import Server
from test_connection import RawConn

HELP = [
    b"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    b"DOCTOR",
    b"    Return a human readable latency analysis report.",
    b"GRAPH <event>",
    b"    Return an ASCII latency graph for the <event> class.",
    b"HISTORY <event>",
    b"    Return time-latency samples for the <event> class.",
    b"LATEST",
    b"    Return the latest latency samples for all events.",
    b"RESET [<event> ...]",
    b"    Reset latency data of one or more <event> classes.",
    b"    (default: reset all data for all event classes)",
    b"HISTOGRAM [COMMAND ...]",
    b"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    b"    If no commands are specified then all histograms are replied.",
    b"HELP",
    b"    Prints this help.",
]

DISABLED = ("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use "
            "\"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep "
            "space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
NO_SPIKES = ("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest "
             "bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
INSPECT = ("- Check your Slow Log to understand what are the commands you are running which are too slow to "
           "execute. Please check https://redis.io/commands/slowlog for more information.\n")
LARGE = ("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If "
         "you have very large objects that are often deleted, expired, or evicted, try to fragment those objects "
         "into multiple smaller objects.\n")
VERSION = b"Redis ver. 7.0.15\n"
NOT_INT = "value is not an integer or out of range"


@pytest.fixture(scope="module")
def dbg(target):
    s = Server(target, ["--enable-debug-command", "yes"])
    s.start()
    yield s
    s.stop()


@pytest.fixture
def c(dbg):
    """A raw-reply client on a server with no latency samples, monitor off."""
    cl = dbg.new_client()
    cl.response_callbacks.clear()
    cl.config_set("latency-monitor-threshold", 0)
    cl.execute_command("LATENCY", "RESET")
    yield cl
    cl.config_set("latency-monitor-threshold", 0)
    cl.execute_command("LATENCY", "RESET")
    cl.close()


def err(cl, *args):
    with pytest.raises(redis.ResponseError) as e:
        cl.execute_command(*args)
    return str(e.value)


def spike(cl, seconds=0.25):
    assert cl.execute_command("DEBUG", "SLEEP", str(seconds)) == b"OK"


# ---- configuration ----

def test_threshold_config(c):
    assert c.execute_command("CONFIG", "GET", "latency-monitor-threshold") == [b"latency-monitor-threshold", b"0"]
    assert c.config_set("latency-monitor-threshold", "9223372036854775807") == b"OK"
    assert c.execute_command("CONFIG", "GET", "latency-monitor-threshold")[1] == b"9223372036854775807"
    assert err(c, "CONFIG", "SET", "latency-monitor-threshold", "-1") == (
        "CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument must be between 0 "
        "and 9223372036854775807 inclusive")
    assert err(c, "CONFIG", "SET", "latency-monitor-threshold", "abc") == (
        "CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument couldn't be parsed "
        "into an integer")


# ---- errors and help ----

def test_help_and_errors(c):
    assert c.execute_command("LATENCY", "HELP") == HELP
    assert c.execute_command("latency", "help") == HELP
    assert err(c, "LATENCY") == "wrong number of arguments for 'latency' command"
    assert err(c, "LATENCY", "NOSUCH") == "unknown subcommand 'NOSUCH'. Try LATENCY HELP."
    assert err(c, "LATENCY", "HELP", "x") == "wrong number of arguments for 'latency|help' command"
    assert err(c, "LATENCY", "LATEST", "x") == "wrong number of arguments for 'latency|latest' command"
    assert err(c, "LATENCY", "DOCTOR", "x") == "wrong number of arguments for 'latency|doctor' command"
    assert err(c, "LATENCY", "HISTORY") == "wrong number of arguments for 'latency|history' command"
    assert err(c, "LATENCY", "HISTORY", "a", "b") == "wrong number of arguments for 'latency|history' command"
    assert err(c, "LATENCY", "GRAPH") == "wrong number of arguments for 'latency|graph' command"
    assert err(c, "LATENCY", "GRAPH", "nosuch") == "No samples available for event 'nosuch'"
    assert err(c, "LATENCY", "GRAPH", "x" * 100) == "No samples available for event '%s'" % ("x" * 100)


def test_empty_store(c):
    assert c.execute_command("LATENCY", "LATEST") == []
    assert c.execute_command("LATENCY", "HISTORY", "command") == []
    assert c.execute_command("LATENCY", "HISTORY", "nosuch") == []
    assert c.execute_command("LATENCY", "RESET") == 0
    assert c.execute_command("LATENCY", "RESET", "a", "b", "command") == 0


def test_doctor_without_samples(c):
    assert c.execute_command("LATENCY", "DOCTOR").decode() == DISABLED
    c.config_set("latency-monitor-threshold", 100)
    assert c.execute_command("LATENCY", "DOCTOR").decode() == NO_SPIKES


def test_nothing_recorded_below_threshold_or_when_off(c):
    spike(c, 0.05)
    assert c.execute_command("LATENCY", "LATEST") == []
    c.config_set("latency-monitor-threshold", 100000)
    spike(c, 0.01)
    c.execute_command("PING")
    assert c.execute_command("LATENCY", "LATEST") == []


# ---- samples ----

def test_command_spike_latest_history(c):
    c.config_set("latency-monitor-threshold", 200)
    before = int(time.time())
    spike(c, 0.25)
    spike(c, 0.3)
    after = int(time.time())
    latest = c.execute_command("LATENCY", "LATEST")
    assert len(latest) == 1
    name, when, ms, worst = latest[0]
    assert name == b"command"
    assert before <= when <= after + 1
    assert ms >= 250 and worst >= 300 and worst >= ms
    history = c.execute_command("LATENCY", "HISTORY", "command")
    assert len(history) in (1, 2)  # two sleeps in one second leave one sample, the larger
    assert all(len(s) == 2 and s[1] >= 250 for s in history)
    assert history[-1] == [when, ms]
    assert max(s[1] for s in history) == worst
    assert [s[0] for s in history] == sorted(set(s[0] for s in history))
    assert c.execute_command("LATENCY", "HISTORY", "COMMAND") == []  # names are exact here
    assert c.execute_command("LATENCY", "HISTORY", "fast-command") == []


def test_reset_counts(c):
    c.config_set("latency-monitor-threshold", 100)
    spike(c, 0.15)
    assert c.execute_command("LATENCY", "RESET", "nosuch") == 0
    assert c.execute_command("LATENCY", "RESET", "COMMAND", "command") == 1  # any case, once
    assert c.execute_command("LATENCY", "LATEST") == []
    spike(c, 0.15)
    assert c.execute_command("LATENCY", "RESET") == 1
    assert c.execute_command("LATENCY", "RESET") == 0
    assert c.execute_command("LATENCY", "HISTORY", "command") == []


def test_samples_seen_from_every_connection(dbg, c):
    """At --threads 4 connections spread over shards; each sees the spike."""
    c.config_set("latency-monitor-threshold", 100)
    spike(c, 0.15)
    others = [dbg.new_client() for _ in range(6)]
    try:
        for o in others:
            latest = o.execute_command("LATENCY", "LATEST")
            assert [e[0] for e in latest] == [b"command"]
    finally:
        for o in others:
            o.close()


def test_spike_inside_exec(c):
    c.config_set("latency-monitor-threshold", 100)
    p = c.pipeline(transaction=True)
    p.execute_command("DEBUG", "SLEEP", "0.15")
    assert p.execute() == [b"OK"]
    assert [e[0] for e in c.execute_command("LATENCY", "LATEST")] == [b"command"]


def test_graph(c):
    c.config_set("latency-monitor-threshold", 100)
    spike(c, 0.15)
    g = c.execute_command("LATENCY", "GRAPH", "command").decode()
    m = re.fullmatch(r"command - high (\d+) ms, low (\d+) ms \(all time high (\d+) ms\)\n(-{80})\n(.*)", g, re.S)
    assert m, g
    high, low, worst = int(m.group(1)), int(m.group(2)), int(m.group(3))
    assert high == low == worst >= 150
    # One sample at the bottom of its scale: three blank rows and '_', a
    # blank row, then its age ("0s", "1s") written downwards.
    assert re.fullmatch(r" \n \n \n_\n \n\d\ns\n", m.group(5)), m.group(5)
    assert err(c, "LATENCY", "GRAPH", "COMMAND") == "No samples available for event 'COMMAND'"


def test_graph_two_levels(c):
    """Samples in different seconds: the larger is a full bar."""
    c.config_set("latency-monitor-threshold", 100)
    spike(c, 0.15)
    t0 = int(time.time())
    for _ in range(30):  # wait for the next second (bounded)
        if int(time.time()) != t0:
            break
        time.sleep(0.05)
    spike(c, 0.5)
    history = c.execute_command("LATENCY", "HISTORY", "command")
    g = c.execute_command("LATENCY", "GRAPH", "command").decode().split("\n")
    lo, hi = min(s[1] for s in history), max(s[1] for s in history)
    assert g[0] == "command - high %d ms, low %d ms (all time high %d ms)" % (hi, lo, hi)
    if len(history) == 2 and hi > lo:
        assert [row[1] for row in g[2:6]] == ["#", "|", "|", "|"]
        assert g[5][0] in "_o#|"
        assert g[6] == "  "
        assert g[8] == "ss"


def test_doctor_with_samples(c):
    c.config_set("latency-monitor-threshold", 100)
    spike(c, 0.15)
    d = c.execute_command("LATENCY", "DOCTOR").decode()
    head = "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n"
    assert d.startswith(head)
    m = re.match(r"1\. command: 1 latency spikes \(average (\d+)ms, mean deviation 0ms, period (\d+\.\d\d) sec\)\. "
                 r"Worst all time event (\d+)ms\.\n", d[len(head):])
    assert m, d
    assert int(m.group(1)) == int(m.group(3)) >= 150
    assert float(m.group(2)) >= 1.0
    assert d.endswith("\nI have a few advices for you:\n\n" + INSPECT + LARGE)
    c.config_set("slowlog-log-slower-than", -1)
    try:
        d = c.execute_command("LATENCY", "DOCTOR").decode()
        assert ("- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log "
                "Redis feature using the command 'CONFIG SET slowlog-log-slower-than 100000'. If the Slow log is "
                "disabled Redis is not able to log slow commands execution for you.\n" + INSPECT + LARGE) in d
        c.config_set("slowlog-log-slower-than", 1000000)
        d = c.execute_command("LATENCY", "DOCTOR").decode()
        assert ("- Your current Slow Log configuration only logs events that are slower than your configured latency "
                "monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than 100000'.\n" + INSPECT + LARGE) in d
    finally:
        c.config_set("slowlog-log-slower-than", 10000)
    # The samples outlive turning the monitor off.
    c.config_set("latency-monitor-threshold", 0)
    assert c.execute_command("LATENCY", "DOCTOR").decode().startswith(head)


def test_resp3_verbatim(dbg, c):
    c.config_set("latency-monitor-threshold", 100)
    spike(c, 0.15)
    raw = RawConn(dbg)
    try:
        raw.call("HELLO", "3")
        t, v = raw.call("LATENCY", "DOCTOR")
        assert t == "=" and v.startswith(b"txt:Dave, I have observed")
        t, v = raw.call("LATENCY", "GRAPH", "command")
        assert t == "=" and v.startswith(b"txt:command - high ")
        t, v = raw.call("LATENCY", "LATEST")
        assert t == "*" and len(v) == 1
        assert raw.call_bytes("LOLWUT") == b"=22\r\ntxt:Redis ver. 7.0.15\n\r\n"
    finally:
        raw.close()


def test_command_info_flags(c):
    info = c.execute_command("COMMAND", "INFO", "latency|latest", "latency|help", "lolwut")
    assert info[0][:7] == [b"latency|latest", 2, [b"admin", b"noscript", b"loading", b"stale"], 0, 0, 0,
                           [b"@admin", b"@slow", b"@dangerous"]]
    assert info[1][:7] == [b"latency|help", 2, [b"loading", b"stale"], 0, 0, 0, [b"@slow"]]
    assert info[2][:7] == [b"lolwut", -1, [b"readonly", b"fast"], 0, 0, 0, [b"@read", b"@fast"]]


# ---- LOLWUT ----

SCHOTTER_END = "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. 7.0.15\n"
SKYLINE_END = ("\nDedicated to the 8 bit game developers of past and present.\n"
               "Original 8 bit image from Plaguemon by hikikomori. Redis ver. 7.0.15\n")


def schotter_rows(art, last_newline=True):
    """The rows of Braille characters. Each ends with a newline, except a
    row that starts on the canvas's last pixel row (Redis's quirk)."""
    assert art.endswith(SCHOTTER_END)
    art = art[:-len(SCHOTTER_END)]
    assert art.endswith("\n") == last_newline
    return (art[:-1] if last_newline else art).split("\n")


PIXEL = r"\x1b\[(?:0;30;40|0;90;100|0;37;47|0;97;107)m \x1b\[0m"


def test_lolwut_version_text(c):
    assert c.execute_command("LOLWUT") == VERSION
    assert c.execute_command("LOLWUT", "VERSION") == VERSION  # no value: not the option
    assert c.execute_command("LOLWUT", "foo", "bar") == VERSION
    for v in ("7", "4", "1", "0", "-1", "50", "600"):
        assert c.execute_command("LOLWUT", "VERSION", v) == VERSION
    assert c.execute_command("LOLWUT", "version", "7", "1", "x") == VERSION
    assert err(c, "LOLWUT", "VERSION", "x") == NOT_INT
    assert err(c, "LOLWUT", "VERSION", "5.0") == NOT_INT
    assert err(c, "LOLWUT", "VERSION", "5", "x") == NOT_INT
    assert err(c, "LOLWUT", "VERSION", "5", "10", "10", "x") == NOT_INT
    assert err(c, "LOLWUT", "VERSION", "6", "10", "x") == NOT_INT


def test_lolwut5_small_is_exact(c):
    """Two rows of squares or fewer have no randomness."""
    assert c.execute_command("LOLWUT", "VERSION", "5", "0", "0", "0").decode() == "\u280b\n" + SCHOTTER_END
    assert c.execute_command("LOLWUT", "VERSION", "5", "2", "2", "2").decode() == "\u286f\u286f\n" + SCHOTTER_END
    # 2^32 + 5 is version 5, as Redis prints the version with %u.
    assert c.execute_command("LOLWUT", "VERSION", "4294967301", "1", "1", "1").decode() == "\u280b\n" + SCHOTTER_END
    art = c.execute_command("LOLWUT", "VERSION", "5", "40", "4", "2")
    rows = schotter_rows(art.decode())
    assert len(rows) == 11 and all(len(r) == 40 for r in rows)  # 80 x 42 pixels
    assert hashlib.sha1(art).hexdigest() == "8260eaf0ea8a56be3ed5303e9648676974262519"  # redis-server's bytes


def test_lolwut5_default_shape(c):
    art = c.execute_command("LOLWUT", "VERSION", "5").decode()
    rows = schotter_rows(art)
    # 66 columns: a 132 x 196 pixel canvas, 8 squares of 16 pixels a row.
    assert len(rows) == 49 and all(len(r) == 66 for r in rows)
    assert all("\u2800" <= ch <= "\u28ff" for r in rows for ch in r)
    edge = "\u2800" + ("\u2864" + "\u2824" * 7) * 8 + "\u2844"
    side = "\u2800" + ("\u2847" + "\u2800" * 7) * 8 + "\u2847"
    mid = "\u2800" + ("\u2867" + "\u2824" * 7) * 8 + "\u2847"
    assert rows[:7] == [edge, side, side, side, mid, side, side]


def test_lolwut5_clamps(c):
    art = c.execute_command("LOLWUT", "VERSION", "5", "5000", "500", "1").decode()
    rows = schotter_rows(art, last_newline=False)  # 13 pixel rows: the last character row starts on row 12
    assert len(rows) == 4 and all(len(r) == 1000 for r in rows)  # columns at most 1000, squares per row at most 200
    art = c.execute_command("LOLWUT", "VERSION", "5", "-3", "-3", "-3").decode()
    assert art == "\u280b\n" + SCHOTTER_END


def test_lolwut5_huge_canvas_refused(c, target):
    if target == "redis":
        pytest.skip("departure: redis-server draws about 800 million pixels")
    assert err(c, "LOLWUT", "VERSION", "5", "1000", "1", "200") == "LOLWUT canvas too large"


def test_lolwut6_shape(c):
    art = c.execute_command("LOLWUT", "VERSION", "6").decode()
    assert art.endswith(SKYLINE_END)
    rows = art[:-len(SKYLINE_END)].split("\n")
    assert len(rows) == 20
    assert all(re.fullmatch("(?:%s){80}" % PIXEL, r) for r in rows)
    art = c.execute_command("LOLWUT", "VERSION", "6", "30", "7").decode()
    rows = art[:-len(SKYLINE_END)].split("\n")
    assert len(rows) == 7 and all(re.fullmatch("(?:%s){30}" % PIXEL, r) for r in rows)
    # One pixel: no tower is tall enough to show, the sky stays white.
    assert c.execute_command("LOLWUT", "VERSION", "6", "0", "0").decode() == "\x1b[0;97;107m \x1b[0m" + SKYLINE_END
