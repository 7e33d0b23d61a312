"""Searching by shape: STAC and the catalog API give exactly the granules whose footprint meets
the shape, across the antimeridian, page after page. Expected sets come from shapely over every
granule in a 0..360 frame (tests/catalog/oracle.py), not from the code under test."""
import json
from datetime import UTC, datetime, timedelta

import pytest
from shapely.geometry import LineString, Point, Polygon

from backend.catalog import services, shape_search, shapes
from backend.catalog.geo import BBox
from backend.catalog.models import Granule
from backend.catalog.pagination import GranuleKeysetPagination
from tests.catalog import oracle
from tests.factories import CollectionFactory

START = datetime(2024, 3, 1, tzinfo=UTC)


@pytest.fixture
def world(db):
    """~50 archived granules around 180°: random polygons, boxes (some crossing 180° as
    west > east), and one global footprint; {granule_id: geometry in the 0..360 frame}."""
    collection = CollectionFactory(short_name="SWATH", version="1")
    rng = oracle.seeded(21)
    frames = {}

    def add(granule_id, frame, footprint=None, bbox=None):
        services.register_granule(collection, granule_id, start=START + timedelta(
            hours=len(frames)), end=START + timedelta(hours=len(frames), minutes=5),
            footprint=footprint, bbox=bbox)
        frames[granule_id] = frame

    for i in range(40):
        frame = oracle.polygon(rng)
        add(f"P{i:02d}", frame, footprint=shapes.parse_geojson(oracle.geojson(frame, i % 2)))
    for i, (w, s, e, n) in enumerate([(170, -10, -170, 10), (150, 30, 160, 40),
                                      (-175, -60, -160, -50), (179, 0, -179, 1)]):
        add(f"B{i}", oracle.frame_box(w, s, e, n), bbox=BBox(w, s, e, n))
    add("GLOBAL", oracle.WORLD, bbox=BBox(-180, -90, 180, 90))
    Granule.objects.update(state=Granule.State.ARCHIVED)
    return frames


def queries(seed, n):
    """(frame geometry, GeoJSON for the API): polygons, points and lines, written with
    longitudes past 180 or cut at 180 (both RFC 7946)."""
    rng = oracle.seeded(seed)
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0 or kind == 1:
            frame = oracle.polygon(rng, size=(1, 15))
        elif kind == 2:
            frame = Point(round(rng.uniform(140, 220), 2), round(rng.uniform(-60, 60), 2))
        else:
            a = (rng.uniform(140, 220), rng.uniform(-60, 60))
            frame = LineString([a, (a[0] + rng.uniform(-20, 20), a[1] + rng.uniform(-20, 20))])
        out.append((frame, oracle.geojson(frame, cut=i % 8 < 4)))
    return out


def expected(frames, query):
    return {gid for gid, frame in frames.items() if frame.intersects(query)}


def stac_post_all(api, body):
    found, page = [], api.post("/stac/search", body, format="json").json()
    while True:
        found += [f["id"] for f in page["features"]]
        following = [link for link in page["links"] if link["rel"] == "next"]
        if not following:
            return found
        page = api.post("/stac/search", {**body, **following[0]["body"]}, format="json").json()


def catalog_all(api, first, body=None):
    found, url = [], first
    while url:
        response = (api.post(url, body, format="json") if body is not None else api.get(url))
        assert response.status_code == 200, response.json()
        page = response.json()
        found += [g["granule_id"] for g in page["results"]]
        url = page["next"]
    return found


def boxes_meet(frames, query):
    """What a box-only search would give: the granules whose box meets the query's box."""
    from shapely.geometry import box

    return {gid for gid, frame in frames.items() if box(*frame.bounds).intersects(
        box(*query.bounds))}


def test_stac_intersects_finds_exactly_the_footprints_met(api, world):
    dropped = 0
    for frame, geometry in queries(3, 24):
        found = stac_post_all(api, {"intersects": geometry, "limit": 4})
        assert len(found) == len(set(found)), "a granule came twice"
        assert set(found) == expected(world, frame), geometry
        dropped += len(boxes_meet(world, frame) - set(found))
    assert dropped > 20, "the queries should test footprints the boxes alone would take"


def test_stac_get_intersects_and_crossing_bbox(api, world):
    for frame, geometry in queries(4, 6):
        page = api.get("/stac/search", {"intersects": json.dumps(geometry), "limit": 100}).json()
        assert {f["id"] for f in page["features"]} == expected(world, frame)
    for box in [(170, -20, -170, 20), (175, -90, -175, 90), (160, 25, -160, 45)]:
        page = api.get("/stac/search", {"bbox": ",".join(map(str, box)), "limit": 100}).json()
        assert {f["id"] for f in page["features"]} == expected(world, oracle.frame_box(*box))


