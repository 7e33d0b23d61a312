"""A real webhook receiver on a loopback port: every request's signature is checked with the
`standardwebhooks` library (independent of Granary's signing); ids are counted, so duplicates
show. `hold` makes the first request wait (a worker can be killed while it sends)."""
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def free_ports(n):
    """n loopback ports nothing listens on now: the kernel's picks, not a fixed range (the
    PostgreSQL and SQLite passes of `make test` run side by side)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class Receiver:
    def __init__(self, port, secret, hold=0.0):
        self.secret, self.hold = secret, hold
        self.ids, self.bad, self.held = Counter(), [], threading.Event()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                try:
                    Webhook(receiver.secret).verify(body, dict(self.headers.items()))
                except WebhookVerificationError as exc:
                    receiver.bad.append(str(exc))
                    self.send_response(401)
                    self.end_headers()
                    return
                with receiver.lock:
                    receiver.ids[self.headers["webhook-id"]] += 1
                    first = len(receiver.ids) == 1 and receiver.hold and not receiver.held.is_set()
                if first:
                    receiver.held.set()
                    time.sleep(receiver.hold)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
