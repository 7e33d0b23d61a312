"""Issue #34 items 1, 2 and 8: failed granules are found by the console's failed filter, every
granule a provider sees says what it waits for or why it stopped, and the server offers only
the actions that can succeed (no retry of a declared checksum of zeros, no retry or repair
from a damaged only copy), with a redelivery that gives such a granule up and tells its
provider. Expected values are read from the models here, not from the code under test."""
import pytest

from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, CacheEntry, Discrepancy
from backend.archive.services.reconcile import reconcile
from backend.catalog.models import Granule
from console.models import BulkItem, BulkJob
from console.reasons import normalise
from ingest import pdr
from ingest.models import IngestGranule, IngestRequest
from ingest.services import pipeline
from tests.ingest.builders import area, granule, stage

pytestmark = pytest.mark.django_db

GROUPS = "/api/v1/console/failures/groups/"
GRANULES = "/api/v1/console/granules/"


DELIVERED = bytes(range(256)) * 4


def _damaged_delivery(provider, provider_client, collection, inline, granule_id="GD1"):
    """The provider delivers a granule whose cached copy changes before it reaches tape (as
    the demo's "damaged in cache" request): its migrations fail, the cache holds the only
    copy. Returns the ingest request id."""
    spec = granule(collection, granule_id,
                   [stage(provider, f"in/{granule_id}.dat", data=DELIVERED)])
    answer = provider_client.post("/api/v1/ingest/requests/", {"granules": [spec]},
                                  format="json")
    assert answer.status_code == 202, answer.content
    request_id = answer.json()["id"]
    pipeline.run_request(request_id)     # its after-commit nudges (the movers) do not run
    assert Granule.objects.get(granule_id=granule_id).state == "archiving"
    cached = archive.cache_path(Granule.objects.get(granule_id=granule_id).files.get())
    data = bytearray(cached.read_bytes())
    cached.unlink()                      # a hard link to staging: break it first
    data[3] ^= 0xFF
    cached.write_bytes(bytes(data))
    inline(archive.run_until_idle)
    return request_id


def _failed_in_truth():
    """Failed granules read from the models: ingest rows the catalog never had, and catalog
    granules still registered or archiving with a migration failed for good."""
    ingest_only = set(IngestGranule.objects.filter(state="failed", catalog_granule=None)
                      .values_list("granule_id", flat=True))
    stuck = {r.file.granule.granule_id for r in ArchiveRequest.objects.filter(
        kind="migrate", state="failed").select_related("file__granule")
        if r.file.granule.state in ("registered", "archiving")}
    return ingest_only, stuck


def test_the_failed_filter_finds_what_failed_in_ingest_and_in_the_archive(
        operator_api, collections, ingest, provider, provider_client, inline):
    modis, ga = collections
    ingest([(modis, "G1", "zeros"), (modis, "G2", "missing"), (modis, "G3", None)])
    _damaged_delivery(provider, provider_client, ga, inline)
    ingest_only, stuck = _failed_in_truth()
    assert ingest_only == {"G1", "G2"} and stuck == {"GD1"}

    counts = operator_api.get(GRANULES + "counts/").json()
    assert counts["states"]["failed"] == len(ingest_only) + len(stuck)
    # the stuck granule counts once, as failed, not also as archiving
    archiving = Granule.objects.filter(state="archiving").count()
    assert counts["states"]["archiving"] == archiving - len(stuck)
    assert counts["total"] == sum(counts["states"].values())
    # a filter that is not collections only counts the same way
    by_provider = operator_api.get(GRANULES + "counts/", {"provider": "MODAPS"}).json()
    assert by_provider["states"]["failed"] == 3

    listed = operator_api.get(GRANULES, {"state": "failed"}).json()["results"]
    assert {g["granule_id"] for g in listed} == stuck
    assert all("does not match its catalog checksum" in g["failure"] for g in listed)
    assert operator_api.get(GRANULES, {"state": "archiving"}).json()["results"] == []

    failures = operator_api.get(GRANULES + "ingest-failures/", {"state": "failed"}).json()
    assert {f["granule_id"] for f in failures["results"]} == ingest_only
    assert operator_api.get(GRANULES + "ingest-failures/",
                            {"collection": ga.key}).json()["results"] == []
    assert operator_api.get(GRANULES + "ingest-failures/",
                            {"archived_from": "2020-01-01"}).json()["results"] == []
    refused = operator_api.get(GRANULES + "ingest-failures/", {"provider": "NOPE"})
    assert refused.status_code == 400 and "NOPE" in refused.json()["detail"]

    # the Failures page lists the same granules
    groups = operator_api.get(GROUPS).json()
    assert sum(g["count"] for g in groups if g["where"] == "ingest") == len(ingest_only)


