"""Each promise of backend.archive.invariants, broken on purpose in a real archive (real volume
files and cached files), is reported with its kind and the objects at fault, and only it."""
import hashlib
import io
import os

import pytest
from django.utils import timezone

from backend.archive import invariants, services, tape
from backend.archive.models import ArchiveRequest, CacheEntry, Drive, FileCopy, Volume
from backend.archive.services import paths
from backend.archive.services.reconcile import reconcile
from tests.archive_fixtures import (
    archive_granules,
    archived_collection,
    movers_without_waits,
    small_layout,
    staged_granule,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def archive(data_root, settings):
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    originals = archive_granules(collection, data_root / "staging", (150000, 90000, 210000, 64000))
    assert invariants.check_all(read_bytes=True) == []
    return originals


def _copy(number, index=0):
    return list(FileCopy.objects.filter(copy_number=number, state="verified")
                .select_related("volume__silo", "file__granule__collection")
                .order_by("position"))[index]


def _found(violations):
    return {(v.kind, v.file_id, v.copy_id, v.volume_id) for v in violations}


def test_a_copy_on_the_other_copys_volume_is_in_the_wrong_group(archive):
    one, two = _copy(1), _copy(2)
    FileCopy.objects.filter(pk=two.pk).update(volume=one.volume)
    assert _found(invariants.check_records()) == {
        ("copy_wrong_group", two.file_id, two.pk, one.volume_id),
        ("copies_share_volume", two.file_id, None, one.volume_id),
        ("volume_counts", None, None, one.volume_id),
        ("volume_counts", None, None, two.volume_id),
    }


def test_a_copy_the_policy_does_not_ask_for_and_one_that_overlaps_itself(archive):
    one = _copy(1)
    extra = FileCopy.objects.create(
        file=one.file, copy_number=3, volume=one.volume, position=one.position,
        data_offset=one.data_offset, length=one.length, checksum_type="MD5",
        checksum=one.checksum, state="verified")
    again = FileCopy.objects.create(
        file=one.file, copy_number=1, segment=1, volume=one.volume, position=one.position,
        data_offset=one.data_offset, length=one.length, checksum_type="MD5",
        checksum=one.checksum, state="verified")
    found = invariants.check_records()
    assert _found(found) == {
        ("copy_extra", one.file_id, extra.pk, one.volume_id),
        ("copy_duplicate", one.file_id, None, None),
        ("volume_counts", None, None, one.volume_id),
    }
    assert again.pk != extra.pk
    assert [v.extra["copy_number"] for v in found if v.kind == "copy_duplicate"] == [1]


def test_a_copy_counts_only_while_its_volume_can_be_read(archive):
    one, two = _copy(1), _copy(2)
    f = one.file
    Volume.objects.filter(pk=one.volume_id).update(state=Volume.State.SUSPECT)
    FileCopy.objects.filter(pk=two.pk).update(state="bad")
    CacheEntry.objects.filter(file=f).delete()
    paths.cache_path(f).unlink()
    recall = ArchiveRequest.objects.create(kind="recall", priority=1, file=f, bytes_total=f.size)
    mine = [v for v in invariants.check_records() if v.file_id == f.pk]
    assert sorted((v.kind, v.extra.get("copy_number"), v.request_id) for v in mine) == [
        ("copy_missing", 1, None), ("copy_missing", 2, None),
        ("recall_unservable", None, recall.pk)]
    # the recall will bring the file back for background repair: a repair is under way
    assert [v.extra["pending"] for v in mine if v.kind == "copy_missing"] == [True, True]
    others = {c.file_id for c in FileCopy.objects.exclude(file=f)}
    assert {(v.kind, v.file_id, v.extra.get("copy_number"), v.extra.get("pending"))
            for v in invariants.check_records()
            if v.file_id != f.pk and v.kind != "volume_counts"} == {
        ("copy_missing", file_id, 1, False) for file_id in others}


def test_a_cached_file_gone_missing_is_dropped_and_recalled_whole(archive):
    f = _copy(1).file
    paths.cache_path(f).unlink()
    assert _found(invariants.check_records()) == {("cache_file_missing", f.pk, None, None)}
    run = reconcile(repair=True)
    assert [(d.kind, d.outcome) for d in run.discrepancies.all()] == [
        ("cache_file_missing", "dropped from the cache; recalled from tape when needed")]
    assert not CacheEntry.objects.filter(file=f).exists()
    services.make_available([f])
    services.run_until_idle()
    assert hashlib.md5(paths.cache_path(f).read_bytes()).hexdigest() == archive[f.pk]
    assert invariants.check_all(read_bytes=True) == []


def test_a_dirty_file_missing_from_the_cache_is_reported_only(archive, data_root):
    Drive.objects.update(state=Drive.State.OFFLINE)
    collection = _copy(1).file.granule.collection
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(3000,))
    services.archive_granule(granule, sources)
    f = granule.files.get()
    paths.cache_path(f).unlink()
    run = reconcile(repair=True)
    assert [(d.kind, d.file_id, d.repair, d.repaired_at) for d in run.discrepancies.all()] == [
        ("cache_file_missing", f.pk, "", None)]
    assert CacheEntry.objects.get(file=f).state == CacheEntry.State.DIRTY


