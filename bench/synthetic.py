"""Synthetic catalog content shaped like a DAAC's, for the search and subscription benchmarks.

Seeded, no Django: orbit swaths of a few minutes whose footprints follow a drifting ground
track (so some cross the antimeridian, and those near a pole span every longitude), daily
tiles and 16-day composites on a grid, all spread over years, with the attributes users filter
on (day/night, cloud cover) and two files each. A product's granules are made as numpy
columns (product_columns: ten million in seconds, which the bench loader COPYs as they are);
granules() turns them into objects for smaller uses. A file's MD5 is that of its name, so the
loader can write it in SQL and still agree with the objects.
"""
import hashlib
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

EPOCH = datetime(2019, 1, 1, tzinfo=UTC)
ORBIT_MIN = 98.88          # a sun-synchronous polar orbit
SIDEREAL_DAY_MIN = 1436.07


@dataclass(frozen=True)
class Product:
    short_name: str
    kind: str                 # "swath" or "tile"
    minutes: float            # a granule's duration (a tile's period)
    size: float               # swath half-height in degrees, or the tile edge
    data_suffix: str
    extra_suffix: str
    extra_role: str


PRODUCTS = (
    Product("BMOD021KM", "swath", 5, 10.0, ".hdf", ".hdf.xml", "metadata"),
    Product("BMYD06L2", "swath", 5, 10.0, ".hdf", ".hdf.xml", "metadata"),
    Product("BAIRS2RET", "swath", 6, 12.0, ".nc", ".nc.xml", "metadata"),
    Product("BMOD11A1", "tile", 1440, 10.0, ".h5", ".jpg", "browse"),
    Product("BMOD13A2", "tile", 16 * 1440, 5.0, ".h5", ".jpg", "browse"),
)


@dataclass(frozen=True)
class SyntheticGranule:
    product: int                # index into the products
    granule_id: str
    start: datetime
    end: datetime
    bbox: tuple                 # (west, south, east, north); west > east crosses 180
    attributes: dict
    files: tuple                # ((name, role, size, md5 hex), ...)


def wrap_longitude(lon):
    return (lon + 180.0) % 360.0 - 180.0


def area_of_interest(rng, widths, heights, lats, near_antimeridian):
    """A box a user might draw: width and height log-uniform within `widths` and `heights`
    (degrees), inside the latitudes `lats`, centred near 180 with the given probability (so
    then it often crosses the antimeridian)."""
    width = math.exp(rng.uniform(*(math.log(w) for w in widths)))
    height = math.exp(rng.uniform(*(math.log(h) for h in heights)))
    lon = rng.uniform(165, 195) if rng.random() < near_antimeridian else rng.uniform(-180, 180)
    lat = rng.uniform(lats[0] + height / 2, lats[1] - height / 2)
    return (round(wrap_longitude(lon - width / 2), 3), round(lat - height / 2, 3),
            round(wrap_longitude(lon + width / 2), 3), round(lat + height / 2, 3))


def swath_boxes(minutes, half_height, phase_deg=0.0):
    """Footprints (west, south, east, north arrays) of swath granules starting `minutes` (an
    array) after EPOCH: a box around the sub-satellite point, wider towards the poles, every
    longitude where it reaches one."""
    phase = minutes / ORBIT_MIN
    lat = 81.0 * np.sin(2 * np.pi * phase)
    lon = wrap_longitude(phase_deg + 360.0 * phase * 0.07 - 360.0 * minutes / SIDEREAL_DAY_MIN)
    south, north = np.maximum(-90.0, lat - half_height), np.minimum(90.0, lat + half_height)
    half_width = np.minimum(60.0, 1.5 * half_height / np.maximum(0.2, np.cos(np.radians(lat))))
    west, east = wrap_longitude(lon - half_width), wrap_longitude(lon + half_width)
    polar = (north >= 85.0) | (south <= -85.0)
    return (np.where(polar, -180.0, west.round(4)), south.round(4),
            np.where(polar, 180.0, east.round(4)), north.round(4))


def share(n, index, products=PRODUCTS):
    """How many of `n` granules the product at `index` has."""
    return n // len(products) + (1 if index < n % len(products) else 0)


@dataclass
class Columns:
    """One product's granules, column by column (times in whole seconds or microseconds
    after EPOCH; `flag` is 1 for a day swath, 0 for night, -1 for a tile; `number` is a
    swath's orbit or a tile's x * 100 + y)."""

    product: int
    seq: np.ndarray
    start_s: np.ndarray
    end_us: np.ndarray
    west: np.ndarray
    south: np.ndarray
    east: np.ndarray
    north: np.ndarray
    cloud: np.ndarray
    flag: np.ndarray
    number: np.ndarray
    data_size: np.ndarray
    extra_size: np.ndarray


