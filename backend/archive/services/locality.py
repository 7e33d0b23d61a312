"""Where a file's bytes are, in the words of the WLCG Tape REST API's archiveinfo."""
from ..models import CacheEntry, FileCopy
from .completeness import readable_copies

DISK, TAPE, DISK_AND_TAPE = "DISK", "TAPE", "DISK_AND_TAPE"
LOST, NONE, UNAVAILABLE = "LOST", "NONE", "UNAVAILABLE"


def localities(file_ids):
    """{file id: locality} for `file_ids`. An object-store copy counts as tape: it is the
    archive's durable copy, read back through the same recall. A verified copy on a volume
    that cannot be read now (suspect, retired) is UNAVAILABLE; copies that all failed their
    checks are LOST; a file with no copy and nothing in the cache is NONE."""
    ids = list(file_ids)
    cached = set(CacheEntry.objects.filter(file_id__in=ids).exclude(
        state=CacheEntry.State.STAGING).values_list("file_id", flat=True))
    readable = set(readable_copies().filter(file_id__in=ids).values_list("file_id", flat=True))
    kept = set(FileCopy.objects.filter(file_id__in=ids, state=FileCopy.State.VERIFIED)
               .values_list("file_id", flat=True))
    copied = set(FileCopy.objects.filter(file_id__in=ids).exclude(
        state=FileCopy.State.RELEASED).values_list("file_id", flat=True))
    answer = {}
    for pk in ids:
        if pk in cached:
            answer[pk] = DISK_AND_TAPE if pk in readable else DISK
        elif pk in readable:
            answer[pk] = TAPE
        elif pk in kept:
            answer[pk] = UNAVAILABLE
        elif pk in copied:
            answer[pk] = LOST
        else:
            answer[pk] = NONE
    return answer
