"""Stage requests' derived state is checked by reconciliation: a disk-lifetime keep left on the
cache after its stage file was released (nothing else holding the file) is reported and its
repair ends it; a request past its bound with files still waiting is reported and its repair
fails them with the bound's reason. Expected values come from what the test staged."""
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from backend.archive import invariants
from backend.archive.models import CacheEntry, Drive
from backend.archive.services import reconcile
from distribution.models import StageFile, StageRequest
from distribution.services import stage_checks

from .conftest import evict

pytestmark = pytest.mark.django_db(transaction=True)
BASE = "/api/tape/v1"
KINDS = (stage_checks.STAGE_KEEP_ORPHAN, stage_checks.STAGE_PAST_BOUND)


def path_of(f):
    return f"/{f.granule.collection.key}/{f.granule.granule_id}/{f.name}"


def stage(inline, client, files, lifetime=3600):
    response = inline(client.post, f"{BASE}/stage", json.dumps(
        {"files": [{"path": path_of(f), "diskLifetime": lifetime} for f in files]}),
        content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["requestId"]


def found():
    return sorted((v.kind, v.file_id or v.extra["stage"]) for v in invariants.check_records()
                  if v.kind in KINDS)


def test_a_keep_left_after_a_release_is_reported_and_ended(alice, bob, inline, collection,
                                                           archived):
    [granule] = archived(collection, 1)
    files = list(granule.files.select_related("granule__collection"))
    first, second = files[0], files[1]
    stage_id = stage(inline, alice, files)
    rows = {f.file_id: f for f in StageFile.objects.filter(request_id=stage_id)}
    assert {f.state for f in rows.values()} == {"COMPLETED"}
    kept = dict(CacheEntry.objects.filter(file__in=files).values_list("file_id", "keep_until"))
    assert kept == {f.pk: rows[f.pk].kept_until for f in files}
    assert found() == []
    # released, but the keep was never ended (a worker died between the two)
    StageFile.objects.filter(request_id=stage_id).update(released=True)
    assert found() == sorted((stage_checks.STAGE_KEEP_ORPHAN, f.pk) for f in files)
    # bob's unreleased stage of the second file holds it: only the first is left behind
    stage(inline, bob, [second], lifetime=60)
    assert found() == [(stage_checks.STAGE_KEEP_ORPHAN, first.pk)]

    run = reconcile.reconcile(repair=True)
    [d] = run.discrepancies.filter(kind=stage_checks.STAGE_KEEP_ORPHAN)
    assert d.file_id == first.pk and d.repaired_at and d.outcome.endswith("ended")
    after = dict(CacheEntry.objects.filter(file__in=files).values_list("file_id", "keep_until"))
    assert after == {first.pk: None, second.pk: kept[second.pk]}
    assert found() == []


def test_a_request_past_its_bound_with_files_waiting_is_reported_and_failed(
        alice, inline, collection, archived):
    granules = archived(collection, 1)
    evict(granules)
    files = list(granules[0].files.select_related("granule__collection"))
    Drive.objects.update(state=Drive.State.OFFLINE)   # the recalls wait
    stage_id = stage(inline, alice, files)
    now = timezone.now()
    StageRequest.objects.filter(pk=stage_id).update(bound_at=now - timedelta(seconds=5))
    assert found() == []   # within the sweep's grace: the beat enforces it
    StageRequest.objects.filter(pk=stage_id).update(
        bound_at=now - timedelta(seconds=stage_checks.BOUND_GRACE_S + 5))
    assert found() == [(stage_checks.STAGE_PAST_BOUND, stage_id)]

    run = inline(reconcile.reconcile, repair=True)
    [d] = run.discrepancies.filter(kind=stage_checks.STAGE_PAST_BOUND)
    assert d.repaired_at and d.outcome == f"failed {len(files)} files past the bound"
    rows = list(StageFile.objects.filter(request_id=stage_id))
    assert {f.state for f in rows} == {"FAILED"} and all("bound" in f.error for f in rows)
    assert StageRequest.objects.get(pk=stage_id).completed_at is not None
    assert found() == []
