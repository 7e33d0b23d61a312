"""Where the archive keeps bytes: the volumes' files and the RAID cache's files."""
from pathlib import Path

from django.conf import settings

from ..media.scsitape import ScsiTapeVolume
from ..media.tapevolume import TapeVolume


def volume_path(volume):
    return str(settings.VOLUMES_ROOT / volume.silo.name / volume.label)


def medium_of(volume):
    """A volume as a medium (its reads and listing behind the storage seam): a tar file of the
    emulator, or the cartridge of a SCSI library whose barcode is its label."""
    if settings.GRANARY_TAPE == "scsi":
        return ScsiTapeVolume(settings.GRANARY_SCSI, volume.label)
    return TapeVolume(volume_path(volume), volume.label)


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


def member_name(file, segment=None):
    granule = file.granule
    name = f"{granule.collection.key}/{granule.granule_id}/v{granule.version}/{file.name}"
    return name if segment is None else f"{name}.seg{segment:03d}"
