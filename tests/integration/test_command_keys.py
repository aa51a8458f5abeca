"""Key specs and per-key flags: COMMAND GETKEYSANDFLAGS, GETKEYS, the key
specs of COMMAND INFO, and the ACL key permissions that follow from them,
for commands of every family, checked against Redis 7.0 (the same tests run
on redis-server)."""
import shlex

import pytest
import redis


@pytest.fixture
def c(server):
    """Exact replies (no redis-py conversion of COMMAND), decoded."""
    cl = server.new_client(decode_responses=True)
    cl.response_callbacks.clear()
    yield cl
    cl.close()


def keys_and_flags(c, line):
    """'k1:RW,access k2:OW,update' for a command line, or 'ERR <text>'."""
    try:
        reply = c.execute_command("COMMAND", "GETKEYSANDFLAGS", *shlex.split(line))
    except redis.ResponseError as e:
        return "ERR " + str(e)
    return " ".join("%s:%s" % (k, ",".join(f)) for k, f in reply)


def pairs(flat):
    return dict(zip(flat[::2], flat[1::2]))


# ---- the four lines of Redis's unit/introspection-2 ----

def test_suite_lines(c):
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "SET", "k1", "v1") == [["k1", ["OW", "update"]]]
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "MSET", "k1", "v1", "k2", "v2") == \
        [["k1", ["OW", "update"]], ["k2", ["OW", "update"]]]
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "LMOVE", "k1", "k2", "left", "right") == \
        [["k1", ["RW", "access", "delete"]], ["k2", ["RW", "insert"]]]
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "SORT", "k1", "store", "k2") == \
        [["k1", ["RO", "access"]], ["k2", ["OW", "update"]]]


# ---- every family: command line -> keys with their flags ----

