"""An ingest worker's lease is short and kept while it works: a killed worker's granules are
taken again once its lease runs out, and a live worker's long checksum is never taken from it."""
import time

import pytest
from django.utils import timezone

from backend.archive import services as archive
from ingest.models import IngestGranule, IngestRequest
from ingest.services import periodic, pipeline
from tests.ingest.builders import staged_granules

URL = "/api/v1/ingest/requests/"
LEASE_S = 1


def submit(client, provider, collection, count=3):
    answer = client.post(URL, {"granules": staged_granules(provider, collection, count)},
                         format="json")
    assert answer.status_code == 202
    return IngestRequest.objects.get(pk=answer.json()["id"])


def sleep_past(moment):
    time.sleep(max(0.0, (moment - timezone.now()).total_seconds()) + 0.05)


@pytest.mark.django_db
def test_a_killed_workers_granules_are_taken_again_once_its_short_lease_runs_out(
        client, provider, collection, settings, eager, django_capture_on_commit_callbacks):
    settings.GRANARY_INGEST_LEASE_S = LEASE_S
    request = submit(client, provider, collection)
    # a worker claims the chunk and is killed -9 before its keeper renews anything
    assert pipeline.claim_chunk(request.pk, 0, 3, "killed-worker") == 3
    lease_until = IngestGranule.objects.get(position=0).lease_until
    # its lease is live: nobody takes the granules, the sweeper sends nothing
    assert pipeline.process_chunk(request.pk, 0, 3) == 0
    assert periodic.sweep()["kicked"] == 0

    sleep_past(lease_until)
    # lapsed unrenewed: sent again by the next sweep, not after the stale time (600 s here)
    assert settings.GRANARY_INGEST_STALE_S > 100 * LEASE_S
    with django_capture_on_commit_callbacks(execute=True):
        assert periodic.sweep()["kicked"] == 1
    request.refresh_from_db()
    assert request.state == "completed" and request.archived_count == 3
    assert [g.attempts for g in IngestGranule.objects.all()] == [2, 2, 2]


@pytest.mark.django_db(transaction=True)
def test_a_live_worker_keeps_its_lease_through_a_check_longer_than_the_lease(
        client, provider, collection, settings, monkeypatch):
    """The keeper renews in a thread of its own (committed rows: a transactional test)."""
    settings.GRANARY_INGEST_LEASE_S = LEASE_S
    request = submit(client, provider, collection)
    real_verify, seen = pipeline._Chunk._verify, {}

    def slow_verify(chunk, row):
        if not seen:   # the first granule's checksum takes 2.5 leases
            claimed = IngestGranule.objects.get(pk=row.pk).lease_until
            time.sleep(2.5 * LEASE_S)
            now = timezone.now()
            seen["first lease"] = claimed < now
            seen["leases"] = list(IngestGranule.objects.values_list("lease_until", flat=True))
            seen["now"] = now
            seen["second worker took"] = pipeline.process_chunk(request.pk, 0, 3)
            seen["sweep sent"] = periodic.lapsed(timezone.now())
        return real_verify(chunk, row)

    monkeypatch.setattr(pipeline._Chunk, "_verify", slow_verify)
    assert pipeline.run_request(request.pk) == 3
    assert seen["first lease"]   # the lease it claimed with ran out meanwhile ...
    assert all(until > seen["now"] for until in seen["leases"])   # ... renewed
    assert seen["second worker took"] == 0 and seen["sweep sent"] == set()
    archive.run_until_idle()
    periodic.sweep()
    request.refresh_from_db()
    assert request.state == "completed" and request.archived_count == 3
    assert [g.attempts for g in IngestGranule.objects.all()] == [1, 1, 1]
    assert not IngestGranule.objects.exclude(lease_owner="").exists()
