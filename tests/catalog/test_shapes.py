"""catalog.shapes: checking GeoJSON, splitting at the antimeridian, the index boxes."""
import json

import pytest
import shapely
from shapely.geometry import box

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


def test_a_ring_from_170_to_minus_170_crosses_the_antimeridian():
    shape = shapes.parse_geojson(poly((170, -10), (-170, -10), (-170, 10), (170, 10), (170, -10)))
    expected = shapely.union_all([box(170, -10, 180, 10), box(-180, -10, -170, 10)])
    assert shape.geometry.equals(expected)
    assert shape.bbox() == BBox(170, -10, -170, 10)
    # and the same ring written 170 -> 190
    other = shapes.parse_geojson(poly((170, -10), (190, -10), (190, 10), (170, 10), (170, -10)))
    assert other.geometry.equals(expected)


def test_world_box_and_polar_cap():
    world = shapes.parse_geojson(poly((-180, -90), (180, -90), (180, 90), (-180, 90), (-180, -90)))
    assert world.geometry.equals(box(-180, -90, 180, 90))
    cap = shapes.parse_geojson(poly((0, 80), (90, 80), (180, 80), (-90, 80), (0, 80)))
    assert cap.geometry.equals(box(-180, 80, 180, 90))


def test_point_on_the_antimeridian_is_on_both_sides():
    shape = shapes.parse_geojson({"type": "Point", "coordinates": [180, 5]})
    assert shape.intersects_many([box(-181, 0, -179, 10)]) == [True]
    assert shape.intersects_many([box(179, 0, 181, 10)]) == [True]


def test_split_shapes_equal_the_frame_shapes_moved_back():
    """Every random polygon around 180°, split, covers exactly what it covers in 0..360."""
    rng = oracle.seeded(7)
    for _ in range(200):
        frame = oracle.polygon(rng)
        shape = shapes.parse_geojson(oracle.geojson(frame))
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
    shape = shapes.parse_geojson(poly((170, -10), (-170, -10), (-170, 10), (170, 10), (170, -10)))
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
