"""Pure helpers (no Django): subscription attribute conditions and shapes, HTTP byte ranges.

Collections, box and time window of a subscription are matched in SQL; the attribute
conditions and a drawn shape (tested exactly against the granule's footprint with shapely:
there is no PostGIS) run here, only on the few subscriptions the indexed query left.
"""
import json
from functools import lru_cache

import shapely

OPS = ("eq", "ne", "lt", "lte", "gt", "gte", "in")


class ConditionError(ValueError):
    """An attribute condition that cannot be used, with a message for the user."""


def check_conditions(conditions):
    """Validate [{name, op, value}] and return it normalised (op defaults to eq)."""
    if conditions in (None, ""):
        return []
    if not isinstance(conditions, list):
        raise ConditionError("conditions must be a list of {name, op, value}")
    out = []
    for i, cond in enumerate(conditions):
        if not isinstance(cond, dict) or "name" not in cond or "value" not in cond:
            raise ConditionError(f"condition {i} needs a name and a value")
        name, op, value = str(cond["name"]), cond.get("op", "eq"), cond["value"]
        if not name.replace("_", "").isalnum():
            raise ConditionError(f"condition {i}: {name!r} is not an attribute name")
        if op not in OPS:
            raise ConditionError(f"condition {i}: op must be one of {', '.join(OPS)}")
        if op in ("lt", "lte", "gt", "gte") and not _is_number(value):
            raise ConditionError(f"condition {i}: {op} needs a number, not {value!r}")
        if op == "in" and not isinstance(value, list):
            raise ConditionError(f"condition {i}: in needs a list of values")
        out.append({"name": name, "op": op, "value": value})
    return out


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


@lru_cache(maxsize=65536)
def stored_conditions(text):
    """Conditions from their stored JSON text, memoised: every granule of a collection reads
    the same texts again, and decoding them cost more than testing them. The lists are
    shared, so callers must not change them."""
    return json.loads(text)


@lru_cache(maxsize=16384)
def stored_geometry(text):
    """A subscription's stored shape (GeoJSON text), parsed and prepared once and shared."""
    geometry = shapely.from_geojson(text)
    shapely.prepare(geometry)
    return geometry


def shape_matches(text, footprint):
    """Whether a subscription's stored shape meets a granule's footprint geometry (a granule
    without one never meets a shape)."""
    return footprint is not None and bool(stored_geometry(text).intersects(footprint))


def attributes_match(conditions, attributes):
    """True when every condition holds; a missing attribute fails all but `ne`."""
    for cond in conditions:
        op, want = cond["op"], cond["value"]
        if cond["name"] not in attributes:
            if op == "ne":
                continue
            return False
        have = attributes[cond["name"]]
        if op == "eq" and have != want or op == "ne" and have == want:
            return False
        if op == "in" and have not in want:
            return False
        if op in ("lt", "lte", "gt", "gte"):
            if not _is_number(have):
                return False
            ok = {"lt": have < want, "lte": have <= want, "gt": have > want,
                  "gte": have >= want}[op]
            if not ok:
                return False
    return True


class RangeNotSatisfiable(Exception):
    pass


def parse_range(header, size):
    """(start, end) inclusive for a single `bytes=` range, None to send the whole file.

    Malformed or multi-range headers are ignored (RFC 9110 lets a server do that); a range
    that starts past the end raises RangeNotSatisfiable.
    """
    if not header or not header.startswith("bytes=") or "," in header:
        return None
    first, sep, last = header[len("bytes="):].strip().partition("-")
    if not sep:
        return None
    try:
        if first == "":
            suffix = int(last)
            if suffix <= 0:
                raise RangeNotSatisfiable(header)
            return max(0, size - suffix), size - 1
        start = int(first)
        end = int(last) if last else size - 1
    except ValueError:
        return None
    if start >= size:
        raise RangeNotSatisfiable(header)
    if start < 0 or end < start:
        return None
    return start, min(end, size - 1)
