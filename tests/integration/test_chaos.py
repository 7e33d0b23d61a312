"""The short chaos run (`manage.py chaos --short`): Granary's real processes on a PostgreSQL and
RabbitMQ the run starts itself, ingesting about 200 granules while workers, web and beat are
killed, the broker and the database restarted, drives fail writes and bytes are damaged. Judged
from outside: every granule's bytes are read back from the volumes and downloaded through an
order, and hashed against the MD5 of the bytes the run made.

Marked `chaos`: it brings its own servers, so scripts/test.sh runs it once, in the pass on
PostgreSQL and RabbitMQ, not again on the embedded default. `make chaos-short` runs it alone.
GRANARY_CHAOS=0 leaves it out (a machine without initdb or rabbitmq-server skips it)."""
import json
import os
import subprocess
import sys

import pytest

from bench.chaos.services import missing_programs
from tests.workers import ROOT

pytestmark = [
    pytest.mark.chaos,
    pytest.mark.skipif(os.environ.get("GRANARY_CHAOS") == "0",
                       reason="GRANARY_CHAOS=0 leaves the short chaos run out"),
    pytest.mark.skipif(bool(missing_programs()),
                       reason=f"this host lacks {', '.join(missing_programs())}"),
]


def test_short_chaos_run_loses_nothing(tmp_path):
    out = tmp_path / "chaos.json"
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["GRANARY_DATA_ROOT"] = str(tmp_path)
    run = subprocess.run([sys.executable, "manage.py", "chaos", "--short", "--json", str(out)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert out.exists(), f"the run did not finish:\n{run.stdout[-6000:]}\n{run.stderr[-6000:]}"
    result = json.loads(out.read_text())
    detail = json.dumps({k: result.get(k) for k in (
        "lost_granules", "short_of_copies", "stuck_detail", "duplicated_examples",
        "corrupt_downloads", "orders", "unfinished_after_chaos", "processes_exited")}, indent=1)
    # 200 small granules and 2 large ones were made; every one must be archived and readable
    assert (result["granules"], result["large"]) == (202, 2)
    assert result["archived"] == 202, detail
    assert result["lost"] == 0, detail
    assert result["stuck"] == 0, detail
    assert result["duplicated_work"] == 0, detail
    assert result["corrupt_served"] == 0, detail
    assert result["downloads"] > 0, detail
    if result["discrepancies"] is not None:  # None until the archive has its reconciliation
        assert result["discrepancies"] == 0, detail
    assert run.returncode == 0, run.stdout[-3000:]
