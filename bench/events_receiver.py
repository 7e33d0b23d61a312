"""The events bench's webhook receiver, in a process of its own as a site's web server is: it
verifies every request with the `standardwebhooks` library and its endpoint's secret (the path
names the endpoint), keeps the first arrival of each (endpoint, webhook-id) and counts copies.
Run in the bench's own process, its threads took a third of the sender's interpreter lock, so
the bench measured the receiver as much as Granary. The bench asks it over a pipe."""
import multiprocessing
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook


class _Tally:
    """What the receiver saw; lives in the receiver's process."""

    def __init__(self):
        self.secrets, self.got, self.copies = {}, {}, Counter()
        self.bad = self.firsts = 0
        self.cpu = Counter()
        self.lock = threading.Lock()

    def record(self, path, body, headers):
        secret = self.secrets.get(path)
        if secret is None:  # the baseline's bare POSTs
            return True
        try:
            Webhook(secret).verify(body, headers)
        except Exception:  # noqa: BLE001 - counted, the run fails on any
            with self.lock:
                self.bad += 1
            return False
        key = (path, headers["webhook-id"])
        with self.lock:
            self.copies[key] += 1
            if key not in self.got:
                self.got[key] = time.time()
                self.firsts += path.startswith("h")
        return True

    def spent(self, seconds):
        with self.lock:
            self.cpu["s"] += seconds
            self.cpu["requests"] += 1

    def answer(self, ask, *args):
        with self.lock:
            if ask == "secret":
                self.secrets[args[0]] = args[1]
                return None
            if ask == "firsts":
                return self.firsts
            if ask == "arrivals":
                names, uids = args
                return {(n, u): self.got[(n, u)] for n in names for u in uids
                        if (n, u) in self.got}
            if ask == "reset_cpu":
                self.cpu.clear()
                return None
            return {"bad": self.bad, "cpu": dict(self.cpu),
                    "healthy_copies": sum(c - 1 for (name, _), c in self.copies.items()
                                          if name.startswith("h"))}


def _serve(pipe, port, slow_s):
    tally = _Tally()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"   # kept alive, as a site's web server does

        def handle_one_request(self):
            started = time.thread_time()
            super().handle_one_request()
            tally.spent(time.thread_time() - started)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            path = self.path.strip("/")
            if path == "slow":
                time.sleep(slow_s)
            ok = tally.record(path, body, dict(self.headers.items()))
            self.send_response(204 if ok else 401)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    pipe.send("listening")
    while True:
        ask = pipe.recv()
        if ask[0] == "stop":
            server.shutdown()
            pipe.send(None)
            return
        pipe.send(tally.answer(*ask))


class Receiver:
    """The bench's handle on the receiver process (started by fork before the bench starts
    any thread; the child never touches the bench's database connection)."""

    def __init__(self, port, slow_s):
        self.pipe, child = multiprocessing.Pipe()
        self.process = multiprocessing.get_context("fork").Process(
            target=_serve, args=(child, port, slow_s), daemon=True)
        self.process.start()
        self.lock = threading.Lock()
        if not self.pipe.poll(30) or self.pipe.recv() != "listening":
            raise RuntimeError(f"the webhook receiver did not listen on port {port}")

    def _ask(self, *ask):
        with self.lock:
            self.pipe.send(ask)
            return self.pipe.recv()

    def add_secret(self, name, secret):
        self._ask("secret", name, secret)

    @property
    def firsts(self):
        return self._ask("firsts")

    def arrivals(self, names, uids):
        return self._ask("arrivals", list(names), list(uids))

    def reset_cpu(self):
        self._ask("reset_cpu")

    def tally(self):
        return self._ask("tally")

    def close(self):
        self._ask("stop")
        self.process.join(10)
