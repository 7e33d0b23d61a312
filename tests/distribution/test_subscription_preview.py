"""The subscription preview ("N granules of the last 30 days match") and new versions.

The preview must promise exactly what the subscription would have delivered, so it is checked
against apply-since on the same granules.
"""
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from backend.catalog.models import Collection, Granule
from distribution.models import SubscriptionDelivery
from distribution.services import deliveries
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 6, 1, tzinfo=UTC)
PREVIEW = "/api/v1/subscriptions/preview/"


@pytest.fixture
def modis(db):
    return CollectionFactory(short_name="MOD021KM", version="061")


def _granule(collection, days_ago=1, hours=2, **fields):
    """An archived granule `days_ago` days back, observed `hours` after T0, in [0, 10]^2."""
    fields = {"west": 0, "south": 0, "east": 10, "north": 10,
              "archived_at": timezone.now() - timedelta(days=days_ago), **fields}
    return GranuleFactory(
        collection=collection, temporal_start=T0 + timedelta(hours=hours),
        temporal_end=T0 + timedelta(hours=hours, minutes=5), **fields)


def _preview(client, **fields):
    return client.post(PREVIEW, {"collections": ["MOD021KM.061"], **fields}, format="json")


def test_preview_counts_what_the_filter_matches_in_the_last_30_days(user_api, modis):
    inside = [_granule(modis, days_ago=d, attributes={"day_night": "Day", "cloud_cover": c})
              for d, c in ((1, 5), (2, 15), (3, 25))]
    _granule(modis, days_ago=40)                                    # archived too long ago
    _granule(modis, west=100, east=110)                             # elsewhere
    _granule(modis, hours=24 * 30)                                  # outside the window
    _granule(modis, attributes={"day_night": "Night", "cloud_cover": 5})
    _granule(modis, state=Granule.State.ARCHIVING, archived_at=None)
    _granule(CollectionFactory(short_name="OTHER"))
    window = {"start": "2026-06-01", "end": "2026-06-02", "bbox": [5, 5, 20, 20]}

    day = [{"name": "day_night", "value": "Day"}]
    answer = _preview(user_api, **window, conditions=day)
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert body["count"] == 3 and body["days"] == 30
    assert [g["granule_id"] for g in body["sample"]] == [g.granule_id for g in inside]
    assert body["sample"][0]["collection"] == "MOD021KM.061"

    clear = [*day, {"name": "cloud_cover", "op": "lt", "value": 20}]
    assert _preview(user_api, **window, conditions=clear).json()["count"] == 2
    assert _preview(user_api, **window, conditions=clear, days=1).json()["count"] == 0
    assert _preview(user_api, **window).json()["count"] == 4
    assert _preview(user_api, days=366).json()["count"] == 7


def test_preview_promises_what_apply_since_delivers(user_api, modis, eager,
                                                   django_capture_on_commit_callbacks):
    for i in range(6):
        _granule(modis, days_ago=i * 10, west=i * 10, east=i * 10 + 5,
                 attributes={"cloud_cover": i * 20})
    fields = {"bbox": [0, -5, 32, 5], "conditions": [{"name": "cloud_cover", "op": "gte",
                                                        "value": 20}]}
    promised = _preview(user_api, **fields).json()
    assert promised["count"] == 2

    sub = user_api.post("/api/v1/subscriptions/", {"name": "box", "collections": ["MOD021KM.061"],
                                                   **fields}, format="json").json()
    with django_capture_on_commit_callbacks(execute=True):
        response = user_api.post(f"/api/v1/subscriptions/{sub['id']}/apply/",
                                 {"since": promised["since"]}, format="json")
    assert response.status_code == 202
    delivered = SubscriptionDelivery.objects.filter(subscription_id=sub["id"])
    assert sorted(d.granule.granule_id for d in delivered) == sorted(
        g["granule_id"] for g in promised["sample"])


@pytest.mark.parametrize("fields, message", [
    ({"collections": []}, "collections: This list may not be empty."),
    ({"collections": ["NOPE.001"]}, "NOPE.001"),
    ({"bbox": [10, 20, 0]}, "bbox"),
    ({"bbox": "0,50,10,40"}, "south"),
    ({"start": "last week"}, "not an ISO 8601"),
    ({"end": "2026-02-30"}, "'2026-02-30' is not a valid date"),
    ({"start": "2026-06-02", "end": "2026-06-01"}, "The window ends before it starts."),
    ({"conditions": [{"name": "cloud_cover", "op": "lt", "value": "low"}]}, "needs a number"),
    ({"conditions": [{"name": "cloud cover", "value": 1}]}, "not an attribute name"),
    ({"days": 0}, "days: Ensure this value is greater than or equal to 1."),
    ({"days": 400}, "days: Ensure this value is less than or equal to 366."),
    ({"days": "many"}, "days: A valid integer is required."),
])
def test_bad_preview_is_400_saying_what_is_wrong(user_api, modis, fields, message):
    response = _preview(user_api, **fields)
    assert response.status_code == 400, response.json()
    assert message in response.json()["detail"]


def test_preview_of_a_restricted_collection_is_403(user_api, modis):
    Collection.objects.filter(pk=modis.pk).update(access="restricted")
    response = _preview(user_api)
    assert response.status_code == 403
    assert "MOD021KM.061 is restricted" in response.json()["detail"]


def test_preview_needs_a_login(api, modis):
    response = _preview(api)
    assert response.status_code in (401, 403)
    assert "credentials were not provided" in response.json()["detail"]


def test_new_versions_are_delivered_only_when_asked(user_api, modis):
    def subscribe(name, **fields):
        response = user_api.post("/api/v1/subscriptions/", {
            "name": name, "collections": ["MOD021KM.061"], **fields}, format="json")
        assert response.status_code == 201, response.json()
        return response.json()

    plain, versions = subscribe("first only"), subscribe("reprocessed too", new_versions=True)
    assert plain["new_versions"] is False and versions["new_versions"] is True
    first = _granule(modis, granule_id="G1")
    second = _granule(modis, granule_id="G1", version=2, replaces=first)

    deliveries.match_granule(first.pk)
    deliveries.match_granule(second.pk)

    def delivered(sub):
        return sorted(SubscriptionDelivery.objects.filter(subscription_id=sub["id"])
                      .values_list("granule__version", flat=True))

    assert delivered(plain) == [1]
    assert delivered(versions) == [1, 2]
    assert _preview(user_api).json()["count"] == 1
    assert _preview(user_api, new_versions=True).json()["count"] == 2
    patched = user_api.patch(f"/api/v1/subscriptions/{plain['id']}/", {"new_versions": True},
                             format="json")
    assert patched.json()["new_versions"] is True
