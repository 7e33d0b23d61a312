"""A request's granule counts per state (what a provider polls) equal a GROUP BY over its
granules after each kind of state change: the final states are answered from the request's
counters, the open ones counted."""
import pytest
from django.db.models import Count

from backend.catalog.models import File, Granule
from ingest.models import IngestGranule, IngestRequest
from ingest.services import outcome, pipeline, reporting
from tests.ingest.builders import area, granule, stage

pytestmark = pytest.mark.django_db

URL = "/api/v1/ingest/requests/"


def brute_force(request_id):
    counts = dict.fromkeys(IngestGranule.State.values, 0)
    counts.update(IngestGranule.objects.filter(request_id=request_id).order_by()
                  .values_list("state").annotate(n=Count("pk")))
    return counts


def test_counts_equal_a_group_by_after_every_kind_of_state_change(
        client, provider, collection, drain):
    collection.duplicate_policy = "skip"
    collection.save()
    same = b"delivered twice" * 50
    first = client.post(URL, {"granules": [granule(collection, "D0", [
        stage(provider, "one/D0.dat", data=same)])]}, format="json").json()
    drain()
    assert reporting.state_counts(IngestRequest.objects.get(pk=first["id"]))["archived"] == 1

    specs = [granule(collection, f"G{i}", [stage(provider, f"two/G{i}.dat")], hour=i)
             for i in range(5)]
    specs.append(granule(collection, "D0", [stage(provider, "two/D0.dat", data=same)]))
    broken = area(provider) / "two/G4.dat"
    good = broken.read_bytes()
    broken.write_bytes(b"x" * len(good))   # fails its checksum
    answer = client.post(URL, {"granules": specs}, format="json").json()
    request_id = answer["id"]
    seen = []

    def check():
        request = IngestRequest.objects.get(pk=request_id)
        want = brute_force(request_id)
        assert reporting.state_counts(request) == want
        seen.append({s: n for s, n in want.items() if n})

    check()                                   # submitted: received
    pipeline.run_request(request_id)          # registered, the archive not run yet
    check()                                   # archiving, failed (checksum), archived (link)
    gave_up = Granule.objects.get(granule_id="G0")
    assert outcome.archive_gave_up(gave_up.pk, "its only copy was damaged") == 1
    check()                                   # archiving -> failed
    drain()
    check()                                   # archiving -> archived; the request finished
    broken.write_bytes(good)
    File.objects.filter(granule=gave_up).delete()
    Granule.objects.filter(pk=gave_up.pk).update(state=Granule.State.DELETED)
    assert outcome.retry(IngestRequest.objects.get(pk=request_id)) == 2
    check()                                   # failed -> received
    drain()
    check()                                   # all archived
    assert seen == [
        {"received": 6},
        {"archiving": 4, "archived": 1, "failed": 1},
        {"archiving": 3, "archived": 1, "failed": 2},
        {"archived": 4, "failed": 2},
        {"received": 2, "archived": 4},
        {"archived": 6},
    ]
    detail = client.get(f"{URL}{request_id}/?granules=0").json()
    assert detail["state"] == "completed"
    assert detail["counts"] == dict(brute_force(request_id))
