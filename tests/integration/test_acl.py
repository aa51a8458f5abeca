"""ACL: users, rules and their read-back, the permission check of commands,
keys (read/write), selectors, ACL LOG, DRYRUN, users changed or deleted
while connected, the aclfile and `user` directives. Each test has a
private server (spawn)."""
import os

import pytest

from helpers import Server
from resp_client import RespError, raw

WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
NOPERM_KEYS = "NOPERM this user has no permissions to access one of the keys used as arguments"


@pytest.fixture
def srv(spawn):
    return spawn()


def noperm_cmd(name):
    return "NOPERM this user has no permissions to run the '%s' command" % name


def getuser(c, name):
    r = c.cmd("ACL", "GETUSER", name)
    if r is None:
        return None
    return dict(zip(r[::2], r[1::2])) if isinstance(r, list) else r


def as_user(srv, name, password="pw"):
    c = raw(srv)
    assert c.cmd("AUTH", name, password) == "OK"
    return c


def test_default_user_and_new_users(srv):
    c = raw(srv)
    assert c.cmd("ACL", "WHOAMI") == "default"
    assert c.cmd("ACL", "LIST") == ["user default on nopass ~* &* +@all"]
    assert c.cmd("ACL", "SETUSER", "newuser") == "OK"
    assert getuser(c, "newuser") == {"flags": ["off"], "passwords": [], "commands": "-@all", "keys": "",
                                     "channels": "", "selectors": []}
    assert c.cmd("ACL", "USERS") == ["default", "newuser"]
    assert c.cmd("AUTH", "newuser", "x") == WRONGPASS  # off
    assert c.cmd("ACL", "SETUSER", "newuser", "on", ">passwd1") == "OK"
    assert c.cmd("AUTH", "newuser", "passwd1") == "OK"
    assert c.cmd("ACL", "WHOAMI") == noperm_cmd("acl|whoami")
    assert c.cmd("GET", "k") == noperm_cmd("get")
    assert raw(srv).cmd("ACL", "SETUSER", "bad user") == "ERR Usernames can't contain spaces or null characters"


def test_list_and_getuser_read_back(srv):
    c = raw(srv)
    assert c.cmd("ACL", "SETUSER", "u", "reset", "on", ">abc", "~a*", "%R~b", "&ch", "+get",
                 "(+set ~x)") == "OK"
    h = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert ("user u on sanitize-payload #%s ~a* %%R~b resetchannels &ch -@all +get "
            "(~x resetchannels -@all +set)" % h) in c.cmd("ACL", "LIST")
    u = getuser(c, "u")
    assert u["flags"] == ["on", "sanitize-payload"] and u["passwords"] == [h]
    assert (u["commands"], u["keys"], u["channels"]) == ("-@all +get", "~a* %R~b", "&ch")
    assert u["selectors"] == [["commands", "-@all +set", "keys", "~x", "channels", ""]]
    cases = {
        "+@all +client|id": "+@all",
        "-@all +client|id +client": "-@all +client",
        "+@all -client|kill": "+@all -client|kill",
        "+@all -client|id -client": "+@all -client",
        "-@all +get -get": "-@all",
        "-@all +@string +get": "-@all +@string",
        "-@all +select|0 +select": "-@all +select",
        "-@all +get +@all": "+@all",
        "-@all +config -config|set +config|set": "-@all +config",
        "-@all +@hash": "-@all +@hash",
        "+@all -@list": "+@all -@list",
        "-@all +select|0": "-@all +select|0",
    }
    for rules, want in cases.items():
        assert c.cmd("ACL", "SETUSER", "v", "reset", *rules.split()) == "OK"
        assert getuser(c, "v")["commands"] == want, rules
    assert c.cmd("ACL", "SETUSER", "w", "%R~foo", "%W~foo", "%RW~bar") == "OK"
    assert getuser(c, "w")["keys"] == "~foo ~bar"
    assert getuser(c, "nobody") is None


