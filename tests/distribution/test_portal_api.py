"""What the web portal reads besides the plain lists: a granule's storage and browse image, and
the order limits shown in the cart before ordering."""

import json

import pytest
from django.db import connection, connections
from django.db.models import Prefetch
from django.test.utils import CaptureQueriesContext
from rest_framework.renderers import JSONRenderer
from rest_framework.serializers import ModelSerializer
from rest_framework.test import APIClient

from backend.archive import services as archive
from backend.archive.models import Bucket, CacheEntry, FileCopy
from backend.catalog import services as catalog
from backend.catalog.models import Collection, File, Granule
from backend.catalog.serializers import GranuleDetailSerializer
from tests.archive_fixtures import archived_collection, staged_granule
from tests.factories import FileFactory, GranuleFactory
from tests.s3_server import ACCESS_KEY, SECRET_KEY

from .conftest import evict

pytestmark = pytest.mark.django_db


def by_fields(granule):
    """The granule's page as GranuleDetailSerializer's DRF fields write it from the ORM's
    prefetch of its files, cache entries and copies, its residency annotated by the search's
    SQL rule (the page loads its storage by archive.residency.load_detail)."""
    copies = FileCopy.objects.select_related("volume__silo", "bucket")
    files = File.objects.select_related("cache_entry").prefetch_related(
        Prefetch("copies", queryset=copies))
    annotated = catalog.with_residency(Granule.objects.all()).prefetch_related(
        Prefetch("files", queryset=files)).get(pk=granule.pk)
    fields = ModelSerializer.to_representation(GranuleDetailSerializer(), annotated)
    return json.loads(JSONRenderer().render(fields))


def test_granule_page_says_where_each_file_lives(alice, collection, archived):
    granule, other = archived(collection, 2, sizes=(3000, 500))
    detail = alice.get(f"/api/v1/granules/{granule.pk}/").json()
    assert detail == by_fields(granule)
    assert detail["residency"] == "cache" and detail["browse_url"] is None
    for shown in detail["files"]:
        assert shown["in_cache"] is True
        copies = [(c["copy_number"], c["state"], c["medium"]) for c in shown["copies"]]
        assert copies == [(1, "verified", "tape"), (2, "verified", "tape")]
        assert {c["silo"] for c in shown["copies"]} == {"silo1", "silo2"}
        assert all(c["volume"] for c in shown["copies"])
        assert all(c["bucket"] is None and c["key"] is None for c in shown["copies"])
        assert [c["length"] for c in shown["copies"]] == [shown["size"]] * 2

    # one file's bytes still arriving in the cache: that file is not there, nor the granule
    first = granule.files.order_by("name").first()
    CacheEntry.objects.filter(file=first).update(state=CacheEntry.State.STAGING)
    detail = alice.get(f"/api/v1/granules/{granule.pk}/").json()
    assert detail == by_fields(granule)
    assert detail["residency"] == "tape"
    assert [f["in_cache"] for f in detail["files"]] == [False, True]

    evict([granule])
    detail = alice.get(f"/api/v1/granules/{granule.pk}/").json()
    assert detail == by_fields(granule)
    assert detail["residency"] == "tape"
    assert [f["in_cache"] for f in detail["files"]] == [False, False]
    assert all(len(f["copies"]) == 2 for f in detail["files"])
    assert all(f["download_url"] is None for f in detail["files"])

    # The list stays lean: no storage per file there.
    listed = alice.get("/api/v1/granules/").json()["results"]
    assert {g["id"] for g in listed} == {granule.pk, other.pk}
    assert all("in_cache" not in f for g in listed for f in g["files"])


def test_a_granule_without_files_is_in_the_cache_by_the_searchs_rule(alice, collection):
    """No file is missing from the cache: the search's SQL says "cache", so does the page."""
    empty = GranuleFactory(collection=collection, state=Granule.State.ARCHIVED)
    detail = alice.get(f"/api/v1/granules/{empty.pk}/").json()
    assert detail == by_fields(empty)
    assert detail["residency"] == "cache" and detail["files"] == []


