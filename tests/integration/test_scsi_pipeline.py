"""The SCSI tape's transfers run in stages on threads of their own (the drive's WRITE or READ,
the file's reading and hashing, the cache file's writing): a stage that fails in the middle of
a file ends that file's transfer with today's fault and reason, leaves no cached file and no
verified copy behind, and no thread; the work is done again and every byte that counts is the
one written (MD5 by hashlib over the staged bytes, read from tgt's backing files)."""
import errno
import hashlib
import io
import os
import threading

import pytest

from backend.archive import services
from backend.archive.media import MediumError
from backend.archive.media.scsi import commands
from backend.archive.media.scsitape import ScsiTapeVolume
from backend.archive.models import ArchiveRequest, CacheEntry, FileCopy, Volume
from backend.archive.services import manager, paths, reading
from backend.catalog.models import File, Granule
from tests.archive_fixtures import (
    archive_granules,
    archived_collection,
    movers_without_waits,
    small_layout,
)
from tests.tape_fixtures import BARCODES, copies_read_back, home

pytestmark = [pytest.mark.django_db, pytest.mark.once,
              pytest.mark.parametrize("tape_kind", ["scsi"], indirect=True)]

LARGE = (6 << 20) + 4321       # six records and a short one: read ahead, landed by a thread


@pytest.fixture
def archive(data_root, settings, tape_kind):
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    return archived_collection([primary, backup]), data_root / "staging"


def _fail_once(monkeypatch, method, thread, nth, error):
    """TapeDrive.<method> raises `error` at its nth call from the thread named `thread`, once;
    the calls from that thread are counted in the list returned."""
    original = getattr(commands.TapeDrive, method)
    calls = []

    def failing(self, *args):
        if threading.current_thread().name == thread:
            calls.append(args)
            if len(calls) == nth:
                raise error
        return original(self, *args)

    monkeypatch.setattr(commands.TapeDrive, method, failing)
    return calls


def _stage_threads():
    return [t for t in threading.enumerate()
            if t.name in ("tape-write", "tape-read-ahead", "recall-landing")]


def test_a_write_failing_mid_member_raises_the_medium_error_and_leaves_no_thread(
        tape_kind, virtual_library, monkeypatch):
    barcode = BARCODES[-3]
    volume = ScsiTapeVolume(virtual_library.config, barcode)
    end = volume.format({})
    body = os.urandom(5 << 20)
    _fail_once(monkeypatch, "write", "tape-write", 3,
               commands.MediumFault("WRITE(6): medium error", 0x3, 0x0C, 0x00))
    writer = volume.writer(end)
    with pytest.raises(MediumError, match="medium error"):
        writer.add("m0", io.BytesIO(body), len(body), "SHA256", {})
    writer.abandon()
    assert not _stage_threads()
    monkeypatch.undo()
    # the cartridge is written again from its end of data: the member reads back whole
    writer = volume.writer(end)
    written = writer.add("m0", io.BytesIO(body), len(body), "SHA256", {})
    writer.close()
    assert written.checksum == hashlib.sha256(body).hexdigest()
    assert volume.read(written.data_offset, written.length, "SHA256") == written.checksum
    home(virtual_library, barcode)


def test_a_write_failing_mid_file_verifies_no_copy_there_and_the_copy_goes_elsewhere(
        archive, virtual_library, monkeypatch):
    collection, staging = archive
    calls = _fail_once(monkeypatch, "write", "tape-write", 3,
                       commands.MediumFault("WRITE(6): medium error", 0x3, 0x0C, 0x00))
    originals = archive_granules(collection, staging, (LARGE, 70_000))
    assert len(calls) > 3                         # the fault met a member mid-file
    failed = Volume.objects.get(state=Volume.State.SUSPECT)
    assert "medium error" in failed.state_reason
    assert not FileCopy.objects.filter(volume=failed).exists()
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 2
    assert FileCopy.objects.filter(state="verified").count() == 4
    assert not ArchiveRequest.objects.filter(kind="migrate").exclude(attempts=0).exists()
    copies_read_back(virtual_library, originals)
    assert not _stage_threads()


def test_a_read_back_failing_mid_file_records_no_copy_and_the_write_is_redone(
        archive, virtual_library, monkeypatch):
    collection, staging = archive
    seen = []
    original = manager.write_copies

    def watched(drive, volume, requests):
        try:
            return original(drive, volume, requests)
        except MediumError:
            seen.append(FileCopy.objects.filter(volume=volume, state="verified").count())
            raise

    monkeypatch.setattr(manager, "write_copies", watched)
    calls = _fail_once(monkeypatch, "read", "tape-read-ahead", 2,
                       commands.MediumFault("READ(6): medium error", 0x3, 0x11, 0x00))
    originals = archive_granules(collection, staging, (LARGE,))
    assert len(calls) > 2 and seen == [0]         # failed mid-file, no copy verified then
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 1
    copies_read_back(virtual_library, originals)
    assert not _stage_threads()


def _evict(files):
    for f in files:
        services.cache_path(f).unlink(missing_ok=True)
    CacheEntry.objects.filter(file__in=files).delete()


def _failed_recalls(monkeypatch):
    """[(cache entry exists, cached file exists)] of each recall that raised, at that time."""
    seen, original = [], reading._recall_from

    def watched(drive, volume, request, *rest):
        try:
            return original(drive, volume, request, *rest)
        except BaseException:
            f = request.file
            seen.append((CacheEntry.objects.filter(file=f).exists(),
                         os.path.exists(paths.cache_location(f))))
            raise

    monkeypatch.setattr(reading, "_recall_from", watched)
    return seen


def _recalled(originals):
    files = list(File.objects.filter(pk__in=originals))
    _evict(files)
    services.make_available(files)
    services.run_until_idle()
    services.run_until_idle()     # a mover that failed stopped its run: the retry's
    for f in files:
        assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == originals[f.pk]
        assert CacheEntry.objects.get(file=f).state == CacheEntry.State.CLEAN


def test_a_read_failing_mid_recall_caches_nothing_and_the_other_copy_serves(
        archive, virtual_library, monkeypatch):
    collection, staging = archive
    originals = archive_granules(collection, staging, (LARGE,))
    failed = _failed_recalls(monkeypatch)
    calls = _fail_once(monkeypatch, "read", "tape-read-ahead", 3,
                       commands.MediumFault("READ(6): medium error", 0x3, 0x11, 0x00))
    _recalled(originals)
    assert len(calls) > 3 and failed == [(False, False)]
    suspect = Volume.objects.get(state=Volume.State.SUSPECT)
    assert "medium error" in suspect.state_reason
    assert not ArchiveRequest.objects.filter(kind="recall", attempts__gt=0).exists()
    assert not _stage_threads()


def test_a_cache_write_failing_mid_recall_caches_nothing_and_the_recall_is_redone(
        archive, virtual_library, monkeypatch):
    collection, staging = archive
    originals = archive_granules(collection, staging, (LARGE,))
    failed = _failed_recalls(monkeypatch)
    original, calls = os.pwrite, []

    def full_disk(fd, data, offset):
        if threading.current_thread().name == "recall-landing":
            calls.append(offset)
            if len(calls) == 3:
                raise OSError(errno.ENOSPC, "No space left on device")
        return original(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", full_disk)
    _recalled(originals)
    assert len(calls) > 3 and failed == [(False, False)]
    assert not Volume.objects.filter(state=Volume.State.SUSPECT).exists()
    recall = ArchiveRequest.objects.get(kind="recall")
    assert (recall.state, recall.attempts) == ("done", 1)     # charged once, then done
    assert not _stage_threads()
