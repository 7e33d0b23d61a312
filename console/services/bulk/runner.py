"""Doing a bulk job: idempotent on the job id, so a message delivered twice, two workers at
once, or a worker killed mid-chunk never act on an item twice.

An item is claimed by a conditional update of its row and acted on in the same transaction
that records its outcome: a second worker waits on that row and then finds it no longer
pending; a killed worker's transaction rolls back whole (claim, effect and outcome) and the
item is pending again for the sweep's next run. Items whose archive work is under way are
looked at again on every run until that work is final."""
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from backend.accounts import audit
from backend.archive.services import ArchiveError
from backend.catalog.models import Granule
from backend.errors import DomainError
from backend.nudges import send
from console.models import BulkItem, BulkJob

from . import actions

log = logging.getLogger(__name__)
S = BulkItem.State
J = BulkJob.State


def run(job_id):
    """Act on the job's pending items chunk by chunk, follow up its waiting ones, finish it
    when nothing is left. Returns the job's state."""
    job = BulkJob.objects.select_related(
        "target_group__silo", "target_bucket", "requested_by").filter(pk=job_id).first()
    if job is None or not job.active:
        return job.state if job else None
    if job.state == J.QUEUED:
        BulkJob.objects.filter(pk=job.pk, state=J.QUEUED).update(
            state=J.RUNNING, started_at=timezone.now())
    chunk_size = max(1, settings.GRANARY_BULK_CHUNK)
    while not _cancelled(job):
        pending = list(job.items.filter(state=S.PENDING).order_by("pk")
                       .values_list("pk", flat=True)[:chunk_size])
        if not pending:
            break
        for item_id in pending:
            act(job, item_id)
    follow_up(job)
    return finish_if_done(job)


def _cancelled(job):
    return BulkJob.objects.filter(pk=job.pk, cancelled_at__isnull=False).exists()


def act(job, item_id):
    """Do one item once: claim, effect and outcome commit together or not at all."""
    with transaction.atomic():
        now = timezone.now()
        if not BulkItem.objects.filter(pk=item_id, state=S.PENDING).update(updated_at=now):
            return False  # another worker did it, or the job was cancelled
        item = BulkItem.objects.get(pk=item_id)
        granule = (Granule.objects.select_related("collection").filter(pk=item.granule_id)
                   .first())
        if granule is None:
            result = actions.Result(actions.FAILED, "the granule is gone from the catalog")
        else:
            result = _start(job, granule)
        BulkItem.objects.filter(pk=item_id).update(
            state=result.state, outcome=result.outcome[:2000], requests=result.requests,
            updated_at=now)
    return True


def _start(job, granule):
    """The kind's effect, in a savepoint: a refusal (a DomainError from the service, an
    archive error) fails the item with its sentence and undoes any part of the effect."""
    try:
        with transaction.atomic():
            return actions.START[job.kind](job, granule)
    except (DomainError, ArchiveError) as exc:
        return actions.Result(actions.FAILED, str(getattr(exc, "detail", exc)))


def follow_up(job):
    """Settle the waiting items whose archive work is over."""
    chunk_size = max(1, settings.GRANARY_BULK_CHUNK)
    last = 0
    while True:
        items = list(job.items.filter(state=S.WAITING, pk__gt=last).order_by("pk")
                     .only("pk", "requests")[:chunk_size])
        if not items:
            return
        last = items[-1].pk
        now = timezone.now()
        for pk, (state, outcome) in actions.check(job.kind, items).items():
            BulkItem.objects.filter(pk=pk, state=S.WAITING).update(
                state=state, outcome=outcome[:2000], updated_at=now)


def finish_if_done(job):
    """Close the job once every item is final, with its outcome in the audit trail."""
    with transaction.atomic():
        job = BulkJob.objects.select_for_update().get(pk=job.pk)
        if not job.active:
            return job.state
        counts = dict(job.items.order_by().values_list("state").annotate(n=Count("pk")))
        if counts.get(S.PENDING) or counts.get(S.WAITING):
            return job.state
        if job.cancelled_at:
            job.state = J.CANCELLED
        elif counts.get(S.FAILED) and not (counts.get(S.DONE) or counts.get(S.SKIPPED)):
            job.state = J.FAILED
        else:
            job.state = J.DONE
        job.finished_at = timezone.now()
        job.save(update_fields=["state", "finished_at"])
        audit.record(None, f"bulk.{job.kind}.{job.state}", "bulk_job", job.pk,
                     label=str(job), reason=job.reason, detail={"items": counts})
    return job.state


def sweep():
    """Beat: run every unfinished job again (a lost message, a dead worker, archive work that
    has finished since). Running one twice at once is safe; returns how many were sent."""
    active = list(BulkJob.objects.filter(Q(state=J.QUEUED) | Q(state=J.RUNNING))
                  .values_list("pk", flat=True))
    for pk in active:
        send("console.run_bulk_job", pk)
    return len(active)
