"""Search shapes are planar, as RFC 7946 and every STAC client mean them (issue #34 item 19): a
polygon whose edges span more than 180° of longitude covers the middle of the map, not the
antimeridian. Hypothesis draws wide polygons (convex hulls, boxes, thin bands; some moved past
180 and sent cut at 180 or with longitudes past it) and the STAC and catalog searches must give
exactly the granules shapely says they meet: over footprints drawn in a 0..360 frame
(tests/catalog/oracle.py), and over the footprints the API serves. The issue's band is checked
against the demo's MODIS swaths, whose .met G-rings are points on the sphere."""
import json
from datetime import UTC, datetime, timedelta

import pytest
import shapely
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from shapely.geometry import MultiPoint, Polygon, shape

from backend.catalog import services, shapes
from backend.catalog.geo import BBox
from backend.catalog.models import Granule
from tests.catalog import oracle
from tests.factories import CollectionFactory

START = datetime(2024, 3, 1, tzinfo=UTC)


def register(collection, granule_id, n, **geometry):
    return services.register_granule(collection, granule_id, start=START + timedelta(hours=n),
                                     end=START + timedelta(hours=n, minutes=5), **geometry)


@pytest.fixture
def world(db):
    """Footprints all round the globe in the 0..360 frame, half sent cut at 180, half with
    longitudes past it, boxes across 180 and a global one; {granule_id: frame geometry}."""
    collection = CollectionFactory(short_name="WIDE", version="1")
    rng = oracle.seeded(34)
    frames = {}
    for i in range(48):
        frame = oracle.polygon(rng, lon_range=(30, 330), lat_range=(-70, 70), size=(1, 30))
        register(collection, f"P{i:02d}", i, footprint=shapes.parse_geojson(
            oracle.geojson(frame, cut=i % 2 == 1)))
        frames[f"P{i:02d}"] = frame
    for i, box in enumerate([(170, -10, -170, 10), (10, -80, 20, -60), (100, 60, -100, 80)]):
        register(collection, f"B{i}", 50 + i, bbox=BBox(*box))
        frames[f"B{i}"] = oracle.frame_box(*box)
    register(collection, "GLOBAL", 60, bbox=BBox(-180, -90, 180, 90))
    frames["GLOBAL"] = oracle.WORLD
    Granule.objects.update(state=Granule.State.ARCHIVED)
    return frames


@pytest.fixture
def served(world, api):
    """{granule_id: shapely geometry} of the footprints the catalog API lists."""
    page = api.get("/api/v1/granules/", {"limit": 100}).json()
    assert page["next"] is None and len(page["results"]) == len(world)
    return {g["granule_id"]: shape(g["footprint"]) for g in page["results"]}


LON = st.integers(-1800, 1800).map(lambda v: v / 10)
LAT = st.integers(-800, 800).map(lambda v: v / 10)


@st.composite
def wide_polygons(draw):
    """A valid polygon wider than 180° in -180..180: a convex hull with a vertex each side of
    a 182° gap, a box, or a thin slanted band."""
    kind = draw(st.sampled_from(("hull", "box", "band")))
    west = draw(st.integers(-1800, -910).map(lambda v: v / 10))
    east = draw(st.integers(910, 1800).map(lambda v: v / 10))
    if kind == "hull":
        points = [(west, draw(LAT)), (east, draw(LAT))]
        points += draw(st.lists(st.tuples(LON, LAT), min_size=1, max_size=6))
        polygon = MultiPoint(points).convex_hull
        assume(polygon.geom_type == "Polygon" and polygon.area > 1)
        return polygon
    south, north = sorted((draw(LAT), draw(LAT)))
    if kind == "box":
        assume(north - south >= 0.5)
        return Polygon([(west, south), (east, south), (east, north), (west, north)])
    height = draw(st.integers(5, 100).map(lambda v: v / 10))
    start, end = (south, north) if draw(st.booleans()) else (north, south)
    return Polygon([(west, start), (east, end), (east, end + height), (west, start + height)])


@st.composite
def queries(draw):
    """(the polygon on the globe, in the frame where it was drawn, and its GeoJSON as sent):
    most as drawn, some moved east past 180 and sent cut there or with longitudes past it."""
    polygon = draw(wide_polygons())
    shift = draw(st.sampled_from((0, 0, 0, 30, 90, 175)))
    moved = shapely.affinity.translate(polygon, shift)
    return moved, oracle.geojson(moved, cut=shift > 0 and draw(st.booleans()))


def meets(frame, polygon):
    """Whether a footprint in the 0..360 frame meets a polygon drawn at -180..360 on the globe,
    by shapely alone: the polygon tried where it is and a turn either way."""
    return any(frame.intersects(shapely.affinity.translate(polygon, turn * 360))
               for turn in (-1, 0, 1))


