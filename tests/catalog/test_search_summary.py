"""One request for the search page: the list's `include=facets,timeline` answers what the
three separate requests answer (facets without the collection filters, the timeline and the
page with all of them), and each count equals a brute-force count over the granules made here
(footprints tested with shapely in a 0..360 frame: tests/catalog/oracle.py)."""
import json
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from backend.catalog import services, shape_search, shapes
from backend.catalog.models import Granule
from tests.catalog import oracle
from tests.factories import CollectionFactory

START = datetime(2024, 3, 1, tzinfo=UTC)
COLLECTIONS = [("SWATH", "2", "Terra"), ("GRID", "3", "Aqua"), ("TILE", "3", "Terra")]


@pytest.fixture
def world(db):
    """60 archived granules in three collections around 180°, over ~10 days, half by day:
    [(granule_id, collection key, level, platform, start, day_night, frame geometry)]."""
    made = [CollectionFactory(short_name=name, version="1", processing_level=level,
                              platform=platform) for name, level, platform in COLLECTIONS]
    rng, rows = oracle.seeded(7), []
    for i in range(60):
        collection = made[i % 3]
        frame = oracle.polygon(rng)
        start = START + timedelta(hours=4 * i + i % 5)
        day_night = "Day" if i % 2 else "Night"
        services.register_granule(
            collection, f"G{i:02d}", start=start, end=start + timedelta(minutes=5),
            footprint=shapes.parse_geojson(oracle.geojson(frame, i % 2)),
            attributes={"day_night": day_night})
        rows.append((f"G{i:02d}", collection.key, collection.processing_level,
                     collection.platform, start, day_night, frame))
    Granule.objects.update(state=Granule.State.ARCHIVED)
    return rows


SEARCHES = [
    {},
    {"bbox": "150,-40,-160,40"},
    {"bbox": "150,-40,-160,40", "collection": "SWATH.1,GRID.1"},
    {"bbox": "160,-20,179,30", "attr.day_night": "Day", "platform": "terra"},
    {"processing_level": "3", "start": "2024-03-03", "end": "2024-03-06"},
    {"intersects": json.dumps(oracle.geojson(oracle.polygon(oracle.seeded(3), size=(20, 40)))),
     "collection": "TILE.1"},
]
COLLECTION_FILTERS = ("collection", "processing_level", "platform", "instrument")


def get(api, path, params):
    response = api.get(path, params)
    assert response.status_code == 200, response.content
    return response.json()


def all_pages(api, first, params):
    """Every granule id of the search, following next links, and the first page's body."""
    body = get(api, first, params)
    found, page = [g["granule_id"] for g in body["results"]], body
    while page["next"]:
        page = get(api, page["next"], {})
        found += [g["granule_id"] for g in page["results"]]
    return found, body


@pytest.mark.parametrize("search", SEARCHES)
def test_one_request_answers_what_the_three_do(api, world, search):
    facet_filters = {k: v for k, v in search.items() if k not in COLLECTION_FILTERS}
    facets = get(api, "/api/v1/granules/facets/", facet_filters)
    timeline = get(api, "/api/v1/granules/timeline/", {**search, "bucket": "auto"})
    separate, _ = all_pages(api, "/api/v1/granules/", {**search, "limit": 10})
    together, first = all_pages(api, "/api/v1/granules/",
                                {**search, "limit": 10, "include": "facets,timeline"})
    assert first["facets"] == facets
    assert first["timeline"] == timeline
    assert together == separate


def brute_force(world, search):
    """(facet counts per collection key, timeline total) counted over the granules made."""
    shape = oracle.frame_box(*map(float, search["bbox"].split(","))) if "bbox" in search \
        else None
    keys = search.get("collection", "").split(",") if "collection" in search else None
    start = datetime.fromisoformat(search["start"]).replace(tzinfo=UTC) if "start" in search \
        else None
    end = (datetime.fromisoformat(search["end"]).replace(tzinfo=UTC) + timedelta(days=1)) \
        if "end" in search else None

    def others(row):
        gid, key, level, platform, t0, day_night, frame = row
        return ((shape is None or frame.intersects(shape))
                and (start is None or t0 + timedelta(minutes=5) >= start)
                and (end is None or t0 < end)
                and search.get("attr.day_night", day_night) == day_night)

    def collection(row):
        return ((keys is None or row[1] in keys)
                and search.get("processing_level", row[2]) == row[2]
                and search.get("platform", row[3]).lower() == row[3].lower())

    facets = Counter(row[1] for row in world if others(row))
    return facets, sum(1 for row in world if others(row) and collection(row))


