"""Demo granules with real bytes: small stand-ins for the products of the demo collections,
delivered into staging and handed to the archive exactly as ingest does."""
import random
from datetime import UTC, datetime, timedelta

from backend.catalog import checksums
from backend.catalog.geo import make_bbox

from . import services

DAY0 = datetime(2026, 11, 1, tzinfo=UTC)


def _swath(rng, i):
    lon = rng.uniform(-180, 180)
    lat = rng.uniform(-60, 60)
    west, east = lon, lon + 25
    if east > 180:
        east -= 360          # swaths cross the antimeridian now and then
    return make_bbox(west, lat, east, min(lat + 20, 90))


def _products(short_name, rng, count):
    """(granule_id, start, end, bbox, attributes, [file specs without bytes])"""
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
                    (f"{gid}.jpg", "browse", 40 * 1024),
                ]
        else:
            start = DAY0 + timedelta(days=i)
            gid = f"{start:%Y%m%d}120000-NCEI-L4_GHRSST-SSTblend-AVHRR_OI-GLOB"
            yield gid, start, start + timedelta(days=1), make_bbox(-180, -90, 180, 90), \
                {"sst_mean_k": round(rng.uniform(286, 289), 2)}, [
                    (f"{gid}.nc", "data", rng.randint(600, 1200) * 1024),
                ]


def deliver_demo_granules(collection, staging_dir, count, seed=0):
    """Write demo files into staging, register their granules, and hand them to the archive."""
    from backend.archive import services as archive

    rng = random.Random(f"{collection.key}-{seed}")
    made = 0
    for gid, start, end, box, attrs, files in _products(collection.short_name, rng, count):
        if collection.granules.filter(granule_id=gid).exists():
            continue
        folder = staging_dir / collection.key
        folder.mkdir(parents=True, exist_ok=True)
        specs, paths = [], {}
        for name, role, size in files:
            path = folder / name
            path.write_bytes(rng.randbytes(size))
            digest, _ = checksums.of_file("MD5", path)
            specs.append({"name": name, "role": role, "size": size, "checksum_type": "MD5",
                          "checksum": digest})
            paths[name] = path
        granule = services.register_granule(collection, gid, start=start, end=end, bbox=box,
                                             attributes=attrs, files=specs)
        archive.archive_granule(granule, {f.pk: paths[f.name] for f in granule.files.all()})
        made += 1
    return made
