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


def _pool_conf(monkeypatch, **env):
    for name in ("GRANARY_WEB_POOL", "GRANARY_BIND", "GRANARY_WEB_WORKERS",
                 "GRANARY_PROVIDER_BIND", "GRANARY_PROVIDER_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONF))


def test_the_provider_pool_has_its_own_address_and_process_count(monkeypatch):
    # the portal's settings in the environment file are not the provider pool's
    conf = _pool_conf(monkeypatch, GRANARY_WEB_POOL="provider", GRANARY_BIND="127.0.0.1:9000",
                      GRANARY_WEB_WORKERS="7")
    assert (conf["bind"], conf["workers"], conf["proc_name"]) == (
        "127.0.0.1:8001", 2, "granary-provider")
    conf = _pool_conf(monkeypatch, GRANARY_WEB_POOL="provider",
                      GRANARY_PROVIDER_BIND="unix:/run/granary/provider.sock",
                      GRANARY_PROVIDER_WORKERS="3")
    assert (conf["bind"], conf["workers"]) == ("unix:/run/granary/provider.sock", 3)


def test_the_portal_pool_is_the_default(monkeypatch):
    conf = _pool_conf(monkeypatch, GRANARY_PROVIDER_BIND="127.0.0.1:9001",
                      GRANARY_WEB_WORKERS="5")
    assert (conf["bind"], conf["workers"], conf["proc_name"]) == (
        "127.0.0.1:8000", 5, "granary-portal")


def test_an_unknown_pool_is_refused(monkeypatch):
    with pytest.raises(SystemExit):
        _pool_conf(monkeypatch, GRANARY_WEB_POOL="users")


def test_a_web_process_loads_every_view_before_its_first_request():
    """backend.wsgi, which each gunicorn worker imports at boot, loads the URLconf and the
    modules of its views then: otherwise the first request after every start or recycle paid
    for the imports (1.2-1.5 s measured) and the worker's other requests waited behind it."""
    import subprocess
    import sys

    probe = ("import sys; import backend.wsgi; "
             "print(' '.join(m for m in ('backend.urls', 'ingest.api', 'distribution.api', "
             "'backend.archive.api') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=CONF.parents[1], check=True, timeout=120)
    assert out.stdout.split() == ["backend.urls", "ingest.api", "distribution.api",
                                  "backend.archive.api"]
