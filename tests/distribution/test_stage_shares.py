"""The fair share of drives between kinds of recall as an operator sets it (audited like other
configuration), the kinds the recalls carry into the scheduler, and hostile input on the
weights and stage-request priority endpoints: clear 4xx, nothing changed."""
import json
import uuid

import pytest

from backend.accounts.models import AuditEvent
from backend.archive.models import ArchiveRequest, Drive, RecallShare
from backend.archive.services import manager
from distribution.models import StageRequest

from .conftest import evict

pytestmark = pytest.mark.django_db(transaction=True)

SHARES = "/api/v1/config/recall-shares/"


def path_of(f):
    return f"/{f.granule.collection.key}/{f.granule.granule_id}/{f.name}"


def put(client, document):
    return client.put(SHARES, json.dumps(document), content_type="application/json")


def test_an_operator_sets_weights_audited_and_the_scheduler_reads_them(
        operator, alice, inline, collection, archived):
    board = {r["kind"]: r for r in operator.get(SHARES).json()}
    assert set(board) == {"order", "subscription", "stage", "bulk", ""}
    assert not any(r["set"] for r in board.values())
    response = put(operator, {"weights": {"order": 3, "stage": 1}, "reason": "grid run"})
    assert response.status_code == 200, response.content
    assert dict(RecallShare.objects.values_list("kind", "weight")) == {"order": 3, "stage": 1}
    events = AuditEvent.objects.filter(target_type="recall share").order_by("target_id")
    assert [(e.target_id, e.detail["weight"], e.reason) for e in events] == [
        ("order", [None, 3], "grid run"), ("stage", [None, 1], "grid run")]
    # the same weights again change nothing and record nothing
    put(operator, {"weights": {"order": 3}})
    assert AuditEvent.objects.filter(target_type="recall share").count() == 2

    granules = archived(collection, 2)
    evict(granules)
    Drive.objects.update(state=Drive.State.OFFLINE)
    staged = [f for f in granules[0].files.select_related("granule__collection")]
    inline(alice.post, "/api/tape/v1/stage", json.dumps(
        {"files": [{"path": path_of(f)} for f in staged]}), content_type="application/json")
    inline(alice.post, "/api/v1/orders/", {"granules": [granules[1].pk]}, format="json")
    kinds = dict(ArchiveRequest.objects.filter(kind="recall").values_list("file_id", "share"))
    assert {kinds[f.pk] for f in staged} == {"stage"}
    assert {kinds[f.pk] for f in granules[1].files.all()} == {"order"}
    Drive.objects.update(state=Drive.State.IDLE)
    snap = manager.snapshot(Drive.objects.first().pk)
    assert snap.weights == {"order": 3.0, "stage": 1.0}
    assert {r.share for r in snap.requests if r.kind == "read"} == {"order", "stage"}


@pytest.mark.parametrize("document", [
    [], "x", {}, {"weights": []}, {"weights": {}}, {"weights": {"order": "3"}},
    {"weights": {"order": 3.5}}, {"weights": {"order": True}}, {"weights": {"order": 0}},
    {"weights": {"order": -1}}, {"weights": {"order": 10**30}}, {"weights": {"order": None}},
    {"weights": {"nope": 1}}, {"weights": {"order": 2, "x" * 10_000: 1}},
    {"weights": {"order": 2}, "reason": 7}, {"weights": {"order": 2}, "reason": "r" * 5000},
])
def test_hostile_weights_are_refused_whole(operator, document):
    response = put(operator, document)
    assert response.status_code == 400, response.content
    assert not RecallShare.objects.exists()
    assert not AuditEvent.objects.filter(target_type="recall share").exists()


def deep(levels):
    value = 1
    for _ in range(levels):
        value = {"order": value}
    return value


