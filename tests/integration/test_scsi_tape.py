"""The SCSI tape backend against tgt's virtual tape library: what the target answers, a
cartridge read back without Granary, and faults on the SCSI path (target killed mid-write,
a cartridge missing from its slot, a medium error, a write-protected cartridge): nothing lost,
nothing stuck, the drive or cartridge out of service with its reason."""
import hashlib
import io
import os
import struct
import tarfile

import pytest

from backend.archive import operations, services, tape
from backend.archive.media import MediumError
from backend.archive.media.scsi import commands
from backend.archive.media.scsi.library import Library
from backend.archive.media.scsitape import ScsiTapeVolume
from backend.archive.models import ArchiveRequest, CacheEntry, Drive, FileCopy, Silo, Volume
from backend.archive.serializers import VolumeSerializer
from backend.archive.services import writing
from backend.catalog.models import Granule
from bench import tgt_media
from tests.archive_fixtures import (
    archive_granules,
    archived_collection,
    movers_without_waits,
    small_layout,
)
from tests.tape_fixtures import BARCODES, copies_read_back, home

pytestmark = [pytest.mark.django_db, pytest.mark.once,
              pytest.mark.parametrize("tape_kind", ["scsi"], indirect=True)]


@pytest.fixture
def archive(data_root, settings, tape_kind):
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    return archived_collection([primary, backup]), data_root / "staging"


def test_tgt_answers_the_ssc_and_smc_commands_granary_uses_and_refuses_locate(
        tape_kind, virtual_library):
    """tgt 1.0.85 answers READ ELEMENT STATUS and MOVE MEDIUM on the changer; TEST UNIT READY,
    REWIND, WRITE(6)/READ(6), WRITE FILEMARKS and SPACE (both ways) on a drive. It refuses
    LOCATE and answers READ POSITION with 'position unknown'."""
    library = Library(virtual_library.config)
    try:
        assert library.changer.inquiry().device_type == 0x08       # medium changer (SPC)
        assert library.drives[0].inquiry().device_type == 0x01     # sequential access
        barcode = BARCODES[-1]
        with library.mounted(barcode) as m:
            d = m.drive
            d.rewind()
            # 900,000 bytes: more than half of what READ asks, which tgt sends short (the
            # residual bug the drive works around by reading the record again)
            records = [os.urandom(4096), os.urandom(1 << 20), os.urandom(777),
                       os.urandom(900_000)]
            for r in records:
                d.write(r)
            d.write_filemarks(1)
            d.rewind()
            assert [d.read(1 << 20) for _ in records] == records   # short ones come back short
            with pytest.raises(commands.FilemarkMet):
                d.read(1 << 20)
            d.rewind()
            d.space(2)
            assert d.read(1 << 20) == records[2]
            assert d.read(1 << 20) == records[3]
            d.space(-3)
            assert d.read(1 << 20) == records[1]
            assert d.read_position() is None
            with pytest.raises(commands.Refused):
                d.locate(1)
        element, _ = library.where_is(barcode)
        assert element.kind == commands.Changer.DRIVE and element.barcode == barcode
    finally:
        library.close()


def test_a_cartridge_whose_label_is_not_its_barcode_is_refused_at_mount(
        tape_kind, virtual_library):
    """The label member is read at every mount: a cartridge carrying another volume's label
    (or none) is not read as the volume its barcode names."""
    barcode = BARCODES[-2]
    library = Library(virtual_library.config)
    try:
        with library.mounted(barcode) as m:
            m.drive.rewind()
            m.drive.write(tape.member_header(tape.LABEL_NAME, 0, {"label": "Z99999"})
                          + tape.END_OF_ARCHIVE)
            m.drive.write_filemarks(1)
    finally:
        library.close()
    home(virtual_library, barcode)
    with pytest.raises(MediumError, match="labelled Z99999"):
        ScsiTapeVolume(virtual_library.config, barcode).read(0, 10, "MD5")


