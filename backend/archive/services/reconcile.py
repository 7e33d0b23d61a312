"""Reconciliation: catalog <-> cache <-> volumes (read from the volume files) <-> copies.

A run checks every promise of `backend.archive.invariants`, the bytes included (every volume,
copy and cached file in a full run; a random sample of copies and cached files otherwise),
records each discrepancy with the objects at fault and the safe repair where one exists (and,
apart, its notes: what breaks no promise, as bytes past a volume's end of data), and repairs
them when asked. Runs are rows: a task runs one by id, and running it again after a
crash starts it over.
"""
import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from kombu.exceptions import OperationalError

from backend.errors import Conflict, DomainError
from backend.events import services as events
from backend.nudges import task_named

from .. import invariants
from ..models import Discrepancy, Reconciliation
from . import repairs

Run = Reconciliation
log = logging.getLogger(__name__)


def create(full=False, sample=None, repair=False, requested_by=None):
    """A run to do, not yet started: all the bytes, or a sample of `sample` copies and cached
    files (the configured daily sample when none is given)."""
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int)
                               or sample < 1):
        raise DomainError("sample must be a positive number of copies", field="sample")
    return Run.objects.create(
        scope=Run.Scope.FULL if full else Run.Scope.SAMPLE,
        sample=None if full else (sample or settings.GRANARY_RECONCILE_SAMPLE),
        repair=bool(repair), requested_by=requested_by)


def start(full=False, sample=None, repair=False, requested_by=None):
    """Create a run and hand it to the archive worker (API). The message is a nudge: a run
    it never reaches is done by the next daily one (`run_pending`)."""
    current = create(full, sample, repair, requested_by)
    transaction.on_commit(lambda: _enqueue(current.pk))
    return current


def _enqueue(run_id):
    try:
        task_named("backend.archive.reconcile").delay(run_id)
    except OperationalError:
        log.warning("reconciliation %s waits for the broker; the next daily run does it", run_id)


def run_pending():
    """Do the runs no worker did: queued ones, and running ones whose worker died."""
    stale = timezone.now() - timedelta(seconds=settings.GRANARY_RECONCILE_STALE_S)
    pending = Run.objects.filter(Q(state=Run.State.QUEUED)
                                 | Q(state=Run.State.RUNNING, started_at__lt=stale))
    return [run(pk) for pk in pending.order_by("pk").values_list("pk", flat=True)]


def reconcile(full=False, sample=None, repair=False, requested_by=None):
    """Create a run and do it here (the command line, tests). Returns the finished run."""
    return run(create(full, sample, repair, requested_by).pk)


def run(run_id):
    """Do run `run_id` unless it is finished: check, record what it finds, repair if asked."""
    with transaction.atomic():
        current = Run.objects.select_for_update().get(pk=run_id)
        stale = timezone.now() - timedelta(seconds=settings.GRANARY_RECONCILE_STALE_S)
        if current.state in (Run.State.DONE, Run.State.FAILED) or (
                current.state == Run.State.RUNNING and current.started_at > stale):
            return current   # finished, or a live worker is on it
        current.discrepancies.all().delete()   # an attempt that died left them half written
        current.state, current.started_at = Run.State.RUNNING, timezone.now()
        current.save(update_fields=["state", "started_at"])
    tally = invariants.Tally()
    try:
        found = invariants.check_all(
            read_bytes=True, sample=current.sample if current.scope == Run.Scope.SAMPLE else None,
            tally=tally)
    except Exception as exc:
        Run.objects.filter(pk=run_id).update(state=Run.State.FAILED, error=str(exc)[:2000],
                                             finished_at=timezone.now())
        raise
    _record(current, found, tally)
    current.refresh_from_db()
    if current.repair:
        repair(current)
    return current


def _record(current, found, tally):
    with transaction.atomic():
        Discrepancy.objects.bulk_create([
            Discrepancy(run=current, kind=v.kind, detail=v.message, file_id=v.file_id,
                        copy_id=v.copy_id, volume_id=v.volume_id, request_id=v.request_id,
                        extra=v.extra, repair=repair)
            for v, repair in zip(found, repairs.plans(found), strict=True)], batch_size=500)
        Run.objects.filter(pk=current.pk).update(
            state=Run.State.DONE, finished_at=timezone.now(), volumes_read=tally.volumes,
            copies_read=tally.copies, cache_files_read=tally.cache_files,
            discrepancy_count=len(found), notes=tally.notes)
        if found:
            events.emit("reconciliation.discrepancies", f"reconciliations/{current.pk}", {
                "reconciliation": current.pk, "discrepancies": len(found),
                "kinds": sorted({v.kind for v in found}),
                "links": {"reconciliation": events.link(
                    f"archive/reconciliation/{current.pk}/")}})


def repair(current=None, ids=None):
    """Apply the repairs of a finished run's discrepancies (those named by `ids`, or all), or
    of the discrepancies `ids` of any finished run. Each is applied once: it is claimed before
    it is applied, so two operators repairing at once do not both apply it. Returns the
    discrepancies repaired now."""
    if current is not None and current.state != Run.State.DONE:
        raise Conflict(f"reconciliation {current.pk} is {current.state}; only a finished run "
                       "can be repaired")
    if current is None and ids is None:
        raise DomainError("name a reconciliation or the discrepancies to repair")
    chosen = (current.discrepancies.all() if current is not None
              else Discrepancy.objects.filter(run__state=Run.State.DONE))
    if ids is not None:
        ids = set(ids)
        known = set(chosen.filter(pk__in=ids).values_list("pk", flat=True))
        if ids - known:
            where = f"reconciliation {current.pk}" if current else "a finished reconciliation"
            raise DomainError(f"no discrepancies {sorted(ids - known)[:20]} in {where}",
                              field="ids")
        chosen = chosen.filter(pk__in=ids)
    done = []
    for discrepancy in chosen.filter(repaired_at__isnull=True).exclude(repair="").order_by("pk"):
        if not Discrepancy.objects.filter(pk=discrepancy.pk, repaired_at__isnull=True).update(
                repaired_at=timezone.now()):
            continue   # another repair took it
        try:
            outcome = repairs.apply(discrepancy)
        except Exception:
            Discrepancy.objects.filter(pk=discrepancy.pk).update(repaired_at=None)
            raise
        Discrepancy.objects.filter(pk=discrepancy.pk).update(outcome=outcome[:200])
        done.append(discrepancy)
    return done
