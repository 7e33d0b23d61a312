"""/metrics in Prometheus' text format, read with prometheus-client's own parser: every figure
equals a count made here in Python over the rows (or the bytes) the test made, not by the
collectors' SQL."""
import os
from collections import Counter

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from backend.accounts import tokens
from backend.archive import operations, services
from backend.archive.models import ArchiveRequest, Bucket, CacheEntry, Drive, FileCopy
from backend.archive.services.paths import volume_path
from backend.archive.services.reconcile import reconcile
from backend.metrics.models import TransferRecord
from ingest.models import IngestRequest
from tests.archive_fixtures import (
    archive_granules,
    archived_collection,
    movers_without_waits,
    object_tier_rows,
    small_layout,
)
from tests.s3_server import ACCESS_KEY, SECRET_KEY

pytestmark = pytest.mark.django_db


def _scrape(client):
    response = client.get("/metrics")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    families = {f.name: f for f in text_string_to_metric_families(response.content.decode())}
    return {name: {tuple(sorted(s.labels.items())): s.value for s in f.samples
                   if s.name in (name, name + "_total")}
            for name, f in families.items()}


@pytest.fixture
def busy_archive(data_root, settings):
    """Four granules archived (two copies each), one recall left queued, one drive varied off
    and a volume cut short for the reconciliation to find; returns how many copies the cut
    reaches."""
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    archive_granules(collection, data_root / "staging", (150000, 90000, 210000, 64000))
    evicted = CacheEntry.objects.order_by("pk").first().file
    CacheEntry.objects.filter(file=evicted).delete()
    services.cache_path(evicted).unlink()
    services.make_available([evicted])                # queued, not run
    operations.vary_drive(Drive.objects.order_by("pk").first(), online=False, reason="cleaning")
    copy = evicted.copies.order_by("copy_number").first()
    cut = copy.data_offset + 10
    os.truncate(volume_path(copy.volume), cut)
    reconcile(full=True)
    return sum(1 for c in FileCopy.objects.filter(volume=copy.volume)
               if c.data_offset + c.length > cut)       # every copy the cut reaches


def test_figures_equal_counts_of_the_rows(operator_api, busy_archive, settings):
    got = _scrape(operator_api)

    expected = Counter((r.kind, r.state) for r in ArchiveRequest.objects.all())
    assert {k: v for k, v in got["granary_archive_requests"].items() if v} == {
        (("kind", kind), ("state", state)): n for (kind, state), n in expected.items()}
    assert ArchiveRequest.objects.filter(kind="recall", state="queued").count() == 1

    drives = Counter((d.silo.name, d.state) for d in Drive.objects.select_related("silo"))
    assert {k: v for k, v in got["granary_drives"].items() if v} == {
        (("silo", silo), ("state", state)): n for (silo, state), n in drives.items()}
    assert drives[(Drive.objects.order_by("pk").first().silo.name, "offline")] == 1

    queued = [r for r in ArchiveRequest.objects.select_related("volume_group")
              if r.state == "queued"]
    depth = Counter((r.kind, r.volume_group.name if r.volume_group else "") for r in queued)
    assert {k: v for k, v in got["granary_archive_queue_depth"].items()} == {
        (("kind", k), ("volume_group", g)): n for (k, g), n in depth.items()}
    oldest = min(r.created_at for r in queued)
    age = got["granary_archive_queue_oldest_age_seconds"][
        (("kind", "recall"), ("volume_group", queued[0].volume_group.name
                              if queued[0].volume_group else ""))]
    assert 0 <= age <= (timezone.now() - oldest).total_seconds() + 0.05   # rounded to 0.1 s

    sizes = Counter()
    for entry in CacheEntry.objects.all():
        sizes[entry.state] += entry.size
    assert got["granary_cache_capacity_bytes"] == {(): settings.GRANARY_CACHE_BYTES}
    assert {k[0][1]: v for k, v in got["granary_cache_bytes"].items() if v} == dict(sizes)

    moved = Counter()
    for record in TransferRecord.objects.all():
        moved[record.direction] += record.bytes
    assert {k[0][1]: v for k, v in got["granary_transferred_bytes"].items() if v} == dict(moved)
    assert moved["migrate"] == 2 * (150000 + 90000 + 210000 + 64000)  # two copies of each

    assert got["granary_reconciliation_discrepancies"] == {
        (("kind", "copy_past_end"),): busy_archive, (("kind", "volume_truncated"),): 1}


