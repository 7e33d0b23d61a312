"""Bounding boxes: validation and intersection, antimeridian included."""
import pytest

from backend.catalog.geo import BBox, BBoxError, parse_bbox


def test_parse_plain_box():
    assert parse_bbox("-10,-5,20,30") == BBox(-10, -5, 20, 30)


def test_parse_drops_heights_of_3d_box():
    assert parse_bbox("-10,-5,0,20,30,100") == BBox(-10, -5, 20, 30)


@pytest.mark.parametrize("text, message", [
    ("1,2,3", "four numbers"),
    ("a,b,c,d", "must be numbers"),
    ("-190,0,10,10", "longitudes"),
    ("0,-91,10,10", "latitudes"),
    ("0,20,10,10", "south (20) is north of north (10)"),
    ("0,nan,10,10", "finite"),
])
def test_bad_boxes_say_what_is_wrong(text, message):
    with pytest.raises(BBoxError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_bbox(text)


def test_crossing_box_splits_into_two_spans():
    box = parse_bbox("170,-10,-170,10")
    assert box.crosses_antimeridian
    assert box.longitude_spans() == [(170, 180), (-180, -170)]


@pytest.mark.parametrize("a, b, expected", [
    ((0, 0, 10, 10), (5, 5, 15, 15), True),
    ((0, 0, 10, 10), (11, 0, 20, 10), False),
    ((0, 0, 10, 10), (0, 11, 10, 20), False),
    ((170, -10, -170, 10), (175, 0, 179, 5), True),
    ((170, -10, -170, 10), (-179, 0, -175, 5), True),
    ((170, -10, -170, 10), (-160, 0, 160, 5), False),
    ((170, -10, -170, 10), (160, -5, -160, 5), True),
])
def test_intersection(a, b, expected):
    assert BBox(*a).intersects(BBox(*b)) is expected
    assert BBox(*b).intersects(BBox(*a)) is expected