def test_rule_errors(srv):
    c = raw(srv)
    pre = "ERR Error in ACL SETUSER modifier "
    assert c.cmd("ACL", "SETUSER", "e", "bogus") == pre + "'bogus': Syntax error"
    assert c.cmd("ACL", "SETUSER", "e", "+nosuchcmd") == pre + "'+nosuchcmd': Unknown command or category name in ACL"
    assert c.cmd("ACL", "SETUSER", "e", "+@nosuchcat") == \
        pre + "'+@nosuchcat': Unknown command or category name in ACL"
    assert c.cmd("ACL", "SETUSER", "e", "+config|get|x") == \
        pre + "'+config|get|x': Allowing first-arg of a subcommand is not supported"
    assert c.cmd("ACL", "SETUSER", "e", "+config|asdf").endswith("Unknown command or category name in ACL")
    assert c.cmd("ACL", "SETUSER", "e", "allkeys", "~foo").endswith(
        "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. "
        "Try 'resetkeys' to start with an empty list of patterns")
    assert c.cmd("ACL", "SETUSER", "e", "&*", "&foo").endswith("Try 'resetchannels' to start with an empty list of "
                                                              "channels")
    assert c.cmd("ACL", "SETUSER", "e", "<nothere").endswith(
        "The password you are trying to remove from the user does not exist")
    assert c.cmd("ACL", "SETUSER", "e", "#abc").endswith(
        "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
    assert c.cmd("ACL", "SETUSER", "e", "(", "~x") == "ERR Unmatched parenthesis in acl selector starting at '('."
    assert c.cmd("ACL", "SETUSER", "e", "(this-is-invalid)") == pre + "'(this-is-invalid)': Syntax error"
    assert c.cmd("ACL", "SETUSER", "e", "%X~a") == pre + "'%X~a': Syntax error"
    # nothing of a failed SETUSER stays
    assert getuser(c, "e") is None


def test_commands_categories_and_first_args(srv):
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "u", "on", ">pw", "~*", "+@all", "-@string", "-client|kill", "-debug")
    u = as_user(srv, "u")
    assert u.cmd("SADD", "s", "a") == 1
    assert u.cmd("SET", "k", "v") == noperm_cmd("set")
    assert u.cmd("CLIENT", "ID") > 0
    assert u.cmd("CLIENT", "KILL", "ID", "99999") == noperm_cmd("client|kill")
    c.cmd("ACL", "SETUSER", "u", "-@all", "+select|0", "+acl")
    assert u.cmd("SELECT", "0") == "OK"
    assert u.cmd("SELECT", "1") == noperm_cmd("select")
    c.cmd("ACL", "SETUSER", "u", "-@all", "+@stream")
    assert u.cmd("XADD", "st", "*", "f", "v") is not None
    assert isinstance(u.cmd("XINFO", "STREAM", "st"), list)
    # HELLO, AUTH and QUIT never need a permission
    assert isinstance(u.cmd("HELLO", "2"), list)


def test_key_patterns_read_write(srv):
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "r", "on", ">pw", "+@all", "%R~read*")
    c.cmd("ACL", "SETUSER", "w", "on", ">pw", "+@all", "%W~write*")
    c.cmd("ACL", "SETUSER", "rw", "on", ">pw", "+@all", "%R~read*", "%W~write*")
    c.cmd("SET", "readstr", "bar")
    r = as_user(srv, "r")
    assert r.cmd("GET", "readstr") == "bar"
    assert r.cmd("SET", "readstr", "x") == NOPERM_KEYS
    assert r.cmd("GET", "other") == NOPERM_KEYS
    assert r.cmd("STRLEN", "readstr") == 3  # size only: either permission
    w = as_user(srv, "w")
    assert w.cmd("LPUSH", "writelist", "1") == 1
    assert w.cmd("SET", "writestr", "v") == "OK"
    assert w.cmd("SET", "writestr", "v", "GET") == NOPERM_KEYS  # GET reads
    assert w.cmd("GET", "writestr") == NOPERM_KEYS
    assert w.cmd("EXISTS", "writestr") == 1
    assert w.cmd("BITFIELD", "writestr", "GET", "u4", "0") == NOPERM_KEYS
    both = as_user(srv, "rw")
    assert both.cmd("COPY", "readstr", "writecopy") == 1
    assert both.cmd("COPY", "writecopy", "readstr2") == NOPERM_KEYS
    assert both.cmd("LMOVE", "readstr", "writelist", "LEFT", "LEFT") == NOPERM_KEYS  # the source is written too


