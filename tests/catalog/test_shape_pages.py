"""A page of a shape search read without its summary (a later page, the API): its candidates
are read by a LIMIT query, and read on only when the shape drops too many of them. A cursor
read them before, and outside a transaction that is DECLARE ... WITH HOLD, which makes
PostgreSQL compute and keep every candidate of the search before the first row is fetched
(bench mixed, issue #33). Expected pages come from shapely over the footprints the test made."""
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from shapely.geometry import Polygon, box

from backend.catalog import services, shapes
from backend.catalog.models import Granule
from tests.factories import CollectionFactory

START = datetime(2024, 3, 1, tzinfo=UTC)
LOWER_LEFT = Polygon([(0, 0), (10, 0), (0, 10)])
UPPER_RIGHT = Polygon([(10, 10), (0, 10), (10, 0)])
DROPPED, MET = 150, 30


def _geojson(polygon):
    return {"type": "Polygon", "coordinates": [[list(p) for p in polygon.exterior.coords]]}


@pytest.fixture
def corners(db):
    """The newest DROPPED granules are small squares near (9, 9); the MET older ones near
    (1, 1). Every box meets the triangles' common box, so all are candidates of either;
    {granule_id: (footprint, start)}."""
    collection = CollectionFactory(short_name="CORNERS", version="1")
    made = {}
    for i in range(DROPPED + MET):
        near = 9 if i < DROPPED else 1
        offset = (i % 7) * 0.05
        square = box(near - 0.4 + offset, near - 0.4, near + 0.4 + offset, near + 0.4)
        start = START - timedelta(hours=i)
        gid = f"C{i:03d}"
        services.register_granule(collection, gid, start=start, end=start + timedelta(
            minutes=5), footprint=shapes.parse_geojson(_geojson(square)))
        made[gid] = (square, start)
    Granule.objects.update(state=Granule.State.ARCHIVED)
    return made


def _walk(api, first):
    pages, url = [], first
    while url:
        answer = api.get(url)
        assert answer.status_code == 200, answer.content
        pages.append([g["granule_id"] for g in answer.json()["results"]])
        url = answer.json()["next"]
    return pages


def _newest_first(made, shape):
    met = [gid for gid, (square, _) in made.items() if square.intersects(shape)]
    return sorted(met, key=lambda gid: made[gid][1], reverse=True)


def test_a_shape_that_drops_more_than_a_chunk_still_pages_whole_and_exact(api, corners):
    want = _newest_first(corners, LOWER_LEFT)
    assert len(want) == MET
    pages = _walk(api, f"/api/v1/granules/?limit=10&intersects="
                       f"{json.dumps(_geojson(LOWER_LEFT))}")
    assert [gid for page in pages for gid in page] == want
    assert [len(page) for page in pages] == [10, 10, 10]


def test_a_page_its_first_chunk_fills_reads_its_candidates_without_a_cursor(api, corners):
    want = _newest_first(corners, UPPER_RIGHT)
    with CaptureQueriesContext(connection) as seen:
        answer = api.get("/api/v1/granules/", {"limit": 20,
                                               "intersects": json.dumps(_geojson(UPPER_RIGHT))})
    assert [g["granule_id"] for g in answer.json()["results"]] == want[:20]
    if connection.vendor == "postgresql":
        assert not [q["sql"][:80] for q in seen.captured_queries
                    if q["sql"].lstrip().upper().startswith("DECLARE")]
