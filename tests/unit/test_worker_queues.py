"""Every Celery queue has a worker wherever Granary is started: deploy/Procfile (one worker per
queue), the embedded worker of `make run` (scripts/run.sh) and of the journeys (scripts/e2e.sh,
which also purges them first). A queue left out of one of them is a task that never runs there
(the `fanout` queue had to be added to each by hand)."""
import re
from pathlib import Path

import pytest

from backend.celery import QUEUES

ROOT = Path(__file__).resolve().parents[2]


def _queue_lists(text):
    """The -Q arguments of the celery commands in a script or Procfile, one list each."""
    return [match.group(1).split(",") for line in text.splitlines()
            if "celery" in line and not line.lstrip().startswith("#")
            for match in [re.search(r" -Q (\S+)", line)] if match]


def test_the_procfile_runs_a_worker_for_every_queue():
    served = {q for queues in _queue_lists((ROOT / "deploy/Procfile").read_text())
              for q in queues}
    assert set(QUEUES) <= served


@pytest.mark.parametrize("script", ["scripts/run.sh", "scripts/e2e.sh"])
def test_the_embedded_worker_serves_every_queue(script):
    lists = _queue_lists((ROOT / script).read_text())
    assert lists, f"no celery -Q command in {script}"
    for queues in lists:     # the worker, and e2e.sh's purge before it
        assert sorted(queues) == sorted(QUEUES), (script, queues)
