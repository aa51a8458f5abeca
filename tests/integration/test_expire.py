"""Expiry commands: EXPIRE PEXPIRE EXPIREAT PEXPIREAT (with NX XX GT LT),
TTL PTTL EXPIRETIME PEXPIRETIME PERSIST, and keys actually expiring."""
import time

import pytest
import redis

LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


def err(fn, *args):
    with pytest.raises(redis.ResponseError) as e:
        fn(*args)
    return str(e.value)


def cmd(r, *args):
    return r.execute_command(*args)


def test_expire_and_ttl(r):
    r.set("a", 1)
    assert cmd(r, "EXPIRE", "a", 100) == 1
    assert 99 <= r.ttl("a") <= 100
    assert 99000 < r.pttl("a") <= 100000
    assert cmd(r, "PEXPIRE", "a", 50000) == 1
    assert 49 <= r.ttl("a") <= 50
    assert cmd(r, "EXPIRE", "nokey", 100) == 0
    assert r.ttl("nokey") == -2 and r.pttl("nokey") == -2
    r.set("b", 1)
    assert r.ttl("b") == -1 and r.pttl("b") == -1


def test_ttl_rounds_to_nearest_second(r):
    r.set("a", 1)
    cmd(r, "PEXPIRE", "a", 1700)
    assert r.ttl("a") == 2  # 1.7 s rounds up (a floor would say 1)
    cmd(r, "PEXPIRE", "a", 1200)
    assert r.ttl("a") == 1
    cmd(r, "PEXPIRE", "a", 400)
    assert r.ttl("a") == 0


def test_expireat_and_expiretime(r):
    r.set("a", 1)
    assert cmd(r, "PEXPIREAT", "a", 99999999999499) == 1
    assert cmd(r, "EXPIRETIME", "a") == 99999999999
    assert cmd(r, "PEXPIRETIME", "a") == 99999999999499
    assert cmd(r, "PEXPIREAT", "a", 99999999999500) == 1
    assert cmd(r, "EXPIRETIME", "a") == 100000000000
    assert cmd(r, "EXPIREAT", "a", 99999999999) == 1
    assert cmd(r, "PEXPIRETIME", "a") == 99999999999000
    at = int(time.time()) + 1000
    assert cmd(r, "EXPIREAT", "a", at) == 1
    assert 998 <= r.ttl("a") <= 1000
    assert cmd(r, "EXPIRETIME", "nokey") == -2 and cmd(r, "PEXPIRETIME", "nokey") == -2
    r.set("b", 1)
    assert cmd(r, "EXPIRETIME", "b") == -1 and cmd(r, "PEXPIRETIME", "b") == -1


