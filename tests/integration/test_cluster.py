"""CLUSTER, READONLY and READWRITE on a server without cluster support (shoal's
only mode, redis-server's default): every subcommand answers the same error,
COMMAND shows their rows, and CLUSTER RESET is refused inside scripts."""
import pytest
import redis

from test_connection import RawConn, plain

DISABLED = "^This instance has cluster support disabled$"


@pytest.mark.parametrize("args", [["CLUSTER", "INFO"], ["CLUSTER", "HELP"], ["CLUSTER", "KEYSLOT", "a"],
                                  ["CLUSTER", "NODES"], ["CLUSTER", "SLOTS"], ["CLUSTER", "RESET", "HARD"],
                                  ["READONLY"], ["READWRITE"]])
def test_cluster_support_disabled(r, args):
    with pytest.raises(redis.ResponseError, match=DISABLED):
        r.execute_command(*args)
    assert r.ping()


def test_cluster_rows_and_errors(server, r):
    with pytest.raises(redis.ResponseError, match="^unknown subcommand 'NOSUCH'. Try CLUSTER HELP.$"):
        r.execute_command("CLUSTER", "NOSUCH")
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'cluster\\|keyslot' command$"):
        r.execute_command("CLUSTER", "KEYSLOT")
    c = RawConn(server)
    try:
        assert b"cluster|help" in plain(c.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "cluster*"))
        info = plain(c.call("COMMAND", "INFO", "cluster|reset"))[0]
    finally:
        c.close()
    assert info[0] == b"cluster|reset" and info[1] == -2
    assert set(info[2]) == {"admin", "noscript", "stale"}  # status replies
    with pytest.raises(redis.ResponseError, match="^This Redis command is not allowed from script"):
        r.eval("return redis.call('cluster', 'reset')", 0)
