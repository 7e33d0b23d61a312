"""Withdraw, restore and delete a granule (#20): what users see afterwards (catalog search,
STAC, subscriptions, cart, downloads), what orders do, and what the archive keeps: a deleted
granule's tape copies leave their volumes' live bytes, and a repack reclaims their room."""
import pytest

from backend.accounts.models import AuditEvent
from backend.archive import invariants, operations
from backend.archive import services as archive
from backend.archive.models import CacheEntry, FileCopy, Volume
from backend.archive.services import retirement
from backend.catalog.models import Granule
from backend.errors import Conflict, DomainError
from distribution.models import CartItem, Order, OrderItem, SubscriptionDelivery
from distribution.services import deliveries

from .conftest import evict

pytestmark = pytest.mark.django_db


def _searched(client, granule):
    ids = [g["id"] for g in client.get(
        f"/api/v1/granules/?granule_id={granule.granule_id}").json()["results"]]
    return granule.pk in ids


def _in_stac(client, granule):
    page = client.get(f"/stac/search?ids={granule.granule_id}&collections="
                      f"{granule.collection.key}").json()
    return [f["id"] for f in page["features"]] == [granule.granule_id]


def _volume_live(file_ids):
    """{volume id: (live bytes, file count)} of the volumes holding `file_ids`' copies."""
    ids = set(FileCopy.objects.filter(file_id__in=file_ids).values_list("volume_id", flat=True))
    return {v.pk: (v.live_bytes, v.file_count) for v in Volume.objects.filter(pk__in=ids)}


def test_withdraw_hides_and_restore_brings_back(alice, operator, collection, archived):
    granule, other = archived(collection, 2)
    assert _searched(alice, granule) and _in_stac(alice, granule)
    retirement.withdraw(granule, by=operator.user, reason="bad calibration")

    granule.refresh_from_db()
    assert granule.state == "withdrawn"
    assert not _searched(alice, granule) and not _in_stac(alice, granule)
    assert not _in_stac(operator, granule)
    item = f"/stac/collections/{granule.collection.key}/items/{granule.granule_id}"
    assert alice.get(item).status_code == 404
    gone = alice.get(f"/api/v1/granules/{granule.pk}/")
    assert gone.status_code == 410 and "bad calibration" in gone.json()["detail"]
    assert _searched(alice, other)
    response = alice.post("/api/v1/cart/", {"granules": [granule.pk]}, format="json")
    assert response.status_code == 400 and "withdrawn" in response.json()["detail"]
    [event] = AuditEvent.objects.filter(target_type="granule", target_id=str(granule.pk))
    assert (event.action, event.actor_name, event.reason) == (
        "withdraw", operator.user.username, "bad calibration")
    # kept on tape, and the archive's promises hold for it
    assert FileCopy.objects.filter(file__granule=granule, state="verified").count() == 4
    assert invariants.check_records() == []

    retirement.restore(granule, by=operator.user, reason="recalibrated")
    granule.refresh_from_db()
    assert granule.state == "archived"
    assert _searched(alice, granule) and _in_stac(alice, granule)


def test_download_of_a_withdrawn_granule_is_410_with_the_reason(alice, collection, archived,
                                                                 operator, inline):
    [granule] = archived(collection, 1)
    response = inline(alice.post, "/api/v1/orders/", {"granules": [granule.pk]}, format="json")
    order = Order.objects.get(pk=response.json()["id"])
    links = alice.get(f"/api/v1/orders/{order.pk}/links/").json()["links"]
    file_id = links[0]["file_id"]
    retirement.withdraw(granule, by=operator.user, reason="wrong orbit")

    for client, url in ((alice, f"/api/v1/files/{file_id}/download"),
                        (alice, links[0]["url"].replace("http://testserver", ""))):
        response = client.get(url)
        assert response.status_code == 410
        assert "wrong orbit" in response.json()["detail"]
    items = OrderItem.objects.filter(order=order)
    assert {i.state for i in items} == {"failed"}
    assert all("wrong orbit" in i.error for i in items)
    order.refresh_from_db()
    assert order.state == "failed"


def test_pending_items_and_deliveries_fail_and_carts_say_so(alice, operator, collection,
                                                            archived, inline):
    granule, other = archived(collection, 2)
    evict([granule, other])  # items wait for recalls
    inline(alice.post, "/api/v1/cart/", {"granules": [granule.pk, other.pk]}, format="json")
    CartItem.objects.create(user=operator.user, granule=granule)
    order = Order.objects.create(user=alice.user)
    for g in (granule, other):
        for f in g.files.all():
            OrderItem.objects.create(order=order, granule=g, file=f)
    sub = alice.post("/api/v1/subscriptions/", {"name": "all", "collections": [
        collection.key]}, format="json").json()
    pending = SubscriptionDelivery.objects.create(subscription_id=sub["id"], granule=granule)

    retirement.delete(granule, by=operator.user, reason="duplicate of another")

    assert {i.state for i in OrderItem.objects.filter(granule=granule)} == {"failed"}
    assert {i.state for i in OrderItem.objects.filter(granule=other)} == {"waiting"}
    pending.refresh_from_db()
    assert pending.state == "failed" and "duplicate of another" in pending.detail
    cart = alice.get("/api/v1/cart/").json()
    assert [g["granule"] for g in cart["granules"]] == [other.pk]
    assert [(w["granule"], w["state"]) for w in cart["withdrawn"]] == [(granule.pk, "deleted")]
    assert "duplicate of another" in cart["withdrawn"][0]["reason"]
    # subscriptions never deliver it: matching a retired granule makes nothing
    SubscriptionDelivery.objects.all().delete()
    assert deliveries.match_granule(granule.pk) == 0
    assert deliveries.match_granule(other.pk) == 1


