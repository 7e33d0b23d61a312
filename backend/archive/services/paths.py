"""Where the archive keeps bytes: the volumes' files and the RAID cache's files."""
import os
from pathlib import Path

from django.conf import settings

from ..media import DriveError
from ..media.scsitape import ScsiTapeVolume
from ..media.tapevolume import TapeVolume


def volume_path(volume):
    return str(settings.VOLUMES_ROOT / volume.silo.name / volume.label)


def medium_of(volume, drive=None):
    """A volume as a medium (its reads and listing behind the storage seam): a tar file of the
    emulator, or the cartridge of a SCSI library whose barcode is its label, mounted in the
    SCSI drive the mover's logical `drive` is bound to (any free drive without one)."""
    if settings.GRANARY_TAPE == "scsi":
        return ScsiTapeVolume(settings.GRANARY_SCSI, volume.label,
                              drive=None if drive is None else scsi_drive_of(drive))
    return TapeVolume(volume_path(volume), volume.label)


def scsi_drive_of(drive):
    """The index in GRANARY_SCSI['drives'] of the SCSI drive a logical drive is bound to: the
    unit GRANARY_SCSI['bind'] names for it (a LUN or /dev/sg path of 'drives'), else its place
    among the layout's drives (by silo, then name) modulo the library's drives. Kept on the
    row: a mover's batch asks once."""
    from ..models import Drive

    index = getattr(drive, "_scsi_drive", None)
    if index is not None:
        return index
    units = [str(unit) for unit in settings.GRANARY_SCSI["drives"]]
    bound = (settings.GRANARY_SCSI.get("bind") or {}).get(drive.name)
    if bound is not None:
        if str(bound) not in units:
            raise DriveError(f"drive {drive.name} is bound to SCSI unit {bound}, which is not "
                             f"one of the library's drives ({', '.join(units)})")
        index = units.index(str(bound))
    else:
        order = list(Drive.objects.order_by("silo__name", "name").values_list("pk", flat=True))
        index = order.index(drive.pk) % len(units)
    drive._scsi_drive = index
    return index


# Cache files sit in buckets of this many file ids: a directory is made once per bucket, not
# once per granule (a directory costs several times a file's hard link on a journaled disk).
CACHE_BUCKET = 1000


def cache_path(file):
    """Where a file's cache copy lives: by collection, then file id, so every version of a
    granule has its own path and a small granule costs no directory of its own."""
    return Path(cache_location(file))


def cache_location(file):
    """cache_path as a string: what the movers and admission use for thousands of files per
    batch (joining a Path costs more than the link or open it names)."""
    return (f"{settings.CACHE_ROOT}/{file.granule.collection.key}/"
            f"{file.pk // CACHE_BUCKET:06d}/{file.pk}-{file.name}")


# A folder holding at least this many of the paths asked about is listed once; fewer are looked
# up one by one (a listing reads the whole bucket of CACHE_BUCKET names).
LIST_FROM = 64


def present(paths):
    """The subset of `paths` (strings) that exist: a write batch asks about thousands of
    cache files in a few bucket folders, and one listing of a folder costs what a few looks
    at single files do (a look each was 5 % of a small-file batch's CPU, #33)."""
    by_folder = {}
    for path in paths:
        by_folder.setdefault(path.rpartition("/")[0], []).append(path)
    found = set()
    for folder, asked in by_folder.items():
        if len(asked) < LIST_FROM:
            found.update(p for p in asked if os.path.exists(p))
            continue
        try:
            listed = set(os.listdir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        found.update(p for p in asked if p.rpartition("/")[2] in listed)
    return found


def member_name(file, segment=None):
    granule = file.granule
    name = f"{granule.collection.key}/{granule.granule_id}/v{granule.version}/{file.name}"
    return name if segment is None else f"{name}.seg{segment:03d}"
