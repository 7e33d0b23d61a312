"""How a stage request's files move: asked of the archive, recalled, kept, released.

Files ride the archive's recalls (one shared recall per file, grouped per volume and read in
position order by the tape scheduler, like every order's). A file is COMPLETED when its bytes
are in the cache, and kept there for its diskLifetime from then; FAILED, with the archive's
reason, when its recall failed or was cancelled or no copy can be read. The beat's sweep asks
again for anything a lost message left behind, so no file waits for ever.
"""
import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Min, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, FileCopy

from ..models import OrderItem, StageFile, StageRequest
from .orders import NEEDS_CACHE
from .staging import settle_stage

log = logging.getLogger(__name__)

CHUNK = 100  # files per transaction: a cancel waits for one chunk at most
# The bound stated beside the first ETA: this many times it, and never less than BOUND_MIN_S
BOUND_FACTOR, BOUND_MIN_S = 3, 3600
Recall = ArchiveRequest.State


def refresh_stage(stage_id):
    """Ask the archive for the request's live files, chunk by chunk (idempotent); state the
    bound after the first pass, fail what is still live past it."""
    stage = StageRequest.objects.filter(pk=stage_id).select_related("user").first()
    if stage is None:
        return 0
    if stage.bound_at is not None and stage.bound_at <= timezone.now():
        enforce_bound(stage)
    ids = list(stage.files.filter(state__in=StageFile.LIVE).values_list("pk", flat=True))
    for start in range(0, len(ids), CHUNK):
        with transaction.atomic():
            files = list(StageFile.objects.select_for_update()
                         .filter(pk__in=ids[start:start + CHUNK], state__in=StageFile.LIVE)
                         .select_related("file__granule__collection"))
            _advance(stage, files)
    if stage.bound_at is None:
        state_bound(stage)
    settle_stage(stage.pk)
    return len(ids)


def bound_s(eta):
    """The bound stated beside an ETA: BOUND_FACTOR times it, within [BOUND_MIN_S,
    GRANARY_STAGE_BOUND_MAX_S]; the longest when nobody can estimate (no drive online)."""
    if eta is None:
        return settings.GRANARY_STAGE_BOUND_MAX_S
    return min(settings.GRANARY_STAGE_BOUND_MAX_S, max(BOUND_MIN_S, BOUND_FACTOR * eta))


def state_bound(stage):
    """Fix the request's bound once, from its first ETA (idempotent: a bound never moves)."""
    bound = timezone.now() + timedelta(seconds=bound_s(eta_s(stage.pk)))
    StageRequest.objects.filter(pk=stage.pk, bound_at__isnull=True).update(bound_at=bound)


def enforce_bound(stage):
    """Past its bound, a file still not on disk fails with the reason (its recall cancelled
    when nobody else needs it): a request never waits for ever."""
    with transaction.atomic():
        live = StageFile.objects.select_for_update().filter(request_id=stage.pk,
                                                            state__in=StageFile.LIVE)
        files = list(live)
        if not files:
            return 0
        reason = (f"not on disk by the bound this request stated "
                  f"({stage.bound_at:%Y-%m-%d %H:%M:%S} UTC); ask again to retry")
        live.update(state=StageFile.State.FAILED, error=reason, finished_at=timezone.now())
        drop_recalls(files, f"stage request {stage.pk}: past its bound")
        settle_stage(stage.pk)
    return len(files)


