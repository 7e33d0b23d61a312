"""Subscriptions: validation, rights, matching on archive (once each), apply-since, modes."""
from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.db import connection

from backend.archive.signals import granule_archived
from backend.catalog.models import Collection, Granule
from distribution.models import Order, Subscription, SubscriptionDelivery
from distribution.services import deliveries, subscriptions
from tests.archive_fixtures import archived_collection

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 6, 1, tzinfo=UTC)


def _subscribe(client, **fields):
    data = {"name": "fires", "collections": ["MOD021KM.061"], **fields}
    return client.post("/api/v1/subscriptions/", data, format="json")


@pytest.mark.parametrize("fields, message", [
    ({"bbox": [10, 20, 0]}, "bbox"),
    ({"bbox": "0,50,10,40"}, "south"),
    ({"bbox": [0, 0, 200, 10]}, "longitudes"),
    ({"start": "yesterday"}, "not an ISO 8601"),
    ({"end": "2024-13-45"}, "'2024-13-45' is not a valid date"),
    ({"start": "2024-06-02", "end": "2024-06-01"}, "ends before it starts"),
    ({"conditions": [{"name": "cloud_cover", "op": "lt", "value": "low"}]}, "needs a number"),
    ({"conditions": {"cloud_cover": 1}}, "list"),
    ({"collections": ["NOPE.001"]}, "unknown collection"),
    ({"mode": "push"}, "destination"),
])
def test_bad_filters_are_400_with_a_message(alice, collection, fields, message):
    response = _subscribe(alice, **fields)
    assert response.status_code == 400, response.json()
    assert message in response.json()["detail"]


def test_restricted_collection_is_403(alice, collection):
    Collection.objects.filter(pk=collection.pk).update(access="restricted")
    response = _subscribe(alice)
    assert response.status_code == 403 and "restricted" in response.json()["detail"]


def test_matching_granules_of_a_later_archive_run_are_delivered_once(
        alice, bob, collection, archived, archive_layout, inline):
    window = {"start": T0.isoformat(), "end": (T0 + timedelta(days=1)).isoformat()}
    response = _subscribe(alice, bbox=[170, -10, -170, 10], **window,
                          conditions=[{"name": "day_night", "value": "Day"}])
    assert response.status_code == 201, response.json()
    sub = response.json()
    assert sub["bbox"] == [170, -10, -170, 10]
    other = _subscribe(bob, mode="order").json()
    elsewhere = archived_collection(archive_layout, short_name="OTHER", version="001")

    inside = {"west": 175, "south": -5, "east": 179, "north": 5,
              "temporal_start": T0 + timedelta(hours=2),
              "temporal_end": T0 + timedelta(hours=3)}
    crossing = {**inside, "west": 178, "east": -178}
    wrong_place = {**inside, "west": 0, "east": 10}
    wrong_time = {**inside, "temporal_start": T0 - timedelta(days=3),
                  "temporal_end": T0 - timedelta(days=2)}
    night = {**inside, "attributes": {"day_night": "Night"}}
    granules = {}
    for label, fields in [("inside", inside), ("crossing", crossing),
                          ("wrong_place", wrong_place), ("wrong_time", wrong_time),
                          ("night", night)]:
        granules[label] = archived(collection, 1, sizes=(100,), **fields)[0]
    [foreign] = archived(elsewhere, 1, sizes=(100,), **inside)

    delivered = SubscriptionDelivery.objects.filter(subscription_id=sub["id"])
    assert {d.granule_id for d in delivered} == {granules["inside"].pk,
                                                 granules["crossing"].pk}
    assert {d.state for d in delivered} == {"delivered"}
    assert SubscriptionDelivery.objects.filter(subscription_id=other["id"]).count() == 5
    assert not SubscriptionDelivery.objects.filter(granule=foreign).exists()
    mails = len(mail.outbox)

    for g in Granule.objects.all():
        inline(granule_archived.send, sender=Granule, granule=g)
        inline(deliveries.match_granule, g.pk)
    assert delivered.count() == 2
    assert SubscriptionDelivery.objects.filter(subscription_id=other["id"]).count() == 5
    assert len(mail.outbox) == mails

    log = alice.get(f"/api/v1/subscriptions/{sub['id']}/deliveries/").json()["results"]
    assert {row["granule_pk"] for row in log} == {granules["inside"].pk,
                                                  granules["crossing"].pk}
    assert bob.get(f"/api/v1/subscriptions/{sub['id']}/deliveries/").status_code == 404

    standing = Order.objects.get(subscription_id=other["id"])
    assert standing.state == "ready"
    links = bob.get(f"/api/v1/orders/{standing.pk}/links/").json()
    assert len(links["links"]) == 5


def test_apply_since_delivers_what_is_already_archived(alice, collection, archived, inline):
    old, new = archived(collection, 2)
    Granule.objects.filter(pk=old.pk).update(archived_at=T0 - timedelta(days=10))
    Granule.objects.filter(pk=new.pk).update(archived_at=T0)
    sub = _subscribe(alice).json()
    assert not SubscriptionDelivery.objects.exists()
    response = inline(alice.post, f"/api/v1/subscriptions/{sub['id']}/apply/",
                      {"since": "2024-05-30"}, format="json")
    assert response.status_code == 202
    assert list(SubscriptionDelivery.objects.values_list("granule_id", flat=True)) == [new.pk]
    inline(alice.post, f"/api/v1/subscriptions/{sub['id']}/apply/", {"since": "2024-05-30"},
           format="json")
    assert SubscriptionDelivery.objects.count() == 1
    response = alice.post(f"/api/v1/subscriptions/{sub['id']}/apply/", {"since": "soon"},
                          format="json")
    assert response.status_code == 400 and "ISO 8601" in response.json()["detail"]


