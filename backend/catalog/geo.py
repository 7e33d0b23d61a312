"""Bounding boxes on the sphere, with antimeridian crossing. Pure Python, no Django.

A box is (west, south, east, north) in degrees. west > east means the box crosses the
antimeridian (e.g. 170, -10, -170, 10 spans 20 degrees of longitude around 180).
"""
from dataclasses import dataclass


class BBoxError(ValueError):
    """A bounding box that cannot be used, with a message meant for the user."""


@dataclass(frozen=True)
class BBox:
    west: float
    south: float
    east: float
    north: float

    @property
    def crosses_antimeridian(self):
        return self.west > self.east

    def longitude_spans(self):
        """The box's longitudes as one or two non-crossing [lo, hi] intervals."""
        if self.crosses_antimeridian:
            return [(self.west, 180.0), (-180.0, self.east)]
        return [(self.west, self.east)]

    def intersects(self, other):
        if self.south > other.north or self.north < other.south:
            return False
        return any(
            lo <= o_hi and hi >= o_lo
            for lo, hi in self.longitude_spans()
            for o_lo, o_hi in other.longitude_spans()
        )

    def as_list(self):
        return [self.west, self.south, self.east, self.north]


def make_bbox(west, south, east, north):
    """Validate and build a box; raises BBoxError saying what is wrong."""
    try:
        w, s, e, n = (float(v) for v in (west, south, east, north))
    except (TypeError, ValueError) as exc:
        raise BBoxError("values must be numbers: west,south,east,north") from exc
    if any(v != v or v in (float("inf"), float("-inf")) for v in (w, s, e, n)):
        raise BBoxError("values must be finite numbers")
    if not (-180 <= w <= 180 and -180 <= e <= 180):
        raise BBoxError("longitudes must lie within -180..180")
    if not (-90 <= s <= 90 and -90 <= n <= 90):
        raise BBoxError("latitudes must lie within -90..90")
    if s > n:
        raise BBoxError(f"south ({s:g}) is north of north ({n:g})")
    return BBox(w, s, e, n)


def parse_bbox(text):
    """Parse 'west,south,east,north' (the STAC and CMR order)."""
    if isinstance(text, (list, tuple)):
        parts = list(text)
    else:
        parts = [p.strip() for p in str(text).split(",")]
    if len(parts) == 6:  # 3-D bbox: drop the heights
        parts = [parts[0], parts[1], parts[3], parts[4]]
    if len(parts) != 4:
        raise BBoxError("needs four numbers: west,south,east,north")
    return make_bbox(*parts)