SAMPLES = [
    ('get k1', 'k1:RO,access'),
    ('set k1 v1 get', 'k1:RW,access,update'),
    ('set k1 v1 nx ex 10 get', 'k1:RW,access,update'),
    ('set k1 v1 ex 10', 'k1:OW,update'),
    ('setnx k1 v1', 'k1:OW,insert'),
    ('getex k1 persist', 'k1:RW,access,update'),
    ('getdel k1', 'k1:RW,access,delete'),
    ('getset k1 v', 'k1:RW,access,update'),
    ('append k1 v', 'k1:RW,insert'),
    ('incr k1', 'k1:RW,access,update'),
    ('strlen k1', 'k1:RO'),
    ('getrange k1 0 1', 'k1:RO,access'),
    ('msetnx k1 v1 k2 v2', 'k1:OW,insert k2:OW,insert'),
    ('mget k1 k2', 'k1:RO,access k2:RO,access'),
    ('lcs k1 k2', 'k1:RO,access k2:RO,access'),
    ('lpush k1 a', 'k1:RW,insert'),
    ('lpushx k1 a', 'k1:RW,insert'),
    ('lpop k1', 'k1:RW,access,delete'),
    ('linsert k1 before a b', 'k1:RW,insert'),
    ('lrem k1 0 a', 'k1:RW,delete'),
    ('lset k1 0 a', 'k1:RW,update'),
    ('ltrim k1 0 1', 'k1:RW,delete'),
    ('llen k1', 'k1:RO'),
    ('lrange k1 0 -1', 'k1:RO,access'),
    ('rpoplpush k1 k2', 'k1:RW,access,delete k2:RW,insert'),
    ('blmove k1 k2 left right 0', 'k1:RW,access,delete k2:RW,insert'),
    ('lmpop 2 k1 k2 left count 3', 'k1:RW,access,delete k2:RW,access,delete'),
    ('blmpop 0 2 k1 k2 right', 'k1:RW,access,delete k2:RW,access,delete'),
    ('blpop k1 k2 0', 'k1:RW,access,delete k2:RW,access,delete'),
    ('hset k1 f v', 'k1:RW,update'),
    ('hsetnx k1 f v', 'k1:RW,insert'),
    ('hdel k1 f', 'k1:RW,delete'),
    ('hincrby k1 f 1', 'k1:RW,access,update'),
    ('hget k1 f', 'k1:RO,access'),
    ('hexists k1 f', 'k1:RO'),
    ('hlen k1', 'k1:RO'),
    ('hgetall k1', 'k1:RO,access'),
    ('hscan k1 0', 'k1:RO,access'),
    ('sadd k1 a', 'k1:RW,insert'),
    ('srem k1 a', 'k1:RW,delete'),
    ('spop k1', 'k1:RW,access,delete'),
    ('smove k1 k2 m', 'k1:RW,access,delete k2:RW,insert'),
    ('sismember k1 a', 'k1:RO'),
    ('scard k1', 'k1:RO'),
    ('smembers k1', 'k1:RO,access'),
    ('sinter k1 k2', 'k1:RO,access k2:RO,access'),
    ('sinterstore d k1 k2', 'd:RW,update k1:RO,access k2:RO,access'),
    ('sunionstore d k1', 'd:OW,update k1:RO,access'),
    ('sdiffstore d k1 k2', 'd:OW,update k1:RO,access k2:RO,access'),
    ('sintercard 2 k1 k2 limit 1', 'k1:RO,access k2:RO,access'),
    ('zadd k1 1 a', 'k1:RW,update'),
    ('zincrby k1 1 a', 'k1:RW,access,update'),
    ('zrem k1 a', 'k1:RW,delete'),
    ('zpopmin k1', 'k1:RW,access,delete'),
    ('zremrangebyscore k1 0 1', 'k1:RW,delete'),
    ('zcard k1', 'k1:RO'),
    ('zscore k1 a', 'k1:RO,access'),
    ('zrange k1 0 -1', 'k1:RO,access'),
    ('zrangestore d k1 0 -1', 'd:OW,update k1:RO,access'),
    ('zunionstore d 2 k1 k2 weights 1 2', 'd:OW,update k1:RO,access k2:RO,access'),
    ('zinterstore d 1 k1', 'd:OW,update k1:RO,access'),
    ('zdiffstore d 2 k1 k2', 'd:OW,update k1:RO,access k2:RO,access'),
    ('zunion 2 k1 k2', 'k1:RO,access k2:RO,access'),
    ('zintercard 2 k1 k2', 'k1:RO,access k2:RO,access'),
    ('zmpop 2 k1 k2 min', 'k1:RW,access,delete k2:RW,access,delete'),
    ('bzmpop 0 1 k1 max', 'k1:RW,access,delete'),
    ('bzpopmin k1 k2 0', 'k1:RW,access,delete k2:RW,access,delete'),
    ('xadd k1 * f v', 'k1:RW,update'),
    ('xdel k1 0-1', 'k1:RW,delete'),
    ('xtrim k1 maxlen 0', 'k1:RW,delete'),
    ('xlen k1', 'k1:RO'),
    ('xrange k1 - +', 'k1:RO,access'),
    ('xread count 1 streams k1 k2 0 0', 'k1:RO,access k2:RO,access'),
    ('xreadgroup group g c streams k1 >', 'k1:RO,access'),
    ('xack k1 g 0-1', 'k1:RW,update'),
    ('xclaim k1 g c 0 0-1', 'k1:RW,update'),
    ('xautoclaim k1 g c 0 0', 'k1:RW,delete'),
    ('xsetid k1 0-1', 'k1:RW,update'),
    ('xgroup create k1 g $', 'k1:RW,insert'),
    ('xgroup destroy k1 g', 'k1:RW,delete'),
    ('xgroup createconsumer k1 g c', 'k1:RW,insert'),
    ('xinfo stream k1', 'k1:RO,access'),
    ('xpending k1 g', 'k1:RO,access'),
    ('geoadd k1 1 2 m', 'k1:RW,update'),
    ('geodist k1 a b', 'k1:RO,access'),
    ('geopos k1 a', 'k1:RO,access'),
    ('georadius k1 1 2 3 km', 'k1:RO,access'),
    ('georadius k1 1 2 3 km store k2', 'k1:RO,access k2:OW,update'),
    ('georadius k1 1 2 3 km storedist k2', 'k1:RO,access k2:OW,update'),
    ('georadius_ro k1 1 2 3 km', 'k1:RO,access'),
    ('georadiusbymember k1 m 3 km store k2', 'k1:RO,access k2:OW,update'),
    ('geosearch k1 frommember m byradius 1 km', 'k1:RO,access'),
    ('geosearchstore d k1 frommember m byradius 1 km storedist', 'd:OW,update k1:RO,access'),
    ('pfadd k1 a', 'k1:RW,insert'),
    ('pfcount k1 k2', 'k1:RW,access k2:RW,access'),
    ('pfmerge d k1 k2', 'd:RW,access,insert k1:RO,access k2:RO,access'),
    ('pfmerge d', 'ERR Invalid arguments specified for command'),
    ('setbit k1 0 1', 'k1:RW,access,update'),
    ('getbit k1 0', 'k1:RO,access'),
    ('bitcount k1', 'k1:RO,access'),
    ('bitpos k1 1', 'k1:RO,access'),
    ('bitop and d k1 k2', 'd:OW,update k1:RO,access k2:RO,access'),
    ('bitfield k1 get u8 0', 'k1:RO,access'),
    ('bitfield k1 overflow wrap get u8 0', 'k1:RO,access'),
    ('bitfield k1 set u8 0 1', 'k1:RW,access,update'),
    ('bitfield k1 get u8 0 incrby u8 0 1', 'k1:RW,access,update'),
    ('bitfield_ro k1 get u8 0', 'k1:RO,access'),
    ('eval "return 1" 2 k1 k2 a1', 'k1:RW,access,update k2:RW,access,update'),
    ('eval "return 1" 0', ''),
    ('eval "return 1" 3 k1 k2', ''),
    ('eval_ro "return 1" 1 k1', 'k1:RO,access'),
    ('evalsha 0123456789012345678901234567890123456789 1 k1', 'k1:RW,access,update'),
    ('fcall f 2 k1 k2 a', 'k1:RW,access,update k2:RW,access,update'),
    ('fcall_ro f 1 k1', 'k1:RO,access'),
    ('sort k1', 'k1:RO,access'),
    ('sort k1 store k2', 'k1:RO,access k2:OW,update'),
    ('sort k1 by w* get # limit 0 10 store k2', 'k1:RO,access k2:OW,update'),
    ('sort k1 store k2 store k3', 'k1:RO,access k3:OW,update'),
    ('sort_ro k1 by w* get h*->f', 'k1:RO,access'),
    ('copy k1 k2 db 1 replace', 'k1:RO,access k2:OW,update'),
    ('rename k1 k2', 'k1:RW,access,delete k2:OW,update'),
    ('renamenx k1 k2', 'k1:RW,access,delete k2:OW,insert'),
    ('move k1 1', 'k1:RW,access,update'),
    ('del k1 k2', 'k1:RM,delete k2:RM,delete'),
    ('unlink k1', 'k1:RM,delete'),
    ('exists k1 k2', 'k1:RO k2:RO'),
    ('touch k1', 'k1:RO'),
    ('type k1', 'k1:RO'),
    ('dump k1', 'k1:RO,access'),
    ('restore k1 0 payload replace', 'k1:OW,update'),
    ('expire k1 10', 'k1:RW,update'),
    ('pexpireat k1 10', 'k1:RW,update'),
    ('persist k1', 'k1:RW,update'),
    ('ttl k1', 'k1:RO,access'),
    ('expiretime k1', 'k1:RO,access'),
    ('object encoding k1', 'k1:RO'),
    ('object freq k1', 'k1:RO'),
    ('memory usage k1 samples 5', 'k1:RO'),
    ('watch k1 k2', 'k1:RO k2:RO'),
    ('spublish ch msg', 'ERR The command has no key arguments'),
    # flags that depend on the arguments
    ('set k1 v1 GET', 'k1:RW,access,update'),
    ('set k1 v1 xx keepttl', 'k1:OW,update'),
    ('bitfield k1 overflow wrap get u8 0 get i4 3', 'k1:RO,access'),
    ('bitfield k1 get u8', 'k1:RW,access,update'),
    ('bitfield k1', 'k1:RO,access'),
    ('sort k1 get store store k2', 'k1:RO,access k2:OW,update'),
    ('sort k1 store', 'k1:RO,access'),
    ('georadius k1 1 2 3 km store k2 storedist k3', 'k1:RO,access k2:OW,update k3:OW,update'),
    ('georadius k1 1 2 3 km store', 'k1:RO,access'),  # STORE as the last word is not searched
    # counted keys: a count past the arguments finds none
    ('zunionstore d 3 k1 k2', 'ERR Invalid arguments specified for command'),
    ('lmpop 0 k1 left', 'ERR Invalid arguments specified for command'),
    ('sintercard 3 k1 k2', 'ERR Invalid arguments specified for command'),
    ('fcall f 0', ''),
    ('eval "return 1" -1 k1', ''),
    ('xread streams k1 k2 0', 'k1:RO,access'),  # the first half of what follows STREAMS
    ('xread count 2 k1 0', 'ERR Invalid arguments specified for command'),
    # MIGRATE: the key argument, or the KEYS list (its key finder's flags)
    ('migrate h 1 k1 0 5', 'k1:RW,access,delete'),
    ('migrate h 1 "" 0 5 copy keys k1 k2', 'k1:RW,access,delete k2:RW,access,delete'),
    # pub/sub channels are not keys
    ('ssubscribe ch1 ch2', 'ERR The command has no key arguments'),
    ('sunsubscribe ch1', 'ERR The command has no key arguments'),
]