def _advance(stage, files):
    """Move files along from their recalls' states; ask the archive for those with none."""
    now, before = timezone.now(), {f.pk: _row(f) for f in files}
    recalls = {r["pk"]: r for r in ArchiveRequest.objects.filter(
        pk__in=[f.recall_request_id for f in files if f.recall_request_id])
        .values("pk", "state", "error", "started_at")}
    asking = []
    for f in files:
        recall = recalls.get(f.recall_request_id)
        if recall is None or recall["state"] == Recall.DONE:
            asking.append(f)
        elif recall["state"] in (Recall.FAILED, Recall.CANCELLED):
            _fail(f, now, f"recall {recall['state']}: {recall['error'] or 'no reason given'}")
        elif recall["state"] == Recall.RUNNING and f.state != StageFile.State.STARTED:
            f.state, f.started_at = StageFile.State.STARTED, recall["started_at"] or now
    answers = archive.make_available([f.file for f in asking], requested_by=stage.user,
                                     priority=stage.priority, share="stage")
    for f, answer in zip(asking, answers, strict=True):
        if answer.ready:
            _complete(f, now)
        elif answer.error:
            _fail(f, now, answer.error)
        else:
            f.recall_request_id = answer.request_id
    _save_changed(files, before)
    _keep([f for f in files if f.state == StageFile.State.COMPLETED])
    if stage.started_at is None and any(f.started_at for f in files):
        StageRequest.objects.filter(pk=stage.pk, started_at__isnull=True).update(
            started_at=min(f.started_at for f in files if f.started_at))


ROW = ("state", "error", "recall_request_id", "on_disk", "started_at", "finished_at",
       "kept_until")


def _row(f):
    return tuple(getattr(f, name) for name in ROW)


def _save_changed(files, before):
    """Write only the rows and fields a pass changed (a first pass sets only the recalls; a
    bulk update of every field of every row cost more than asking the archive)."""
    changed = [f for f in files if _row(f) != before[f.pk]]
    fields = sorted({name for f in changed for name, old, new
                     in zip(ROW, before[f.pk], _row(f), strict=True) if old != new})
    if changed:
        StageFile.objects.bulk_update(changed, fields)


def _fail(f, now, reason):
    f.state, f.error, f.finished_at = StageFile.State.FAILED, reason, now


def _complete(f, now):
    f.state, f.on_disk, f.finished_at = StageFile.State.COMPLETED, True, now
    f.started_at = f.started_at or now
    f.kept_until = now + timedelta(seconds=f.disk_lifetime_s)


def _keep(files):
    """Keep each completed file in the cache for its lifetime (never shortening a longer
    keep); a lifetime of zero keeps nothing."""
    by_until = {}
    for f in files:
        if f.kept_until and f.disk_lifetime_s:
            by_until.setdefault(f.kept_until, []).append(f.file_id)
    for until, file_ids in by_until.items():
        archive.keep_until(file_ids, until)


def on_files_recalled(file_ids):
    """Recalls landed: the stage files waiting for them complete now, not at the next sweep.
    A few statements whatever the number of files and requests waiting (the mover runs this
    for every batch of recalls it commits): the files start when their recall did and complete
    in one update per disk lifetime; each request that had no file left settles."""
    now = timezone.now()
    with transaction.atomic():
        rows = list(StageFile.objects.select_for_update().filter(
            file_id__in=list(file_ids), state__in=StageFile.LIVE).order_by("pk")
            .values_list("pk", "request_id", "disk_lifetime_s", "recall_request_id", "file_id"))
        if not rows:
            return
        _started(rows, now)
        for lifetime in {r[2] for r in rows}:
            until = now + timedelta(seconds=lifetime)
            mine = [r for r in rows if r[2] == lifetime]
            StageFile.objects.filter(pk__in=[r[0] for r in mine]).update(
                state=StageFile.State.COMPLETED, on_disk=True, finished_at=now,
                kept_until=until)
            if lifetime:
                archive.keep_until(sorted({r[4] for r in mine}), until)
        for stage_id in sorted({r[1] for r in rows}):
            settle_stage(stage_id)


def _started(rows, now):
    """Stage files not started yet start when their file's recall did (now, without one), and
    their requests with the earliest of their files: two statements whatever the batch."""
    recall_start = ArchiveRequest.objects.filter(
        pk=OuterRef("recall_request_id")).values("started_at")[:1]
    StageFile.objects.filter(pk__in=[r[0] for r in rows], started_at__isnull=True).update(
        started_at=Coalesce(Subquery(recall_start), Value(now)))
    first = (StageFile.objects.filter(request_id=OuterRef("pk"), started_at__isnull=False)
             .order_by("started_at").values("started_at")[:1])
    StageRequest.objects.filter(pk__in={r[1] for r in rows}, started_at__isnull=True).update(
        started_at=Subquery(first))


