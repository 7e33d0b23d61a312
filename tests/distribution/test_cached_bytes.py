"""No byte is served from the cache unless it matches the catalog checksum: a byte flipped in
a cached file is refused (503, the push attempt fails) and the file is recalled from tape; an
untouched file is served without being hashed again."""
import hashlib
import os
from urllib.parse import urlsplit

import pytest
from rest_framework.test import APIClient

from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, CacheEntry
from backend.catalog.models import File
from distribution.models import Order, OrderItem
from distribution.services import orders, push, upkeep
from distribution.targets import PushError
from tests.archive_fixtures import staged_granule

from .conftest import body

pytestmark = pytest.mark.django_db


def _stat_fingerprint(path):
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def _flip_a_byte(path, at=100):
    """Damage the cached file in place, as a bad disk block or a stray write would."""
    with open(path, "r+b") as handle:
        handle.seek(at)
        byte = handle.read(1)
        handle.seek(at)
        handle.write(bytes([byte[0] ^ 0xFF]))


@pytest.fixture
def ordered(alice, collection, archived, inline):
    """An archived one-file granule ordered by alice: (order, its signed link path, file)."""
    [granule] = archived(collection, 1, sizes=(5000,))
    response = inline(alice.post, "/api/v1/orders/", {"granules": [granule.pk]}, format="json")
    order = Order.objects.get(pk=response.json()["id"])
    assert order.state == "ready"
    [link] = alice.get(f"/api/v1/orders/{order.pk}/links/").json()["links"]
    parts = urlsplit(link["url"])
    return order, f"{parts.path}?{parts.query}", File.objects.get(pk=link["file_id"])


def test_a_byte_flipped_in_a_cached_file_is_never_served_and_the_file_is_recalled(
        ordered, inline):
    order, path, file = ordered
    client = APIClient()
    original = body(client.get(path))
    assert hashlib.md5(original).hexdigest() == file.checksum
    cached = archive.cache_path(file)
    _flip_a_byte(cached)

    response = client.get(path)
    assert response.status_code == 503
    assert "damaged" in response.json()["detail"]
    assert OrderItem.objects.get(order=order).state == "waiting"
    assert Order.objects.get(pk=order.pk).state == "staging"
    orders.refresh_order(order.pk)  # the refresh the download queued
    assert ArchiveRequest.objects.get(file=file, kind="recall").state == "queued"

    inline(archive.run_until_idle)
    inline(orders.refresh_order, order.pk)
    response = client.get(path)
    assert response.status_code == 200
    served = body(response)
    assert hashlib.md5(served).hexdigest() == hashlib.md5(original).hexdigest()
    assert served == original


def test_a_damaged_cached_file_is_refused_to_a_download_without_an_order(ordered, alice):
    _, _, file = ordered
    _flip_a_byte(archive.cache_path(file), at=0)
    response = alice.get(f"/api/v1/files/{file.pk}/download")
    assert response.status_code == 503
    assert "damaged" in response.json()["detail"]
    assert not CacheEntry.objects.filter(file=file).exists()  # recalled by the next order


def test_an_untouched_cached_file_is_served_without_hashing_it_again(ordered):
    _, path, file = ordered
    cached = archive.cache_path(file)
    entry = CacheEntry.objects.get(file=file)
    # admission remembered the placed file's fingerprint: the first download hashes nothing
    assert entry.checked == _stat_fingerprint(cached)
    served = body(APIClient().get(path))
    assert hashlib.md5(served).hexdigest() == file.checksum
    assert CacheEntry.objects.get(file=file).checked == entry.checked


def test_a_changed_but_intact_cached_file_is_hashed_once_and_served(ordered):
    _, path, file = ordered
    cached = archive.cache_path(file)
    before = CacheEntry.objects.get(file=file).checked
    later = cached.stat().st_mtime_ns + 10**9
    os.utime(cached, ns=(later, later))  # touched, bytes the same
    served = body(APIClient().get(path))
    assert hashlib.md5(served).hexdigest() == file.checksum
    checked = CacheEntry.objects.get(file=file).checked
    assert checked != before and checked == _stat_fingerprint(cached)


def test_the_only_copy_of_a_damaged_file_is_kept_but_not_served(collection, data_root):
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(3000,))
    assert archive.archive_granule(granule, sources).admitted  # not yet on tape: dirty
    file = granule.files.get()
    cached = archive.cache_path(file)
    _flip_a_byte(cached)
    with pytest.raises(archive.CacheDamaged, match="damaged"):
        archive.open_for_serving(file)
    assert CacheEntry.objects.get(file=file).state == "dirty" and cached.exists()


def test_a_push_of_a_damaged_cached_file_fails_the_attempt_and_delivers_after_the_recall(
        alice, collection, archived, inline, data_root):
    [granule] = archived(collection, 1, sizes=(4000,))
    file = granule.files.get()
    original = archive.cache_path(file).read_bytes()
    dest = alice.post("/api/v1/destinations/", {"name": "lab"}, format="json").json()
    order_id = alice.post("/api/v1/orders/", {"granules": [granule.pk], "delivery": "push",
                                              "destination": dest["id"]},
                          format="json").json()["id"]
    orders.refresh_order(order_id)
    _flip_a_byte(archive.cache_path(file))
    with pytest.raises(PushError, match="damaged"):
        push.push_order(order_id)
    order = Order.objects.get(pk=order_id)
    assert order.push_attempts == 1 and "damaged" in order.error
    delivered = (data_root / "outbox" / alice.user.username / "lab" / f"order-{order_id}"
                 / granule.granule_id / file.name)
    assert not delivered.exists()

    assert OrderItem.objects.get(order_id=order_id).state == "waiting"
    upkeep.sweep()  # beat: the order's refresh queues the recall
    inline(archive.run_until_idle)
    upkeep.sweep()  # ready again: pushed
    order = Order.objects.get(pk=order_id)
    assert order.state == "completed"
    assert hashlib.sha256(delivered.read_bytes()).digest() == hashlib.sha256(original).digest()
