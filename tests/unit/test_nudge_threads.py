"""Threads sending their process's first nudges side by side each find their task (a gunicorn
worker's threads did not: a task not registered yet while another thread imported the tasks
modules raised NotRegistered, so the nudge was lost, and bench mixed saw a download cut short
where its delivery was marked). Each run is a fresh interpreter, where nothing has imported the
tasks modules yet; the answer is checked against the names asked."""
import json
import subprocess
import sys

from tests.workers import ROOT

NAMES = ["backend.events.fan_out", "distribution.refresh_order", "ingest.process_chunk",
         "backend.archive.run_objects", "distribution.sweep", "backend.events.fan_out",
         "ingest.process_chunk", "distribution.refresh_order"]

FIRST_NUDGES = """
import json, os, sys, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
import django
django.setup()
import backend.celery  # noqa: F401 - the app, as a web process has it
from backend.nudges import task_named
names = json.loads(sys.argv[1])
found, barrier = {}, threading.Barrier(len(names))
def first(i, name):
    barrier.wait()
    try:
        found[i] = task_named(name).name
    except Exception as exc:
        found[i] = f"{type(exc).__name__}: {exc}"
threads = [threading.Thread(target=first, args=(i, n)) for i, n in enumerate(names)]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps([found[i] for i in range(len(names))]))
"""


def test_threads_sending_their_first_nudges_together_each_find_their_task():
    for _ in range(4):
        run = subprocess.run([sys.executable, "-c", FIRST_NUDGES, json.dumps(NAMES)], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-3000:]
        assert json.loads(run.stdout.strip().splitlines()[-1]) == NAMES
