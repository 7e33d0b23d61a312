"""Demo granules with real bytes: small stand-ins for the products of the demo collections,
written into the provider's staging area and delivered as a bulk ingest request, so the demo
runs the whole pipeline (validation, registration, archive, metrics)."""
import math
import random
import struct
import zlib
from datetime import UTC, datetime, timedelta

from backend.catalog import checksums
from backend.catalog.geo import make_bbox
from ingest import services as ingest

DAY0 = datetime(2026, 11, 1, tzinfo=UTC)


def _swath(rng, i):
    lon = rng.uniform(-180, 180)
    lat = rng.uniform(-60, 60)
    west, east = lon, lon + 25
    if east > 180:
        east -= 360          # swaths cross the antimeridian now and then
    return make_bbox(west, lat, east, min(lat + 20, 90))


def _png(width, height, pixel):
    """A truecolour PNG of pixel(x, y) -> (r, g, b): enough of the format for a browse image."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\0" + bytes(v for x in range(width) for v in pixel(x, y))
                    for y in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def _snow_browse(rng, day):
    """A global snow cover picture (plate carrée, 2 degrees a pixel, a 30 degree grid): snow
    from the poles down to a snow line that wanders with longitude and moves south as winter
    comes."""
    waves = [(rng.uniform(1, 4), rng.uniform(0, 2 * math.pi), rng.uniform(3, 8))
             for _ in range(3)]

    def pixel(x, y):
        lon, lat = x * 2 - 179, 89 - y * 2
        line = 52 - day * 0.6 + sum(a * math.sin(k * math.radians(lon) + p) * 2
                                    for k, p, a in waves)
        north, south = lat - line, -lat - 62
        cover = max(0.0, min(1.0, max(north, south) / 12 + 0.5))
        rgb = [c0 + (255 - c0) * cover for c0 in (34, 74, 96)]
        if (x * 2) % 30 == 0 or (y * 2) % 30 == 0:      # a 30 degree grid, as map products have
            rgb = [c * 0.6 + 150 * 0.4 for c in rgb]
        return tuple(round(c) for c in rgb)

    return _png(180, 90, pixel)


def _products(short_name, rng, count):
    """(granule_id, start, end, bbox, attributes, [(name, role, size or bytes)])"""
    for i in range(count):
        day = DAY0 + timedelta(days=i // 4, hours=(i % 4) * 6)
        doy = day.timetuple().tm_yday
        if short_name == "MOD021KM":
            start = day + timedelta(minutes=5 * (i % 12))
            gid = f"MOD021KM.A{day:%Y}{doy:03d}.{start:%H%M}.061.2026{doy + 1:03d}101512"
            attrs = {"day_night": rng.choice(["Day", "Night"]),
                     "cloud_cover": rng.randint(0, 100)}
            yield gid, start, start + timedelta(minutes=5), _swath(rng, i), attrs, [
                (f"{gid}.hdf", "data", rng.randint(400, 1600) * 1024),
                (f"{gid}.hdf.met", "metadata", 6000),
            ]
        elif short_name == "MOD10C1":
            start = DAY0 + timedelta(days=i)
            gid = f"MOD10C1.A{start:%Y}{start.timetuple().tm_yday:03d}.061.2026320093000"
            yield gid, start, start + timedelta(days=1) - timedelta(seconds=1), \
                make_bbox(-180, -90, 180, 90), {"snow_cover_pct": rng.randint(5, 30)}, [
                    (f"{gid}.hdf", "data", rng.randint(800, 2000) * 1024),
                    (f"{gid}.png", "browse", _snow_browse(rng, i)),
                ]
        else:
            start = DAY0 + timedelta(days=i)
            gid = f"{start:%Y%m%d}120000-NCEI-L4_GHRSST-SSTblend-AVHRR_OI-GLOB"
            yield gid, start, start + timedelta(days=1), make_bbox(-180, -90, 180, 90), \
                {"sst_mean_k": round(rng.uniform(286, 289), 2)}, [
                    (f"{gid}.nc", "data", rng.randint(600, 1200) * 1024),
                ]


def deliver_demo_granules(provider, collection, count, seed=0):
    """Write demo files into the provider's staging area and submit them as one bulk ingest
    request; returns the new request, or None when it was submitted before (same body)."""
    rng = random.Random(f"{collection.key}-{seed}")
    area = ingest.staging_area(provider)
    folder = area / "demo" / collection.key
    folder.mkdir(parents=True, exist_ok=True)
    granules = []
    for gid, start, end, box, attrs, files in _products(collection.short_name, rng, count):
        if collection.granules.filter(granule_id=gid).exists():
            continue
        specs = []
        for name, role, content in files:
            path = folder / name
            # A size stands for random bytes; browse images come as their real bytes.
            data = content if isinstance(content, bytes) else rng.randbytes(content)
            path.write_bytes(data)
            size = len(data)
            digest, _ = checksums.of_file("MD5", path)
            specs.append({"name": name, "path": str(path.relative_to(area)), "role": role,
                          "size": size, "checksum_type": "MD5", "checksum": digest})
        granules.append({"collection": collection.key, "granule_id": gid,
                         "temporal": {"start": start.isoformat(), "end": end.isoformat()},
                         "bbox": box.as_list(), "attributes": attrs, "files": specs})
    if not granules:
        return None
    request, created = ingest.submit(provider, granules, label=f"demo {collection.key}")
    return request if created else None
