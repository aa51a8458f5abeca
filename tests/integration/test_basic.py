"""Smoke tests of the core path: PING, GET/SET, unknown commands, arity."""
import pytest
import redis


def test_ping(r):
    assert r.ping() is True
    r.set_response_callback("PING", lambda resp, **kw: resp)
    assert r.execute_command("PING") == b"PONG"
    assert r.execute_command("PING", "hello") == b"hello"


def test_ping_arity(r):
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'ping' command"):
        r.execute_command("PING", "a", "b")


def test_set_get(r):
    assert r.set("foo", "bar") is True
    assert r.get("foo") == b"bar"
    assert r.get("missing") is None


def test_unknown_command(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("NOSUCHCMD", "a", "b")
    assert str(e.value) == "unknown command 'NOSUCHCMD', with args beginning with: 'a' 'b' "


def test_unknown_subcommand(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CONFIG", "NOPE")
    assert str(e.value) == "unknown subcommand 'NOPE'. Try CONFIG HELP."


def test_get_arity(r):
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'get' command"):
        r.execute_command("GET")


def test_mset_mget_across_shards(r):
    keys = ["k%d" % i for i in range(50)]
    r.mset({k: k.upper() for k in keys})
    assert r.mget(keys) == [k.upper().encode() for k in keys]
    assert r.dbsize() == 50
    assert r.delete(*keys[:10]) == 10
    assert r.exists(*keys) == 40
    assert sorted(r.keys("*")) == sorted(k.encode() for k in keys[10:])


def test_pipeline_order_mixed_shards(r):
    p = r.pipeline(transaction=False)
    for i in range(200):
        p.set("p%d" % i, i)
        p.get("p%d" % i)
        p.mget("p%d" % i, "p%d" % (i + 1))
    out = p.execute()
    for i in range(200):
        assert out[3 * i] is True
        assert out[3 * i + 1] == str(i).encode()
        assert out[3 * i + 2][0] == str(i).encode()


def test_select_errors(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("SELECT", "99999999999")
    assert str(e.value) == "value is out of range, value must between -2147483648 and 2147483647"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("SELECT", "16")
    assert str(e.value) == "DB index is out of range"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("SELECT", "x")
    assert str(e.value) == "value is not an integer or out of range"
