"""The storage manager: drives pull work through the scheduler, from admission to ARCHIVED."""
import pytest

from backend.archive import services
from backend.archive.models import ArchiveRequest, CacheEntry, Drive, FileCopy, Volume
from backend.catalog import checksums
from backend.catalog.models import Granule
from tests.archive_fixtures import archived_collection, small_layout, staged_granule

pytestmark = pytest.mark.django_db


@pytest.fixture
def archive(data_root, settings):
    settings.GRANARY_CACHE_BYTES = 1 << 30
    settings.GRANARY_WRITE_MAX_WAIT_S = 0
    settings.GRANARY_READ_MAX_WAIT_S = 0
    settings.GRANARY_REMOUNT_DELAY_S = 0
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    return collection, data_root


def test_granules_reach_archived_with_one_mount_per_group(archive):
    collection, root = archive
    granules = [staged_granule(collection, root / "staging", sizes=(20000, 3000))
                for _ in range(5)]
    for granule, sources in granules:
        assert services.archive_granule(granule, sources).admitted
    services.run_until_idle()
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 5
    assert FileCopy.objects.filter(state="verified").count() == 20
    # write aggregation: all ten files of a group went to one volume in one mount
    used = Volume.objects.filter(mount_count__gt=0)
    assert sorted(v.mount_count for v in used) == [1, 1]
    assert {v.group.name for v in used} == {"primary", "backup"}
    assert not ArchiveRequest.objects.exclude(state="done").exists()
    # the drives dismount once their write queue is empty
    assert not Drive.objects.filter(mounted_volume__isnull=False).exists()


def test_recall_from_tape_only(archive):
    collection, root = archive
    granule, sources = staged_granule(collection, root / "staging", sizes=(7 << 20,))
    services.archive_granule(granule, sources)
    services.run_until_idle()
    f = granule.files.get()
    CacheEntry.objects.filter(file=f).delete()
    services.cache_path(f).unlink()
    sources[f.pk].unlink()

    [wait] = services.make_available([f])
    assert not wait.ready and wait.eta_s > 0
    services.run_until_idle()
    assert services.make_available([f])[0].ready
    with services.open_verified(f) as handle:
        assert checksums.of_bytes("MD5", handle.read()) == f.checksum
    assert ArchiveRequest.objects.get(kind="recall").state == "done"


def test_many_recalls_on_one_volume_share_a_mount_in_position_order(archive):
    collection, root = archive
    granules = [staged_granule(collection, root / "staging", sizes=(100000,))[0:2]
                for _ in range(6)]
    for granule, sources in granules:
        services.archive_granule(granule, sources)
    services.run_until_idle()
    files = [g.files.get() for g, _ in granules]
    CacheEntry.objects.all().delete()
    mounts_before = sum(Volume.objects.values_list("mount_count", flat=True))
    services.make_available(list(reversed(files)))
    services.run_until_idle()
    assert sum(Volume.objects.values_list("mount_count", flat=True)) == mounts_before + 1
    recalls = ArchiveRequest.objects.filter(kind="recall").order_by("finished_at", "pk")
    assert all(r.state == "done" for r in recalls)
    positions = [FileCopy.objects.filter(file=r.file, volume__mount_count__gt=1)
                 .values_list("position", flat=True).first() for r in recalls]
    assert positions == sorted(positions)


def test_offline_drive_gets_no_work(archive):
    collection, root = archive
    Drive.objects.filter(silo__name="silo1").update(state=Drive.State.OFFLINE)
    granule, sources = staged_granule(collection, root / "staging", sizes=(10,))
    services.archive_granule(granule, sources)
    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVING
    assert ArchiveRequest.objects.get(copy_number=1).state == "queued"
    Drive.objects.filter(silo__name="silo1").update(state=Drive.State.IDLE)
    services.run_until_idle()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED
