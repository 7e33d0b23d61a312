"""The pure helpers: attribute conditions and byte ranges."""
import pytest

from distribution.matching import (
    ConditionError,
    RangeNotSatisfiable,
    attributes_match,
    check_conditions,
    parse_range,
    stored_conditions,
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


def test_stored_conditions_read_as_written():
    conds = check_conditions([{"name": "cloud_cover", "op": "lt", "value": 20}])
    text = '[{"name": "cloud_cover", "op": "lt", "value": 20}]'
    assert stored_conditions(text) == conds == stored_conditions(text)
    assert attributes_match(stored_conditions(text), {"cloud_cover": 3})


@pytest.mark.parametrize("header, expected", [
    (None, None), ("bytes=0-9", (0, 9)), ("bytes=10-", (10, 99)), ("bytes=-5", (95, 99)),
    ("bytes=90-500", (90, 99)), ("bytes=-500", (0, 99)), ("bytes=5-1", None),
    ("bytes=0-1,5-6", None), ("items=0-1", None), ("bytes=a-b", None),
])
def test_ranges(header, expected):
    assert parse_range(header, 100) == expected


@pytest.mark.parametrize("header", ["bytes=100-", "bytes=100-200", "bytes=-0"])
def test_unsatisfiable_ranges(header):
    with pytest.raises(RangeNotSatisfiable):
        parse_range(header, 100)
