"""The short chaos run (`manage.py chaos --short`): Granary's real processes on a PostgreSQL,
RabbitMQ and S3 server (rclone serve s3) the run starts itself, ingesting about 200 granules
into three collections (tape only, and copy 1 in a bucket with copy 2 on tape) while workers,
web and beat are killed, the broker and the database restarted, drives fail writes and bytes
are damaged; the S3 server is down for the first seconds and killed -9 mid-ingest, one bucket
is missing for a while, and one object is deleted and another's bytes changed behind Granary's
back. Judged from outside: every granule's copies are read back from the volumes and the S3
server's folder, and a sample downloaded through orders, all hashed against the MD5 of the bytes
the run made; each S3 fault must have shown its reason on the requests it held up.

Marked `chaos`: it brings its own servers, so scripts/test.sh runs it once, in the pass on the
embedded default (the shorter of the two passes it runs side by side), not again on PostgreSQL.
`make chaos-short` runs it alone. GRANARY_CHAOS=0 leaves it out (a machine without initdb or
rabbitmq-server skips it)."""
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
        "lost_granules", "short_of_copies", "stuck_detail", "stuck_examples",
        "duplicated_examples", "corrupt_downloads", "orders", "unfinished_after_chaos",
        "processes_exited", "s3_faults")}, indent=1)
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
    # the S3 faults: each showed an operator its reason while it lasted, and passed its check
    faults = {row["fault"]: row for row in result["s3_faults"]}
    assert "S3 killed -9, restarted" in faults, detail
    assert any("behind Granary's back" in name for name in faults), detail
    assert "is unreachable" in faults["S3 killed -9, restarted"]["reason"], detail
    for row in faults.values():
        assert row["ok"], detail
        assert row["lost"] == row["corrupt_served"] == 0, detail
    assert result["fault_checks_failed"] == 0, detail
    assert run.returncode == 0, run.stdout[-3000:]