@pytest.fixture
def small_pages(monkeypatch):
    """Pages of 3 and candidates read from 1 row a chunk up, so a page of this small world
    takes several chunks and the exact test drops candidates between pages."""
    monkeypatch.setattr(GranuleKeysetPagination, "min_page_size", 1)
    monkeypatch.setattr(shape_search, "MIN_CHUNK", 1)


def test_catalog_api_get_and_post_search_page_exactly(api, world, small_pages):
    for frame, geometry in queries(5, 12):
        want = expected(world, frame)
        got = catalog_all(api, f"/api/v1/granules/?limit=3&intersects={json.dumps(geometry)}")
        assert sorted(got) == sorted(want), geometry
        posted = catalog_all(api, "/api/v1/granules/search/?limit=3", {"intersects": geometry})
        assert sorted(posted) == sorted(want), geometry


def test_catalog_bbox_across_the_antimeridian_is_exact(api, world, small_pages):
    for box in [(170, -20, -170, 20), (150, -5, -150, 5), (-179.5, 0, -178, 0.5)]:
        text = ",".join(map(str, box))
        got = catalog_all(api, f"/api/v1/granules/?limit=4&bbox={text}")
        assert sorted(got) == sorted(expected(world, oracle.frame_box(*box)))


def test_bbox_counts_are_exact_when_most_boxes_lie_inside(api, world):
    """A bbox search takes a granule whose box lies inside the search box without reading its
    footprint: facets, timeline and pages still count exactly the footprints met, for boxes
    that hold many granules whole, cut others, and cross 180°."""
    rng = oracle.seeded(33)
    boxes = [(140, -70, -140, 70), (150, -60, 179.9, 60), (100, -89, 179.5, 89)]
    for _ in range(6):
        west, south = round(rng.uniform(130, 200), 1), round(rng.uniform(-70, 20), 1)
        east = round(west + rng.uniform(5, 50), 1)
        boxes.append((west if west <= 180 else west - 360, south,
                      east if east <= 180 else east - 360, round(south + rng.uniform(5, 60), 1)))
    for box in boxes:
        text, want = ",".join(map(str, box)), expected(world, oracle.frame_box(*box))
        facets = api.get("/api/v1/granules/facets/", {"bbox": text}).json()
        assert facets["counts_exact"] is True
        assert sum(f["count"] for f in facets["collection"]) == len(want), box
        timeline = api.get("/api/v1/granules/timeline/", {"bbox": text}).json()
        assert timeline["total"] == len(want), box
        assert sorted(catalog_all(api, f"/api/v1/granules/?limit=7&bbox={text}")) == sorted(
            want)


def test_facets_count_exactly_or_say_they_do_not(api, world, monkeypatch):
    frame, geometry = queries(6, 1)[0]
    facets = api.get("/api/v1/granules/facets/", {"intersects": json.dumps(geometry)}).json()
    assert facets["counts_exact"] is True
    assert facets["collection"] == [{"value": "SWATH.1", "count": len(expected(world, frame))}]
    posted = api.post("/api/v1/granules/facets/", {"intersects": geometry}, format="json").json()
    assert posted == facets
    monkeypatch.setattr(shape_search, "EXACT_COUNT_LIMIT", 1)
    loose = api.get("/api/v1/granules/facets/", {"intersects": json.dumps(geometry)}).json()
    assert loose["counts_exact"] is False
    assert loose["collection"][0]["count"] >= len(expected(world, frame))


def test_serializers_and_stac_items_carry_the_real_footprint(api, world):
    granule = api.get("/api/v1/granules/", {"granule_id": "P00"}).json()["results"][0]
    from shapely.geometry import shape

    moved_back = shape(granule["footprint"])
    frame = world["P00"]
    assert abs(moved_back.area - frame.area) < 1e-6
    item = api.get("/stac/collections/SWATH.1/items/P00").json()
    assert item["geometry"] == granule["footprint"]
    crossing = api.get("/api/v1/granules/", {"granule_id": "B0"}).json()["results"][0]
    assert crossing["footprint"]["type"] == "MultiPolygon"
    assert crossing["bbox"] == [170, -10, -170, 10]


def test_too_many_vertices_is_400_naming_the_limit(api, world):
    ring = [[i / 1000, 0] for i in range(shapes.MAX_VERTICES)] + [[1, 1], [0, 0]]
    body = {"intersects": {"type": "Polygon", "coordinates": [ring]}}
    response = api.post("/api/v1/granules/search/", body, format="json")
    assert response.status_code == 400
    assert f"the limit is {shapes.MAX_VERTICES}" in response.json()["detail"]
    stac = api.post("/stac/search", body, format="json")
    assert stac.status_code == 400


