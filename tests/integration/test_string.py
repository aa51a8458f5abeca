"""The string family: SET variants, GETSET/GETDEL/GETEX, counters, APPEND,
STRLEN, GETRANGE/SUBSTR/SETRANGE and LCS. Every reply and error text is
checked against Redis 7.0 (the same test runs on redis-server).

Tests that need OBJECT ENCODING or PTTL skip themselves on a target that
does not have those commands yet; test_ttl_kept_or_cleared checks the same
expire rules through expiry itself, so it runs everywhere."""
import time

import pytest
import redis

from helpers import raw_exchange

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOTINT = "value is not an integer or out of range"
NOTFLOAT = "value is not a valid float"
TOOBIG = "string exceeds maximum allowed size (proto-max-bulk-len)"
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


@pytest.fixture(autouse=True)
def raw_replies(r):
    """Exact server replies: no redis-py reply conversion except for INFO."""
    info = r.response_callbacks.get("INFO")
    r.response_callbacks.clear()
    r.response_callbacks["INFO"] = info


def cmd(r, *args):
    return r.execute_command(*args)


def err(r, *args):
    """The error text of a command that must fail (redis-py drops 'ERR ')."""
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def need(r, *probe):
    """Skips the test when the target lacks the command used by probe."""
    try:
        r.execute_command(*probe)
    except redis.ResponseError as e:
        if str(e).startswith("unknown command"):
            pytest.skip("target has no %s yet" % probe[0])


def other_type(r, key):
    """Stores a non-string value at key, or skips the test when the target
    has no other type yet."""
    for probe in (("RPUSH", key, "a"), ("SADD", key, "a"), ("HSET", key, "f", "v"),
                  ("ZADD", key, "1", "a")):
        try:
            r.execute_command(*probe)
            return
        except redis.ResponseError as e:
            if not str(e).startswith("unknown command"):
                raise
    pytest.skip("target has no non-string type yet")


def enc(r, key):
    return cmd(r, "OBJECT", "ENCODING", key)


# ---- SET and its variants ----

def test_set_options(r):
    assert cmd(r, "SET", "k", "v", "EX", "10", "EX", "10") == b"OK"
    assert err(r, "SET", "k", "v", "EX", "10", "PX", "10") == "syntax error"
    assert err(r, "SET", "k", "v", "EX", "10", "KEEPTTL") == "syntax error"
    assert err(r, "SET", "k", "v", "KEEPTTL", "PX", "10") == "syntax error"
    # an option may repeat: only the last time counts
    assert cmd(r, "SET", "k", "v", "EX", "abc", "EX", "10") == b"OK"
    assert cmd(r, "SET", "k", "v", "PX", "0", "PX", "10000") == b"OK"
    assert err(r, "SET", "k", "v", "EX", "10", "EX", "0") == "invalid expire time in 'set' command"
    assert err(r, "SET", "k", "v", "EX", "10", "EX") == "syntax error"
    assert cmd(r, "SET", "x", "v", "EXAT", "99999999999", "EXAT", "1") == b"OK"
    assert cmd(r, "EXISTS", "x") == 0
    assert cmd(r, "SET", "k", "v", "KEEPTTL", "keepttl") == b"OK"
    assert err(r, "SET", "k", "v", "NX", "XX") == "syntax error"
    assert err(r, "SET", "k", "v", "EX") == "syntax error"
    assert err(r, "SET", "k", "v", "PERSIST") == "syntax error"
    assert err(r, "SET", "k", "v", "EX", "0") == "invalid expire time in 'set' command"
    assert err(r, "SET", "k", "v", "PX", str(LLONG_MAX)) == "invalid expire time in 'set' command"
    assert err(r, "SET", "k", "v", "EX", "x") == NOTINT
    assert cmd(r, "SET", "k", "v", "NX") is None
    assert cmd(r, "SET", "k", "v2", "GET", "get") == b"v"
    assert cmd(r, "SET", "k", "v3", "GET", "NX") == b"v2"
    assert cmd(r, "GET", "k") == b"v2"
    assert cmd(r, "SET", "k2", "v", "GET", "XX") is None
    assert cmd(r, "EXISTS", "k2") == 0
    assert cmd(r, "SET", "k", "v", "EXAT", "1") == b"OK"
    assert cmd(r, "EXISTS", "k") == 0


def test_set_over_other_type(r):
    other_type(r, "l")
    assert err(r, "SET", "l", "v", "NX", "GET") == WRONGTYPE
    assert err(r, "SET", "l", "v", "EX", "x", "GET") == NOTINT
    assert cmd(r, "SET", "l", "v", "XX") == b"OK"
    assert cmd(r, "TYPE", "l") == b"string"
    other_type(r, "l2")
    assert cmd(r, "SETEX", "l2", "10", "v") == b"OK"
    assert cmd(r, "GET", "l2") == b"v"


