"""Silent rot in the cache (#34 item 20): a byte flipped in a clean cached file whose mtime is
then set back keeps the fingerprint serving trusted. A whole download is cut short before the
damaged block (never a complete wrong file), the copy is dropped and a recall queued; a range
is served only from a file verified within GRANARY_CACHE_SCRUB_S, an older one is hashed
first; the scrub finds rot nobody downloads; a push of a rotten file fails with the reason.

Expected bytes and digests come from hashlib and zlib over the bytes the fixtures wrote."""
import hashlib
import os
import socket
import threading
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
import xxhash
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone
from rest_framework.test import APIClient

from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, CacheEntry
from backend.archive.services import scrub
from backend.catalog.models import File
from distribution.models import Order, OrderItem
from distribution.services import downloads, orders, push
from distribution.targets import PushError

pytestmark = pytest.mark.django_db

BLOCK = 4 << 20
SIZE = 2 * BLOCK + 12345        # three blocks, the last one short


def _block_sum(block):
    """A block's expected check: its 64-bit XXH3, from the library's streaming hasher."""
    return xxhash.xxh3_64(block).digest()


def rot(path, at):
    """Flip one byte in place and set the times back: size, mtime and inode as they were."""
    before = path.stat()
    with open(path, "r+b") as handle:
        handle.seek(at)
        byte = handle.read(1)
        handle.seek(at)
        handle.write(bytes([byte[0] ^ 0x01]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size, before.st_mtime_ns, before.st_ino)


def received(response):
    """The body's bytes up to where the server cut it: (bytes, the error that cut it). The
    test client closes the response (recording the transfer) when its iteration ends."""
    got = bytearray()
    try:
        for chunk in response.streaming_content:
            got += chunk
    except archive.CacheDamaged as exc:
        return bytes(got), exc
    return bytes(got), None


@pytest.fixture
def ordered(alice, collection, archived, inline):
    """An archived file of SIZE bytes ordered by alice: (order, link path, file, its bytes)."""
    [granule] = archived(collection, 1, sizes=(SIZE,))
    response = inline(alice.post, "/api/v1/orders/", {"granules": [granule.pk]}, format="json")
    order = Order.objects.get(pk=response.json()["id"])
    assert order.state == "ready"
    [link] = alice.get(f"/api/v1/orders/{order.pk}/links/").json()["links"]
    parts = urlsplit(link["url"])
    file = File.objects.get(pk=link["file_id"])
    return order, f"{parts.path}?{parts.query}", file, archive.cache_path(file).read_bytes()


def _dropped_and_recalled(file):
    assert not CacheEntry.objects.filter(file=file).exists()
    assert not archive.cache_path(file).exists()
    assert ArchiveRequest.objects.filter(file=file, kind="recall", state="queued").exists()


def test_a_clean_file_is_served_whole_and_its_block_map_recorded(ordered):
    _, path, file, data = ordered
    assert CacheEntry.objects.get(file=file).blocks is None     # admission hashed nothing
    response = APIClient().get(path)
    assert response.status_code == 200 and response["Content-Length"] == str(SIZE)
    body, error = received(response)
    assert error is None
    assert hashlib.md5(body).hexdigest() == hashlib.md5(data).hexdigest() == file.checksum
    entry = CacheEntry.objects.get(file=file)
    assert bytes(entry.blocks) == b"".join(
        _block_sum(data[at:at + BLOCK]) for at in range(0, SIZE, BLOCK))
    assert APIClient().get(path).status_code == 200             # and again, by the map
    assert received(APIClient().get(path)) == (data, None)


@pytest.mark.parametrize("at", [5, BLOCK + 7, SIZE - 1])
def test_rot_found_by_the_block_map_cuts_the_download_before_the_damaged_block(ordered, at):
    order, path, file, data = ordered
    assert received(APIClient().get(path)) == (data, None)      # records the block map
    rot(archive.cache_path(file), at)

    response = APIClient().get(path)
    assert response.status_code == 200                          # headers left before the rot
    body, error = received(response)
    assert "damaged" in str(error)
    assert len(body) == at - at % BLOCK < SIZE                  # not one byte of the bad block
    assert body == data[:len(body)]
    _dropped_and_recalled(file)
    assert OrderItem.objects.get(order=order).state == "waiting"
    assert Order.objects.get(pk=order.pk).state == "staging"


@pytest.mark.parametrize("at", [5, SIZE - 1])
def test_rot_before_any_block_map_holds_back_the_last_block(ordered, at):
    """No map yet (fresh from ingest): the catalog MD5 decides, once the last block is read,
    and that block is never sent."""
    _, path, file, data = ordered
    rot(archive.cache_path(file), at)
    body, error = received(APIClient().get(path))
    assert "damaged" in str(error)
    assert len(body) == 2 * BLOCK < SIZE
    assert hashlib.md5(body).hexdigest() != file.checksum
    _dropped_and_recalled(file)


def test_rot_in_a_file_downloaded_without_an_order_queues_its_recall(ordered, alice):
    _, _, file, data = ordered
    rot(archive.cache_path(file), BLOCK + 1)
    body, error = received(alice.get(f"/api/v1/files/{file.pk}/download"))
    assert error is not None and len(body) < SIZE
    _dropped_and_recalled(file)


def _verified_ago(file, seconds):
    CacheEntry.objects.filter(file=file).update(
        verified_at=timezone.now() - timedelta(seconds=seconds))


def test_a_range_of_a_file_verified_too_long_ago_is_hashed_first(ordered, settings):
    order, path, file, data = ordered
    settings.GRANARY_CACHE_SCRUB_S = 3600
    _verified_ago(file, 3601)
    response = APIClient().get(path, HTTP_RANGE="bytes=100-199")
    assert response.status_code == 206 and received(response)[0] == data[100:200]
    assert CacheEntry.objects.get(file=file).verified_at > timezone.now() - timedelta(minutes=1)

    _verified_ago(file, 3601)
    rot(archive.cache_path(file), SIZE - 1)        # far from the range asked for
    response = APIClient().get(path, HTTP_RANGE="bytes=100-199")
    assert response.status_code == 503 and "damaged" in response.json()["detail"]
    assert "Retry-After" in response
    _dropped_and_recalled(file)
    assert OrderItem.objects.get(order=order).state == "waiting"


def test_a_range_of_a_file_verified_within_the_bound_is_sent_without_hashing(ordered, settings):
    _, path, file, data = ordered
    settings.GRANARY_CACHE_SCRUB_S = 3600
    _verified_ago(file, 3000)
    before = CacheEntry.objects.get(file=file).verified_at
    response = APIClient().get(path, HTTP_RANGE=f"bytes={BLOCK}-")
    assert response.status_code == 206 and received(response)[0] == data[BLOCK:]
    assert CacheEntry.objects.get(file=file).verified_at == before


def test_the_scrub_drops_a_rotten_file_and_verifies_the_others_oldest_first(
        collection, archived, settings):
    settings.GRANARY_CACHE_SCRUB_S = 3600
    granules = archived(collection, 3, sizes=(SIZE,))
    files = [g.files.get() for g in granules]
    for age, f in zip((7200, 9000, 60), files, strict=True):
        _verified_ago(f, age)
    rot(archive.cache_path(files[0]), BLOCK + 3)

    # a budget of one byte reads one file: the oldest verified (files[1]), which is sound
    assert scrub.scrub(budget=1) == {"files": 1, "bytes": SIZE, "damaged": 0}
    entry = CacheEntry.objects.get(file=files[1])
    assert entry.verified_at > timezone.now() - timedelta(minutes=1)
    assert len(entry.blocks) == 8 * 3
    assert not ArchiveRequest.objects.filter(kind="recall").exists()

    assert scrub.scrub() == {"files": 1, "bytes": SIZE, "damaged": 1}   # files[2] is fresh
    _dropped_and_recalled(files[0])
    assert ArchiveRequest.objects.get(file=files[0], kind="recall").priority == \
        ArchiveRequest.Priority.BACKGROUND
    assert scrub.scrub() == {"files": 0, "bytes": 0, "damaged": 0}      # nothing left due


def test_the_scrub_leaves_a_dirty_file_to_its_migration(collection, data_root, settings):
    from tests.archive_fixtures import staged_granule

    granule, sources = staged_granule(collection, data_root / "staging", sizes=(3000,))
    assert archive.archive_granule(granule, sources).admitted    # not yet on tape: dirty
    CacheEntry.objects.update(verified_at=None)
    assert scrub.scrub() == {"files": 0, "bytes": 0, "damaged": 0}


def test_a_push_of_a_rotten_file_fails_with_the_reason_and_leaves_nothing(
        alice, collection, archived, data_root):
    [granule] = archived(collection, 1, sizes=(SIZE,))
    file = granule.files.get()
    dest = alice.post("/api/v1/destinations/", {"name": "lab"}, format="json").json()
    order_id = alice.post("/api/v1/orders/", {"granules": [granule.pk], "delivery": "push",
                                              "destination": dest["id"]},
                          format="json").json()["id"]
    orders.refresh_order(order_id)
    rot(archive.cache_path(file), BLOCK + 9)
    with pytest.raises(PushError, match="damaged"):
        push.push_order(order_id)
    order = Order.objects.get(pk=order_id)
    assert order.push_attempts == 1
    assert f"{granule.granule_id}/{file.name} was not sent" in order.error
    assert "damaged" in order.error
    folder = data_root / "outbox" / alice.user.username / "lab" / f"order-{order_id}"
    assert not [p for p in folder.rglob("*") if p.is_file()]    # no copy, no partial
    assert OrderItem.objects.get(order_id=order_id).state == "waiting"
    _dropped_and_recalled(file)


def _sent_directly(found, sock_pair):
    """The whole file by the path gunicorn takes: the body's iterator sends checked blocks
    by sendfile(2) to the socket; (bytes the peer received, the error that cut it)."""
    ours, theirs = sock_pair
    got = bytearray()
    reader = threading.Thread(target=lambda: got.extend(b"".join(iter(
        lambda: theirs.recv(1 << 16), b""))))
    reader.start()
    body, _ = downloads.open_download(found, None, ours)
    assert body.sock is ours
    error = None
    try:
        assert set(body) == {b""}               # nothing goes through the server's writes
    except archive.CacheDamaged as exc:
        error = exc
    finally:
        body.close()
        ours.close()
        reader.join()
        theirs.close()
    return bytes(got), error


def test_the_direct_sendfile_path_checks_each_block_before_it_leaves(ordered):
    order, path, file, data = ordered
    query = dict(part.split("=", 1) for part in urlsplit(path).query.split("&"))
    found = downloads.authorize_download(AnonymousUser(), file.pk, query)
    assert _sent_directly(found, socket.socketpair()) == (data, None)    # records the map
    rot(archive.cache_path(file), 2 * BLOCK + 1)
    got, error = _sent_directly(found, socket.socketpair())
    assert "damaged" in str(error)
    assert got == data[:2 * BLOCK]
    _dropped_and_recalled(file)
    assert OrderItem.objects.get(order=order).state == "waiting"
