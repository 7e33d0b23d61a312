"""Orders larger than the cache are staged in parts (issue #17): every file reaches the user
whole, a ready file is never purged before it is delivered, no file is recalled twice, and an
archive whose recalls wait for room sits idle instead of spinning.

The tests commit for real (transaction=True) and run distribution's tasks inline, as a worker
would: a recall's after-commit work (the order keeping the file, its refresh) runs when the
recall commits. The movers are run by the test (run_until_idle), as separate processes would be:
the broker's nudge to start them is not sent."""
import hashlib
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.db.models import F
from rest_framework.test import APIClient

from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, CacheEntry
from backend.archive.services.cache import cache_usage
from distribution.models import Order, OrderItem
from distribution.services import upkeep

from .conftest import body, client_for, evict

pytestmark = pytest.mark.django_db(transaction=True)

CACHE = 1_000_000
SIZES = (60_000, 80_000)  # ten granules of two files: 1.4 times the cache


@pytest.fixture(autouse=True)
def movers_run_by_the_test(monkeypatch):
    from backend.archive import tasks

    monkeypatch.setattr(tasks.tick, "apply_async", lambda *args, **kwargs: None)


def _work():
    """Run the movers until they have nothing to do, and check they then stay idle."""
    archive.run_until_idle(max_rounds=5)
    assert archive.run_until_idle(max_rounds=2) == 0, "the archive spins"
    assert cache_usage().used <= CACHE


@pytest.fixture
def on_tape(collection, archived, data_root, eager):
    """archived granules left on tape only, and the MD5 of each file's original bytes."""
    def make(n):
        granules = archived(collection, n, sizes=SIZES)
        originals = {f.pk: hashlib.md5((data_root / "staging" / f.name).read_bytes()).hexdigest()
                     for g in granules for f in g.files.all()}
        evict(granules)
        return granules, originals
    return make