def _actions(row, name):
    return next(a for a in row["actions"] if a["action"] == name)


def test_a_checksum_of_zeros_or_a_missing_file_is_not_offered_a_retry(
        operator_api, collections, ingest, provider, provider_client):
    modis, _ = collections
    request_id = ingest([(modis, "G1", "zeros"), (modis, "G2", "missing"),
                         (modis, "G3", "checksum")])
    rows = {r["granule_id"]: r for r in provider_client.get(
        f"/api/v1/ingest/requests/{request_id}/").json()["granules"]}
    zeros, missing, wrong = rows["G1"], rows["G2"], rows["G3"]
    assert all(r["state"] == "failed" and r["stopped"] for r in rows.values())
    assert not _actions(zeros, "retry")["possible"]
    assert "only zeros" in _actions(zeros, "retry")["reason"]
    assert _actions(zeros, "redeliver")["possible"]
    assert "real checksum" in zeros["status"]
    assert not _actions(missing, "retry")["possible"]
    assert "in/G2.dat is not in the staging area" in _actions(missing, "retry")["reason"]
    # another wrong checksum: the provider may replace the staged file, so a retry can help
    assert _actions(wrong, "retry")["possible"]

    # the group retry leaves the hopeless alone, saying why
    group = next(g for g in operator_api.get(GROUPS).json() if "staging area" in g["pattern"])
    assert not _actions(group, "retry")["possible"]
    result = operator_api.post(GROUPS + "retry/", {"key": group["key"]}, format="json").json()
    assert result["retried"] == 0 and "upload it, then retry" in result["not_retried"][0]["reason"]
    assert IngestGranule.objects.get(granule_id="G2").state == "failed"

    # once the file is staged again, a retry can succeed and is offered
    (area(provider) / "in/G2.dat").write_bytes(b"x" * 1000)
    rows = {r["granule_id"]: r for r in provider_client.get(
        f"/api/v1/ingest/requests/{request_id}/").json()["granules"]}
    assert _actions(rows["G2"], "retry")["possible"]


def test_every_state_a_provider_sees_says_what_it_waits_for(provider_client, provider,
                                                             collections):
    modis, _ = collections
    spec = granule(modis, "GW1", [stage(provider, "in/GW1.dat")])
    answer = provider_client.post("/api/v1/ingest/requests/", {"granules": [spec]},
                                  format="json")
    request_id = answer.json()["id"]
    [row] = provider_client.get(f"/api/v1/ingest/requests/{request_id}/").json()["granules"]
    assert row["state"] == "received" and not row["stopped"]
    assert row["status"].startswith("Waiting for an ingest worker")
    for state in ("staged", "validated"):
        IngestGranule.objects.filter(request_id=request_id).update(state=state)
        [row] = provider_client.get(f"/api/v1/ingest/requests/{request_id}/").json()["granules"]
        assert row["status"] and not row["stopped"], row