def test_setnx(r):
    assert cmd(r, "SETNX", "k", "v1") == 1
    assert cmd(r, "SETNX", "k", "v2") == 0
    assert cmd(r, "GET", "k") == b"v1"
    assert err(r, "SETNX", "k") == "wrong number of arguments for 'setnx' command"


def test_setex_psetex(r):
    assert cmd(r, "SETEX", "k", "100", "v") == b"OK"
    assert cmd(r, "GET", "k") == b"v"
    assert cmd(r, "PSETEX", "p", "100000", "12") == b"OK"
    assert cmd(r, "GET", "p") == b"12"
    assert cmd(r, "SETEX", "big", "9223372036854", "v") == b"OK"
    assert cmd(r, "EXISTS", "big") == 1


@pytest.mark.parametrize("name,secs,msg", [
    ("SETEX", "0", "invalid expire time in 'setex' command"),
    ("SETEX", "-1", "invalid expire time in 'setex' command"),
    ("SETEX", str(LLONG_MAX), "invalid expire time in 'setex' command"),
    ("SETEX", "9223372036854775", "invalid expire time in 'setex' command"),
    ("SETEX", "abc", NOTINT),
    ("SETEX", "1.5", NOTINT),
    ("PSETEX", "0", "invalid expire time in 'psetex' command"),
    ("PSETEX", str(LLONG_MAX), "invalid expire time in 'psetex' command"),
    ("PSETEX", "x", NOTINT),
])
def test_setex_errors(r, name, secs, msg):
    assert err(r, name, "k", secs, "v") == msg
    assert cmd(r, "EXISTS", "k") == 0


def test_getset(r):
    assert cmd(r, "GETSET", "k", "a") is None
    assert cmd(r, "GETSET", "k", "10") == b"a"
    assert cmd(r, "GETSET", "k", "b") == b"10"
    assert cmd(r, "GET", "k") == b"b"


def test_getdel(r):
    assert cmd(r, "GETDEL", "k") is None
    r.set("k", "v")
    r.set("n", 42)
    assert cmd(r, "GETDEL", "k") == b"v"
    assert cmd(r, "EXISTS", "k") == 0
    assert cmd(r, "GETDEL", "n") == b"42"
    assert cmd(r, "GETDEL", "n") is None


@pytest.mark.parametrize("args,msg", [
    (["FOO"], "syntax error"),
    (["EX"], "syntax error"),
    (["EX", "10", "PX", "10"], "syntax error"),
    (["EX", "10", "PXAT", "10"], "syntax error"),
    (["EX", "10", "EX"], "syntax error"),
    (["PX", "10", "PX", "0"], "invalid expire time in 'getex' command"),
    (["EX", "10", "EX", "abc"], NOTINT),
    (["PERSIST", "EX", "10"], "syntax error"),
    (["EX", "10", "PERSIST"], "syntax error"),
    (["NX"], "syntax error"),
    (["KEEPTTL"], "syntax error"),
    (["EX", "0"], "invalid expire time in 'getex' command"),
    (["PXAT", "-5"], "invalid expire time in 'getex' command"),
    (["EX", str(LLONG_MAX)], "invalid expire time in 'getex' command"),
    (["PX", str(LLONG_MAX)], "invalid expire time in 'getex' command"),
    (["EX", "abc"], NOTINT),
])
def test_getex_errors(r, args, msg):
    r.set("k", "v")
    assert err(r, "GETEX", "k", *args) == msg
    assert cmd(r, "GET", "k") == b"v"


def test_getex(r):
    # a missing key answers nil even with a bad time; bad syntax still fails
    assert cmd(r, "GETEX", "nokey") is None
    assert cmd(r, "GETEX", "nokey", "EX", "-1") is None
    assert cmd(r, "GETEX", "nokey", "EX", "abc") is None
    assert err(r, "GETEX", "nokey", "FOO") == "syntax error"
    r.set("k", "v")
    assert cmd(r, "GETEX", "k") == b"v"
    assert cmd(r, "GETEX", "k", "persist", "PERSIST") == b"v"
    assert cmd(r, "GETEX", "k", "ex", "100") == b"v"
    assert cmd(r, "GETEX", "k", "EX", "0", "EX", "100") == b"v"
    assert cmd(r, "GETEX", "k", "PX", "abc", "px", "100000") == b"v"
    assert cmd(r, "GETEX", "k", "PXAT", "99999999999999") == b"v"
    assert cmd(r, "GETEX", "k", "EXAT", "1") == b"v"  # in the past: deleted
    assert cmd(r, "EXISTS", "k") == 0
    r.set("k", "v")
    assert cmd(r, "GETEX", "k", "PXAT", str(int(time.time() * 1000) - 1000)) == b"v"
    assert cmd(r, "EXISTS", "k") == 0