def test_every_state_is_present_even_at_zero(operator_api, db):
    got = _scrape(operator_api)
    assert set(got["granary_ingest_requests"]) == {(("state", s),)
                                                   for s in IngestRequest.State.values}
    assert set(got["granary_orders"]) == {
        (("state", s),) for s in ("submitted", "staging", "ready", "partially_ready",
                                  "completed", "failed", "cancelled", "expired")}
    assert sum(got["granary_orders"].values()) == 0


def test_operators_only_and_a_scraper_may_use_an_operators_token(operator_api, user_api, api):
    assert api.get("/metrics").status_code in (401, 403)
    assert user_api.get("/metrics").status_code == 403
    scraper = APIClient()
    scraper.credentials(HTTP_AUTHORIZATION=f"Token {tokens.issue(operator_api.user, 'scraper')[1]}")
    assert scraper.get("/metrics").status_code == 200


@pytest.mark.parametrize("accept, kind", [
    ("text/plain", "text/plain; version=0.0.4"),
    ("text/plain;version=0.0.4", "text/plain; version=0.0.4"),
    ("application/json", "text/plain; version=0.0.4"),
    ("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
     "application/openmetrics-text; version=1.0.0"),
])
def test_every_accept_a_scraper_sends_gets_the_figures(operator_api, accept, kind):
    """`Accept: text/plain` answered 406 (issue 34, item 13); Prometheus' own scrape asks
    OpenMetrics first. Each answer parses with prometheus-client's parser of its format."""
    from prometheus_client.openmetrics.parser import (
        text_string_to_metric_families as openmetrics_families,
    )

    response = operator_api.get("/metrics", HTTP_ACCEPT=accept)
    assert response.status_code == 200 and response["Content-Type"].startswith(kind)
    parse = openmetrics_families if "openmetrics" in kind else text_string_to_metric_families
    names = {f.name for f in parse(response.content.decode())}
    assert "granary_transfers" in names


def test_object_tier_figures_equal_counts_of_the_rows(operator_api, settings, s3_bucket):
    server, name = s3_bucket
    settings.GRANARY_OBJECT_STORES = {"default": {
        "endpoint_url": server.endpoint_url, "access_key": ACCESS_KEY, "secret_key": SECRET_KEY,
        "region": "us-east-1"}}
    small_layout()
    buckets = [Bucket.objects.create(name="archive-s3", bucket=name),
               Bucket.objects.create(name="offline", store="nowhere", bucket="b")]
    copies, requests = object_tier_rows(buckets, timezone.now())
    got = _scrape(operator_api)

    names = {b.pk: b.name for b in buckets}
    held, held_bytes = Counter(), Counter()
    for c in copies:
        if c.bucket_id and c.state == "verified":
            held[names[c.bucket_id]] += 1
            held_bytes[names[c.bucket_id]] += c.length
    assert got["granary_bucket_objects"] == {(("bucket", b),): held[b] for b in names.values()}
    assert got["granary_bucket_bytes"] == {(("bucket", b),): held_bytes[b]
                                           for b in names.values()}

    pending = Counter((names[r.bucket_id], r.kind, r.state) for r in requests
                      if r.bucket_id and r.state in ("queued", "running"))
    assert got["granary_object_requests"] == {
        (("bucket", b), ("kind", k), ("state", s)): pending[(b, k, s)]
        for b in names.values() for k in ("migrate", "recall") for s in ("queued", "running")}

    done = [r for r in requests if r.bucket_id and r.state == "done"]
    for kind, verb in (("migrate", "put"), ("recall", "get")):
        assert got[f"granary_object_{verb}s"] == {
            (("bucket", b),): sum(1 for r in done if r.kind == kind and names[r.bucket_id] == b)
            for b in names.values()}
        assert got[f"granary_object_{verb}_bytes"] == {
            (("bucket", b),): sum(r.bytes_done for r in done
                                  if r.kind == kind and names[r.bucket_id] == b)
            for b in names.values()}
    failing = Counter(names[r.bucket_id] for r in requests
                      if r.bucket_id and r.state in ("queued", "failed") and r.error
                      and not r.error.startswith("waiting for"))
    assert got["granary_object_failures"] == {(("bucket", b),): failing[b]
                                              for b in names.values()}
    assert got["granary_bucket_up"] == {(("bucket", "archive-s3"),): 1,
                                        (("bucket", "offline"),): 0}
