"""deploy/gunicorn.conf.py: loopback listeners get their own TCP congestion control and a
fixed send buffer."""
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
    monkeypatch.delenv("GRANARY_LOOPBACK_SNDBUF", raising=False)
    return runpy.run_path(str(CONF))


def send_buffer(sock):
    return sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)


def granted(requested):
    """What Linux grants for SO_SNDBUF: twice the request, capped at twice wmem_max."""
    return 2 * min(requested, int(Path("/proc/sys/net/core/wmem_max").read_text()))


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
                assert send_buffer(accepted) == granted(conf["LOOPBACK_SEND_BUFFER"])


def test_other_listeners_keep_the_host_default(conf):
    with socket.socket() as listener:
        listener.bind(("0.0.0.0", 0))
        default, buffer = congestion(listener), send_buffer(listener)
        fork_with(conf, listener)
        assert congestion(listener) == default
        assert send_buffer(listener) == buffer


def test_a_zero_send_buffer_leaves_autotuning_on(monkeypatch):
    monkeypatch.setenv("GRANARY_LOOPBACK_SNDBUF", "0")
    conf = runpy.run_path(str(CONF))
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        buffer = send_buffer(listener)
        fork_with(conf, listener)
        assert send_buffer(listener) == buffer
        assert congestion(listener) == "reno"
