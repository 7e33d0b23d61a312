"""The movers on real files: verified copies, spanning, crashes, faults, bad media, purge."""
import subprocess

import pytest
from django.db.models import Sum

from backend.archive import services, tape
from backend.archive.models import ArchiveRequest, CacheEntry, Drive, FileCopy, Volume
from backend.archive.services import (
    cache,
    completeness,
    drives,
    manager,
    paths,
    queueing,
    reading,
    writing,
)
from backend.archive.signals import granule_archived
from backend.catalog import checksums
from backend.catalog.models import Granule
from tests.archive_fixtures import archived_collection, queued, small_layout, staged_granule

pytestmark = pytest.mark.django_db

Req = ArchiveRequest


@pytest.fixture
def layout(data_root, settings):
    settings.GRANARY_CACHE_BYTES = 1 << 30
    primary, backup, media = small_layout()
    collection = archived_collection([primary, backup], short_name="MOD021KM", version="061")
    return primary, backup, collection, data_root


def drive_in(silo_name, n=1):
    return Drive.objects.select_related("model", "silo").get(name=f"{silo_name}-d{n}")


def scratch_in(group):
    return Volume.objects.filter(silo=group.silo, state__in=["scratch", "filling"]).order_by(
        "label").first()


def migrate_group(group, drive_n=1):
    """Serve every queued migration of `group` the way a drive would: mount, write, verify."""
    drive = drive_in(group.silo.name, drive_n)
    while requests := queued(volume_group=group):
        volume = scratch_in(group)
        drives.mount(drive, volume)
        won = queueing.claim(requests, drive)
        writing.write_copies(drive, volume, won)
    return drive


def test_granule_archived_only_when_both_copies_verified(layout):
    primary, backup, collection, root = layout
    granule, sources = staged_granule(collection, root / "staging", sizes=(3000, 5 << 20))
    events = []
    granule_archived.connect(lambda sender, granule, **kw: events.append(granule.pk), weak=False)

    admission = services.archive_granule(granule, sources)
    assert admission.admitted and admission.migrations == 4
    assert CacheEntry.objects.filter(state="dirty").count() == 2
    # staging keeps its bytes: the cache copy is a hard link, not the only copy
    assert all(p.exists() for p in sources.values())

    migrate_group(primary)
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVING
    assert CacheEntry.objects.filter(state="dirty").count() == 2

    migrate_group(backup)
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED and granule.archived_at
    assert CacheEntry.objects.filter(state="clean").count() == 2
    copies = FileCopy.objects.filter(file__granule=granule, state="verified")
    assert copies.count() == 4
    assert {c.volume.silo.name for c in copies} == {"silo1", "silo2"}


def test_volume_lists_with_tar_and_rebuild_data_is_in_headers(layout):
    primary, _, collection, root = layout
    granule, sources = staged_granule(collection, root / "staging", sizes=(1234,))
    services.archive_granule(granule, sources)
    migrate_group(primary)
    copy = FileCopy.objects.get(copy_number=1)
    path = paths.volume_path(copy.volume)
    listing = subprocess.run(["tar", "tvf", path], capture_output=True, text=True, check=True)
    assert paths.member_name(copy.file) in listing.stdout
    member = next(m for m in tape.scan(path) if m.position == copy.position)
    assert member.headers["granule_id"] == granule.granule_id
    assert member.headers["collection"] == "MOD021KM.061"
    assert member.headers["checksum"] == copy.file.checksum
    assert member.headers["copy"] == "1"


def test_file_larger_than_the_room_left_spans_volumes(layout):
    primary, _, collection, root = layout
    granule, sources = staged_granule(collection, root / "staging", sizes=(100 << 20,))
    services.archive_granule(granule, sources)
    migrate_group(primary)
    segments = list(FileCopy.objects.filter(copy_number=1).order_by("segment"))
    assert len(segments) == 2
    assert segments[0].volume != segments[1].volume
    assert sum(s.length for s in segments) == 100 << 20
    assert segments[0].volume.state == Volume.State.FULL
    assert segments[1].file_offset == segments[0].length