def test_getex_ttl(r):
    need(r, "PTTL", "x")
    r.set("k", "v")
    assert cmd(r, "GETEX", "k", "EX", "100") == b"v"
    assert 99000 < cmd(r, "PTTL", "k") <= 100000
    assert cmd(r, "GETEX", "k", "PX", "5000") == b"v"
    assert 4000 < cmd(r, "PTTL", "k") <= 5000
    assert cmd(r, "GETEX", "k") == b"v"
    assert 4000 < cmd(r, "PTTL", "k") <= 5000
    assert cmd(r, "GETEX", "k", "PERSIST") == b"v"
    assert cmd(r, "PTTL", "k") == -1
    at = int(time.time()) + 1000
    assert cmd(r, "GETEX", "k", "EXAT", str(at)) == b"v"
    assert 998 <= cmd(r, "TTL", "k") <= 1000
    assert cmd(r, "SETEX", "s", "100", "v") == b"OK"
    assert 99 <= cmd(r, "TTL", "s") <= 100
    assert cmd(r, "PSETEX", "p", "100000", "v") == b"OK"
    assert 99000 < cmd(r, "PTTL", "p") <= 100000


def test_ttl_kept_or_cleared(r):
    """Which writes keep a key's expire (checked by letting it pass)."""
    keep = {
        "incr": ("INCR",), "decr": ("DECR",), "incrby": ("INCRBY", "5"),
        "decrby": ("DECRBY", "5"), "incrbyfloat": ("INCRBYFLOAT", "1.5"),
        "append": ("APPEND", "x"), "setrange": ("SETRANGE", "3", "abc"),
        "setrange0": ("SETRANGE", "0", "9"), "getex": ("GETEX",),
    }
    clear = {"getset": ("GETSET", "v"), "set": ("SET", "v"), "persist": ("GETEX", "PERSIST")}
    for k in list(keep) + list(clear):
        r.set(k, "10", px=300)
    r.set("keepttl", "v", px=300)
    r.set("later", "v")
    for k, args in keep.items():
        cmd(r, args[0], k, *args[1:])
    for k, args in clear.items():
        cmd(r, args[0], k, *args[1:])
    assert cmd(r, "SET", "keepttl", "w", "KEEPTTL") == b"OK"
    assert cmd(r, "GETEX", "later", "PX", "300") == b"v"
    assert cmd(r, "SETEX", "setex", "1", "v") == b"OK"
    assert cmd(r, "PSETEX", "psetex", "300", "v") == b"OK"
    time.sleep(0.45)
    gone = list(keep) + ["keepttl", "later", "psetex"]
    assert [k for k in gone if r.exists(k)] == []
    assert [k for k in list(clear) + ["setex"] if not r.exists(k)] == []


# ---- counters ----

def test_incr_decr(r):
    assert cmd(r, "INCR", "n") == 1
    assert cmd(r, "INCR", "n") == 2
    assert cmd(r, "DECR", "n") == 1
    assert cmd(r, "INCRBY", "n", "100") == 101
    assert cmd(r, "DECRBY", "n", "200") == -99
    assert cmd(r, "INCRBY", "n", "-1") == -100
    assert cmd(r, "GET", "n") == b"-100"
    assert cmd(r, "DECR", "m") == -1
    assert cmd(r, "DECRBY", "d", "7") == -7
    r.set("s", "41")
    assert cmd(r, "APPEND", "s", "9") == 3  # raw "419"
    assert cmd(r, "INCR", "s") == 420
    assert cmd(r, "GET", "s") == b"420"
    assert cmd(r, "INCRBY", "x", str(LLONG_MIN)) == LLONG_MIN
    assert cmd(r, "GET", "x") == str(LLONG_MIN).encode()


@pytest.mark.parametrize("value", [" 1", "1 ", "0x10", "9223372036854775808", "-9223372036854775809",
                                   "01", "+1", "-0", "abc", "1.5", "", "1e3", "12345678901234567890123"])
def test_incr_not_integer(r, value):
    r.set("s", value)
    assert err(r, "INCR", "s") == NOTINT
    assert err(r, "DECRBY", "s", "1") == NOTINT
    assert cmd(r, "GET", "s") == value.encode()


