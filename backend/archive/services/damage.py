"""Damage, judged where it is: a bad member, a truncated volume, an unreadable volume.

One member that fails its checksum condemns that member only: its segment turns BAD, stops
counting in its volume's live bytes, and background repair writes the copy again from a good
one. A volume is suspect only when it cannot be opened at all; a truncated volume keeps what
lies before the cut, is never appended to again, and loses only the members past it.
"""
import logging

from django.db import transaction
from django.db.models import F

from backend.events import services as events

from ..models import FileCopy, Volume
from .paths import medium_of

log = logging.getLogger(__name__)


def mark_bad(segments, reason):
    """Mark copy segments BAD; the verified ones among them leave their volumes' live counts."""
    ids = [s.pk for s in segments]
    if not ids:
        return 0
    with transaction.atomic():
        rows = list(FileCopy.objects.select_for_update().filter(
            pk__in=ids, state=FileCopy.State.VERIFIED).values_list("volume_id", "length"))
        for volume_id, length in rows:
            Volume.objects.filter(pk=volume_id).update(
                live_bytes=F("live_bytes") - length, file_count=F("file_count") - 1)
        FileCopy.objects.filter(pk__in=ids).exclude(state=FileCopy.State.RELEASED).update(
            state=FileCopy.State.BAD)
    for segment in segments:
        log.error("copy %s marked bad: %s", segment, reason)
    return len(rows)


def volume_unreadable(volume, reason):
    """The volume as a whole cannot be read: suspect. Its copies stop counting (see
    completeness.readable_copies) and are repaired from the others; an operator may clear it."""
    log.error("volume %s marked suspect: %s", volume.label, reason)
    with transaction.atomic():
        if Volume.objects.filter(pk=volume.pk).exclude(state=Volume.State.SUSPECT).update(
                state=Volume.State.SUSPECT, state_reason=reason[:300]):
            events.emit("volume.suspect", f"volumes/{volume.label}", {
                "volume": volume.label,
                "links": {"volume": events.link(f"archive/volumes/{volume.label}/")}})
    volume.state = Volume.State.SUSPECT


def volume_write_protected(volume, reason):
    """The cartridge refuses writes: FULL (readable, never appended to again, emptied by a
    repack), its copies still count."""
    log.error("volume %s takes no more writes: %s", volume.label, reason)
    Volume.objects.filter(pk=volume.pk, state__in=[Volume.State.SCRATCH, Volume.State.FILLING]
                          ).update(state=Volume.State.FULL, state_reason=reason[:300])
    volume.refresh_from_db(fields=["state", "state_reason"])


def volume_truncated(volume):
    """A volume shorter than its recorded end of data: the copies past the cut are lost (BAD,
    to be repaired), those before it stay good, and the volume is FULL: never appended to
    again, readable, and emptied by a repack. Returns the segments lost."""
    try:
        size = medium_of(volume).size()
    except (FileNotFoundError, OSError):
        volume_unreadable(volume, "its file is missing")
        return []
    lost = [c for c in FileCopy.objects.filter(volume=volume).exclude(
        state=FileCopy.State.RELEASED) if c.data_offset + c.length > size]
    mark_bad(lost, f"volume {volume.label} ends at byte {size}, before this copy")
    if volume.state in (Volume.State.SCRATCH, Volume.State.FILLING):
        Volume.objects.filter(pk=volume.pk).update(state=Volume.State.FULL)
        volume.state = Volume.State.FULL
    log.error("volume %s is truncated at %d bytes (end of data %d): %d copies lost",
              volume.label, size, volume.end_of_data, len(lost))
    return lost
