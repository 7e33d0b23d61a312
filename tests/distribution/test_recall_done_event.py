"""A stage (recall) request that finishes writes one `recall.done` event, in the transaction
that marks it complete, naming its files and their states; its owner and operators see it,
another user does not. Expected states are the ones the test set up (recalled, cancelled)."""
import json

import pytest

from backend.archive import services as archive
from backend.archive.models import Drive
from backend.events.models import Event
from distribution.models import StageRequest
from distribution.services import staging_progress

from .conftest import client_for, evict

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "/api/tape/v1"


def path_of(f):
    return f"/{f.granule.collection.key}/{f.granule.granule_id}/{f.name}"


def test_a_finished_recall_request_tells_its_owner_once_with_its_files(
        alice, bob, operator, collection, archived, inline):
    granules = archived(collection, 2)
    evict(granules)
    files = [f for g in granules for f in g.files.select_related("granule__collection")
             .order_by("pk")]
    Drive.objects.update(state=Drive.State.OFFLINE)  # the recalls wait
    answer = inline(alice.post, f"{BASE}/stage", json.dumps(
        {"files": [{"path": path_of(f)} for f in files]}), content_type="application/json")
    stage_id = answer.json()["requestId"]
    assert not Event.objects.filter(type="recall.done").exists()  # nothing finished yet
    cancelled = files[0]
    inline(alice.post, f"{BASE}/stage/{stage_id}/cancel",
           json.dumps({"paths": [path_of(cancelled)]}), content_type="application/json")
    assert not Event.objects.filter(type="recall.done").exists()
    Drive.objects.update(state=Drive.State.IDLE)
    inline(archive.run_until_idle)
    inline(staging_progress.sweep_stages)
    inline(staging_progress.sweep_stages)  # a second sweep tells nothing new
    assert StageRequest.objects.get(pk=stage_id).completed_at is not None
    told = Event.objects.get(type="recall.done")
    assert told.subject == f"stage-requests/{stage_id}" and told.user == alice.user
    data = told.data
    assert data["stage_request"] == stage_id and data["file_count"] == len(files)
    assert {f["path"]: f["state"] for f in data["files"]} == {
        path_of(f): ("CANCELLED" if f == cancelled else "COMPLETED") for f in files}
    assert data["states"]["COMPLETED"] == len(files) - 1 and data["states"]["CANCELLED"] == 1
    assert data["links"]["tape_rest"].endswith(f"/api/tape/v1/stage/{stage_id}")

    def seen(client):
        return [e["type"] for e in client.get("/api/v1/events/?type=recall.done")
                .json()["results"]]
    assert seen(alice) == ["org.granary.recall.done"]
    assert seen(operator) == ["org.granary.recall.done"]
    assert seen(bob) == []
    assert seen(client_for()) == []