def test_push_subscription_copies_into_the_destination(alice, collection, archived, inline,
                                                      data_root):
    dest = alice.post("/api/v1/destinations/", {"name": "feed"}, format="json").json()
    sub = _subscribe(alice, mode="push", destination=dest["id"]).json()
    [granule] = archived(collection, 1, sizes=(700,))
    folder = data_root / "outbox" / alice.user.username / "feed" / f"subscription-{sub['id']}"
    assert (folder / granule.granule_id / granule.files.get().name).stat().st_size == 700
    assert (folder / "manifest.json").exists()


def test_inactive_subscription_gets_nothing(alice, collection, archived):
    sub = _subscribe(alice).json()
    response = alice.patch(f"/api/v1/subscriptions/{sub['id']}/", {"active": False},
                           format="json")
    assert response.status_code == 200 and response.json()["active"] is False
    archived(collection, 1)
    assert not SubscriptionDelivery.objects.exists()


def test_deleting_a_subscription_releases_its_standing_order(alice, collection, archived):
    from backend.archive.models import CacheEntry

    sub = _subscribe(alice, mode="order").json()
    [granule] = archived(collection, 1)
    order = Order.objects.get(subscription_id=sub["id"])
    assert alice.post(f"/api/v1/orders/{order.pk}/cancel/").status_code == 409
    assert CacheEntry.objects.filter(file__granule=granule, keep_until__isnull=False).exists()
    assert alice.delete(f"/api/v1/subscriptions/{sub['id']}/").status_code == 204
    assert not Order.objects.filter(pk=order.pk).exists()
    assert not CacheEntry.objects.filter(file__granule=granule, keep_until__isnull=False).exists()


@pytest.mark.django_db(transaction=True)
def test_deleting_a_subscription_while_it_is_applied_stops_the_apply(alice, collection, archived,
                                                                     monkeypatch):
    """Regression: an apply that outlived its subscription inserted deliveries for a deleted
    row, and the worker died on a foreign-key IntegrityError."""
    archived(collection, 2)
    sub = _subscribe(alice).json()
    made = []

    def deliver_then_delete(delivery_id):
        made.append(delivery_id)
        subscriptions.delete_subscription(Subscription.objects.get(pk=sub["id"]))
        return True

    monkeypatch.setattr(deliveries, "deliver", deliver_then_delete)
    assert deliveries.apply_since(sub["id"], T0 - timedelta(days=3650)) == 1
    assert len(made) == 1
    assert not Subscription.objects.exists() and not SubscriptionDelivery.objects.exists()


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="row locks are PostgreSQL's; SQLite runs one writer at a time")
@pytest.mark.django_db(transaction=True)
def test_deleting_a_subscription_while_a_delivery_is_recorded_is_not_a_500(alice, collection,
                                                                            archived):
    """Issue 34, item 12: the DELETE collected the rows to remove, then a worker committed a
    delivery for the subscription, and the DELETE's commit failed on it (IntegrityError, 500).
    Here the worker holds the subscription's row (as _deliver_once does) while the DELETE is
    sent, and records its delivery only then."""
    import threading
    import time

    from django.db import transaction

    [granule] = archived(collection, 1)
    sub = _subscribe(alice).json()
    SubscriptionDelivery.objects.all().delete()
    held, go, answers = threading.Event(), threading.Event(), []

    def worker():
        try:
            with transaction.atomic():
                Subscription.objects.select_for_update().get(pk=sub["id"])
                held.set()
                go.wait(10)
                SubscriptionDelivery.objects.create(subscription_id=sub["id"], granule=granule)
        finally:
            connection.close()

    def delete():
        try:
            answers.append(alice.delete(f"/api/v1/subscriptions/{sub['id']}/").status_code)
        finally:
            connection.close()

    recording = threading.Thread(target=worker)
    recording.start()
    assert held.wait(10)
    deleting = threading.Thread(target=delete)
    deleting.start()
    time.sleep(0.5)   # the DELETE reaches the held row (a slower one only makes it easier)
    go.set()
    recording.join(20)
    deleting.join(20)
    assert answers == [204]
    assert not Subscription.objects.exists() and not SubscriptionDelivery.objects.exists()


def test_a_batch_is_matched_once_across_collections_with_and_without_subscriptions(
        alice, collection, archived, archive_layout, inline):
    """match_granules (what the archive sends per batch): only archived granules of a collection
    some subscription names are delivered, a gone id is skipped, and a second run adds none."""
    sub = _subscribe(alice, bbox=[0, 0, 20, 20]).json()
    SubscriptionDelivery.objects.all().delete()
    elsewhere = archived_collection(archive_layout, short_name="OTHER", version="001")
    box = {"west": 5, "south": 5, "east": 6, "north": 6}
    inside = archived(collection, 3, sizes=(10,), **box)
    outside = archived(collection, 1, sizes=(10,), **{**box, "west": 50, "east": 51})
    foreign = archived(elsewhere, 2, sizes=(10,), **box)
    Granule.objects.filter(pk=inside[2].pk).update(state=Granule.State.WITHDRAWN)
    SubscriptionDelivery.objects.all().delete()
    ids = [g.pk for g in inside + outside + foreign] + [10 ** 9]

    assert inline(deliveries.match_granules, ids) == 2
    assert set(SubscriptionDelivery.objects.filter(subscription_id=sub["id"]).values_list(
        "granule_id", flat=True)) == {inside[0].pk, inside[1].pk}
    assert inline(deliveries.match_granules, ids) == 0
    assert SubscriptionDelivery.objects.count() == 2