def test_incr_overflow(r):
    r.set("n", LLONG_MAX)
    assert err(r, "INCR", "n") == "increment or decrement would overflow"
    assert err(r, "INCRBY", "n", "1") == "increment or decrement would overflow"
    assert err(r, "DECRBY", "n", "-1") == "increment or decrement would overflow"
    assert cmd(r, "INCRBY", "n", "0") == LLONG_MAX
    r.set("n", LLONG_MIN)
    assert err(r, "DECR", "n") == "increment or decrement would overflow"
    assert err(r, "INCRBY", "n", "-1") == "increment or decrement would overflow"
    assert cmd(r, "INCRBY", "n", str(LLONG_MAX)) == -1
    assert err(r, "DECRBY", "n", str(LLONG_MIN)) == "decrement would overflow"
    assert err(r, "DECRBY", "new", str(LLONG_MIN)) == "decrement would overflow"
    assert cmd(r, "EXISTS", "new") == 0


def test_incr_errors(r):
    assert err(r, "INCRBY", "n", "1.0") == NOTINT
    assert err(r, "INCRBY", "n", "9223372036854775808") == NOTINT
    assert err(r, "DECRBY", "n", " 1") == NOTINT
    assert cmd(r, "EXISTS", "n") == 0
    assert err(r, "INCR", "n", "1") == "wrong number of arguments for 'incr' command"


@pytest.mark.parametrize("start,by,out", [
    (None, "3", b"3"), ("10.5", "0.1", b"10.6"), ("10", "-10", b"0"), ("1", "5.0e3", b"5001"),
    ("1", "0x10", b"17"), ("-1.5", "1.5", b"0"), ("3.0", "1e-20", b"3"),
    ("1", "1.5e308", None), (" 1", None, None), ("0.1", "0.2", b"0.3"),
    ("5", "-0.5", b"4.5"), ("1e2", "1", b"101"),
])
def test_incrbyfloat(r, start, by, out):
    if start is not None:
        r.set("f", start)
    if by is None:
        assert err(r, "INCRBYFLOAT", "f", "1") == NOTFLOAT
        return
    got = cmd(r, "INCRBYFLOAT", "f", by)
    if out is None:
        assert got.startswith(b"149999999999999999999901476")
        assert cmd(r, "STRLEN", "f") == len(got)
    else:
        assert got == out
    assert cmd(r, "GET", "f") == got


def test_incrbyfloat_errors(r):
    r.set("f", "1")
    assert err(r, "INCRBYFLOAT", "f", "x") == NOTFLOAT
    assert err(r, "INCRBYFLOAT", "f", " 1") == NOTFLOAT
    assert err(r, "INCRBYFLOAT", "f", "1 ") == NOTFLOAT
    assert err(r, "INCRBYFLOAT", "f", "nan") == NOTFLOAT
    assert err(r, "INCRBYFLOAT", "f", "") == NOTFLOAT
    assert err(r, "INCRBYFLOAT", "f", "inf") == "increment would produce NaN or Infinity"
    assert err(r, "INCRBYFLOAT", "f", "1e5000") == NOTFLOAT
    r.set("big", "1.7e308")
    assert cmd(r, "INCRBYFLOAT", "big", "1.7e308").startswith(b"34")
    r.set("s", "abc")
    assert err(r, "INCRBYFLOAT", "s", "1") == NOTFLOAT
    r.set("i", "inf")
    assert err(r, "INCRBYFLOAT", "i", "1") == "increment would produce NaN or Infinity"
    assert cmd(r, "GET", "f") == b"1"
    # a NUL inside is not the end of the number
    r.set("nul", b"1\x002")
    assert err(r, "INCRBYFLOAT", "nul", "1") == NOTFLOAT
    assert err(r, "INCRBYFLOAT", "f", b"1\x002") == NOTFLOAT
    assert err(r, "INCRBY", "nul", "1") == "value is not an integer or out of range"


# ---- APPEND, STRLEN ----

def test_append_strlen(r):
    assert cmd(r, "APPEND", "k", "hello") == 5
    assert cmd(r, "APPEND", "k", " world") == 11
    assert cmd(r, "GET", "k") == b"hello world"
    assert cmd(r, "STRLEN", "k") == 11
    assert cmd(r, "APPEND", "k", "") == 11
    assert cmd(r, "APPEND", "e", "") == 0
    assert cmd(r, "EXISTS", "e") == 1
    assert cmd(r, "STRLEN", "e") == 0
    assert cmd(r, "STRLEN", "nokey") == 0
    r.set("n", -12345)
    assert cmd(r, "STRLEN", "n") == 6
    assert cmd(r, "APPEND", "n", "6") == 7
    assert cmd(r, "GET", "n") == b"-123456"


