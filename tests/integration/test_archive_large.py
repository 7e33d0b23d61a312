"""A single file over 4 GiB archived and recalled byte-exact (seed 001's UniTree wrapped such
files at 2 GB). Slow: run with `pytest -m slow`."""
import filecmp
import hashlib

import pytest

from backend.archive import services
from backend.archive.models import CacheEntry, FileCopy
from backend.catalog.models import File, Granule
from tests.archive_fixtures import archived_collection, small_layout
from tests.factories import GranuleFactory

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SIZE = (4 << 30) + (3 << 20) + 17     # past 4 GiB, not a multiple of any block size


def test_file_over_4_gib_round_trips_byte_exact(data_root, settings):
    settings.GRANARY_CACHE_BYTES = 64 << 30
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    media = {"name": "big-media", "rate_mb_s": 400, "mount_s_min": 1, "mount_s_max": 2,
             "unmount_s": 1, "position_s_per_gb": 0.1, "capacity_bytes": 12 << 30}
    primary, backup, _ = small_layout(media=media, drives_per_silo=1, volumes_per_silo=1)
    collection = archived_collection([primary, backup])

    source = data_root / "staging" / "huge.nc"
    digest = hashlib.sha256()
    with open(source, "wb") as out:
        remaining, block = SIZE, bytes(range(256)) * 4096
        counter = 0
        while remaining:
            chunk = (counter.to_bytes(8, "big") + block)[: min(len(block) + 8, remaining)]
            digest.update(chunk)
            out.write(chunk)
            remaining -= len(chunk)
            counter += 1
    granule = GranuleFactory(collection=collection, state=Granule.State.REGISTERED,
                             total_size=SIZE)
    f = File.objects.create(granule=granule, name="huge.nc", size=SIZE, checksum_type="SHA256",
                            checksum=digest.hexdigest())

    assert services.archive_granule(granule, {f.pk: source}).admitted
    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED
    copies = FileCopy.objects.filter(file=f, state="verified")
    assert sorted((c.copy_number, c.length) for c in copies) == [(1, SIZE), (2, SIZE)]

    CacheEntry.objects.filter(file=f).delete()
    services.cache_path(f).unlink()
    assert not services.make_available([f])[0].ready
    services.run_until_idle()
    assert services.make_available([f])[0].ready
    assert filecmp.cmp(source, services.cache_path(f), shallow=False)
