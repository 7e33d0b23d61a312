"""Workers yield the CPU to the web: a worker process raises its nice value to
GRANARY_WORKER_NICE (never lowers it), in a child process so this one keeps its priority."""
import os
import subprocess
import sys

import pytest

SCRIPT = """
import os
from backend.celery import _yield_to_the_web
_yield_to_the_web()
print(os.nice(0))
"""


@pytest.mark.parametrize("start,asked", [(0, 10), (0, 0), (15, 10)])
def test_a_worker_runs_at_least_at_the_nice_value_asked(start, asked):
    env = dict(os.environ, GRANARY_WORKER_NICE=str(asked),
               DJANGO_SETTINGS_MODULE="backend.settings")
    answer = subprocess.run(["nice", "-n", str(start), sys.executable, "-c", SCRIPT], env=env,
                            capture_output=True, text=True, check=True)
    started_at = min(19, os.nice(0) + start)
    assert int(answer.stdout.strip().splitlines()[-1]) == max(started_at, asked)
