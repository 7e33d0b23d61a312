"""Synthetic catalog content shaped like a DAAC's, for the search and subscription benchmarks.

Pure Python (seeded, no Django): orbit swaths of a few minutes whose footprints follow a
drifting ground track (so some cross the antimeridian, and those near a pole span every
longitude), daily tiles and 16-day composites on a grid, all spread over years, with the
attributes users filter on (day/night, cloud cover) and two files each.
"""
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

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


def swath_bbox(minutes, half_height, phase_deg=0.0):
    """Footprint of a swath granule starting `minutes` after EPOCH: a box around the
    sub-satellite point, wider towards the poles, every longitude where it reaches one."""
    phase = minutes / ORBIT_MIN
    lat = 81.0 * math.sin(2 * math.pi * phase)
    lon = wrap_longitude(phase_deg + 360.0 * phase * 0.07 - 360.0 * minutes / SIDEREAL_DAY_MIN)
    south, north = max(-90.0, lat - half_height), min(90.0, lat + half_height)
    if north >= 85.0 or south <= -85.0:
        return (-180.0, round(south, 4), 180.0, round(north, 4))
    half_width = min(60.0, 1.5 * half_height / max(0.2, math.cos(math.radians(lat))))
    west, east = wrap_longitude(lon - half_width), wrap_longitude(lon + half_width)
    return (round(west, 4), round(south, 4), round(east, 4), round(north, 4))


def _md5(rng):
    return f"{rng.getrandbits(128):032x}"


def share(n, index, products=PRODUCTS):
    """How many of `n` granules the product at `index` has."""
    return n // len(products) + (1 if index < n % len(products) else 0)


def granules(n, years=5.0, seed=1, products=PRODUCTS):
    """`n` granules shared evenly by `products`, each product spread over `years` from EPOCH,
    yielded product by product in time order."""
    for index in range(len(products)):
        yield from product_granules(n, years, seed, index, products)


def product_granules(n, years, seed, index, products=PRODUCTS):
    """The granules of the product at `index` among `n` (share(n, index) of them). Each product
    draws from its own seeded generator, so products can be made apart (in parallel) and
    still be the same."""
    rng = random.Random(seed * 1009 + index)
    span = years * 365.25 * 1440
    product, count = products[index], share(n, index, products)
    if product.kind == "swath":
        yield from _swaths(rng, index, product, count, span)
    else:
        yield from _tiles(rng, index, product, count, span)


def _granule(rng, index, product, seq, start, minutes, bbox, attributes):
    start = start.replace(microsecond=0)
    gid = f"{product.short_name}.A{start:%Y%j.%H%M}.{seq:07d}"
    size = rng.randrange(20 << 20, 200 << 20)
    files = ((gid + product.data_suffix, "data", size, _md5(rng)),
             (gid + product.extra_suffix, product.extra_role, rng.randrange(4000, 90000),
              _md5(rng)))
    return SyntheticGranule(index, gid, start, start + timedelta(minutes=minutes), bbox,
                            attributes, files)


def _swaths(rng, index, product, count, span):
    cadence = span / max(1, count)
    minutes = min(product.minutes, cadence)
    phase = 37.0 * index
    for i in range(count):
        t = i * cadence
        bbox = swath_bbox(t, product.size, phase)
        lat = (bbox[1] + bbox[3]) / 2
        day = math.cos(2 * math.pi * (t / 1440.0) + math.radians(lat)) > 0
        attributes = {"day_night": "Day" if day else "Night",
                      "cloud_cover": round(rng.random() * 100, 1), "orbit": int(t / ORBIT_MIN)}
        yield _granule(rng, index, product, i, EPOCH + timedelta(minutes=t), minutes, bbox,
                       attributes)


def _tiles(rng, index, product, count, span):
    edge = product.size
    cells = [(x, y) for x in range(int(360 / edge)) for y in range(int(180 / edge))
             if -60 <= 90 - (y + 1) * edge and 90 - y * edge <= 80]
    periods = max(1, int(span // product.minutes))
    per_period = math.ceil(count / periods)
    made = 0
    for p in range(periods):
        start = EPOCH + timedelta(minutes=p * product.minutes)
        k = min(per_period, count - made)
        chosen = rng.sample(cells, k) if k <= len(cells) else rng.choices(cells, k=k)
        for x, y in sorted(chosen):
            west, north = -180.0 + x * edge, 90.0 - y * edge
            attributes = {"tile": f"h{x:02d}v{y:02d}", "cloud_cover": round(rng.random() * 100, 1)}
            yield _granule(rng, index, product, made, start, product.minutes,
                           (west, north - edge, west + edge, north), attributes)
            made += 1
        if made >= count:
            return