def test_a_cartridge_read_from_tgts_backing_file_holds_every_catalogued_member(
        archive, virtual_library):
    """Python's tarfile (not Granary) reads each cartridge's data records from tgt's file
    and finds every catalogued copy at its offset, with the bytes ingested (MD5 by hashlib)."""
    collection, staging = archive
    originals = archive_granules(collection, staging, (5000, 3 << 20, 70_000, (1 << 20) + 1))
    copies = FileCopy.objects.filter(state="verified").select_related("volume")
    assert copies.count() == 8
    for volume in Volume.objects.filter(pk__in=copies.values("volume")):
        stream = tgt_media.first_file(virtual_library.cartridge_file(volume.label))
        with tarfile.open(fileobj=io.BytesIO(stream)) as tar:
            members = {m.offset_data: m for m in tar.getmembers()}
            assert tar.getmembers()[0].pax_headers[
                "SCHILY.xattr.user.granary.label"] == volume.label
            for copy in copies.filter(volume=volume):
                m = members[copy.data_offset]
                data = tar.extractfile(m).read()
                assert hashlib.md5(data).hexdigest() == originals[copy.file_id]
                assert m.pax_headers["SCHILY.xattr.user.granary.checksum"] == \
                    originals[copy.file_id]


def _evict_all():
    for entry in CacheEntry.objects.select_related("file"):
        services.cache_path(entry.file).unlink(missing_ok=True)
    CacheEntry.objects.all().delete()


def _recall_all(originals):
    from backend.catalog.models import File

    files = list(File.objects.filter(pk__in=originals))
    services.make_available(files)
    services.run_until_idle()
    for f in files:
        assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == originals[f.pk]
    assert not ArchiveRequest.objects.exclude(state="done").exists()


def _corrupt_a_record_header(path, stream_offset):
    """Spoil the block header of the tgt record holding `stream_offset`: its link to the next
    record points past the end of the file, so reading it ends in a MEDIUM ERROR."""
    header = tgt_media.file_offset(path, stream_offset) - (stream_offset % (1 << 20)) - \
        tgt_media.HEADER.size
    with open(path, "r+b") as f:
        f.seek(header + 40)                 # the 'next' field (see bench/tgt_media.py)
        f.write(struct.pack(">Q", 1 << 50))


@pytest.mark.parametrize("damage", ["missing from its slot", "medium error"])
def test_a_cartridge_that_cannot_be_read_is_suspect_and_recalls_use_the_other_copy(
        archive, virtual_library, damage):
    collection, staging = archive
    originals = archive_granules(collection, staging, (200_000, 1_500_000, 9000))
    first = FileCopy.objects.filter(copy_number=1, state="verified").select_related(
        "volume").first()
    volume = first.volume
    slot = home(virtual_library, volume.label)
    if damage == "medium error":
        _corrupt_a_record_header(virtual_library.cartridge_file(volume.label), first.data_offset)
    else:
        virtual_library.adm("--mode", "logicalunit", "--op", "update", "--tid", "1", "--lun",
                            "1", "--params", f"element_type=2,address={slot},clear_slot=1")
    try:
        _evict_all()
        _recall_all(originals)
        volume.refresh_from_db()
        assert volume.state == Volume.State.SUSPECT
        assert not ArchiveRequest.objects.filter(state="failed").exists()
        assert ArchiveRequest.objects.filter(kind="recall", attempts__gt=0).count() == 0
    finally:
        if damage != "medium error":
            virtual_library.adm(
                "--mode", "logicalunit", "--op", "update", "--tid", "1", "--lun", "1",
                "--params", f"element_type=2,address={slot},barcode={volume.label},sides=1")


def _drives_read_only(library, flag):
    for lun in library.config["drives"]:
        library.adm("--mode", "logicalunit", "--op", "update", "--tid", "1", "--lun", lun,
                    "--params", f"readonly={flag}")