def test_keys_of_multikey_commands_on_every_shard(srv):
    """MGET/MSET/DEL over keys that live on different shards: one key
    outside the patterns refuses the whole command."""
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "k", "on", ">pw", "+@all", "~ok:*")
    keys = ["ok:%d" % i for i in range(16)]
    u = as_user(srv, "k")
    assert u.cmd("MSET", *[x for k in keys for x in (k, k)]) == "OK"
    assert u.cmd("MGET", *keys) == keys
    assert u.cmd("MGET", *(keys + ["no:1"])) == NOPERM_KEYS
    assert u.cmd("DEL", "no:2", *keys) == NOPERM_KEYS
    assert c.cmd("EXISTS", *keys) == 16
    assert u.cmd("DEL", *keys) == 16


def test_selectors(srv):
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "s", "on", "nopass", "-@all", "resetkeys")
    u = as_user(srv, "s", "any")
    assert u.cmd("PING") == noperm_cmd("ping")
    c.cmd("ACL", "SETUSER", "s", "(+@write ~write::*)", "(+@read ~read::*)")
    assert u.cmd("SET", "write::foo", "bar") == "OK"
    assert u.cmd("GET", "read::foo") is None
    assert u.cmd("GET", "write::foo") == NOPERM_KEYS
    assert u.cmd("SET", "read::foo", "bar") == NOPERM_KEYS
    c.cmd("ACL", "SETUSER", "s", "clearselectors")
    assert getuser(c, "s")["selectors"] == []
    assert u.cmd("SET", "write::foo", "bar") == noperm_cmd("set")


def test_acl_log(srv):
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "antirez", ">foo", "on", "+set", "~object:1234", "+multi", "+exec")
    u = as_user(srv, "antirez", "foo")
    c.cmd("ACL", "LOG", "RESET")
    for _ in range(3):
        assert u.cmd("GET", "foo") == noperm_cmd("get")
    log = c.cmd("ACL", "LOG")
    assert len(log) == 1
    e = dict(zip(log[0][::2], log[0][1::2]))
    assert (e["count"], e["reason"], e["context"], e["object"], e["username"]) == \
        (3, "command", "toplevel", "get", "antirez")
    assert "user=antirez" in e["client-info"]
    assert u.cmd("SET", "somekeynotallowed", "1") == NOPERM_KEYS
    e = dict(zip(*[iter(c.cmd("ACL", "LOG", "1")[0])] * 2))
    assert (e["reason"], e["object"]) == ("key", "somekeynotallowed")
    assert u.cmd("MULTI") == "OK"
    assert u.cmd("INCR", "foo") == noperm_cmd("incr")
    assert u.cmd("EXEC").startswith("EXECABORT")
    e = dict(zip(*[iter(c.cmd("ACL", "LOG", "1")[0])] * 2))
    assert (e["context"], e["object"]) == ("multi", "incr")
    assert c.cmd("AUTH", "antirez", "wrong") == WRONGPASS
    e = dict(zip(*[iter(c.cmd("ACL", "LOG", "1")[0])] * 2))
    assert (e["reason"], e["object"], e["username"], e["context"]) == ("auth", "AUTH", "antirez", "toplevel")
    assert c.cmd("CONFIG", "SET", "acllog-max-len", "2") == "OK"
    for j in range(5):
        u.cmd("SET", "obj:%d" % j, "1")
    assert len(c.cmd("ACL", "LOG")) == 2
    assert c.cmd("ACL", "LOG", "RESET") == "OK"
    assert c.cmd("ACL", "LOG") == []


