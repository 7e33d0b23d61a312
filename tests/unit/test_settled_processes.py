"""A long-lived process sets what it loaded at start aside from the garbage collector's full
collections (backend.host.settle_started): a Celery pool process when it starts, a web worker
when it imports backend.wsgi. Each in a child process, so this one's collector is untouched."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# what the collector still walks after start-up, against what it set aside
REPORT = "import gc; print(gc.get_freeze_count(), len(gc.get_objects()))"

WORKER = """
import django
django.setup()
from celery.signals import worker_process_init
import backend.celery
import gc
assert gc.get_freeze_count() == 0
worker_process_init.send(sender=None)
""" + REPORT

WEB = "import gc\nimport backend.wsgi\n" + REPORT


@pytest.mark.parametrize("script", [WORKER, WEB], ids=["pool process", "web worker"])
def test_a_started_process_leaves_what_it_loaded_out_of_full_collections(script):
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="backend.settings")
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=120)
    frozen, walked = (int(n) for n in out.stdout.split()[-2:])
    # Django and the app are tens of thousands of objects; almost none are left to walk
    assert frozen > 20_000
    assert walked < frozen / 20
