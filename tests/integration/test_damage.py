"""Damage, as an operator meets it: flipped bytes on tape, suspect and truncated volumes, faulty
drives, racing repairs. Each case keeps every file readable with the bytes it was ingested with
(checked with hashlib against the originals) and never fails work that is not at fault."""
import hashlib
import os

import pytest

from backend.archive import operations, services, tape
from backend.archive.models import ArchiveRequest, CacheEntry, Drive, FileCopy, Volume
from backend.archive.services import background, cache, manager, paths
from backend.archive.services.completeness import file_copies_complete
from backend.archive.services.policy import ArchiveError
from backend.archive.services.queueing import WAITING_FOR_CACHE
from backend.catalog.models import Granule
from backend.errors import Conflict
from tests import tape_fixtures
from tests.archive_fixtures import (
    archived_collection,
    movers_without_waits,
    small_layout,
    staged_granule,
)
from tests.tape_fixtures import BOTH

pytestmark = pytest.mark.django_db

Req = ArchiveRequest


@pytest.fixture
def archive(data_root, settings, tape_kind):
    movers_without_waits(settings)
    primary, backup, _ = small_layout(drives_per_silo=4)
    collection = archived_collection([primary, backup])
    originals = {}

    def ingest(count, size=200_000):
        granules = []
        for _ in range(count):
            granule, sources = staged_granule(collection, data_root / "staging", sizes=(size,))
            for pk, path in sources.items():
                originals[pk] = hashlib.md5(path.read_bytes()).hexdigest()
            services.archive_granule(granule, sources)
            granules.append(granule)
        services.run_until_idle()
        return granules

    return ingest, originals, primary, backup


def flip_byte(volume, offset):
    """Spoil one byte of a volume on its medium (the tar file, or the tgt cartridge's file)."""
    tape_fixtures.flip_byte(volume, offset)


def evict(granules):
    for g in granules:
        for f in g.files.all():
            CacheEntry.objects.filter(file=f).delete()
            services.cache_path(f).unlink(missing_ok=True)


def copy_bytes_md5(copy):
    """MD5 of a copy's bytes read from its medium without archive code."""
    data = tape_fixtures.volume_bytes(copy.volume)
    return hashlib.md5(data[copy.data_offset:copy.data_offset + copy.length]).hexdigest()


def cached_md5(f):
    return hashlib.md5(services.cache_path(f).read_bytes()).hexdigest()


def recall(granules):
    for g in granules:
        services.make_available(list(g.files.all()))
    services.run_until_idle()


@BOTH
def test_one_bad_member_condemns_only_itself_and_its_copy_is_written_again(archive):
    ingest, originals, _, _ = archive
    granules = ingest(3)
    damaged = granules[0].files.get()
    copy1 = FileCopy.objects.get(file=damaged, copy_number=1)
    flip_byte(copy1.volume, copy1.data_offset + 100)
    evict(granules)

    recall(granules)

    volume = Volume.objects.get(pk=copy1.volume_id)
    assert volume.state != Volume.State.SUSPECT          # one bad member, not a bad volume
    for g in granules:                                    # every file came back, bytes intact
        f = g.files.get()
        assert cached_md5(f) == originals[f.pk]
    # the other members of that volume are still counted and read
    neighbours = FileCopy.objects.filter(volume=volume, state="verified").exclude(file=damaged)
    assert neighbours.exists()
    assert all(copy_bytes_md5(c) == originals[c.file_id] for c in neighbours)
    # the bad copy was replaced by a good one, on tape, and the old member released
    new = FileCopy.objects.get(file=damaged, copy_number=1, state="verified")
    assert new.pk != copy1.pk and copy_bytes_md5(new) == originals[damaged.pk]
    assert FileCopy.objects.get(pk=copy1.pk).state == FileCopy.State.RELEASED
    assert file_copies_complete(damaged)
    volume.refresh_from_db()
    live = FileCopy.objects.filter(volume=volume, state="verified")
    assert volume.live_bytes == sum(c.length for c in live)
    assert volume.file_count == live.count()


def test_copies_on_a_suspect_volume_do_not_count_and_the_last_readable_copy_stays(archive):
    ingest, originals, _, _ = archive
    [granule] = ingest(1)
    f = granule.files.get()
    copy1 = FileCopy.objects.get(file=f, copy_number=1)
    Volume.objects.filter(pk=copy1.volume_id).update(state=Volume.State.SUSPECT)

    assert not file_copies_complete(f)
    with pytest.raises(ArchiveError, match="unverified"):
        cache.release(f)
    assert cache.purge(incoming=2 << 30) == 0             # purge keeps it as well
    assert services.cache_path(f).exists()

    services.run_until_idle()                             # repair writes copy 1 elsewhere
    new = FileCopy.objects.get(file=f, copy_number=1, state="verified",
                               volume__state__in=["filling", "full"])
    assert new.volume_id != copy1.volume_id and copy_bytes_md5(new) == originals[f.pk]
    assert file_copies_complete(f)
    assert not FileCopy.objects.filter(file=f, copy_number=1).exclude(pk=new.pk).exclude(
        state="released").exists()
    assert cache.release(f) == f.size