def test_far_deadlines(r):
    r.set("a", 1)
    assert cmd(r, "PEXPIREAT", "a", LLONG_MAX) == 1
    assert cmd(r, "PEXPIRETIME", "a") == LLONG_MAX
    assert cmd(r, "EXPIRETIME", "a") == LLONG_MAX // 1000 + (1 if LLONG_MAX % 1000 >= 500 else 0)
    assert r.ttl("a") > 9000000000000000
    assert cmd(r, "EXPIREAT", "a", LLONG_MAX // 1000) == 1
    assert r.exists("a") == 1


def test_past_or_zero_deadline_deletes(r):
    cases = [("EXPIRE", 0), ("EXPIRE", -5), ("PEXPIRE", 0), ("PEXPIRE", LLONG_MIN),
             ("EXPIREAT", 1), ("EXPIREAT", -(LLONG_MAX // 1000)), ("PEXPIREAT", 1), ("PEXPIREAT", 0),
             ("EXPIRE", LLONG_MIN // 1000 + 1)]
    for i, (c, v) in enumerate(cases):
        k = "k%d" % i
        r.set(k, 1)
        assert cmd(r, c, k, v) == 1, (c, v)
        assert r.exists(k) == 0, (c, v)
        assert cmd(r, c, k, v) == 0


def test_keys_really_expire(r):
    r.set("a", 1)
    r.set("b", 1)
    cmd(r, "PEXPIRE", "a", 30)
    cmd(r, "PEXPIREAT", "b", int(time.time() * 1000) + 30)
    assert r.get("a") == b"1"
    time.sleep(0.1)
    assert r.get("a") is None
    assert r.exists("b") == 0
    assert r.ttl("a") == -2


def test_expire_many_keys_across_shards(r):
    keys = ["x%d" % i for i in range(60)]
    r.mset({k: 1 for k in keys})
    for i, k in enumerate(keys):
        assert cmd(r, "EXPIRE", k, 1000 + i) == 1
    for i, k in enumerate(keys):
        assert 990 + i <= r.ttl(k) <= 1000 + i
    for k in keys[::2]:
        assert r.persist(k) is True
    assert sum(r.ttl(k) == -1 for k in keys) == 30


def test_nx_xx_gt_lt(r):
    r.set("a", 1)
    base = int(time.time() * 1000) + 100000
    e = lambda ms, *a: cmd(r, "PEXPIREAT", "a", base + ms, *a)
    assert e(0, "GT") == 0  # no TTL counts as infinite
    assert e(0, "XX") == 0
    assert r.ttl("a") == -1
    assert e(0, "LT") == 1
    r.persist("a")
    assert e(0, "NX") == 1
    assert e(-50, "NX") == 0
    assert e(-50, "GT") == 0
    assert e(0, "GT") == 0  # equal is not greater
    assert e(1, "GT") == 1
    assert e(2, "LT") == 0
    assert e(1, "LT") == 0  # equal is not less
    assert e(-50, "LT") == 1
    assert cmd(r, "PEXPIRETIME", "a") == base - 50
    assert e(300, "XX") == 1
    assert e(400, "xx", "gt") == 1
    assert e(350, "XX", "LT") == 1
    assert cmd(r, "PEXPIRETIME", "a") == base + 350
    assert e(0, "nx", "NX") == 0
    assert cmd(r, "EXPIRE", "a", 1000, "LT") == 0
    assert cmd(r, "PEXPIRE", "a", 1000, "GT") == 0
    assert cmd(r, "EXPIRE", "a", 50, "LT") == 1
    assert 49 <= r.ttl("a") <= 50
    assert cmd(r, "PEXPIREAT", "a", LLONG_MAX, "GT") == 1
    assert cmd(r, "EXPIRE", "nokey", 10, "XX") == 0
    assert cmd(r, "EXPIRE", "nokey", 10, "NX") == 0


def test_flags_checked_before_deleting(r):
    r.set("a", 1)
    assert cmd(r, "EXPIRE", "a", -1, "GT") == 0
    assert cmd(r, "EXPIRE", "a", 0, "XX") == 0
    assert r.exists("a") == 1
    assert cmd(r, "EXPIRE", "a", -1, "LT") == 1
    assert r.exists("a") == 0
    r.set("b", 1, ex=100)
    assert cmd(r, "EXPIRE", "b", 0, "NX") == 0
    assert cmd(r, "EXPIRE", "b", 0, "XX") == 1
    assert r.exists("b") == 0


def test_option_errors(r):
    r.set("a", 1)
    bad = "NX and XX, GT or LT options at the same time are not compatible"
    for c in ("EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"):
        assert err(cmd, r, c, "a", 100, "NX", "XX") == bad
        assert err(cmd, r, c, "a", 100, "GT", "NX") == bad
        assert err(cmd, r, c, "a", 100, "NX", "LT") == bad
        assert err(cmd, r, c, "a", 100, "GT", "LT") == "GT and LT options at the same time are not compatible"
        assert err(cmd, r, c, "a", 100, "FOO") == "Unsupported option FOO"
        assert err(cmd, r, c, "a", 100, "nx", "bar") == "Unsupported option bar"
        assert err(cmd, r, c, "a", "x") == "value is not an integer or out of range"
        assert err(cmd, r, c, "a", "1.5") == "value is not an integer or out of range"
        assert err(cmd, r, c, "a") == "wrong number of arguments for '%s' command" % c.lower()
    # options are parsed before the number, for missing keys too
    assert err(cmd, r, "EXPIRE", "a", "x", "FOO") == "Unsupported option FOO"
    assert err(cmd, r, "EXPIRE", "a", "x", "NX", "XX") == bad
    assert err(cmd, r, "EXPIRE", "nokey", 10, "NX", "XX") == bad
    assert err(cmd, r, "EXPIRE", "nokey", "x") == "value is not an integer or out of range"
    assert r.ttl("a") == -1


def test_overflow_errors(r):
    r.set("a", 1)
    cases = [("EXPIRE", LLONG_MAX), ("EXPIRE", LLONG_MAX // 1000), ("EXPIRE", LLONG_MAX // 1000 - 1000),
             ("EXPIRE", LLONG_MIN), ("EXPIRE", LLONG_MIN // 1000 - 1), ("PEXPIRE", LLONG_MAX),
             ("PEXPIRE", LLONG_MAX - 1000), ("EXPIREAT", LLONG_MAX), ("EXPIREAT", LLONG_MAX // 1000 + 1),
             ("EXPIREAT", -(LLONG_MAX // 1000) - 2)]
    for c, v in cases:
        assert err(cmd, r, c, "a", v) == "invalid expire time in '%s' command" % c.lower(), (c, v)
    assert err(cmd, r, "EXPIRE", "a", "9223372036854775808") == "value is not an integer or out of range"
    assert r.ttl("a") == -1


def test_persist(r):
    r.set("a", 1, ex=100)
    assert r.persist("a") is True
    assert r.ttl("a") == -1
    assert r.persist("a") is False
    assert r.persist("nokey") is False
    assert r.get("a") == b"1"
    assert err(cmd, r, "PERSIST") == "wrong number of arguments for 'persist' command"


def test_set_overwrites_ttl(r):
    r.set("a", 1)
    cmd(r, "EXPIRE", "a", 100)
    r.set("a", 2)
    assert r.ttl("a") == -1
    r.set("b", "x", px=5000)
    assert 4900 < r.pttl("b") <= 5000


def test_reader_arity(r):
    for c in ("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"):
        assert err(cmd, r, c) == "wrong number of arguments for '%s' command" % c.lower()
        assert err(cmd, r, c, "a", "b") == "wrong number of arguments for '%s' command" % c.lower()


def test_expire_other_db(r):
    r.execute_command("SELECT", 4)
    r.set("a", 1)
    assert cmd(r, "EXPIRE", "a", 100) == 1
    r.execute_command("SELECT", 0)
    assert r.ttl("a") == -2
    r.set("a", 1)
    assert r.ttl("a") == -1
    r.execute_command("SELECT", 4)
    assert 99 <= r.ttl("a") <= 100
    r.execute_command("SELECT", 0)