def _order(client, granules):
    response = client.post("/api/v1/orders/", {"granules": [g.pk for g in granules]},
                           format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def _download_ready(client, order_id, done):
    """Download every ready file not downloaded yet; {file id: MD5 of the bytes received}."""
    for link in client.get(f"/api/v1/orders/{order_id}/links/").json()["links"]:
        if link["file_id"] in done:
            continue
        parts = urlsplit(link["url"])
        response = APIClient().get(f"{parts.path}?{parts.query}")
        assert response.status_code == 200, f"{link['name']}: {response.status_code}"
        done[link["file_id"]] = hashlib.md5(body(response)).hexdigest()
    return done


def _recalls():
    return list(ArchiveRequest.objects.filter(kind="recall").values_list("file_id", flat=True))


def test_an_order_larger_than_the_cache_reaches_the_user_whole(alice, on_tape, settings):
    granules, originals = on_tape(10)
    settings.GRANARY_CACHE_BYTES = CACHE
    order_id = _order(alice, granules)
    in_parts = alice.get(f"/api/v1/orders/{order_id}/").json().get("in_parts")
    done = {}
    for _ in range(len(originals)):
        _work()
        _download_ready(alice, order_id, done)
        if len(done) == len(originals):
            break
    assert done == originals
    assert sorted(_recalls()) == sorted(originals)  # one recall per file, none repeated
    order = alice.get(f"/api/v1/orders/{order_id}/").json()
    assert order["state"] == "completed" and not order["in_parts"]
    assert in_parts  # the user was told, while it was staged, and mailed as parts were ready
    parts = [m for m in mail.outbox if m.subject.endswith("to follow")]
    assert parts and all("staged in parts" in m.body for m in parts)


def test_recalls_waiting_for_room_leave_the_archive_idle_until_room_is_made(
        alice, on_tape, settings):
    bob = client_for()
    granules, originals = on_tape(20)
    settings.GRANARY_CACHE_BYTES = CACHE
    settings.GRANARY_ORDER_CACHE_SHARE = 0.6
    alice_order, bob_order = _order(alice, granules[:10]), _order(bob, granules[10:])
    # alice's first part is kept for her and fills the cache with bob's: the rest of bob's
    # part waits for room, and the archive has nothing to do meanwhile (no spinning)
    _work()
    waiting = ArchiveRequest.objects.filter(kind="recall", state="queued")
    assert waiting.exists()
    assert Order.objects.get(pk=alice_order).state == Order.State.STAGING
    assert Order.objects.get(pk=bob_order).state == Order.State.STAGING
    assert len(_recalls()) == len(set(_recalls()))
    done = {}
    for _ in range(len(originals)):
        _work()
        _download_ready(alice, alice_order, done)
        _download_ready(bob, bob_order, done)
        if len(done) == len(originals):
            break
    assert done == originals
    assert sorted(_recalls()) == sorted(originals)


def test_a_file_larger_than_the_whole_cache_fails_with_the_reason(alice, on_tape, settings):
    granules, originals = on_tape(2)
    settings.GRANARY_CACHE_BYTES = 70_000  # the 80 kB files cannot fit, the 60 kB ones can
    order_id = _order(alice, granules)
    done = {}
    for _ in range(4):
        _work()
        _download_ready(alice, order_id, done)
    assert done == {pk: md5 for pk, md5 in originals.items() if pk in done} and len(done) == 2
    order = alice.get(f"/api/v1/orders/{order_id}/").json()
    assert order["state"] == "completed"
    assert order["counts"] == {"waiting": 0, "ready": 2, "failed": 2, "expired": 0,
                               "cancelled": 0, "empty": 0}
    for item in order["items"]:
        if item["size"] == SIZES[1]:
            assert "larger than the whole cache" in item["error"]
    assert all(size == SIZES[0] for size in
               ArchiveRequest.objects.filter(kind="recall").values_list("bytes_total",
                                                                       flat=True))


def test_a_push_order_larger_than_the_cache_is_copied_whole_part_by_part(
        alice, on_tape, settings, data_root):
    granules, originals = on_tape(10)
    settings.GRANARY_CACHE_BYTES = CACHE
    dest = alice.post("/api/v1/destinations/", {"name": "lab"}, format="json").json()
    response = alice.post("/api/v1/orders/", {"granules": [g.pk for g in granules],
                                              "delivery": "push", "destination": dest["id"]},
                          format="json")
    order_id = response.json()["id"]
    for _ in range(len(originals)):
        _work()
        if Order.objects.get(pk=order_id).state == Order.State.COMPLETED:
            break
    folder = data_root / "outbox" / alice.user.username / "lab" / f"order-{order_id}"
    copied = {f.pk: hashlib.md5((folder / g.granule_id / f.name).read_bytes()).hexdigest()
              for g in granules for f in g.files.all()}
    assert copied == originals
    assert sorted(_recalls()) == sorted(originals)
    assert Order.objects.get(pk=order_id).state == Order.State.COMPLETED


def test_a_part_left_undownloaded_expires_the_order_and_nothing_more_is_recalled(
        alice, on_tape, settings):
    granules, originals = on_tape(10)
    settings.GRANARY_CACHE_BYTES = CACHE
    order_id = _order(alice, granules)
    _work()
    asked = len(_recalls())
    ready = OrderItem.objects.filter(order_id=order_id, state="ready")
    assert 0 < ready.count() == asked < len(originals)
    kept = list(ready.values_list("file_id", flat=True))
    assert not CacheEntry.objects.filter(file_id__in=kept, keep_until__isnull=True).exists()
    # a retention later (every date moved back by one), nobody has downloaded the part
    later = timedelta(days=settings.GRANARY_ORDER_RETENTION_DAYS, seconds=1)
    ready.update(expires_at=F("expires_at") - later)
    CacheEntry.objects.filter(file_id__in=kept).update(keep_until=F("keep_until") - later)
    upkeep.expire()
    upkeep.sweep()
    _work()
    assert Order.objects.get(pk=order_id).state == Order.State.EXPIRED
    assert set(OrderItem.objects.filter(order_id=order_id).values_list("state", flat=True)) == {
        "expired"}
    assert len(_recalls()) == asked
    assert not CacheEntry.objects.filter(file_id__in=kept, keep_until__isnull=False).exists()