def test_delete_releases_copies_and_a_repack_reclaims_them(operator, collection, archived,
                                                           data_root, inline):
    keep, gone = archived(collection, 2, sizes=(40000,))
    gone_files = list(gone.files.values_list("pk", flat=True))
    cached = [archive.cache_path(f) for f in gone.files.all()]
    assert all(p.exists() for p in cached)
    before = _volume_live(gone_files)
    sizes = {v: 0 for v in before}
    for c in FileCopy.objects.filter(file_id__in=gone_files, state="verified"):
        sizes[c.volume_id] += c.length

    released = inline(retirement.delete, gone, by=operator.user, reason="corrupt product")

    gone.refresh_from_db()
    assert gone.state == "deleted" and gone.files.count() == 1  # the tombstone
    assert released == 2 * 40000
    after = _volume_live(gone_files)
    for volume, (live, count) in before.items():
        assert after[volume] == (live - sizes[volume], count - 1)
    assert not FileCopy.objects.filter(file_id__in=gone_files).exclude(state="released").exists()
    assert not CacheEntry.objects.filter(file_id__in=gone_files).exists()
    assert not any(p.exists() for p in cached)
    assert invariants.check_all(read_bytes=True) == []

    volume = FileCopy.objects.filter(file__granule=gone, copy_number=1).get().volume
    evict([keep])
    repack = operations.start_repack(volume)
    assert repack.bytes_total == 40000  # the live bytes left: the kept granule's only
    inline(archive.run_until_idle)
    volume.refresh_from_db()
    repack.refresh_from_db()
    assert repack.state == "done" and volume.state == Volume.State.SCRATCH
    assert (volume.live_bytes, volume.file_count) == (0, 0)
    moved = FileCopy.objects.get(file__granule=keep, copy_number=1, state="verified")
    assert moved.volume_id != volume.pk
    # the deleted granule was not copied anywhere
    assert FileCopy.objects.filter(file_id__in=gone_files).exclude(state="released").count() == 0
    assert invariants.check_all(read_bytes=True) == []


def test_refusals(operator, collection, archived):
    [granule] = archived(collection, 1)
    for reason in ("", "   ", None, 5, "x" * 3000):
        with pytest.raises(DomainError) as caught:
            retirement.withdraw(granule, by=operator.user, reason=reason)
        assert caught.value.field == "reason"
    with pytest.raises(Conflict, match="only a granule that is withdrawn"):
        retirement.restore(granule, by=operator.user, reason="why not")
    retirement.delete(granule, by=operator.user, reason="gone")
    for action in (retirement.withdraw, retirement.delete, retirement.restore):
        with pytest.raises(Conflict, match="is deleted"):
            action(granule, by=operator.user, reason="again")
    assert list(AuditEvent.objects.values_list("action", flat=True)) == ["delete"]
    assert Granule.objects.get(pk=granule.pk).state == "deleted"


def test_delete_waits_for_moving_files_and_cancels_queued_work(operator, collection, archived):
    from backend.archive.models import ArchiveRequest

    [granule] = archived(collection, 1)
    f = granule.files.first()
    audit = ArchiveRequest.objects.create(kind="audit", priority=3, file=f, copy_number=1,
                                          bytes_total=f.size)
    moving = ArchiveRequest.objects.create(kind="recall", priority=1, file=f,
                                           bytes_total=f.size, state="running")
    live = FileCopy.objects.filter(file__granule=granule, state="verified").count()
    with pytest.raises(Conflict, match="being moved"):
        retirement.delete(granule, by=operator.user, reason="now")
    assert Granule.objects.get(pk=granule.pk).state == "archived"
    assert FileCopy.objects.filter(file__granule=granule, state="verified").count() == live
    assert not AuditEvent.objects.exists()

    ArchiveRequest.objects.filter(pk=moving.pk).update(state="done")
    retirement.delete(granule, by=operator.user, reason="now")
    audit.refresh_from_db()
    assert audit.state == "cancelled" and "granule deleted: now" in audit.error


def test_a_repaired_copy_never_republishes_a_withdrawn_granule(operator, collection, archived):
    """Regression: a mover that verifies a copy marks complete granules ARCHIVED; a withdrawn
    granule whose damaged copy was written again came back into search that way."""
    from backend.archive.services.completeness import complete_granules_if_archived

    [granule] = archived(collection, 1)
    retirement.withdraw(granule, by=operator.user, reason="under review")
    assert complete_granules_if_archived([granule.pk]) == []
    assert Granule.objects.get(pk=granule.pk).state == "withdrawn"