def test_a_volume_whose_file_is_gone_is_made_suspect_and_its_copies_stop_counting(archive):
    two = _copy(2)
    path = paths.volume_path(two.volume)
    os.rename(path, path + ".away")
    assert _found(invariants.check_all(read_bytes=True)) == {
        ("volume_missing", None, None, two.volume_id)}
    reconcile(repair=True)
    assert Volume.objects.get(pk=two.volume_id).state == Volume.State.SUSPECT
    assert {(v.kind, v.file_id, v.extra["copy_number"]) for v in invariants.check_records()} == {
        ("copy_missing", file_id, 2) for file_id in archive}


def test_an_orphan_member_below_the_end_of_data_is_reported(archive):
    volume = _copy(1).volume
    writer = tape.VolumeWriter(paths.volume_path(volume), volume.end_of_data)
    body = b"bytes no copy holds"
    writer.add("X.1/G/v1/orphan.dat", io.BytesIO(body), len(body), "MD5", {"file": "orphan"})
    end = writer.end_of_data
    writer.close()
    Volume.objects.filter(pk=volume.pk).update(end_of_data=end)  # the end moved for it
    found = invariants.check_all(read_bytes=True)
    assert [(v.kind, v.volume_id, v.extra["position"]) for v in found] == [
        ("member_orphan", volume.pk, volume.end_of_data)]
    run = reconcile(full=True, repair=True)
    assert [(d.kind, d.repair, d.repaired_at) for d in run.discrepancies.all()] == [
        ("member_orphan", "", None)]


def test_a_zero_filled_hole_is_found_the_volume_closed_and_the_copies_rewritten(archive):
    before, last = _copy(2, -2), _copy(2, -1)
    path = paths.volume_path(last.volume)
    size = os.path.getsize(path)
    os.truncate(path, before.data_offset + before.length // 2)
    os.truncate(path, size)        # the old writer's way back to the end: zeros
    assert _found(invariants.check_all(read_bytes=True)) == {
        ("copy_bytes_mismatch", before.file_id, before.pk, before.volume_id),
        ("copy_bytes_mismatch", last.file_id, last.pk, last.volume_id),
        ("member_missing", last.file_id, last.pk, last.volume_id),
        ("volume_truncated", None, None, last.volume_id),
    }
    reconcile(full=True, repair=True)
    assert Volume.objects.get(pk=last.volume_id).state == Volume.State.FULL
    services.run_until_idle()
    assert reconcile(full=True).discrepancy_count == 0
    for copy in FileCopy.objects.filter(state="verified").select_related("volume__silo"):
        with open(paths.volume_path(copy.volume), "rb") as handle:
            handle.seek(copy.data_offset)
            assert hashlib.md5(handle.read(copy.length)).hexdigest() == archive[copy.file_id]
    assert FileCopy.objects.filter(state="verified").count() == 8


def test_a_done_repack_must_leave_its_volume_recycled(archive):
    volume = _copy(1).volume
    repack = ArchiveRequest.objects.create(
        kind="repack", priority=3, volume=volume, state="done", finished_at=timezone.now())
    assert _found(invariants.check_records()) == {("repack_not_recycled", None, None, volume.pk)}
    assert [v.request_id for v in invariants.check_records()] == [repack.pk]


def test_a_copy_rewritten_off_an_unreadable_volume_is_whole_again(archive):
    one = _copy(1)
    Volume.objects.filter(pk=one.volume_id).update(state=Volume.State.SUSPECT)
    spare = Volume.objects.get(label="A00002")
    FileCopy.objects.create(
        file=one.file, copy_number=1, segment=1, volume=spare, position=one.position,
        data_offset=one.data_offset, length=one.length, checksum_type="MD5",
        checksum=one.checksum, state="verified")
    Volume.objects.filter(pk=spare.pk).update(group=one.volume.group, state="filling",
                                              live_bytes=one.length, file_count=1)
    found = invariants.check_records()
    assert {(v.kind, v.file_id, v.extra.get("copy_number")) for v in found} == {
        ("copy_missing", file_id, 1) for file_id in archive if file_id != one.file_id}