def test_granule_page_reads_its_storage_in_the_same_statements_however_many_files(
        alice, collection, archived):
    """Files with their cache entries, then copies with their volumes, silos and buckets: the
    count does not grow with files or copies (a statement per relation did)."""
    one, = archived(collection, 1, sizes=(700,))
    three, = archived(collection, 1, sizes=(900, 300, 100))
    alice.get("/api/v1/me/")     # the caller's first request reads who it is once more
    counts, pages = [], []
    for granule in (one, three):
        with CaptureQueriesContext(connection) as statements:
            pages.append(alice.get(f"/api/v1/granules/{granule.pk}/").json())
        counts.append(len(statements.captured_queries))
    assert counts[0] == counts[1] <= 3   # granule, files, copies
    files = pages[1]["files"]
    assert [f["name"] for f in files] == sorted(f.name for f in three.files.all())
    assert all(f["in_cache"] and len(f["copies"]) == 2 for f in files)
    assert all(c["volume"] and c["silo"] for f in files for c in f["copies"])


def test_granule_page_names_the_bucket_and_key_of_an_object_copy(alice, archive_layout,
                                                                  data_root, settings,
                                                                  s3_bucket, inline):
    server, name = s3_bucket
    settings.GRANARY_OBJECT_STORES = {"default": {
        "endpoint_url": server.endpoint_url, "access_key": ACCESS_KEY,
        "secret_key": SECRET_KEY, "region": "us-east-1"}}
    backup = archive_layout[1]
    bucket = Bucket.objects.create(name="archive-s3", bucket=name, prefix="granary/")
    collection = archived_collection([bucket, backup], short_name="OISST", version="1")
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(2000,))
    data = next(iter(sources.values())).read_bytes()
    assert archive.archive_granule(granule, sources).admitted
    inline(archive.run_until_idle)

    page = alice.get(f"/api/v1/granules/{granule.pk}/").json()
    assert page == by_fields(granule)
    shown = page["files"][0]
    stored = {c.copy_number: c for c in FileCopy.objects.filter(file_id=shown["id"])}
    assert shown["copies"] == [
        {"copy_number": 1, "segment": 0, "medium": "object", "state": "verified",
         "length": 2000, "volume": None, "silo": None, "bucket": "archive-s3",
         "key": stored[1].key, "offset": stored[1].data_offset},
        {"copy_number": 2, "segment": 0, "medium": "tape", "state": "verified",
         "length": 2000, "volume": stored[2].volume.label, "silo": "silo2", "bucket": None,
         "key": None, "offset": None}]
    assert stored[1].key.startswith("granary/packs/")   # a small file: in a pack
    # a ranged GET of length bytes from offset, by a plain client, reads the file
    ranged = server.client().get_object(
        Bucket=name, Key=shown["copies"][0]["key"],
        Range=f"bytes={shown['copies'][0]['offset']}-{shown['copies'][0]['offset'] + 1999}")
    assert ranged["Body"].read() == data


def test_browse_image_is_shown_to_anonymous_visitors_but_data_is_not(collection, archived):
    granule, = archived(collection, 1, sizes=(2000,))
    data = granule.files.get()
    browse = FileFactory(granule=granule, name=f"{granule.granule_id}.png",
                         role=File.Role.BROWSE, size=0)
    anonymous = APIClient()

    detail = anonymous.get(f"/api/v1/granules/{granule.pk}/").json()
    assert detail["browse_url"] == f"/api/v1/files/{browse.pk}/download"

    refused = anonymous.get(f"/api/v1/files/{data.pk}/download")
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == "Token"
    assert refused.json()["detail"] == "Log in, or use the signed link of an order, to download."
    # The browse file has no bytes anywhere here: the answer says so, not "log in".
    answer = anonymous.get(detail["browse_url"])
    assert answer.status_code == 409 and "no readable copy" in answer.json()["detail"]

    Collection.objects.filter(pk=collection.pk).update(access="restricted")
    hidden = anonymous.get(f"/api/v1/files/{browse.pk}/download")
    assert hidden.status_code == 401
    assert hidden.json()["detail"] == "Log in, or use the signed link of an order, to download."