def test_append_grows_across_sizes(r):
    """Crosses the embstr limit and the 1- and 2-byte length varints."""
    expect = b""
    for chunk in (b"a" * 40, b"b" * 10, b"c" * 80, b"\x00\xff" * 100, b"d" * 16000, b"e" * 500):
        expect += chunk
        assert cmd(r, "APPEND", "k", chunk) == len(expect)
        assert cmd(r, "GET", "k") == expect
    assert cmd(r, "STRLEN", "k") == len(expect)


def test_append_binary(r):
    assert cmd(r, "APPEND", "k", b"\x00\r\n") == 3
    assert cmd(r, "APPEND", "k", b"\x00") == 4
    assert cmd(r, "GET", "k") == b"\x00\r\n\x00"


def test_size_limit(r):
    assert cmd(r, "CONFIG", "SET", "proto-max-bulk-len", "1048576") == b"OK"
    try:
        r.set("x", "a" * (600 * 1024))
        assert err(r, "APPEND", "x", "b" * (500 * 1024)) == TOOBIG
        assert cmd(r, "APPEND", "x", "b" * (1048576 - 600 * 1024)) == 1048576
        assert err(r, "APPEND", "x", "b") == TOOBIG
        assert cmd(r, "STRLEN", "x") == 1048576
        assert cmd(r, "SETRANGE", "z", "1048575", "x") == 1048576
        assert err(r, "SETRANGE", "z", "1048576", "x") == TOOBIG
        assert err(r, "SETRANGE", "z", "1048575", "xy") == TOOBIG
        assert err(r, "SETRANGE", "new", "1048575", "xy") == TOOBIG
        assert cmd(r, "EXISTS", "new") == 0
        assert cmd(r, "GETRANGE", "z", "1048570", "-1") == b"\x00" * 5 + b"x"
    finally:
        cmd(r, "CONFIG", "SET", "proto-max-bulk-len", "536870912")


# ---- GETRANGE, SUBSTR, SETRANGE ----

@pytest.mark.parametrize("start,end,out", [
    (0, -1, b"hello"), (0, 0, b"h"), (1, 3, b"ell"), (-3, -1, b"llo"), (-1, -5, b""),
    (1, 0, b""), (4, 100, b"o"), (5, 100, b""), (0, -100, b"h"), (-100, -100, b"h"),
    (-10, -20, b""), (-100, 2, b"hel"), (0, LLONG_MIN, b"h"), (LLONG_MAX, LLONG_MAX, b""),
    (LLONG_MIN, LLONG_MAX, b"hello"), (LLONG_MIN, LLONG_MIN, b"h"), (LLONG_MAX, 0, b""),
    (-1, LLONG_MAX, b"o"),
])
def test_getrange(r, start, end, out):
    r.set("h", "hello")
    assert cmd(r, "GETRANGE", "h", start, end) == out
    assert cmd(r, "SUBSTR", "h", start, end) == out


def test_getrange_other(r):
    assert cmd(r, "GETRANGE", "nokey", "0", "-1") == b""
    r.set("e", "")
    assert cmd(r, "GETRANGE", "e", "0", "-1") == b""
    assert cmd(r, "GETRANGE", "e", LLONG_MIN, LLONG_MAX) == b""
    r.set("i", 12345)
    assert cmd(r, "GETRANGE", "i", "1", "2") == b"23"
    assert cmd(r, "GETRANGE", "i", "-2", "-1") == b"45"
    assert err(r, "GETRANGE", "i", "a", "1") == NOTINT
    assert err(r, "GETRANGE", "i", "0", "1.0") == NOTINT
    assert err(r, "GETRANGE", "nokey", "a", "1") == NOTINT
    assert err(r, "GETRANGE", "i", "0", "9223372036854775808") == NOTINT
    assert err(r, "GETRANGE", "i", "0") == "wrong number of arguments for 'getrange' command"


def test_setrange(r):
    r.set("k", "Hello World")
    assert cmd(r, "SETRANGE", "k", "6", "Redis") == 11
    assert cmd(r, "GET", "k") == b"Hello Redis"
    assert cmd(r, "SETRANGE", "k", "0", "J") == 11  # in place
    assert cmd(r, "GET", "k") == b"Jello Redis"
    assert cmd(r, "SETRANGE", "k", "14", "!") == 15
    assert cmd(r, "GET", "k") == b"Jello Redis\x00\x00\x00!"
    assert cmd(r, "SETRANGE", "new", "3", "ab") == 5
    assert cmd(r, "GET", "new") == b"\x00\x00\x00ab"
    r.set("i", 123)
    assert cmd(r, "SETRANGE", "i", "1", "") == 3
    assert cmd(r, "SETRANGE", "i", "5", "x") == 6
    assert cmd(r, "GET", "i") == b"123\x00\x00x"
    assert cmd(r, "SETRANGE", "i", "0", "9") == 6
    assert cmd(r, "GET", "i") == b"923\x00\x00x"
    r.set("e", "")
    assert cmd(r, "SETRANGE", "e", "0", "") == 0
    assert cmd(r, "EXISTS", "e") == 1
    big = b"x" * 300
    r.set("b", big)
    assert cmd(r, "SETRANGE", "b", "100", b"\x00yz") == 300
    assert cmd(r, "GET", "b") == big[:100] + b"\x00yz" + big[103:]


