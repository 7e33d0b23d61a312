"""The events bench's workers: Celery workers on the `events` queue as deploy/Procfile runs them
(prefork, GRANARY_EVENTS_CONCURRENCY processes), on the bench's database and broker, with the
bench's events settings in their environment; and beat's events sweep, run here on its
schedule (beat itself would also send every other periodic task to queues nobody reads)."""
import os
import socket
import subprocess
import threading
import time

from django.conf import settings
from django.db import connection

from backend.events import services as events

from . import live


class Workers:
    def __init__(self, processes, env):
        from backend.celery import app

        self.app, self.node = app, f"bench-events-{os.getpid()}"
        argv = live.worker_command(self.node, "events",
                                   ["--pool", "prefork", "--concurrency", str(processes)])
        logs = settings.DATA_ROOT / "bench-logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.log = logs / "events-worker.log"
        live.purge_queues()
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                argv, cwd=settings.BASE_DIR, stdout=out, stderr=subprocess.STDOUT,
                env=dict(os.environ, DATABASE_URL=live._database_url(),
                         GRANARY_LOG_LEVEL="WARNING", **env))
        self.stop = threading.Event()
        self.sweeper = threading.Thread(target=self._sweep, daemon=True)
        try:
            self._wait_ready()
        except BaseException:
            self._stop_worker()   # never left consuming the broker's queue after the bench
            raise
        self.sweeper.start()

    def _wait_ready(self, timeout=60):
        deadline, name = time.monotonic() + timeout, f"{self.node}@{socket.gethostname()}"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the events worker exited:\n{self.log.read_text()[-2000:]}")
            if any(name in reply for reply in self.app.control.ping(timeout=0.5)):
                return
        raise RuntimeError(f"the events worker did not answer in {timeout} s")

    def _sweep(self):
        every = settings.CELERY_BEAT_SCHEDULE["events-sweep"]["schedule"]
        while not self.stop.wait(every):
            events.sweep()
        connection.close()

    def cpu_s(self):
        """CPU seconds of the worker and its pool processes so far."""
        return live.tree_cpu(self.proc.pid)

    def close(self):
        self.stop.set()
        self.sweeper.join(30)
        self._stop_worker()
        live.purge_queues()

    def _stop_worker(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