@pytest.mark.parametrize("search", [s for s in SEARCHES if "intersects" not in s])
def test_the_counts_equal_a_count_over_the_granules(api, world, search):
    body = get(api, "/api/v1/granules/", {**search, "include": "facets,timeline"})
    facets, total = brute_force(world, search)
    assert {f["value"]: f["count"] for f in body["facets"]["collection"]} == facets
    assert body["timeline"]["total"] == total
    assert sum(b["count"] for b in body["timeline"]["buckets"]) == total


def test_a_post_search_takes_include_and_bucket_in_its_body(api, world):
    geometry = json.loads(SEARCHES[-1]["intersects"])
    body = {"intersects": geometry, "include": "timeline", "bucket": "day"}
    posted = api.post("/api/v1/granules/search/?limit=10", body, format="json")
    assert posted.status_code == 200, posted.content
    timeline = api.post("/api/v1/granules/timeline/",
                        {"intersects": geometry, "bucket": "day"}, format="json").json()
    assert posted.json()["timeline"] == timeline
    assert "facets" not in posted.json()


def test_the_footprints_are_tested_once(api, world, monkeypatch):
    """The shape's exact test runs once for all three answers (the page keeps its result)."""
    calls = []
    real = shape_search.exact_matches

    def counted(shape, pks):
        calls.append(len(pks))
        return real(shape, pks)

    monkeypatch.setattr(shape_search, "exact_matches", counted)
    get(api, "/api/v1/granules/", {"bbox": "150,-40,-160,40", "include": "facets,timeline"})
    assert len(calls) == 1


def test_past_the_exact_limit_both_say_so_as_the_separate_requests_do(api, world, monkeypatch):
    monkeypatch.setattr(shape_search, "EXACT_COUNT_LIMIT", 3)
    search = {"bbox": "150,-40,-160,40", "collection": "GRID.1"}
    body = get(api, "/api/v1/granules/", {**search, "include": "facets,timeline"})
    assert body["facets"]["counts_exact"] is False
    assert body["timeline"]["counts_exact"] is False
    assert body["facets"] == get(api, "/api/v1/granules/facets/", {"bbox": search["bbox"]})
    assert body["timeline"] == get(api, "/api/v1/granules/timeline/", search)


@pytest.mark.parametrize("params, field", [
    ({"include": "facets,counts"}, "include"),
    ({"include": ""}, "include"),
    ({"include": "timeline", "bucket": "week"}, "bucket"),
    ({"bucket": "AAA"}, "bucket"),  # the schema's enum holds without the timeline too
    ({"include": "facets", "bbox": "1,2,3"}, "bbox"),
    ({"include": "facets", "collection": "NOPE.1"}, "collection"),
    ({"include": "facets", "limit": "twenty"}, "limit"),
    ({"include": "timeline", "start": "2024-13-01"}, "start"),
    ({"include": "facets", "attr.cloud_cover.lt": "many"}, "attr.cloud_cover.lt"),
])
def test_bad_input_is_a_400_that_names_it(api, world, params, field):
    response = api.get("/api/v1/granules/", params)
    assert response.status_code == 400, response.content
    assert field in json.dumps(response.json())


def test_hostile_requests_get_4xx(api, world, settings):
    assert api.get("/api/v1/granules/not-a-number/", {"include": "facets"}).status_code == 404
    huge = {"include": "facets", "q": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)}
    assert api.post("/api/v1/granules/search/", huge, format="json").status_code == 413
    assert api.post("/api/v1/granules/search/", [1, 2], format="json").status_code == 400
