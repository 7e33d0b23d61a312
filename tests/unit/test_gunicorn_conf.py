"""deploy/gunicorn.conf.py: loopback listeners get their own TCP congestion control."""
import logging
import runpy
import socket
from pathlib import Path
from types import SimpleNamespace

import pytest

CONF = Path(__file__).resolve().parents[2] / "deploy" / "gunicorn.conf.py"


def congestion(sock):
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()


@pytest.fixture
def conf(monkeypatch):
    monkeypatch.delenv("GRANARY_LOOPBACK_TCP_CC", raising=False)
    return runpy.run_path(str(CONF))


def fork_with(conf, sock):
    server = SimpleNamespace(log=logging.getLogger("test"))
    conf["post_fork"](server, SimpleNamespace(sockets=[SimpleNamespace(sock=sock)]))


def test_a_loopback_listener_and_its_connections_use_reno(conf):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        fork_with(conf, listener)
        assert congestion(listener) == "reno"
        with socket.create_connection(listener.getsockname()):
            accepted, _ = listener.accept()
            with accepted:
                assert congestion(accepted) == "reno"


def test_other_listeners_keep_the_host_default(conf):
    with socket.socket() as listener:
        listener.bind(("0.0.0.0", 0))
        default = congestion(listener)
        fork_with(conf, listener)
        assert congestion(listener) == default
