"""A stage request cancelled or deleted leaves alone the recalls an operator's bulk recall job
waits for (the console tells the archive which files it still needs), and cancels the others.
Expected values are the archive's recall rows and the job's items, not the API's answers."""
import json

import pytest

from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, Drive
from console.models import BulkItem, BulkJob
from console.services.bulk import needs, runner

from .conftest import client_for, evict

pytestmark = pytest.mark.django_db(transaction=True)


def path_of(f):
    return f"/{f.granule.collection.key}/{f.granule.granule_id}/{f.name}"


def files_of(granule):
    return list(granule.files.select_related("granule__collection").order_by("pk"))


def recall_states(files):
    return [ArchiveRequest.objects.filter(kind="recall", file=f).latest("pk").state
            for f in files]


@pytest.fixture
def alice(db):
    return client_for()


@pytest.fixture
def on_tape(collections, archived):
    """Two granules on tape only, every drive offline: recalls queue and stay queued."""
    granules = archived(collections[0], 2)
    evict(granules)
    Drive.objects.update(state=Drive.State.OFFLINE)
    return granules


def stage_all(inline, client, files):
    response = inline(client.post, "/api/tape/v1/stage",
                      json.dumps({"files": [{"path": path_of(f)} for f in files]}),
                      content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["requestId"]


def bulk_recall(inline, operator_api, granule):
    answer = operator_api.post("/api/v1/console/bulk/", {"kind": "recall", "ids": [granule.pk],
                                                         "reason": "reprocessing"},
                               format="json")
    assert answer.status_code == 201, answer.content
    job = BulkJob.objects.get(pk=answer.json()["id"])
    inline(runner.run, job.pk)
    assert job.items.get().state == BulkItem.State.WAITING
    return job


@pytest.mark.parametrize("how", ["cancel", "delete"])
def test_a_cancelled_stage_request_keeps_the_recalls_a_bulk_recall_waits_for(
        how, alice, operator_api, inline, on_tape):
    wanted, alone = files_of(on_tape[0]), files_of(on_tape[1])
    stage_id = stage_all(inline, alice, wanted + alone)
    job = bulk_recall(inline, operator_api, on_tape[0])
    # the job shares the stage request's recalls (one per file)
    assert ArchiveRequest.objects.filter(kind="recall").count() == len(wanted + alone)

    if how == "cancel":
        response = inline(alice.post, f"/api/tape/v1/stage/{stage_id}/cancel",
                          json.dumps({"paths": [path_of(f) for f in wanted + alone]}),
                          content_type="application/json")
    else:
        response = inline(alice.delete, f"/api/tape/v1/stage/{stage_id}")
    assert response.status_code == 200, response.content
    assert recall_states(wanted) == ["queued"] * len(wanted)
    assert recall_states(alone) == ["cancelled"] * len(alone)

    # the job's recalls go on to the end: its item is done with the files in the cache
    Drive.objects.update(state=Drive.State.IDLE)
    inline(archive.run_until_idle)
    inline(runner.run, job.pk)
    assert job.items.get().state == BulkItem.State.DONE
    assert all(archive.cache_path(f).exists() for f in wanted)


def test_without_a_bulk_recall_the_recalls_are_cancelled(alice, inline, on_tape):
    files = files_of(on_tape[0])
    stage_id = stage_all(inline, alice, files)
    response = inline(alice.post, f"/api/tape/v1/stage/{stage_id}/cancel",
                      json.dumps({"paths": [path_of(f) for f in files]}),
                      content_type="application/json")
    assert response.status_code == 200, response.content
    assert recall_states(files) == ["cancelled"] * len(files)


def test_the_console_tells_only_waiting_recall_jobs(operator_api, inline, on_tape):
    """A job cancelled, or a bulk item already done, waits for nothing."""
    job = bulk_recall(inline, operator_api, on_tape[0])
    ids = {f.pk for g in on_tape for f in g.files.all()}
    assert needs.files_waited_for(ids) == {f.pk for f in on_tape[0].files.all()}
    BulkJob.objects.filter(pk=job.pk).update(state=BulkJob.State.CANCELLED)
    assert needs.files_waited_for(ids) == set()