def test_a_damaged_only_copy_stops_the_granule_and_a_redelivery_finishes_it(
        operator_api, provider, provider_client, collections, inline, drain):
    modis, _ = collections
    request_id = _damaged_delivery(provider, provider_client, modis, inline)
    detail = provider_client.get(f"/api/v1/ingest/requests/{request_id}/").json()
    [row] = detail["granules"]
    assert detail["state"] == "running" and row["state"] == "archiving"
    assert row["stopped"] and "only copy of GD1.dat fails its checksum" in row["status"]
    assert "ask you to deliver the granule again" in row["status"]
    assert not _actions(row, "retry")["possible"]

    # the operator's views offer no retry nor repair, and a redelivery
    stuck = Granule.objects.get(granule_id="GD1")
    page = operator_api.get(f"{GRANULES}{stuck.pk}/").json()
    assert not _actions(page, "retry")["possible"] and _actions(page, "redeliver")["possible"]
    failed = operator_api.get("/api/v1/archive/requests/", {"state": "failed"}).json()
    assert failed["results"] and all(not _actions(r, "retry")["possible"]
                                     for r in failed["results"])
    bulk = operator_api.post("/api/v1/archive/requests/bulk/", {"action": "retry", "all": True},
                             format="json")
    assert bulk.json()["count"] == 0
    run = reconcile(full=True)
    found = {d.kind: d for d in Discrepancy.objects.filter(run=run)}
    assert found["migration_missing"].repair == "" and found["cache_bytes_mismatch"].repair == ""
    shown = operator_api.get("/api/v1/archive/reconciliation/").json()["results"][0]
    for d in shown["discrepancies"]:
        assert d["actions"] and not d["actions"][0]["possible"], d

    # the cache keeps the only copy, and says why
    kept = operator_api.post("/api/v1/archive/cache/release/",
                             {"files": [stuck.files.get().pk]}, format="json")
    assert kept.status_code == 409 and "is dirty" in kept.json()["detail"], kept.content

    # the redelivery gives it up and tells the provider
    answer = operator_api.post(f"{GRANULES}{stuck.pk}/redeliver/",
                               {"reason": "cache disk fault"}, format="json")
    assert answer.status_code == 200, answer.content
    stuck.refresh_from_db()
    assert stuck.state == "failed"
    assert not CacheEntry.objects.filter(file__granule=stuck).exists()
    assert set(ArchiveRequest.objects.filter(file__granule=stuck).values_list(
        "state", flat=True)) == {"cancelled"}
    ingest_row = IngestGranule.objects.get(granule_id="GD1")
    assert ingest_row.state == "failed" and ingest_row.disposition == pdr.ARCHIVE_ERROR
    assert "deliver the granule again" in ingest_row.reason
    assert "cache disk fault" in ingest_row.reason
    assert IngestRequest.objects.get(pk=request_id).state == "failed"
    assert not [g for g in operator_api.get(GROUPS).json() if g["where"] == "archive"]
    again = operator_api.post(f"{GRANULES}{stuck.pk}/redeliver/", {"reason": "twice"},
                              format="json")
    assert again.status_code == 409

    # the provider stages the file again and retries: a new version is archived
    (area(provider) / "in/GD1.dat").write_bytes(DELIVERED)
    rows = provider_client.get(f"/api/v1/ingest/requests/{request_id}/").json()["granules"]
    assert _actions(rows[0], "retry")["possible"]
    retried = provider_client.post(f"/api/v1/ingest/requests/{request_id}/retry/", {},
                                   format="json")
    assert retried.status_code == 202 and retried.json()["retried"] == 1
    drain()
    assert IngestRequest.objects.get(pk=request_id).state == "completed"
    assert Granule.objects.get(granule_id="GD1", state="archived").version == 2


def test_a_redelivery_is_refused_for_a_granule_that_can_still_be_archived(
        operator_api, archived, collections):
    [made] = archived(collections[0], 1)
    answer = operator_api.post(f"{GRANULES}{made.pk}/redeliver/", {"reason": "no"},
                               format="json")
    assert answer.status_code == 409
    assert Granule.objects.get(pk=made.pk).state == "archived"


def test_a_bulk_job_says_why_items_were_skipped_grouped(operator_api, archived, collections):
    granules = archived(collections[0], 5)
    job = BulkJob.objects.create(kind="recall", state="done", granules_total=5,
                                 requested_by=operator_api.user)
    outcomes = ["every file is in the cache already"] * 3 + [
        "its latest ingest (request #4) is archived: nothing to send round again",
        "its latest ingest (request #9) is archived: nothing to send round again"]
    for g, outcome in zip(granules, outcomes, strict=True):
        BulkItem.objects.create(job=job, granule=g, label=str(g), state="skipped",
                                outcome=outcome)
    body = operator_api.get(f"/api/v1/console/bulk/{job.pk}/").json()
    expected = {}
    for outcome in outcomes:
        expected[normalise(outcome)] = expected.get(normalise(outcome), 0) + 1
    assert {g["pattern"]: g["count"] for g in body["outcomes"]} == expected
    assert [g["count"] for g in body["outcomes"]] == [3, 2]
    assert all(g["state"] == "skipped" for g in body["outcomes"])