def test_setrange_errors(r):
    assert err(r, "SETRANGE", "k", "-1", "x") == "offset is out of range"
    assert err(r, "SETRANGE", "k", "-1", "") == "offset is out of range"
    assert err(r, "SETRANGE", "k", "abc", "x") == NOTINT
    assert err(r, "SETRANGE", "k", "9223372036854775808", "x") == NOTINT
    t = time.time()
    assert err(r, "SETRANGE", "k", str(LLONG_MAX), "x") == TOOBIG
    assert err(r, "SETRANGE", "k", "536870912", "x") == TOOBIG
    assert err(r, "SETRANGE", "k", "536870911", "xy") == TOOBIG
    assert time.time() - t < 1
    assert cmd(r, "SETRANGE", "k", str(LLONG_MAX), "") == 0
    assert cmd(r, "EXISTS", "k") == 0
    r.set("s", "abc")
    assert err(r, "SETRANGE", "s", str(LLONG_MAX), "x") == TOOBIG
    assert cmd(r, "SETRANGE", "s", str(LLONG_MAX), "") == 3
    assert cmd(r, "GET", "s") == b"abc"


# ---- LCS ----

def test_lcs(r):
    r.set("a", "ohmytext")
    r.set("b", "mynewtext")
    assert cmd(r, "LCS", "a", "b") == b"mytext"
    assert cmd(r, "LCS", "a", "b", "LEN") == 6
    assert cmd(r, "LCS", "a", "b", "withmatchlen") == b"mytext"
    assert cmd(r, "LCS", "a", "b", "IDX") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert cmd(r, "LCS", "a", "b", "IDX", "WITHMATCHLEN") == [
        b"matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len", 6]
    assert cmd(r, "LCS", "a", "b", "idx", "minmatchlen", "4", "withmatchlen") == [
        b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]
    assert cmd(r, "LCS", "a", "b", "MINMATCHLEN", "-5", "IDX") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert cmd(r, "LCS", "a", "b", "IDX", "MINMATCHLEN", "7") == [b"matches", [], b"len", 6]
    assert cmd(r, "LCS", "b", "a") == b"mytext"


def test_lcs_missing_and_ints(r):
    r.set("a", "abcdef")
    assert cmd(r, "LCS", "a", "nokey") == b""
    assert cmd(r, "LCS", "nokey", "a", "LEN") == 0
    assert cmd(r, "LCS", "a", "nokey", "IDX") == [b"matches", [], b"len", 0]
    assert cmd(r, "LCS", "x", "y", "IDX", "WITHMATCHLEN") == [b"matches", [], b"len", 0]
    assert cmd(r, "LCS", "a", "a", "IDX", "WITHMATCHLEN") == [b"matches", [[[0, 5], [0, 5], 6]], b"len", 6]
    r.set("i", 1234567)
    r.set("j", 9345)
    assert cmd(r, "LCS", "i", "j") == b"345"
    assert cmd(r, "LCS", "i", "j", "IDX") == [b"matches", [[[2, 4], [1, 3]]], b"len", 3]


def test_lcs_tie_breaking(r):
    """Several LCS of the same length exist: the one chosen is Redis's."""
    cases = [("abab", "baba"), ("abcabc", "cbacba"), ("aaaa", "aa"), ("xaybzc", "abcxyz"),
             ("GAC", "AGCAT"), ("abcbdab", "bdcaba")]
    for i, (x, y) in enumerate(cases):
        r.set("x%d" % i, x)
        r.set("y%d" % i, y)
    got = [(cmd(r, "LCS", "x%d" % i, "y%d" % i),
            cmd(r, "LCS", "x%d" % i, "y%d" % i, "IDX", "WITHMATCHLEN")) for i in range(len(cases))]
    assert got == [
        (b"bab", [b"matches", [[[1, 3], [0, 2], 3]], b"len", 3]),
        (b"cbc", [b"matches", [[[5, 5], [3, 3], 1], [[4, 4], [1, 1], 1], [[2, 2], [0, 0], 1]], b"len", 3]),
        (b"aa", [b"matches", [[[2, 3], [0, 1], 2]], b"len", 2]),
        (b"abc", [b"matches", [[[5, 5], [2, 2], 1], [[3, 3], [1, 1], 1], [[1, 1], [0, 0], 1]], b"len", 3]),
        (b"AC", [b"matches", [[[2, 2], [2, 2], 1], [[1, 1], [0, 0], 1]], b"len", 2]),
        (b"bdab", [b"matches", [[[5, 6], [3, 4], 2], [[3, 4], [0, 1], 2]], b"len", 4]),
    ]


