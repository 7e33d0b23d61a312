"""Granary's own API over stage requests: who sees them, an operator's priority change moving
the queued recalls (read back from the archive's queue), cancel, and hostile ids."""
import json
import uuid

import pytest

from backend.archive.models import ArchiveRequest, Drive

from .conftest import evict
from .test_tape_api import files_of, path_of

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/v1/stage-requests/"


def _stage(client, files, inline):
    body = json.dumps({"files": [{"path": path_of(f)} for f in files]})
    response = inline(client.post, "/api/tape/v1/stage", body, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["requestId"]


def test_operator_sees_reprioritises_and_cancels_a_users_stage_request(
        alice, bob, operator, collection, archived, inline):
    granules = archived(collection, 2)
    evict(granules)
    files = files_of(granules)
    Drive.objects.update(state=Drive.State.OFFLINE)
    stage_id = _stage(alice, files, inline)

    mine = alice.get(URL).json()["results"]
    assert [s["id"] for s in mine] == [stage_id]
    row = operator.get(URL).json()["results"][0]
    assert row["user"] == alice.user.username and row["file_count"] == len(files)
    assert row["counts"]["SUBMITTED"] == len(files) and row["priority"] == 1
    assert row["volumes_planned"] >= 1
    assert bob.get(URL).json()["results"] == []
    assert bob.get(f"{URL}{stage_id}/").status_code == 404

    assert alice.post(f"{URL}{stage_id}/priority/", {"priority": 0},
                      format="json").status_code == 403
    for bad in ({"priority": 9}, {"priority": "x"}, {}):
        assert operator.post(f"{URL}{stage_id}/priority/", bad, format="json").status_code == 400
    response = operator.post(f"{URL}{stage_id}/priority/", {"priority": 0}, format="json")
    assert response.status_code == 200 and response.json()["priority"] == 0
    recalls = ArchiveRequest.objects.filter(kind="recall", file__in=files)
    assert set(recalls.values_list("priority", flat=True)) == {0}

    for bad in ("nope", str(uuid.uuid4()), "1"):
        assert operator.post(f"{URL}{bad}/cancel/").status_code == 404
    assert bob.post(f"{URL}{stage_id}/cancel/").status_code == 404
    response = operator.post(f"{URL}{stage_id}/cancel/")
    assert response.status_code == 200
    counts = response.json()["counts"]
    assert counts["CANCELLED"] == len(files) and response.json()["completed_at"]


def test_the_site_sets_the_priority_class_of_new_stage_requests(alice, collection, archived,
                                                                inline, settings):
    granules = archived(collection, 1)
    evict(granules)
    files = files_of(granules)
    Drive.objects.update(state=Drive.State.OFFLINE)
    settings.GRANARY_STAGE_PRIORITY = "low"
    stage_id = _stage(alice, files, inline)
    assert alice.get(f"{URL}{stage_id}/").json()["priority"] == 2
    recalls = ArchiveRequest.objects.filter(kind="recall", file__in=files)
    assert set(recalls.values_list("priority", flat=True)) == {2}
