"""Background work that needs bytes in the cache first: repack and repair."""
from django.db.models import Q, Sum
from django.utils import timezone

from ..models import FileCopy, Volume
from .completeness import UNREADABLE, copy_complete
from .paths import medium_of
from .policy import policy_copies, target_fields
from .queueing import WAITING_FOR_CACHE, Req, queue_once
from .recall import fail_unrecallable, make_available, unblock_waiting_migrations


def _pending(file, kind, copy_number=None):
    qs = Req.objects.filter(file=file, kind=kind, state__in=[Req.State.QUEUED, Req.State.RUNNING])
    if copy_number is not None:
        qs = qs.filter(copy_number=copy_number)
    return qs.exists()


def _rewrite(segment, group, replacing=None):
    """Queue a new copy for the one `segment` belongs to. A file not in the cache is recalled
    first: its migration is queued at once, waiting unscheduled for the recall, so the recalled
    bytes stay in the cache until the copy is written and not a moment longer."""
    file, copy_number = segment.file, segment.copy_number
    if _pending(file, Req.Kind.MIGRATE, copy_number):
        return
    # Looked at again after the pending check: a migration that finished since the caller read
    # its list has released the segment with the copy it wrote (the chaos run saw a copy
    # written twice, one right after the other, from such a stale list).
    if not FileCopy.objects.filter(pk=segment.pk, state=segment.state).exists():
        return
    queue_copy(file, copy_number, group, replacing=replacing)


def queue_copy(file, copy_number, group, replacing=None, requested_by=None):
    """Queue a new copy `copy_number` of `file` on `group`, a volume group or a bucket
    (recalled into the cache first when it is not there); once verified it releases the older
    segments of that copy. Returns (migration request or None when one was already queued,
    error): error says why nothing could be queued (no readable copy to recall from)."""
    answer = make_available([file], priority=Req.Priority.BACKGROUND)[0]
    if answer.error:
        return None, answer.error  # fail_unrecallable and the operator's board say so too
    request = queue_once(kind=Req.Kind.MIGRATE, priority=Req.Priority.BACKGROUND, file=file,
                         copy_number=copy_number, **target_fields(group), volume=replacing,
                         bytes_total=file.size, requested_by=requested_by,
                         error="" if answer.ready else WAITING_FOR_CACHE)
    return request, ""


def advance_background():
    """Move repacks and repairs one step on: recall what they need, queue the new copies, and
    recycle a repacked volume once nothing on it is live."""
    for repack in Req.objects.filter(kind=Req.Kind.REPACK, state__in=[
            Req.State.QUEUED, Req.State.RUNNING]).select_related("volume__group"):
        volume = repack.volume
        live = FileCopy.objects.filter(volume=volume, state=FileCopy.State.VERIFIED)
        moved = repack.bytes_total - (live.aggregate(total=Sum("length"))["total"] or 0)
        if not live.exists():
            _recycle(volume)
            Req.objects.filter(pk=repack.pk).update(state=Req.State.DONE, bytes_done=moved,
                                                    finished_at=timezone.now())
            continue
        Req.objects.filter(pk=repack.pk).update(state=Req.State.RUNNING, bytes_done=moved)
        for segment in live.select_related("file__granule__collection"):
            _rewrite(segment, volume.group, replacing=volume)
    _repair_damaged()
    fail_unrecallable()
    unblock_waiting_migrations()


def damaged_copies():
    """The segments that no longer count: failed a check (BAD), or verified on a volume that
    cannot be read. Found through indexes (the bad copies', the volume's), as this runs at
    every tick: a join to the volumes read every copy of the archive each time."""
    damaged = Q(state=FileCopy.State.BAD)
    unreadable = list(Volume.objects.filter(state__in=UNREADABLE).values_list("pk", flat=True))
    if unreadable:
        damaged |= Q(state=FileCopy.State.VERIFIED, volume_id__in=unreadable)
    return FileCopy.objects.filter(damaged).order_by("file_id", "copy_number", "segment")


def _repair_damaged():
    """Write again every copy that no longer counts: a segment failed its check (BAD), or it
    lies on a volume that cannot be read. The new copy replaces the old in the transaction that
    records it; a file not in the cache is recalled from a good copy first."""
    seen = set()
    for segment in damaged_copies().select_related("file__granule__collection", "volume"):
        f = segment.file
        if (f.pk, segment.copy_number) in seen or copy_complete(f, segment.copy_number):
            continue
        seen.add((f.pk, segment.copy_number))
        group = dict(policy_copies(f.granule.collection)).get(segment.copy_number)
        if group is not None:
            replacing = segment.volume if segment.state == FileCopy.State.VERIFIED else None
            _rewrite(segment, group, replacing=replacing)


def _recycle(volume):
    """Return an emptied volume to scratch: relabelled, no group, nothing live."""
    end = medium_of(volume).format({"silo": volume.silo.name,
                                                         "recycled": timezone.now().isoformat()})
    Volume.objects.filter(pk=volume.pk).update(
        state=Volume.State.SCRATCH, group=None, end_of_data=end, live_bytes=0, file_count=0,
        state_reason="")
    # bad members lay on it too: their bytes are gone with the relabel
    FileCopy.objects.filter(volume=volume).exclude(state=FileCopy.State.RELEASED).update(
        state=FileCopy.State.RELEASED)
