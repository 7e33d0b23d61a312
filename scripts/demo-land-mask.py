"""Remake demo/land-mask.png, the land/sea mask the demo's data fields are drawn on.

Natural Earth's 1:110m land (public domain) as the web app's map already ships it (npm package
world-atlas, TopoJSON), rasterised with Pillow to a 1-bit picture of 0.5 degree cells, north up,
west edge at -180: white is land. Run it from the repository root after `npm install`:

    .venv/bin/python scripts/demo-land-mask.py
"""
import json
from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "node_modules" / "world-atlas" / "land-110m.json"
TARGET = ROOT / "demo" / "land-mask.png"
CELLS_PER_DEGREE = 2


def arcs_of(topology):
    """The topology's arcs as lists of (lon, lat), undoing its quantised delta encoding."""
    (kx, ky), (dx, dy) = topology["transform"]["scale"], topology["transform"]["translate"]
    out = []
    for arc in topology["arcs"]:
        x = y = 0
        points = []
        for qx, qy in arc:
            x, y = x + qx, y + qy
            points.append((x * kx + dx, y * ky + dy))
        out.append(points)
    return out


def ring(arcs, indexes):
    """A closed ring from arc indexes (a negative index ~i is arc i reversed)."""
    points = []
    for index in indexes:
        arc = arcs[index] if index >= 0 else arcs[~index][::-1]
        points.extend(arc if not points else arc[1:])
    return points


def unwrapped(points):
    """A ring with its longitudes made continuous (d3's TopoJSON crosses the antimeridian in
    place), closed over the pole when it goes round the globe (Antarctica)."""
    out = [points[0]]
    for lon, lat in points[1:]:
        previous = out[-1][0]
        lon += 360 * round((previous - lon) / 360)
        out.append((lon, lat))
    turns = out[-1][0] - out[0][0]
    if abs(turns) > 180:
        pole = -90 if sum(lat for _, lat in out) < 0 else 90
        out += [(out[-1][0], pole), (out[0][0], pole)]
    return out


def main():
    topology = json.loads(SOURCE.read_text())
    arcs = arcs_of(topology)
    width, height = 360 * CELLS_PER_DEGREE, 180 * CELLS_PER_DEGREE
    picture = Image.new("1", (width, height), 0)
    draw = ImageDraw.Draw(picture)
    for geometry in topology["objects"]["land"]["geometries"]:
        polygons = geometry["arcs"] if geometry["type"] == "MultiPolygon" else [geometry["arcs"]]
        for polygon in polygons:
            for number, indexes in enumerate(polygon):
                points = unwrapped(ring(arcs, indexes))
                for shift in (-360, 0, 360):    # a ring past either edge shows on the other
                    xy = [((lon + shift + 180) * CELLS_PER_DEGREE, (90 - lat) * CELLS_PER_DEGREE)
                          for lon, lat in points]
                    draw.polygon(xy, fill=1 if number == 0 else 0)  # the first ring: the shell
    picture.save(TARGET, optimize=True)
    print(f"{TARGET}: {width}x{height}, {TARGET.stat().st_size} bytes")


if __name__ == "__main__":
    main()