def test_dryrun_cat_genpass(srv):
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "t", "+@all", "%R~read*", "%W~write*", "%RW~rw*", "resetchannels")
    assert c.cmd("ACL", "DRYRUN", "t", "GET", "read") == "OK"
    assert c.cmd("ACL", "DRYRUN", "t", "GET", "write") == "This user has no permissions to access the 'write' key"
    assert c.cmd("ACL", "DRYRUN", "t", "SORT", "read", "STORE", "write") == "OK"
    assert c.cmd("ACL", "DRYRUN", "t", "HEXISTS", "write", "f") == "OK"
    assert c.cmd("ACL", "DRYRUN", "t", "ZCOUNT", "write", "0", "1") == \
        "This user has no permissions to access the 'write' key"
    assert c.cmd("ACL", "DRYRUN", "nouser", "GET", "x") == "ERR User 'nouser' not found"
    assert c.cmd("ACL", "DRYRUN", "t", "nocmd") == "ERR Command 'nocmd' not found"
    assert c.cmd("ACL", "DRYRUN", "t", "SET", "v") == "ERR wrong number of arguments for 'set' command"
    c.cmd("ACL", "SETUSER", "t", "-@all")
    assert c.cmd("ACL", "DRYRUN", "t", "SET", "k", "v") == "This user has no permissions to run the 'set' command"
    cats = c.cmd("ACL", "CAT")
    assert cats[:3] == ["keyspace", "read", "write"] and "connection" in cats
    assert "multi" in c.cmd("ACL", "CAT", "transaction")
    assert "set" not in c.cmd("ACL", "CAT", "keyspace")
    assert c.cmd("ACL", "CAT", "NON_EXISTS") == "ERR Unknown category 'NON_EXISTS'"
    assert len(c.cmd("ACL", "GENPASS")) == 64
    assert len(c.cmd("ACL", "GENPASS", "5")) == 2
    assert c.cmd("ACL", "GENPASS", "5000").startswith("ERR ACL GENPASS argument must be the number of bits")
    assert c.cmd("ACL", "DELUSER", "default") == "ERR The 'default' user cannot be removed"
    assert c.cmd("ACL", "LOAD").startswith("ERR This Redis instance is not configured to use an ACL file")


def test_sort_patterns_need_full_read(srv):
    c = raw(srv)
    c.cmd("SET", "v1", "1")
    c.cmd("LPUSH", "mylist", "1")
    c.cmd("ACL", "SETUSER", "s", "on", "nopass", "(+sort ~mylist ~v*)")
    u = as_user(srv, "s", "x")
    assert u.cmd("SORT", "mylist", "BY", "v*") == "ERR BY option of SORT denied due to insufficient ACL permissions."
    assert u.cmd("SORT", "mylist", "GET", "#") == "ERR GET option of SORT denied due to insufficient ACL permissions."
    assert u.cmd("SORT", "mylist") == ["1"]
    c.cmd("ACL", "SETUSER", "s", "clearselectors", "(+sort ~mylist %R~*)")
    assert u.cmd("SORT", "mylist", "BY", "v*") == ["1"]


def test_deleted_user_connections_close(srv):
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "gone", "on", ">pw", "+@all", "~*")
    others = [as_user(srv, "gone") for _ in range(4)]
    me = as_user(srv, "gone")
    assert me.cmd("ACL", "DELUSER", "gone") == 1  # the reply arrives, then the connection closes
    with pytest.raises((ConnectionError, OSError)):
        me.cmd("PING")
    for o in others:
        with pytest.raises((ConnectionError, OSError)):
            o.cmd("PING")
    assert c.cmd("PING") == "PONG"
    assert c.cmd("ACL", "DELUSER", "gone", "neverwas") == 0


def test_client_kill_user(srv):
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "kk", "on", ">pw", "+@all", "~*")
    vict = [as_user(srv, "kk") for _ in range(3)]
    assert c.cmd("CLIENT", "KILL", "USER", "kk") == 3
    assert c.cmd("CLIENT", "KILL", "USER", "nobody") == "ERR No such user 'nobody'"
    for v in vict:
        with pytest.raises((ConnectionError, OSError)):
            v.cmd("PING")


