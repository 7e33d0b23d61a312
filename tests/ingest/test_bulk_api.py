"""The bulk ingest API: happy path to ARCHIVED, progress, idempotency, retry."""
import pytest

from backend.archive.models import FileCopy
from backend.catalog.models import Granule
from backend.metrics.models import TransferRecord, TransferRollup
from ingest.models import IngestGranule, IngestRequest
from ingest.services import periodic, pipeline
from tests.factories import ProviderFactory
from tests.ingest.builders import area, granule, stage, staged_granules

pytestmark = pytest.mark.django_db

URL = "/api/v1/ingest/requests/"


def test_bulk_request_reaches_archived_with_verified_copies(client, provider, collection, drain):
    granules = staged_granules(provider, collection, 5, sizes=(3000, 700))
    answer = client.post(URL, {"granules": granules}, format="json")
    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert body["url"].endswith(f"/api/v1/ingest/requests/{body['id']}/")
    assert answer["Location"] == body["url"]
    assert (body["state"], body["granule_count"], body["bytes_total"]) == ("received", 5, 18500)

    detail = client.get(body["url"]).json()
    assert detail["counts"]["received"] == 5 and detail["percent_done"] == 0
    assert [g["state"] for g in detail["granules"]] == ["received"] * 5

    drain()

    detail = client.get(body["url"]).json()
    assert detail["state"] == "completed", detail
    assert detail["percent_done"] == 100.0
    assert detail["counts"]["archived"] == 5 and detail["archived_count"] == 5
    assert all(g["state"] == "archived" and g["bytes_done"] == g["bytes_total"]
               for g in detail["granules"])
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 5
    archived = Granule.objects.get(granule_id="G00002")
    assert archived.bbox == [-10.0, -10.0, 10.0, 10.0]
    assert archived.attributes == {"day_night": "Day"}
    assert archived.temporal_start.hour == 2
    # every file has both copies written and verified
    assert FileCopy.objects.filter(state="verified").count() == 5 * 2 * 2
    records = TransferRecord.objects.filter(direction="ingest")
    assert sum(r.bytes for r in records) == 18500 and sum(r.transfers for r in records) == 5
    assert {r.collection_id for r in records} == {collection.pk}
    # the roll-ups count the five granules, whatever the records' grain
    days = TransferRollup.objects.filter(direction="ingest", period="day")
    assert sum(d.transfers for d in days) == 5 and sum(d.bytes for d in days) == 18500


def test_states_on_the_way_and_the_granules_filter(client, provider, collection):
    granules = staged_granules(provider, collection, 3)
    granules[1]["files"][0]["checksum"] = "0" * 32
    body = client.post(URL, {"granules": granules}, format="json").json()
    pipeline.run_request(body["id"])
    detail = client.get(body["url"]).json()
    assert detail["counts"] == {"received": 0, "staged": 0, "validated": 0, "archiving": 2,
                                "archived": 0, "failed": 1}
    assert detail["state"] == "running"
    assert 0 < detail["percent_done"] < 100
    failed = client.get(body["url"] + "?state=failed").json()["granules"]
    assert [g["granule_id"] for g in failed] == ["G00001"]
    assert failed[0]["disposition"] == "CHECKSUM VERIFICATION FAILURE"
    assert "the provider declared 000" in failed[0]["reason"]
    assert "granules" not in client.get(body["url"] + "?granules=0").json()


def test_same_idempotency_key_or_same_body_makes_no_duplicate(client, provider, collection):
    granules = staged_granules(provider, collection, 2)
    first = client.post(URL, {"granules": granules}, format="json",
                        HTTP_IDEMPOTENCY_KEY="batch-0001")
    again = client.post(URL, {"granules": granules}, format="json",
                        HTTP_IDEMPOTENCY_KEY="batch-0001")
    same_body = client.post(URL, {"granules": granules}, format="json")
    assert first.status_code == 202
    assert again.status_code == 200 and same_body.status_code == 200
    assert first.json()["id"] == again.json()["id"] == same_body.json()["id"]
    assert IngestRequest.objects.count() == 1 and IngestGranule.objects.count() == 2

    other = staged_granules(provider, collection, 1, prefix="H")
    clash = client.post(URL, {"granules": other}, format="json",
                        HTTP_IDEMPOTENCY_KEY="batch-0001")
    assert clash.status_code == 409
    assert "Idempotency-Key 'batch-0001' was already used" in clash.json()["detail"]
    assert IngestRequest.objects.count() == 1


def test_a_failed_granule_can_be_retried(client, provider, collection, drain):
    granules = staged_granules(provider, collection, 3)
    missing = area(provider) / granules[2]["files"][0]["path"]
    data = missing.read_bytes()
    missing.unlink()
    body = client.post(URL, {"granules": granules}, format="json").json()
    drain()
    detail = client.get(body["url"]).json()
    assert detail["state"] == "failed" and detail["failed_count"] == 1
    assert detail["percent_done"] == 100.0
    [bad] = [g for g in detail["granules"] if g["state"] == "failed"]
    assert bad["disposition"] == "ALL FILE GROUPS/FILES NOT FOUND"
    assert "not found in the staging area of MODAPS: in/G00002.0.dat" in bad["reason"]
    assert detail["counts"]["archived"] == 2  # the others were not held up

    missing.write_bytes(data)
    retried = client.post(body["url"] + "retry/", {}, format="json")
    assert retried.status_code == 202 and retried.json()["retried"] == 1
    assert retried.json()["state"] == "running"
    drain()
    detail = client.get(body["url"]).json()
    assert detail["state"] == "completed" and detail["archived_count"] == 3
    assert detail["failed_count"] == 0
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 3


