"""Lua scripting: EVAL, EVALSHA, SCRIPT, the redis library, Redis 7.0's
conversions, the sandbox, and scripts whose keys live on several shards
(atomic against concurrent clients). Loops are bounded in count and time."""
import threading
import time

import pytest
import redis

from test_atomicity import keys_on_distinct_shards, shard_of


def enc(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Raw:
    """One connection, exact reply bytes (RESP2 or RESP3 after HELLO 3)."""

    def __init__(self, server):
        self.s = server.raw(timeout=10)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            assert d, "connection closed"
            self.buf += d
        i = self.buf.index(b"\r\n")
        line, self.buf = self.buf[:i + 2], self.buf[i + 2:]
        return line

    def _exact(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            assert d, "connection closed"
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _reply(self):
        line = self._line()
        t, rest = line[:1], line[1:-2]
        if t in b"$=" and rest != b"-1":
            return line + self._exact(int(rest) + 2)
        if t in b"*~>" and rest != b"-1":
            return line + b"".join(self._reply() for _ in range(int(rest)))
        if t == b"%":
            return line + b"".join(self._reply() for _ in range(2 * int(rest)))
        return line

    def cmd(self, *args):
        self.s.sendall(enc(*args))
        return self._reply()

    def close(self):
        self.s.close()


@pytest.fixture
def raw(server, r):
    c = Raw(server)
    yield c
    c.close()


# ---- conversions ----

LUA_TO_RESP2 = [
    ("return 'hello'", b"$5\r\nhello\r\n"),
    ("return 100.5", b":100\r\n"),
    ("return -3.99", b":-3\r\n"),
    ("return true", b":1\r\n"),
    ("return false", b"$-1\r\n"),
    ("return nil", b"$-1\r\n"),
    ("return {ok='fine'}", b"+fine\r\n"),
    ("return {err='ERR this is an error'}", b"-ERR this is an error\r\n"),
    ("return {err='xx'}", b"-xx\r\n"),
    ("return {err=1}", b"*0\r\n"),
    ("return redis.error_reply('My Error')", b"-My Error\r\n"),
    ("return redis.status_reply('FINE')", b"+FINE\r\n"),
    ("return {1,2,3,'ciao',{1,2}}", b"*5\r\n:1\r\n:2\r\n:3\r\n$4\r\nciao\r\n*2\r\n:1\r\n:2\r\n"),
    ("return {1,2,nil,4}", b"*2\r\n:1\r\n:2\r\n"),
    ("return {1,false,3}", b"*3\r\n:1\r\n$-1\r\n:3\r\n"),
    ("return {double=3.5}", b"$3\r\n3.5\r\n"),
    ("return {big_number='123'}", b"$3\r\n123\r\n"),
    ("return {big_number='123\\r\\n123'}", b"$8\r\n123  123\r\n"),
    ("return _G", b"*0\r\n"),
    ("local a = {} setmetatable(a, {__index=function() foo() end}) return a", b"*0\r\n"),
    ("local a = {} for i = 1, 7999 do a[i] = 1 end return redis.call('lpush', 'l', unpack(a))", b":7999\r\n"),
    ("return {map={a=1}}", b"*2\r\n$1\r\na\r\n:1\r\n"),
    ("return {set={a=true}}", b"*1\r\n$1\r\na\r\n"),
    ("return {verbatim_string={format='txt',string='hi'}}", b"$2\r\nhi\r\n"),
]


@pytest.mark.parametrize("script,expect", LUA_TO_RESP2)
def test_lua_to_resp2(raw, script, expect):
    assert raw.cmd("eval", script, 0) == expect


LUA_TO_RESP3 = [
    ("return true", b":1\r\n"),
    ("return false", b"_\r\n"),
    ("redis.setresp(3); return true", b"#t\r\n"),
    ("redis.setresp(3); return false", b"#f\r\n"),
    ("return {double=3.5}", b",3.5\r\n"),
    ("return {big_number='123'}", b"(123\r\n"),
    ("return {big_number='123\\r\\n123'}", b"(123  123\r\n"),
    ("return {map={a=1}}", b"%1\r\n$1\r\na\r\n:1\r\n"),
    ("return {set={a=true}}", b"~1\r\n$1\r\na\r\n"),
    ("return {verbatim_string={format='txt',string='hi'}}", b"=6\r\ntxt:hi\r\n"),
]


@pytest.mark.parametrize("script,expect", LUA_TO_RESP3)
def test_lua_to_resp3(raw, script, expect):
    raw.cmd("hello", "3")
    assert raw.cmd("eval", script, 0) == expect


def test_reply_conversion_reads_no_metamethods(r):
    script = "local a = {} setmetatable(a, {__index=function() redis.call('set', 'x', '1') end}) return a"
    assert r.eval(script, 0) == []
    assert r.get("x") is None


def test_time_stands_still_inside_a_script(spawn):
    srv = spawn("--enable-debug-command", "yes")
    c = srv.new_client()
    c.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")  # DEBUG SLEEP from the script
    script = ("redis.call('set', 'key', 'value', 'px', '1') redis.call('debug', 'sleep', '0.01') "
              "return redis.call('exists', 'key')")
    assert c.eval(script, 0) == 1
    assert c.exists("key") == 0


def test_debug_object_sees_an_expired_key_still_in_the_table(spawn):
    srv = spawn("--enable-debug-command", "yes")
    c = srv.new_client()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    c.set("key", "value", px=1)
    time.sleep(0.01)
    assert c.execute_command("DEBUG", "OBJECT", "key").startswith(b"Value at:")
    assert c.eval("return redis.call('exists', 'key')", 0) == 0
    assert c.exists("key") == 0
    with pytest.raises(redis.ResponseError, match="no such key"):
        c.execute_command("DEBUG", "OBJECT", "key")


def test_sort_of_a_set_by_constant_is_ordered_for_scripts(r):
    r.sadd("myset", *"m d n i u aaa o s l h c f e azz b aa a z p v q r g t".split())
    got = r.eval("return redis.call('sort', KEYS[1], 'by', '_')", 1, "myset")
    assert got == [x.encode() for x in sorted("m d n i u aaa o s l h c f e azz b aa a z p v q r g t".split())]
    r.delete("myset")
    r.sadd("myset", "c", "b", "a")
    got = r.eval("return redis.call('sort', KEYS[1], 'by', '_', 'get', '#', 'get', '_:*')", 1, "myset")
    assert got == [b"a", None, b"b", None, b"c", None]


def test_error_reply_counts_its_own_code(r):
    r.config_resetstat()
    with pytest.raises(redis.ResponseError, match="MY_ERR_CODE custom msg"):
        r.eval("return redis.error_reply('MY_ERR_CODE custom msg')", 0)
    assert r.info("errorstats")["errorstat_MY_ERR_CODE"] in ({"count": 1}, "count=1")


def test_scripts_over_maxmemory(spawn):
    """Over maxmemory (noeviction): a script's first deny-oom command is
    refused (it has written nothing), a script with flags needs allow-oom
    (or no-writes) to start, and allow-oom lets it write."""
    srv = spawn()
    c = srv.new_client()
    c.set("x", "1")
    c.config_set("maxmemory", 1)
    try:
        with pytest.raises(redis.ResponseError, match="^OOM command not allowed when used memory"):
            c.eval("return redis.call('set', 'x', 'y')", 1, "x")
        assert c.eval("return redis.pcall('set', 'x', 'y')['err']", 1, "x") == \
            b"OOM command not allowed when used memory > 'maxmemory'."
        assert c.eval("return redis.call('get', 'x')", 1, "x") == b"1"
        with pytest.raises(redis.ResponseError, match="^OOM command not allowed when used memory"):
            c.eval("#!lua\nreturn redis.call('get', 'x')", 1, "x")  # flags: a deny-oom command
        assert c.eval("#!lua flags=no-writes\nreturn redis.call('get', 'x')", 1, "x") == b"1"
        assert c.eval("#!lua flags=allow-oom\nreturn redis.call('set', 'x', 'z')", 1, "x") == b"OK"
    finally:
        c.config_set("maxmemory", 0)
    assert c.get("x") == b"z"


def test_resp_to_lua(r):
    r.set("s", "v")
    r.rpush("l", "a", "b")
    r.hset("h", "f", "v")
    ev = lambda s: r.eval(s, 0)
    assert ev("return type(redis.call('get','s'))") == b"string"
    assert ev("return type(redis.call('get','nokey'))") == b"boolean"
    assert ev("return type(redis.call('incr','n'))") == b"number"
    assert ev("return redis.call('set','x','1')['ok']") == b"OK"
    assert ev("return redis.pcall('incr','s')['err']") == b"ERR value is not an integer or out of range"
    assert ev("return #redis.call('lrange','l',0,-1)") == 2
    assert ev("redis.setresp(3); return type(redis.call('get','nokey'))") == b"nil"
    assert ev("redis.setresp(3); local m = redis.call('hgetall','h'); return m['map']['f']") == b"v"
    assert ev("redis.setresp(3); return redis.call('smembers','nokey')['set'] ~= nil") == 1
    assert ev("return redis.call('set', 'f', 0.1)['ok']") == b"OK"
    assert r.get("f") == b"0.10000000000000001"


# ---- the API ----

def test_keys_argv_and_cache(r):
    assert r.eval("return {KEYS[1], KEYS[2], ARGV[1], ARGV[2]}", 2, "a", "b", "c", "d") == [b"a", b"b", b"c", b"d"]
    sha = r.script_load("return 'cached'")
    assert sha == __import__("hashlib").sha1(b"return 'cached'").hexdigest()
    assert r.evalsha(sha, 0) == b"cached"
    assert r.execute_command("EVALSHA", sha.upper(), 0) == b"cached"
    assert r.script_exists(sha, "0" * 40) == [True, False]
    # EVAL puts its script in the cache too
    r.eval("return 'via eval'", 0)
    import hashlib
    assert r.evalsha(hashlib.sha1(b"return 'via eval'").hexdigest(), 0) == b"via eval"
    assert r.script_flush() is True
    with pytest.raises(redis.exceptions.NoScriptError):
        r.evalsha(sha, 0)
    with pytest.raises(redis.ResponseError, match="SCRIPT FLUSH only support SYNC|ASYNC option"):
        r.execute_command("SCRIPT", "FLUSH", "FOO")
    with pytest.raises(redis.ResponseError, match="NOTBUSY"):
        r.execute_command("SCRIPT", "KILL")


def test_numkeys_errors(r):
    with pytest.raises(redis.ResponseError, match="can't be negative"):
        r.eval("return 1", -1)
    with pytest.raises(redis.ResponseError, match="can't be greater than number of args"):
        r.eval("return 1", 3, "a")
    with pytest.raises(redis.ResponseError, match="not an integer"):
        r.execute_command("EVAL", "return 1", "abc")


def test_error_messages(r):
    sha = lambda s: __import__("hashlib").sha1(s.encode()).hexdigest()
    s = "return redis.call('nosuch')"
    with pytest.raises(redis.ResponseError) as e:
        r.eval(s, 0)
    assert str(e.value) == "Unknown Redis command called from script script: %s, on @user_script:1." % sha(s)
    s = "error('hi')"
    with pytest.raises(redis.ResponseError) as e:
        r.eval(s, 0)
    assert str(e.value) == "user_script:1: hi script: %s, on @user_script:1." % sha(s)
    s = "error({err='MY x'})"
    with pytest.raises(redis.ResponseError) as e:
        r.eval(s, 0)
    assert str(e.value) == "MY x script: %s, on @user_script:1." % sha(s)
    with pytest.raises(redis.ResponseError, match=r"Error compiling script \(new function\): user_script:1:"):
        r.eval("return 1 +", 0)
    with pytest.raises(redis.ResponseError, match="Wrong number of args calling Redis command from script"):
        r.eval("return redis.call('incr','x','y')", 0)
    with pytest.raises(redis.ResponseError, match="must be strings or integers"):
        r.eval("return redis.call('get', {})", 0)
    with pytest.raises(redis.ResponseError, match="Please specify at least one argument"):
        r.eval("return redis.call()", 0)
    with pytest.raises(redis.ResponseError, match="This Redis command is not allowed from script"):
        r.eval("return redis.call('blpop','l',0)", 1, "l")
    with pytest.raises(redis.ResponseError, match="This Redis command is not allowed from script"):
        r.eval("return redis.call('multi')", 0)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments script:"):
        r.eval("return redis.sha1hex()", 0)
    with pytest.raises(redis.ResponseError, match="RESP version must be 2 or 3"):
        r.eval("return redis.setresp(4)", 0)
    with pytest.raises(redis.ResponseError) as e:
        r.eval("return redis.pcall('incr','x','y')", 0)
    assert str(e.value) == "Wrong number of args calling Redis command from script"


def test_readonly_scripts(r):
    with pytest.raises(redis.ResponseError, match="Write commands are not allowed from read-only scripts"):
        r.execute_command("EVAL_RO", "return redis.call('set',KEYS[1],'1')", 1, "x")
    assert r.get("x") is None
    r.set("x", "7")
    assert r.execute_command("EVAL_RO", "return redis.call('get',KEYS[1])", 1, "x") == b"7"
    sha = r.script_load("return redis.call('get',KEYS[1])")
    assert r.execute_command("EVALSHA_RO", sha, 1, "x") == b"7"


def test_shebang(r):
    assert r.eval("#!lua\nreturn redis.call('set', 'x', 1)", 0) == b"OK"
    with pytest.raises(redis.ResponseError, match="user_script:3: x script"):
        r.eval("#!lua\n\nerror('x')", 0)
    with pytest.raises(redis.ResponseError, match="Unexpected flag in script shebang: bad"):
        r.eval("#!lua flags=bad\nreturn 1", 0)
    with pytest.raises(redis.ResponseError, match="Unexpected engine in script shebang: #!lu"):
        r.eval("#!lu\nreturn 1", 0)
    with pytest.raises(redis.ResponseError, match="Unknown lua shebang option: name=x"):
        r.eval("#!lua name=x\nreturn 1", 0)
    with pytest.raises(redis.ResponseError, match="Invalid script shebang"):
        r.eval("#!lua", 0)
    with pytest.raises(redis.ResponseError, match="Write commands are not allowed from read-only scripts"):
        r.eval("#!lua flags=no-writes\nreturn redis.call('set','x',1)", 0)
    with pytest.raises(redis.ResponseError, match=r"Can not execute a script with write flag using \*_ro command"):
        r.execute_command("EVAL_RO", "#!lua\nreturn 1", 0)
    assert r.execute_command("EVAL_RO", "#!lua flags=no-writes\nreturn 1", 0) == 1


def test_library_api(r):
    assert r.eval("return redis.sha1hex('')", 0) == b"da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert r.eval("return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}", 0) == [b"7.0.15", 458767]
    assert r.eval("redis.set_repl(redis.REPL_ALL); return redis.replicate_commands()", 0) == 1
    assert r.eval("return redis.log(redis.LOG_WARNING, 'from a script')", 0) is None
    assert r.eval("redis.breakpoint(); redis.debug('x'); return 1", 0) == 1
    assert r.eval("return cjson.encode({1,2,3})", 0) == b"[1,2,3]"
    assert r.eval("return cjson.decode('{\"a\":[1,2]}')['a'][2]", 0) == 2
    assert r.eval("return bit.band(0xff, 0x0f)", 0) == 15
    assert r.eval("return bit.tohex(65535)", 0) == b"0000ffff"
    assert r.eval("return struct.pack('>I2', 258)", 0) == b"\x01\x02"
    assert r.eval("return {struct.unpack('<hH', struct.pack('<hH', -2, 65535))}", 0) == [-2, 65535, 5]
    assert r.eval("return {struct.unpack('i0b', 'ab')}", 0) == [0, 97, 2]  # a signed integer of no byte
    assert r.eval("return cmsgpack.pack({1, 'a', true})", 0) == b"\x93\x01\xa1a\xc3"
    assert r.eval("local t = cmsgpack.unpack(cmsgpack.pack({x=5})); return t.x", 0) == 5
    assert r.eval("return math.random(1, 1)", 0) == 1


# ---- the sandbox: every known escape is an error, never a crash ----

ESCAPES = [
    "return os.execute('true')",
    "return io.open('/etc/passwd')",
    "return loadfile('/etc/passwd')",
    "return dofile('/etc/passwd')",
    "return package.loadlib('/usr/lib/x86_64-linux-gnu/liblua5.1.so.0', 'luaopen_os')",
    "return require('os')",
    "return setfenv(1, {})",
    "return getfenv(1)",
    "return debug.getinfo(1)",
    "return newproxy(true)",
    "x = 1",
    "rawset(_G, 'x', 1)",
    "setmetatable(_G, nil)",
    "redis = nil",
    "string.rep = nil",
    "cjson.encode = nil",
    "_G.redis = 1",
    "return loadstring(string.dump(function() return 1 end))()",
    "local function f(n) return f(n + 1) + 1 end return f(1)",
    "return cjson.decode(string.rep('[', 100000))",
    "return struct.pack('c999999999', 'x')",
    "return struct.unpack('i200', 'x')",
    "return cmsgpack.unpack('\\220\\255\\255')",
    "return cmsgpack.unpack('\\147\\1')",
]


@pytest.mark.parametrize("script", ESCAPES)
def test_sandbox_escape_errors(r, script):
    with pytest.raises(redis.ResponseError):
        r.eval(script, 0)
    assert r.ping()
    assert r.eval("return type(redis) .. type(string.rep) .. type(cjson.encode)", 0) == b"tablefunctionfunction"


def test_globals_stay_private(r):
    with pytest.raises(redis.ResponseError, match="nonexistent global variable 'a'"):
        r.eval("return a", 0)
    with pytest.raises(redis.ResponseError, match="Attempt to modify a readonly table"):
        r.eval("a = 1", 0)
    # pairs over the globals works and shows the libraries
    names = r.eval("local t = {} for k in pairs(_G) do t[#t+1] = k end table.sort(t) return t", 0)
    for lib in (b"redis", b"cjson", b"bit", b"struct", b"cmsgpack", b"string", b"KEYS"):
        assert lib in names
    for gone in (b"os", b"io", b"package", b"debug", b"loadfile", b"dofile", b"print"):
        assert gone not in names


# ---- transactions ----

def test_script_inside_multi_and_watch(r):
    r.set("w", "1")
    p = r.pipeline(transaction=True)
    p.eval("return redis.call('incr', KEYS[1])", 1, "w")
    p.get("w")
    assert p.execute() == [2, b"2"]
    c2 = r.connection_pool.get_connection("x")
    try:
        c2.send_command("WATCH", "w")
        assert c2.read_response() == b"OK"
        r.eval("return redis.call('set', KEYS[1], 'changed')", 1, "w")
        c2.send_command("MULTI")
        c2.read_response()
        c2.send_command("GET", "w")
        c2.read_response()
        c2.send_command("EXEC")
        assert c2.read_response() is None
    finally:
        r.connection_pool.release(c2)


def test_select_inside_script_stays_inside(r):
    assert r.eval("redis.call('select', 1); redis.call('set', 'k', 'db1'); return redis.call('get', 'k')", 0) == b"db1"
    assert r.get("k") is None
    r.execute_command("SELECT", 1)
    assert r.get("k") == b"db1"
    r.execute_command("SELECT", 0)


def test_undeclared_keys_on_other_shards(r):
    ks = keys_on_distinct_shards("u", 4)
    for i, k in enumerate(ks):
        r.set(k, i)
    script = "local out = {} for _, k in ipairs(ARGV) do out[#out+1] = redis.call('get', k) end return out"
    assert r.eval(script, 0, *ks) == [b"0", b"1", b"2", b"3"]
    # a write to a declared key, then a read of keys elsewhere
    script = ("redis.call('set', KEYS[1], 'w') local out = {} "
              "for _, k in ipairs(ARGV) do out[#out+1] = redis.call('get', k) end return out")
    assert r.eval(script, 1, ks[0], *ks[1:]) == [b"1", b"2", b"3"]
    assert r.get(ks[0]) == b"w"
    assert r.eval("return redis.call('dbsize')", 0) == 4


def test_script_in_multi_reaches_undeclared_keys(r):
    ks = keys_on_distinct_shards("mx", 4)
    script = ("-- in multi\nlocal out = {} for _, k in ipairs(ARGV) do "
              "out[#out+1] = redis.call('incr', k) end return out")
    p = r.pipeline(transaction=True)
    p.set(ks[0], 10)
    p.eval(script, 1, ks[1], *ks)
    p.get(ks[0])
    assert p.execute() == [True, [11, 1, 1, 1], b"11"]


def test_scripts_on_any_shard_reach_the_slow_log(r):
    ks = keys_on_distinct_shards("sl", 4)
    r.config_set("slowlog-log-slower-than", 0)
    try:
        r.slowlog_reset()
        for k in ks:
            r.eval("return redis.call('incr', KEYS[1])", 1, k)
        got = [e["command"] for e in r.slowlog_get(128)]
        assert sorted(c for c in got if c.lower().startswith(b"eval ")) == sorted(
            b"EVAL return redis.call('incr', KEYS[1]) 1 " + k.encode() for k in ks)
    finally:
        r.config_set("slowlog-log-slower-than", 10000)


def test_pipeline_order_kept_when_a_script_starts_again(r):
    """A script's first run touches an undeclared key on another shard (it
    starts again holding every shard); the commands pipelined after it still
    see its effects and not the other way round. Fresh scripts (a new body
    each), keys on every shard, so the script runs on another shard than the
    connection's for some of them at --threads 4."""
    ks, us = keys_on_distinct_shards("po", 4), keys_on_distinct_shards("pu", 4)
    p = r.pipeline(transaction=False)
    for i in range(16):
        k = ks[i % 4]
        u = [x for x in us if shard_of(x) != shard_of(k)][i % 3]
        body = "-- %d\nredis.call('set', KEYS[1], 'a') redis.call('set', ARGV[1], 'script') return 1" % i
        p.eval(body, 1, k, u)
        p.set(u, "after")
        p.get(u)
        p.get(k)
    out = p.execute()
    for i in range(16):
        assert out[4 * i:4 * i + 4] == [1, True, b"after", b"a"], i


def test_pipelined_scripts_over_shards_keep_their_order(r):
    """A pipeline of scripts whose keys are on two shards (consecutive ones
    over different pairs at --threads 4): each appends its number to both
    of its lists, so every list shows the order they ran in. Every tenth
    also reaches an undeclared key on a third shard (it starts again holding
    every shard), and plain commands sit between them; each sees exactly
    what was sent before it."""
    ks = keys_on_distinct_shards("chain", 4)
    extra = keys_on_distinct_shards("chainx", 4)
    r.delete(*ks, *extra)
    body = ("redis.call('rpush', KEYS[1], ARGV[1]) redis.call('rpush', KEYS[2], ARGV[1]) "
            "if ARGV[2] ~= '' then redis.call('incr', ARGV[2]) end return redis.call('llen', KEYS[1])")
    lists = {k: [] for k in ks}
    counts = {x: 0 for x in extra}
    p = r.pipeline(transaction=False)
    expect = []
    for i in range(80):
        a, b = ks[i % 4], ks[(3 * i + 1) % 4]
        undeclared = extra[i % 4] if i % 10 == 9 else ""
        p.eval(body, 2, a, b, i, undeclared)
        lists[a].append(b"%d" % i)
        lists[b].append(b"%d" % i)
        if undeclared:
            counts[undeclared] += 1
        expect.append(len(lists[a]))
        if i % 7 == 6:
            p.lrange(b, 0, -1)
            expect.append(list(lists[b]))
            p.get(extra[i % 4])
            expect.append(b"%d" % counts[extra[i % 4]] if counts[extra[i % 4]] else None)
    assert p.execute() == expect
    for k in ks:
        assert r.lrange(k, 0, -1) == lists[k]


def test_script_over_shards_is_atomic(server, r):
    """Writers move units between keys on four shards with a script that
    declares none of them; readers sum them in a script. The sum never
    changes (bounded: 300 scripts per writer, 10 s)."""
    ks = keys_on_distinct_shards("acct", 4)
    for k in ks:
        r.set(k, 100)
    move = ("local a = tonumber(redis.call('get', ARGV[1])) redis.call('set', ARGV[1], a - 1) "
            "local b = tonumber(redis.call('get', ARGV[2])) redis.call('set', ARGV[2], b + 1) return 1")
    total = "local s = 0 for _, k in ipairs(ARGV) do s = s + tonumber(redis.call('get', k)) end return s"
    bad = []
    stop = time.time() + 10

    def writer(i):
        c = server.new_client()
        for n in range(300):
            if time.time() > stop:
                break
            c.eval(move, 0, ks[(i + n) % 4], ks[(i + n + 1) % 4])

    def reader():
        c = server.new_client()
        for _ in range(300):
            if time.time() > stop:
                break
            s = c.eval(total, 0, *ks)
            if s != 400:
                bad.append(s)
            got = c.mget(ks)
            if sum(int(x) for x in got) != 400:
                bad.append(got)

    ts = [threading.Thread(target=writer, args=(i,)) for i in range(3)] + [threading.Thread(target=reader)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not bad
    assert sum(int(x) for x in r.mget(ks)) == 400


def test_scripts_from_many_connections_over_shard_pairs(server, r):
    """Sixteen connections (spread over the shards) pipeline scripts that
    move units between declared keys of two shards and log their own
    sequence number in a list of their own; some scripts touch only one
    shard's keys. Two more connections sum every key in a script meanwhile.
    The sum never changes, each log holds its connection's numbers in the
    order sent, and each connection keeps its id, name and database
    (shoal moves such connections to another shard: net/conn.h) (bounded:
    16 x 150 scripts, 30 s)."""
    ks = keys_on_distinct_shards("pair", 4)
    for k in ks:
        r.set(k, 1000)
    logs = ["plog:%d" % i for i in range(16)]
    r.delete(*logs)
    move = ("redis.call('decrby', KEYS[1], 1) redis.call('incrby', KEYS[2], 1) "
            "redis.call('rpush', KEYS[3], ARGV[1]) return redis.call('get', KEYS[2])")
    total = "local s = 0 for _, k in ipairs(KEYS) do s = s + tonumber(redis.call('get', k)) end return s"
    move_sha = r.script_load(move)
    bad = []
    stop = time.time() + 30
    sent, done_ids = {}, {}
    seen = threading.Event()  # the writers' connections stay open until CLIENT LIST was read

    def writer(i):
        c = server.new_client()
        c.client_setname("pw%d" % i)
        cid = c.client_id()
        seq = 0
        for rnd in range(15):
            if time.time() > stop:
                break
            p = c.pipeline(transaction=False)
            for j in range(10):
                a, b = ks[(i + j) % 4], ks[(i + j + 1 + rnd % 2) % 4]
                if j % 4 == 3:
                    b = a  # one shard's keys only (with the log's)
                p.evalsha(move_sha, 3, a, b, logs[i], seq)
                seq += 1
            for v in p.execute():
                if int(v) <= 0:
                    bad.append(("value", v))
        name = c.client_getname()
        if c.client_id() != cid or (name.decode() if isinstance(name, bytes) else name) != "pw%d" % i:
            bad.append(("identity", i))
        c.execute_command("SELECT", 1)
        c.set("pdb%d" % i, i)
        if c.get("pdb%d" % i) != b"%d" % i or not c.execute_command("SELECT", 0) or c.exists("pdb%d" % i):
            bad.append(("select", i))
        sent[i] = seq
        done_ids[i] = cid
        seen.wait(30)

    def reader():
        c = server.new_client()
        while time.time() < stop and len(sent) < 16:
            s = c.eval(total, 4, *ks)
            if s != 4000:
                bad.append(("sum", s))

    ts = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
    ts += [threading.Thread(target=reader) for _ in range(2)]
    for t in ts:
        t.start()
    deadline = time.time() + 60
    while len(done_ids) < 16 and time.time() < deadline:
        time.sleep(0.05)
    listed = {c["name"]: int(c["id"]) for c in r.client_list() if c["name"].startswith("pw")}
    seen.set()
    for t in ts:
        t.join(60)
    assert listed == {"pw%d" % i: cid for i, cid in done_ids.items()}
    assert not bad
    assert sum(int(x) for x in r.mget(ks)) == 4000
    assert len(sent) == 16
    for i, n in sent.items():
        assert r.lrange(logs[i], 0, -1) == [b"%d" % k for k in range(n)]


def test_redis_py_lock(server, r):
    """redis-py's Lock (EVALSHA scripts) under concurrent clients guards a
    read-modify-write of a counter on another shard: no update is lost."""
    lock_key, counter = keys_on_distinct_shards("lk", 2)
    r.set(counter, 0)
    rounds = 40

    def worker():
        c = server.new_client()
        for _ in range(rounds):
            with c.lock(lock_key, timeout=30, blocking_timeout=30):
                v = int(c.get(counter))
                c.set(counter, v + 1)

    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert int(r.get(counter)) == 4 * rounds


def test_token_bucket_no_double_grant(server, r):
    """A limiter script whose bucket and grant log are on different shards:
    concurrent clients never get more grants than the bucket holds."""
    bucket, log = keys_on_distinct_shards("tb", 2)
    r.set(bucket, 25)
    take = ("local n = tonumber(redis.call('get', KEYS[1])) "
            "if n > 0 then redis.call('set', KEYS[1], n - 1) redis.call('rpush', KEYS[2], ARGV[1]) return 1 end return 0")
    granted = []

    def client(i):
        c = server.new_client()
        got = 0
        for _ in range(20):
            got += c.eval(take, 2, bucket, log, i)
        granted.append(got)

    ts = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert sum(granted) == 25
    assert r.llen(log) == 25
    assert int(r.get(bucket)) == 0


# ---- busy scripts ----

def wait_busy(client, key, rounds=400):
    """Polls a command on the script's key until it answers BUSY (bounded)."""
    for _ in range(rounds):
        try:
            client.get(key)
        except redis.ResponseError as e:
            if str(e).startswith("BUSY"):
                return str(e)
            raise
        time.sleep(0.01)
    raise AssertionError("the script never became busy")


def test_busy_script_killed(server, r):
    r.config_set("lua-time-limit", 50)
    assert r.config_get("busy-reply-threshold") == {"busy-reply-threshold": "50"}
    raw = Raw(server)
    try:
        raw.s.sendall(enc("EVAL", "local i = 0 while true do i = i + 1 end", 1, "busy:k"))
        c = server.new_client()
        msg = wait_busy(c, "busy:k")
        assert msg == "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
        with pytest.raises(redis.ResponseError, match="BUSY"):
            c.execute_command("FUNCTION", "KILL")
        assert c.execute_command("SCRIPT", "KILL") == b"OK"
        reply = raw._reply()
        assert reply.startswith(b"-ERR Script killed by user with SCRIPT KILL...")
        assert c.set("busy:k", "v") is True
        with pytest.raises(redis.ResponseError, match="NOTBUSY"):
            c.execute_command("SCRIPT", "KILL")
    finally:
        raw.close()
        r.config_set("lua-time-limit", 5000)


def test_busy_function_killed(server, r):
    r.config_set("busy-reply-threshold", 50)
    r.function_load("#!lua name=busylib\nredis.register_function('spin', function() local i = 0 while true do i = i + 1 end end)",
                    replace=True)
    raw = Raw(server)
    try:
        raw.s.sendall(enc("FCALL", "spin", 1, "busy:f"))
        c = server.new_client()
        msg = wait_busy(c, "busy:f")
        assert msg == "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
        with pytest.raises(redis.ResponseError, match="BUSY"):
            c.execute_command("SCRIPT", "KILL")
        assert c.execute_command("FUNCTION", "KILL") == b"OK"
        assert b"killed by user" in raw._reply()
    finally:
        raw.close()
        r.config_set("busy-reply-threshold", 5000)
        r.function_flush()


def test_reply_made_before_a_busy_script_is_delivered(server, r):
    """A client the same pipeline served just before a script went busy
    gets its reply while the script runs (Redis writes pending replies from
    its busy loop); the script is then killed."""
    r.config_set("lua-time-limit", 50)
    waiter, writer = Raw(server), Raw(server)
    c = server.new_client()
    try:
        waiter.s.sendall(enc("BLPOP", "busy:q", 0))
        for _ in range(500):
            if int(c.info("clients")["blocked_clients"]) == 1:
                break
            time.sleep(0.01)
        writer.s.sendall(enc("LPUSH", "busy:q", "v") + enc("EVAL", "while true do end", 0))
        assert waiter._reply() == b"*2\r\n$6\r\nbusy:q\r\n$1\r\nv\r\n"
        for _ in range(400):  # PING (keyless) answers BUSY on every shard
            try:
                c.ping()
            except redis.ResponseError as e:
                assert str(e).startswith("BUSY")
                break
            time.sleep(0.01)
        else:
            raise AssertionError("the script never became busy")
        assert c.execute_command("SCRIPT", "KILL") == b"OK"
        assert writer._reply() == b":1\r\n"  # the script's own connection: after it
        assert b"killed by user" in writer._reply()
    finally:
        try:
            c.execute_command("SCRIPT", "KILL")  # when an assertion failed above
        except redis.ResponseError:
            pass
        waiter.close()
        writer.close()
        r.config_set("lua-time-limit", 5000)


def test_multi_during_a_busy_script_is_doomed(server, r):
    """Inside MULTI every command answers BUSY while a script is busy (on any
    shard), and EXEC then aborts; an EXEC refused while busy ends the block."""
    r.config_set("lua-time-limit", 50)
    raw = Raw(server)
    c, m = server.new_client(), Raw(server)
    try:
        r.set("busy:xx", 1)
        raw.s.sendall(enc("EVAL", "while true do end", 0))
        for _ in range(400):
            try:
                c.ping()
            except redis.ResponseError:
                break
            time.sleep(0.01)
        assert m.cmd("MULTI") == b"+OK\r\n"
        assert m.cmd("INCR", "busy:xx").startswith(b"-BUSY")
        assert m.cmd("EXEC").startswith(b"-EXECABORT Transaction discarded because of: BUSY")
        assert c.execute_command("SCRIPT", "KILL") == b"OK"
        assert b"killed by user" in raw._reply()
        assert m.cmd("MULTI") == b"+OK\r\n"  # (not nested: the abort ended the block)
        assert m.cmd("INCR", "busy:xx") == b"+QUEUED\r\n"
        assert m.cmd("EXEC") == b"*1\r\n:2\r\n"
    finally:
        try:
            c.execute_command("SCRIPT", "KILL")
        except redis.ResponseError:
            pass
        raw.close()
        m.close()
        r.config_set("lua-time-limit", 5000)


def test_command_getkeys_of_a_script_without_keys(raw):
    assert raw.cmd("COMMAND", "GETKEYS", "EVAL", "return 1", 0) == b"*0\r\n"
    assert raw.cmd("COMMAND", "GETKEYS", "EVAL", "return 1", 1, "a") == b"*1\r\n$1\r\na\r\n"


def test_unkillable_script_and_shutdown_nosave(spawn):
    srv = spawn("--busy-reply-threshold", "50")
    c = srv.new_client()
    raw = Raw(srv)
    raw.s.sendall(enc("EVAL", "redis.call('set', KEYS[1], 'w') while true do end", 1, "busy:u"))
    wait_busy(c, "busy:u")
    with pytest.raises(redis.ResponseError, match="UNKILLABLE"):
        c.execute_command("SCRIPT", "KILL")
    with pytest.raises(redis.ResponseError, match="BUSY"):
        c.execute_command("SHUTDOWN")
    try:
        c.execute_command("SHUTDOWN", "NOSAVE")
    except redis.ConnectionError:
        pass
    for _ in range(500):
        if not srv.alive():
            break
        time.sleep(0.02)
    assert not srv.alive()
    raw.close()


def test_numbers_past_long_long_reply_as_redis(r):
    """A Lua number outside long long's range (or NaN) replies LLONG_MIN, as
    redis-server on x86 does; within it, it is truncated."""
    low = -9223372036854775808
    assert r.eval("return {1e300, -1e300, 2^63, -2^63, 3.9, -3.9, 0/0}", 0) == [low, low, low, low, 3, -3, low]
    assert r.eval("return 6.6e127", 0) == low
    assert r.eval("return struct.unpack('>i8', struct.pack('>i8', 0/0))", 0) == low
