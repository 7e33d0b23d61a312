"""The search timeline: counts of the matching granules per hour, day, month or year, checked
against counting the granules' starts in Python; the same filters as the list; automatic
bucket sizes by span; bad buckets are 400s."""
import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from backend.catalog import timeline
from backend.catalog.models import Granule
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = pytest.mark.django_db


def truncate(instant, bucket):
    """The bucket's start by formatting and parsing the text: independent of timeline.floor."""
    text = {"hour": "%Y-%m-%dT%H:00", "day": "%Y-%m-%dT00:00", "month": "%Y-%m-01T00:00",
            "year": "%Y-01-01T00:00"}[bucket]
    return datetime.fromisoformat(instant.astimezone(UTC).strftime(text)).replace(tzinfo=UTC)


def make(collection, starts):
    for n, start in enumerate(starts):
        GranuleFactory(collection=collection, granule_id=f"T{n:05d}", temporal_start=start,
                       temporal_end=start + timedelta(minutes=5))


def brute_force(starts, bucket):
    counts = Counter(truncate(s, bucket) for s in starts)
    first, last = min(counts), max(counts)
    # every bucket between, by stepping whole buckets through the calendar
    out, at = [], first
    while at <= last:
        out.append((at, counts.get(at, 0)))
        if bucket == "hour":
            at += timedelta(hours=1)
        elif bucket == "day":
            at += timedelta(days=1)
        else:
            at = truncate(at + timedelta(days=32 if bucket == "month" else 366), bucket)
    return out


def answer(api, query=""):
    response = api.get(f"/api/v1/granules/timeline/?{query}")
    assert response.status_code == 200, response.content
    body = response.json()
    return body["bucket"], [(datetime.fromisoformat(b["start"].replace("Z", "+00:00")),
                             b["count"]) for b in body["buckets"]], body["total"]


@pytest.mark.parametrize("bucket, spread", [
    ("hour", timedelta(hours=40)), ("day", timedelta(days=200)),
    ("month", timedelta(days=3 * 365)), ("year", timedelta(days=40 * 365)),
])
def test_counts_per_bucket_agree_with_brute_force(api, bucket, spread):
    rng = random.Random(bucket)
    base = datetime(2023, 11, 30, 22, 30, tzinfo=UTC)
    starts = [base + rng.random() * spread for _ in range(60)]
    make(CollectionFactory(short_name="MOD021KM", version="061"), starts)
    expected = brute_force(starts, bucket)
    assert answer(api, f"bucket={bucket}") == (bucket, expected, 60)
    # the automatic size for this span is the one the test spread was chosen for
    assert answer(api)[0] == bucket


def test_the_same_filters_as_the_search(api):
    modis = CollectionFactory(short_name="MOD021KM", version="061")
    other = CollectionFactory(short_name="MOD10C1", version="061")
    day = datetime(2024, 3, 1, tzinfo=UTC)
    make(modis, [day + timedelta(hours=h) for h in (1, 2, 2, 30, 50)])
    GranuleFactory(collection=other, temporal_start=day, temporal_end=day)
    GranuleFactory(collection=modis, temporal_start=day, temporal_end=day,
                   state=Granule.State.ARCHIVING)    # not visible to the public
    found = api.get("/api/v1/granules/?collection=MOD021KM.061&start=2024-03-01"
                    "&end=2024-03-02&limit=100").json()["results"]
    starts = [datetime.fromisoformat(g["temporal_start"].replace("Z", "+00:00")) for g in found]
    assert answer(api, "collection=MOD021KM.061&start=2024-03-01&end=2024-03-02&bucket=day") \
        == ("day", brute_force(starts, "day"), len(starts))


def test_nothing_found_is_an_empty_timeline(api):
    assert answer(api, "granule_id=nothing") == ("day", [], 0)


@pytest.mark.parametrize("query, message", [
    ("bucket=week", "bucket must be one of auto, hour, day, month, year"),
    ("bucket=hour", "hour buckets from 2000-01-01 to 2024-01-01 are more than 5000"),
    ("start=nonsense", "not an ISO 8601 date"),
])
def test_bad_timelines_are_400s(api, query, message):
    make(CollectionFactory(), [datetime(2000, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC)])
    response = api.get(f"/api/v1/granules/timeline/?{query}")
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_months_and_years_step_through_the_calendar():
    start = datetime(2023, 11, 15, 7, tzinfo=UTC)
    assert timeline.bucket_starts(start, datetime(2024, 2, 29, tzinfo=UTC), "month") == [
        datetime(2023, 11, 1, tzinfo=UTC), datetime(2023, 12, 1, tzinfo=UTC),
        datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 2, 1, tzinfo=UTC)]
    assert timeline.auto_bucket(start, start + timedelta(days=3)) == "hour"
    assert timeline.auto_bucket(start, start + timedelta(days=4)) == "day"


def _rows_read(cursor):
    """Rows of catalog_granule this transaction has read (index fetches and sequential reads:
    the test's transaction is never committed, so the counts of pg_stat_xact_user_tables)."""
    cursor.execute("SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
                   "FROM pg_stat_xact_user_tables WHERE relname = 'catalog_granule'")
    return cursor.fetchone()[0]


def test_the_timeline_of_a_few_ids_reads_those_rows_not_the_time_index():
    """A search's timeline counts the ids its page passed. Its span (MIN/MAX of the starts)
    was answered by walking the time index from each end and testing every row against the id
    list: 40 s a search at 1 M granules (the portal search). Counted here by the rows the
    table gave: 500 granules in the middle of 20,000 must cost about 500 reads, not the
    table's 20,000."""
    from django.db import connection

    from backend.catalog import bulk
    from backend.catalog.services import granule_timeline

    if connection.vendor != "postgresql":
        pytest.skip("the planner's MIN/MAX shortcut is PostgreSQL's")
    collection = CollectionFactory()
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    rows = bulk.insert([Granule(collection=collection, granule_id=f"M{i:05d}",
                                temporal_start=t0 + timedelta(hours=i),
                                temporal_end=t0 + timedelta(hours=i, minutes=5),
                                west=0, south=0, east=1, north=1, total_size=1)
                        for i in range(20000)], need_ids=True)
    middle = [g.pk for g in rows[9500:10000]]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_granule")
        before = _rows_read(cursor)
        found = granule_timeline(Granule.objects.filter(pk__in=middle), "day")
        read = _rows_read(cursor) - before
    assert found.total == 500
    assert read <= 1500, f"{read} rows read for a timeline of 500 granules"
