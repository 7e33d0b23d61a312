"""Run a real Celery worker as a subprocess against the test database and the configured broker."""
import os
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def database_url():
    """The URL of the database the tests are using (the test database, not the default)."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = quote(s["USER"] or "")
    if s.get("PASSWORD"):
        auth += ":" + quote(s["PASSWORD"])
    host = s["HOST"] or "localhost"
    return f"postgres://{auth}@{host}:{s['PORT'] or 5432}/{s['NAME']}"


def purge(queues):
    """Drop messages earlier runs left in these queues (nudges nobody consumed): the database
    is the source of truth, so a purge loses no work, and the test starts from a clean broker."""
    from backend.celery import app

    with app.connection_for_write() as conn:
        channel = conn.default_channel
        for name in queues:
            try:
                channel.queue_purge(name)
            except Exception:  # noqa: BLE001 - a queue that does not exist yet has nothing to drop
                channel = conn.channel()


@contextmanager
def celery_worker(queues, extra_env=None):
    """Start a worker consuming `queues` (purged first); stop it (warm, then hard) on exit."""
    purge(queues)
    env = dict(os.environ)
    env.update({"DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "backend.settings"})
    env.update(extra_env or {})
    name = f"test-{uuid.uuid4().hex[:8]}@%h"
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "backend", "worker", "-Q", ",".join(queues),
         "-n", name, "--pool", "solo", "--without-mingle", "--without-gossip",
         "--without-heartbeat", "-l", "INFO"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        yield proc
    finally:
        stop_process(proc, 20)


def stop_process(proc, timeout):
    """Stop a test's server or worker: politely, then for sure."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_for(predicate, proc, timeout=90, what="the worker"):
    """Poll until predicate() is true; fail with the worker's output if it never is."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited early:\n{proc.stdout.read()}")
        time.sleep(0.2)
    proc.terminate()
    raise AssertionError(f"{what} did not finish in {timeout}s:\n{proc.communicate()[0][-4000:]}")
