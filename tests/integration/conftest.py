"""Integration test fixtures: every test runs against shoal --threads 1,
shoal --threads 4 and redis-server 7.0 (the behaviour reference).

    pytest tests/integration                  # all three targets
    pytest tests/integration --target redis   # only one: shoal1 | shoal4 | redis

Fixtures:
    r        a redis-py client (decode_responses=False) on a flushed server
    rs       the same with decode_responses=True
    target   the target name ("shoal1", "shoal4", "redis")
    server   the Server object (host, port, pid, target, new_client())
    spawn    a factory: spawn(*args) starts a private server of this target
             with extra directives (e.g. spawn("--timeout", "1"))
"""
import os
import pytest
import redis

from helpers import Server, TARGETS


def pytest_addoption(parser):
    parser.addoption("--target", action="append", default=None,
                     help="shoal1, shoal4 or redis (repeatable); default all")


def pytest_generate_tests(metafunc):
    if "target" in metafunc.fixturenames:
        chosen = metafunc.config.getoption("target") or list(TARGETS)
        metafunc.parametrize("target", chosen, scope="session")


_servers = {}


@pytest.fixture(scope="session")
def server(target):
    if target not in _servers:
        _servers[target] = Server(target)
        _servers[target].start()
    yield _servers[target]


def pytest_sessionfinish(session, exitstatus):
    for s in _servers.values():
        s.stop()


@pytest.fixture
def r(server):
    c = server.new_client()
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def rs(server):
    c = server.new_client(decode_responses=True)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def spawn(target):
    started = []

    def make(*args):
        s = Server(target, list(args))
        s.start()
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()
