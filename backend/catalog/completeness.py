"""Completeness of collections that declare a cadence: the day's expected, received and missing
granules with the gaps, the late ones, and the collections doing worst lately. The arithmetic is
catalog.cadence's; this module reads the rows it needs."""
from datetime import UTC, datetime, time, timedelta

from django.db.models import Min
from django.utils import timezone

from backend.errors import DomainError

from . import cadence
from .models import Collection, Granule

COUNTED = [Granule.State.REGISTERED, Granule.State.ARCHIVING, Granule.State.ARCHIVED,
           Granule.State.SUPERSEDED]
MAX_LATE_LISTED = 500
MAX_DAYS = 31


def _granules(collection, start, end):
    every = timedelta(seconds=collection.cadence_seconds or 0)
    return Granule.objects.filter(
        collection=collection, state__in=COUNTED,
        temporal_start__lt=end + every, temporal_end__gte=start - every)


def _bounds(collection, now):
    """(since, until): the collection's first moment (declared, else its first granule's) and
    the last slot end that counts (now less the latency target, capped by a declared end)."""
    since = collection.extent_start or Granule.objects.filter(
        collection=collection, state__in=COUNTED).aggregate(first=Min("temporal_start"))["first"]
    until = now - timedelta(seconds=collection.latency_target_seconds or 0)
    if collection.extent_end is not None:
        until = min(until, collection.extent_end)
    return since, until


def window_report(collection, start, end, now):
    """(cadence.Report, [cadence.Late] or None without a latency target, granules counted)."""
    if not collection.cadence_seconds:
        raise DomainError(f"{collection.key} declares no cadence", "collection")
    since, until = _bounds(collection, now)
    rows = list(_granules(collection, start, end).values_list(
        "granule_id", "temporal_start", "temporal_end", "archived_at"))
    if since is None:  # nothing ever came and no start was declared: nothing is expected yet
        since = until
    found = cadence.report(collection.cadence_seconds, [(s, e) for _, s, e, _ in rows],
                           start, end, since=since, until=until)
    late = None
    if collection.latency_target_seconds is not None:
        ending = [(g, e, a) for g, _, e, a in rows if start <= e < end]
        late = cadence.late(ending, collection.latency_target_seconds, now)
    received_granules = sum(1 for _, s, _, _ in rows if start <= s < end)
    return found, late, received_granules


def day_report(collection, day, now=None):
    """The completeness of one UTC day of a collection, as the API answers it."""
    now = now or timezone.now()
    start = datetime.combine(day, time(), tzinfo=UTC)
    found, late, granules = window_report(collection, start, start + timedelta(days=1), now)
    return {
        "collection": collection.key, "day": day,
        "cadence_seconds": collection.cadence_seconds,
        "latency_target_seconds": collection.latency_target_seconds,
        "expected": found.expected, "received": found.received, "missing": found.missing,
        "granules": granules,
        "gaps": [{"start": g.start, "end": g.end, "missing": g.missing} for g in found.gaps],
        "late_count": None if late is None else len(late),
        "late": [] if late is None else [
            {"granule_id": x.granule, "temporal_end": x.temporal_end,
             "archived_at": x.archived_at, "late_by_seconds": x.late_by_s}
            for x in late[:MAX_LATE_LISTED]],
    }


def worst(days=7, limit=10, now=None):
    """Collections with a cadence, most missing granules first over the last `days` UTC days
    (today so far included), then most late ones; one that expected nothing in those days (its
    declared extent ended before them) and has nothing late says nothing and is left out."""
    if not 1 <= days <= MAX_DAYS:
        raise DomainError(f"between 1 and {MAX_DAYS} days", "days")
    now = now or timezone.now()
    start = datetime.combine(now.astimezone(UTC).date() - timedelta(days=days - 1), time(),
                             tzinfo=UTC)
    rows = []
    for collection in Collection.objects.filter(cadence_seconds__isnull=False):
        found, late, _ = window_report(collection, start, now, now)
        if found.expected == 0 and not late:
            continue
        rows.append({
            "collection": collection.key, "title": collection.title,
            "expected": found.expected, "received": found.received, "missing": found.missing,
            "percent_received": round(100.0 * found.received / found.expected, 1)
            if found.expected else None,
            "gaps": len(found.gaps), "late_count": None if late is None else len(late),
        })
    rows.sort(key=lambda r: (-r["missing"], -(r["late_count"] or 0), r["collection"]))
    return {"days": days, "since": start, "collections": rows[:limit]}
