"""Gunicorn settings for Granary: gunicorn -c deploy/gunicorn.conf.py backend.wsgi:application

Two pools run this file: the portal's (the default) and, with GRANARY_WEB_POOL=provider, the
provider API's (/api/v1/ingest/, which nginx sends there: deploy/README.md, "The web comes
first"). Environment overrides: GRANARY_BIND (host:port or unix:/path) and GRANARY_WEB_WORKERS
for the portal's pool, GRANARY_PROVIDER_BIND and GRANARY_PROVIDER_WORKERS for the provider's.
"""
import ipaddress
import os
import socket

POOL = os.environ.get("GRANARY_WEB_POOL", "portal")
if POOL not in ("portal", "provider"):
    raise SystemExit(f"GRANARY_WEB_POOL is portal or provider, not {POOL!r}")
proc_name = f"granary-{POOL}"

# nginx on the same host proxies here; never expose this port publicly.
if POOL == "provider":
    bind = os.environ.get("GRANARY_PROVIDER_BIND", "127.0.0.1:8001")
else:
    bind = os.environ.get("GRANARY_BIND", "127.0.0.1:8000")

# Threads let one process hold several long uploads/downloads while still
# answering API calls. 2*cores+1 processes, capped so a big host does not
# open more PostgreSQL connections than the server allows
# (connections per web host = workers * threads).
_cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
workers = int(os.environ.get("GRANARY_WEB_WORKERS", min(2 * _cores + 1, 9)))
if POOL == "provider":
    # a provider's bulk request or PDR is parsed and validated here while the portal's users
    # are served by their own processes, so neither waits in the other's queue nor shares a
    # process's interpreter lock with it; a few providers need few processes
    workers = int(os.environ.get("GRANARY_PROVIDER_WORKERS", "2"))
worker_class = "gthread"
threads = 4

# Streamed multi-GB transfers on slow links: be generous before declaring a
# worker stuck, and give in-flight requests time to finish on restart/HUP.
timeout = 300
graceful_timeout = 300
keepalive = 5

# Recycle processes now and then to bound memory growth; jitter avoids
# all of them restarting at once.
max_requests = 2000
max_requests_jitter = 200

# Logs go to stdout/stderr, i.e. the journal under systemd.
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("GRANARY_LOG_LEVEL", "info").lower()

# Trust X-Forwarded-* only from the local nginx.
forwarded_allow_ips = "127.0.0.1,::1"


# The hop from nginx to here is loopback, where BBR (this host's default) only costs: with no
# fq qdisc on lo it paces every segment by its own timer, and its model of a path's bandwidth
# has nothing to find there. Reno, which any user may choose, measured faster on a cold 1 GiB
# download (see the commit). The client side of nginx keeps the host's default.
LOOPBACK_CONGESTION_CONTROL = os.environ.get("GRANARY_LOOPBACK_TCP_CC", "reno")

# A download is sent by sendfile(2), which reads the file only while the socket has room: while
# the reader is busy, a full send buffer leaves the disk idle. Autotuning stops at tcp_wmem's
# 4 MiB here; a fixed buffer of 4 MiB (Linux doubles it for bookkeeping, up to wmem_max) lets a
# cold file's next read-ahead start while the last one is still being received. 0 keeps
# autotuning.
LOOPBACK_SEND_BUFFER = int(os.environ.get("GRANARY_LOOPBACK_SNDBUF", 4 << 20))


def _tune(server, listener, level, option, value):
    try:
        listener.sock.setsockopt(level, option, value)
    except OSError as exc:
        server.log.warning("setsockopt %s=%r on %s: %s", option, value, listener, exc)


def post_fork(server, worker):
    """Loopback listeners get the settings above; accepted connections inherit them."""
    for listener in worker.sockets:
        sock = listener.sock
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            continue
        if not ipaddress.ip_address(sock.getsockname()[0]).is_loopback:
            continue
        if LOOPBACK_CONGESTION_CONTROL:
            _tune(server, listener, socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                  LOOPBACK_CONGESTION_CONTROL.encode())
        if LOOPBACK_SEND_BUFFER > 0:
            _tune(server, listener, socket.SOL_SOCKET, socket.SO_SNDBUF, LOOPBACK_SEND_BUFFER)
