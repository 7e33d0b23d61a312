"""Ingest and distribution with copy 1 in the object store (a bucket on a real S3 server):
a provider's bulk request reaches ARCHIVED with an object and a tape copy, both verified; an
order of the granules, off the cache, is recalled from the bucket and downloaded byte-exact;
a store that is down while a request is ingested holds it ARCHIVING (nothing failed) until
it is back."""
import hashlib

import pytest

from backend.archive import operations
from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, Bucket, FileCopy
from backend.catalog.models import Granule
from tests.distribution.conftest import body, client_for, evict
from tests.ingest.builders import staged_granules
from tests.s3_fixtures import copy_bytes
from tests.s3_server import ACCESS_KEY, SECRET_KEY

pytestmark = pytest.mark.django_db

URL = "/api/v1/ingest/requests/"


def stores(server, endpoint=None):
    return {"default": {"endpoint_url": endpoint or server.endpoint_url,
                        "access_key": ACCESS_KEY, "secret_key": SECRET_KEY,
                        "region": "us-east-1"}}


@pytest.fixture
def in_bucket(collection, archive_layout, s3_bucket, settings):
    """Copy 1 of the provider's collection in a bucket, copy 2 on tape (backup)."""
    server, name = s3_bucket
    settings.GRANARY_OBJECT_STORES = stores(server)
    settings.GRANARY_SITE_URL = "http://testserver/"
    bucket = Bucket.objects.create(name="objects", bucket=name)
    operations.set_policy(collection, [bucket, archive_layout[1]])
    return server, bucket


def test_ingested_to_the_object_store_and_ordered_back_from_it(
        client, provider, collection, drain, in_bucket, django_capture_on_commit_callbacks,
        eager):
    server, bucket = in_bucket
    specs = staged_granules(provider, collection, 3, sizes=(5000, 800))
    answer = client.post(URL, {"granules": specs}, format="json")
    assert answer.status_code == 202, answer.json()
    drain()
    assert client.get(answer.json()["url"]).json()["state"] == "completed"
    granules = list(Granule.objects.filter(state=Granule.State.ARCHIVED))
    assert len(granules) == 3
    s3 = server.client()
    for f in (f for g in granules for f in g.files.all()):
        [one] = FileCopy.objects.filter(file=f, copy_number=1, state="verified")
        assert one.bucket_id == bucket.pk
        assert hashlib.md5(copy_bytes(s3, one)).hexdigest() == f.checksum
        assert FileCopy.objects.filter(file=f, copy_number=2, state="verified",
                                       volume__isnull=False).exists()

    evict(granules)
    alice = client_for()
    with django_capture_on_commit_callbacks(execute=True):
        order = alice.post("/api/v1/orders/", {"granules": [g.pk for g in granules]},
                           format="json").json()
        archive.run_until_idle()
    recalls = ArchiveRequest.objects.filter(kind="recall")
    assert recalls.count() == 6 and set(recalls.values_list("state", flat=True)) == {"done"}
    assert set(recalls.values_list("bucket", flat=True)) == {bucket.pk}   # no tape mount
    links = alice.get(f"/api/v1/orders/{order['id']}/links/").json()
    assert len(links["links"]) == 6 and not links["failed"]
    for link in links["links"]:
        data = body(alice.get(link["url"].replace("http://testserver", "")))
        assert len(data) == link["size"]
        assert hashlib.md5(data).hexdigest() == link["checksum"]


def test_a_store_down_during_ingest_holds_the_granules_until_it_is_back(
        client, provider, collection, drain, in_bucket, settings):
    server, _ = in_bucket
    settings.GRANARY_OBJECT_STORES = stores(server, endpoint="http://127.0.0.1:9")
    specs = staged_granules(provider, collection, 2)
    url = client.post(URL, {"granules": specs}, format="json").json()["url"]
    drain()
    detail = client.get(url).json()
    assert detail["counts"]["archiving"] == 2 and detail["counts"]["failed"] == 0
    waiting = ArchiveRequest.objects.filter(kind="migrate", bucket__isnull=False)
    assert {(r.state, r.attempts) for r in waiting} == {("queued", 0)}
    assert all("unreachable" in r.error for r in waiting)

    settings.GRANARY_OBJECT_STORES = stores(server)
    drain()
    assert client.get(url).json()["state"] == "completed"
