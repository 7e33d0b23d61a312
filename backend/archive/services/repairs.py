"""Safe repairs of what reconciliation finds: each says what it would do (`plans`) and does it
(`apply`) after checking again that the fault is still there, so applying twice does nothing.

A repair never rewrites bytes itself: a copy found bad is marked BAD and background repair
(`background.advance_background`) rewrites it from a good one; a damaged cached file is dropped
only while a readable tape copy exists to recall it from.
"""

from django.db import transaction
from django.db.models import Count, F, Sum
from django.utils import timezone

from backend.catalog import checksums
from backend.catalog.models import File

from .. import invariants as inv
from .. import tape
from ..invariants.media import tar_end
from ..invariants.records import (
    CHUNK,
    UNREADABLE,
    covered,
    policies,
    readable_copy,
    verified_segments,
)
from ..media import MediumError
from ..models import CacheEntry, FileCopy, Volume
from . import buckets
from .completeness import complete_copies
from .paths import cache_path, medium_of
from .queueing import Req, nudge, queue_once, requeue
from .recall import make_available

MARK_BAD = "mark the copy BAD: background repair rewrites it from a good copy"
PLANS = {
    inv.COPY_BYTES: MARK_BAD,
    inv.COPY_PAST_END: MARK_BAD,
    inv.MEMBER_MISMATCH: MARK_BAD,
    inv.VOLUME_TRUNCATED: "set the volume FULL (never appended again); mark its lost copies BAD",
    inv.VOLUME_MISSING: "mark the volume SUSPECT: its copies are rewritten from good ones",
    inv.VOLUME_COUNTS: "recompute live bytes and file count from the verified copies",
    inv.REQUEST_STUCK: "requeue the request",
    inv.REQUEST_DUPLICATE: "cancel this request if it is still queued",
    inv.MIGRATION_MISSING: "queue the missing copy's migration from the cache",
    inv.OBJECT_MISSING: MARK_BAD,
    inv.OBJECT_SIZE: MARK_BAD,
    inv.OBJECT_ORPHAN: "remove the object from the bucket",
}
DROP_CACHED = "drop the cached file: it is recalled from a good tape copy when needed"
CACHE_KINDS = (inv.CACHE_BYTES, inv.CACHE_FILE_SIZE, inv.CACHE_FILE_MISSING)


def _cached(file_id):
    return (CacheEntry.objects.filter(file_id=file_id).exclude(state=CacheEntry.State.STAGING)
            .select_related("file__granule__collection").first())


def _readable_on_tape(f):
    return any(readable_copy(s, f.size) for s in verified_segments([f.pk]).get(f.pk, {}).values())


def plans(violations):
    """What repairing each violation would do; '' when no repair is safe (reported only, with
    why in its `extra["no_repair"]` where a repair cannot help). The cache entries and tape
    copies the cache repairs depend on are read in bulk."""
    wanted = sorted({v.file_id for v in violations
                     if v.kind in CACHE_KINDS or v.kind == inv.COPY_MISSING})
    damaged = {v.file_id for v in violations if v.kind == inv.CACHE_BYTES}
    entries, readable = {}, set()
    for at in range(0, len(wanted), CHUNK):
        chunk = wanted[at:at + CHUNK]
        found = {e.file_id: e for e in CacheEntry.objects.filter(file_id__in=chunk).exclude(
            state=CacheEntry.State.STAGING).select_related("file")}
        entries.update(found)
        copies = verified_segments([i for i, e in found.items()
                                    if e.state != CacheEntry.State.DIRTY])
        readable |= {i for i, numbers in copies.items()
                     if any(readable_copy(s, found[i].file.size) for s in numbers.values())}
    # a damaged cached file with a whole readable copy elsewhere (even while dirty) is not the
    # only copy: it is dropped and recalled, not given up
    damaged -= {file_id for file_id, _ in complete_copies(
        list(File.objects.filter(pk__in=damaged).only("pk", "size")))}
    return [_plan(v, entries, readable, damaged) for v in violations]


