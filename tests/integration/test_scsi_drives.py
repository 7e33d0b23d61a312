"""Logical drives bound to SCSI drives: each Granary drive row mounts its cartridges in one
drive of the library (GRANARY_SCSI['bind'] by name, else its place among the drives), so a
mount happens in that drive and a dead SCSI drive is charged to its own logical drive alone."""
import pytest

from backend.archive import operations, services
from backend.archive.media import DriveError
from backend.archive.media.scsi import commands
from backend.archive.media.scsi.library import Library
from backend.archive.models import Drive, FileCopy, Volume
from backend.archive.services import paths
from backend.catalog.models import Granule
from tests.archive_fixtures import (
    archive_granules,
    archived_collection,
    movers_without_waits,
    small_layout,
)
from tests.tape_fixtures import BARCODES, cartridge_at, copies_read_back, empty_drives

pytestmark = [pytest.mark.django_db, pytest.mark.once,
              pytest.mark.parametrize("tape_kind", ["scsi"], indirect=True)]


def test_a_cartridge_is_mounted_in_the_drive_asked_and_moved_between_drives(
        tape_kind, unloaded_library):
    """Drive i of config['drives'] is data-transfer element 500 + i (scripts/tape-library.sh):
    a mount asked in drive 1 puts the cartridge in element 501; asked next in drive 0, it goes
    from 501 back to its slot and into 500."""
    barcode = BARCODES[-3]
    library = Library(unloaded_library.config)
    try:
        with library.mounted(barcode, drive=1) as m:
            assert m.index == 1 and m.moved
        assert cartridge_at(unloaded_library, barcode) == (commands.Changer.DRIVE, 501)
        with library.mounted(barcode, drive=1) as m:
            assert m.index == 1 and not m.moved          # already there: no move
        with library.mounted(barcode, drive=0) as m:
            assert m.index == 0 and m.moved
        assert cartridge_at(unloaded_library, barcode) == (commands.Changer.DRIVE, 500)
    finally:
        library.close()


def test_logical_drives_are_bound_by_name_else_by_their_place_among_the_drives(
        settings, tape_kind):
    """Two SCSI drives and four logical ones (two silos of two): by place silo1-d1, silo1-d2,
    silo2-d1, silo2-d2 take drives 0, 1, 0, 1; a name in 'bind' takes the unit it names; a unit
    the library does not have is the drive's fault, with its reason."""
    small_layout()
    drives = {d.name: d for d in Drive.objects.all()}
    config = {**settings.GRANARY_SCSI, "drives": ["2", "3"]}
    settings.GRANARY_SCSI = config
    assert {name: paths.scsi_drive_of(Drive.objects.get(name=name)) for name in drives} == {
        "silo1-d1": 0, "silo1-d2": 1, "silo2-d1": 0, "silo2-d2": 1}
    settings.GRANARY_SCSI = {**config, "bind": {"silo2-d1": "3", "silo1-d2": "2"}}
    assert [paths.scsi_drive_of(Drive.objects.get(name=n))
            for n in ("silo1-d1", "silo1-d2", "silo2-d1", "silo2-d2")] == [0, 0, 1, 1]
    settings.GRANARY_SCSI = {**config, "bind": {"silo1-d1": "9"}}
    with pytest.raises(DriveError, match="silo1-d1 is bound to SCSI unit 9"):
        paths.scsi_drive_of(Drive.objects.get(name="silo1-d1"))


def test_each_logical_drive_mounts_in_its_own_scsi_drive_and_a_dead_one_is_charged_alone(
        data_root, settings, tape_kind, own_library):
    """One drive per silo, silo1-d1 bound to LUN 2 (element 500), silo2-d1 to LUN 3 (501).
    LUN 3 is taken out of the target: the backup copies' writes fail on silo2-d1, which alone
    is charged (silo1-d1 writes the primary copies through LUN 2, untouched) and the backup
    work waits; LUN 3 back and silo2-d1 varied on, every granule is archived, each silo's
    cartridges having gone through its own drive, and every copy reads back from tgt's files."""
    library = own_library()
    settings.GRANARY_DRIVE_ERROR_LIMIT = 2
    movers_without_waits(settings)
    primary, backup, _ = small_layout(drives_per_silo=1)
    empty_drives(library)                 # labelling left cartridges in the drives
    library.adm("--mode", "logicalunit", "--op", "delete", "--tid", "1", "--lun", "3")
    collection = archived_collection([primary, backup])
    originals = archive_granules(collection, data_root / "staging", (700_000, 3000))
    silo1, silo2 = Drive.objects.get(name="silo1-d1"), Drive.objects.get(name="silo2-d1")
    assert silo1.error_count == 0
    assert silo2.error_count >= 1 and "hardware error" in silo2.last_error.lower()
    assert not Granule.objects.filter(state=Granule.State.ARCHIVED).exists()
    primary_copies = FileCopy.objects.filter(state="verified", copy_number=1)
    assert primary_copies.count() == 2
    library.adm("--mode", "logicalunit", "--op", "new", "--tid", "1", "--lun", "3",
                "--device-type", "tape", "--bstype", "ssc")    # an empty drive again
    library.adm("--mode", "logicalunit", "--op", "update", "--tid", "1", "--lun", "1",
                "--params", "element_type=4,address=501,tid=1,lun=3")
    operations.vary_drive(silo2, True)
    services.run_until_idle()
    assert Granule.objects.filter(state=Granule.State.ARCHIVED).count() == 2
    assert Drive.objects.get(name="silo1-d1").error_count == 0
    last = {silo: Volume.objects.filter(silo__name=silo, file_count__gt=0)
            .order_by("-label").first().label for silo in ("silo1", "silo2")}
    assert cartridge_at(library, last["silo1"]) == (commands.Changer.DRIVE, 500)
    assert cartridge_at(library, last["silo2"]) == (commands.Changer.DRIVE, 501)
    copies_read_back(library, originals)