def product_columns(n, years, seed, index, products=PRODUCTS):
    """The granules of the product at `index` among `n` (share(n, index) of them), in time
    order, from a generator of their own (products can be made apart and stay the same)."""
    rng = np.random.default_rng([seed, index])
    span = years * 365.25 * 1440
    product, count = products[index], share(n, index, products)
    if product.kind == "swath":
        cadence = span / max(1, count)
        minutes = min(product.minutes, cadence)
        t = np.arange(count) * cadence
        box = swath_boxes(t, product.size, 37.0 * index)
        lat = (box[1] + box[3]) / 2
        flag = (np.cos(2 * np.pi * (t / 1440.0) + np.radians(lat)) > 0).astype(np.int64)
        number = (t / ORBIT_MIN).astype(np.int64)
        lengths = np.full(count, minutes)
    else:
        t, box, number = _tile_columns(rng, product, count, span)
        flag, lengths = np.full(count, -1), np.full(count, product.minutes)
    start_s = np.floor(t * 60).astype(np.int64)
    end_us = start_s * 1_000_000 + np.round(lengths * 60e6).astype(np.int64)
    return Columns(index, np.arange(count), start_s, end_us, *box,
                   np.round(rng.random(count) * 100, 1), flag, number,
                   rng.integers(20 << 20, 200 << 20, count), rng.integers(4000, 90000, count))


def _tile_columns(rng, product, count, span):
    """(start minutes, box, x * 100 + y) of `count` tiles: each period a sample of the grid's
    cells (with repeats when it has more tiles than cells), in cell order."""
    edge = product.size
    cells = np.array([(x, y) for x in range(int(360 / edge)) for y in range(int(180 / edge))
                      if -60 <= 90 - (y + 1) * edge and 90 - y * edge <= 80])
    periods = max(1, int(span // product.minutes))
    per_period = math.ceil(count / periods)
    starts, chosen = [], []
    for p in range(periods):
        k = min(per_period, count - p * per_period)
        if k <= 0:
            break
        picked = (rng.choice(len(cells), k, replace=False) if k <= len(cells)
                  else rng.integers(0, len(cells), k))
        chosen.append(np.sort(picked))
        starts.append(np.full(k, p * product.minutes))
    xy = cells[np.concatenate(chosen)]
    west, north = -180.0 + xy[:, 0] * edge, 90.0 - xy[:, 1] * edge
    return (np.concatenate(starts).astype(float), (west, north - edge, west + edge, north),
            xy[:, 0] * 100 + xy[:, 1])


def granule_id(product, seq, start):
    return f"{product.short_name}.A{start:%Y%j.%H%M}.{seq:07d}"


def file_md5(name):
    return hashlib.md5(name.encode()).hexdigest()


def product_granules(n, years, seed, index, products=PRODUCTS):
    """The granules of product_columns as objects."""
    product, c = products[index], product_columns(n, years, seed, index, products)
    for i in range(len(c.seq)):
        start = EPOCH + timedelta(seconds=int(c.start_s[i]))
        gid = granule_id(product, int(c.seq[i]), start)
        if c.flag[i] < 0:
            x, y = divmod(int(c.number[i]), 100)
            attributes = {"tile": f"h{x:02d}v{y:02d}", "cloud_cover": float(c.cloud[i])}
        else:
            attributes = {"day_night": "Day" if c.flag[i] else "Night",
                          "cloud_cover": float(c.cloud[i]), "orbit": int(c.number[i])}
        files = tuple((name, role, int(size), file_md5(name)) for name, role, size in (
            (gid + product.data_suffix, "data", c.data_size[i]),
            (gid + product.extra_suffix, product.extra_role, c.extra_size[i])))
        yield SyntheticGranule(
            index, gid, start, EPOCH + timedelta(microseconds=int(c.end_us[i])),
            tuple(float(v[i]) for v in (c.west, c.south, c.east, c.north)), attributes, files)


def granules(n, years=5.0, seed=1, products=PRODUCTS):
    """`n` granules shared evenly by `products`, each product spread over `years` from EPOCH,
    yielded product by product in time order."""
    for index in range(len(products)):
        yield from product_granules(n, years, seed, index, products)