def test_a_suspect_volume_is_emptied_by_a_repack_and_returns_to_scratch(archive):
    ingest, originals, _, _ = archive
    granules = ingest(2)
    volume = FileCopy.objects.get(file=granules[0].files.get(), copy_number=1).volume
    Volume.objects.filter(pk=volume.pk).update(state=Volume.State.SUSPECT)
    evict(granules)                                       # the repack must recall from copy 2

    repack = operations.start_repack(volume)
    services.run_until_idle()

    repack.refresh_from_db()
    volume.refresh_from_db()
    assert repack.state == Req.State.DONE and volume.state == Volume.State.SCRATCH
    for g in granules:
        f = g.files.get()
        copy = FileCopy.objects.get(file=f, copy_number=1, state="verified")
        assert copy.volume_id != volume.pk and copy_bytes_md5(copy) == originals[f.pk]


def test_a_recall_with_no_readable_copy_fails_with_its_reason_instead_of_waiting(archive):
    ingest, _, _, _ = archive
    [granule] = ingest(1)
    f = granule.files.get()
    for copy in FileCopy.objects.filter(file=f):
        flip_byte(copy.volume, copy.data_offset + 7)
    evict([granule])

    [availability] = services.make_available([f])
    services.run_until_idle()

    request = Req.objects.get(pk=availability.request_id)
    assert request.state == Req.State.FAILED
    assert "no readable copy" in request.error
    assert not FileCopy.objects.filter(file=f, state="verified").exists()


@BOTH
def test_drive_errors_are_charged_to_the_drives_and_healthy_drives_do_the_work(archive):
    ingest, originals, primary, _ = archive
    faulty = list(Drive.objects.filter(silo=primary.silo).order_by("name")[:2])
    for drive in faulty:
        drive.fault = {"write": 0}
        drive.save()

    granules = ingest(12, size=50_000)

    assert not Req.objects.filter(state=Req.State.FAILED).exists()
    assert Granule.objects.filter(pk__in=[g.pk for g in granules],
                                  state=Granule.State.ARCHIVED).count() == 12
    assert not Req.objects.filter(kind="migrate").exclude(attempts=0).exists()
    for drive in faulty:
        drive.refresh_from_db()
        assert drive.state == Drive.State.OFFLINE
    assert not CacheEntry.objects.filter(state="dirty").exists()
    for copy in FileCopy.objects.filter(state="verified"):
        assert copy_bytes_md5(copy) == originals[copy.file_id]


def test_a_truncated_volume_is_never_appended_to_and_its_lost_copies_are_written_again(archive):
    ingest, originals, primary, _ = archive
    first = ingest(3, size=300_000)
    copies = list(FileCopy.objects.filter(file__granule__in=first, copy_number=1)
                  .order_by("position"))
    volume = copies[0].volume
    assert {c.volume_id for c in copies} == {volume.pk}
    cut_at = copies[1].data_offset + 1000                 # inside the second member
    path = paths.volume_path(volume)
    os.truncate(path, cut_at)

    more = ingest(2, size=300_000)                        # the next writes to the group

    volume.refresh_from_db()
    assert os.path.getsize(path) == cut_at                # not zero-filled, not appended to
    assert volume.state == Volume.State.FULL
    assert FileCopy.objects.get(pk=copies[0].pk).state == FileCopy.State.VERIFIED
    for lost in copies[1:]:
        assert FileCopy.objects.get(pk=lost.pk).state == FileCopy.State.RELEASED
    for g in first + more:                                # every copy 1 readable, right bytes
        f = g.files.get()
        copy = FileCopy.objects.get(file=f, copy_number=1, state="verified")
        assert copy_bytes_md5(copy) == originals[f.pk]
        assert file_copies_complete(f)
    assert [m.name for m in tape.scan(path) if not m.is_label] == [
        paths.member_name(copies[0].file)]


