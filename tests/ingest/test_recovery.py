"""Nothing stays stuck: dead workers, a full cache, a missed signal, a poison granule."""
from datetime import timedelta

import pytest
from django.utils import timezone

from backend.archive.models import ArchiveRequest, CacheEntry
from backend.archive.services import admission
from backend.catalog.models import Granule
from ingest.models import IngestGranule, IngestRequest
from ingest.services import periodic, pipeline, registration
from tests.ingest.builders import staged_granules

pytestmark = pytest.mark.django_db

URL = "/api/v1/ingest/requests/"


def submit(client, provider, collection, count=3):
    answer = client.post(URL, {"granules": staged_granules(provider, collection, count)},
                         format="json")
    assert answer.status_code == 202
    return IngestRequest.objects.get(pk=answer.json()["id"])


def test_sweeper_rekicks_granules_of_a_dead_worker(client, provider, collection, eager,
                                                   django_capture_on_commit_callbacks):
    request = submit(client, provider, collection)
    long_ago = timezone.now() - timedelta(hours=2)
    # a worker holds them under a live lease: nobody else takes them
    IngestGranule.objects.update(state="staged", lease_owner="busy", updated_at=long_ago,
                                 lease_until=timezone.now() + timedelta(hours=1))
    assert pipeline.process_chunk(request.pk, 0, 3) == 0
    assert periodic.sweep()["kicked"] == 0
    # then it died: its lease ran out unrenewed, so the next sweep sends them again at once
    IngestGranule.objects.update(lease_until=long_ago, updated_at=timezone.now())
    assert periodic.sweep()["kicked"] == 1  # and that message is lost
    assert periodic.sweep()["kicked"] == 0  # not sent again every sweep ...
    IngestGranule.objects.update(updated_at=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        assert periodic.sweep()["kicked"] == 1  # ... but once they have been quiet a while
    request.refresh_from_db()
    assert request.state == "completed" and request.archived_count == 3
    assert all(g.attempts == 1 for g in IngestGranule.objects.all())


def test_a_request_no_worker_started_is_sent_again_once_a_period(client, provider, collection,
                                                                 settings):
    request = submit(client, provider, collection)  # its message never ran (as if lost)
    assert periodic.sweep()["kicked"] == 0  # just stored: its message may be on its way
    ago = timezone.now() - timedelta(seconds=settings.GRANARY_INGEST_UNSENT_S + 1)
    IngestRequest.objects.update(updated_at=ago)
    IngestGranule.objects.update(updated_at=ago)
    assert periodic.sweep()["kicked"] == 1
    assert periodic.sweep()["kicked"] == 0  # sent again just now: not once more every sweep
    assert IngestRequest.objects.get(pk=request.pk).state == "received"


def test_full_cache_leaves_granules_waiting_not_failed(client, provider, collection, drain,
                                                        settings):
    settings.GRANARY_CACHE_BYTES = 100
    request = submit(client, provider, collection)
    drain()
    waiting = IngestGranule.objects.filter(state="archiving", admitted=False)
    assert waiting.count() == 3
    assert not IngestGranule.objects.filter(state="failed").exists()
    request.refresh_from_db()
    assert request.state == "running"

    settings.GRANARY_CACHE_BYTES = 1 << 30
    assert periodic.admit_waiting() == 3
    drain()
    request.refresh_from_db()
    assert request.state == "completed" and request.archived_count == 3


def test_sweeper_finishes_granules_whose_signal_was_missed(client, provider, collection):
    request = submit(client, provider, collection, count=2)
    pipeline.run_request(request.pk)  # archived signal never delivered (no commit here)
    Granule.objects.update(state=Granule.State.ARCHIVED)
    assert periodic.sweep()["archived"] == 2
    request.refresh_from_db()
    assert request.state == "completed" and request.percent_done == 100.0


def test_a_granule_that_kills_its_worker_is_given_up(client, provider, collection, settings):
    settings.GRANARY_INGEST_MAX_ATTEMPTS = 2
    request = submit(client, provider, collection, count=1)
    IngestGranule.objects.update(attempts=2)
    pipeline.run_request(request.pk)
    row = IngestGranule.objects.get()
    assert row.state == "failed" and "gave up after 2 attempts" in row.reason
    assert not Granule.objects.exists()


def test_unexpected_error_fails_one_granule_only(client, provider, collection, drain,
                                                 monkeypatch):
    request = submit(client, provider, collection, count=3)
    real = pipeline.prepare

    def flaky(row, *args):
        if row.granule_id == "G00001":
            raise RuntimeError("disk on fire")
        return real(row, *args)

    monkeypatch.setattr(pipeline, "prepare", flaky)
    drain()
    request.refresh_from_db()
    assert (request.archived_count, request.failed_count) == (2, 1)
    bad = IngestGranule.objects.get(granule_id="G00001")
    assert bad.disposition == "ECS INTERNAL ERROR" and "disk on fire" in bad.reason


def test_a_failed_bulk_registration_falls_back_to_one_by_one(client, provider, collection,
                                                            drain, monkeypatch):
    request = submit(client, provider, collection, count=3)

    def broken(specs):
        raise RuntimeError("bulk insert refused")

    monkeypatch.setattr(registration, "register_granules", broken)
    drain()
    request.refresh_from_db()
    assert (request.archived_count, request.failed_count) == (3, 0)
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 3


def test_a_quick_chunk_is_registered_and_admitted_in_one_transaction(client, provider,
                                                                     collection, drain):
    """A chunk of small granules goes into the catalog and the archive together: its granules
    are never REGISTERED-and-waiting, and its rows end their lease on admission."""
    request = submit(client, provider, collection, count=3)
    pipeline.run_request(request.pk)
    rows = list(IngestGranule.objects.all())
    assert {(r.state, r.admitted, r.lease_owner, r.bytes_done) for r in rows} == {
        ("archiving", True, "", 1500)}
    granules = Granule.objects.filter(pk__in=[r.catalog_granule_id for r in rows])
    assert {g.state for g in granules} == {Granule.State.ARCHIVING}
    assert ArchiveRequest.objects.filter(kind="migrate", state="queued").count() == 3 * 2
    assert CacheEntry.objects.filter(state="dirty").count() == 3
    drain()
    request.refresh_from_db()
    assert request.state == "completed" and request.archived_count == 3


def test_a_file_the_cache_cannot_take_fails_its_granule_only(client, provider, collection,
                                                              drain, monkeypatch, settings):
    """One file the cache cannot take sends the chunk the two-step way (registered, then
    admitted): only its granule fails, the catalog keeps no trace of it, and nothing the
    one-transaction attempt placed is left in the cache."""
    real = admission.place

    def picky(source, target):
        if "G00001" in str(source):
            raise OSError(28, "No space left on device")
        return real(source, target)

    monkeypatch.setattr(admission, "place", picky)
    request = submit(client, provider, collection, count=3)
    drain()
    request.refresh_from_db()
    assert (request.archived_count, request.failed_count) == (2, 1)
    bad = IngestGranule.objects.get(granule_id="G00001")
    assert bad.state == "failed" and "No space left on device" in bad.reason
    assert not Granule.objects.filter(granule_id="G00001").exists()
    cached = [p for p in settings.CACHE_ROOT.rglob("*") if p.is_file()]
    assert len(cached) == CacheEntry.objects.count() == 2