def test_requests_of_many_granules_go_in_chunks(client, provider, collection, settings,
                                                django_capture_on_commit_callbacks, eager):
    settings.GRANARY_INGEST_CHUNK = 40
    granules = [granule(collection, f"S{i:04d}", [stage(provider, f"s/S{i:04d}.dat", size=50)],
                        hour=i) for i in range(300)]
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(URL, {"granules": granules}, format="json")
    assert answer.status_code == 202
    request = IngestRequest.objects.get()
    assert request.state == "completed" and request.archived_count == 300
    assert not IngestGranule.objects.exclude(state="archived").exists()
    assert all(g.attempts == 1 for g in IngestGranule.objects.all())


def test_large_granules_go_in_chunks_of_their_own(client, provider, collection, settings,
                                                 django_capture_on_commit_callbacks):
    """A chunk ends at the granule that brings it to GRANARY_INGEST_CHUNK_BYTES, so two ingest
    workers check large granules side by side instead of one reading them all."""
    settings.GRANARY_INGEST_CHUNK, settings.GRANARY_INGEST_CHUNK_BYTES = 1000, 100
    sizes = [60, 60, 150, 10, 10, 10, 90, 5]
    granules = [granule(collection, f"L{i}", [stage(provider, f"l/L{i}.dat", size=n)], hour=i)
                for i, n in enumerate(sizes)]
    with django_capture_on_commit_callbacks(execute=False):
        assert client.post(URL, {"granules": granules}, format="json").status_code == 202
    # by hand: [60, 60] reaches 120; [150]; [10, 10, 10, 90] reaches 120; [5] is what is left
    assert pipeline.kick(IngestRequest.objects.get().pk) == 4


def test_only_own_requests_are_visible(client, provider, collection, user_api, operator_api):
    body = client.post(URL, {"granules": staged_granules(provider, collection, 1)},
                       format="json").json()
    assert client.get(URL).json()["results"][0]["id"] == body["id"]
    assert user_api.get(URL).status_code == 403
    assert operator_api.get(body["url"]).status_code == 200
    other = operator_api.get(URL).json()["results"]
    assert [r["id"] for r in other] == [body["id"]]


def test_staged_copies_go_after_the_retention(client, provider, collection, drain, settings):
    granules = staged_granules(provider, collection, 2)
    client.post(URL, {"granules": granules}, format="json")
    drain()
    paths = [area(provider) / f["path"] for g in granules for f in g["files"]]
    settings.GRANARY_STAGING_RETENTION_S = 3600
    assert periodic.clean_staging() == 0 and all(p.exists() for p in paths)
    settings.GRANARY_STAGING_RETENTION_S = 0
    assert periodic.clean_staging() == 2
    assert not any(p.exists() for p in paths)
    # the archive still has its copies
    assert FileCopy.objects.filter(state="verified").count() == 4


def test_other_providers_see_nothing(client, provider, collection, provider_api):
    body = client.post(URL, {"granules": staged_granules(provider, collection, 1)},
                       format="json").json()
    answer = provider_api.get(body["url"])
    assert answer.status_code == 404
    assert answer.json() == {"detail": f"There is no ingest request {body['id']} of yours."}
    assert provider_api.post(body["url"] + "retry/", {}, format="json").status_code == 404
    assert provider_api.post(URL, {"granules": []}, format="json").json() == {
        "detail": "Your account belongs to no provider; an operator can add it."}


def test_retry_only_the_positions_asked_for(client, provider, collection):
    granules = staged_granules(provider, collection, 3)
    for g in granules:
        g["files"][0]["size"] += 1
    body = client.post(URL, {"granules": granules}, format="json").json()
    pipeline.run_request(body["id"])
    answer = client.post(body["url"] + "retry/", {"positions": [0, 2]}, format="json").json()
    assert answer["retried"] == 2 and answer["failed_count"] == 1
    states = dict(IngestGranule.objects.values_list("position", "state"))
    assert states == {0: "received", 1: "failed", 2: "received"}


def test_who_a_request_is_delivered_for(client, provider, collection, operator_api):
    """An operator names the provider; a provider's user delivers only for its own."""
    body = {"granules": staged_granules(provider, collection, 1)}
    answer = operator_api.post(URL, body, format="json")
    assert answer.status_code == 400 and answer.json() == {
        "detail": "provider: Name the provider this is for.",
        "errors": {"provider": ["Name the provider this is for."]}}
    answer = operator_api.post(URL, {**body, "provider": "NOBODY"}, format="json")
    assert answer.status_code == 400
    assert answer.json()["errors"] == {"provider": ["There is no provider NOBODY."]}
    assert operator_api.post(URL, {**body, "provider": "MODAPS"},
                             format="json").status_code == 202

    ProviderFactory(name="OTHER")
    answer = client.post(URL, {**body, "provider": "OTHER"}, format="json")
    assert answer.status_code == 403
    assert answer.json() == {"detail": "You do not deliver for provider OTHER."}
    ProviderFactory(name="SECOND").members.add(client.user)
    answer = client.post(URL, body, format="json")
    assert answer.status_code == 400
    assert answer.json()["errors"] == {"provider": ["You deliver for several providers; name one."]}