def test_two_repairs_racing_queue_one_copy_once(archive, monkeypatch):
    """The duplicate migrations seen with repacks and drive vary: two processes each found no
    pending rewrite and both queued one. The database now refuses the second."""
    ingest, _, _, _ = archive
    [granule] = ingest(1)
    f = granule.files.get()
    FileCopy.objects.filter(file=f, copy_number=1).update(state=FileCopy.State.BAD)
    monkeypatch.setattr(background, "_pending", lambda *args, **kwargs: False)  # stale reads

    background.advance_background()
    background.advance_background()

    assert Req.objects.filter(file=f, kind="migrate", copy_number=1,
                              state__in=["queued", "running"]).count() == 1


def test_a_full_volume_repack_completes_while_drives_are_varied(archive):
    ingest, originals, primary, _ = archive
    granules = ingest(30, size=2 << 20)                   # 60 MiB on 64 MiB media: one fills
    volume = (Volume.objects.filter(group=primary, state="full").first()
              or Volume.objects.filter(group=primary).order_by("-live_bytes").first())
    drives = list(Drive.objects.filter(silo=primary.silo).order_by("name"))
    repack = operations.start_repack(volume)

    for step in range(200):
        off = drives[step % len(drives)]
        operations.vary_drive(off, online=False, reason="maintenance")
        background.advance_background()
        for drive in drives:
            if drive != off:
                services.manager.run_drive(drive.pk, max_steps=3)
        operations.vary_drive(off, online=True)
        repack.refresh_from_db()
        if repack.state == Req.State.DONE:
            break

    volume.refresh_from_db()
    assert repack.state == Req.State.DONE and volume.state == Volume.State.SCRATCH
    assert not Req.objects.filter(state=Req.State.FAILED).exists()
    for g in granules:
        f = g.files.get()
        [copy] = FileCopy.objects.filter(file=f, copy_number=1, state="verified")
        assert copy.volume_id != volume.pk and copy_bytes_md5(copy) == originals[f.pk]


def test_a_repack_refuses_scratch_but_takes_a_suspect_volume(archive):
    ingest, _, primary, _ = archive
    ingest(1)
    scratch = Volume.objects.filter(silo=primary.silo, state="scratch").first()
    with pytest.raises(Conflict, match="suspect"):
        operations.start_repack(scratch)


def test_rebuild_catalog_skips_a_leftover_member_of_a_copy_that_lives_elsewhere(archive):
    """A write that never counted (a mover killed after its bytes, a copy written again
    elsewhere) leaves a member past the end of data; rebuilding the catalog from the volumes
    used to crash on it with an IntegrityError."""
    ingest, originals, _, _ = archive
    [granule] = ingest(1)
    f = granule.files.get()
    copy = FileCopy.objects.get(file=f, copy_number=1)
    volume = copy.volume
    path = paths.volume_path(volume)
    members = {m.position: m for m in tape.scan(path)}
    headers = members[copy.position].headers
    writer = tape.VolumeWriter(path, volume.end_of_data)
    with open(services.cache_path(f), "rb") as source:
        writer.add(paths.member_name(f), source, f.size, None, headers)
    writer.close()
    before = list(FileCopy.objects.values_list("pk", "state").order_by("pk"))

    counts = operations.rebuild_catalog()

    assert counts["duplicate"] == 1
    assert list(FileCopy.objects.values_list("pk", "state").order_by("pk")) == before
    assert copy_bytes_md5(FileCopy.objects.get(pk=copy.pk)) == originals[f.pk]


def test_a_spanning_copy_with_one_bad_segment_is_replaced_whole_and_counted_once(
        data_root, settings, monkeypatch):
    """Found by the stateful test: a copy spanning volumes had one bad segment; its repair wrote
    the whole file again but left the good old segments live, so the copy counted twice."""
    from backend.archive.services import manager, writing

    monkeypatch.setattr(writing, "SPAN_MIN", 64 << 10)
    monkeypatch.setattr(manager, "SPAN_MIN", 64 << 10)
    movers_without_waits(settings)
    media = {"name": "tiny-media", "rate_mb_s": 100, "mount_s_min": 1, "mount_s_max": 2,
             "unmount_s": 1, "position_s_per_gb": 1, "capacity_bytes": 4 << 20}
    primary, backup, _ = small_layout(volumes_per_silo=8, media=media)
    collection = archived_collection([primary, backup])
    originals = {}
    for _ in range(3):
        granule, sources = staged_granule(collection, data_root / "staging", sizes=(5 << 20,))
        originals.update({pk: hashlib.md5(p.read_bytes()).hexdigest()
                          for pk, p in sources.items()})
        services.archive_granule(granule, sources)
    services.run_until_idle()
    spanning = FileCopy.objects.filter(copy_number=1, segment__gt=0).first()
    f = spanning.file
    assert FileCopy.objects.filter(file=f, copy_number=1).count() > 1
    flip_byte(spanning.volume, spanning.data_offset + 10)
    operations.start_audit(spanning.volume)
    services.run_until_idle()

    live = list(FileCopy.objects.filter(file=f, copy_number=1).exclude(state="released"))
    assert all(c.state == "verified" for c in live)
    assert sum(c.length for c in live) == f.size
    digest = hashlib.md5()
    for c in sorted(live, key=lambda c: c.file_offset):
        with open(paths.volume_path(c.volume), "rb") as volume:
            volume.seek(c.data_offset)
            digest.update(volume.read(c.length))
    assert digest.hexdigest() == originals[f.pk]
    for volume in Volume.objects.all():
        verified = FileCopy.objects.filter(volume=volume, state="verified")
        assert volume.live_bytes == sum(c.length for c in verified)


