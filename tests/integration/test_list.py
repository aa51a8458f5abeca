"""List commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LINDEX LSET
LRANGE LTRIM LINSERT LREM LPOS LMOVE RPOPLPUSH LMPOP, and the generic key
commands (TYPE OBJECT ENCODING COPY RENAME MOVE DEL EXPIRE SCAN TYPE) on
lists. Replies are compared raw (redis-py's reply parsing is off); RESP3
shapes are read from a raw socket. Big lists are checked against a Python
model with a small list-max-listpack-size so that every command crosses
node boundaries. Key pairs like "{a}x" / "{b}y" land on different shards
under shoal --threads 4, so the multi-key commands run as transactions."""
import random

import pytest
import redis

from helpers import shard_of

from helpers import raw_exchange

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOTINT = "value is not an integer or out of range"
POSITIVE = "value is out of range, must be positive"
RANK0 = ("RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
         "or use negative to start from the end of the list")
LMIN = -9223372036854775808
LMAX = 9223372036854775807


@pytest.fixture
def l(r):
    """The bytes client with reply parsing off; list config at defaults."""
    r.response_callbacks.clear()
    r.config_set("list-max-listpack-size", -2)
    yield r
    r.config_set("list-max-listpack-size", -2)


def err(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


def x(c, *args):
    return c.execute_command(*args)


def b(*items):
    return [str(i).encode() if not isinstance(i, bytes) else i for i in items]


# ---- push and length ----

def test_push_and_len(l):
    assert x(l, "LPUSH", "k", "a", "b", "c") == 3
    assert x(l, "RPUSH", "k", "d", "e") == 5
    assert x(l, "LRANGE", "k", 0, -1) == b("c", "b", "a", "d", "e")
    assert x(l, "LLEN", "k") == 5
    assert x(l, "LLEN", "nokey") == 0


def test_pushx(l):
    assert x(l, "LPUSHX", "k", "a") == 0
    assert x(l, "RPUSHX", "k", "a", "b") == 0
    assert x(l, "EXISTS", "k") == 0
    x(l, "RPUSH", "k", "m")
    assert x(l, "LPUSHX", "k", "a", "b") == 3
    assert x(l, "RPUSHX", "k", "y", "z") == 5
    assert x(l, "LRANGE", "k", 0, -1) == b("b", "a", "m", "y", "z")


def test_push_many_args_and_values(l):
    vals = ["v%d" % i for i in range(5000)]
    assert x(l, "RPUSH", "k", *vals) == 5000
    big = "x" * 300
    ints = ["0", "-1", "127", "128", "-4096", "4095", "65536", str(LMAX), str(LMIN), "007", "+1", "-0", "1.5"]
    assert x(l, "LPUSH", "k", big, *ints) == 5000 + 1 + len(ints)
    assert x(l, "LRANGE", "k", 0, len(ints)) == b(*(list(reversed(ints)) + [big]))
    assert x(l, "LINDEX", "k", -1) == b"v4999"
    assert x(l, "LLEN", "k") == 5014


def test_push_arity_and_wrongtype(l):
    for cmd in ("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"):
        assert err(l, cmd, "k") == "wrong number of arguments for '%s' command" % cmd.lower()
    x(l, "SET", "s", "v")
    for cmd in ("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"):
        assert err(l, cmd, "s", "a") == WRONGTYPE
    assert err(l, "LLEN", "s") == WRONGTYPE
    assert err(l, "LLEN") == "wrong number of arguments for 'llen' command"


# ---- pop ----

def test_pop_one(l):
    x(l, "RPUSH", "k", "a", "b", "c")
    assert x(l, "LPOP", "k") == b"a"
    assert x(l, "RPOP", "k") == b"c"
    assert x(l, "RPOP", "k") == b"b"
    assert x(l, "EXISTS", "k") == 0
    assert x(l, "LPOP", "k") is None
    assert x(l, "RPOP", "k") is None


def test_pop_count(l):
    x(l, "RPUSH", "k", "a", "b", "c", "d", "e")
    assert x(l, "LPOP", "k", 2) == b("a", "b")
    assert x(l, "RPOP", "k", 2) == b("e", "d")
    assert x(l, "LPOP", "k", 0) == []
    assert x(l, "RPOP", "k", 0) == []
    assert x(l, "LPOP", "k", LMAX) == b("c")
    assert x(l, "EXISTS", "k") == 0
    assert x(l, "LPOP", "k", 0) is None
    assert x(l, "LPOP", "k", 3) is None
    assert x(l, "RPOP", "k", 1) is None


def test_pop_errors(l):
    x(l, "RPUSH", "k", "a")
    assert err(l, "LPOP", "k", -1) == POSITIVE
    assert err(l, "RPOP", "k", "abc") == POSITIVE
    assert err(l, "LPOP", "nokey", -1) == POSITIVE
    assert err(l, "LPOP", "k", LMIN) == POSITIVE
    assert err(l, "LPOP", "k", 1, 2) == "wrong number of arguments for 'lpop' command"
    assert err(l, "RPOP") == "wrong number of arguments for 'rpop' command"
    x(l, "SET", "s", "v")
    assert err(l, "LPOP", "s") == WRONGTYPE
    assert err(l, "RPOP", "s", 2) == WRONGTYPE


def test_pop_both_ends_big(l):
    x(l, "CONFIG", "SET", "list-max-listpack-size", 3)
    x(l, "RPUSH", "k", *range(100))
    assert x(l, "LPOP", "k", 10) == b(*range(10))
    assert x(l, "RPOP", "k", 10) == b(*range(99, 89, -1))
    assert x(l, "LLEN", "k") == 80
    assert x(l, "LRANGE", "k", 0, -1) == b(*range(10, 90))


# ---- LINDEX LSET ----

def test_lindex(l):
    x(l, "RPUSH", "k", "a", "b", "c")
    assert x(l, "LINDEX", "k", 0) == b"a"
    assert x(l, "LINDEX", "k", 2) == b"c"
    assert x(l, "LINDEX", "k", -1) == b"c"
    assert x(l, "LINDEX", "k", -3) == b"a"
    assert x(l, "LINDEX", "k", 3) is None
    assert x(l, "LINDEX", "k", -4) is None
    assert x(l, "LINDEX", "k", LMIN) is None
    assert x(l, "LINDEX", "k", LMAX) is None
    assert x(l, "LINDEX", "nokey", 0) is None
    assert x(l, "LINDEX", "nokey", "x") is None  # the key is looked up first
    assert err(l, "LINDEX", "k", "x") == NOTINT
    assert err(l, "LINDEX", "k", "9223372036854775808") == NOTINT
    x(l, "SET", "s", "v")
    assert err(l, "LINDEX", "s", 0) == WRONGTYPE
    assert err(l, "LINDEX", "k") == "wrong number of arguments for 'lindex' command"


def test_lset(l):
    x(l, "RPUSH", "k", "a", "b", "c")
    assert x(l, "LSET", "k", 0, "A") == b"OK"
    assert x(l, "LSET", "k", -1, "C" * 100) == b"OK"
    assert x(l, "LSET", "k", 1, 12345) == b"OK"
    assert x(l, "LRANGE", "k", 0, -1) == b("A", "12345", "C" * 100)
    assert err(l, "LSET", "k", 3, "x") == "index out of range"
    assert err(l, "LSET", "k", -4, "x") == "index out of range"
    assert err(l, "LSET", "k", LMIN, "x") == "index out of range"
    assert err(l, "LSET", "k", "x", "x") == NOTINT
    assert err(l, "LSET", "nokey", 0, "x") == "no such key"
    assert err(l, "LSET", "nokey", "x", "x") == "no such key"
    x(l, "SET", "s", "v")
    assert err(l, "LSET", "s", 0, "x") == WRONGTYPE
    assert err(l, "LSET", "k", 0) == "wrong number of arguments for 'lset' command"


# ---- LRANGE LTRIM ----

def test_lrange(l):
    x(l, "RPUSH", "k", *"abcde")
    assert x(l, "LRANGE", "k", 1, 3) == b(*"bcd")
    assert x(l, "LRANGE", "k", -2, -1) == b(*"de")
    assert x(l, "LRANGE", "k", -100, 100) == b(*"abcde")
    assert x(l, "LRANGE", "k", 0, LMAX) == b(*"abcde")
    assert x(l, "LRANGE", "k", LMIN, LMAX) == b(*"abcde")
    assert x(l, "LRANGE", "k", LMIN, LMIN) == []
    assert x(l, "LRANGE", "k", LMAX, LMAX) == []
    assert x(l, "LRANGE", "k", 3, 1) == []
    assert x(l, "LRANGE", "k", 5, 10) == []
    assert x(l, "LRANGE", "k", -1, -2) == []
    assert x(l, "LRANGE", "k", 0, -6) == []
    assert x(l, "LRANGE", "nokey", 0, -1) == []
    assert err(l, "LRANGE", "k", "a", 1) == NOTINT
    assert err(l, "LRANGE", "k", 0, "b") == NOTINT
    assert err(l, "LRANGE", "nokey", "a", 1) == NOTINT
    x(l, "SET", "s", "v")
    assert err(l, "LRANGE", "s", 0, 1) == WRONGTYPE
    assert err(l, "LRANGE", "k", 0) == "wrong number of arguments for 'lrange' command"


@pytest.mark.parametrize("start,end", [(1, -2), (0, 0), (-1, -1), (2, 100), (LMIN, 1), (0, LMAX), (LMIN, LMAX),
                                       (3, 1), (5, 9), (LMAX, LMIN), (-3, LMAX), (0, LMIN)])
def test_ltrim(l, start, end):
    vals = list("abcde")
    x(l, "RPUSH", "k", *vals)
    assert x(l, "LTRIM", "k", start, end) == b"OK"
    want = model_range(vals, start, end)
    assert x(l, "LRANGE", "k", 0, -1) == b(*want)
    assert x(l, "EXISTS", "k") == (1 if want else 0)


def test_ltrim_errors(l):
    assert x(l, "LTRIM", "nokey", 0, 1) == b"OK"
    assert x(l, "EXISTS", "nokey") == 0
    assert err(l, "LTRIM", "nokey", "x", 1) == NOTINT
    x(l, "SET", "s", "v")
    assert err(l, "LTRIM", "s", 0, 1) == WRONGTYPE
    assert err(l, "LTRIM", "s", 0) == "wrong number of arguments for 'ltrim' command"


def model_range(vals, start, end):
    n = len(vals)
    if start < 0:
        start += n
    if end < 0:
        end += n
    start = max(start, 0)
    if start > end or start >= n:
        return []
    return vals[start:min(end, n - 1) + 1]


# ---- LINSERT LREM ----

def test_linsert(l):
    x(l, "RPUSH", "k", "a", "b", "c")
    assert x(l, "LINSERT", "k", "BEFORE", "a", "0") == 4
    assert x(l, "LINSERT", "k", "after", "c", "d") == 5
    assert x(l, "LINSERT", "k", "AFTER", "a", "a2") == 6
    assert x(l, "LINSERT", "k", "before", "c", "x" * 80) == 7
    assert x(l, "LRANGE", "k", 0, -1) == b("0", "a", "a2", "b", "x" * 80, "c", "d")
    assert x(l, "LINSERT", "k", "BEFORE", "zz", "q") == -1
    assert x(l, "LINSERT", "nokey", "BEFORE", "a", "q") == 0
    assert x(l, "EXISTS", "nokey") == 0
    assert err(l, "LINSERT", "k", "MIDDLE", "a", "q") == "syntax error"
    assert err(l, "LINSERT", "nokey", "MIDDLE", "a", "q") == "syntax error"
    x(l, "SET", "s", "v")
    assert err(l, "LINSERT", "s", "BEFORE", "a", "q") == WRONGTYPE
    assert err(l, "LINSERT", "k", "BEFORE", "a") == "wrong number of arguments for 'linsert' command"


def test_linsert_first_match_and_ints(l):
    x(l, "RPUSH", "k", "1", "2", "1", "2")
    assert x(l, "LINSERT", "k", "AFTER", "2", "3") == 5
    assert x(l, "LINSERT", "k", "BEFORE", 1, "-7") == 6
    assert x(l, "LRANGE", "k", 0, -1) == b("-7", "1", "2", "3", "1", "2")
    assert x(l, "LINSERT", "k", "BEFORE", "01", "z") == -1  # "01" is not the integer 1


def test_lrem(l):
    vals = list("abacada")
    for count, want_n, want in [(2, 2, list("bcada")), (-2, 2, list("abacd")), (0, 4, list("bcd")),
                                (LMIN, 4, list("bcd")), (LMAX, 4, list("bcd")), (1, 1, list("bacada")),
                                (-1, 1, list("abacad"))]:
        x(l, "DEL", "k")
        x(l, "RPUSH", "k", *vals)
        assert x(l, "LREM", "k", count, "a") == want_n
        assert x(l, "LRANGE", "k", 0, -1) == b(*want)
    assert x(l, "LREM", "k", 0, "zz") == 0
    x(l, "DEL", "k")
    x(l, "RPUSH", "k", "a", "a")
    assert x(l, "LREM", "k", 0, "a") == 2
    assert x(l, "EXISTS", "k") == 0
    assert x(l, "LREM", "nokey", 0, "a") == 0
    assert err(l, "LREM", "nokey", "x", "a") == NOTINT
    x(l, "SET", "s", "v")
    assert err(l, "LREM", "s", 0, "a") == WRONGTYPE
    assert err(l, "LREM", "s", 0) == "wrong number of arguments for 'lrem' command"


# ---- LPOS ----

def test_lpos(l):
    x(l, "RPUSH", "k", "a", "b", "c", "1", "2", "3", "c", "c")
    assert x(l, "LPOS", "k", "a") == 0
    assert x(l, "LPOS", "k", "c") == 2
    assert x(l, "LPOS", "k", "zz") is None
    assert x(l, "LPOS", "k", 2) == 4
    assert x(l, "LPOS", "k", "c", "RANK", 2) == 6
    assert x(l, "LPOS", "k", "c", "RANK", 4) is None
    assert x(l, "LPOS", "k", "c", "RANK", -1) == 7
    assert x(l, "LPOS", "k", "c", "RANK", -3) == 2
    assert x(l, "LPOS", "k", "c", "COUNT", 0) == [2, 6, 7]
    assert x(l, "LPOS", "k", "c", "COUNT", 2) == [2, 6]
    assert x(l, "LPOS", "k", "c", "COUNT", 2, "RANK", -1) == [7, 6]
    assert x(l, "LPOS", "k", "c", "RANK", 2, "COUNT", 0) == [6, 7]
    assert x(l, "LPOS", "k", "zz", "COUNT", 0) == []
    assert x(l, "LPOS", "k", "c", "MAXLEN", 2) is None
    assert x(l, "LPOS", "k", "c", "MAXLEN", 3) == 2
    assert x(l, "LPOS", "k", "c", "COUNT", 0, "MAXLEN", 7) == [2, 6]
    assert x(l, "LPOS", "k", "c", "COUNT", 0, "MAXLEN", 0) == [2, 6, 7]
    assert x(l, "LPOS", "k", "c", "RANK", -1, "COUNT", 0, "MAXLEN", 2) == [7, 6]
    assert x(l, "LPOS", "k", "c", "rank", 1, "rank", 2) == 6  # the last one wins
    assert x(l, "LPOS", "nokey", "c") is None
    assert x(l, "LPOS", "nokey", "c", "COUNT", 0) == []


def test_lpos_extremes(l):
    x(l, "RPUSH", "k", "a", "b", "a", "c", "a")
    # RANK -2^63 searches from the tail and ignores COUNT (Redis 7.0's overflow)
    assert x(l, "LPOS", "k", "a", "RANK", LMIN) == 4
    assert x(l, "LPOS", "k", "a", "RANK", LMIN, "COUNT", 0) == [4, 2, 0]
    assert x(l, "LPOS", "k", "a", "RANK", LMIN, "COUNT", 2) == [4, 2, 0]
    assert x(l, "LPOS", "k", "a", "RANK", LMIN + 1) is None
    assert x(l, "LPOS", "k", "a", "RANK", LMAX) is None
    assert x(l, "LPOS", "k", "a", "RANK", LMAX, "COUNT", 0) == []
    assert x(l, "LPOS", "k", "a", "COUNT", LMAX) == [0, 2, 4]
    assert x(l, "LPOS", "k", "a", "MAXLEN", LMAX) == 0


def test_lpos_errors(l):
    x(l, "RPUSH", "k", "a")
    assert err(l, "LPOS", "k", "a", "RANK", 0) == RANK0
    assert err(l, "LPOS", "k", "a", "RANK", "x") == NOTINT
    assert err(l, "LPOS", "k", "a", "RANK", "9223372036854775808") == NOTINT
    assert err(l, "LPOS", "k", "a", "COUNT", -1) == "COUNT can't be negative"
    assert err(l, "LPOS", "k", "a", "COUNT", "x") == "COUNT can't be negative"
    assert err(l, "LPOS", "k", "a", "COUNT", LMIN) == "COUNT can't be negative"
    assert err(l, "LPOS", "k", "a", "MAXLEN", -1) == "MAXLEN can't be negative"
    assert err(l, "LPOS", "k", "a", "MAXLEN", "x") == "MAXLEN can't be negative"
    assert err(l, "LPOS", "k", "a", "RANK") == "syntax error"
    assert err(l, "LPOS", "k", "a", "FOO", 1) == "syntax error"
    assert err(l, "LPOS", "nokey", "a", "RANK", 0) == RANK0  # options come before the key
    x(l, "SET", "s", "v")
    assert err(l, "LPOS", "s", "a") == WRONGTYPE
    assert err(l, "LPOS", "s") == "wrong number of arguments for 'lpos' command"


# ---- LMOVE RPOPLPUSH ----

def test_lmove_all_directions(l):
    for frm, to, src_after, dst_after in [("LEFT", "LEFT", "bc", "axy"), ("LEFT", "RIGHT", "bc", "xya"),
                                          ("RIGHT", "LEFT", "ab", "cxy"), ("RIGHT", "RIGHT", "ab", "xyc")]:
        x(l, "DEL", "{a}s", "{b}d")
        x(l, "RPUSH", "{a}s", "a", "b", "c")
        x(l, "RPUSH", "{b}d", "x", "y")
        moved = b"a" if frm == "LEFT" else b"c"
        assert x(l, "LMOVE", "{a}s", "{b}d", frm, to) == moved
        assert x(l, "LRANGE", "{a}s", 0, -1) == b(*src_after)
        assert x(l, "LRANGE", "{b}d", 0, -1) == b(*dst_after)


def test_lmove_rotation(l):
    x(l, "RPUSH", "k", "a", "b", "c")
    assert x(l, "LMOVE", "k", "k", "LEFT", "RIGHT") == b"a"
    assert x(l, "LRANGE", "k", 0, -1) == b(*"bca")
    assert x(l, "LMOVE", "k", "k", "RIGHT", "LEFT") == b"a"
    assert x(l, "LRANGE", "k", 0, -1) == b(*"abc")
    assert x(l, "LMOVE", "k", "k", "LEFT", "LEFT") == b"a"
    assert x(l, "LMOVE", "k", "k", "RIGHT", "RIGHT") == b"c"
    assert x(l, "LRANGE", "k", 0, -1) == b(*"abc")
    assert x(l, "RPOPLPUSH", "k", "k") == b"c"
    assert x(l, "LRANGE", "k", 0, -1) == b(*"cab")
    x(l, "RPUSH", "one", "x" * 100)
    assert x(l, "LMOVE", "one", "one", "LEFT", "RIGHT") == b"x" * 100
    assert x(l, "LRANGE", "one", 0, -1) == [b"x" * 100]


def test_lmove_creates_and_deletes(l):
    assert shard_of("{a}x") != shard_of("{b}y")
    x(l, "RPUSH", "{a}x", "1", "2")
    assert x(l, "LMOVE", "{a}x", "{b}y", "RIGHT", "LEFT") == b"2"
    assert x(l, "LMOVE", "{a}x", "{b}y", "RIGHT", "LEFT") == b"1"
    assert x(l, "EXISTS", "{a}x") == 0
    assert x(l, "LRANGE", "{b}y", 0, -1) == b("1", "2")
    assert x(l, "TYPE", "{b}y") == b"list"
    assert x(l, "LMOVE", "{a}x", "{b}y", "RIGHT", "LEFT") is None
    assert x(l, "RPOPLPUSH", "{a}x", "{b}y") is None
    assert x(l, "LLEN", "{b}y") == 2


def test_lmove_errors(l):
    x(l, "RPUSH", "k", "a")
    x(l, "SET", "s", "v")
    assert err(l, "LMOVE", "k", "d", "LEFT", "MIDDLE") == "syntax error"
    assert err(l, "LMOVE", "k", "d", "UP", "LEFT") == "syntax error"
    assert err(l, "LMOVE", "nokey", "d", "UP", "LEFT") == "syntax error"
    assert err(l, "LMOVE", "s", "d", "LEFT", "LEFT") == WRONGTYPE
    assert err(l, "LMOVE", "k", "s", "LEFT", "LEFT") == WRONGTYPE
    assert err(l, "RPOPLPUSH", "k", "s") == WRONGTYPE
    assert err(l, "RPOPLPUSH", "s", "k") == WRONGTYPE
    assert x(l, "LRANGE", "k", 0, -1) == [b"a"]  # dst is checked before anything changes
    assert x(l, "LMOVE", "nokey", "s", "LEFT", "LEFT") is None  # src missing wins
    assert x(l, "RPOPLPUSH", "nokey", "s") is None
    assert err(l, "LMOVE", "k", "d", "LEFT") == "wrong number of arguments for 'lmove' command"
    assert err(l, "RPOPLPUSH", "k") == "wrong number of arguments for 'rpoplpush' command"


def test_rpoplpush_cross_shard_pairs(l):
    pairs = [("{a}x", "{b}y"), ("{c}1", "{d}2"), ("{e}1", "{f}2"), ("{g}1", "{h}2")]
    assert any(shard_of(s) != shard_of(d) for s, d in pairs)
    for s, d in pairs:
        x(l, "RPUSH", s, "a", "b", "c")
        x(l, "RPUSH", d, "z")
        assert x(l, "RPOPLPUSH", s, d) == b"c"
        assert x(l, "LMOVE", s, d, "LEFT", "RIGHT") == b"a"
        assert x(l, "LRANGE", s, 0, -1) == [b"b"]
        assert x(l, "LRANGE", d, 0, -1) == b("c", "z", "a")


# ---- LMPOP ----

def test_lmpop(l):
    assert shard_of("{a}x") != shard_of("{b}y")
    x(l, "RPUSH", "{b}y", "1", "2", "3")
    assert x(l, "LMPOP", 2, "{a}x", "{b}y", "LEFT") == [b"{b}y", [b"1"]]
    assert x(l, "LMPOP", 2, "{a}x", "{b}y", "RIGHT", "COUNT", 10) == [b"{b}y", [b"3", b"2"]]
    assert x(l, "EXISTS", "{b}y") == 0
    assert x(l, "LMPOP", 2, "{a}x", "{b}y", "LEFT") is None
    x(l, "RPUSH", "{a}x", "a", "b", "c")
    x(l, "RPUSH", "{b}y", "z")
    assert x(l, "LMPOP", 2, "{a}x", "{b}y", "left", "count", 2) == [b"{a}x", [b"a", b"b"]]
    assert x(l, "LMPOP", 1, "{b}y", "RIGHT", "COUNT", LMAX) == [b"{b}y", [b"z"]]
    assert x(l, "LRANGE", "{a}x", 0, -1) == [b"c"]


def test_lmpop_errors(l):
    x(l, "RPUSH", "k", "a")
    x(l, "SET", "s", "v")
    for bad in (0, -1, "x", LMIN):
        assert err(l, "LMPOP", bad, "k", "LEFT") == "numkeys should be greater than 0"
    assert err(l, "LMPOP", 2, "k", "LEFT") == "syntax error"
    assert err(l, "LMPOP", LMAX, "k", "LEFT") == "syntax error"
    assert err(l, "LMPOP", 1, "k", "MIDDLE") == "syntax error"
    assert err(l, "LMPOP", 1, "k", "LEFT", "COUNT", 0) == "count should be greater than 0"
    assert err(l, "LMPOP", 1, "k", "LEFT", "COUNT", -1) == "count should be greater than 0"
    assert err(l, "LMPOP", 1, "k", "LEFT", "COUNT", "x") == "count should be greater than 0"
    assert err(l, "LMPOP", 1, "k", "LEFT", "COUNT", 1, "COUNT", 1) == "syntax error"
    assert err(l, "LMPOP", 1, "k", "LEFT", "COUNT") == "syntax error"
    assert err(l, "LMPOP", 1, "k", "LEFT", "FOO") == "syntax error"
    assert err(l, "LMPOP", 2, "s", "k", "LEFT") == WRONGTYPE
    assert x(l, "LMPOP", 2, "k", "s", "LEFT") == [b"k", [b"a"]]  # stops at the first list
    assert err(l, "LMPOP", 1, "k") == "wrong number of arguments for 'lmpop' command"


def test_lmpop_getkeys(l):
    assert x(l, "COMMAND", "GETKEYS", "LMPOP", 2, "a", "b", "LEFT") == [b"a", b"b"]
    assert x(l, "COMMAND", "GETKEYS", "LMOVE", "a", "b", "LEFT", "RIGHT") == [b"a", b"b"]
    assert x(l, "COMMAND", "GETKEYS", "RPOPLPUSH", "a", "b") == [b"a", b"b"]


# ---- RESP3 shapes ----

def test_resp3_shapes(server, l):
    x(l, "RPUSH", "k", "a", "b", "c")
    payload = (b"HELLO 3\r\n"
               b"LPOP k 2\r\n"
               b"LPOP k 0\r\n"
               b"LPOP nokey 0\r\n"
               b"LPOP nokey\r\n"
               b"LMPOP 2 nokey k RIGHT COUNT 5\r\n"
               b"LMPOP 1 nokey LEFT\r\n"
               b"LINDEX nokey 0\r\n"
               b"LPOS nokey a\r\n"
               b"LMOVE nokey k LEFT LEFT\r\n"
               b"PING\r\n")
    out = raw_exchange(server, payload, read_until=b"+PONG\r\n")
    body = out[out.index(b"modules") + len(b"modules\r\n*0\r\n"):]
    assert body == (b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
                    b"*0\r\n"
                    b"_\r\n"
                    b"_\r\n"
                    b"*2\r\n$1\r\nk\r\n*1\r\n$1\r\nc\r\n"
                    b"_\r\n"
                    b"_\r\n"
                    b"_\r\n"
                    b"_\r\n"
                    b"+PONG\r\n")


def test_resp2_nil_shapes(server, l):
    x(l, "RPUSH", "k", "a")
    out = raw_exchange(server, b"LPOP nokey 0\r\nLPOP nokey\r\nLMPOP 1 nokey LEFT\r\nLPOP k 0\r\n"
                               b"LPOS k zz COUNT 0\r\nPING\r\n", read_until=b"+PONG\r\n")
    assert out == b"*-1\r\n$-1\r\n*-1\r\n*0\r\n*0\r\n+PONG\r\n"


# ---- big lists across node boundaries, against a model ----

@pytest.mark.parametrize("fill", [4, 1, -1])
def test_big_list_model(l, fill):
    rnd = random.Random(7 + fill)
    x(l, "CONFIG", "SET", "list-max-listpack-size", fill)
    model = ["e%d" % i for i in range(1000)]
    x(l, "RPUSH", "k", *model)
    assert x(l, "LRANGE", "k", 0, -1) == b(*model)
    for i in (0, 1, 3, 4, 5, 499, 500, 998, 999, -1, -4, -5, -1000):
        assert x(l, "LINDEX", "k", i) == model[i].encode()
    for i in (3, 4, 7, 8, 500, -1, -5):
        v = "set%d" % i if i % 2 else "L" * 70
        assert x(l, "LSET", "k", i, v) == b"OK"
        model[i] = v
    for pivot in ("e2", "e6", "e5", "e9", "e600", "e998", "e0"):
        after = rnd.random() < 0.5
        assert x(l, "LINSERT", "k", "AFTER" if after else "BEFORE", pivot, "ins-" + pivot) == len(model) + 1
        j = model.index(pivot)
        model.insert(j + 1 if after else j, "ins-" + pivot)
    assert x(l, "LRANGE", "k", 0, -1) == b(*model)
    for _ in range(5):
        v = "dup"
        for _ in range(10):
            p = rnd.randrange(len(model))
            x(l, "LSET", "k", p, v)
            model[p] = v
    assert x(l, "LPOS", "k", "dup", "COUNT", 0) == [i for i, v in enumerate(model) if v == "dup"]
    assert x(l, "LPOS", "k", "dup", "RANK", -2, "COUNT", 3) == \
        [i for i, v in reversed(list(enumerate(model))) if v == "dup"][1:4]
    n_dup = model.count("dup")
    assert x(l, "LREM", "k", -3, "dup") == 3
    for _ in range(3):
        j = len(model) - 1 - model[::-1].index("dup")
        del model[j]
    assert x(l, "LREM", "k", 0, "dup") == n_dup - 3
    model = [v for v in model if v != "dup"]
    assert x(l, "LRANGE", "k", 0, -1) == b(*model)
    for start, end in ((2, 500), (-300, -2), (-500, 1000)):
        assert x(l, "LRANGE", "k", start, end) == b(*model_range(model, start, end))
    assert x(l, "LTRIM", "k", 3, -4) == b"OK"
    model = model_range(model, 3, -4)
    assert x(l, "LTRIM", "k", -200, 900) == b"OK"
    model = model_range(model, -200, 900)
    assert x(l, "LRANGE", "k", 0, -1) == b(*model)
    assert x(l, "LLEN", "k") == len(model)
    assert x(l, "LPOP", "k", 7) == b(*model[:7])
    assert x(l, "RPOP", "k", 9) == b(*reversed(model[-9:]))
    model = model[7:-9]
    assert x(l, "LRANGE", "k", 0, -1) == b(*model)


@pytest.mark.parametrize("fill", [-2, 5, -1])
def test_uniform_list_model(l, fill):
    """Elements of one width (IDs, fixed-format keys: shoal keeps such nodes
    without per-element headers), then values of other widths and integers
    in some places, against a model: reads and writes before and after the
    first odd value, and a DUMP/RESTORE round trip."""
    rnd = random.Random(11 - fill)
    x(l, "CONFIG", "SET", "list-max-listpack-size", fill)
    model = ["e%07d" % i for i in range(1500)]
    assert x(l, "RPUSH", "k", *model) == 1500
    heads = ["h%07d" % i for i in range(10)]
    assert x(l, "LPUSH", "k", *heads) == 1510
    model = list(reversed(heads)) + model

    def check():
        assert x(l, "LRANGE", "k", 0, -1) == b(*model)
        assert x(l, "LLEN", "k") == len(model)
        for i in (0, 1, 9, 10, 700, -1, -2, -len(model)):
            assert x(l, "LINDEX", "k", i) == model[i].encode()
        for start, end in ((5, 40), (-60, -3), (600, 1300)):
            assert x(l, "LRANGE", "k", start, end) == b(*model_range(model, start, end))
        probe = model[rnd.randrange(len(model))]
        want = [i for i, v in enumerate(model) if v == probe]
        assert x(l, "LPOS", "k", probe, "COUNT", 0) == want
        assert x(l, "LPOS", "k", probe, "RANK", -1) == want[-1]

    check()
    assert x(l, "LSET", "k", 5, "s0000005") == b"OK"  # the same width
    model[5] = "s0000005"
    assert x(l, "LINSERT", "k", "BEFORE", model[900], "z0000000") == len(model) + 1
    model.insert(900, "z0000000")
    check()
    for i, v in ((700, "12345678"), (3, "short"), (-1, "y" * 300), (1200, "-5"), (40, "")):
        assert x(l, "LSET", "k", i, v) == b"OK"
        model[i] = v
    assert x(l, "LINSERT", "k", "AFTER", model[100], "17") == len(model) + 1
    model.insert(101, "17")
    assert x(l, "RPUSH", "k", "w", "e0000001") == len(model) + 2
    assert x(l, "LPUSH", "k", "abcdefgh", "100") == len(model) + 4
    model = ["100", "abcdefgh"] + model + ["w", "e0000001"]
    check()
    assert x(l, "LREM", "k", 0, "e0000001") == 2
    model = [v for v in model if v != "e0000001"]
    payload = x(l, "DUMP", "k")
    assert x(l, "RESTORE", "k2", 0, payload) == b"OK"
    assert x(l, "LRANGE", "k2", 0, -1) == b(*model)
    assert x(l, "LTRIM", "k", 100, -100) == b"OK"
    model = model_range(model, 100, -100)
    assert x(l, "LPOP", "k", 50) == b(*model[:50])
    assert x(l, "RPOP", "k", 50) == b(*reversed(model[-50:]))
    model = model[50:-50]
    check()


@pytest.mark.parametrize("fill", [3, 1, -1])
def test_small_list_model(l, fill):
    """A list that keeps growing past one node and shrinking back to one
    (or none), through every writing command, against a model."""
    rnd = random.Random(31 + fill)
    x(l, "CONFIG", "SET", "list-max-listpack-size", fill)
    model = []
    for step in range(400):
        op = rnd.randrange(9)
        v = rnd.choice(["a", "7", "-70000", "x" * rnd.randrange(1, 40), "s%d" % step])
        if op == 0 or not model:
            n = rnd.randrange(1, 5)
            vals = [v + str(i) for i in range(n)]
            left = rnd.random() < 0.5
            assert x(l, "LPUSH" if left else "RPUSH", "k", *vals) == len(model) + n
            model = list(reversed(vals)) + model if left else model + vals
        elif op == 1:
            left = rnd.random() < 0.5
            n = rnd.randrange(1, 4)
            got = x(l, "LPOP" if left else "RPOP", "k", n)
            want = model[:n] if left else list(reversed(model[-n:]))
            assert got == b(*want)
            model = model[n:] if left else model[:-n] if n < len(model) else []
        elif op == 2:
            i = rnd.randrange(-len(model), len(model))
            assert x(l, "LSET", "k", i, v) == b"OK"
            model[i] = v
        elif op == 3:
            pivot = rnd.choice(model)
            after = rnd.random() < 0.5
            assert x(l, "LINSERT", "k", "AFTER" if after else "BEFORE", pivot, v) == len(model) + 1
            j = model.index(pivot)
            model.insert(j + 1 if after else j, v)
        elif op == 4:
            target = rnd.choice(model)
            count = rnd.choice([0, 1, -1, 2])
            gone = x(l, "LREM", "k", count, target)
            idx = [i for i, e in enumerate(model) if e == target]
            if count < 0:
                idx = idx[::-1]
            idx = idx[:abs(count)] if count else idx
            assert gone == len(idx)
            model = [e for i, e in enumerate(model) if i not in set(idx)]
        elif op == 5:
            start, end = rnd.randrange(-6, 6), rnd.randrange(-6, 6)
            assert x(l, "LTRIM", "k", start, end) == b"OK"
            model = model_range(model, start, end)
        elif op == 6:
            src_left, dst_left = rnd.random() < 0.5, rnd.random() < 0.5
            e = model[0] if src_left else model[-1]
            assert x(l, "LMOVE", "k", "k", "LEFT" if src_left else "RIGHT", "LEFT" if dst_left else "RIGHT") == \
                e.encode()
            model = model[1:] if src_left else model[:-1]
            model = [e] + model if dst_left else model + [e]
        elif op == 7:
            i = rnd.randrange(-len(model) - 1, len(model) + 1)
            want = model[i].encode() if -len(model) <= i < len(model) else None
            assert x(l, "LINDEX", "k", i) == want
        else:
            assert x(l, "LPOS", "k", model[-1], "RANK", -1) == len(model) - 1 - model[::-1].index(model[-1])
        assert x(l, "LRANGE", "k", 0, -1) == b(*model)
        assert x(l, "LLEN", "k") == len(model)
        assert x(l, "EXISTS", "k") == (1 if model else 0)


def test_config_fill_change(l):
    x(l, "CONFIG", "SET", "list-max-listpack-size", 2)
    x(l, "RPUSH", "k", *range(10))
    x(l, "CONFIG", "SET", "list-max-listpack-size", -5)
    x(l, "RPUSH", "k", *range(10, 20))
    x(l, "LINSERT", "k", "BEFORE", "5", "mid")
    assert x(l, "LRANGE", "k", 0, -1) == b(*(list(range(5)) + ["mid"] + list(range(5, 20))))
    x(l, "CONFIG", "SET", "list-max-listpack-size", 0)
    x(l, "LPUSH", "k", "h1", "h2")
    assert x(l, "LRANGE", "k", 0, 2) == b("h2", "h1", 0)
    assert x(l, "OBJECT", "ENCODING", "k") == b"quicklist"


# ---- generic key commands on lists ----

def test_type_encoding_copy_rename_move(l):
    x(l, "RPUSH", "{a}x", "a", "b", "1")
    assert x(l, "TYPE", "{a}x") == b"list"
    assert x(l, "OBJECT", "ENCODING", "{a}x") == b"quicklist"
    x(l, "RPUSH", "small", "1")
    assert x(l, "OBJECT", "ENCODING", "small") == b"quicklist"
    assert x(l, "COPY", "{a}x", "{b}y") == 1
    x(l, "RPUSH", "{b}y", "more")
    assert x(l, "LRANGE", "{a}x", 0, -1) == b("a", "b", "1")
    assert x(l, "LRANGE", "{b}y", 0, -1) == b("a", "b", "1", "more")
    assert x(l, "RENAME", "{b}y", "{c}z") == b"OK"
    assert x(l, "LRANGE", "{c}z", 0, -1) == b("a", "b", "1", "more")
    assert x(l, "EXISTS", "{b}y") == 0
    assert x(l, "MOVE", "{c}z", 1) == 1
    assert x(l, "EXISTS", "{c}z") == 0
    x(l, "SELECT", 1)
    assert x(l, "LPOP", "{c}z") == b"a"
    assert x(l, "TYPE", "{c}z") == b"list"
    x(l, "FLUSHDB")
    x(l, "SELECT", 0)
    assert x(l, "DEL", "{a}x", "small") == 2
    assert x(l, "EXISTS", "{a}x") == 0
    assert isinstance(x(l, "MEMORY", "USAGE", "nokey"), type(None))


def test_expire_and_scan_type(l):
    x(l, "RPUSH", "l1", "a")
    x(l, "RPUSH", "l2", "a")
    x(l, "SET", "s1", "v")
    x(l, "HSET", "h1", "f", "v")
    assert x(l, "EXPIRE", "l1", 100) == 1
    assert 0 < x(l, "TTL", "l1") <= 100
    x(l, "RPUSH", "l1", "b")  # writes keep the expire
    assert 0 < x(l, "TTL", "l1") <= 100
    assert x(l, "PEXPIREAT", "l2", 1) == 1
    assert x(l, "LLEN", "l2") == 0
    assert x(l, "EXISTS", "l2") == 0
    assert x(l, "RPUSH", "l2", "new") == 1  # an expired list starts over
    assert x(l, "TTL", "l2") == -1
    keys, cursor = set(), b"0"
    while True:
        cursor, batch = x(l, "SCAN", cursor, "TYPE", "list", "COUNT", 100)
        keys.update(batch)
        if cursor == b"0":
            break
    assert keys == {b"l1", b"l2"}
    assert x(l, "MEMORY", "USAGE", "l1") > 0


def test_expired_dst_for_lmove(l):
    x(l, "RPUSH", "{a}x", "a", "b")
    x(l, "RPUSH", "{b}y", "old")
    x(l, "PEXPIREAT", "{b}y", 1)
    assert x(l, "LMOVE", "{a}x", "{b}y", "LEFT", "LEFT") == b"a"
    assert x(l, "LRANGE", "{b}y", 0, -1) == [b"a"]
    assert x(l, "TTL", "{b}y") == -1


def test_wrongtype_on_other_commands(l):
    x(l, "RPUSH", "k", "a")
    assert err(l, "GET", "k") == WRONGTYPE
    assert err(l, "HGET", "k", "f") == WRONGTYPE
    assert err(l, "SADD", "k", "m") == WRONGTYPE


def test_command_info(l):
    rows = {
        "lpush": (-3, ["write", "denyoom", "fast"], 1, 1, 1, "write fast"),
        "rpush": (-3, ["write", "denyoom", "fast"], 1, 1, 1, "write fast"),
        "lpushx": (-3, ["write", "denyoom", "fast"], 1, 1, 1, "write fast"),
        "rpushx": (-3, ["write", "denyoom", "fast"], 1, 1, 1, "write fast"),
        "lpop": (-2, ["write", "fast"], 1, 1, 1, "write fast"),
        "rpop": (-2, ["write", "fast"], 1, 1, 1, "write fast"),
        "llen": (2, ["readonly", "fast"], 1, 1, 1, "read fast"),
        "lindex": (3, ["readonly"], 1, 1, 1, "read slow"),
        "lrange": (4, ["readonly"], 1, 1, 1, "read slow"),
        "lpos": (-3, ["readonly"], 1, 1, 1, "read slow"),
        "lset": (4, ["write", "denyoom"], 1, 1, 1, "write slow"),
        "linsert": (5, ["write", "denyoom"], 1, 1, 1, "write slow"),
        "lrem": (4, ["write"], 1, 1, 1, "write slow"),
        "ltrim": (4, ["write"], 1, 1, 1, "write slow"),
        "lmove": (5, ["write", "denyoom"], 1, 2, 1, "write slow"),
        "rpoplpush": (3, ["write", "denyoom"], 1, 2, 1, "write slow"),
        "lmpop": (-4, ["write", "movablekeys"], 0, 0, 0, "write slow"),
    }
    out = x(l, "COMMAND", "INFO", *rows)
    for info, (name, (arity, flags, first, last, step, acl)) in zip(out, rows.items()):
        rw, speed = acl.split()
        assert info[:7] == [name.encode(), arity, b(*flags), first, last, step,
                            b("@" + rw, "@list", "@" + speed)]
