"""The completeness report of a collection's day and the worst collections, from granules made
here: the expected numbers are counted by hand from what the test made."""
from datetime import UTC, date, datetime, timedelta

import pytest
from django.utils import timezone

from backend.catalog.models import Granule
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db
DAY = date(2026, 3, 14)
MIDNIGHT = datetime(2026, 3, 14, tzinfo=UTC)


def hourly(collection, hours, late=(), state=Granule.State.ARCHIVED):
    for h in hours:
        start = MIDNIGHT + timedelta(hours=h)
        delay = timedelta(hours=5) if h in late else timedelta(minutes=20)
        GranuleFactory(collection=collection, temporal_start=start,
                       temporal_end=start + timedelta(hours=1), state=state,
                       archived_at=start + timedelta(hours=1) + delay)


def test_a_day_with_a_missing_run_and_a_late_granule(operator_api):
    coll = CollectionFactory(short_name="HOURLY", version="1", cadence_seconds=3600,
                             latency_target_seconds=3600, extent_start=MIDNIGHT)
    hourly(coll, [h for h in range(24) if h not in (6, 7, 8)], late=(12,))
    hourly(coll, [6], state=Granule.State.DELETED)  # a deleted one is not received
    answer = operator_api.get("/api/v1/completeness/", {"collection": "HOURLY.1",
                                                        "day": DAY.isoformat()})
    assert answer.status_code == 200, answer.content
    report = answer.json()
    assert (report["expected"], report["received"], report["missing"]) == (24, 21, 3)
    assert report["gaps"] == [{"start": "2026-03-14T06:00:00Z", "end": "2026-03-14T09:00:00Z",
                               "missing": 3}]
    assert report["late_count"] == 1
    assert report["late"][0]["late_by_seconds"] == 4 * 3600


def test_the_worst_collections_come_first(operator_api):
    now = timezone.now()
    today = datetime.combine(now.date(), datetime.min.time(), tzinfo=UTC)
    good = CollectionFactory(short_name="GOOD", version="1", cadence_seconds=86400,
                             extent_start=today - timedelta(days=2))
    CollectionFactory(short_name="BAD", version="1", cadence_seconds=86400,
                            extent_start=today - timedelta(days=2))
    CollectionFactory(short_name="NOCADENCE", version="1")
    # Regression: a collection whose declared extent ended before the window expected nothing
    # in it; it was listed among the worst as "0 of 0".
    CollectionFactory(short_name="ENDED", version="1", cadence_seconds=86400,
                      extent_start=today - timedelta(days=30),
                      extent_end=today - timedelta(days=20))
    for days_ago in (2, 1):
        start = today - timedelta(days=days_ago)
        GranuleFactory(collection=good, temporal_start=start,
                       temporal_end=start + timedelta(days=1))
    answer = operator_api.get("/api/v1/completeness/worst/", {"days": 3})
    assert answer.status_code == 200, answer.content
    rows = answer.json()["collections"]
    assert [r["collection"] for r in rows] == ["BAD.1", "GOOD.1"]
    # the last three days: two finished ones expected (today's slot has not ended yet)
    assert [(r["expected"], r["received"]) for r in rows] == [(2, 0), (2, 2)]


@pytest.mark.parametrize(("path", "query", "status"), [
    ("/api/v1/completeness/", {}, 400),
    ("/api/v1/completeness/", {"collection": "HOURLY.1", "day": "14/03/2026"}, 400),
    ("/api/v1/completeness/", {"collection": "NONE.1"}, 404),
    ("/api/v1/completeness/", {"collection": "nokey"}, 404),
    ("/api/v1/completeness/", {"collection": "PLAIN.1"}, 400),  # declares no cadence
    ("/api/v1/completeness/worst/", {"days": 0}, 400),
    ("/api/v1/completeness/worst/", {"days": "week"}, 400),
    ("/api/v1/completeness/worst/", {"days": 10**30}, 400),
    ("/api/v1/completeness/worst/", {"limit": -1}, 400),
])
def test_bad_questions_are_4xx(operator_api, path, query, status):
    CollectionFactory(short_name="HOURLY", version="1", cadence_seconds=3600)
    CollectionFactory(short_name="PLAIN", version="1")
    answer = operator_api.get(path, query)
    assert answer.status_code == status and answer.json()["detail"]


def test_only_operators_read_completeness(user_api, provider_api, api):
    CollectionFactory(short_name="HOURLY", version="1", cadence_seconds=3600)
    for path in ("/api/v1/completeness/?collection=HOURLY.1", "/api/v1/completeness/worst/"):
        assert user_api.get(path).status_code == 403
        assert provider_api.get(path).status_code == 403
        assert api.get(path).status_code == 401