def test_a_copy_written_again_after_its_repacked_segment_went_bad_takes_a_free_number(archive):
    """Found by the stateful test: a copy moved by a repack (segment 1 on its new volume) went
    bad; its repair counted the copy's recorded segments (1) and took number 1 again, which
    the bad segment still held, so recording the new copy failed with an IntegrityError."""
    ingest, originals, primary, _ = archive
    [granule] = ingest(1)
    f = granule.files.get()
    operations.start_repack(FileCopy.objects.get(file=f, copy_number=1).volume)
    services.run_until_idle()
    moved = FileCopy.objects.get(file=f, copy_number=1, state="verified")
    assert moved.segment == 1
    os.unlink(paths.volume_path(moved.volume))
    operations.start_audit(moved.volume)

    services.run_until_idle()

    [copy] = FileCopy.objects.filter(file=f, copy_number=1, state="verified")
    assert copy.pk != moved.pk and copy_bytes_md5(copy) == originals[f.pk]


def test_a_file_being_written_again_stays_in_the_cache_until_its_copy_is_written(archive):
    """Found by the chaos run: the purge dropped files a repack had just recalled, before their
    new copies were written; the movers then recalled them again and again, or crashed on the
    missing file and failed whole batches."""
    ingest, originals, _, _ = archive
    granules = ingest(3)
    volume = FileCopy.objects.get(file=granules[0].files.get(), copy_number=1).volume
    operations.start_repack(volume)
    background.advance_background()                      # the rewrites are queued
    assert Req.objects.filter(kind="migrate", state="queued").count() == 3

    assert cache.purge(incoming=2 << 30) == 0             # nothing being rewritten is purged
    f = granules[0].files.get()
    with pytest.raises(ArchiveError, match="being written to tape again"):
        cache.release(f)
    services.run_until_idle()
    assert Req.objects.filter(kind="recall").count() == 0
    assert not Req.objects.filter(state="failed").exists()


def test_a_migration_whose_file_left_the_cache_waits_for_its_recall_and_completes(archive):
    """An operator removed a cached file a migration still needed: the mover used to crash on
    it and charge every request of its batch; now the file is recalled and the copy written."""
    ingest, originals, _, _ = archive
    [granule] = ingest(1)
    f = granule.files.get()
    FileCopy.objects.filter(file=f, copy_number=1).update(state=FileCopy.State.BAD)
    background.advance_background()
    os.unlink(services.cache_path(f))                      # gone behind the catalog's back

    services.run_until_idle()

    assert not Req.objects.filter(state="failed").exists()
    [copy] = FileCopy.objects.filter(file=f, copy_number=1, state="verified")
    assert copy_bytes_md5(copy) == originals[f.pk]
    assert cached_md5(f) == originals[f.pk]


def _repair_waiting_for_its_recall(ingest):
    """Two archived files, out of the cache; the first's copy 1 failed a check and its repair
    is queued: (granule repaired, granule untouched, the repair's migration)."""
    repaired, other = ingest(2)
    evict([repaired, other])
    f = repaired.files.get()
    FileCopy.objects.filter(file=f, copy_number=1).update(state=FileCopy.State.BAD)
    background.advance_background()
    return repaired, other, Req.objects.get(kind="migrate", file=f, state="queued")