def _plan(violation, entries, readable, damaged):
    only = violation.file_id in damaged
    if violation.kind in (inv.MIGRATION_MISSING, inv.COPY_MISSING) and only:
        violation.extra["no_repair"] = (
            "its source, the cached copy, fails its checksum and no other copy exists: a "
            "migration from it would fail; ask the provider to deliver the granule again")
        return ""
    if violation.kind in PLANS:
        return PLANS[violation.kind]
    registered = inv.registered_repair(violation.kind)
    if registered:
        return registered[0]
    entry = entries.get(violation.file_id)
    if violation.kind == inv.CACHE_BYTES and only:
        violation.extra["no_repair"] = (
            "it is the file's only copy: dropping it would lose the file; ask the provider to "
            "deliver the granule again")
        return ""
    if violation.kind in CACHE_KINDS:
        return DROP_CACHED if entry and violation.file_id in readable else ""
    if violation.kind == inv.COPY_MISSING and entry and not violation.extra.get("pending"):
        return PLANS[inv.MIGRATION_MISSING]
    return ""


def apply(discrepancy):
    """Carry out a discrepancy's repair; returns what was done (a sentence)."""
    kind = discrepancy.kind
    if kind in (inv.COPY_BYTES, inv.COPY_PAST_END, inv.MEMBER_MISMATCH, inv.OBJECT_MISSING,
                inv.OBJECT_SIZE):
        return _bad_copy(discrepancy)
    if kind == inv.OBJECT_ORPHAN:
        return buckets.delete_orphan(discrepancy.extra.get("bucket_id"),
                                     discrepancy.extra.get("key", ""))
    if kind in CACHE_KINDS:
        return _drop_cached(discrepancy)
    if kind in (inv.MIGRATION_MISSING, inv.COPY_MISSING):
        return _queue_migration(discrepancy)
    handler = {inv.VOLUME_TRUNCATED: _truncated, inv.VOLUME_MISSING: _volume_missing,
               inv.VOLUME_COUNTS: lambda d: recount(d.volume_id),
               inv.REQUEST_STUCK: _requeue, inv.REQUEST_DUPLICATE: _cancel_duplicate}.get(kind)
    if handler is None and inv.registered_repair(kind):
        handler = inv.registered_repair(kind)[1]
    return handler(discrepancy) if handler else "reported only"


def recount(volume_id):
    """Set a volume's live bytes and file count to those of its VERIFIED copies."""
    with transaction.atomic():
        volume = Volume.objects.select_for_update().filter(pk=volume_id).first()
        if volume is None:
            return "the volume is gone"
        live = FileCopy.objects.filter(volume_id=volume_id, state=FileCopy.State.VERIFIED
                                       ).aggregate(total=Sum("length"), n=Count("pk"))
        Volume.objects.filter(pk=volume_id).update(live_bytes=live["total"] or 0,
                                                   file_count=live["n"])
    return f"{volume.label}: {live['total'] or 0} live bytes in {live['n']} copies"


def mark_bad(copies):
    """Mark VERIFIED copies BAD (they stop counting; background repair rewrites them) and
    recount their volumes. Returns how many were marked."""
    ids = [c.pk for c in copies]
    with transaction.atomic():
        marked = FileCopy.objects.filter(pk__in=ids, state=FileCopy.State.VERIFIED).update(
            state=FileCopy.State.BAD)
        for volume_id in sorted({c.volume_id for c in copies}):
            recount(volume_id)
    if marked:
        transaction.on_commit(nudge)
    return marked


def _bad_copy(d):
    copy = FileCopy.objects.filter(pk=d.copy_id).select_related("volume__silo", "bucket").first()
    if copy is None or copy.state != FileCopy.State.VERIFIED:
        return ("already marked BAD" if copy and copy.state == FileCopy.State.BAD
                else "the copy is no longer verified; nothing to do")
    if copy.bucket_id:
        try:
            if buckets.recheck(copy):
                return "its object matches now; nothing done"
        except MediumError as exc:
            return f"not checked again, nothing done: {exc}"
        mark_bad([copy])
        return f"copy marked BAD in {copy.bucket.name}"
    if d.kind == inv.COPY_BYTES:
        try:
            digest = medium_of(copy.volume).read(copy.data_offset, copy.length,
                                                 copy.checksum_type)
        except (tape.VolumeError, MediumError):
            digest = None
        if digest is not None and checksums.same(copy.checksum_type, digest, copy.checksum):
            return "its bytes match now; nothing done"
    mark_bad([copy])
    return f"copy marked BAD on {copy.volume.label}"


