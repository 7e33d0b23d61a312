"""Searching by shape: STAC and the catalog API give exactly the granules whose footprint meets
the shape, across the antimeridian, page after page. Expected sets come from shapely over every
granule in a 0..360 frame (tests/catalog/oracle.py), not from the code under test."""
import json
from datetime import UTC, datetime, timedelta

import pytest
from shapely.geometry import LineString, Point

from backend.catalog import services, shapes
from backend.catalog.geo import BBox
from backend.catalog.models import Granule
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
        add(f"P{i:02d}", frame, footprint=shapes.parse_geojson(oracle.geojson(frame)))
    for i, (w, s, e, n) in enumerate([(170, -10, -170, 10), (150, 30, 160, 40),
                                      (-175, -60, -160, -50), (179, 0, -179, 1)]):
        add(f"B{i}", oracle.frame_box(w, s, e, n), bbox=BBox(w, s, e, n))
    add("GLOBAL", oracle.WORLD, bbox=BBox(-180, -90, 180, 90))
    Granule.objects.update(state=Granule.State.ARCHIVED)
    return frames


def queries(seed, n):
    """(frame geometry, GeoJSON for the API): polygons, points, lines and one hole-y spot."""
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
        out.append((frame, oracle.geojson(frame)))
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


def test_catalog_api_get_and_post_search_page_exactly(api, world):
    for frame, geometry in queries(5, 12):
        want = expected(world, frame)
        got = catalog_all(api, f"/api/v1/granules/?limit=3&intersects={json.dumps(geometry)}")
        assert sorted(got) == sorted(want), geometry
        posted = catalog_all(api, "/api/v1/granules/search/?limit=3", {"intersects": geometry})
        assert sorted(posted) == sorted(want), geometry


def test_catalog_bbox_across_the_antimeridian_is_exact(api, world):
    for box in [(170, -20, -170, 20), (150, -5, -150, 5), (-179.5, 0, -178, 0.5)]:
        text = ",".join(map(str, box))
        got = catalog_all(api, f"/api/v1/granules/?limit=4&bbox={text}")
        assert sorted(got) == sorted(expected(world, oracle.frame_box(*box)))


def test_facets_count_exactly_or_say_they_do_not(api, world, monkeypatch):
    frame, geometry = queries(6, 1)[0]
    facets = api.get("/api/v1/granules/facets/", {"intersects": json.dumps(geometry)}).json()
    assert facets["counts_exact"] is True
    assert facets["collection"] == [{"value": "SWATH.1", "count": len(expected(world, frame))}]
    posted = api.post("/api/v1/granules/facets/", {"intersects": geometry}, format="json").json()
    assert posted == facets
    monkeypatch.setattr(services, "EXACT_COUNT_LIMIT", 1)
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
                                  {"collection": [{"x": 1}]}])
def test_bad_search_bodies_are_400(api, world, body):
    assert api.post("/api/v1/granules/search/", body, format="json").status_code == 400
