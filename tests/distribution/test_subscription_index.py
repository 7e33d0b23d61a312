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


def test_boxes_across_the_antimeridian_match_from_either_side(alice, granule):
    def subscribe(name, bbox):
        response = alice.post("/api/v1/subscriptions/", {
            "name": name, "collections": ["MOD021KM.061"], "bbox": bbox}, format="json")
        assert response.status_code == 201, response.json()
        return response.json()["id"]

    east_of = subscribe("east of 180", [-179, -1, -170, 1])
    west_of = subscribe("west of 180", [170, -1, 179, 1])
    across = subscribe("across 180", [178, -1, -175, 1])
    elsewhere = subscribe("elsewhere", [0, -1, 10, 1])
    too_far_north = subscribe("north of it", [170, 6, -170, 9])
    # the granule's footprint is 175..-175 (across 180), -5..5
    assert sorted(services.matching_subscriptions(granule)) == sorted([east_of, west_of, across])
    plain = GranuleFactory(collection=granule.collection, temporal_start=T0,
                           temporal_end=T0 + timedelta(minutes=5), west=-176, south=-3,
                           east=-160, north=3)
    assert sorted(services.matching_subscriptions(plain)) == sorted([east_of, across])
    assert elsewhere not in services.matching_subscriptions(plain)
    assert too_far_north not in services.matching_subscriptions(plain)
