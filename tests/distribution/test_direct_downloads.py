"""Issue #34 items 4 and 5: a granule's files download from its page without an order when no
recall is needed (in the disk cache, or in the object store, read straight from the bucket),
by the same download path as an order's links (login, visibility, counting, throttle); only
tape-only files need an order. Browse images stay in the cache whatever the data's residency.
"""
import hashlib

import pytest

from backend.archive import services as archive
from backend.archive.models import Bucket, CacheEntry, FileCopy
from backend.archive.services import cache
from backend.catalog.models import File
from backend.metrics.models import TransferRecord
from tests.archive_fixtures import archived_collection, staged_granule
from tests.s3_server import ACCESS_KEY, SECRET_KEY

from .conftest import body, evict

pytestmark = pytest.mark.django_db


@pytest.fixture
def object_granule(archive_layout, data_root, settings, s3_bucket, inline):
    """(granule, {file id: bytes}, server, bucket): copy 1 in a bucket, copy 2 on tape, and
    nothing in the cache. One file is packed with others (small), one has an object of its
    own (above GRANARY_S3_PACK_BELOW_BYTES)."""
    server, name = s3_bucket
    settings.GRANARY_OBJECT_STORES = {"default": {
        "endpoint_url": server.endpoint_url, "access_key": ACCESS_KEY,
        "secret_key": SECRET_KEY, "region": "us-east-1"}}
    settings.GRANARY_S3_PACK_BELOW_BYTES = 100_000
    bucket = Bucket.objects.create(name="archive-s3", bucket=name, prefix="granary/")
    collection = archived_collection([bucket, archive_layout[1]], short_name="OISST",
                                     version="1")
    granule, sources = staged_granule(collection, data_root / "staging",
                                      sizes=(2000, 300_000))
    data = {pk: path.read_bytes() for pk, path in sources.items()}
    assert archive.archive_granule(granule, sources).admitted
    inline(archive.run_until_idle)
    evict([granule])
    return granule, data, server, name


def test_page_links_cached_and_object_store_files_and_not_tape_only_ones(alice, collection,
                                                                        archived, inline):
    cached, on_tape = archived(collection, 2, sizes=(1500,))
    evict([on_tape])
    shown = alice.get(f"/api/v1/granules/{cached.pk}/").json()["files"]
    assert [f["download_url"] for f in shown] == [f"/api/v1/files/{f['id']}/download"
                                                  for f in shown]
    [file] = alice.get(f"/api/v1/granules/{on_tape.pk}/").json()["files"]
    assert file["download_url"] is None
    answer = alice.get(f"/api/v1/files/{file['id']}/download")
    assert answer.status_code == 409 and "order it" in answer.json()["detail"]


def test_object_store_file_downloads_without_an_order_and_is_counted(alice, object_granule):
    granule, data, _, _ = object_granule
    shown = alice.get(f"/api/v1/granules/{granule.pk}/").json()
    assert shown["residency"] == "tape" and not any(f["in_cache"] for f in shown["files"])
    for file in shown["files"]:
        assert file["download_url"] == f"/api/v1/files/{file['id']}/download"
        answer = alice.get(file["download_url"])
        assert answer.status_code == 200
        got = body(answer)
        assert hashlib.md5(got).hexdigest() == hashlib.md5(data[file["id"]]).hexdigest()
        # a range, as a resuming client asks
        part = alice.get(file["download_url"], HTTP_RANGE="bytes=100-1099")
        assert part.status_code == 206 and body(part) == data[file["id"]][100:1100]
    sizes = sorted(len(b) for b in data.values())
    counted = sorted(TransferRecord.objects.filter(direction="distribution")
                     .values_list("bytes", flat=True))
    assert counted == sorted([*sizes, 1000, 1000])
    # nothing was recalled for it: the cache is as it was
    assert not CacheEntry.objects.filter(file__granule=granule).exists()


def test_object_copy_that_changed_is_cut_short_and_marked_bad(alice, object_granule):
    granule, data, server, name = object_granule
    big = File.objects.get(granule=granule, size=300_000)
    copy = FileCopy.objects.get(file=big, bucket__isnull=False)
    assert copy.data_offset == 0   # an object of its own
    flipped = bytearray(data[big.pk])
    flipped[150_000] ^= 0xFF
    server.client().put_object(Bucket=name, Key=copy.key, Body=bytes(flipped))

    answer = alice.get(f"/api/v1/files/{big.pk}/download")
    assert answer.status_code == 200   # the headers left before the bytes were read
    got = bytearray()
    with pytest.raises(archive.CacheDamaged):
        for block in answer.streaming_content:
            got += block
    assert len(got) < big.size    # never the whole wrong file
    copy.refresh_from_db()
    assert copy.state == FileCopy.State.BAD
    # the next one is not offered from the bucket: the tape copy needs an order
    shown = alice.get(f"/api/v1/granules/{granule.pk}/").json()["files"]
    assert {f["id"]: f["download_url"] for f in shown}[big.pk] is None


def test_anonymous_and_other_users_get_what_order_links_give(bob, collection, archived,
                                                            settings):
    from rest_framework.test import APIClient

    [granule] = archived(collection, 1, sizes=(1500,))
    file = granule.files.get()
    refused = APIClient().get(f"/api/v1/files/{file.pk}/download")
    assert refused.status_code == 401
    collection.access = "restricted"
    collection.save()
    assert bob.get(f"/api/v1/files/{file.pk}/download").status_code == 403


def test_purge_and_release_keep_browse_images(collection, archived, settings):
    granule, = archived(collection, 1, sizes=(3000, 500))
    data, browse = sorted(granule.files.all(), key=lambda f: -f.size)
    File.objects.filter(pk=browse.pk).update(role=File.Role.BROWSE)
    browse.refresh_from_db()

    # The watermark purge asked for everything: only the data file goes.
    settings.GRANARY_CACHE_HIGH_WATERMARK = 0.0
    settings.GRANARY_CACHE_LOW_WATERMARK = 0.0
    cache.purge(incoming=10 ** 12)
    assert list(CacheEntry.objects.filter(file__granule=granule)
                .values_list("file_id", flat=True)) == [browse.pk]
    assert archive.cache_path(browse).exists() and not archive.cache_path(data).exists()

    with pytest.raises(archive.ArchiveError, match="browse image"):
        cache.release(browse)
    assert archive.cache_path(browse).exists()


def test_browse_image_that_left_the_cache_comes_back(collection, archived, inline):
    from rest_framework.test import APIClient

    granule, = archived(collection, 1, sizes=(700,))
    browse = granule.files.get()
    File.objects.filter(pk=browse.pk).update(role=File.Role.BROWSE)
    evict([granule])   # as an older Granary's purge did
    url = f"/api/v1/files/{browse.pk}/download"
    answer = inline(APIClient().get, url)
    assert answer.status_code == 503 and int(answer["Retry-After"]) >= 5
    assert "brought back" in answer.json()["detail"]
    inline(archive.run_until_idle)
    again = APIClient().get(url)
    assert again.status_code == 200 and len(body(again)) == 700
