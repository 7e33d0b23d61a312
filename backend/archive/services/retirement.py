"""A granule's lifecycle after archiving, by an operator: withdraw (hidden from search, STAC,
subscriptions and new orders, kept on tape, reversible), restore, and delete (gone from the
catalog, its row kept as a tombstone for the audit trail, its cache copies dropped and its
tape copies released so a repack reclaims their room).

Each change and its audit record land in one transaction; distribution drops what it held
for the granule through the `granule_retired` signal, in the same transaction."""
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from backend.accounts import audit
from backend.catalog.models import Granule
from backend.catalog.retired import DELETE, RESTORE, WITHDRAW
from backend.errors import Conflict, DomainError
from backend.events import services as events

from ..models import CacheEntry, FileCopy, Volume
from ..signals import granule_retired
from . import buckets
from .paths import cache_path
from .queueing import Req
from .remedies import damaged_only_copies

REDELIVER = "redeliver"

MAX_REASON = 2000
DELETABLE = (Granule.State.ARCHIVED, Granule.State.WITHDRAWN, Granule.State.FAILED,
             Granule.State.SUPERSEDED)


def withdraw(granule, *, by, reason):
    """Hide an archived granule from everything users see; its copies stay on tape."""
    reason = _reason(reason)
    with transaction.atomic():
        granule = _locked(granule, (Granule.State.ARCHIVED,), "withdrawn")
        _set_state(granule, Granule.State.WITHDRAWN)
        audit.record(by, WITHDRAW, "granule", granule.pk, label=str(granule), reason=reason)
        events.emit_many([events.granule_event("granule.withdrawn", granule)])
        granule_retired.send(sender=Granule, granule=granule, action=WITHDRAW, reason=reason)
    return granule


def restore(granule, *, by, reason):
    """Bring a withdrawn granule back: archived and visible again (what was failed or dropped
    for it meanwhile stays so: users order it again)."""
    reason = _reason(reason)
    with transaction.atomic():
        granule = _locked(granule, (Granule.State.WITHDRAWN,), "restored")
        _set_state(granule, Granule.State.ARCHIVED)
        audit.record(by, RESTORE, "granule", granule.pk, label=str(granule), reason=reason)
    return granule


def delete(granule, *, by, reason):
    """Delete a granule: DELETED (its row and its files' metadata stay, a tombstone the audit
    trail points at), cache copies dropped, tape copies released (they leave their volumes'
    live bytes and counts; a repack skips them and reclaims their room), queued archive work
    for its files cancelled. Refused while its files are being moved (a mover would write a
    copy of a deleted file): try again once that is done. Returns the bytes released on tape."""
    reason = _reason(reason)
    with transaction.atomic():
        granule = _locked(granule, DELETABLE, "deleted")
        files = list(granule.files.values_list("pk", flat=True))
        _cancel_work(granule, files, reason)
        released = _release_copies(files)
        paths = [cache_path(e.file) for e in CacheEntry.objects.filter(
            file_id__in=files).select_related("file__granule__collection")]
        CacheEntry.objects.filter(file_id__in=files).delete()
        _set_state(granule, Granule.State.DELETED)
        audit.record(by, DELETE, "granule", granule.pk, label=str(granule), reason=reason,
                     detail={"files": len(files), "tape_bytes_released": released})
        events.emit_many([events.granule_event("granule.deleted", granule)])
        granule_retired.send(sender=Granule, granule=granule, action=DELETE, reason=reason)
        transaction.on_commit(lambda: [p.unlink(missing_ok=True) for p in paths])
    return released


def fail_for_redelivery(granule, *, by, reason):
    """Give up a granule the archive cannot finish because a file's only copy is damaged in the
    cache: FAILED (a new delivery of it is archived as a new version), its failed and queued
    migrations cancelled with the reason, the copies already written released and its cached
    files dropped. Refused while any of its work runs, or when its files can still be archived
    (then its work is retried instead). Returns the names of the damaged files."""
    reason = _reason(reason)
    with transaction.atomic():
        granule = _locked(granule, (Granule.State.REGISTERED, Granule.State.ARCHIVING),
                          "given up for a redelivery")
        files = dict(granule.files.values_list("pk", "name"))
        damaged = sorted(files[pk] for pk in damaged_only_copies(files))
        if not damaged:
            raise Conflict(f"{granule} has no file whose only copy is damaged: retry its "
                           "archive work instead of asking for a redelivery")
        _cancel_work(granule, list(files), reason, "given up for a redelivery")
        Req.objects.filter(file_id__in=list(files), state=Req.State.FAILED).update(
            state=Req.State.CANCELLED, error=f"given up for a redelivery: {reason}"[:1000])
        _release_copies(list(files))
        paths = [cache_path(e.file) for e in CacheEntry.objects.filter(
            file_id__in=list(files)).select_related("file__granule__collection")]
        CacheEntry.objects.filter(file_id__in=list(files)).delete()
        _set_state(granule, Granule.State.FAILED)
        audit.record(by, REDELIVER, "granule", granule.pk, label=str(granule), reason=reason,
                     detail={"damaged": damaged})
        events.emit_many([events.granule_event("granule.failed", granule,
                                               damaged_files=damaged)])
        transaction.on_commit(lambda: [p.unlink(missing_ok=True) for p in paths])
    return damaged


def _reason(reason):
    if not isinstance(reason, str) or not reason.strip():
        raise DomainError("say why: a reason is required", "reason")
    if len(reason) > MAX_REASON or "\x00" in reason:
        raise DomainError(f"a reason has at most {MAX_REASON} characters of text", "reason")
    return reason.strip()


def _locked(granule, states, verb):
    locked = (Granule.objects.select_for_update().select_related("collection")
              .filter(pk=granule.pk).first())
    if locked is None:
        raise Conflict(f"granule {granule.pk} is gone")
    if locked.state not in states:
        raise Conflict(f"{locked} is {locked.state}; only a granule that is "
                       + " or ".join(states) + f" can be {verb}")
    return locked


def _set_state(granule, state):
    now = timezone.now()
    Granule.objects.filter(pk=granule.pk).update(state=state, updated_at=now)
    granule.state, granule.updated_at = state, now


def _cancel_work(granule, files, reason, verb="deleted"):
    busy = Req.objects.filter(file_id__in=files, state=Req.State.RUNNING)
    if busy.exists():
        raise Conflict(f"{granule} has files being moved right now ({busy.count()} archive "
                       f"requests running); try again once they are done")
    Req.objects.filter(file_id__in=files, state=Req.State.QUEUED).update(
        state=Req.State.CANCELLED, finished_at=timezone.now(),
        error=f"granule {verb}: {reason}"[:1000])


def _release_copies(files):
    """Release every copy of `files`; the verified ones leave their volumes' live counts."""
    copies = FileCopy.objects.select_for_update().filter(file_id__in=files).exclude(
        state=FileCopy.State.RELEASED)
    released, places = 0, []
    for volume_id, bucket_id, key, version_id, length, state in copies.values_list(
            "volume_id", "bucket_id", "key", "version_id", "length", "state"):
        if bucket_id:
            places.append((bucket_id, key, version_id))
            released += length if state == FileCopy.State.VERIFIED else 0
        elif state == FileCopy.State.VERIFIED:
            Volume.objects.filter(pk=volume_id).update(
                live_bytes=F("live_bytes") - length, file_count=F("file_count") - 1)
            released += length
    copies.update(state=FileCopy.State.RELEASED)
    # an object is removed once the release is committed; one the store keeps (it is down) is
    # found by reconciliation as an orphan and removed then
    buckets.remove_on_commit(places)
    return released
