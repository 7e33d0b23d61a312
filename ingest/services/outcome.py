"""Final states and counters. The request row is locked first, always, so the counters
of concurrent chunks and archive signals add up."""
import logging

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from backend.catalog import bulk
from backend.catalog.models import Collection, Granule
from backend.events import services as events

from .. import pdr
from ..models import IngestGranule, IngestRequest
from .accept import enqueue_request
from .pdr_flow import answer_pdr_of
from .states import FINAL, G, R

log = logging.getLogger(__name__)


def fail(row, disposition, reason, files=None):
    """Mark a granule failed with why; it no longer holds up its request. `files` names the
    files at fault ({name: disposition}), kept in the spec for the PAN; without it the whole
    granule is at fault."""
    now = timezone.now()
    extra = {}
    if files or "failed_files" in row.spec:
        row.spec = {**row.spec, "failed_files": dict(files or {})}
        extra["spec"] = row.spec
    with transaction.atomic():
        request = IngestRequest.objects.select_for_update().get(pk=row.request_id)
        updated = IngestGranule.objects.filter(pk=row.pk).exclude(state__in=FINAL).update(
            state=G.FAILED, disposition=disposition, reason=reason[:2000], lease_owner="",
            lease_until=None, admitted=False, updated_at=now, **extra)
        if updated:
            request.failed_count += 1
            request.bytes_done += row.bytes_total
            _finish_if_done(request, now)
    row.state, row.disposition, row.reason = G.FAILED, disposition, reason


def archive_gave_up(granule_id, reason):
    """The archive gave the catalog granule `granule_id` up (its only copy was damaged): the
    ingest rows archiving it fail with the reason, so their requests finish and answer (a
    PAN for a PDR), and the provider can deliver it again. Returns how many failed."""
    rows = list(IngestGranule.objects.filter(catalog_granule_id=granule_id, state=G.ARCHIVING))
    for row in rows:
        fail(row, pdr.ARCHIVE_ERROR, reason)
    return len(rows)


def mark_archived(request_id, pks):
    """The request's granules `pks` the archive holds now: ARCHIVED, and counted."""
    now = timezone.now()
    with transaction.atomic():
        request = IngestRequest.objects.select_for_update().get(pk=request_id)
        sizes = bulk.update_returning(
            IngestGranule, pks, {"state": G.ARCHIVED, "archived_at": now,
                                 "bytes_done": ('"bytes_total"',), "admitted": True,
                                 "updated_at": now},
            ["bytes_total"], where="state = %s", params=[G.ARCHIVING])
        updated, nbytes = len(sizes), sum(size for (size,) in sizes)
        if updated:
            request.archived_count += updated
            request.bytes_done += nbytes
            _finish_if_done(request, now)
    return updated


def _finish_if_done(request, now):
    """Save the locked request's counters and close it once every granule is final."""
    if request.archived_count + request.failed_count >= request.granule_count:
        if not request.finished:
            request.state = R.COMPLETED if not request.failed_count else R.FAILED
            request.finished_at = now
            events.emit("ingest.request.finished", f"ingest/requests/{request.pk}", {
                "request": request.pk, "state": request.state,
                "archived": request.archived_count, "failed": request.failed_count,
                "links": {"request": events.link(f"ingest/requests/{request.pk}/")}},
                provider=request.provider)
            if request.way == IngestRequest.Way.PDR:
                request_id = request.pk
                transaction.on_commit(lambda: answer_pdr_of(request_id))
    elif request.state != R.RUNNING:
        request.state, request.finished_at = R.RUNNING, None
    request.save(update_fields=["state", "failed_count", "archived_count", "bytes_done",
                                "finished_at", "updated_at"])


def on_granules_archived(sender, granules, **kwargs):
    """Receiver of archive.signals.granules_archived: one update per request for the whole
    batch. It never raises into the storage manager: what it misses, sweep() finds."""
    try:
        rows = IngestGranule.objects.filter(catalog_granule__in=[g.pk for g in granules],
                                            state=G.ARCHIVING)
        by_request = {}
        for pk, request_id in rows.values_list("pk", "request_id"):
            by_request.setdefault(request_id, []).append(pk)
        for request_id, pks in by_request.items():
            mark_archived(request_id, pks)
        _retire_replaced([g for g in granules if g.replaces_id])
    except Exception:
        log.exception("marking %d archived granules failed; the sweeper will", len(granules))


def _retire_replaced(granules):
    """Once new versions are archived, the ones they replace are superseded (or deleted, for a
    collection whose policy replaces)."""
    for granule in granules:
        policy = Granule.objects.filter(pk=granule.pk).values_list(
            "collection__duplicate_policy", flat=True).first()
        state = (Granule.State.DELETED if policy == Collection.DuplicatePolicy.REPLACE
                 else Granule.State.SUPERSEDED)
        Granule.objects.filter(pk=granule.replaces_id, state=Granule.State.ARCHIVED).update(
            state=state, updated_at=timezone.now())


def retry(request, positions=None):
    """Send failed granules (all, or those at `positions`) round again; returns how many."""
    now = timezone.now()
    with transaction.atomic():
        request = IngestRequest.objects.select_for_update().get(pk=request.pk)
        rows = IngestGranule.objects.filter(request=request, state=G.FAILED)
        if positions is not None:
            rows = rows.filter(position__in=positions)
        nbytes = rows.aggregate(total=Sum("bytes_total"))["total"] or 0
        count = rows.update(state=G.RECEIVED, disposition="", reason="", bytes_done=0,
                            catalog_granule=None, admitted=False, lease_owner="", lease_until=None,
                            attempts=0, updated_at=now)
        if count:
            request.failed_count -= count
            request.bytes_done -= nbytes
            _finish_if_done(request, now)
            enqueue_request(request.pk)
    return count
