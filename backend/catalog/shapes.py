"""Search and footprint geometry on the lon/lat plane, antimeridian included. No Django.

Granary has no PostGIS (plain PostgreSQL here, SQLite embedded), so geometry is searched in
two steps: the granule's bounding box columns, which the catalog indexes, pick candidates
(`Shape.boxes`, a crossing box where a shape crosses 180°), then shapely tests the real
footprint of each candidate against the real shape (`Shape.intersects_many`). Footprints are
stored as GeoJSON text, already split at the antimeridian (RFC 7946 §3.1.9), so the exact test
is a plain planar one.

How input is read (`edges`): GeoJSON and WKT are PLANAR, as RFC 7946 §3.1.1 and every STAC
client mean them: an edge is straight in lon/lat, so one from lon -170 to 170 runs 340° across
the middle. A shape across the antimeridian arrives cut at 180 (a MultiPolygon) or with
longitudes past 180 (170 -> 190; up to ±360 accepted), and is split at 180 here. Outlines that
are points on the sphere (an ECS .met G-ring, UMM-G GPolygons) are read with edges=SPHERE: each
edge takes the shorter way round (lon 170 -> -170 crosses 180°, 20° wide), an edge from -180 to
180 (both on the antimeridian) spans the globe, and a ring that goes once round a pole is closed
over that pole.
"""
import json
import math
from dataclasses import dataclass

import shapely
from shapely.geometry import (
    GeometryCollection,
    LineString,
    MultiLineString,
    MultiPoint,
    MultiPolygon,
    Point,
    Polygon,
    box,
)

from .geo import BBox

MAX_VERTICES = 2000
PLANAR, SPHERE = "planar", "sphere"
MAX_BOXES = 16
SUPPORTED = ("Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon",
             "GeometryCollection")
_SNAP = 1e-9


class ShapeError(ValueError):
    """A geometry that cannot be searched with, with a sentence for the user."""


@dataclass(frozen=True, eq=False)
class Shape:
    """A search or footprint geometry: `geometry` inside [-180, 180] x [-90, 90] (split at the
    antimeridian), `boxes` the index boxes whose union covers it (west > east crosses 180°)."""

    geometry: object
    boxes: tuple
    # the geometry is exactly its boxes (a bbox search): a footprint inside one of them meets
    # it without being read (shape_search.exact_matches)
    is_box: bool = False

    def geojson(self):
        return to_geojson(self.geometry)

    def bbox(self):
        """One box covering the whole shape (crossing 180° when that is the tighter one)."""
        return _merge_boxes(self.boxes)

    def intersects_many(self, footprints):
        """For each footprint geometry (None: no footprint), whether it meets this shape."""
        shapely.prepare(self.geometry)
        return [f is not None and bool(self.geometry.intersects(f)) for f in footprints]

    @property
    def vertices(self):
        return shapely.get_num_coordinates(self.geometry)


# ----------------------------------------------------------------------------- input