def test_a_file_recalled_for_a_repair_leaves_room_once_its_copy_is_written(archive, settings):
    """Found by the short chaos run: a file recalled for a repair or repack was kept in the
    cache for an hour after its copy was written, so in a small cache a user's recall waited
    behind it ("waiting for cache space") and the order never finished."""
    ingest, originals, _, _ = archive
    repaired, wanted = ingest(2)
    evict([repaired, wanted])
    settings.GRANARY_CACHE_BYTES = 350_000          # room for one 200 kB file at a time
    f = repaired.files.get()
    FileCopy.objects.filter(file=f, copy_number=1).update(state=FileCopy.State.BAD)

    services.run_until_idle()                       # recalled, and its copy 1 written again
    [copy] = FileCopy.objects.filter(file=f, copy_number=1, state="verified")
    assert copy_bytes_md5(copy) == originals[f.pk]

    g = wanted.files.get()
    services.make_available([g])                    # a user's recall needs the room now
    services.run_until_idle()
    assert not Req.objects.filter(state__in=["queued", "running", "failed"]).exists()
    assert cached_md5(g) == originals[g.pk]
    assert not CacheEntry.objects.filter(file=f).exists()  # the repaired file made way


def test_a_repair_queues_its_migration_with_the_recall_held_out_of_the_scheduler(archive):
    ingest, _, _, _ = archive
    _, _, migration = _repair_waiting_for_its_recall(ingest)
    assert migration.error == WAITING_FOR_CACHE
    assert Req.objects.filter(kind="recall", file=migration.file_id, state="queued").exists()
    assert migration.pk not in {r.id for r in manager.snapshot(Drive.objects.first().pk).requests}


def test_a_migration_whose_recall_was_cancelled_asks_again_and_completes(archive):
    """A repair's migration waits, unscheduled, only while a recall of its file is under way:
    with that recall cancelled it used to wait for ever."""
    ingest, originals, _, _ = archive
    repaired, _, migration = _repair_waiting_for_its_recall(ingest)
    Req.objects.filter(kind="recall", file=migration.file_id).update(state="cancelled")

    services.run_until_idle()

    f = repaired.files.get()
    assert Req.objects.get(pk=migration.pk).state == Req.State.DONE
    [copy] = FileCopy.objects.filter(file=f, copy_number=1, state="verified")
    assert copy_bytes_md5(copy) == originals[f.pk]


def test_a_waiting_migration_with_nothing_left_to_read_fails_with_its_reason(archive):
    ingest, _, _, _ = archive
    _, _, migration = _repair_waiting_for_its_recall(ingest)
    Req.objects.filter(kind="recall", file=migration.file_id).update(state="cancelled")
    FileCopy.objects.filter(file=migration.file_id, copy_number=2).update(
        state=FileCopy.State.BAD)                    # the copy it was to be read from is gone

    background.advance_background()

    migration.refresh_from_db()
    assert migration.state == Req.State.FAILED
    assert "neither in the cache nor readable in any copy" in migration.error


def test_a_copy_written_again_onto_the_volume_of_the_one_it_replaces_keeps_its_counts(archive):
    """Found by the chaos run: a copy written again onto the volume that held the copy it
    replaced left that volume counting the released one (18 files where 17 were live), so
    reconciliation reported it after every repair had run."""
    ingest, originals, _, backup = archive
    [granule] = ingest(1)
    f = granule.files.get()
    old = FileCopy.objects.get(file=f, copy_number=2)
    Req.objects.create(kind="migrate", priority=Req.Priority.BACKGROUND, file=f, copy_number=2,
                       volume_group=backup, bytes_total=f.size)

    services.run_until_idle()

    new = FileCopy.objects.get(file=f, copy_number=2, state="verified")
    assert new.volume_id == old.volume_id                  # the case: the same volume
    assert FileCopy.objects.get(pk=old.pk).state == FileCopy.State.RELEASED
    volume = Volume.objects.get(pk=old.volume_id)
    live = FileCopy.objects.filter(volume=volume, state="verified")
    assert (volume.live_bytes, volume.file_count) == (sum(c.length for c in live), live.count())
    assert copy_bytes_md5(new) == originals[f.pk]


def test_a_repair_seen_in_a_list_read_before_its_copy_was_written_is_not_written_twice(archive):
    """Found by the chaos run: the background pass read its list of damaged segments, a mover
    then finished the repair, and the pass queued the same copy again from the stale list."""
    ingest, _, _, backup = archive
    [granule] = ingest(1)
    f = granule.files.get()
    FileCopy.objects.filter(file=f, copy_number=2).update(state=FileCopy.State.BAD)
    stale = FileCopy.objects.select_related("file").get(file=f, copy_number=2)
    services.run_until_idle()                                # the repair is written
    assert FileCopy.objects.filter(file=f, copy_number=2, state="verified").exists()
    written = Req.objects.filter(kind="migrate", file=f, copy_number=2).count()

    background._rewrite(stale, backup)                       # what the stale list would do

    assert Req.objects.filter(kind="migrate", file=f, copy_number=2).count() == written
