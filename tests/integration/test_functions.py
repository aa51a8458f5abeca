"""Functions: FUNCTION LOAD/LIST/DELETE/FLUSH/DUMP/RESTORE/STATS, FCALL and
FCALL_RO, library shebangs and register_function, and libraries kept in the
RDB file across a restart."""
import pytest
import redis

from test_atomicity import keys_on_distinct_shards

@pytest.fixture
def f(r):
    """A client on a server with no function libraries (FLUSHALL keeps them)."""
    r.function_flush()
    yield r
    r.function_flush()


LIB = """#!lua name=mylib
local function set_get(keys, args)
  redis.call('set', keys[1], args[1])
  return redis.call('get', keys[1])
end
redis.register_function('set_get', set_get)
redis.register_function{function_name='ro_get', callback=function(keys) return redis.call('get', keys[1]) end,
                        flags={'no-writes'}, description='reads a key'}
"""


def test_load_list_call(f):
    r = f
    assert r.function_load(LIB) == b"mylib"
    assert r.fcall("set_get", 1, "k", "v") == b"v"
    assert r.fcall_ro("ro_get", 1, "k") == b"v"
    assert r.execute_command("FCALL", "SET_GET", 1, "k", "w") == b"w"  # names are case-insensitive
    libs = r.function_list(withcode=True)
    assert len(libs) == 1
    lib = libs[0]
    assert lib[1] == b"mylib" and lib[3] == b"LUA"
    fns = sorted(lib[5], key=lambda f: f[1])
    assert fns[0] == [b"name", b"ro_get", b"description", b"reads a key", b"flags", [b"no-writes"]]
    assert fns[1] == [b"name", b"set_get", b"description", None, b"flags", []]
    assert lib[7] == LIB.encode()
    assert r.function_list(library="my*") == r.function_list()
    assert r.function_list(library="other*") == []
    stats = r.execute_command("FUNCTION", "STATS")
    assert stats[0] == b"running_script" and stats[1] is None
    assert stats[3] == [b"LUA", [b"libraries_count", 1, b"functions_count", 2]]


def test_errors(f):
    r = f
    r.function_load(LIB)
    with pytest.raises(redis.ResponseError, match="Library 'mylib' already exists"):
        r.function_load(LIB)
    assert r.function_load(LIB, replace=True) == b"mylib"
    with pytest.raises(redis.ResponseError, match="Function (set_get|ro_get) already exists"):
        r.function_load(LIB.replace("name=mylib", "name=other"))
    with pytest.raises(redis.ResponseError, match="Missing library metadata"):
        r.function_load("return 1")
    with pytest.raises(redis.ResponseError, match="Library name was not given"):
        r.function_load("#!lua\nreturn 1")
    with pytest.raises(redis.ResponseError, match="Engine 'py' not found"):
        r.function_load("#!py name=x\nreturn 1")
    with pytest.raises(redis.ResponseError, match="Invalid metadata value given: foo=bar"):
        r.function_load("#!lua name=x foo=bar\nreturn 1")
    with pytest.raises(redis.ResponseError, match="No functions registered"):
        r.function_load("#!lua name=x\nreturn 1")
    with pytest.raises(redis.ResponseError, match="Error compiling function: user_function:2:"):
        r.function_load("#!lua name=x\nreturn 1 +")
    with pytest.raises(redis.ResponseError, match="nonexistent global variable 'call'"):
        r.function_load("#!lua name=x\nredis.call('ping')")
    with pytest.raises(redis.ResponseError, match="nonexistent global variable 'math'"):
        r.function_load("#!lua name=x\nreturn math.random()")
    with pytest.raises(redis.ResponseError, match="unknown flag given"):
        r.function_load("#!lua name=x\nredis.register_function{function_name='f', callback=function() end, "
                        "flags={'bad'}}")
    with pytest.raises(redis.ResponseError, match="Function already exists in the library"):
        r.function_load("#!lua name=x\nredis.register_function('f', function() end)\n"
                        "redis.register_function('f', function() end)")
    with pytest.raises(redis.ResponseError, match="Function not found"):
        r.fcall("nosuch", 0)
    with pytest.raises(redis.ResponseError, match="Bad number of keys provided"):
        r.execute_command("FCALL", "set_get", "x")
    with pytest.raises(redis.ResponseError, match="can't be greater than number of args"):
        r.fcall("set_get", 3, "a")
    with pytest.raises(redis.ResponseError, match=r"Can not execute a script with write flag using \*_ro command"):
        r.fcall_ro("set_get", 1, "k", "v")
    with pytest.raises(redis.ResponseError, match="Write commands are not allowed from read-only scripts. "
                                                  "script: w, on @user_function:2."):
        r.function_load("#!lua name=w\nredis.register_function{function_name='w', callback=function(keys) "
                        "return redis.call('set', keys[1], 1) end, flags={'no-writes'}}")
        r.fcall("w", 1, "k")
    with pytest.raises(redis.ResponseError, match="Library not found"):
        r.function_delete("nosuch")
    with pytest.raises(redis.ResponseError, match="NOTBUSY"):
        r.execute_command("FUNCTION", "KILL")


def test_function_runtime_errors_and_globals(f):
    r = f
    r.function_load("#!lua name=e\nredis.register_function('boom', function() error('bad') end)\n"
                    "redis.register_function('keys_global', function() return KEYS end)")
    with pytest.raises(redis.ResponseError) as e:
        r.fcall("boom", 0)
    assert str(e.value) == "user_function:2: bad script: boom, on @user_function:2."
    with pytest.raises(redis.ResponseError, match="nonexistent global variable 'KEYS'"):
        r.fcall("keys_global", 0)


def test_delete_flush_dump_restore(f):
    r = f
    r.function_load(LIB)
    payload = r.function_dump()
    assert r.function_delete("mylib") is True
    assert r.function_list() == []
    with pytest.raises(redis.ResponseError, match="Function not found"):
        r.fcall("set_get", 1, "k", "v")
    assert r.function_restore(payload) is True
    assert r.fcall("set_get", 1, "k", "x") == b"x"
    with pytest.raises(redis.ResponseError, match="Library mylib already exists"):
        r.function_restore(payload)
    assert r.function_restore(payload, "REPLACE") is True
    assert r.function_restore(payload, "FLUSH") is True
    with pytest.raises(redis.ResponseError, match="payload version or checksum are wrong"):
        r.function_restore(b"garbage")
    with pytest.raises(redis.ResponseError, match="Wrong restore policy"):
        r.function_restore(payload, "BAD")
    assert r.function_flush() is True
    assert r.function_list() == []


def test_functions_survive_restart(spawn):
    srv = spawn()
    c = srv.new_client()
    c.function_flush()
    c.function_load(LIB)
    c.set("k", "before")
    assert c.save() is True
    srv.stop()
    srv.start()
    c = srv.new_client()
    assert c.function_list()[0][1] == b"mylib"
    assert c.fcall_ro("ro_get", 1, "k") == b"before"


def test_debug_reload_noflush_and_merge(spawn):
    """DEBUG RELOAD empties the functions with the data; NOFLUSH finds the
    library already there (the load fails); NOFLUSH MERGE replaces it."""
    srv = spawn("--enable-debug-command", "yes")
    c = srv.new_client()
    one = "#!lua name=one\nredis.register_function('f1', function() return 'one' end)"
    two = "#!lua name=two\nredis.register_function('f2', function() return 'two' end)"
    c.function_load(one)
    c.set("x", "1")
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert [l[1] for l in c.function_list()] == [b"one"]
    with pytest.raises(redis.ResponseError, match="Error trying to load the RDB"):
        c.execute_command("DEBUG", "RELOAD", "NOFLUSH")
    c.function_flush()
    c.function_load(one)
    c.function_load(two)
    c.set("x", "2")
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") == b"OK"
    assert c.fcall("f1", 0) == b"one" and c.fcall("f2", 0) == b"two"
    assert c.get("x") == b"1"  # the saved value replaced the one in memory
    with pytest.raises(redis.ResponseError, match="MERGE, NOFLUSH and NOSAVE"):
        c.execute_command("DEBUG", "RELOAD", "BAD")


def test_function_over_keys_of_several_shards(f):
    """A function that reads and writes keys of every shard (declared or not)
    sees and leaves a consistent state."""
    r = f
    ks = keys_on_distinct_shards("fk", 4)
    r.function_load("#!lua name=mv\nredis.register_function('spread', function(keys, args)\n"
                    "  local n = 0\n"
                    "  for _, k in ipairs(args) do n = n + redis.call('incr', k) end\n"
                    "  redis.call('set', keys[1], n)\n"
                    "  return n\n"
                    "end)")
    assert r.fcall("spread", 1, ks[0], *ks[1:]) == 3
    assert r.fcall("spread", 1, ks[0], *ks[1:]) == 6
    assert r.mget(ks) == [b"6", b"2", b"2", b"2"]