def _truncated(d):
    volume = Volume.objects.select_related("silo").filter(pk=d.volume_id).first()
    if volume is None:
        return "the volume is gone"
    medium = medium_of(volume)
    try:
        listed_end = tar_end(medium.scan())
        size = medium.size()
    except (FileNotFoundError, tape.VolumeError, MediumError):
        return _volume_missing(d)
    if size >= volume.end_of_data and listed_end >= volume.end_of_data:
        return "the volume is whole again; nothing done"
    Volume.objects.filter(pk=volume.pk, state__in=[Volume.State.SCRATCH, Volume.State.FILLING]
                          ).update(state=Volume.State.FULL)
    lost = list(FileCopy.objects.filter(volume=volume, state=FileCopy.State.VERIFIED)
                .annotate(end=F("data_offset") + F("length")).filter(end__gt=size))
    marked = mark_bad(lost)
    return f"{volume.label} is full (never appended again); {marked} lost copies marked BAD"


def _volume_missing(d):
    volume = Volume.objects.select_related("silo").filter(pk=d.volume_id).first()
    if volume is None:
        return "the volume is gone"
    try:
        medium_of(volume).scan()
        return "the volume can be read again; nothing done"
    except (FileNotFoundError, tape.VolumeError, MediumError):
        pass
    Volume.objects.filter(pk=volume.pk).exclude(state__in=[
        Volume.State.SUSPECT, Volume.State.RETIRED]).update(state=Volume.State.SUSPECT)
    transaction.on_commit(nudge)
    return f"{volume.label} marked SUSPECT"


def _drop_cached(d):
    entry = _cached(d.file_id)
    if entry is None:
        return "no longer in the cache"
    f, path = entry.file, cache_path(entry.file)
    if entry.state == CacheEntry.State.DIRTY or not _readable_on_tape(f):
        return "kept: the cache holds the only readable copy"
    if _cache_matches(f):
        return "its bytes match now; nothing done"
    with transaction.atomic():
        deleted, _ = CacheEntry.objects.filter(pk=entry.pk, state=entry.state).delete()
    if not deleted:
        return "the cache entry changed meanwhile; nothing done"
    path.unlink(missing_ok=True)
    if entry.pinned or (entry.keep_until and entry.keep_until > timezone.now()):
        make_available([f], priority=Req.Priority.USER)
        return "dropped from the cache; a recall brings it back (it was pinned or kept)"
    return "dropped from the cache; recalled from tape when needed"


def _cache_matches(f):
    try:
        digest, size = checksums.of_file(f.checksum_type, cache_path(f))
    except FileNotFoundError:
        return False
    return size == f.size and checksums.same(f.checksum_type, digest, f.checksum)


def _queue_migration(d):
    entry = _cached(d.file_id)
    if entry is None:
        return "not in the cache; background repair recalls it first"
    f = entry.file
    if not _cache_matches(f):
        return "not queued: the cached copy does not match its checksum"
    copies = verified_segments([f.pk]).get(f.pk, {})
    queued = 0
    for number, (medium, target_id) in sorted(
            policies().get(f.granule.collection_id, {}).items()):
        segments = copies.get(number, [])
        if readable_copy(segments, f.size) or any(
                s["volume__state"] in UNREADABLE for s in segments):
            continue  # whole, or for background repair to replace (it releases the old one)
        target = ({"bucket_id": target_id} if medium == "object"
                  else {"volume_group_id": target_id})
        queued += queue_once(kind=Req.Kind.MIGRATE, priority=Req.Priority.MIGRATION, file=f,
                             copy_number=number, bytes_total=f.size,
                             bytes_done=0 if medium == "object" else covered(segments),
                             **target) is not None
    if queued:
        transaction.on_commit(nudge)
    return f"{queued} migrations queued" if queued else "the copies are whole or queued already"


def _requeue(d):
    now = timezone.now()
    request = Req.objects.select_related("drive").filter(pk=d.request_id).first()
    if request is None or request.state != Req.State.RUNNING:
        return "no longer running; nothing done"
    drive = request.drive
    if drive is not None and drive.lease_owner and drive.lease_until and drive.lease_until > now:
        return "its drive holds a live lease again; nothing done"
    requeue([request], "requeued by reconciliation: its mover's lease had run out")
    if request.kind == Req.Kind.RECALL:
        Req.objects.filter(pk=request.pk).update(bytes_done=0)
    transaction.on_commit(nudge)
    return "requeued"


def _cancel_duplicate(d):
    cancelled = Req.objects.filter(pk=d.request_id, state=Req.State.QUEUED).update(
        state=Req.State.CANCELLED, finished_at=timezone.now(),
        error="cancelled by reconciliation: the same work is queued already")
    return "cancelled" if cancelled else "no longer queued; nothing done"