def test_crash_mid_write_counts_no_copy_and_the_work_is_redone(layout):
    """A mover killed while writing leaves bytes on the volume but no copy in the catalog."""
    primary, _, collection, root = layout
    granule, sources = staged_granule(collection, root / "staging", sizes=(4 << 20,))
    services.archive_granule(granule, sources)
    drive = drive_in("silo1")
    volume = scratch_in(primary)
    end_before = volume.end_of_data
    drives.mount(drive, volume)
    won = queueing.claim(queued(volume_group=primary), drive)

    writer = tape.VolumeWriter(paths.volume_path(volume), volume.end_of_data)
    with open(services.cache_path(won[0].file), "rb") as src:
        writer.add("torn", src, won[0].file.size, "MD5", {})
    writer._write(bytes(writer._buffer))
    writer.abandon()   # the process dies here: no verify, no database update
    assert FileCopy.objects.count() == 0
    volume.refresh_from_db()
    assert volume.end_of_data == end_before

    manager.recover_stale_work(force=True)
    assert queued(volume_group=primary)[0].pk == won[0].pk
    migrate_group(primary)
    copy = FileCopy.objects.get(copy_number=1)
    assert copy.position == end_before
    assert "torn" not in [m.name for m in tape.scan(paths.volume_path(copy.volume))]


def test_drive_failing_writes_is_varied_off_and_work_moves(layout, settings):
    settings.GRANARY_DRIVE_ERROR_LIMIT = 2
    primary, _, collection, root = layout
    granule, sources = staged_granule(collection, root / "staging", sizes=(1000,))
    services.archive_granule(granule, sources)
    bad = drive_in("silo1", 1)
    bad.fault = {"write": 0}
    bad.save()
    volume = scratch_in(primary)
    for _ in range(2):
        drives.mount(bad, volume)
        won = queueing.claim(queued(volume_group=primary), bad)
        assert writing.write_copies(bad, volume, won) == set()
    bad.refresh_from_db()
    assert bad.state == Drive.State.OFFLINE
    assert "2 consecutive errors" in bad.offline_reason
    request = Req.objects.get(copy_number=1)
    # the drive failed, not the request: it spent no attempt and goes to a healthy drive
    assert request.state == Req.State.QUEUED and request.attempts == 0
    assert "injected write fault" in request.error
    migrate_group(primary, drive_n=2)
    assert FileCopy.objects.filter(copy_number=1, state="verified").count() == 1


def test_bad_volume_is_suspect_and_recall_uses_other_copy(layout):
    primary, backup, collection, root = layout
    granule, sources = staged_granule(collection, root / "staging", sizes=(2 << 20,))
    services.archive_granule(granule, sources)
    migrate_group(primary)
    migrate_group(backup)
    f = granule.files.get()
    CacheEntry.objects.filter(file=f).delete()
    services.cache_path(f).unlink()

    [availability] = services.make_available([f])
    assert not availability.ready and availability.request_id
    primary_volume = FileCopy.objects.get(file=f, copy_number=1).volume
    primary_volume.fault = "bad"
    primary_volume.save()

    drive = drive_in("silo1")
    drives.mount(drive, primary_volume)
    won = queueing.claim(queued(kind="recall"), drive)
    assert reading.read_copies(drive, primary_volume, won) == []
    primary_volume.refresh_from_db()
    assert primary_volume.state == Volume.State.SUSPECT
    assert [c for c, _ in completeness.recall_candidates(f)] == [2]

    backup_volume = FileCopy.objects.get(file=f, copy_number=2).volume
    drive2 = drive_in("silo2")
    drives.mount(drive2, backup_volume)
    won = queueing.claim(queued(kind="recall"), drive2)
    assert len(reading.read_copies(drive2, backup_volume, won)) == 1
    digest, size = checksums.of_file("MD5", services.cache_path(f))
    assert (digest, size) == (f.checksum, f.size)
    assert services.make_available([f])[0].ready


