"""An independent oracle for antimeridian searches: shapes drawn in a frame where longitude runs
0..360 (so a shape around 180° is one plain polygon there), tested with shapely in that frame,
and written for the API as RFC 7946 reads them (planar): with longitudes past 180 as in the
frame, or cut at 180 into a Multi* inside -180..180 (§3.1.9)."""
import json
import random

import shapely
from shapely.geometry import Point, Polygon, box, shape


def to_api(coords):
    """Positions from the 0..360 frame to GeoJSON longitudes (-180..180)."""
    if isinstance(coords[0], int | float):
        lon, lat = coords
        return [lon - 360 if lon > 180 else lon, lat]
    return [to_api(c) for c in coords]


def polygon(rng, lon_range=(140, 220), lat_range=(-60, 60), size=(1, 25)):
    """A random simple polygon (a star-shaped one around a centre) in the 0..360 frame."""
    import math

    cx, cy = rng.uniform(*lon_range), rng.uniform(*lat_range)
    n = rng.randrange(3, 9)
    angles = sorted(rng.uniform(0, 2 * math.pi) for _ in range(n))
    ring = [(round(cx + rng.uniform(*size) * math.cos(a), 3),
             round(max(-89, min(89, cy + rng.uniform(*size) * math.sin(a) / 2)), 3))
            for a in angles]
    geometry = Polygon(ring)
    if not geometry.is_valid or geometry.area == 0:
        return polygon(rng, lon_range, lat_range, size)
    return geometry


def geojson(geometry, cut=False):
    """GeoJSON for the API of a frame geometry (Point, LineString or Polygon): as it is in the
    frame (longitudes up to 360), or `cut` at 180 with the eastern part moved back a turn."""
    if isinstance(geometry, Point):
        return {"type": "Point", "coordinates": to_api([geometry.x, geometry.y])}
    if cut:
        west = geometry.intersection(box(-180, -90, 180, 90))
        east = shapely.affinity.translate(geometry.intersection(box(180, -90, 540, 90)), -360)
        kind = geometry.geom_type
        parts = [g for piece in (west, east) for g in getattr(piece, "geoms", [piece])
                 if g.geom_type == kind and not g.is_empty]
        many = shapely.MultiPolygon(parts) if kind == "Polygon" else shapely.MultiLineString(parts)
        return json.loads(shapely.to_geojson(many if len(parts) > 1 else parts[0]))
    return json.loads(shapely.to_geojson(geometry))


def frame_box(west, south, east, north):
    """A -180..180 box (west > east crossing 180°) in the 0..360 frame."""
    if west < 0:
        west += 360
    if east <= 0 and east < west:
        east += 360
    return box(west, south, east, north)


WORLD = box(0, -90, 360, 90)


def seeded(seed):
    return random.Random(seed)


__all__ = ["WORLD", "frame_box", "geojson", "polygon", "seeded", "shape", "to_api"]
