"""SORT and SORT_RO: numeric and ALPHA order on lists, sets and sorted sets
of every encoding, BY and GET patterns (string keys and hash fields, keys
spread over shards), LIMIT clamping, STORE, errors and reply shapes. Every
expectation also holds on redis-server 7.0.

Ties between equal ALPHA BY values are left out: Redis orders them by its
hash table order (sets) or leaves them to an unstable partial sort (LIMIT)."""
import time

import pytest
import redis

from helpers import raw_exchange

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOTDOUBLE = "One or more scores can't be converted into double"
SYNTAX = "syntax error"
NOTINT = "value is not an integer or out of range"


@pytest.fixture
def c(r):
    """Raw replies (no redis-py parsing)."""
    r.response_callbacks.clear()
    yield r


def x(c, *args):
    return c.execute_command(*args)


def err(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


def b(*items):
    return [str(i).encode() for i in items]


# ---- plain order ----

def test_list_numeric_and_alpha(c):
    x(c, "RPUSH", "l", 3, 10, -1, "2.5", 1, 3, "1e1", "-0.5")
    assert x(c, "SORT", "l") == b(-1, "-0.5", 1, "2.5", 3, 3, 10, "1e1")
    assert x(c, "SORT", "l", "DESC") == b("1e1", 10, 3, 3, "2.5", 1, "-0.5", -1)
    assert x(c, "SORT_RO", "l", "ASC") == x(c, "SORT", "l")
    assert x(c, "SORT", "l", "ALPHA") == b("-0.5", -1, 1, 10, "1e1", "2.5", 3, 3)
    assert x(c, "SORT", "l", "ALPHA", "DESC") == b(3, 3, "2.5", "1e1", 10, 1, -1, "-0.5")
    # the last of ASC / DESC wins; options are case-insensitive
    assert x(c, "sort", "l", "desc", "asc", "alpha") == x(c, "SORT", "l", "ALPHA")


def test_numbers_as_strtod_reads_them(c):
    x(c, "RPUSH", "l", " 7", "0x10", "", "inf", "-inf", "+2")
    assert x(c, "SORT", "l") == b("-inf", "", "+2", " 7", "0x10", "inf")
    for bad in ("abc", "1 ", "nan", "1x"):
        x(c, "DEL", "m")
        x(c, "RPUSH", "m", 1, bad, 2)
        assert err(c, "SORT", "m") == NOTDOUBLE
        assert err(c, "SORT", "m", "DESC", "LIMIT", 0, 1) == NOTDOUBLE
        assert x(c, "SORT", "m", "ALPHA") == sorted(x(c, "LRANGE", "m", 0, -1))


def test_alpha_is_bytewise(c):
    x(c, "RPUSH", "l", "b", "B", "a", "ab", "", "\xff", "A", "a")
    assert x(c, "SORT", "l", "ALPHA") == [b"", b"A", b"B", b"a", b"a", b"ab", b"b", "\xff".encode()]
    assert x(c, "SORT", "l", "ALPHA", "STORE", "d") == 8
    assert x(c, "LRANGE", "d", 0, -1) == x(c, "SORT", "l", "ALPHA")


def test_sets_both_encodings(c):
    x(c, "SADD", "si", 5, -3, 100, 0, 42)
    assert x(c, "OBJECT", "ENCODING", "si") == b"intset"
    assert x(c, "SORT", "si") == b(-3, 0, 5, 42, 100)
    assert x(c, "SORT", "si", "DESC") == b(100, 42, 5, 0, -3)
    assert x(c, "SORT", "si", "ALPHA") == b(-3, 0, 100, 42, 5)
    x(c, "SADD", "sh", "1.5", "-2", "10", "3e0", "x")
    assert x(c, "OBJECT", "ENCODING", "sh") == b"hashtable"
    assert err(c, "SORT", "sh") == NOTDOUBLE
    x(c, "SREM", "sh", "x")
    assert x(c, "SORT", "sh") == b(-2, "1.5", "3e0", 10)
    assert x(c, "SORT", "sh", "ALPHA", "DESC") == b("3e0", 10, "1.5", -2)
    big = list(range(600))
    x(c, "SADD", "sb", *big)
    assert x(c, "OBJECT", "ENCODING", "sb") == b"hashtable"
    assert x(c, "SORT", "sb", "LIMIT", 595, 10) == b(595, 596, 597, 598, 599)


def test_zsets_sort_by_member(c):
    x(c, "ZADD", "z", 1, "30", 2, "4", 3, "100", 4, "-7")
    assert x(c, "OBJECT", "ENCODING", "z") == b"listpack"
    assert x(c, "SORT", "z") == b(-7, 4, 30, 100)
    assert x(c, "SORT", "z", "ALPHA") == b(-7, 100, 30, 4)
    assert x(c, "SORT", "z", "DESC", "LIMIT", 1, 2) == b(30, 4)
    members = {"m%03d" % i: (i * 7) % 50 for i in range(200)}
    x(c, "ZADD", "zb", *[v for m, s in members.items() for v in (s, m)])
    assert x(c, "OBJECT", "ENCODING", "zb") == b"skiplist"
    assert x(c, "SORT", "zb", "ALPHA") == [m.encode() for m in sorted(members)]
    assert x(c, "SORT", "zb", "ALPHA", "DESC", "LIMIT", 0, 3) == b("m199", "m198", "m197")
    assert err(c, "SORT", "zb") == NOTDOUBLE


# ---- BY nosort: the value's own order ----

def test_nosort_keeps_list_and_zset_order(c):
    x(c, "RPUSH", "l", 3, 1, 2, 5, 4)
    assert x(c, "SORT", "l", "BY", "nosort") == b(3, 1, 2, 5, 4)
    assert x(c, "SORT", "l", "BY", "nosort", "DESC") == b(4, 5, 2, 1, 3)
    assert x(c, "SORT", "l", "BY", "nosort", "LIMIT", 1, 2) == b(1, 2)
    assert x(c, "SORT", "l", "BY", "nosort", "DESC", "LIMIT", 1, 2) == b(5, 2)
    assert x(c, "SORT", "l", "BY", "constkey", "LIMIT", 3, 100) == b(5, 4)
    x(c, "ZADD", "z", 3, "a", 1, "b", 2, "c", 5, "d")
    assert x(c, "SORT", "z", "BY", "nosort") == b("b", "c", "a", "d")
    assert x(c, "SORT", "z", "BY", "nosort", "DESC") == b("d", "a", "c", "b")
    assert x(c, "SORT", "z", "BY", "nosort", "LIMIT", 1, 2) == b("c", "a")
    assert x(c, "SORT", "z", "BY", "nosort", "DESC", "LIMIT", 1, 2) == b("a", "c")
    members = ["e%03d" % i for i in range(150)]
    x(c, "ZADD", "zb", *[v for i, m in enumerate(members) for v in (-i, m)])
    assert x(c, "OBJECT", "ENCODING", "zb") == b"skiplist"
    assert x(c, "SORT", "zb", "BY", "nosort", "LIMIT", 0, 2) == b("e149", "e148")
    assert x(c, "SORT", "zb", "BY", "nosort", "DESC", "LIMIT", 148, 5) == b("e148", "e149")
    assert x(c, "SORT", "zb", "BY", "nosort", "STORE", "d", "LIMIT", 10, 3) == 3
    assert x(c, "LRANGE", "d", 0, -1) == b("e139", "e138", "e137")


def test_nosort_on_sets(c):
    x(c, "SADD", "si", 9, 3, 7)
    # without STORE an intset comes in its own (ascending) order
    assert x(c, "SORT", "si", "BY", "nosort") == b(3, 7, 9)
    assert x(c, "SORT", "si", "BY", "nosort", "DESC") == b(3, 7, 9)
    assert x(c, "SORT", "si", "BY", "nosort", "LIMIT", 1, 1) == b(7)
    # with STORE a set is sorted ALPHA so the result is deterministic
    x(c, "SADD", "sh", "c", "10", "a", "b", "9")
    assert x(c, "SORT", "sh", "BY", "nosort", "STORE", "d") == 5
    assert x(c, "LRANGE", "d", 0, -1) == b(10, 9, "a", "b", "c")
    assert x(c, "SORT", "sh", "BY", "nosort", "DESC", "STORE", "d") == 5
    assert x(c, "LRANGE", "d", 0, -1) == b("c", "b", "a", 9, 10)
    assert x(c, "SORT", "sh", "BY", "w_*", "STORE", "d", "LIMIT", 1, 2) == 2
    assert x(c, "LRANGE", "d", 0, -1) == b(9, "a")
    assert sorted(x(c, "SORT", "sh", "BY", "nosort")) == b(10, 9, "a", "b", "c")


# ---- BY and GET patterns ----

def test_by_string_keys(c):
    x(c, "RPUSH", "l", 1, 2, 3, 4)
    x(c, "MSET", "w_1", 40, "w_2", "-1.5", "w_3", 7, "w_4", "1e1")
    assert x(c, "SORT", "l", "BY", "w_*") == b(2, 3, 4, 1)
    assert x(c, "SORT", "l", "BY", "w_*", "DESC") == b(1, 4, 3, 2)
    assert x(c, "SORT", "l", "BY", "w_*", "ALPHA") == b(2, 4, 1, 3)
    assert x(c, "SORT", "l", "BY", "w_*", "LIMIT", 1, 2) == b(3, 4)
    # a missing key counts as 0, ties fall back to the element
    x(c, "DEL", "w_3")
    x(c, "RPUSH", "l", 0)
    assert x(c, "SORT", "l", "BY", "w_*") == b(2, 0, 3, 4, 1)
    # ALPHA: a missing BY value sorts first
    assert x(c, "SORT", "l", "BY", "w_*", "ALPHA", "LIMIT", 2, 3) == b(2, 4, 1)
    x(c, "SET", "w_4", "x")
    assert err(c, "SORT", "l", "BY", "w_*") == NOTDOUBLE
    # a key of another type is missing, not an error
    x(c, "DEL", "w_4")
    x(c, "RPUSH", "w_4", 100)
    assert x(c, "SORT", "l", "BY", "w_*", "DESC") == b(1, 4, 3, 0, 2)


def test_by_only_first_star_and_suffix(c):
    x(c, "RPUSH", "l", "a", "b")
    x(c, "MSET", "pre_a_*_post", 2, "pre_b_*_post", 1)
    assert x(c, "SORT", "l", "BY", "pre_*_*_post") == b("b", "a")
    assert x(c, "SORT", "l", "BY", "nosort", "GET", "pre_*_*_post") == b(2, 1)


def test_by_hash_field(c):
    x(c, "RPUSH", "l", "u1", "u2", "u3")
    x(c, "HSET", "h_u1", "age", 30, "name", "carol")
    x(c, "HSET", "h_u2", "age", 20, "name", "alice")
    x(c, "HSET", "h_u3", "age", 25, "name", "bob")
    assert x(c, "SORT", "l", "BY", "h_*->age") == b("u2", "u3", "u1")
    assert x(c, "SORT", "l", "BY", "h_*->name", "ALPHA", "DESC") == b("u1", "u3", "u2")
    assert x(c, "SORT", "l", "BY", "h_*->age", "GET", "h_*->name", "GET", "#") == \
        b("alice", "u2", "bob", "u3", "carol", "u1")
    # a missing field or a non-hash key reads as missing
    assert x(c, "SORT", "l", "BY", "h_*->nofield") == b("u1", "u2", "u3")
    assert x(c, "SORT", "l", "ALPHA", "GET", "h_*->nofield", "GET", "nohash_*->age") == [None] * 6
    # a big (hashtable) hash works the same
    x(c, "HSET", "h_u2", *[v for i in range(600) for v in ("f%d" % i, i)])
    assert x(c, "OBJECT", "ENCODING", "h_u2") == b"hashtable"
    assert x(c, "SORT", "l", "BY", "h_*->f150", "DESC", "GET", "h_*->age") == b(20, 25, 30)


def test_hash_pattern_edges(c):
    x(c, "RPUSH", "l", "k")
    x(c, "HSET", "hk", "f->g", "deep", "f", "flat", "->", "arrow")
    x(c, "SET", "hk->", "literal")
    # the first "->" after the '*' splits key and field; a trailing "->"
    # is part of the key name
    assert x(c, "SORT", "l", "ALPHA", "GET", "h*->f", "GET", "h*->f->g", "GET", "h*->", "GET", "h*->->") == \
        b("flat", "deep", "literal", "arrow")


def test_get_forms(c):
    x(c, "RPUSH", "l", 2, 1, 3)
    x(c, "MSET", "v_1", "one", "v_2", "two")
    assert x(c, "SORT", "l", "GET", "#") == b(1, 2, 3)
    assert x(c, "SORT", "l", "GET", "v_*") == [b"one", b"two", None]
    assert x(c, "SORT", "l", "GET", "v_*", "GET", "#", "DESC") == [None, b"3", b"two", b"2", b"one", b"1"]
    # a GET pattern without '*' (and not '#') is always nil
    assert x(c, "SORT", "l", "GET", "v_1", "LIMIT", 0, 2) == [None, None]
    assert x(c, "SORT", "l", "GET", "#x", "LIMIT", 0, 1) == [None]
    assert x(c, "SORT", "l", "BY", "nosort", "GET", "v_*") == [b"two", b"one", None]
    assert x(c, "SORT", "l", "LIMIT", 5, 1, "GET", "#", "GET", "v_*") == []


def test_patterns_across_shards(c):
    items = list(range(1, 21))
    x(c, "RPUSH", "ids", *items)
    x(c, "SADD", "sids", *items)
    weights = {i: (i * 37) % 23 for i in items}
    for i in items:
        x(c, "SET", "w_%d" % i, weights[i])
        x(c, "HSET", "obj_%d" % i, "name", "n%02d" % (20 - i), "w", weights[i])
    by_w = sorted(items, key=lambda i: (weights[i], str(i)))
    for key in ("ids", "sids"):
        assert x(c, "SORT", key, "BY", "w_*") == b(*by_w)
        assert x(c, "SORT", key, "BY", "obj_*->w", "DESC") == b(*reversed(by_w))
        assert x(c, "SORT", key, "BY", "obj_*->name", "ALPHA", "GET", "obj_*->name") == \
            b(*["n%02d" % i for i in range(20)])
        assert x(c, "SORT_RO", key, "BY", "w_*", "GET", "w_*", "LIMIT", 0, 5) == b(*sorted(weights.values())[:5])
    assert x(c, "SORT", "ids", "BY", "w_*", "GET", "obj_*->name", "STORE", "{x}out") == 20
    assert x(c, "LRANGE", "{x}out", 0, 2) == b(*["n%02d" % (20 - i) for i in by_w[:3]])


# ---- LIMIT ----

def test_limit_clamping(c):
    x(c, "RPUSH", "l", 3, 1, 2, 5, 4)
    big, small = 9223372036854775807, -9223372036854775808
    assert x(c, "SORT", "l", "LIMIT", 0, 2) == b(1, 2)
    assert x(c, "SORT", "l", "LIMIT", 3, 100) == b(4, 5)
    assert x(c, "SORT", "l", "LIMIT", -5, 2) == b(1, 2)
    assert x(c, "SORT", "l", "LIMIT", 1, -1) == b(2, 3, 4, 5)
    assert x(c, "SORT", "l", "LIMIT", 1, small) == b(2, 3, 4, 5)
    assert x(c, "SORT", "l", "LIMIT", 0, 0) == []
    assert x(c, "SORT", "l", "LIMIT", 5, 1) == []
    assert x(c, "SORT", "l", "LIMIT", 2, big) == b(3, 4, 5)
    assert x(c, "SORT", "l", "LIMIT", big, big) == []
    assert x(c, "SORT", "l", "LIMIT", small, 1) == b(1)
    assert x(c, "SORT_RO", "l", "BY", "a", "LIMIT", 2, big) == b(2, 5, 4)
    assert x(c, "SORT_RO", "l", "BY", "a", "DESC", "LIMIT", 3, big) == b(1, 3)
    assert x(c, "SORT", "l", "BY", "a", "LIMIT", big, 1) == []
    # the last LIMIT wins
    assert x(c, "SORT", "l", "LIMIT", 0, 1, "LIMIT", 4, 1) == b(5)
    assert x(c, "SORT", "missing", "LIMIT", 2, big) == []


def test_huge_limit_is_fast(c):
    x(c, "RPUSH", "l", *range(2000))
    big = 9223372036854775807
    t = time.time()
    for _ in range(20):
        assert x(c, "SORT_RO", "l", "BY", "a", "LIMIT", 1998, big) == b(1998, 1999)
        assert x(c, "SORT", "l", "LIMIT", 1999, big) == b(1999)
    assert time.time() - t < 2


# ---- STORE ----

def test_store(c):
    x(c, "RPUSH", "l", 3, 1, 2)
    assert x(c, "SORT", "l", "STORE", "d") == 3
    assert x(c, "TYPE", "d") == b"list"
    assert x(c, "OBJECT", "ENCODING", "d") == b"quicklist"
    assert x(c, "LRANGE", "d", 0, -1) == b(1, 2, 3)
    # overwrites a key of another type and drops its TTL
    x(c, "SET", "s", "str", "EX", 100)
    assert x(c, "SORT", "l", "DESC", "STORE", "s") == 3
    assert x(c, "LRANGE", "s", 0, -1) == b(3, 2, 1)
    assert x(c, "TTL", "s") == -1
    x(c, "ZADD", "z", 1, "m")
    assert x(c, "SORT", "l", "STORE", "z", "LIMIT", 0, 1) == 1
    assert x(c, "TYPE", "z") == b"list"
    # nil GET results are stored as empty strings
    x(c, "SET", "v_2", "two")
    assert x(c, "SORT", "l", "GET", "v_*", "GET", "#", "STORE", "d") == 6
    assert x(c, "LRANGE", "d", 0, -1) == b("", 1, "two", 2, "", 3)
    # an empty result deletes the destination
    assert x(c, "SORT", "l", "LIMIT", 10, 1, "STORE", "d") == 0
    assert x(c, "EXISTS", "d") == 0
    x(c, "SET", "d", "x")
    assert x(c, "SORT", "missing", "STORE", "d") == 0
    assert x(c, "EXISTS", "d") == 0
    # the source itself as the destination
    assert x(c, "SORT", "l", "DESC", "STORE", "l") == 3
    assert x(c, "LRANGE", "l", 0, -1) == b(3, 2, 1)
    # the last STORE wins
    assert x(c, "SORT", "l", "STORE", "a1", "STORE", "a2") == 3
    assert x(c, "EXISTS", "a1", "a2") == 1


def test_store_across_shards(c):
    x(c, "SADD", "{a}src", *range(30))
    assert x(c, "SORT", "{a}src", "DESC", "LIMIT", 0, 4, "STORE", "{b}dst") == 4
    assert x(c, "LRANGE", "{b}dst", 0, -1) == b(29, 28, 27, 26)
    x(c, "ZADD", "{c}z", 2, "x", 1, "y")
    assert x(c, "SORT", "{c}z", "BY", "nosort", "STORE", "{d}dst") == 2
    assert x(c, "LRANGE", "{d}dst", 0, -1) == b("y", "x")
    for i in range(30):
        x(c, "SET", "{e%d}w" % i, -i)
    assert x(c, "SORT", "{a}src", "BY", "{e*}w", "GET", "{e*}w", "LIMIT", 0, 3, "STORE", "{f}dst") == 3
    assert x(c, "LRANGE", "{f}dst", 0, -1) == b(-29, -28, -27)


def test_store_big_result(c):
    x(c, "RPUSH", "l", *range(500))
    assert x(c, "SORT", "l", "DESC", "STORE", "d") == 500
    assert x(c, "LLEN", "d") == 500
    assert x(c, "LINDEX", "d", 0) == b"499"
    assert x(c, "LINDEX", "d", -1) == b"0"


# ---- errors and shapes ----

def test_missing_key(c):
    assert x(c, "SORT", "nokey") == []
    assert x(c, "SORT_RO", "nokey", "BY", "w_*", "GET", "#", "ALPHA") == []


def test_errors(c):
    x(c, "SET", "str", "1")
    x(c, "HSET", "h", "f", "v")
    x(c, "RPUSH", "l", 1, 2)
    assert err(c, "SORT", "str") == WRONGTYPE
    assert err(c, "SORT_RO", "h", "ALPHA") == WRONGTYPE
    assert err(c, "SORT", "l", "foo") == SYNTAX
    assert err(c, "SORT", "l", "LIMIT", 1) == SYNTAX
    assert err(c, "SORT", "l", "BY") == SYNTAX
    assert err(c, "SORT", "l", "GET") == SYNTAX
    assert err(c, "SORT", "l", "STORE") == SYNTAX
    assert err(c, "SORT_RO", "l", "STORE", "d") == SYNTAX
    assert err(c, "SORT", "l", "LIMIT", "x", 1) == NOTINT
    assert err(c, "SORT", "l", "LIMIT", 0, "1.5") == NOTINT
    assert err(c, "SORT", "l", "LIMIT", 0, "9223372036854775808") == NOTINT
    # option errors come before the type check
    assert err(c, "SORT", "str", "foo") == SYNTAX
    assert err(c, "SORT", "str", "LIMIT", "x", 1) == NOTINT
    assert "wrong number of arguments for 'sort' command" in err(c, "SORT")
    assert "wrong number of arguments for 'sort_ro' command" in err(c, "SORT_RO")
    assert x(c, "EXISTS", "d") == 0


def test_failed_store_leaves_destination(c):
    x(c, "RPUSH", "l", 1, "x")
    x(c, "SET", "d", "keep")
    assert err(c, "SORT", "l", "STORE", "d") == NOTDOUBLE
    assert x(c, "GET", "d") == b"keep"


def test_command_getkeys(c):
    assert x(c, "COMMAND", "GETKEYS", "SORT", "k", "BY", "w_*", "STORE", "d") == b("k", "d")
    assert x(c, "COMMAND", "GETKEYS", "SORT", "k", "LIMIT", 0, 1, "GET", "#") == b("k")
    assert x(c, "COMMAND", "GETKEYS", "SORT", "k", "STORE", "d1", "STORE", "d2") == b("k", "d2")
    assert x(c, "COMMAND", "GETKEYS", "SORT_RO", "k", "GET", "x") == b("k")


def test_resp3_shapes(server, c):
    x(c, "RPUSH", "l", 2, 1)
    x(c, "SET", "v_1", "one")
    payload = (b"HELLO 3\r\n"
               b"SORT l GET v_* GET #\r\n"
               b"SORT nokey\r\n"
               b"SORT l STORE d\r\n"
               b"PING\r\n")
    out = raw_exchange(server, payload, read_until=b"+PONG\r\n")
    body = out[out.index(b"modules") + len(b"modules\r\n*0\r\n"):]
    assert body == (b"*4\r\n$3\r\none\r\n$1\r\n1\r\n_\r\n$1\r\n2\r\n"
                    b"*0\r\n"
                    b":2\r\n"
                    b"+PONG\r\n")


def test_resp2_nil_shape(server, c):
    x(c, "RPUSH", "l", 1)
    out = raw_exchange(server, b"SORT l GET nokey_*\r\nPING\r\n", read_until=b"+PONG\r\n")
    assert out == b"*1\r\n$-1\r\n+PONG\r\n"