def test_purge_never_removes_a_file_lacking_a_verified_copy(layout, settings):
    primary, backup, collection, root = layout
    settings.GRANARY_CACHE_BYTES = 10 << 20
    archived, sources = staged_granule(collection, root / "staging", sizes=(3 << 20,))
    services.archive_granule(archived, sources)
    migrate_group(primary)
    migrate_group(backup)
    half, sources = staged_granule(collection, root / "staging", sizes=(3 << 20,))
    services.archive_granule(half, sources)
    migrate_group(primary)  # only copy 1 of 2: clean would be wrong, purge must not touch it

    cache.purge(incoming=9 << 20)
    assert not CacheEntry.objects.filter(file__granule=archived).exists()
    assert not services.cache_path(archived.files.get()).exists()
    half_entry = CacheEntry.objects.get(file__granule=half)
    assert half_entry.state == "dirty" and services.cache_path(half.files.get()).exists()


def test_full_cache_makes_admission_wait_not_fail(layout, settings):
    primary, backup, collection, root = layout
    settings.GRANARY_CACHE_BYTES = 4 << 20
    first, sources = staged_granule(collection, root / "staging", sizes=(3 << 20,))
    assert services.archive_granule(first, sources).admitted
    second, sources2 = staged_granule(collection, root / "staging", sizes=(3 << 20,))
    admission = services.archive_granule(second, sources2)
    assert not admission.admitted and "cache is full" in admission.reason
    second.refresh_from_db()
    assert second.state == Granule.State.REGISTERED
    migrate_group(primary)
    migrate_group(backup)
    assert services.archive_granule(second, sources2).admitted


def test_archive_granule_twice_queues_nothing_new(layout):
    primary, _, collection, root = layout
    granule, sources = staged_granule(collection, root / "staging", sizes=(10,))
    services.archive_granule(granule, sources)
    again = services.archive_granule(granule, sources)
    assert again.admitted and again.migrations == 0
    assert Req.objects.filter(kind="migrate").count() == 2
    assert CacheEntry.objects.aggregate(total=Sum("size"))["total"] == 10


def test_admitted_again_after_one_copy_is_written_only_the_missing_one_is_left(layout):
    """A granule admitted before (no longer REGISTERED) has its migrations and copies looked up:
    the verified copy is not queued again, the queued one not twice."""
    primary, backup, collection, root = layout
    granule, sources = staged_granule(collection, root / "staging", sizes=(10,))
    assert services.archive_granule(granule, sources).migrations == 2
    migrate_group(primary)
    again = services.archive_granule(granule, sources)
    assert again.admitted and again.migrations == 0
    assert Req.objects.filter(kind="migrate").count() == 2
    migrate_group(backup)
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVED
    assert FileCopy.objects.filter(state="verified").count() == 2


def test_damaged_cache_copy_is_never_counted(layout):
    primary, _, collection, root = layout
    granule, sources = staged_granule(collection, root / "staging", sizes=(50000,))
    services.archive_granule(granule, sources)
    f = granule.files.get()
    cached = services.cache_path(f)
    cached.unlink()                      # break the hard link, then damage the cache copy only
    data = bytearray(sources[f.pk].read_bytes())
    data[10] ^= 0xFF
    cached.write_bytes(bytes(data))
    drive = drive_in("silo1")
    volume = scratch_in(primary)
    drives.mount(drive, volume)
    assert writing.write_copies(drive, volume, queueing.claim(queued(volume_group=primary),
                                                               drive)) == set()
    assert not FileCopy.objects.exists()
    # the file's fault, not the volume's: no retry can help, so it fails with the reason (it
    # was retried without end before) and the cache keeps the only copy for an operator
    request = Req.objects.get(copy_number=1)
    assert request.state == Req.State.FAILED and request.attempts == 1
    assert "does not match its catalog checksum" in request.error
    assert CacheEntry.objects.filter(file=f).exists() and cached.exists()
    granule.refresh_from_db()
    assert granule.state == Granule.State.ARCHIVING


