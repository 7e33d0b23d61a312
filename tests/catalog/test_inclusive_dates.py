"""A date without a time stands for its whole day, wherever a window is typed: From = To of one
date finds every granule of that day, in the catalog search, subscription previews and the
windows subscriptions keep. A full timestamp stays exact. STAC takes RFC 3339 date-times only
(the STAC API validator insists a bare date is a 400), and its interval includes both ends.

The granules sit at 00:00, 12:00 and 23:59 of the day and at 00:00 of the next: before the fix
an end date was read as its midnight, so the noon and evening granules were lost."""
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from backend.catalog.filters import parse_instant
from backend.catalog.stac_search import parse_datetime_interval
from distribution.models import Subscription
from distribution.services.deliveries import matching_subscriptions
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db

DAY = datetime(2024, 3, 2, tzinfo=UTC)
TIMES = {
    "prev_evening": DAY - timedelta(minutes=10),
    "midnight": DAY,
    "noon": DAY + timedelta(hours=12),
    "evening": DAY + timedelta(hours=23, minutes=59),
    "next_midnight": DAY + timedelta(days=1),
}
# granules of 5 minutes: the one starting ten minutes before the day ends before it begins
IN_THE_DAY = {"midnight", "noon", "evening"}


@pytest.fixture
def day_granules():
    collection = CollectionFactory(short_name="MOD021KM", version="061")
    made = {}
    for name, start in TIMES.items():
        made[name] = GranuleFactory(
            collection=collection, granule_id=name, temporal_start=start,
            temporal_end=start + timedelta(minutes=5), archived_at=timezone.now())
    return collection, made


def test_a_date_is_its_whole_day():
    assert parse_instant("2024-03-02") == DAY
    assert parse_instant("2024-03-02", end=True) == DAY + timedelta(days=1, microseconds=-1)
    # a timestamp is exact, end or not
    assert parse_instant("2024-03-02T00:00:00Z", end=True) == DAY
    assert parse_datetime_interval("2024-03-02T00:00:00Z") == (DAY, DAY)


def _names(results, key="granule_id"):
    return {row[key] for row in results}


def test_catalog_search_of_one_day(api, day_granules):
    body = api.get("/api/v1/granules/?start=2024-03-02&end=2024-03-02&limit=100").json()
    assert _names(body["results"]) == IN_THE_DAY
    # a timestamp end stays exact: 00:00 itself overlaps only the granules touching it
    exact = api.get("/api/v1/granules/?start=2024-03-02&end=2024-03-02T00:00:00Z").json()
    assert _names(exact["results"]) == {"midnight"}


def test_stac_interval_holds_both_its_ends(api, day_granules):
    value = "2024-03-02T00:00:00Z/2024-03-02T23:59:00Z"
    body = api.get("/stac/search", {"datetime": value, "limit": 100}).json()
    assert {f["id"] for f in body["features"]} == IN_THE_DAY
    body = api.post("/stac/search", {"datetime": value, "limit": 100}, format="json").json()
    assert {f["id"] for f in body["features"]} == IN_THE_DAY
    body = api.get("/stac/search", {"datetime": "2024-03-02/2024-03-02"}).json()
    assert "not an RFC 3339 date-time" in body["detail"]


def test_subscription_preview_of_one_day(user_api, day_granules):
    body = user_api.post("/api/v1/subscriptions/preview/", {
        "collections": ["MOD021KM.061"], "start": "2024-03-02", "end": "2024-03-02",
    }, format="json").json()
    assert body["count"] == len(IN_THE_DAY)
    assert _names(body["sample"]) == IN_THE_DAY


def test_subscription_window_of_one_day_matches_the_whole_day(user_api, day_granules):
    answer = user_api.post("/api/v1/subscriptions/", {
        "name": "one day", "collections": ["MOD021KM.061"], "start": "2024-03-02",
        "end": "2024-03-02",
    }, format="json")
    assert answer.status_code == 201, answer.content
    subscription = Subscription.objects.get(pk=answer.json()["id"])
    assert subscription.temporal_end == DAY + timedelta(days=1, microseconds=-1)
    _, made = day_granules
    matched = {name for name, granule in made.items()
               if subscription.pk in matching_subscriptions(granule)}
    assert matched == IN_THE_DAY
