"""A bulk job's items are each done once: the task run twice, two runs racing for the same
chunk, a worker killed mid-item (its effect and its outcome roll back together), cancel
stopping the rest; history in the audit trail."""
import threading

import pytest
from django.db import connection

from backend.accounts.models import AuditEvent
from backend.archive.models import ArchiveRequest
from console.models import BulkItem, BulkJob
from console.services.bulk import actions, runner
from tests.console.bulk_helpers import archive, drive_to_end, release

pytestmark = pytest.mark.django_db


def _job(client, kind, ids, **body):
    answer = client.post("/api/v1/console/bulk/", {"kind": kind, "ids": ids, "reason": "why",
                                                   **body}, format="json")
    assert answer.status_code == 201, answer.json()
    return BulkJob.objects.get(pk=answer.json()["id"])


def _recalls(files):
    return ArchiveRequest.objects.filter(kind="recall", file__in=files).count()


def test_running_a_job_twice_queues_each_recall_once(operator_api, layout, data_root):
    granules = archive(layout[0], data_root, 3)
    release(granules)
    files = [f for g in granules for f in g.files.all()]
    job = _job(operator_api, "recall", [g.pk for g in granules])
    runner.run(job.pk)
    runner.run(job.pk)
    for item in job.items.all():
        assert runner.act(job, item.pk) is False  # the same chunk again: nothing to do
    assert _recalls(files) == len(files)
    assert drive_to_end(job) == "done"
    assert _recalls(files) == len(files)


class Killed(BaseException):
    """What a worker dying mid-item looks like to the code above it."""


def test_a_worker_killed_mid_item_leaves_neither_effect_nor_outcome(
        operator_api, layout, data_root, monkeypatch):
    granules = archive(layout[0], data_root, 2)
    release(granules)
    files = [f for g in granules for f in g.files.all()]
    job = _job(operator_api, "recall", [g.pk for g in granules])
    real = actions.START["recall"]

    def recall_then_die(job, granule):
        real(job, granule)
        assert _recalls(granule.files.all()) == 2  # the effect was made, uncommitted
        raise Killed

    monkeypatch.setitem(actions.START, "recall", recall_then_die)
    with pytest.raises(Killed):
        runner.run(job.pk)
    assert _recalls(files) == 0
    assert set(job.items.values_list("state", flat=True)) == {"pending"}

    monkeypatch.setitem(actions.START, "recall", real)
    assert drive_to_end(job) == "done"
    assert _recalls(files) == len(files)
    assert set(job.items.values_list("state", flat=True)) == {"done"}


def test_cancel_stops_the_items_not_started(operator_api, layout, data_root, settings):
    granules = archive(layout[0], data_root, 4)
    job = _job(operator_api, "verify", [g.pk for g in granules])
    first, second = job.items.order_by("pk")[:2]
    runner.act(job, first.pk)
    runner.act(job, second.pk)

    answer = operator_api.post(f"/api/v1/console/bulk/{job.pk}/cancel/", {"reason": "enough"},
                               format="json")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["counts"]["cancelled"] == 2
    assert drive_to_end(job) == "cancelled"
    states = dict(job.items.values_list("pk", "state"))
    assert states[first.pk] == states[second.pk] == "done"
    assert sorted(states.values()) == ["cancelled", "cancelled", "done", "done"]
    audits = ArchiveRequest.objects.filter(kind="audit")
    assert {a.file.granule_id for a in audits} == {granules[0].pk, granules[1].pk}
    again = operator_api.post(f"/api/v1/console/bulk/{job.pk}/cancel/", {}, format="json")
    assert again.status_code == 409


def test_history_says_who_when_what_and_the_outcome(operator_api, layout, data_root):
    granules = archive(layout[0], data_root, 2)
    query = {"collection": layout[0].key}
    answer = operator_api.post("/api/v1/console/bulk/", {"kind": "verify", "query": query,
                                                        "reason": "yearly check"},
                               format="json")
    job = BulkJob.objects.get(pk=answer.json()["id"])
    drive_to_end(job)
    listed = operator_api.get("/api/v1/console/bulk/").json()["results"][0]
    assert listed["id"] == job.pk and listed["query"] == query
    assert listed["requested_by"] == operator_api.user.username
    assert listed["reason"] == "yearly check" and listed["state"] == "done"
    assert listed["granules_total"] == 2
    assert listed["bytes_total"] == sum(g.total_size for g in granules)
    assert listed["counts"]["done"] == 2 and listed["percent_done"] == 100.0
    assert listed["started_at"] and listed["finished_at"]
    actions_recorded = list(AuditEvent.objects.filter(target_type="bulk_job",
                                                      target_id=str(job.pk))
                            .order_by("pk").values_list("action", "actor_name"))
    assert actions_recorded == [("bulk.verify", operator_api.user.username),
                                ("bulk.verify.done", "system")]


def test_items_page_filters_by_state(operator_api, layout, data_root):
    granules = archive(layout[0], data_root, 3)
    release(granules[:1])
    job = _job(operator_api, "recall", [g.pk for g in granules])
    drive_to_end(job)
    skipped = operator_api.get(f"/api/v1/console/bulk/{job.pk}/items/?state=skipped").json()
    assert sorted(i["granule"] for i in skipped["results"]) == sorted(g.pk for g in granules[1:])
    assert all(i["outcome"] == "every file is in the cache already" for i in skipped["results"])
    everything = operator_api.get(f"/api/v1/console/bulk/{job.pk}/items/?limit=2").json()
    assert len(everything["results"]) == 2 and everything["next"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs concurrent connections")
@pytest.mark.django_db(transaction=True)
def test_two_workers_racing_on_one_job_do_each_item_once(operator_api, layout, data_root):
    granules = archive(layout[0], data_root, 6)
    release(granules)
    files = [f for g in granules for f in g.files.all()]
    job = _job(operator_api, "recall", [g.pk for g in granules])
    errors = []

    def work():
        try:
            runner.run(job.pk)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert _recalls(files) == len(files)
    assert set(BulkItem.objects.filter(job=job).values_list("state", flat=True)) == {"waiting"}
