"""The pure helpers: attribute conditions and byte ranges."""
import pytest

from distribution.matching import (
    ConditionError,
    RangeNotSatisfiable,
    attributes_match,
    check_conditions,
    parse_range,
    range_validator_matches,
)


def test_conditions():
    conds = check_conditions([{"name": "cloud_cover", "op": "lt", "value": 20},
                              {"name": "day_night", "value": "Day"},
                              {"name": "tile", "op": "in", "value": ["h10", "h11"]}])
    assert conds[1]["op"] == "eq"
    assert attributes_match(conds, {"cloud_cover": 5, "day_night": "Day", "tile": "h10"})
    assert not attributes_match(conds, {"cloud_cover": 25, "day_night": "Day", "tile": "h10"})
    assert not attributes_match(conds, {"day_night": "Day", "tile": "h10"})
    assert not attributes_match(conds, {"cloud_cover": "x", "day_night": "Day", "tile": "h10"})
    assert attributes_match(check_conditions([{"name": "flag", "op": "ne", "value": 1}]), {})
    for bad in ([{"name": "a b", "value": 1}], [{"name": "a", "op": "like", "value": 1}],
                [{"name": "a", "op": "in", "value": 1}], [{"value": 1}], "x"):
        with pytest.raises(ConditionError):
            check_conditions(bad)


@pytest.mark.parametrize("header, expected", [
    (None, None), ("bytes=0-9", (0, 9)), ("bytes=10-", (10, 99)), ("bytes=-5", (95, 99)),
    ("bytes=90-500", (90, 99)), ("bytes=-500", (0, 99)), ("bytes=5-1", None),
    ("bytes=0-1,5-6", None), ("items=0-1", None), ("bytes=a-b", None),
    ("BYTES=0-0", (0, 0)), (" bytes = 3 - 4 ", (3, 4)), ("bytes=1_0-", None),
    ("bytes=+1-", None), ("bytes=-+1", None), ("bytes=-", None), ("bytes=", None),
    ("bytes=0-" + "9" * 400, (0, 99)), ("bytes=-" + "9" * 400, (0, 99)), ("bytes=\u0661-", None),
])
def test_ranges(header, expected):
    assert parse_range(header, 100) == expected


@pytest.mark.parametrize("header, expected", [
    # RFC 9110 section 14.1.2's examples, for a representation of 10000 bytes
    ("bytes=0-499", (0, 499)), ("bytes=500-999", (500, 999)), ("bytes=-500", (9500, 9999)),
    ("bytes=9500-", (9500, 9999)),
])
def test_rfc_9110_examples(header, expected):
    assert parse_range(header, 10000) == expected


@pytest.mark.parametrize("header, size", [
    ("bytes=100-", 100), ("bytes=100-200", 100), ("bytes=-0", 100), ("bytes=0-", 0),
    ("bytes=-1", 0), ("bytes=" + "9" * 5000 + "-", 100),
])
def test_unsatisfiable_ranges(header, size):
    with pytest.raises(RangeNotSatisfiable):
        parse_range(header, size)


@pytest.mark.parametrize("if_range, matches", [
    (None, True), ('"abc"', True), (' "abc" ', True), ('W/"abc"', False), ('"abd"', False),
    ("abc", False), ("Wed, 21 Oct 2015 07:28:00 GMT", False), ("", False),
])
def test_if_range_is_a_strong_comparison(if_range, matches):
    assert range_validator_matches(if_range, '"abc"') is matches