def test_write_protected_cartridges_take_no_copy_and_the_work_waits_for_writable_ones(
        archive, virtual_library):
    collection, staging = archive
    _drives_read_only(virtual_library, 1)
    try:
        archive_granules(collection, staging, (120_000, 80_000))
        assert not Granule.objects.filter(state=Granule.State.ARCHIVED).exists()
    finally:
        _drives_read_only(virtual_library, 0)
    refused = Volume.objects.filter(state=Volume.State.FULL, file_count=0)
    assert refused.exists()                   # out of service: never written again
    for volume in refused:                    # with its reason, as the archive board shows it
        assert "write protected" in volume.state_reason
        assert VolumeSerializer(volume).data["state_reason"] == volume.state_reason
    assert not FileCopy.objects.filter(state="verified").exists()
    assert not ArchiveRequest.objects.filter(state="failed").exists()
    assert "write protected" in " ".join(ArchiveRequest.objects.values_list("error", flat=True))
    for silo, prefix in ((Silo.objects.get(name="silo1"), "A"),
                         (Silo.objects.get(name="silo2"), "B")):
        operations.label_volumes(silo, Volume.objects.filter(silo=silo).first().media, 2,
                                 prefix)
    services.run_until_idle()
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 2
    assert not refused.filter(file_count__gt=0).exists()


def test_a_target_killed_mid_write_loses_nothing_and_the_work_is_redone(
        data_root, settings, tape_kind, own_library, monkeypatch):
    """tgtd is killed (SIGKILL, by its PID) while a batch is being written, and started again:
    the batch's requests go back uncharged, the drive is charged with the iSCSI failure, and
    every file ends archived with bytes that read back."""
    library = own_library()
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    original, written = writing._write_member, []

    def kill_after_the_first_member(writer, request, length, segment):
        out = original(writer, request, length, segment)
        written.append(request.pk)
        if len(written) == 1:
            library.kill()
            library.start()
        return out

    monkeypatch.setattr(writing, "_write_member", kill_after_the_first_member)
    originals = archive_granules(collection, data_root / "staging", (1_500_000, 700_000, 3000))
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 3
    assert not ArchiveRequest.objects.filter(kind="migrate").exclude(attempts=0).exists()
    charged = Drive.objects.filter(error_count__gt=0)
    assert charged.count() == 1 and "iscsi" in charged.get().last_error.lower()
    copies_read_back(library, originals)


def test_the_end_of_a_cartridge_takes_back_the_member_and_the_rest_goes_to_the_next(
        data_root, settings, tape_kind, own_library):
    """Cartridges of 3 MB under a catalog that believes in 64 MiB: the write meets tgt's end
    of medium, the member being written is taken back, the volume is full, and the batch goes
    on to the next cartridge; every copy reads back (hashlib on tgt's files)."""
    library = own_library(size_mb=3)
    movers_without_waits(settings)
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup])
    originals = archive_granules(collection, data_root / "staging",
                                 (1_200_000, 1_100_000, 1_300_000, 900_000))
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 4
    full = Volume.objects.filter(state=Volume.State.FULL, file_count__gt=0)
    assert full.exists()
    assert not ArchiveRequest.objects.exclude(state="done").exists()
    copies_read_back(library, originals)


def test_reads_over_many_records_are_read_ahead_and_give_the_bytes_written(
        tape_kind, virtual_library):
    """Members written back to back (each starting in the record where the one before ended)
    read back whole, by read and read_many, with the SHA-256 hashlib gives their bytes; a range
    past the end of the stream is a CopyMissing and leaves no read-ahead thread behind."""
    import threading

    from backend.archive.media import CopyMissing

    barcode = BARCODES[-3]
    volume = ScsiTapeVolume(virtual_library.config, barcode)
    bodies = [os.urandom(n) for n in ((5 << 20) + 1234, 3 << 20, 100, (2 << 20) - 7)]
    volume.format({})
    writer = volume.writer(volume.size())
    written = [writer.add(f"m{i}", io.BytesIO(b), len(b), "SHA256", {})
               for i, b in enumerate(bodies)]
    writer.close()
    expected = [hashlib.sha256(b).hexdigest() for b in bodies]
    threads = threading.active_count()
    with volume.held():
        got = []
        for w, body in zip(written, bodies, strict=True):
            parts = []
            got.append(volume.read(w.data_offset, w.length, "SHA256", sink=parts.append))
            assert b"".join(bytes(p) for p in parts) == body
    assert got == expected
    assert volume.read_many([(w.data_offset, w.length, "SHA256") for w in written]) == expected
    end = written[-1].data_offset + written[-1].length
    with pytest.raises(CopyMissing):
        volume.read(end - 10, 4 << 20, "SHA256")
    assert threading.active_count() == threads
    home(virtual_library, barcode)
