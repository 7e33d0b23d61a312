"""What a user asks an order to cut out of each granule, checked and stored as plain data: the
variables to keep, an area (a box, west > east crossing 180, or the search's shape, split at
the antimeridian), a time range within the granule, and the output format. Pure Python, no
Django: the order's services check it against the catalog; transform.py applies it.
"""
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from backend.catalog import shapes
from backend.catalog.geo import BBox, BBoxError, make_bbox

FORMATS = {
    "netcdf4": "NetCDF-4 as delivered (its own compression and chunks)",
    "netcdf4-compressed": "NetCDF-4, every variable compressed (zlib level 4, shuffle)",
    "zarr-zip": "Zarr store (format 2, consolidated metadata) in one .zip",
}
SUFFIXES = {"netcdf4": ".nc", "netcdf4-compressed": ".nc", "zarr-zip": ".zarr.zip"}
# What a format does to the bytes of the variables kept, for the estimate only: a recompressed
# field is about this share of its delivered size (demo and bench fields, zlib 4 + shuffle).
FORMAT_FACTOR = {"netcdf4": 1.0, "netcdf4-compressed": 0.7, "zarr-zip": 1.0}
# Every output carries its own header and coordinates, however small the cut (a NetCDF-4 of one
# small variable is ~10-20 KiB): counted once per output in the estimate.
OUTPUT_OVERHEAD = 16 << 10
MAX_VARIABLES = 200
MAX_NAME = 256
KEYS = {"variables", "bbox", "intersects", "start", "end", "format"}


class SubsetError(ValueError):
    """Subsetting options that cannot work, with a sentence for the user."""


@dataclass(frozen=True)
class Subset:
    variables: tuple = ()
    bbox: BBox | None = None
    shape: object = None            # catalog.shapes.Shape
    start: datetime | None = None
    end: datetime | None = None
    format: str = "netcdf4"
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def cuts(self):
        """True when something is cut or converted; False: the files go as delivered."""
        return bool(self.variables or self.area or self.start or self.end
                    or self.format != "netcdf4")

    @property
    def area(self):
        """The box the area selects within (a shape's own box), or None."""
        if self.shape is not None:
            return self.shape.bbox()
        return self.bbox

    def as_json(self):
        return {"variables": list(self.variables),
                "bbox": self.bbox.as_list() if self.bbox and self.shape is None else None,
                "intersects": self.shape.geojson() if self.shape is not None else None,
                "start": _iso(self.start), "end": _iso(self.end), "format": self.format}


def _iso(when):
    return None if when is None else when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def parse(options):
    """A Subset from the API's (or the stored) options; SubsetError says what is wrong."""
    if options in (None, {}):
        return Subset()
    if not isinstance(options, dict):
        raise SubsetError("subset must be an object: {variables, bbox or intersects, start, "
                          "end, format}.")
    unknown = sorted(set(options) - KEYS)
    if unknown:
        raise SubsetError(f"subset has no option {', '.join(map(str, unknown))[:200]}; the "
                          f"options are {', '.join(sorted(KEYS))}.")
    fmt = options.get("format") or "netcdf4"
    if fmt not in FORMATS:
        raise SubsetError(f"format must be one of {', '.join(FORMATS)}.")
    box, shape = options.get("bbox"), options.get("intersects")
    if box is not None and shape is not None:
        raise SubsetError("Give either bbox or intersects, not both.")
    start, end = _time(options.get("start"), "start"), _time(options.get("end"), "end")
    if start and end and start > end:
        raise SubsetError(f"start ({_iso(start)}) is after end ({_iso(end)}).")
    return Subset(variables=_variables(options.get("variables")), bbox=_box(box),
                  shape=_shape(shape), start=start, end=end, format=fmt)


def _variables(value):
    if value in (None, []):
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and 0 < len(v) <= MAX_NAME
                                              for v in value):
        raise SubsetError("variables must be a list of variable names.")
    if len(value) > MAX_VARIABLES:
        raise SubsetError(f"name at most {MAX_VARIABLES} variables.")
    return tuple(dict.fromkeys(value))


def _box(value):
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or len(value) != 4:
        raise SubsetError("bbox must be [west, south, east, north].")
    try:
        box = make_bbox(*value)
    except BBoxError as exc:
        raise SubsetError(f"bbox: {exc}.") from None
    if box.south == box.north or box.west == box.east:
        raise SubsetError("bbox has no area: a line or a point selects no pixel reliably.")
    return box


def _shape(value):
    if value is None:
        return None
    try:
        shape = (shapes.parse_json_text(value) if isinstance(value, str)
                 else shapes.parse_geojson(value, "intersects"))
    except shapes.ShapeError as exc:
        raise SubsetError(str(exc)) from None
    if shape.geometry.area <= 0:
        raise SubsetError("intersects must be an area (a polygon): a point or a line selects "
                          "no pixel reliably.")
    return shape


def _time(value, what):
    if value in (None, ""):
        return None
    if not isinstance(value, str) or len(value) > 40:
        raise SubsetError(f"{what} must be an ISO 8601 date and time.")
    try:
        when = datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise SubsetError(f"{what} {value[:40]!r} is not an ISO 8601 date and time.") from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def dumps(subset):
    return json.dumps(subset.as_json())


def area_fraction(subset, granule_box):
    """The share of a granule's box the area covers (1 when no area or no box is known)."""
    area = subset.area
    if area is None or granule_box is None:
        return 1.0
    granule = BBox(*granule_box)
    if not granule.intersects(area):
        return 0.0
    lat = _overlap((granule.south, granule.north), (area.south, area.north))
    lon = sum(_overlap(g, a) for g in granule.longitude_spans() for a in area.longitude_spans())
    whole = (max(granule.north - granule.south, 1e-9)
             * max(sum(hi - lo for lo, hi in granule.longitude_spans()), 1e-9))
    share = lat * lon / whole
    if subset.shape is not None:     # the shape fills part of its own box
        own = subset.area
        box_area = (own.north - own.south) * sum(hi - lo for lo, hi in own.longitude_spans())
        share *= min(1.0, subset.shape.geometry.area / max(box_area, 1e-9))
    return min(1.0, share)


def _overlap(a, b):
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def time_fraction(subset, start, end):
    """The share of a granule's time the range keeps (1 when no range)."""
    if not (subset.start or subset.end):
        return 1.0
    lo, hi = subset.start or start, subset.end or end
    if hi < start or lo > end:
        return 0.0
    span = (end - start).total_seconds()
    if span <= 0:
        return 1.0
    return max(0.0, (min(hi, end) - max(lo, start)).total_seconds()) / span


def estimate(size, subset, kept_share, granule_box, start, end):
    """About how many bytes the output of a file of `size` bytes holds: the share of its data
    variables kept (`kept_share`), of its area and of its time, in the chosen format. An
    estimate for the cart, not a promise: compression depends on the values."""
    share = kept_share * area_fraction(subset, granule_box) * time_fraction(subset, start, end)
    if not share:
        return 0
    return int(math.ceil(size * share * FORMAT_FACTOR[subset.format])) + OUTPUT_OVERHEAD
