"""A collection's active subscriptions as columns, matched against a granule at once (no Django).

Matching one granule row by row cost a few microseconds per subscription that passed the box
and window (SQL, row transfer, the conditions in Python): linear in the matches, 14 ms at
1,240 of them. Here every filter is a numpy test over the whole collection: box and window on
float and integer columns, the attribute conditions compiled into one group per (attribute,
op) whose rows are failed together, and only the drawn shapes (shapely, vectorised) and the
rare condition that cannot be compiled (a list or object as the value) are tested one by one.
Boxes are filed by longitude band, so a granule's box is tested against the boxes of the bands
it reaches only. The answer is the same as attributes_match and BBox.intersects give (checked
against them by tests/distribution/test_match_table.py).
"""
import math
from dataclasses import dataclass

import numpy as np
import shapely

from .matching import attributes_match

_NUMERIC = ("lt", "lte", "gt", "gte")
_COMPARE = {"lt": np.less, "lte": np.less_equal, "gt": np.greater, "gte": np.greater_equal}
_EXACT = 2 ** 53            # integers beyond this are not all floats: compared as Python ints
_NO_START, _NO_END = np.iinfo(np.int64).min, np.iinfo(np.int64).max


@dataclass(frozen=True)
class Row:
    """One subscription's filter for one collection, times as microseconds since 1970
    (None: open), box as west, south, east, north (None: anywhere)."""
    subscription_id: int
    box: tuple | None
    geometry: str | None
    start_us: int | None
    end_us: int | None
    conditions: list
    new_versions: bool


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


def _hashable(value):
    """Whether a condition value can be looked up in a dict with the answer == gives (NaN
    cannot: it is unequal to itself but found by identity)."""
    if isinstance(value, float) and math.isnan(value):
        return False
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _compilable(cond):
    value = cond["value"]
    if cond["op"] in _NUMERIC:
        return _is_number(value) and not (isinstance(value, float) and math.isnan(value))
    if cond["op"] == "in":
        return all(_hashable(v) for v in value)
    return _hashable(value)


class _Lookup:
    """Conditions eq / ne / in on one attribute: positions (in this group) of the conditions
    each value satisfies, and the subscription row of each position."""

    def __init__(self):
        self.rows, self.positions = [], {}

    def add(self, row, values):
        position = len(self.rows)
        self.rows.append(row)
        for value in set(values):
            self.positions.setdefault(value, []).append(position)

    def freeze(self):
        self.rows = np.asarray(self.rows, dtype=np.int64)
        self.positions = {k: np.asarray(v, dtype=np.int64) for k, v in self.positions.items()}

    def holding(self, have):
        """Positions of the conditions that `have` satisfies (equal to, or in the list)."""
        try:
            return self.positions.get(have)
        except TypeError:   # a list or object attribute equals no hashable value
            return None


class _Numeric:
    """Conditions of one op (lt, lte, gt, gte) on one attribute: row and wanted value each."""

    def __init__(self):
        self.rows, self.values = [], []

    def add(self, row, value):
        self.rows.append(row)
        self.values.append(value)

    def freeze(self):
        self.rows = np.asarray(self.rows, dtype=np.int64)
        self.exact = self.values
        self.values = np.asarray(self.values, dtype=np.float64)
        self.exact_as_float = bool(np.all(np.abs(self.values) <= _EXACT)) and all(
            float(v) == v for v in self.exact)

    def failing(self, op, have):
        """Rows whose condition `have <op> value` does not hold."""
        with np.errstate(invalid="ignore"):     # NaN compares false, as in Python
            if isinstance(have, int) and abs(have) > _EXACT or not self.exact_as_float:
                holds = _COMPARE[op](have, np.asarray(self.exact, dtype=object)).astype(bool)
            else:
                holds = _COMPARE[op](float(have), self.values)
        return self.rows[~holds]


_BAND = 10.0                # degrees of longitude


