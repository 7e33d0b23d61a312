"""Bulk jobs: made from a selection (after an optional dry run), listed with their progress,
cancelled. The work itself is the runner's."""
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from backend.accounts import audit
from backend.archive.models import Bucket, VolumeGroup
from backend.catalog.models import Granule
from backend.errors import Conflict, DomainError
from backend.nudges import send_on_commit
from console.models import BulkItem, BulkJob

from ...reasons import normalise
from .selection import IN_CHUNK

MAX_REASON = 2000
S = BulkItem.State


def target_group(kind, name):
    """The copy target a move writes to, a volume group or a bucket (required for a move,
    refused for other kinds)."""
    if kind != BulkJob.Kind.MOVE:
        if name not in (None, ""):
            raise DomainError("target_group is only for a move", "target_group")
        return None
    if not name:
        raise DomainError("a move needs target_group: the volume group or bucket to write to",
                          "target_group")
    target = (VolumeGroup.objects.filter(name=name).select_related("silo").first()
              or Bucket.objects.filter(name=name).first())
    if target is None:
        raise DomainError(f"no volume group or bucket {name!r}", "target_group")
    return target


def dry_run(kind, selection):
    """What the job would take: granules and bytes, and the lines that name no granule.
    Nothing is made or queued."""
    granules, nbytes = selection.totals()
    return {"dry_run": True, "kind": kind, "granules": granules, "bytes": nbytes,
            "unknown": selection.unknown, "unknown_count": selection.unknown_count,
            "duplicates": selection.duplicates}


def create(kind, selection, *, by, reason, query=None, group=None):
    """Make the job and one item per granule, recorded in the audit trail, and start it once
    committed. A list with unknown lines is refused whole (each line reported)."""
    reason = (reason or "").strip()
    if not reason:
        raise DomainError("say why (reason): it is kept with the job", "reason")
    if len(reason) > MAX_REASON:
        raise DomainError(f"reason must be at most {MAX_REASON} characters", "reason")
    if selection.unknown_count:
        raise DomainError(f"{selection.unknown_count} lines name no granule; fix or remove "
                          "them (the dry run lists them)",
                          errors=[{"field": f"line {u['line']}", "detail":
                                   f"{u['value']}: {u['detail']}"} for u in selection.unknown])
    if not selection.granule_ids:
        raise DomainError("the selection holds no granule", "query" if query else "ids")
    with transaction.atomic():
        job = BulkJob.objects.create(
            kind=kind, query=query, ids_given=selection.lines,
            target_group=group if getattr(group, "medium", "") == "tape" else None,
            target_bucket=group if getattr(group, "medium", "") == "object" else None,
            reason=reason, requested_by=by, requested_by_name=getattr(by, "username", ""))
        total = _make_items(job, selection.granule_ids)
        job.granules_total, job.bytes_total = len(selection.granule_ids), total
        job.save(update_fields=["granules_total", "bytes_total"])
        audit.record(by, f"bulk.{kind}", "bulk_job", job.pk, label=str(job), reason=reason,
                     detail={"query": query, "ids_given": selection.lines,
                             "granules": job.granules_total, "bytes": total,
                             "target_group": group.name if group else None})
        _kick(job.pk)
    return job


def _make_items(job, granule_ids):
    total = 0
    for at in range(0, len(granule_ids), IN_CHUNK):
        chunk = granule_ids[at:at + IN_CHUNK]
        rows = {g.pk: g for g in Granule.objects.filter(pk__in=chunk).select_related(
            "collection").only("pk", "granule_id", "version", "total_size",
                               "collection__short_name", "collection__version")}
        items = [BulkItem(job=job, granule_id=pk, bytes=rows[pk].total_size,
                          label=f"{rows[pk].collection.key}:{rows[pk].granule_id} "
                                f"v{rows[pk].version}") for pk in chunk if pk in rows]
        total += sum(i.bytes for i in items)
        BulkItem.objects.bulk_create(items, batch_size=IN_CHUNK)
    return total


def _kick(job_id):
    send_on_commit("console.run_bulk_job", job_id)


def cancel(job, *, by, reason=""):
    """Stop a job: items not yet started are cancelled now, a worker stops at its next item;
    archive work already queued (recalls, audits, copies) runs on and its items finish."""
    with transaction.atomic():
        job = BulkJob.objects.select_for_update().get(pk=job.pk)
        if not job.active:
            raise Conflict(f"job {job.pk} is {job.state}; only a queued or running job stops")
        now = timezone.now()
        dropped = job.items.filter(state=S.PENDING).update(
            state=S.CANCELLED, outcome="cancelled before it was started", updated_at=now)
        job.cancelled_at = now
        job.save(update_fields=["cancelled_at"])
        audit.record(by, "bulk.cancel", "bulk_job", job.pk, label=str(job), reason=reason,
                     detail={"items_cancelled": dropped})
        _kick(job.pk)
    return job


def with_counts(jobs):
    """Jobs annotated with their items per state (one query)."""
    return jobs.annotate(**{f"n_{state}": Count("items", filter=Q(items__state=state))
                            for state in S.values})


def outcome_groups(job, states=(BulkItem.State.SKIPPED, BulkItem.State.FAILED)):
    """Why items were skipped or failed, grouped by the pattern of their outcome (ids, names
    and numbers taken out), the largest group first: [{state, pattern, example, count}]."""
    groups = {}
    rows = (job.items.filter(state__in=states).order_by().values("state", "outcome")
            .annotate(n=Count("pk")))
    for row in rows.iterator(chunk_size=2000):
        outcome = row["outcome"] or "no reason was recorded"
        key = (row["state"], normalise(outcome))
        group = groups.setdefault(key, {"state": row["state"], "pattern": key[1],
                                        "example": outcome, "count": 0})
        group["count"] += row["n"]
    return sorted(groups.values(), key=lambda g: (-g["count"], g["state"], g["pattern"]))