def test_user_directive(spawn):
    s = spawn("--user", "alice", "on", ">pa", "~a*", "+@all", "--user", "default", "on", "nopass", "~*", "&*",
              "+@all", "-flushdb")
    c = raw(s)
    assert c.cmd("FLUSHDB") == noperm_cmd("flushdb")
    a = as_user(s, "alice", "pa")
    assert a.cmd("SET", "a1", "x") == "OK"
    assert a.cmd("SET", "b1", "x") == NOPERM_KEYS


def test_aclfile_load_and_save(spawn, tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user alice on allcommands allkeys &* >alice\n\n"
                    "user bob on -@all +@set +acl ~set* &* >bob\n")
    s = spawn("--aclfile", str(path))
    c = raw(s)
    assert c.cmd("ACL", "USERS") == ["alice", "bob", "default"]
    b = as_user(s, "bob", "bob")
    assert b.cmd("SADD", "set1", "a") == 1
    assert b.cmd("SET", "k", "v") == noperm_cmd("set")
    assert c.cmd("ACL", "SETUSER", "eve", "+get", "allkeys", ">eve", "on") == "OK"
    assert c.cmd("ACL", "SAVE") == "OK"
    saved = path.read_text().splitlines()
    assert "user default on nopass ~* &* +@all" in saved and any(x.startswith("user eve on #") for x in saved)
    assert c.cmd("ACL", "LOAD") == "OK"
    with pytest.raises((ConnectionError, OSError)):
        b.cmd("PING")  # users replaced by LOAD lose their connections
    e = as_user(s, "eve", "eve")
    assert e.cmd("SET", "k", "v") == noperm_cmd("set")
    with open(path, "a") as f:
        f.write("user alice on nopass ~* -@all\n")
    err = raw(s).cmd("ACL", "LOAD")
    assert err == "ERR WARNING: Duplicate user 'alice' found on line 5. WARNING: ACL errors detected, no change " \
                  "to the previously active ACL rules was performed"
    path.write_text("user a on\n# comment\nuser b on +nosuch\n")
    assert raw(s).cmd("ACL", "LOAD") == (
        "ERR %s:2 should start with user keyword followed by the username. %s:3: Error in applying operation "
        "'+nosuch': Unknown command or category name in ACL. WARNING: ACL errors detected, no change to the "
        "previously active ACL rules was performed" % (path, path))
    assert getuser(raw(s), "alice")["commands"] == "+@all"  # unchanged


def test_aclfile_and_user_lines_conflict(spawn, tmp_path):
    path = tmp_path / "u.acl"
    path.write_text("user x on nopass\n")
    with pytest.raises(RuntimeError):
        spawn("--aclfile", str(path), "--user", "y", "on", "nopass")
    assert os.path.exists(path)


class ConfServer(Server):
    """A server started with a config file (its first argument)."""

    def __init__(self, target, conf):
        super().__init__(target)
        self.conf = conf

    def argv(self):
        a = super().argv()
        return [a[0], self.conf] + a[1:]


def test_config_rewrite_keeps_users(target, tmp_path):
    conf = tmp_path / "server.conf"
    conf.write_text("maxclients 100\nuser default on nopass ~* &* +@all -flushdb\n")
    s = ConfServer(target, str(conf)).start()
    try:
        c = raw(s)
        assert c.cmd("FLUSHDB") == noperm_cmd("flushdb")
        assert c.cmd("ACL", "SETUSER", "x", "on", ">p", "+get", "~*") == "OK"
        assert c.cmd("CONFIG", "REWRITE") == "OK"
    finally:
        s.stop()
    users = [l for l in conf.read_text().splitlines() if l.startswith("user ")]
    assert users[0] == "user default on nopass sanitize-payload ~* &* +@all -flushdb"  # `reset` first, as Redis
    assert len(users) == 2 and users[1].startswith("user x on #") and users[1].endswith(" ~* resetchannels -@all +get")
    s = ConfServer(target, str(conf)).start()
    try:
        c = raw(s)
        assert c.cmd("FLUSHDB") == noperm_cmd("flushdb")
        assert as_user(s, "x", "p").cmd("GET", "k") is None
    finally:
        s.stop()


def test_exec_checks_rules_again(srv):
    """Rules changed between MULTI and EXEC refuse the queued command at
    EXEC, logged in the multi context; the others run."""
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "mx", "on", ">p", "+@all", "~*")
    u = as_user(srv, "mx", "p")
    assert [u.cmd("MULTI"), u.cmd("INCR", "k1"), u.cmd("SET", "z", "1"), u.cmd("SET", "k2", "v")] == \
        ["OK", "QUEUED", "QUEUED", "QUEUED"]
    c.cmd("ACL", "SETUSER", "mx", "-incr", "resetkeys", "~z", "~k1")
    pre = "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. " \
          "This command is no longer allowed for the following reason: "
    assert u.cmd("EXEC") == [pre + "no permission to execute the command or subcommand", "OK",
                             pre + "no permission to touch the specified keys"]
    e = dict(zip(*[iter(c.cmd("ACL", "LOG", "1")[0])] * 2))
    assert (e["context"], e["reason"], e["object"]) == ("multi", "key", "k2")
    assert c.cmd("EXISTS", "k1", "z", "k2") == 1


def test_aclfile_words_and_errors(spawn, tmp_path):
    """The aclfile splits at single spaces with no quoting; an unknown
    command is named, other errors give only the first per line."""
    path = tmp_path / "w.acl"
    path.write_text("user default on nopass ~* &* +@all\n")
    s = spawn("--aclfile", str(path))
    c = raw(s)
    path.write_text("user default on nopass ~* &* +@all\nuser q on  ~a\"b\" +get\n")
    assert c.cmd("ACL", "LOAD") == "OK"
    assert getuser(c, "q")["keys"] == '~a"b"'
    path.write_text("user default on nopass ~* &* +@all\nuser s on ~a'b c' +nosuch +alsonot bogus #12\n")
    assert c.cmd("ACL", "LOAD") == (
        "ERR {p}:2: Syntax error. {p}:2: Error in applying operation '+nosuch': Unknown command or category name "
        "in ACL. {p}:2: Error in applying operation '+alsonot': Unknown command or category name in ACL. WARNING: "
        "ACL errors detected, no change to the previously active ACL rules was performed".format(p=path))
    assert getuser(c, "q") is not None and getuser(c, "s") is None


def test_scripts_run_with_their_callers_permissions(srv):
    """redis.call checks the caller's ACL (command, keys), logs a denial
    with the lua context, and redis.acl_check_cmd answers for that user;
    keys on every shard."""
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "bob", "on", ">123", "+@scripting", "+set", "+get", "~x*")
    u = as_user(srv, "bob", "123")
    c.cmd("ACL", "LOG", "RESET")
    for k in ("x1", "x2", "x3", "x4", "x5", "x6"):
        assert u.cmd("EVAL", "return redis.call('set', KEYS[1], 'v')", 1, k) == "OK"
        assert u.cmd("EVAL", "return redis.call('get', KEYS[1])", 1, k) == "v"
    assert u.cmd("EVAL", "return redis.acl_check_cmd('set', 'xx', 1)", 1, "xx") == 1
    assert u.cmd("EVAL", "return redis.acl_check_cmd('hset', 'xx', 'f', 1)", 1, "xx") is None
    assert u.cmd("EVAL", "return redis.acl_check_cmd('set', 'yy', 1)", 0) is None
    assert u.cmd("EVAL", "return redis.acl_check_cmd('invalid-cmd', 'arg')", 0).startswith(
        "ERR Invalid command passed to redis.acl_check_cmd()")
    assert u.cmd("EVAL", "return redis.call('incr', 'x1')", 0).startswith(
        "ERR The user executing the script can't run this command or subcommand")
    e = dict(zip(*[iter(c.cmd("ACL", "LOG", "1")[0])] * 2))
    assert (e["reason"], e["context"], e["object"], e["username"]) == ("command", "lua", "incr", "bob")
    assert u.cmd("EVAL", "return redis.call('set', 'zz', '1')", 0).startswith(
        "ERR The user executing the script can't access at least one of the keys mentioned in the command")
    e = dict(zip(*[iter(c.cmd("ACL", "LOG", "1")[0])] * 2))
    assert (e["reason"], e["context"], e["object"]) == ("key", "lua", "zz")
    assert c.cmd("EXISTS", "zz") == 0
    assert c.cmd("EVAL", "return redis.acl_check_cmd('hset', 'xx', 'f', 1)", 0) == 1  # default: every permission