def parse_json_text(text, what="intersects"):
    """A Shape from GeoJSON text (a query parameter)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} must be a GeoJSON geometry in JSON") from None
    return parse_geojson(value, what)


def parse_geojson(value, what="intersects", *, limit=MAX_VERTICES, edges=PLANAR):
    """A Shape from a GeoJSON geometry object, checked: types, positions, closed and simple
    rings, at most `limit` vertices; `edges` says how to read them (see the module). Raises
    ShapeError saying what is wrong."""
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise ShapeError(f"{what} must be a GeoJSON geometry object with a 'type'")
    count = _count_positions(value, what)
    if count > limit:
        raise ShapeError(f"{what} has {count} vertices; the limit is {limit} (simplify the "
                         "shape, or upload it to /api/v1/shapes/, which simplifies it)")
    if edges not in (PLANAR, SPHERE):
        raise ValueError(f"edges must be {PLANAR!r} or {SPHERE!r}")
    parts, boxes = _read(value, what, edges == SPHERE)
    return _shape(parts, boxes)


def from_wkt(text, what="footprint"):
    """A Shape from WKT (e.g. ACDD geospatial_bounds): planar, as OGC Simple Features are."""
    try:
        geometry = shapely.from_wkt(str(text))
    except shapely.errors.ShapelyError as exc:
        raise ShapeError(f"{what} is not WKT: {exc}") from None
    if geometry is None or geometry.is_empty:
        raise ShapeError(f"{what} is an empty geometry")
    return parse_geojson(mapping_lists(geometry), what)


def mapping_lists(geometry):
    """GeoJSON of a shapely geometry with lists, not tuples (what the parser expects)."""
    return json.loads(shapely.to_geojson(geometry))


def from_box(west, south, east, north):
    """The footprint Shape of a box (west > east crosses 180°): a Polygon, a line or a point
    where it has no width or height."""
    spans = BBox(west, south, east, north).longitude_spans()
    parts = []
    for lo, hi in spans:
        if lo == hi and south == north:
            parts.append(Point(lo, south))
        elif lo == hi or south == north:
            parts.append(LineString([(lo, south), (hi, north)]))
        else:
            parts.append(box(lo, south, hi, north))
    geometry = parts[0] if len(parts) == 1 else shapely.union_all(parts)
    return Shape(geometry, (BBox(west, south, east, north),), is_box=True)


def from_stored(text):
    """A stored footprint (normalised GeoJSON text) as a shapely geometry; None for none."""
    if not text:
        return None
    return shapely.from_geojson(text)


def load_footprints(rows):
    """Geometries of (footprint text, west, south, east, north) rows: the stored footprint, or
    the box when a row has none (rows written before footprints were kept)."""
    texts = [r[0] or None for r in rows]
    out = list(shapely.from_geojson(texts)) if any(texts) else [None] * len(texts)
    # boxes with an area that do not cross 180° made in one call (a search over granules kept
    # without footprints built a hundred a page, one by one); the others as from_box does
    plain = [i for i, (text, west, south, east, north) in enumerate(rows)
             if not text and None not in (west, south, east, north)
             and west < east and south < north]
    if plain:
        corners = [[rows[i][k] for i in plain] for k in range(1, 5)]
        for i, geometry in zip(plain, shapely.box(*corners), strict=True):
            out[i] = geometry
    for i, row in enumerate(rows):
        if out[i] is None and None not in row[1:5]:
            out[i] = from_box(*row[1:5]).geometry
    return out


def to_geojson(geometry):
    return json.loads(shapely.to_geojson(geometry)) if geometry is not None else None


def to_text(shape):
    """A Shape as the GeoJSON text stored for it."""
    return shapely.to_geojson(shape.geometry)


# ------------------------------------------------------------------------- internals

_DEPTH = {"Point": 0, "MultiPoint": 1, "LineString": 1, "MultiLineString": 2, "Polygon": 2,
          "MultiPolygon": 3}


def _count_positions(value, what, nested=False):
    kind = value.get("type")
    if kind == "GeometryCollection":
        if nested:
            raise ShapeError(f"{what}: a GeometryCollection inside another is not supported")
        members = value.get("geometries")
        if not isinstance(members, list) or not members:
            raise ShapeError(f"{what}: a GeometryCollection needs a non-empty 'geometries'")
        if not all(isinstance(m, dict) for m in members):
            raise ShapeError(f"{what}: each member of a GeometryCollection must be a geometry")
        return sum(_count_positions(m, what, nested=True) for m in members)
    if kind not in _DEPTH:
        raise ShapeError(f"{what}: unknown geometry type '{kind}'; use one of "
                         + ", ".join(SUPPORTED))
    level = [value.get("coordinates")]
    for _ in range(_DEPTH[kind]):
        if not all(isinstance(p, list) and p for p in level):
            raise ShapeError(f"{what}: the coordinates of this {kind} are malformed")
        level = [inner for p in level for inner in p]
    for position in level:
        _position(position, kind, what)
    return len(level)


def _position(value, kind, what):
    if not (isinstance(value, list) and 2 <= len(value) <= 3
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)):
        raise ShapeError(f"{what}: the coordinates of this {kind} are malformed (each position "
                         "is [longitude, latitude])")
    lon, lat = value[0], value[1]
    if not (math.isfinite(lon) and math.isfinite(lat)):
        raise ShapeError(f"{what}: coordinates must be finite numbers")
    if not -90 <= lat <= 90:
        raise ShapeError(f"{what}: latitude {lat:g} is outside -90..90")
    if not -360 <= lon <= 360:
        raise ShapeError(f"{what}: longitude {lon:g} is outside -360..360")
    return float(lon), float(lat)


def _read(value, what, sphere):
    """(parts in continuous longitude, their index boxes) of a checked geometry object."""
    kind, coords = value["type"], value.get("coordinates")
    if kind == "GeometryCollection":
        parts, boxes = [], []
        for member in value["geometries"]:
            p, b = _read(member, what, sphere)
            parts += p
            boxes += b
        return parts, boxes
    if kind == "Point":
        return _points([coords])
    if kind == "MultiPoint":
        return _points(coords)
    if kind == "LineString":
        return _lines([coords], what, sphere)
    if kind == "MultiLineString":
        return _lines(coords, what, sphere)
    if kind == "Polygon":
        return _polygons([coords], what, sphere)
    return _polygons(coords, what, sphere)


def _points(positions):
    parts, boxes = [], []
    for lon, lat in (p[:2] for p in positions):
        lon = _wrap(lon)
        for x in (lon, -lon) if abs(lon) == 180 else (lon,):  # 180 is -180 too
            parts.append(Point(x, lat))
            boxes.append(BBox(x, lat, x, lat))
    return parts, boxes


def _lines(lines, what, sphere):
    parts, boxes = [], []
    for line in lines:
        if len(line) < 2:
            raise ShapeError(f"{what}: a LineString needs at least two positions")
        unwrapped, _ = _unwrap([p[:2] for p in line], sphere)
        geometry = LineString(unwrapped)
        parts.append(geometry)
        boxes.append(_box_of(geometry))
    return parts, boxes


def _polygons(polygons, what, sphere):
    parts, boxes = [], []
    for rings in polygons:
        shell = _close_over_pole(*_ring(rings[0], what, "outer", sphere), what)
        holes = [_ring(r, what, "inner", sphere)[0] for r in rings[1:]]
        if sphere:
            holes = [_near(hole, shell) for hole in holes]
        polygon = Polygon(shell, holes)
        reason = shapely.is_valid_reason(polygon)
        if reason != "Valid Geometry":
            raise ShapeError(f"{what}: the polygon is not valid: {reason} (rings must not "
                             "cross themselves or each other)")
        parts.append(polygon)
        boxes.append(_box_of(polygon))
    return parts, boxes


def _ring(positions, what, which, sphere):
    if len(positions) < 4:
        raise ShapeError(f"{what}: a polygon's {which} ring needs at least four positions "
                         "(the first repeated last)")
    if positions[0][:2] != positions[-1][:2]:
        raise ShapeError(f"{what}: a polygon's {which} ring is not closed: its last position "
                         "must equal its first")
    return _unwrap([p[:2] for p in positions], sphere)


def _unwrap(positions, sphere):
    """Positions as floats; on the sphere with longitudes made continuous, each edge taking the
    shorter way round (see the module). Returns the positions and the whole turns the last one
    is off the first's frame (always 0 on the plane)."""
    if not sphere:
        return [(float(lon), float(lat)) for lon, lat in positions], 0
    out, turns = [(float(positions[0][0]), float(positions[0][1]))], 0
    previous = positions[0][0]
    for lon, lat in positions[1:]:
        step = lon - previous
        if abs(step) > 180 and not (abs(lon) == 180 and abs(previous) == 180):
            turns -= 1 if step > 0 else -1
        out.append((lon + 360 * turns, float(lat)))
        previous = lon
    return out, turns


