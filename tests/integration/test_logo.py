"""always-show-logo: the startup banner carries the pid (Redis's suite waits
for " PID: <pid>" in the log before it talks to a server it started)."""
import re


def test_always_show_logo_logs_the_pid(spawn):
    srv = spawn("--always-show-logo", "yes")
    assert re.search(r"\bPID: %d\b" % srv.proc.pid, srv.read_log())
    assert srv.new_client(decode_responses=True).config_get("always-show-logo") == {"always-show-logo": "yes"}


def test_always_show_logo_is_immutable(spawn):
    c = spawn().new_client()
    try:
        c.config_set("always-show-logo", "yes")
        raised = None
    except Exception as e:  # redis.ResponseError
        raised = str(e)
    assert raised == "CONFIG SET failed (possibly related to argument 'always-show-logo') - can't set immutable config"
