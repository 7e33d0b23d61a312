"""Periodic work (beat): nothing stays stuck, and staged copies go after the retention."""
import uuid
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from backend import leases
from backend.catalog.models import Granule

from ..models import IngestGranule, IngestRequest, Pdr
from .outcome import mark_archived
from .pdr_flow import answer_pdr_of
from .pipeline import claimable, kick, lease_keeper
from .registration import admit_many, record_moves
from .staging import staged_path, staging_area
from .states import G, R


def admit_waiting(limit=500):
    """Offer the archive again the granules that waited for cache room (or whose worker died
    between registration and admission)."""
    now = timezone.now()
    token = uuid.uuid4().hex
    pks = list(IngestGranule.objects.filter(
        state=G.ARCHIVING, admitted=False, catalog_granule__isnull=False,
        catalog_granule__state=Granule.State.REGISTERED,
    ).filter(leases.free(now)).order_by("updated_at").values_list("pk", flat=True)[:limit])
    if not pks:
        return 0
    leases.take(IngestGranule.objects.filter(pk__in=pks), settings.GRANARY_INGEST_LEASE_S, now,
                lease_owner=token)
    moves = []
    try:
        rows = list(IngestGranule.objects.filter(lease_owner=token)
                    .select_related("catalog_granule__collection", "request__provider")
                    .order_by("updated_at"))
        areas = {r.request.provider_id: staging_area(r.request.provider) for r in rows}
        with lease_keeper(token):
            taken = admit_many([(r, r.catalog_granule) for r in rows], areas, {}, moves)
    finally:
        IngestGranule.objects.filter(lease_owner=token).update(lease_owner="", lease_until=None)
        record_moves(moves)
    return sum(1 for t in taken if t)


def unsent(now):
    """Requests with granules no worker ever took, waiting longer than GRANARY_INGEST_UNSENT_S
    (stored while the broker was away, or their message lost): marked as sent again now, so a
    request still queued behind others gets one more message per period, not one per sweep."""
    cutoff = now - timedelta(seconds=settings.GRANARY_INGEST_UNSENT_S)
    ids = set(claimable(now).filter(state=G.RECEIVED, attempts=0, updated_at__lt=cutoff,
                                    request__updated_at__lt=cutoff)
              .values_list("request_id", flat=True).distinct()[:1000])
    IngestRequest.objects.filter(pk__in=ids).update(updated_at=now)
    return ids


def lapsed(now):
    """Requests with granules whose worker's lease ran out: that worker died (a live one's keeper
    renews it), so they are sent again now, not once they have been quiet for the stale time.
    The lapsed lease is cleared, so the next sweep does not send them again; should this message
    be lost, the stale time brings them back."""
    held = claimable(now).filter(lease_until__isnull=False)
    ids = set(held.order_by("request_id").values_list("request_id", flat=True).distinct()[:1000])
    held.filter(request_id__in=ids).update(lease_until=None)
    return ids


def sweep():
    """Beat: nothing stays stuck. Re-kick granules whose worker died, admit waiting ones,
    finish granules whose archive signal was missed and requests whose last granule ended."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.GRANARY_INGEST_STALE_S)
    request_ids = set(claimable(now).filter(updated_at__lt=stale)
                      .values_list("request_id", flat=True).distinct()[:1000])
    request_ids |= unsent(now) | lapsed(now)
    for request_id in request_ids:
        kick(request_id)
    admitted = admit_waiting()
    missed = IngestGranule.objects.filter(state=G.ARCHIVING,
                                          catalog_granule__state=Granule.State.ARCHIVED)
    by_request = {}
    for pk, request_id in missed.values_list("pk", "request_id")[:5000]:
        by_request.setdefault(request_id, []).append(pk)
    for request_id, pks in by_request.items():
        mark_archived(request_id, pks)
    for row in Pdr.objects.filter(state=Pdr.State.ACCEPTED,
                                  request__state__in=[R.COMPLETED, R.FAILED]):
        answer_pdr_of(row.request_id)
    return {"kicked": len(request_ids), "admitted": admitted,
            "archived": sum(len(p) for p in by_request.values())}


def clean_staging(limit=2000):
    """Drop staged copies of granules archived longer ago than the retention, unless the
    provider has changed the file since."""
    cutoff = timezone.now() - timedelta(seconds=settings.GRANARY_STAGING_RETENTION_S)
    rows = list(IngestGranule.objects.filter(
        state=G.ARCHIVED, staging_removed=False, archived_at__lte=cutoff,
    ).select_related("request__provider")[:limit])
    removed = 0
    for row in rows:
        area = staging_area(row.request.provider)
        for f in row.spec["files"]:
            path = staged_path(area, f["path"])
            try:
                st = path.stat() if path is not None else None
            except FileNotFoundError:
                continue
            if st and st.st_size == f["size"] and st.st_mtime <= row.archived_at.timestamp():
                path.unlink(missing_ok=True)
                removed += 1
    IngestGranule.objects.filter(pk__in=[r.pk for r in rows]).update(staging_removed=True)
    return removed