def _close_over_pole(ring, turns, what):
    """A ring that ends a turn from where it began went round a pole: close it over that pole
    (the one on the side of its mean latitude)."""
    if turns == 0:
        return ring
    if abs(turns) != 1:
        raise ShapeError(f"{what}: a ring winds round a pole more than once")
    pole = math.copysign(90.0, sum(lat for _, lat in ring))
    return [*ring, (ring[-1][0], pole), (ring[0][0], pole), ring[0]]


def _near(hole, shell):
    """A hole shifted by whole turns to lie over its shell."""
    middle = (min(x for x, _ in shell) + max(x for x, _ in shell)) / 2
    turns = round((middle - hole[0][0]) / 360)
    return [(x + 360 * turns, y) for x, y in hole]


def _wrap(lon):
    """A longitude into -180..180 (180 stays 180)."""
    if -180 <= lon <= 180:
        return lon
    return (lon + 180) % 360 - 180


def _box_of(geometry):
    """The index box of one unwrapped part (crossing 180° when it does)."""
    minx, miny, maxx, maxy = geometry.bounds
    if maxx - minx >= 360:
        return BBox(-180.0, miny, 180.0, maxy)
    turns = math.floor((minx + 180) / 360)
    west, east = minx - 360 * turns, maxx - 360 * turns
    if west == 180:
        west, east = -180.0, east - 360
    if east > 180:
        east -= 360
    return BBox(west, miny, east, maxy)


def _merge_boxes(boxes):
    """One box covering `boxes`: the shortest longitude arc holding them all."""
    south, north = min(b.south for b in boxes), max(b.north for b in boxes)
    covered = []
    for b in boxes:
        covered += b.longitude_spans()
    covered.sort()
    merged = []
    for lo, hi in covered:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    if len(merged) == 1:
        return BBox(merged[0][0], south, merged[0][1], north)
    # the largest gap between covered arcs (the one through 180° included) is left out
    gaps = [(merged[i + 1][0] - merged[i][1], i) for i in range(len(merged) - 1)]
    gaps.append((merged[0][0] + 360 - merged[-1][1], len(merged) - 1))
    _, i = max(gaps)
    if i == len(merged) - 1:
        return BBox(merged[0][0], south, merged[-1][1], north)
    return BBox(merged[i + 1][0], south, merged[i][1], north)


def _split(geometry):
    """An unwrapped geometry cut into the turns of the globe it covers and moved into
    -180..180 (RFC 7946 §3.1.9)."""
    minx, _, maxx, _ = geometry.bounds
    if -180 <= minx and maxx <= 180:
        return geometry
    pieces = []
    for turn in range(math.floor((minx + 180) / 360), math.ceil((maxx - 180) / 360) + 1):
        window = box(-180.0 + 360 * turn, -90.0, 180.0 + 360 * turn, 90.0)
        piece = geometry.intersection(window)
        if not piece.is_empty:
            pieces.append(shapely.transform(piece, lambda xy, t=turn: _snapped(xy, t)))
    return shapely.union_all(pieces)


def _snapped(xy, turn):
    xy = xy.copy()
    xy[:, 0] -= 360 * turn
    for edge in (-180.0, 180.0):
        xy[abs(xy[:, 0] - edge) < _SNAP, 0] = edge
    return xy


def _shape(parts, boxes):
    pieces = [_split(p) for p in parts]
    geometry = pieces[0] if len(pieces) == 1 else shapely.union_all(pieces)
    geometry = _simple_type(geometry)
    if len(boxes) > MAX_BOXES:
        boxes = [_merge_boxes(boxes)]
    return Shape(geometry, tuple(boxes))


def _simple_type(geometry):
    """GeometryCollections of one kind as the matching Multi type (what GeoJSON readers draw)."""
    if not isinstance(geometry, GeometryCollection) or isinstance(
            geometry, MultiPoint | MultiLineString | MultiPolygon):
        return geometry
    kinds = {g.geom_type for g in geometry.geoms}
    if kinds <= {"Polygon", "MultiPolygon"}:
        return MultiPolygon([p for g in geometry.geoms for p in getattr(g, "geoms", [g])])
    return geometry

