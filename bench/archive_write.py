"""archive-write: files through the RAID cache to two verified tape copies, against dd.

The same bytes are first copied once with dd on the same disk; archiving writes each byte
twice (primary and backup), so the reference is dd's bandwidth / 2.
"""
import hashlib
import time
from datetime import UTC, datetime, timedelta

from django.conf import settings

NAME = "archive-write"
HELP = "files through the cache to two verified copies, against dd of the same bytes"


def add_arguments(parser):
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--size-mib", type=int, default=256)


def run(options):
    from backend.archive import operations, services
    from backend.archive.models import FileCopy, Volume
    from backend.catalog.geo import make_bbox
    from backend.catalog.models import Collection, Granule
    from backend.catalog.services import register_granule

    from .baseline import dd_copy, process_bytes_written, write_random_file

    n, size = options["files"], options["size_mib"] << 20
    staging = settings.STAGING_ROOT / "bench"
    staging.mkdir(parents=True, exist_ok=True)
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_CACHE_BYTES = max(settings.GRANARY_CACHE_BYTES, 4 * n * size)

    media = {"name": "bench-media", "rate_mb_s": 400, "mount_s_min": 10, "mount_s_max": 20,
             "unmount_s": 15, "position_s_per_gb": 0.3, "capacity_bytes": 10**13}
    primary, backup = operations.install_layout(drives_per_silo=2, volumes_per_silo=2,
                                                model=media)
    collection = Collection.objects.create(short_name="BENCHW", version="1", title="bench")
    operations.set_policy(collection, [primary, backup])

    paths, digests = [], []
    for i in range(n):
        path = staging / f"bench-{i:05d}.dat"
        h = hashlib.sha256()
        write_random_file(path, size, h)
        paths.append(path)
        digests.append(h.hexdigest())

    dd_s = dd_copy(paths, str(settings.DATA_ROOT / "dd-baseline"))

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    granules = []
    for i, (path, digest) in enumerate(zip(paths, digests, strict=True)):
        granules.append((register_granule(
            collection, f"BENCH-{i:05d}", start=t0 + timedelta(hours=i),
            end=t0 + timedelta(hours=i, minutes=5), bbox=make_bbox(-10, -10, 10, 10),
            files=[{"name": path.name, "size": size, "checksum_type": "SHA256",
                    "checksum": digest}]), path))
    volume_bytes_before = sum(Volume.objects.values_list("end_of_data", flat=True))
    io_before = process_bytes_written()

    started = time.perf_counter()
    for granule, path in granules:
        services.archive_granule(granule, {granule.files.get().pk: path})
    services.run_until_idle(parallel=True)
    archive_s = time.perf_counter() - started

    io_after = process_bytes_written()
    archived = Granule.objects.filter(collection=collection, state=Granule.State.ARCHIVED).count()
    verified = FileCopy.objects.filter(file__granule__collection=collection,
                                       state=FileCopy.State.VERIFIED).count()
    if archived != n or verified != 2 * n:
        raise RuntimeError(f"only {archived}/{n} granules archived, {verified} verified copies")
    total = n * size
    volume_bytes = sum(Volume.objects.values_list("end_of_data", flat=True)) - volume_bytes_before
    dd_mb_s = total / dd_s / 1e6
    archive_mb_s = total / archive_s / 1e6
    result = {
        "files": n, "size_mib": options["size_mib"], "bytes_archived": total,
        "checksum": "SHA256", "verify_from_disk": settings.GRANARY_VERIFY_FROM_DISK,
        "dd_s": round(dd_s, 3), "dd_mb_s": round(dd_mb_s, 1),
        "archive_s": round(archive_s, 3), "archive_mb_s": round(archive_mb_s, 1),
        "ratio_to_dd_half": round(archive_mb_s / (dd_mb_s / 2), 3),
        "bytes_written_per_byte": round(volume_bytes / total, 4),
        "process_write_bytes_per_byte": (round((io_after - io_before) / total, 4)
                                         if io_before is not None else None),
        "goals": {"ratio_to_dd_half": ">= 0.90", "bytes_written_per_byte": "<= 2.05"},
    }
    result["table"] = [
        ("bytes archived (2 verified copies each)", f"{total / 2**20:.0f} MiB in {n} files"),
        ("dd, same bytes, same disk", f"{dd_mb_s:.1f} MB/s"),
        ("archive (cache -> 2 copies, read back)", f"{archive_mb_s:.1f} MB/s"),
        ("ratio to dd / 2 (goal >= 0.90)", f"{result['ratio_to_dd_half']:.3f}"),
        ("volume bytes written per byte (goal <= 2.05)", f"{result['bytes_written_per_byte']}"),
        ("process bytes written per byte", f"{result['process_write_bytes_per_byte']}"),
    ]
    return result
