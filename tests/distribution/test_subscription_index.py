"""The index rows matching reads (SubscriptionCollection) follow every change to a
subscription, so matching answers from them what the subscription says."""
from datetime import UTC, datetime, timedelta

import pytest

from distribution import services
from distribution.models import Subscription, SubscriptionCollection
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 6, 1, tzinfo=UTC)


@pytest.fixture
def granule():
    collection = CollectionFactory(short_name="MOD021KM", version="061")
    return GranuleFactory(collection=collection, temporal_start=T0,
                          temporal_end=T0 + timedelta(minutes=5), west=175, south=-5, east=-175,
                          north=5, attributes={"day_night": "Day", "cloud_cover": 12})


def rows_equal_subscription(pk):
    subscription = Subscription.objects.get(pk=pk)
    rows = SubscriptionCollection.objects.filter(subscription=subscription)
    assert rows.exists()
    for row in rows:
        assert services.subscription_index(row) == services.subscription_index(subscription)


def test_every_edit_reaches_the_index_and_the_matching(alice, granule):
    created = alice.post("/api/v1/subscriptions/", {
        "name": "pacific", "collections": ["MOD021KM.061"], "bbox": [170, -10, -170, 10],
        "start": T0.isoformat(), "conditions": [{"name": "cloud_cover", "op": "lt",
                                                 "value": 20}]}, format="json")
    assert created.status_code == 201, created.json()
    pk = created.json()["id"]
    rows_equal_subscription(pk)
    assert services.matching_subscriptions(granule) == [pk]

    for change, matches in [
        ({"bbox": [0, -10, 10, 10]}, False),
        ({"bbox": None}, True),
        ({"start": (T0 + timedelta(days=1)).isoformat()}, False),
        ({"start": None, "end": (T0 - timedelta(days=1)).isoformat()}, False),
        ({"end": None}, True),
        ({"conditions": [{"name": "day_night", "value": "Night"}]}, False),
        ({"conditions": []}, True),
        ({"active": False}, False),
        ({"active": True}, True),
    ]:
        response = alice.patch(f"/api/v1/subscriptions/{pk}/", change, format="json")
        assert response.status_code == 200, (change, response.json())
        rows_equal_subscription(pk)
        assert services.matching_subscriptions(granule) == ([pk] if matches else []), change


def test_a_new_version_matches_only_subscriptions_that_asked_for_new_versions(alice, granule):
    ids = {}
    for name, new_versions in (("all", True), ("first", False)):
        response = alice.post("/api/v1/subscriptions/", {
            "name": name, "collections": ["MOD021KM.061"], "new_versions": new_versions},
            format="json")
        assert response.status_code == 201, response.json()
        ids[name] = response.json()["id"]
    assert sorted(services.matching_subscriptions(granule)) == sorted(ids.values())
    newer = GranuleFactory(collection=granule.collection, granule_id=granule.granule_id,
                           version=2, replaces=granule, temporal_start=granule.temporal_start,
                           temporal_end=granule.temporal_end)
    assert services.matching_subscriptions(newer) == [ids["all"]]


def test_a_granule_without_a_footprint_matches_only_subscriptions_without_a_box(alice, granule):
    boxed = alice.post("/api/v1/subscriptions/", {
        "name": "boxed", "collections": ["MOD021KM.061"], "bbox": [-180, -90, 180, 90]},
        format="json").json()["id"]
    anywhere = alice.post("/api/v1/subscriptions/", {
        "name": "anywhere", "collections": ["MOD021KM.061"]}, format="json").json()["id"]
    nowhere = GranuleFactory(collection=granule.collection, west=None, south=None, east=None,
                             north=None)
    assert services.matching_subscriptions(nowhere) == [anywhere]
    assert sorted(services.matching_subscriptions(granule)) == sorted([boxed, anywhere])
