"""`make cluster` as a test (slow, needs root): Granary's processes as hosts in network
namespaces on a PostgreSQL and RabbitMQ of the run's own, a client's ingest, tape recall and
byte-exact download, one silo's storage manager host down (its work waits queued, the other
silo's goes on) and back (the waiting work completes). The run checks all of it itself and
exits non-zero on the first check that fails; this test reads its verdict and its output."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from bench.chaos.services import missing_programs
from tests.workers import ROOT

NET = 78  # not make cluster's 77: the two can run side by side

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(not shutil.which("ip"), reason="this host lacks iproute2 (ip)"),
    pytest.mark.skipif(bool(missing_programs()),
                       reason=f"this host lacks {', '.join(missing_programs())}"),
]


def test_cluster_journey_holds_with_a_storage_manager_host_down_and_back(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["GRANARY_DATA_ROOT"] = str(tmp_path)
    manage = [sys.executable, "manage.py", "cluster", "--net", str(NET)]
    try:
        run = subprocess.run(manage, cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=1200)
    finally:
        subprocess.run([*manage, "--cleanup"], cwd=ROOT, env=env, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-8000:]
    assert "FAILED" not in out
    # the order's number depends on the orders placed before it
    assert re.search(r"order \d+ of CLUSTER-B1 'staging' \(waiting for tape\), not failed",
                     out), out[-8000:]
    for shown in ("CLUSTER-A4 ARCHIVED: the waiting copy 1 written and verified on silo1",
                  "the archive's invariants hold", "cluster journey: every check held"):
        assert shown in out, out[-8000:]
    gone = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"gc{NET}-" not in gone
