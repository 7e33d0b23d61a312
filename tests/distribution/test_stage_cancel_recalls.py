"""Cancelling or deleting a stage request cancels the recalls only it needed, and never one an
order or another stage request still waits for. The archive's own recall rows are the
expected values, never the API's answer."""
import json

import pytest

from backend.archive.models import ArchiveRequest, Drive
from distribution.models import OrderItem

from .conftest import evict

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "/api/tape/v1"


def path_of(f):
    return f"/{f.granule.collection.key}/{f.granule.granule_id}/{f.name}"


def post(client, url, document):
    return client.post(url, json.dumps(document), content_type="application/json")


def recall_state(f):
    return ArchiveRequest.objects.filter(kind="recall", file=f).latest("pk").state


@pytest.fixture
def on_tape(collection, archived):
    """Three granules whose files are on tape only, with every drive offline: recalls queue."""
    granules = archived(collection, 3)
    evict(granules)
    Drive.objects.update(state=Drive.State.OFFLINE)
    return granules


def stage(inline, client, files):
    response = inline(post, client, f"{BASE}/stage", {"files": [{"path": path_of(f)}
                                                               for f in files]})
    assert response.status_code == 201, response.content
    return response.json()["requestId"]


def files_of(granule):
    return list(granule.files.select_related("granule__collection").order_by("pk"))


def test_cancel_drops_only_the_recalls_nobody_else_needs(alice, bob, inline, on_tape):
    mine, ordered, shared = (files_of(g) for g in on_tape)
    first = stage(inline, alice, mine + ordered + shared)
    other = stage(inline, bob, shared)
    order = inline(bob.post, "/api/v1/orders/", {"granules": [on_tape[1].pk]}, format="json")
    assert order.status_code == 201, order.content
    assert OrderItem.objects.filter(file__in=ordered, state="waiting").count() == len(ordered)
    queued = ArchiveRequest.objects.filter(kind="recall", state="queued")
    assert queued.count() == len(mine + ordered + shared)

    response = inline(post, alice, f"{BASE}/stage/{first}/cancel",
                      {"paths": [path_of(f) for f in mine + ordered + shared]})
    assert response.status_code == 200, response.content
    assert [recall_state(f) for f in mine] == ["cancelled"] * len(mine)
    assert "cancelled by the client" in ArchiveRequest.objects.filter(
        kind="recall", file=mine[0]).latest("pk").error
    # the order and the other stage request still wait for theirs
    assert [recall_state(f) for f in ordered + shared] == ["queued"] * len(ordered + shared)

    assert inline(bob.delete, f"{BASE}/stage/{other}").status_code == 200
    assert [recall_state(f) for f in shared] == ["cancelled"] * len(shared)
    assert [recall_state(f) for f in ordered] == ["queued"] * len(ordered)


def test_the_operators_cancel_and_a_running_recall(alice, operator, inline, on_tape):
    files = files_of(on_tape[0])
    stage_id = stage(inline, alice, files)
    running = ArchiveRequest.objects.get(kind="recall", file=files[0])
    ArchiveRequest.objects.filter(pk=running.pk).update(state="running")
    response = inline(operator.post, f"/api/v1/stage-requests/{stage_id}/cancel/")
    assert response.status_code == 200, response.content
    assert response.json()["counts"]["CANCELLED"] == len(files)
    # bytes already moving are not thrown away; the queued one is
    assert recall_state(files[0]) == "running"
    assert [recall_state(f) for f in files[1:]] == ["cancelled"] * (len(files) - 1)


def test_a_file_asked_again_after_a_cancel_gets_a_fresh_recall(alice, inline, on_tape):
    files = files_of(on_tape[0])
    first = stage(inline, alice, files)
    inline(post, alice, f"{BASE}/stage/{first}/cancel", {"paths": [path_of(files[0])]})
    assert recall_state(files[0]) == "cancelled"
    stage(inline, alice, files[:1])
    assert recall_state(files[0]) == "queued"
    assert ArchiveRequest.objects.filter(kind="recall", file=files[0]).count() == 2


def test_staged_files_start_when_their_recalls_did_and_the_request_with_the_first(
        alice, inline, on_tape):
    """A batch of recalls lands: each stage file takes its own recall's start, the request
    the earliest of them (the recall rows are the expected values)."""
    from datetime import timedelta

    from django.utils import timezone

    from distribution.models import StageFile, StageRequest
    from distribution.services import staging_progress

    files = files_of(on_tape[0]) + files_of(on_tape[1])
    stage_id = stage(inline, alice, files)
    rows = list(StageFile.objects.filter(request_id=stage_id).order_by("pk"))
    assert all(r.recall_request_id for r in rows)
    base = timezone.now() - timedelta(hours=1)
    for n, row in enumerate(reversed(rows)):
        ArchiveRequest.objects.filter(pk=row.recall_request_id).update(
            started_at=base + timedelta(minutes=n))
    staging_progress.on_files_recalled([r.file_id for r in rows])
    starts = dict(ArchiveRequest.objects.filter(pk__in=[r.recall_request_id for r in rows])
                  .values_list("pk", "started_at"))
    for row in StageFile.objects.filter(request_id=stage_id):
        assert row.state == StageFile.State.COMPLETED
        assert row.started_at == starts[row.recall_request_id]
    assert StageRequest.objects.get(pk=stage_id).started_at == min(starts.values()) == base