def test_lcs_errors(r):
    r.set("a", "ohmytext")
    r.set("b", "mynewtext")
    both = "If you want both the length and indexes, please just use IDX."
    assert err(r, "LCS", "a", "b", "IDX", "LEN") == both
    assert err(r, "LCS", "a", "b", "len", "idx") == both
    assert err(r, "LCS", "a", "b", "FOO") == "syntax error"
    assert err(r, "LCS", "a", "b", "MINMATCHLEN") == "syntax error"
    assert err(r, "LCS", "a", "b", "MINMATCHLEN", "x") == NOTINT
    assert err(r, "LCS", "a") == "wrong number of arguments for 'lcs' command"


def test_lcs_memory_limit(r):
    assert cmd(r, "CONFIG", "SET", "proto-max-bulk-len", "1048576") == b"OK"
    try:
        r.set("x", "a" * 511)
        r.set("y", "a" * 511)  # 512 * 512 * 4 bytes: exactly the limit
        assert cmd(r, "LCS", "x", "y", "LEN") == 511
        assert cmd(r, "LCS", "x", "y") == b"a" * 511
        r.set("y", "a" * 512)
        msg = "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
        assert err(r, "LCS", "x", "y", "LEN") == msg
        assert err(r, "LCS", "x", "y", "IDX") == msg
        assert err(r, "LCS", "y", "x") == msg
    finally:
        cmd(r, "CONFIG", "SET", "proto-max-bulk-len", "536870912")


def test_lcs_across_keys(r):
    """Key pairs that land on different shards of a multi-shard server."""
    pairs = [("lcsA%d" % i, "lcsB%d" % i) for i in range(12)]
    for i, (x, y) in enumerate(pairs):
        r.set(x, "the quick brown fox %d" % i)
        r.set(y, "a quick brown dog %d" % i)
    for i, (x, y) in enumerate(pairs):
        assert cmd(r, "LCS", x, y) == (" quick brown o %d" % i).encode()


def test_lcs_resp3(server, r):
    r.set("a", "ohmytext")
    r.set("b", "mynewtext")
    out = raw_exchange(server, b"HELLO 3\r\nLCS a b IDX MINMATCHLEN 4 WITHMATCHLEN\r\n",
                       read_until=b"len\r\n:6\r\n")
    assert out.endswith(b"%2\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n"
                        b"$3\r\nlen\r\n:6\r\n")


# ---- keys of another type ----

STRINGS = "The specified keys must contain string values"


@pytest.mark.parametrize("args,msg", [
    (["SETNX", "l", "v"], 0),
    (["GETSET", "l", "v"], WRONGTYPE),
    (["GETDEL", "l"], WRONGTYPE),
    (["GET", "l"], WRONGTYPE),
    (["MGET", "l", "nokey"], [None, None]),
    (["GETEX", "l"], WRONGTYPE),
    (["GETEX", "l", "PERSIST"], WRONGTYPE),
    (["GETEX", "l", "EX", "0"], WRONGTYPE),  # type before the time
    (["INCR", "l"], WRONGTYPE),
    (["DECR", "l"], WRONGTYPE),
    (["INCRBY", "l", "abc"], NOTINT),  # the increment is parsed first
    (["INCRBY", "l", "1"], WRONGTYPE),
    (["DECRBY", "l", "1"], WRONGTYPE),
    (["INCRBYFLOAT", "l", "x"], WRONGTYPE),  # type before the increment
    (["APPEND", "l", "x"], WRONGTYPE),
    (["STRLEN", "l"], WRONGTYPE),
    (["GETRANGE", "l", "0", "1"], WRONGTYPE),
    (["GETRANGE", "l", "x", "1"], NOTINT),
    (["SUBSTR", "l", "0", "1"], WRONGTYPE),
    (["SETRANGE", "l", "0", ""], WRONGTYPE),
    (["SETRANGE", "l", "0", "x"], WRONGTYPE),
    (["SETRANGE", "l", "-1", "x"], "offset is out of range"),
    (["LCS", "a", "l"], STRINGS),
    (["LCS", "l", "nokey"], STRINGS),
    (["LCS", "l", "a", "FOO"], STRINGS),  # type is checked first
])
def test_wrongtype(r, args, msg):
    other_type(r, "l")
    r.set("a", "abc")
    kind = cmd(r, "TYPE", "l")
    if isinstance(msg, str):
        assert err(r, *args) == msg
    else:
        assert cmd(r, *args) == msg
    assert cmd(r, "TYPE", "l") == kind


