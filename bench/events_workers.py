"""The events bench's workers: Celery workers on the `events` queue as deploy/Procfile runs them
(prefork, GRANARY_EVENTS_CONCURRENCY processes) and its one on `fanout`, on the bench's
database and broker, with the bench's events settings in their environment; and beat's events
sweep, run here on its schedule (beat itself would also send every other periodic task to
queues nobody reads)."""
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
        pools = ((self.node, "events", processes), (f"{self.node}-fanout", "fanout", 1))
        logs = settings.DATA_ROOT / "bench-logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.log = logs / "events-worker.log"
        live.purge_queues()
        env = dict(os.environ, DATABASE_URL=live._database_url(), GRANARY_LOG_LEVEL="WARNING",
                   **env)
        self.procs = []
        with open(self.log, "wb") as out:
            for node, queue, count in pools:
                argv = live.worker_command(node, queue,
                                           ["--pool", "prefork", "--concurrency", str(count)])
                self.procs.append(subprocess.Popen(
                    argv, cwd=settings.BASE_DIR, stdout=out, stderr=subprocess.STDOUT, env=env))
        self.stop = threading.Event()
        self.sweeper = threading.Thread(target=self._sweep, daemon=True)
        try:
            self._wait_ready()
        except BaseException:
            self._stop_worker()   # never left consuming the broker's queue after the bench
            raise
        self.sweeper.start()

    def _wait_ready(self, timeout=60):
        host = socket.gethostname()
        names = {f"{self.node}@{host}", f"{self.node}-fanout@{host}"}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(proc.poll() is not None for proc in self.procs):
                raise RuntimeError(f"an events worker exited:\n{self.log.read_text()[-2000:]}")
            answered = {name for reply in self.app.control.ping(timeout=0.5) for name in reply}
            if names <= answered:
                return
        raise RuntimeError(f"the events worker did not answer in {timeout} s")

    def _sweep(self):
        every = settings.CELERY_BEAT_SCHEDULE["events-sweep"]["schedule"]
        while not self.stop.wait(every):
            events.sweep()
        connection.close()

    def cpu_s(self):
        """CPU seconds of the workers and their pool processes so far."""
        return sum(live.tree_cpu(proc.pid) for proc in self.procs)

    def close(self):
        self.stop.set()
        self.sweeper.join(30)
        self._stop_worker()
        live.purge_queues()

    def _stop_worker(self):
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
