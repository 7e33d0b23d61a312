"""catalog.shapes: checking GeoJSON, splitting at the antimeridian, the index boxes."""
import json

import pytest
import shapely
from shapely.geometry import Polygon, box

from backend.catalog import shapes
from backend.catalog.geo import BBox
from tests.catalog import oracle


def poly(*ring):
    return {"type": "Polygon", "coordinates": [[list(p) for p in ring]]}


@pytest.mark.parametrize("value, message", [
    ([1, 2], "GeoJSON geometry object"),
    ({"type": "Circle", "coordinates": [0, 0]}, "unknown geometry type 'Circle'"),
    ({"type": "Point", "coordinates": ["a", 1]}, "malformed"),
    ({"type": "Point", "coordinates": [True, 1]}, "malformed"),
    ({"type": "Point", "coordinates": [0, 91]}, "latitude 91 is outside"),
    ({"type": "Point", "coordinates": [400, 0]}, "longitude 400 is outside"),
    ({"type": "Polygon", "coordinates": [[0, 0]]}, "malformed"),
    ({"type": "Polygon", "coordinates": []}, "malformed"),
    (poly((0, 0), (1, 0), (1, 1)), "at least four positions"),
    (poly((0, 0), (1, 0), (1, 1), (0, 1)), "not closed"),
    (poly((0, 0), (1, 1), (1, 0), (0, 1), (0, 0)), "Self-intersection"),
    ({"type": "LineString", "coordinates": [[0, 0]]}, "at least two positions"),
    ({"type": "GeometryCollection", "geometries": []}, "non-empty"),
    ({"type": "GeometryCollection", "geometries": [
        {"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [0, 0]}]}
    ]}, "inside another"),
])
def test_bad_geometry_says_why(value, message):
    with pytest.raises(shapes.ShapeError, match=message):
        shapes.parse_geojson(value)


def test_vertex_limit_is_named():
    ring = [[i / 1000, 0] for i in range(shapes.MAX_VERTICES)] + [[1, 1], [0, 0]]
    with pytest.raises(shapes.ShapeError, match=f"the limit is {shapes.MAX_VERTICES}"):
        shapes.parse_geojson({"type": "Polygon", "coordinates": [ring]})


CROSSING = shapely.union_all([box(170, -10, 180, 10), box(-180, -10, -170, 10)])


def test_geojson_is_planar_so_an_edge_from_minus_170_to_170_runs_across_the_middle():
    """RFC 7946 §3.1.1: the ring 170 -> -170 is the 340° band, as shapely reads it."""
    ring = [(170, -10), (-170, -10), (-170, 10), (170, 10), (170, -10)]
    shape = shapes.parse_geojson(poly(*ring))
    assert shape.geometry.equals(Polygon(ring))
    assert shape.bbox() == BBox(-170, -10, 170, 10)
    assert shape.intersects_many([box(0, 0, 1, 1), box(175, -1, 176, 1)]) == [True, False]


def test_across_the_antimeridian_a_shape_is_cut_at_180_or_goes_past_it():
    """RFC 7946 §3.1.9: cut at 180 into a MultiPolygon; longitudes past 180 are split too."""
    cut = {"type": "MultiPolygon", "coordinates": [
        [[[170, -10], [180, -10], [180, 10], [170, 10], [170, -10]]],
        [[[-180, -10], [-170, -10], [-170, 10], [-180, 10], [-180, -10]]]]}
    past = poly((170, -10), (190, -10), (190, 10), (170, 10), (170, -10))
    west = poly((-190, -10), (-170, -10), (-170, 10), (-190, 10), (-190, -10))
    for value in (cut, past, west):
        shape = shapes.parse_geojson(value)
        assert shape.geometry.equals(CROSSING)
        assert shape.bbox() == BBox(170, -10, -170, 10)


def test_g_rings_on_the_sphere_take_the_shorter_way_round():
    """A .met G-ring's points are on the sphere: 170 -> -170 crosses 180°, 20° wide."""
    ring = poly((170, -10), (-170, -10), (-170, 10), (170, 10), (170, -10))
    shape = shapes.parse_geojson(ring, edges=shapes.SPHERE)
    assert shape.geometry.equals(CROSSING)
    assert shape.bbox() == BBox(170, -10, -170, 10)


def test_world_box_and_polar_cap():
    world = shapes.parse_geojson(poly((-180, -90), (180, -90), (180, 90), (-180, 90), (-180, -90)))
    assert world.geometry.equals(box(-180, -90, 180, 90))
    planar_cap = poly((-180, 80), (180, 80), (180, 90), (-180, 90), (-180, 80))
    assert shapes.parse_geojson(planar_cap).geometry.equals(box(-180, 80, 180, 90))
    # A ring once round the pole is a polar cap on the sphere, and no polygon on the plane.
    round_the_pole = poly((0, 80), (90, 80), (180, 80), (-90, 80), (0, 80))
    cap = shapes.parse_geojson(round_the_pole, edges=shapes.SPHERE)
    assert cap.geometry.equals(box(-180, 80, 180, 90))
    with pytest.raises(shapes.ShapeError, match="not valid"):
        shapes.parse_geojson(round_the_pole)


def test_point_on_the_antimeridian_is_on_both_sides():
    shape = shapes.parse_geojson({"type": "Point", "coordinates": [180, 5]})
    assert shape.intersects_many([box(-181, 0, -179, 10)]) == [True]
    assert shape.intersects_many([box(179, 0, 181, 10)]) == [True]


@pytest.mark.parametrize("form", ["past 180", "cut at 180", "a G-ring"])
def test_split_shapes_equal_the_frame_shapes_moved_back(form):
    """Every random polygon around 180°, split, covers exactly what it covers in 0..360, given
    with longitudes past 180 or cut at 180 (RFC 7946), or jumping 170 -> -170 on the sphere."""
    rng = oracle.seeded(7)
    for _ in range(200):
        frame = oracle.polygon(rng)
        if form == "a G-ring":
            ring = oracle.to_api([list(c) for c in frame.exterior.coords])
            shape = shapes.parse_geojson(poly(*ring), edges=shapes.SPHERE)
        else:
            shape = shapes.parse_geojson(oracle.geojson(frame, cut=form == "cut at 180"))
        east_part = frame.intersection(box(180, -90, 540, 90))
        back = shapely.union_all([frame.intersection(box(-180, -90, 180, 90)),
                                  shapely.affinity.translate(east_part, -360)])
        assert shape.geometry.symmetric_difference(back).area < 1e-9
        lo, hi = frame.bounds[0], frame.bounds[2]
        box_ = shape.bbox()
        assert (box_.west - lo) % 360 < 1e-9 or abs((box_.west - lo) % 360 - 360) < 1e-9
        assert (box_.east - hi) % 360 < 1e-9 or abs((box_.east - hi) % 360 - 360) < 1e-9


def test_from_box_splits_a_crossing_box_and_degenerates():
    assert shapes.from_box(170, -5, -170, 5).geometry.equals(
        shapely.union_all([box(170, -5, 180, 5), box(-180, -5, -170, 5)]))
    assert shapes.from_box(1, 2, 1, 2).geometry.geom_type == "Point"
    assert shapes.from_box(1, 2, 1, 5).geometry.geom_type == "LineString"


def test_stored_text_round_trips():
    shape = shapes.parse_geojson(poly((170, -10), (190, -10), (190, 10), (170, 10), (170, -10)))
    text = shapes.to_text(shape)
    assert shapes.from_stored(text).equals(shape.geometry)
    again = shapes.parse_geojson(json.loads(text))      # a stored shape reads back the same
    assert again.geometry.equals(shape.geometry)


def test_wkt_footprints():
    shape = shapes.from_wkt("POLYGON ((170 -10, 190 -10, 190 10, 170 10, 170 -10))")
    assert shape.bbox() == BBox(170, -10, -170, 10)
    with pytest.raises(shapes.ShapeError, match="not WKT"):
        shapes.from_wkt("POLYGON ((oops")


def test_migration_box_geometry_equals_the_catalog_box():
    """The data migration writes its own box GeoJSON; it must be the catalog's footprint."""
    import importlib

    migration = importlib.import_module("backend.catalog.migrations.0006_footprint")
    for west, south, east, north in [(0, 0, 1, 1), (170, -5, -170, 5), (-180, -90, 180, 90),
                                     (3, 4, 3, 4), (3, 4, 3, 9), (175, 1, -175, 1)]:
        text = migration.box_geojson(west, south, east, north)
        assert shapely.from_geojson(text).equals(shapes.from_box(west, south, east,
                                                                 north).geometry)


def test_footprints_of_rows_without_text_are_their_boxes():
    """Rows kept without a footprint (before footprints were kept) test as their box: plain
    boxes, ones across 180°, lines, points, a stored footprint beside them and a row with
    no box at all, each equal to the shape built from scratch with shapely."""
    stored = json.dumps(poly((0, 0), (3, 0), (3, 3), (0, 0)))
    rows = [(None, -10.5, -5.0, 20.25, 30.0), ("", 100.0, 10.0, 101.0, 11.0),
            (None, 170.0, -20.0, -170.0, 20.0), (None, 5.0, 5.0, 5.0, 9.0),
            (None, 7.0, 7.0, 7.0, 7.0), (stored, 0.0, 0.0, 3.0, 3.0),
            (None, None, None, None, None)]
    expected = [box(-10.5, -5.0, 20.25, 30.0), box(100.0, 10.0, 101.0, 11.0),
                shapely.MultiPolygon([box(170.0, -20.0, 180.0, 20.0),
                                      box(-180.0, -20.0, -170.0, 20.0)]),
                shapely.LineString([(5.0, 5.0), (5.0, 9.0)]), shapely.Point(7.0, 7.0),
                Polygon([(0, 0), (3, 0), (3, 3)]), None]
    got = shapes.load_footprints(rows)
    assert len(got) == len(expected)
    for geometry, want in zip(got, expected, strict=True):
        if want is None:
            assert geometry is None
        else:
            assert geometry.equals(want), (geometry, want)