NOPERM_CHANNELS = "NOPERM this user has no permissions to access one of the channels used as arguments"


def test_shard_channels_are_checked_as_channels(srv):
    """SPUBLISH and SSUBSCRIBE name channels, not keys: the user's channel
    patterns decide, whatever its key patterns."""
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "sh", "on", ">pw", "+@all", "resetkeys", "resetchannels", "&foo:*", "&exact")
    u = as_user(srv, "sh")
    assert u.cmd("SPUBLISH", "foo:1", "m") == 0
    assert u.cmd("SPUBLISH", "exact", "m") == 0
    assert u.cmd("SPUBLISH", "bar", "m") == NOPERM_CHANNELS
    assert u.cmd("SUNSUBSCRIBE", "anything") == ["sunsubscribe", "anything", 0]
    assert u.cmd("SSUBSCRIBE", "foo:1") == ["ssubscribe", "foo:1", 1]
    assert u.cmd("SSUBSCRIBE", "exact") == ["ssubscribe", "exact", 2]
    assert u.cmd("SSUBSCRIBE", "foo:2", "bar") == NOPERM_CHANNELS  # all or nothing
    assert u.cmd("PING") == ["pong", ""]
    assert c.cmd("PUBSUB", "SHARDNUMSUB", "foo:2") == ["foo:2", 0]
    assert c.cmd("ACL", "DRYRUN", "sh", "SPUBLISH", "foo:9", "m") == "OK"
    assert c.cmd("ACL", "DRYRUN", "sh", "SSUBSCRIBE", "foo:9") == "OK"
    assert c.cmd("ACL", "DRYRUN", "sh", "SUNSUBSCRIBE", "other") == "OK"
    assert c.cmd("ACL", "DRYRUN", "sh", "SPUBLISH", "other", "m") == \
        "This user has no permissions to access the 'other' channel"
    assert c.cmd("ACL", "DRYRUN", "sh", "SSUBSCRIBE", "foo:1", "other") == \
        "This user has no permissions to access the 'other' channel"
    assert c.cmd("ACL", "SETUSER", "sh2", "on", ">pw", "+@all", "~*", "resetchannels") == "OK"
    assert as_user(srv, "sh2").cmd("SSUBSCRIBE", "foo:1") == NOPERM_CHANNELS


def subscribed(srv, user, name, *cmds):
    """A connection of user, named, that ran each subscription command."""
    s = as_user(srv, user)
    assert s.cmd("CLIENT", "SETNAME", name) == "OK"
    for cmd in cmds:
        r = s.cmd(*cmd)
        assert isinstance(r, list) and r[0] == cmd[0].lower(), r
    return s


def closed(conn):
    """True when the server closed conn (a live subscriber answers PING)."""
    try:
        conn.cmd("PING")
    except (ConnectionError, OSError):
        return True
    return False


def test_subscribers_killed_when_channels_revoked(srv):
    """ACL SETUSER closes the user's connections (on every shard) that are
    subscribed to a channel, shard channel or pattern no longer allowed;
    CLIENT LIST no longer shows them once SETUSER has answered."""
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "ps", "on", ">pw", "+@all", "resetchannels", "&foo:1", "&bar:*", "&keep")
    doomed = [subscribed(srv, "ps", "doomed", ("SUBSCRIBE", "foo:1")),
              subscribed(srv, "ps", "doomed", ("SSUBSCRIBE", "foo:1")),
              subscribed(srv, "ps", "doomed", ("PSUBSCRIBE", "bar:*")),
              subscribed(srv, "ps", "doomed", ("SUBSCRIBE", "keep"), ("SUBSCRIBE", "foo:1"))]
    kept = [subscribed(srv, "ps", "kept", ("SUBSCRIBE", "keep")),
            subscribed(srv, "ps", "kept", ("SSUBSCRIBE", "keep")),
            as_user(srv, "ps")]  # not subscribed: stays
    other = subscribed(srv, "default", "other", ("SUBSCRIBE", "foo:1"))  # another user: stays
    assert c.cmd("ACL", "SETUSER", "ps", "resetchannels", "&keep") == "OK"
    listing = c.cmd("CLIENT", "LIST")
    assert "doomed" not in listing
    assert listing.count("name=kept") == 2 and "name=other" in listing
    assert all(closed(d) for d in doomed)
    assert not any(closed(k) for k in kept) and not closed(other)
    assert c.cmd("PUBLISH", "keep", "m") == 1
    assert c.cmd("SPUBLISH", "keep", "m") == 1


