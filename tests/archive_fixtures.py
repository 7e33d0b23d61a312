"""Building blocks for archive tests: a small two-silo layout and granules with real bytes."""
import hashlib
import os

from backend.archive import operations
from backend.archive.models import ArchiveRequest, DriveModel
from backend.catalog.models import File
from tests.factories import CollectionFactory, GranuleFactory

SMALL_MEDIA = {"name": "test-media", "rate_mb_s": 100, "mount_s_min": 1, "mount_s_max": 2,
               "unmount_s": 1, "position_s_per_gb": 1, "capacity_bytes": 64 << 20}


def small_layout(volumes_per_silo=4, drives_per_silo=2, media=None):
    primary, backup = operations.install_layout(
        drives_per_silo=drives_per_silo, volumes_per_silo=volumes_per_silo,
        model=media or SMALL_MEDIA)
    return primary, backup, DriveModel.objects.get(name=(media or SMALL_MEDIA)["name"])


def archived_collection(groups, **kwargs):
    collection = CollectionFactory(**kwargs)
    operations.set_policy(collection, groups)
    return collection


def staged_granule(collection, staging, sizes=(1000,), checksum_type="MD5", **kwargs):
    """A registered granule whose files exist in `staging`; returns (granule, {file pk: path})."""
    from backend.catalog.models import Granule

    granule = GranuleFactory(collection=collection, state=Granule.State.REGISTERED, **kwargs)
    sources = {}
    for i, size in enumerate(sizes):
        data = os.urandom(size)
        path = staging / f"{granule.granule_id}.{i}.dat"
        path.write_bytes(data)
        digest = {"MD5": hashlib.md5, "SHA256": hashlib.sha256}[checksum_type](data).hexdigest()
        f = File.objects.create(granule=granule, name=path.name, size=size,
                                checksum_type=checksum_type, checksum=digest)
        sources[f.pk] = path
    granule.total_size = sum(sizes)
    granule.save(update_fields=["total_size"])
    return granule, sources


def queued(kind=ArchiveRequest.Kind.MIGRATE, **filters):
    return list(ArchiveRequest.objects.filter(kind=kind, state=ArchiveRequest.State.QUEUED,
                                              **filters).order_by("pk"))


def archive_granules(collection, staging, sizes):
    """Archive one single-file granule per size to the end (every copy written and verified);
    returns {file id: MD5 of its original bytes}, hashed here with hashlib."""
    from backend.archive import services

    originals = {}
    for size in sizes:
        granule, sources = staged_granule(collection, staging, sizes=(size,))
        originals.update({pk: hashlib.md5(path.read_bytes()).hexdigest()
                          for pk, path in sources.items()})
        assert services.archive_granule(granule, sources).admitted
    services.run_until_idle()
    return originals


def movers_without_waits(settings, cache_bytes=1 << 30):
    """Settings for tests that run the movers to the end: a roomy cache and a scheduler that
    never holds work back to batch it (no write, read or remount waits)."""
    settings.GRANARY_CACHE_BYTES = cache_bytes
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0


def object_tier_rows(buckets, now, seed=7):
    """Object copies and object work in known numbers, for the board's and /metrics' figures
    (rows only, no bytes moved), beside tape rows the figures must leave out. Returns the
    (copies, requests) made."""
    import random
    from datetime import timedelta

    from backend.archive.models import FileCopy, Volume
    from backend.archive.services.queueing import WAITING_FOR_CACHE

    Req = ArchiveRequest
    rng = random.Random(seed)
    granule = GranuleFactory()
    made = iter(File(granule=granule, name=f"object-tier-{n}.dat", size=100, checksum_type="MD5",
                     checksum="0" * 32) for n in range(10_000))

    def new_file():
        f = next(made)
        f.save()
        return f

    copies, requests = [], []
    volume = Volume.objects.order_by("pk").first()
    for bucket in [*buckets, None]:
        if bucket is None and volume is None:
            continue
        for state in ["verified"] * rng.randint(1, 4) + ["bad", "written", "released"]:
            copies.append(FileCopy(
                file=new_file(), copy_number=1, bucket=bucket, key=f"k{len(copies)}",
                volume=None if bucket else volume,
                length=rng.randint(1, 10_000), checksum_type="MD5", checksum="0" * 32,
                state=state))
        for kind in (Req.Kind.MIGRATE, Req.Kind.RECALL):
            shapes = (
                [(Req.State.QUEUED, "", None)] * rng.randint(0, 3)
                + [(Req.State.RUNNING, "", None)] * rng.randint(0, 2)
                + [(Req.State.DONE, "", now - timedelta(minutes=rng.randint(1, 59)))]
                * rng.randint(0, 4)
                + [(Req.State.DONE, "", now - timedelta(minutes=61 + rng.randint(0, 500)))]
                * rng.randint(1, 3)
                + [(Req.State.FAILED, f"no such bucket ({kind})",
                    now - timedelta(minutes=rng.randint(1, 300)))] * rng.randint(0, 2)
                + [(Req.State.QUEUED, "the store is unreachable", None)] * rng.randint(0, 2)
                + [(Req.State.QUEUED, WAITING_FOR_CACHE if kind == Req.Kind.MIGRATE
                    else "waiting for cache space", None)]
                + [(Req.State.CANCELLED, "cancelled by an operator", now)])
            for state, error, finished in shapes:
                size = rng.randint(1, 1 << 20)
                requests.append(Req(
                    kind=kind, state=state, priority=Req.Priority.MIGRATION, file=new_file(),
                    copy_number=1, bucket=bucket, bytes_total=size,
                    bytes_done=size if state == Req.State.DONE else 0, error=error,
                    started_at=now - timedelta(hours=9) if state != Req.State.QUEUED else None,
                    finished_at=finished))
    FileCopy.objects.bulk_create(copies)
    Req.objects.bulk_create(requests)
    return copies, requests