def test_browse_image_bytes_reach_an_anonymous_visitor(collection, archived):
    granule, = archived(collection, 1, sizes=(700,))
    File.objects.filter(granule=granule).update(role=File.Role.BROWSE)
    detail = APIClient().get(f"/api/v1/granules/{granule.pk}/").json()
    answer = APIClient().get(detail["browse_url"])
    assert answer.status_code == 200
    assert len(b"".join(answer.streaming_content)) == 700


def test_cart_shows_the_limits_before_ordering(alice, collection, archived, inline, settings):
    settings.GRANARY_ORDER_MAX_GRANULES = 5
    settings.GRANARY_ORDER_MAX_GB = 2
    settings.GRANARY_ORDER_MAX_OPEN = 3
    granules = archived(collection, 2, sizes=(1000,))
    cart = alice.post("/api/v1/cart/", {"granules": [granules[0].pk]}, format="json").json()
    assert cart["count"] == 1 and cart["bytes"] == 1000
    assert cart["limits"] == {"granules": 5, "bytes": 2_000_000_000, "open_orders": 3,
                              "open_orders_used": 0}

    inline(alice.post, "/api/v1/orders/", {"granules": [granules[1].pk]}, format="json")
    assert alice.get("/api/v1/cart/").json()["limits"]["open_orders_used"] == 1
    emptied = alice.delete(f"/api/v1/cart/{granules[0].pk}/").json()
    assert emptied["count"] == 0 and emptied["limits"]["open_orders_used"] == 1


def test_granule_page_reads_every_kind_of_copy_and_entry_as_the_prefetch_does(
        alice, collection, archived, monkeypatch):
    """The page's storage comes from two reads compiled once per connection (archive.residency
    load_detail), and says what the prefetch's objects say: a file off the cache, one whose
    entry is staging, a bad copy, a released one (not shown), a copy in two segments."""
    from backend.archive import residency

    built = []
    build = residency._FILES.build
    monkeypatch.setattr(residency._FILES, "build",
                        lambda granule_id: built.append(granule_id) or build(granule_id))
    connections["default"].__dict__.pop("_fixed_reads", None)
    granule, other = archived(collection, 2, sizes=(3000, 500, 100))
    off, staging, spanned = granule.files.order_by("name")
    CacheEntry.objects.filter(file=off).delete()
    CacheEntry.objects.filter(file=staging).update(state=CacheEntry.State.STAGING)
    FileCopy.objects.filter(file=off, copy_number=2).update(state=FileCopy.State.BAD)
    FileCopy.objects.filter(file=staging, copy_number=2).update(state=FileCopy.State.RELEASED)
    second = FileCopy.objects.get(file=spanned, copy_number=1)
    second.pk, second.segment, second.file_offset = None, 1, 50
    second.save()
    for g in (granule, other, granule):
        page = alice.get(f"/api/v1/granules/{g.pk}/").json()
        assert page == by_fields(g)
    files = {f["name"]: f for f in page["files"]}
    assert (files[off.name]["in_cache"], files[staging.name]["in_cache"]) == (False, False)
    assert [c["state"] for c in files[off.name]["copies"]] == ["verified", "bad"]
    assert [c["copy_number"] for c in files[staging.name]["copies"]] == [1]
    assert [(c["copy_number"], c["segment"]) for c in files[spanned.name]["copies"]] == [
        (1, 0), (1, 1), (2, 0)]
    assert page["residency"] == "tape"
    assert len(built) == 1       # three pages, one build of the files' read
