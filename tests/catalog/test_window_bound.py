"""A search's window bounds the start of the granules it reads: no granule outlasts the
longest of its collections, so the (collection, start) index is read from the window's start
less that span, not from the first granule of the collection's history (at 10 M granules a
window late in the record read millions of index entries to keep a few). What is found is
what overlaps the window, counted here by brute force over the granules made."""
import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import CollectionFactory, GranuleFactory, UserFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.fixture
def record():
    """Two collections of hourly granules over 60 days; one also holds a 20-day granule and
    one that ends exactly where a window starts: [(granule id, collection key, start, end)]."""
    rng, rows = random.Random(11), []
    hourly = CollectionFactory(short_name="HOURLY", version="1")
    long_lived = CollectionFactory(short_name="LONG", version="1")
    for collection in (hourly, long_lived):
        for i in range(0, 60 * 24, 7):
            start = T0 + timedelta(hours=i, minutes=rng.randrange(60))
            rows.append((f"{collection.short_name}-{i}", collection, start,
                         start + timedelta(minutes=rng.randrange(1, 55))))
    rows.append(("LONG-20d", long_lived, T0 + timedelta(days=10), T0 + timedelta(days=30)))
    rows.append(("LONG-edge", long_lived, T0 + timedelta(days=24, hours=20),
                 T0 + timedelta(days=25)))
    for granule_id, collection, start, end in rows:
        GranuleFactory(collection=collection, granule_id=granule_id, temporal_start=start,
                       temporal_end=end)
    return [(g, c.key, s, e) for g, c, s, e in rows]


def overlapping(record, start, end, keys=None):
    return sorted(g for g, key, s, e in record
                  if s <= end and e >= start and (keys is None or key in keys))


def found(client, params):
    ids, url = [], "/api/v1/granules/"
    while url:
        response = client.get(url, params)
        assert response.status_code == 200, response.content[:300]
        body, params = response.json(), {}
        ids += [g["granule_id"] for g in body["results"]]
        url = body["next"]
    return sorted(ids)


@pytest.mark.parametrize("collections", [None, ["LONG.1"], ["HOURLY.1"]])
@pytest.mark.parametrize("window", [(25, 26), (12, 12), (0, 1), (59, 70), (31, 31)])
def test_a_window_finds_every_granule_that_overlaps_it(api, record, collections, window):
    start, end = (T0 + timedelta(days=d) for d in window)
    params = {"start": start.date().isoformat(), "end": end.date().isoformat(), "limit": 100}
    if collections:
        params["collection"] = ",".join(collections)
    end_of_day = end + timedelta(days=1) - timedelta(microseconds=1)
    assert found(api, params) == overlapping(record, start, end_of_day, collections)


def test_the_long_granule_and_the_one_ending_at_the_window_are_found(api, record):
    ids = found(api, {"start": "2024-01-26", "end": "2024-01-26", "limit": 100})
    assert {"LONG-20d", "LONG-edge"} <= set(ids)


@pytest.mark.parametrize("role", ["user", "operator"])
def test_the_candidates_start_no_earlier_than_the_window_less_the_longest_granule(
        record, role):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(UserFactory(role=role))
    longest = max(e - s for _, _, s, e in record)          # the 20-day granule
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/v1/granules/", {"start": "2024-01-26", "end": "2024-01-27",
                                                     "include": "facets,timeline"})
    assert response.status_code == 200
    bound = (datetime(2024, 1, 26, tzinfo=UTC) - longest).strftime("%Y-%m-%d %H:%M:%S")
    reads = [q["sql"] for q in queries.captured_queries
             if 'FROM "catalog_granule"' in q["sql"] and '"temporal_end" >=' in q["sql"]]
    assert reads and all(f'"temporal_start" >= \'{bound}' in sql for sql in reads), reads


@pytest.mark.parametrize("role", ["user", "operator"])
def test_the_spans_are_read_once_a_request_for_the_list_and_its_facets(record, role):
    """The list (its named collection) and the facets (every collection) take their bounds
    from one read of the caller's collections' spans."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(UserFactory(role=role))
    search = {"collection": "LONG.1", "include": "facets,timeline", "end": "2024-01-27"}
    client.get("/api/v1/me/")       # the user's role, read once for the client's user
    counts = []
    for params in (search, {**search, "start": "2024-01-26"}):
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/api/v1/granules/", params).status_code == 200
        counts.append(len(queries.captured_queries))
    assert counts[1] == counts[0] + 1