def test_archive_granules_takes_many_at_once_and_answers_each(
        layout, django_capture_on_commit_callbacks):
    from backend.archive.signals import granules_archived

    primary, backup, collection, root = layout
    items = [staged_granule(collection, root / "staging", sizes=(2000, 700)) for _ in range(3)]
    broken, _ = staged_granule(collection, root / "staging")
    batches = []
    granules_archived.connect(lambda sender, granules, **kw: batches.append(len(granules)),
                              weak=False)

    answers = services.archive_granules([*items, (broken, {})])
    assert [a.admitted for a in answers] == [True, True, True, False]
    assert [a.migrations for a in answers[:3]] == [4, 4, 4]
    assert "no source" in answers[3].error
    assert services.archive_granules(items[:1])[0].migrations == 0  # idempotent

    migrate_group(primary)
    assert not Granule.objects.filter(state="archived").exists()
    with django_capture_on_commit_callbacks(execute=True):
        migrate_group(backup)
    assert Granule.objects.filter(state="archived").count() == 3
    assert CacheEntry.objects.filter(state="clean").count() == 6
    assert sum(batches) == 3


@pytest.mark.parametrize("ahead", [1 << 20, 1 << 40], ids=["read-back-while-writing",
                                                          "read-back-after-the-batch"])
def test_a_copy_that_reads_back_wrong_is_not_counted_and_is_written_again(layout, monkeypatch,
                                                                        ahead):
    """A member whose bytes do not read back as the catalog checksum (here the cached file was
    damaged after it was checked) counts for nothing; the good member beside it counts."""
    monkeypatch.setattr(writing, "READ_BACK_AHEAD", ahead)
    primary, _, collection, root = layout
    good, good_sources = staged_granule(collection, root / "staging", sizes=(3 << 20,))
    bad, bad_sources = staged_granule(collection, root / "staging", sizes=(2 << 20,))
    services.archive_granule(good, good_sources)
    services.archive_granule(bad, bad_sources)
    damaged = services.cache_path(bad.files.get())
    with open(damaged, "r+b") as f:
        f.seek(1000)
        f.write(b"\xff" * 16)

    drive = drive_in("silo1")
    volume = scratch_in(primary)
    drives.mount(drive, volume)
    won = queueing.claim(queued(volume_group=primary), drive)
    assert writing.write_copies(drive, volume, won) == {
        r.pk for r in won if r.file.granule_id == good.pk}

    assert FileCopy.objects.filter(file__granule=good, state="verified").count() == 1
    assert not FileCopy.objects.filter(file__granule=bad).exists()
    failed = Req.objects.get(file__granule=bad, copy_number=1)
    assert failed.state == Req.State.FAILED and "catalog checksum" in failed.error

    # the volume's end moved only past the member the catalog keeps, and a tar reader lists
    # exactly the catalog's copies
    kept = FileCopy.objects.get(file__granule=good)
    volume.refresh_from_db()
    assert volume.end_of_data == kept.data_offset + kept.length + (-kept.length) % 512
    listed = subprocess.run(["tar", "tf", str(paths.volume_path(volume))], check=True,
                            capture_output=True, text=True).stdout.split()
    assert [n for n in listed if n != tape.LABEL_NAME] == [paths.member_name(good.files.get())]

    # nothing runs again by itself: an idle archive writes nothing more on the volume
    services.run_until_idle()
    volume.refresh_from_db()
    assert volume.end_of_data == kept.data_offset + kept.length + (-kept.length) % 512


def test_a_file_kept_after_the_purge_chose_it_stays(layout, settings, monkeypatch):
    """An order keeps a file (its refresh) between the purge's look and its delete: the row
    lock decides, and the keep wins (issue #17: ready files were purged under orders)."""
    from datetime import timedelta

    from django.utils import timezone

    from backend.archive import cache_policy

    primary, backup, collection, root = layout
    settings.GRANARY_CACHE_BYTES = 10 << 20
    granule, sources = staged_granule(collection, root / "staging", sizes=(3 << 20,))
    services.archive_granule(granule, sources)
    migrate_group(primary)
    migrate_group(backup)
    f = granule.files.get()
    assert CacheEntry.objects.get(file=f).state == "clean"
    choose = cache_policy.choose_victims

    def chosen_then_kept(entries, need, now):
        victims = choose(entries, need, now)
        CacheEntry.objects.filter(file=f).update(keep_until=timezone.now() + timedelta(days=7))
        return victims

    monkeypatch.setattr(cache_policy, "choose_victims", chosen_then_kept)
    assert cache.purge(incoming=9 << 20) == 0
    assert CacheEntry.objects.filter(file=f).exists() and services.cache_path(f).exists()
