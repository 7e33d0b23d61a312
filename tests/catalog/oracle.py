"""An independent oracle for antimeridian searches: shapes drawn in a frame where longitude runs
0..360 (so a shape around 180° is one plain polygon there), tested with shapely in that frame,
and written for the API in -180..180 (so their rings jump from 170 to -170)."""
import random

from shapely.geometry import LineString, Point, Polygon, box, shape


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


def geojson(geometry):
    """GeoJSON for the API of a frame geometry (Point, LineString or Polygon)."""
    if isinstance(geometry, Point):
        return {"type": "Point", "coordinates": to_api([geometry.x, geometry.y])}
    if isinstance(geometry, LineString):
        return {"type": "LineString", "coordinates": to_api([list(c) for c in geometry.coords])}
    ring = [list(c) for c in geometry.exterior.coords]
    return {"type": "Polygon", "coordinates": [to_api(ring)]}


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
