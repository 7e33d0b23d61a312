"""Distribution's promises about stage requests, checked with the archive's own (tests after
each step, reconciliation):

- a disk-lifetime keep a stage file set on a cache entry (CacheEntry.keep_until equal to the
  file's kept_until) lasts only while something still holds the file: a stage file completed
  and not released, or an order item that needs the cache. A keep left behind when a release
  did not end it (a worker died between the two) holds cache that nobody will read: its repair
  ends it as a release would (staging_progress.end_keeps);
- a request past its stated bound has no file still waiting. The beat's sweep enforces the
  bound every minute, so only a request BOUND_GRACE_S past it is judged; its repair fails the
  files with the bound's reason as the sweep would (staging_progress.enforce_bound).

A request deleted by its client takes its stage files with it, so a keep it left cannot be
told from a collection's data-pool residency and is not judged here.
"""
from datetime import timedelta

from django.db.models import Exists, OuterRef
from django.utils import timezone

from backend.archive import services as archive
from backend.archive.models import CacheEntry

from ..models import OrderItem, StageFile, StageRequest
from .orders import NEEDS_CACHE
from .staging_progress import end_keeps, enforce_bound

STAGE_KEEP_ORPHAN = "stage_keep_orphan"
STAGE_PAST_BOUND = "stage_past_bound"
BOUND_GRACE_S = 600   # ten sweeps of the beat (distribution-sweep-stages runs every minute)


def _orphans(now, file_ids=None):
    """Released stage files whose keep still holds their file's cache entry, held by nothing."""
    holders = StageFile.objects.filter(file_id=OuterRef("file_id"), released=False,
                                       state=StageFile.State.COMPLETED, kept_until__gt=now)
    kept = CacheEntry.objects.filter(file_id=OuterRef("file_id"),
                                     keep_until=OuterRef("kept_until"))
    found = (StageFile.objects.filter(released=True, kept_until__gt=now)
             .filter(Exists(kept)).exclude(Exists(holders))
             .exclude(file_id__in=OrderItem.objects.filter(NEEDS_CACHE).values("file_id")))
    if file_ids is not None:
        found = found.filter(file_id__in=file_ids)
    seen, out = set(), []
    for row in found.select_related("file").order_by("pk"):
        if row.file_id not in seen:   # one discrepancy per file, whoever released it
            seen.add(row.file_id)
            out.append(row)
    return out


def orphan_keeps(now=None):
    now = now or timezone.now()
    return [archive.Violation(
        STAGE_KEEP_ORPHAN,
        f"{f.file.name} is kept in the cache until {f.kept_until:%Y-%m-%d %H:%M} UTC for stage "
        f"request {f.request_id}, which released it; nothing else holds it",
        file_id=f.file_id, extra={"stage": str(f.request_id), "stage_file": f.pk})
        for f in _orphans(now)]


def past_bound(now=None):
    now = now or timezone.now()
    late = StageRequest.objects.filter(
        completed_at__isnull=True, bound_at__lte=now - timedelta(seconds=BOUND_GRACE_S),
    ).filter(Exists(StageFile.objects.filter(request_id=OuterRef("pk"),
                                             state__in=StageFile.LIVE)))
    return [archive.Violation(
        STAGE_PAST_BOUND,
        f"stage request {stage.pk} stated it would be done by {stage.bound_at:%Y-%m-%d %H:%M:%S}"
        " UTC and still has files waiting", extra={"stage": str(stage.pk)})
        for stage in late.order_by("bound_at")]


def check():
    return orphan_keeps() + past_bound()


def end_orphan_keep(discrepancy):
    """End a keep left behind, if it still is one (nothing took the file since)."""
    f = StageFile.objects.filter(pk=discrepancy.extra.get("stage_file")).first()
    if f is None:
        return "the stage file is gone"
    if not _orphans(timezone.now(), file_ids=[f.file_id]):
        return "kept: something holds the file now, or the keep ended"
    end_keeps([f])
    return f"the keep until {f.kept_until:%Y-%m-%d %H:%M} UTC ended"


def fail_past_bound(discrepancy):
    stage = StageRequest.objects.filter(pk=discrepancy.extra.get("stage")).first()
    if stage is None:
        return "the stage request is gone"
    if stage.bound_at is None or stage.bound_at > timezone.now():
        return "its bound is not past"
    failed = enforce_bound(stage)
    return f"failed {failed} files past the bound" if failed else "no file was waiting"


def register():
    archive.register_check("distribution.stages", check, repairs={
        STAGE_KEEP_ORPHAN: ("end the keep", end_orphan_keep),
        STAGE_PAST_BOUND: ("fail the files still waiting, with the bound's reason",
                           fail_past_bound),
    })
