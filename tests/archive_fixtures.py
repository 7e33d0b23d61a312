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