@pytest.mark.parametrize("body", [[1, 2], "text", {"intersects": [1]}, {"bbox": {"a": 1}},
                                  {"collection": [{"x": 1}]}, {"ordering": "granule_id"},
                                  {"limit": 20}])
def test_bad_search_bodies_are_400(api, world, body):
    assert api.post("/api/v1/granules/search/", body, format="json").status_code == 400


# A triangle over 180° that meets most of the world but leaves out granules its box meets.
TRIANGLE = Polygon([(140, -60), (220, -60), (180, 60)])


def walk_pages(api, url, link, body=None):
    """The granule ids of each page from `url` on, following `link` (next or previous)."""
    pages = []
    while url:
        response = api.post(url, body, format="json") if body is not None else api.get(url)
        assert response.status_code == 200, response.content
        page = response.json()
        pages.append([g["id"] for g in page["results"]])
        url = page[link]
    return pages


@pytest.mark.parametrize("ordering", [
    "-temporal_start", "temporal_start", "-temporal_end", "granule_id", "-granule_id",
    "created_at", "total_size", "-total_size,granule_id",
])
def test_every_sort_pages_a_shape_search_like_the_brute_force_list(api, world, small_pages,
                                                                   ordering):
    """The keyset cursor and the exact shape test together: each sort, walked forwards by the
    next links and back by the previous ones, GET and POST, is the brute-force list of the
    granules shapely says meet the shape, sorted by Python (ties by id)."""
    from tests.catalog.test_granule_sorting import brute_force

    want = expected(world, TRIANGLE)
    assert len(want) > 12 and boxes_meet(world, TRIANGLE) - want, "pages, and dropped ones"
    rows = [g for g in Granule.objects.all() if g.granule_id in want]
    brute = brute_force(rows, ordering)
    geometry = oracle.geojson(TRIANGLE, cut=True)
    first = f"/api/v1/granules/?limit=4&ordering={ordering}&intersects={json.dumps(geometry)}"
    forward = walk_pages(api, first, "next")
    assert [pk for page in forward for pk in page] == brute
    assert all(len(page) == 4 for page in forward[:-1])
    last = api.get(first).json()
    while last["next"]:
        last = api.get(last["next"]).json()
    backward = walk_pages(api, last["previous"], "previous")
    assert list(reversed(backward)) == forward[:-1]
    body = {"intersects": geometry}
    posted = walk_pages(api, f"/api/v1/granules/search/?limit=4&ordering={ordering}", "next",
                        body)
    assert posted == forward


def test_timeline_counts_the_footprints_met(api, world):
    geometry = oracle.geojson(TRIANGLE)
    starts = sorted(g.temporal_start for g in Granule.objects.all()
                    if g.granule_id in expected(world, TRIANGLE))
    got = api.get("/api/v1/granules/timeline/",
                  {"intersects": json.dumps(geometry), "bucket": "hour"}).json()
    assert got["counts_exact"] is True and got["total"] == len(starts)
    counted = [datetime.fromisoformat(b["start"].replace("Z", "+00:00"))
               for b in got["buckets"] if b["count"]]
    assert counted == starts and all(b["count"] in (0, 1) for b in got["buckets"])
    posted = api.post("/api/v1/granules/timeline/", {"intersects": geometry, "bucket": "hour"},
                      format="json").json()
    assert posted == got
    bad = api.post("/api/v1/granules/timeline/", {"intersects": geometry, "bucket": "week"},
                   format="json")
    assert bad.status_code == 400 and "bucket must be one of" in bad.json()["detail"]


def test_cart_matching_takes_exactly_the_footprints_met(user_api, world, monkeypatch):
    from distribution.models import CartItem

    geometry = json.dumps(oracle.geojson(TRIANGLE))
    want = set(Granule.objects.filter(granule_id__in=expected(world, TRIANGLE))
               .values_list("pk", flat=True))
    monkeypatch.setattr(shape_search, "EXACT_COUNT_LIMIT", 1)
    refused = user_api.post("/api/v1/cart/matching/", {"filters": {"intersects": geometry}},
                            format="json")
    assert refused.status_code == 400 and "narrow the search" in refused.json()["detail"]
    assert not CartItem.objects.exists()
    monkeypatch.undo()
    body = user_api.post("/api/v1/cart/matching/", {"filters": {"intersects": geometry}},
                         format="json").json()
    assert body["matched"] == len(want)
    assert set(CartItem.objects.values_list("granule_id", flat=True)) == want