def test_wrongtype_counts_as_hit(r):
    other_type(r, "l")
    cmd(r, "CONFIG", "RESETSTAT")
    cmd(r, "MGET", "l", "x")
    info = r.info("stats")
    assert (info["keyspace_hits"], info["keyspace_misses"]) == (1, 1)


# ---- encodings and statistics ----

def test_encodings(r):
    need(r, "OBJECT", "ENCODING", "nokey")
    r.set("i", "123")
    assert enc(r, "i") == b"int"
    assert cmd(r, "INCR", "i") == 124
    assert enc(r, "i") == b"int"
    r.set("s", "12a")
    assert enc(r, "s") == b"embstr"
    cmd(r, "APPEND", "s", "")
    assert enc(r, "s") == b"raw"
    cmd(r, "APPEND", "a", "123")
    assert enc(r, "a") == b"int"
    cmd(r, "APPEND", "a", "4")
    assert enc(r, "a") == b"raw"
    assert cmd(r, "INCR", "a") == 1235
    assert enc(r, "a") == b"int"
    cmd(r, "APPEND", "b", "hello")
    assert enc(r, "b") == b"embstr"
    cmd(r, "APPEND", "c", "x" * 45)
    assert enc(r, "c") == b"raw"
    cmd(r, "SETRANGE", "r", "0", "ab")
    assert enc(r, "r") == b"raw"
    r.set("t", 5)
    cmd(r, "SETRANGE", "t", "0", "6")
    assert enc(r, "t") == b"raw"
    cmd(r, "INCRBYFLOAT", "f", "3")
    assert enc(r, "f") == b"embstr"
    r.set("g", 10)
    cmd(r, "INCRBYFLOAT", "g", "0")
    assert enc(r, "g") == b"embstr"
    cmd(r, "INCRBYFLOAT", "g", "1e60")
    assert enc(r, "g") == b"raw"
    cmd(r, "GETSET", "g", "7")
    assert enc(r, "g") == b"int"


def test_keyspace_hits(r):
    r.set("s", "v")
    cmd(r, "CONFIG", "RESETSTAT")
    cmd(r, "GET", "s")            # hit
    cmd(r, "GET", "nokey")        # miss
    cmd(r, "MGET", "s", "x")      # hit, miss
    cmd(r, "STRLEN", "s")         # hit
    cmd(r, "GETRANGE", "x", 0, 1)  # miss
    cmd(r, "SET", "s", "w", "GET")  # hit
    cmd(r, "INCR", "n")           # write lookups do not count
    cmd(r, "APPEND", "s", "x")
    info = r.info("stats")
    assert (info["keyspace_hits"], info["keyspace_misses"]) == (4, 3)


@pytest.mark.parametrize("name,arity", [
    ("SETNX", 3), ("SETEX", 4), ("PSETEX", 4), ("GETSET", 3), ("GETDEL", 2), ("GETEX", -2),
    ("APPEND", 3), ("STRLEN", 2), ("INCR", 2), ("DECR", 2), ("INCRBY", 3), ("DECRBY", 3),
    ("INCRBYFLOAT", 3), ("GETRANGE", 4), ("SETRANGE", 4), ("SUBSTR", 4), ("LCS", -3),
])
def test_arity(r, name, arity):
    wrong = "wrong number of arguments for '%s' command" % name.lower()
    n = abs(arity) - 1  # arguments after the name
    assert err(r, name, *["k"] * (n - 1)) == wrong
    if arity > 0:
        assert err(r, name, *["k"] * (n + 1)) == wrong


def test_command_info(r):
    need(r, "COMMAND", "COUNT")
    info = cmd(r, "COMMAND", "INFO", "lcs", "getex", "setrange", "incr")
    assert [x[:6] for x in info] == [
        [b"lcs", -3, [b"readonly"], 1, 2, 1], [b"getex", -2, [b"write", b"fast"], 1, 1, 1],
        [b"setrange", 4, [b"write", b"denyoom"], 1, 1, 1],
        [b"incr", 2, [b"write", b"denyoom", b"fast"], 1, 1, 1]]