def test_subscribers_killed_when_allchannels_revoked(srv):
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "ps", "on", ">pw", "+@all", "allchannels")
    doomed = [subscribed(srv, "ps", "doomed", ("PSUBSCRIBE", "foo")) for _ in range(4)]
    assert c.cmd("ACL", "SETUSER", "ps", "resetchannels") == "OK"
    assert "doomed" not in c.cmd("CLIENT", "LIST")
    assert all(closed(d) for d in doomed)


def test_subscribers_pardoned_when_permissions_retained(srv):
    """Literal permissions kept, more added, or allchannels gained: nobody
    is closed. A pattern subscription needs the same pattern, literally."""
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "ps", "on", ">pw", "+@all", "resetchannels", "&foo:1", "&bar:*", "&orders")
    subs = [subscribed(srv, "ps", "pardoned", ("SUBSCRIBE", "foo:1"), ("SSUBSCRIBE", "orders"),
                       ("PSUBSCRIBE", "bar:*")) for _ in range(4)]
    assert c.cmd("ACL", "SETUSER", "ps", "resetchannels", "&foo:1", "&bar:*", "&orders", "&baz:qaz",
                 "&zoo:*") == "OK"
    assert c.cmd("CLIENT", "LIST").count("name=pardoned") == 4
    assert c.cmd("ACL", "SETUSER", "ps", "allchannels") == "OK"
    assert c.cmd("CLIENT", "LIST").count("name=pardoned") == 4
    # channels matched by a selector's pattern stay allowed
    assert c.cmd("ACL", "SETUSER", "ps", "resetchannels", "&foo:*", "&orders", "(&bar:* +@all)") == "OK"
    assert c.cmd("CLIENT", "LIST").count("name=pardoned") == 4
    assert not any(closed(s) for s in subs)
    # the pattern bar:* is not allowed by the pattern bar* (only literally)
    assert c.cmd("ACL", "SETUSER", "ps", "clearselectors", "&bar*") == "OK"
    assert "pardoned" not in c.cmd("CLIENT", "LIST")
    assert all(closed(s) for s in subs)


def test_key_permissions_of_georadius_store(srv):
    """GEORADIUS reads its source and writes its STORE/STOREDIST
    destination; GEOSEARCHSTORE writes its first key and reads its second."""
    c = raw(srv)
    c.cmd("ACL", "SETUSER", "geo", "+@all", "%R~read*", "%W~write*", "%RW~rw*")

    def dry(*args):
        return c.cmd("ACL", "DRYRUN", "geo", *args)

    for store in ("STORE", "STOREDIST"):
        assert dry("GEORADIUS", "read", "0", "0", "1", "m", store, "write") == "OK"
        assert dry("GEORADIUS", "read1", "0", "0", "1", "m", store, "read2") == \
            "This user has no permissions to access the 'read2' key"
        assert dry("GEORADIUS", "write1", "0", "0", "1", "m", store, "write2") == \
            "This user has no permissions to access the 'write1' key"
        assert dry("GEORADIUSBYMEMBER", "read", "m", "1", "m", store, "write") == "OK"
    assert dry("GEORADIUS", "read", "0", "0", "1", "m") == "OK"
    assert dry("GEOSEARCHSTORE", "write", "read", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "m") == "OK"
    assert dry("GEOSEARCHSTORE", "read", "read", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "m") == \
        "This user has no permissions to access the 'read' key"
