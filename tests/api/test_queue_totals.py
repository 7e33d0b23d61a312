"""The queues board's kept totals (QueueTotal, a PostgreSQL trigger): queue_summary read from
them equals queue_summary grouped from the pending requests themselves (the SQLite path),
after inserts, state changes, moves between groups, size changes, bulk updates and deletes,
and after a rebuild."""
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.models import F

from backend.archive import operations
from backend.archive.models import ArchiveRequest, QueueTotal, VolumeGroup
from tests.factories import FileFactory

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "postgresql",
                                 reason="kept by a PostgreSQL trigger")]
NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)


def _both():
    kept = sorted(operations._pending_kept(), key=lambda g: (g["kind"], g["state"],
                                                              g["volume_group__name"] or ""))
    grouped = sorted(({**g, "done": g["done"] if g["state"] == "running" else 0}
                      for g in operations._pending_grouped()),
                     key=lambda g: (g["kind"], g["state"], g["volume_group__name"] or ""))
    return kept, grouped


def _agree():
    kept, grouped = _both()
    assert kept == grouped
    return kept


def test_queue_totals_follow_every_write():
    a = VolumeGroup.objects.create(name="primary-a", role="primary")
    b = VolumeGroup.objects.create(name="backup-b", role="backup")
    files = FileFactory.create_batch(8)
    made = []
    for i, (kind, state, group, size) in enumerate([
            ("migrate", "queued", a, 10), ("migrate", "queued", a, 20),
            ("migrate", "running", b, 30), ("recall", "queued", None, 40),
            ("audit", "queued", None, 0), ("migrate", "done", a, 50),
            ("recall", "failed", None, 60), ("migrate", "queued", b, 70)]):
        made.append(ArchiveRequest.objects.create(
            kind=kind, state=state, priority=2, file=files[i], copy_number=1,
            volume_group=group, bytes_total=size, bytes_done=size // 2,
            created_at=NOW.replace(minute=i)))
    assert len(_agree()) == 5
    made[0].state = "running"
    made[0].save()
    made[1].volume_group = b
    made[1].save()
    _agree()
    ArchiveRequest.objects.filter(state="running").update(bytes_done=F("bytes_total"))
    ArchiveRequest.objects.filter(kind="migrate", state="queued").update(
        bytes_total=F("bytes_total") + 1)
    ArchiveRequest.objects.filter(kind="recall").update(state="queued")
    _agree()
    ArchiveRequest.objects.filter(state="running").update(state="done")
    made[3].delete()
    ArchiveRequest.objects.filter(kind="audit").delete()
    rows = _agree()
    assert {(g["kind"], g["state"]) for g in rows} == {("migrate", "queued"),
                                                       ("recall", "queued")}
    QueueTotal.objects.all().update(requests=0, bytes_total=0)
    assert _both()[0] != _both()[1]
    operations.rebuild_queue_totals()
    _agree()
