"""A stage request states a bound beside its ETA and keeps it: every file ends COMPLETED or
FAILED with its reason by then. A file whose every copy lies on unreadable volumes fails with
the archive's reason, never stuck; a file still live at the bound fails with that reason."""
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, Drive, FileCopy, Volume
from distribution.models import StageFile, StageRequest
from distribution.services import staging_progress

from .conftest import evict

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "/api/tape/v1"


def path_of(f):
    return f"/{f.granule.collection.key}/{f.granule.granule_id}/{f.name}"


def stage(inline, client, files):
    response = inline(client.post, f"{BASE}/stage", json.dumps(
        {"files": [{"path": path_of(f)} for f in files]}), content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["requestId"]


def test_the_bound_is_stated_and_shown_beside_the_eta(alice, inline, collection, archived,
                                                     settings):
    granules = archived(collection, 1)
    evict(granules)
    files = list(granules[0].files.select_related("granule__collection"))
    before = timezone.now()
    Drive.objects.update(state=Drive.State.OFFLINE)  # nobody can estimate: the longest bound
    stage_id = stage(inline, alice, files)
    bound = StageRequest.objects.get(pk=stage_id).bound_at
    assert before + timedelta(seconds=settings.GRANARY_STAGE_BOUND_MAX_S) <= bound
    assert bound <= timezone.now() + timedelta(seconds=settings.GRANARY_STAGE_BOUND_MAX_S)
    status = alice.get(f"{BASE}/stage/{stage_id}").json()
    assert status["boundAt"] == int(bound.timestamp()) and status["etaS"] is None
    console = alice.get(f"/api/v1/stage-requests/{stage_id}/").json()
    assert console["bound_at"] is not None
    # the bound never moves: a later refresh keeps it
    inline(staging_progress.refresh_stage, stage_id)
    assert StageRequest.objects.get(pk=stage_id).bound_at == bound


def test_the_bound_from_an_eta(settings):
    settings.GRANARY_STAGE_BOUND_MAX_S = 86400
    # at least an hour, three times the ETA, at most the longest
    assert [staging_progress.bound_s(e) for e in (0, 100, 2000, 10**6, None)] == [
        3600, 3600, 6000, 86400, 86400]


def test_a_file_on_unreadable_volumes_fails_with_its_reason(alice, inline, collection,
                                                            archived):
    granules = archived(collection, 1)
    evict(granules)
    bad = list(granules[0].files.select_related("granule__collection"))
    Drive.objects.update(state=Drive.State.OFFLINE)
    stage_id = stage(inline, alice, bad)
    # every copy of the files lies on volumes whose media fail to read (both silos)
    labels = set(FileCopy.objects.filter(file__in=bad).values_list("volume__label", flat=True))
    assert len(labels) == 2
    Volume.objects.filter(label__in=labels).update(fault="bad")
    Drive.objects.update(state=Drive.State.IDLE)
    inline(archive.run_until_idle)
    inline(staging_progress.sweep_stages)
    rows = {f.file_id: f for f in StageFile.objects.filter(request_id=stage_id)}
    assert [rows[f.pk].state for f in bad] == ["FAILED"] * len(bad)
    assert all(rows[f.pk].error for f in bad)
    assert StageRequest.objects.get(pk=stage_id).completed_at is not None
    status = {r["path"]: r for r in alice.get(f"{BASE}/stage/{stage_id}").json()["files"]}
    assert all(status[path_of(f)]["error"] for f in bad)


def test_a_file_still_live_at_the_bound_fails_with_that_reason(alice, inline, collection,
                                                               archived):
    granules = archived(collection, 1)
    evict(granules)
    files = list(granules[0].files.select_related("granule__collection"))
    Drive.objects.update(state=Drive.State.OFFLINE)  # the recalls wait; the bound does not
    stage_id = stage(inline, alice, files)
    StageRequest.objects.filter(pk=stage_id).update(
        bound_at=timezone.now() - timedelta(seconds=1))
    inline(staging_progress.sweep_stages)
    rows = list(StageFile.objects.filter(request_id=stage_id))
    assert {f.state for f in rows} == {"FAILED"}
    assert all("bound" in f.error for f in rows)
    assert set(ArchiveRequest.objects.filter(kind="recall", file__in=files)
               .values_list("state", flat=True)) == {"cancelled"}
    assert StageRequest.objects.get(pk=stage_id).completed_at is not None