def _band(longitude):
    return min(int((longitude + 180.0) // _BAND), int(360 // _BAND) - 1)


def _spans(west, east):
    """A box's longitudes as one or two intervals that do not cross 180 (geo.BBox's)."""
    return [(west, 180.0), (-180.0, east)] if west > east else [(west, east)]


class _Bands:
    """Boxed rows filed by the 10-degree longitude bands they reach, each with the box's span
    there (a box across 180 as its two halves), so a granule tests the rows of the bands it
    reaches: a tenth of the collection, not all of it. Two intervals that meet do so in a
    band both reach, so no row that meets the granule is missed."""

    def __init__(self, boxed):
        filed = {}
        for row, box in boxed:
            if any(v is None or v != v for v in box):     # an incomplete box meets nothing
                continue
            west, south, east, north = box
            for lo, hi in _spans(west, east):
                for band in range(_band(lo), _band(hi) + 1):
                    filed.setdefault(band, []).append((row, lo, hi, south, north))
        self.filed = {}
        for band, entries in filed.items():
            rows, lo, hi, south, north = zip(*entries, strict=True)
            self.filed[band] = (np.asarray(rows, np.int64),
                                *(np.asarray(c, np.float64) for c in (lo, hi, south, north)))

    def meeting(self, bbox):
        """Row arrays (a row may come more than once) whose box meets `bbox`."""
        west, south, east, north = bbox
        out = []
        for glo, ghi in _spans(west, east):
            for band in range(_band(glo), _band(ghi) + 1):
                if band in self.filed:
                    rows, lo, hi, s, n = self.filed[band]
                    out.append(rows[(lo <= ghi) & (hi >= glo) & (s <= north) & (n >= south)])
        return out


class MatchTable:
    """The active subscriptions of one collection, ready to match granules."""

    def __init__(self, rows):
        rows = sorted(rows, key=lambda r: r.subscription_id)
        n = len(rows)
        self.ids = np.fromiter((r.subscription_id for r in rows), np.int64, n)
        self.unboxed = np.asarray([i for i, r in enumerate(rows) if r.box is None], np.int64)
        self.bands = _Bands([(i, r.box) for i, r in enumerate(rows) if r.box is not None])
        self.start = np.fromiter((_NO_START if r.start_us is None else r.start_us for r in rows),
                                 np.int64, n)
        self.end = np.fromiter((_NO_END if r.end_us is None else r.end_us for r in rows),
                               np.int64, n)
        self.new_versions = np.fromiter((r.new_versions for r in rows), bool, n)
        shaped = [i for i, r in enumerate(rows) if r.geometry]
        self.is_shaped = np.zeros(n, dtype=bool)
        self.is_shaped[shaped] = True
        self.shapes = np.empty(n, dtype=object)
        if shaped:
            geometries = shapely.from_geojson([rows[i].geometry for i in shaped])
            shapely.prepare(geometries)
            self.shapes[shaped] = geometries
        self._compile([r.conditions for r in rows])

    def __len__(self):
        return len(self.ids)

    def _compile(self, conditions):
        self.numeric, self.lookups, slow = {}, {}, []
        for row, conds in enumerate(conditions):
            if not all(_compilable(c) for c in conds):
                slow.append(row)
                continue
            for cond in conds:
                name, op, value = cond["name"], cond["op"], cond["value"]
                if op in _NUMERIC:
                    self.numeric.setdefault((name, op), _Numeric()).add(row, value)
                else:
                    self.lookups.setdefault((name, op), _Lookup()).add(
                        row, value if op == "in" else [value])
        for group in (*self.numeric.values(), *self.lookups.values()):
            group.freeze()
        self.is_slow = np.zeros(len(conditions), dtype=bool)
        self.is_slow[slow] = True
        self.slow_conditions = {row: conditions[row] for row in slow}

    def _failing_conditions(self, attributes):
        """Mask of the rows a compiled condition fails for a granule with `attributes`."""
        fail = np.zeros(len(self), dtype=bool)
        for (name, op), group in self.numeric.items():
            have = attributes.get(name)
            if name not in attributes or not _is_number(have):
                fail[group.rows] = True
            else:
                fail[group.failing(op, have)] = True
        for (name, op), group in self.lookups.items():
            if name not in attributes:
                if op != "ne":
                    fail[group.rows] = True
                continue
            held = group.holding(attributes[name])
            if op == "ne":
                if held is not None:
                    fail[group.rows[held]] = True
                continue
            failed = np.ones(len(group.rows), dtype=bool)
            if held is not None:
                failed[held] = False
            fail[group.rows[failed]] = True
        return fail

    def match(self, bbox, start_us, end_us, attributes, new_version=False, footprint=None):
        """Ids (ascending) of the subscriptions whose filter holds for a granule with this
        box (west, south, east, north, or None), time span and attributes; `footprint` is
        the granule's geometry, for the subscriptions drawn as a shape (None: they fail)."""
        if bbox is None:
            rows = self.unboxed
        else:
            met = np.zeros(len(self), dtype=bool)        # each row once, in order
            met[self.unboxed] = True
            for found in self.bands.meeting(bbox):
                met[found] = True
            rows = np.flatnonzero(met)
        held = (self.start[rows] <= end_us) & (self.end[rows] >= start_us)
        if new_version:
            held &= self.new_versions[rows]
        rows = rows[held]
        rows = rows[~self._failing_conditions(attributes)[rows]]
        slow = self.is_slow[rows]
        if slow.any():
            slow[slow] = [not attributes_match(self.slow_conditions[int(row)], attributes)
                          for row in rows[slow]]
            rows = rows[~slow]
        shaped = self.is_shaped[rows]
        if shaped.any():
            shaped[shaped] = True if footprint is None else ~shapely.intersects(
                self.shapes[rows[shaped]], footprint)
            rows = rows[~shaped]
        return self.ids[rows].tolist()