@pytest.mark.parametrize("line,expected", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_getkeysandflags(c, line, expected):
    assert keys_and_flags(c, line) == expected


def test_getkeys_follows_the_specs(c):
    assert c.execute_command("COMMAND", "GETKEYS", "zunionstore", "d", "2", "k1", "k2") == ["d", "k1", "k2"]
    assert c.execute_command("COMMAND", "GETKEYS", "georadius", "k1", "1", "2", "3", "km", "storedist", "k2",
                             "store", "k3") == ["k1", "k3", "k2"]
    assert c.execute_command("COMMAND", "GETKEYS", "eval", "return 1", "0") == []
    with pytest.raises(redis.ResponseError, match="Invalid arguments specified for command"):
        c.execute_command("COMMAND", "GETKEYS", "pfmerge", "d")
    with pytest.raises(redis.ResponseError, match="The command has no key arguments"):
        c.execute_command("COMMAND", "GETKEYS", "spublish", "ch", "msg")


# ---- COMMAND INFO's key specs ----

def specs(c, name):
    (entry,) = c.execute_command("COMMAND", "INFO", name)
    return [pairs(s) for s in entry[8]]


def search(part):
    p = pairs(part)
    return p["type"], pairs(p["spec"])


def test_info_key_specs_shapes(c):
    lmove = specs(c, "lmove")
    assert [s["flags"] for s in lmove] == [["RW", "access", "delete"], ["RW", "insert"]]
    assert [search(s["begin_search"]) for s in lmove] == [("index", {"index": 1}), ("index", {"index": 2})]
    assert search(lmove[0]["find_keys"]) == ("range", {"lastkey": 0, "keystep": 1, "limit": 0})
    mset = specs(c, "mset")
    assert search(mset[0]["find_keys"]) == ("range", {"lastkey": -1, "keystep": 2, "limit": 0})
    geo = specs(c, "georadius")
    assert [s["flags"] for s in geo] == [["RO", "access"], ["OW", "update"], ["OW", "update"]]
    assert [search(s["begin_search"]) for s in geo[1:]] == \
        [("keyword", {"keyword": "STORE", "startfrom": 6}), ("keyword", {"keyword": "STOREDIST", "startfrom": 6})]
    zu = specs(c, "zunionstore")
    assert search(zu[1]["find_keys"]) == ("keynum", {"keynumidx": 0, "firstkey": 1, "keystep": 1})
    (xread,) = specs(c, "xread")
    assert search(xread["begin_search"]) == ("keyword", {"keyword": "STREAMS", "startfrom": 1})
    assert search(xread["find_keys"]) == ("range", {"lastkey": -1, "keystep": 1, "limit": 2})
    sort = specs(c, "sort")
    assert [s["flags"] for s in sort] == [["RO", "access"], ["RO", "access"], ["OW", "update"]]
    assert search(sort[2]["begin_search"]) == ("unknown", {}) and search(sort[2]["find_keys"]) == ("unknown", {})
    assert "STORE keyword" in sort[2]["notes"] and "notes" not in sort[0]
    (st,) = specs(c, "set")
    assert st["flags"] == ["RW", "access", "update", "variable_flags"] and "GET" in st["notes"]
    (ev,) = specs(c, "eval")
    assert ev["flags"] == ["RW", "access", "update"] and search(ev["begin_search"]) == ("index", {"index": 2})
    assert specs(c, "spublish")[0]["flags"] == ["not_key"]
    assert specs(c, "object|encoding")[0]["flags"] == ["RO"]
    assert specs(c, "ping") == []


def test_script_flags(c):
    (ev,) = c.execute_command("COMMAND", "INFO", "eval")
    assert ev[2] == ["noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"]
    (save,) = c.execute_command("COMMAND", "INFO", "save")
    assert "no_async_loading" in save[2]


ACCESS = {"RO", "RW", "OW", "RM"}


def test_every_key_spec_says_how_its_keys_are_used(c):
    """Each spec of every command has one access kind (or is not a key),
    and the keys of a plain call of every single-spec command carry its
    flags (arguments that are all 'k<n>', as many as the arity asks)."""
    entries = []

    def walk(info):
        for e in info:
            entries.append(e)
            walk(e[9])
    walk(c.execute_command("COMMAND", "INFO"))
    checked = 0
    for e in entries:
        sp = [pairs(s) for s in e[8]]
        for s in sp:
            kinds = ACCESS & set(s["flags"])
            assert len(kinds) == 1 or s["flags"] == ["not_key"], (e[0], s["flags"])
        if len(sp) != 1 or "variable_flags" in sp[0]["flags"] or "not_key" in sp[0]["flags"]:
            continue
        if search(sp[0]["begin_search"])[0] != "index" or search(sp[0]["find_keys"])[0] != "range":
            continue
        words = e[0].split("|")
        args = words + ["k%d" % i for i in range(1, abs(e[1]) - len(words) + 1)]
        got = c.execute_command("COMMAND", "GETKEYSANDFLAGS", *args)
        assert got and all(f == sp[0]["flags"] for _, f in got), (e[0], got)
        checked += 1
    assert checked > 100


# ---- ACL key permissions follow the flags ----

DRYRUN = [
    ("SET write v", "OK"),
    ("SET write v GET", "write"),
    ("SET rw v GET", "OK"),
    ("BITFIELD read GET u8 0", "OK"),
    ("BITFIELD read SET u8 0 1", "read"),
    ("GEORADIUS read 1 2 3 km STORE write", "OK"),
    ("GEORADIUS read 1 2 3 km STORE read2", "read2"),
    ("ZUNIONSTORE write 2 read1 read2", "OK"),
    ("ZUNIONSTORE read 1 read1", "read"),
    ("SINTERSTORE write read", "OK"),
    ("EVAL x 1 read", "read"),
    ("EVAL_RO x 1 read", "OK"),
    ("EVAL x 1 rw1", "OK"),
    ("FCALL_RO f 1 read", "OK"),
    ("RENAME rw1 write", "OK"),
    ("RENAME read write", "read"),
    ("LMOVE rw1 write LEFT LEFT", "OK"),
    ("PFCOUNT read", "OK"),
    ("PFMERGE write read", "write"),
    ("XREADGROUP GROUP g c STREAMS read >", "OK"),
    ("SORT read STORE write", "OK"),
    ("COPY read write", "OK"),
    ("GETEX read", "read"),
    ("HINCRBY write f 1", "write"),
    ("APPEND write x", "OK"),
    ("EXISTS write", "OK"),
    ("MEMORY USAGE write", "OK"),
    ("UNLINK write", "OK"),
    ("DEL read", "read"),
    ("LMPOP 1 write LEFT", "write"),
]


@pytest.mark.parametrize("line,denied", DRYRUN, ids=[d[0] for d in DRYRUN])
def test_acl_key_permissions(c, line, denied):
    c.execute_command("ACL", "SETUSER", "kf", "on", "+@all", "%R~read*", "%W~write*", "%RW~rw*", "resetchannels")
    try:
        got = c.execute_command("ACL", "DRYRUN", "kf", *line.split())
    finally:
        c.execute_command("ACL", "DELUSER", "kf")
    assert got == ("OK" if denied == "OK" else "This user has no permissions to access the '%s' key" % denied)