def end_keeps(files):
    """Released or deleted stage files: their keep ends, unless another unreleased stage
    file or a live order item still needs the file (or a longer keep holds it)."""
    ids = [f.pk for f in files]
    file_ids = {f.file_id for f in files}
    held = set(StageFile.objects.filter(
        file_id__in=file_ids, state=StageFile.State.COMPLETED, released=False,
        kept_until__gt=timezone.now()).exclude(pk__in=ids).values_list("file_id", flat=True))
    held |= set(OrderItem.objects.filter(NEEDS_CACHE, file_id__in=file_ids)
                .values_list("file_id", flat=True))
    for f in files:
        if f.file_id not in held and f.kept_until:
            archive.end_keep(f.file_id, f.kept_until)


def drop_recalls(files, reason):
    """Cancel the queued recalls of stage files just cancelled or deleted, unless another live
    stage file or a waiting order item still needs the file (the archive locks the recalls
    before it asks, so a needer arriving meanwhile is seen or queues its own recall)."""
    ids = {f.recall_request_id for f in files if f.recall_request_id}
    if not ids:
        return 0
    gone = [f.pk for f in files]

    def still_needed(file_ids):
        staged = (StageFile.objects.filter(file_id__in=file_ids, state__in=StageFile.LIVE)
                  .exclude(pk__in=gone).values_list("file_id", flat=True))
        ordered = OrderItem.objects.filter(file_id__in=file_ids, state=OrderItem.State.WAITING,
                                           in_cache=False).values_list("file_id", flat=True)
        return set(staged) | set(ordered)

    return archive.cancel_recalls(ids, still_needed, reason)


def sweep_stages():
    """Beat: refresh every request with live files (a lost message costs a sweep, no more)."""
    open_ids = (StageRequest.objects.filter(completed_at__isnull=True)
                .values_list("pk", flat=True))
    for stage_id in open_ids:
        try:
            refresh_stage(stage_id)
        except Exception:
            log.exception("refreshing stage request %s", stage_id)


def state_counts(stage_ids):
    """{stage id: {state: count}} for the console and the API."""
    counts = {}
    rows = (StageFile.objects.filter(request_id__in=stage_ids).order_by()
            .values("request_id", "state").annotate(n=Count("pk")))
    for row in rows:
        counts.setdefault(row["request_id"], {})[row["state"]] = row["n"]
    return counts


def volumes_planned(stage_id):
    """Distinct tape volumes holding the first tape copy of the request's files still to
    stage: about the mounts they need (object-store copies mount nothing)."""
    live = StageFile.objects.filter(request_id=stage_id, state__in=StageFile.LIVE)
    return (FileCopy.objects.filter(file_id__in=live.values("file_id"),
                                    state=FileCopy.State.VERIFIED, volume__isnull=False,
                                    segment=0)
            .order_by().values("file_id").annotate(first=Min("volume_id"))
            .values("first").distinct().count())


def eta_s(stage_id):
    """About how long until the request's last file is on disk (0 when none is left)."""
    recalls = StageFile.objects.filter(request_id=stage_id, state__in=StageFile.LIVE,
                                       recall_request_id__isnull=False)
    return archive.recalls_eta_s(recalls.values("recall_request_id"))


def cancel_all(user, stage_id):
    """An owner or an operator cancels every file of a request not yet staged."""
    from django.utils import timezone as tz

    from .staging import get_stage

    with transaction.atomic():
        stage = get_stage(user, stage_id)
        live = stage.files.filter(state__in=StageFile.LIVE)
        files = list(live.only("pk", "file_id", "recall_request_id"))
        reason = "Cancelled by " + ("an operator" if stage.user_id != user.pk else "its owner")
        live.update(state=StageFile.State.CANCELLED, finished_at=tz.now(), error=reason)
        drop_recalls(files, f"stage request {stage.pk}: {reason.lower()}")
        settle_stage(stage.pk)
        stage.refresh_from_db()
    return stage
