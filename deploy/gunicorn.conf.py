"""Gunicorn settings for Granary: gunicorn -c deploy/gunicorn.conf.py backend.wsgi:application

Environment overrides: GRANARY_BIND (host:port or unix:/path), GRANARY_WEB_WORKERS.
"""
import ipaddress
import os
import socket

# nginx on the same host proxies here; never expose this port publicly.
bind = os.environ.get("GRANARY_BIND", "127.0.0.1:8000")

# Threads let one process hold several long uploads/downloads while still
# answering API calls. 2*cores+1 processes, capped so a big host does not
# open more PostgreSQL connections than the server allows
# (connections per web host = workers * threads).
_cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
workers = int(os.environ.get("GRANARY_WEB_WORKERS", min(2 * _cores + 1, 9)))
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


def post_fork(server, worker):
    """Loopback listeners get LOOPBACK_CONGESTION_CONTROL; accepted connections inherit it."""
    for listener in worker.sockets:
        sock = listener.sock
        if sock.family not in (socket.AF_INET, socket.AF_INET6) or not LOOPBACK_CONGESTION_CONTROL:
            continue
        if not ipaddress.ip_address(sock.getsockname()[0]).is_loopback:
            continue
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                            LOOPBACK_CONGESTION_CONTROL.encode())
        except OSError as exc:
            server.log.warning("TCP_CONGESTION %s on %s: %s", LOOPBACK_CONGESTION_CONTROL,
                               listener, exc)