def found(api, geometry):
    stac = api.post("/stac/search", {"intersects": geometry, "limit": 100}, format="json")
    catalog = api.post("/api/v1/granules/search/?limit=100", {"intersects": geometry},
                       format="json")
    assert stac.status_code == 200 and catalog.status_code == 200, (stac.json(), catalog.json())
    assert not [link for link in stac.json()["links"] if link["rel"] == "next"]
    assert catalog.json()["next"] is None
    return ({f["id"] for f in stac.json()["features"]},
            {g["granule_id"] for g in catalog.json()["results"]})


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(query=queries())
def test_wide_polygons_find_exactly_what_shapely_says_they_meet(api, world, served, query):
    polygon, geometry = query
    want = {gid for gid, frame in world.items() if meets(frame, polygon)}
    on_the_map = shape(oracle.geojson(polygon, cut=True))     # inside -180..180
    assert want == {gid for gid, footprint in served.items() if on_the_map.intersects(footprint)}
    stac, catalog = found(api, geometry)
    assert stac == want, geometry
    assert catalog == want, geometry


def test_the_issue_s_band_meets_the_footprints_between_its_ends(api, world, served):
    """The thin band from (-170, -60) to (170, 60) crosses the middle of the map, not 180°."""
    band = Polygon([(-170, -60), (170, 60), (170, 62), (-170, -58)])
    want = {gid for gid, frame in world.items() if meets(frame, band)}
    crossing_180 = {gid for gid, frame in world.items()
                    if frame.intersects(shapely.geometry.box(170, -90, 190, 90))}
    assert want - crossing_180, "the band should meet footprints far from 180°"
    geometry = {"type": "Polygon", "coordinates": [[list(p) for p in band.exterior.coords]]}
    assert found(api, geometry) == (want, want)
    assert want == {gid for gid, footprint in served.items() if band.intersects(footprint)}


def test_a_search_across_180_is_sent_cut_or_past_it_and_gives_the_same(api, world):
    cut = {"type": "MultiPolygon", "coordinates": [
        [[[160, -30], [180, -30], [180, 30], [160, 30], [160, -30]]],
        [[[-180, -30], [-160, -30], [-160, 30], [-180, 30], [-180, -30]]]]}
    past = {"type": "Polygon", "coordinates": [[[160, -30], [200, -30], [200, 30], [160, 30],
                                                [160, -30]]]}
    want = {gid for gid, frame in world.items()
            if frame.intersects(shapely.geometry.box(160, -30, 200, 30))}
    assert "B0" in want and "GLOBAL" in want and len(want) > 2
    assert found(api, cut) == (want, want)
    assert found(api, past) == (want, want)
    stac = api.get("/stac/search", {"intersects": json.dumps(past), "limit": 100}).json()
    assert {f["id"] for f in stac["features"]} == want


def demo_swaths(days):
    """The demo's MODIS swaths of the first `days` days: (granule id, .met text), as seed_demo
    delivers them (the .met G-ring is the footprint ingest reads)."""
    from demo import ecs_met, products

    out = {}
    for index in range(4 * days):
        start = products._swath_start(index, products._rng("MOD021KM", index, 0))
        lat, lon = products._swath_geometry(start)
        gid = products._swath_id(start)
        met = ecs_met.inventory_metadata(f"{gid}.hdf", start, start + timedelta(minutes=5),
                                         products.swath_box(lat, lon), "Day",
                                         products.swath_gring(lat, lon))
        out[gid] = met             # the slot of a day's odd swath can repeat another's
    return out.items()


def test_the_issue_s_band_over_the_demo_swaths(api, db, tmp_path):
    """Issue #34 item 19: the band returned only the global granules and missed the MODIS
    swaths over Africa it crosses; shapely on the served footprints says which it meets."""
    from ingest import metadata

    swaths = CollectionFactory(short_name="MOD021KM", version="061")
    grids = CollectionFactory(short_name="GHRSST_OISST_L4", version="2.1")
    days = 6
    for n, (gid, met) in enumerate(demo_swaths(days)):
        path = tmp_path / f"{gid}.hdf.met"
        path.write_text(met)
        outline = metadata.extract([(path.name, "metadata", path)])
        if outline.footprint is None:           # over a pole: the bounding rectangle only
            register(swaths, gid, n, bbox=BBox(*outline.bbox))
            continue
        footprint = shapes.parse_geojson(outline.footprint, edges=outline.footprint_edges)
        register(swaths, gid, n, footprint=footprint)
    for day in range(days):
        register(grids, f"SST{day}", day, bbox=BBox(-180, -90, 180, 90))
    Granule.objects.update(state=Granule.State.ARCHIVED)
    listed = api.get("/api/v1/granules/", {"limit": 100}).json()["results"]
    assert any(g["footprint"]["type"] == "MultiPolygon" for g in listed), "none crosses 180°"
    band = Polygon([(-170, -60), (170, 60), (170, 62), (-170, -58)])
    want = {g["granule_id"] for g in listed if band.intersects(shape(g["footprint"]))}
    met_swaths = want - {f"SST{day}" for day in range(days)}
    assert len(met_swaths) >= 3, "the band should cross the daytime swaths over Africa"
    geometry = {"type": "Polygon", "coordinates": [[list(p) for p in band.exterior.coords]]}
    assert found(api, geometry) == (want, want)
