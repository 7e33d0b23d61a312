"""MatchTable (a collection's subscriptions matched at once with numpy) gives what testing each
subscription alone gives: BBox.intersects for the box, the window compared as instants,
attributes_match for the conditions, shapely for a drawn shape. Hypothesis draws the
subscriptions and granules, with the awkward values in reach: boxes across the antimeridian
or touching, open windows, equal ends, several conditions on one attribute, True against 1,
integers past 2**53, list values, missing and non-numeric attributes."""
import math

import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shapely.geometry import box as shapely_box

from backend.catalog.geo import BBox
from distribution.match_table import MatchTable, Row
from distribution.matching import attributes_match

NAMES = ("cloud_cover", "day_night", "tile")
# few values, so that conditions hold as often as not and equal values meet
SCALARS = st.sampled_from([0, 1, 1.0, True, False, 2.5, "Day", "Night", "1", None, 2 ** 53 + 1,
                           2 ** 60])
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=2))
NUMBERS = st.one_of(st.sampled_from([0, 1, 2.5, 2 ** 53, 2 ** 53 + 1, -(2 ** 60), math.inf]),
                    st.integers(0, 3))


@st.composite
def conditions(draw):
    out = []
    for _ in range(draw(st.sampled_from((0, 0, 1, 1, 2, 3)))):
        name = draw(st.sampled_from(NAMES))
        op = draw(st.sampled_from(("eq", "ne", "lt", "lte", "gt", "gte", "in")))
        if op in ("lt", "lte", "gt", "gte"):
            value = draw(NUMBERS)
        elif op == "in":
            value = draw(st.lists(VALUES, max_size=4))
        else:
            value = draw(VALUES)
        out.append({"name": name, "op": op, "value": value})
    return out


LONGITUDE = st.one_of(st.integers(-180, 180).map(float), st.sampled_from([-175.5, 4.5, 179.5]))
LATITUDE = st.integers(-90, 90).map(float)
TIME = st.integers(0, 100)


@st.composite
def boxes(draw):
    """Any box, or a narrow one (within a 10-degree band or just across a band's edge)."""
    west = draw(LONGITUDE)
    east = draw(st.one_of(LONGITUDE, st.sampled_from([0, 0.5, 3, 9.5, 10, 12]).map(
        lambda w: west + w if west + w <= 180 else west + w - 360)))
    south, north = sorted((draw(LATITUDE), draw(LATITUDE)))
    return west, south, east, north


def unwrapped(bbox):
    """A box as shapely geometries (two when it crosses 180)."""
    west, south, east, north = bbox
    if west > east:
        return [shapely_box(west, south, 180, north), shapely_box(-180, south, east, north)]
    return [shapely_box(west, south, east, north)]


@st.composite
def rows(draw, pk):
    bbox = draw(st.none() | boxes())
    geometry = None
    if bbox is not None and bbox[0] <= bbox[2] and draw(st.booleans()):
        west, south, east, north = bbox
        geometry = shapely.to_geojson(shapely.Polygon(
            [(west, south), (east, south), ((west + east) / 2, north)]))
    start = draw(st.none() | TIME)
    end = draw(st.none() | st.integers(start or 0, 100))
    return Row(pk, bbox, geometry, start, end, draw(conditions()), draw(st.booleans()))


@st.composite
def granules(draw):
    bbox = draw(st.none() | boxes())
    start = draw(TIME)
    attributes = {}
    for name in NAMES:
        if draw(st.integers(0, 3)):
            attributes[name] = draw(st.one_of(VALUES, NUMBERS))
    return bbox, start, draw(st.integers(start, 100)), attributes, draw(st.booleans())


def brute_force(rows, bbox, start, end, attributes, new_version):
    out = []
    for r in rows:
        if r.box is not None and (bbox is None or not BBox(*bbox).intersects(BBox(*r.box))):
            continue
        if r.geometry and not any(part.intersects(shapely.from_geojson(r.geometry))
                                  for part in unwrapped(bbox)):
            continue
        if r.start_us is not None and r.start_us > end or \
                r.end_us is not None and r.end_us < start:
            continue
        if new_version and not r.new_versions:
            continue
        if attributes_match(r.conditions, attributes):
            out.append(r.subscription_id)
    return sorted(out)


def footprint(bbox):
    return None if bbox is None else shapely.MultiPolygon(unwrapped(bbox))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 10 ** 6), min_size=1, max_size=25, unique=True).flatmap(
    lambda pks: st.tuples(*[rows(pk) for pk in pks])), st.lists(granules(), min_size=1,
                                                                  max_size=5))
def test_the_table_answers_as_each_subscription_tested_alone(subscriptions, drawn):
    table = MatchTable(subscriptions)
    for bbox, start, end, attributes, new_version in drawn:
        want = brute_force(subscriptions, bbox, start, end, attributes, new_version)
        assert table.match(bbox, start, end, attributes, new_version=new_version,
                           footprint=footprint(bbox)) == want


def test_awkward_conditions_are_those_of_attributes_match():
    """Cases the compiled groups could get wrong, each against attributes_match."""
    cases = [
        [{"name": "n", "op": "eq", "value": 1}],
        [{"name": "n", "op": "eq", "value": "Day"}, {"name": "n", "op": "eq", "value": "Night"}],
        [{"name": "n", "op": "in", "value": [1, [2], {"a": 1}]}],
        [{"name": "n", "op": "in", "value": []}],
        [{"name": "n", "op": "ne", "value": [1, 2]}],
        [{"name": "n", "op": "ne", "value": True}],
        [{"name": "n", "op": "gt", "value": 2 ** 53}],
        [{"name": "n", "op": "lte", "value": 2 ** 60 + 1}],
        [{"name": "n", "op": "lt", "value": math.inf}],
        [{"name": "n", "op": "gte", "value": 2.5}, {"name": "m", "op": "ne", "value": "x"}],
    ]
    table = MatchTable([Row(i, None, None, None, None, c, False) for i, c in enumerate(cases)])
    for have in (1, 1.0, True, 0, 2, 2.5, 2 ** 53 + 1, 2 ** 60 + 1, 2 ** 60 + 2, "Day", "Night",
                 [1, 2], [2], {"a": 1}, None, float("nan"), math.inf, "x"):
        for attributes in ({"n": have}, {"n": have, "m": "x"}, {"m": have}, {}):
            want = [i for i, c in enumerate(cases) if attributes_match(c, attributes)]
            assert table.match(None, 0, 0, attributes) == want, (have, attributes)


def test_an_empty_table_matches_nothing():
    assert MatchTable([]).match((0.0, 0.0, 1.0, 1.0), 0, 1, {}) == []