@pytest.mark.parametrize(("document", "field"), [
    ({"weights": {"order": "3.0"}}, "weights"), ({"weights": {"order": 3.0}}, "weights"),
    ({"weights": {"order": -5}}, "weights"), ({"weights": {"order": [3]}}, "weights"),
    ({"weights": "order=3"}, "weights"), ({"reason": "no weights"}, "weights"),
    ({"weights": deep(20)}, "weights"),
    ({"weights": {f"kind{i}": 1 for i in range(20_000)}}, "weights"),
    ({"weights": {"order": 2}, "reason": ["a"]}, "reason"),
    ([{"weights": {"order": 2}}], "non_field_errors"),
])
def test_hostile_weights_get_the_apis_field_errors(operator, document, field):
    """The serializer reads the body, as every other endpoint's does: a sentence and the field's
    errors, and an error message that stays short whatever the body's size."""
    response = put(operator, document)
    assert response.status_code == 400, response.content
    body = response.json()
    assert set(body) == {"detail", "errors"} and list(body["errors"]) == [field]
    assert len(response.content) < 2000
    assert not RecallShare.objects.exists()


def test_bodies_too_deep_or_too_large_are_refused_before_reading(operator, settings):
    assert put(operator, {"weights": deep(200)}).status_code == 400
    too_big = {"weights": {"order": 2}, "reason": "r" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)}
    assert put(operator, too_big).status_code == 413
    assert not RecallShare.objects.exists()


def test_only_an_operator_reads_or_sets_weights(alice, api):
    assert put(alice, {"weights": {"order": 2}}).status_code == 403
    assert alice.get(SHARES).status_code == 403
    assert api.get(SHARES).status_code in (401, 403)
    assert not RecallShare.objects.exists()


@pytest.fixture
def stage_of_alice(alice, inline, collection, archived):
    granules = archived(collection, 1)
    evict(granules)
    Drive.objects.update(state=Drive.State.OFFLINE)
    f = granules[0].files.select_related("granule__collection").first()
    response = inline(alice.post, "/api/tape/v1/stage", json.dumps(
        {"files": [{"path": path_of(f)}]}), content_type="application/json")
    return response.json()["requestId"]


@pytest.mark.parametrize("value", ["high", 1.5, True, None, [1], {"p": 1}, 99, -1, 10**30,
                                   "1" * 10_000])
def test_hostile_priorities_are_refused(operator, stage_of_alice, value):
    url = f"/api/v1/stage-requests/{stage_of_alice}/priority/"
    response = operator.post(url, {"priority": value}, format="json")
    assert response.status_code == 400, response.content
    assert StageRequest.objects.get(pk=stage_of_alice).priority == StageRequest.Priority.NORMAL


def test_priority_and_cancel_of_others_requests(alice, bob, operator, stage_of_alice):
    url = f"/api/v1/stage-requests/{stage_of_alice}/"
    assert bob.post(f"{url}priority/", {"priority": 0}, format="json").status_code == 403
    assert alice.post(f"{url}priority/", {"priority": 0}, format="json").status_code == 403
    assert bob.post(f"{url}cancel/").status_code == 404
    assert bob.get(url).status_code == 404
    for other in (uuid.uuid4(), "12", "not-a-uuid", "0" * 5000):
        response = operator.post(f"/api/v1/stage-requests/{other}/priority/", {"priority": 0},
                                 format="json")
        assert response.status_code == 404, (other, response.status_code)
    assert operator.post(f"{url}priority/", "garbage", content_type="application/json"
                         ).status_code == 400
    stage = StageRequest.objects.get(pk=stage_of_alice)
    assert stage.priority == StageRequest.Priority.NORMAL
    assert stage.files.filter(state="SUBMITTED").count() == 1
    response = operator.post(f"{url}priority/", {"priority": 0}, format="json")
    assert response.status_code == 200 and response.json()["priority"] == 0
    assert set(ArchiveRequest.objects.filter(kind="recall").values_list("priority", flat=True)
               ) == {0}
