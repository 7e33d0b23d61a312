"""Finished days of completeness, kept (CompletenessDay): the dashboard's "worst collections"
reads a past day's figures once it is final and counts only what may still change, today
and the days whose latency target is not over yet.

A day is final when its last slot and the latency target after it are over: no slot of it is
still awaited, and every granule of it not archived yet is late for good. Its row is written
the first time a window needs it, under an exclusive advisory lock per collection that every
statement writing the collection's granules takes shared (the trigger of migration
0013_completeness_days_web, which deletes the rows of the days the written coverage touches):
a row is computed only after every writer in flight has committed, and a later writer's
deletion waits for the row. A row whose cadence, latency target, extent end or first moment
is no longer the collection's is computed again. On SQLite nothing keeps rows: every day is
counted from the granules.
"""
from datetime import UTC, datetime, time, timedelta

from django.db import connection, transaction
from django.utils import timezone

from backend.dbtriggers import kept
from backend.errors import DomainError

from . import cadence, completeness
from .models import Collection, CompletenessDay

LOCK_CLASS = 33033      # advisory lock (class, collection id): see the module's docstring
MAX_DAYS = completeness.MAX_DAYS
_FIGURES = ("expected", "received", "gaps", "first_missing", "last_missing", "late_count")


def midnight(day):
    return datetime.combine(day, time(), tzinfo=UTC)


def last_final_day(collection, now):
    """The last UTC day of `collection` that is final at `now`."""
    wait = timedelta(seconds=collection.cadence_seconds + (
        collection.latency_target_seconds or 0))
    return (now - wait).astimezone(UTC).date() - timedelta(days=1)


def _key(collection, since):
    return {"cadence_seconds": collection.cadence_seconds,
            "latency_target_seconds": collection.latency_target_seconds,
            "since": since, "extent_end": collection.extent_end}


def _as_segment(row):
    return cadence.Segment(row.expected, row.received, row.gaps, row.first_missing,
                           row.last_missing, row.late_count)


def _compute_days(collection, days, now, known_bounds):
    """{day: Segment} of final `days`, counted from the granules."""
    return {day: completeness.window_segment(
        collection, midnight(day), midnight(day + timedelta(days=1)), now, known_bounds)
        for day in days}


def final_days(collection, first, last, now, known_bounds, kept_rows=None):
    """{day: Segment} of the final days first..last: the `kept_rows` (CompletenessDay rows of
    the collection; read here when None) computed under the collection's present key, the
    other days counted and (on PostgreSQL) kept."""
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    if not days:
        return {}
    if not kept():
        return _compute_days(collection, days, now, known_bounds)
    key = _key(collection, known_bounds[0])
    if kept_rows is None:
        kept_rows = CompletenessDay.objects.filter(collection=collection, day__gte=first,
                                                   day__lte=last)
    found = {row.day: _as_segment(row) for row in kept_rows
             if first <= row.day <= last and all(getattr(row, k) == v for k, v in key.items())}
    todo = [day for day in days if day not in found]
    if todo:
        found.update(_compute_and_keep(collection, todo, key, now, known_bounds))
    return found


def _compute_and_keep(collection, days, key, now, known_bounds):
    """Count `days` after every writer of the collection in flight has committed, and keep
    them; when one is still writing, count them without keeping (the next poll tries again)."""
    with transaction.atomic():
        locked = _locked(collection.pk)
        segments = _compute_days(collection, days, now, known_bounds)
        if locked:
            CompletenessDay.objects.bulk_create(
                [CompletenessDay(collection=collection, day=day, **key, **_figures(part))
                 for day, part in segments.items()],
                update_conflicts=True, unique_fields=["collection", "day"],
                update_fields=[*_FIGURES, *key])
    return segments


def _figures(part):
    return {"expected": part.expected, "received": part.received, "gaps": part.gaps,
            "first_missing": part.first_missing, "last_missing": part.last_missing,
            "late_count": part.late}


def window(collection, start_day, now, kept_rows=None):
    """The cadence.Segment of `collection` from the start of `start_day` to `now`: the final
    days kept, the rest counted."""
    known_bounds = completeness.bounds(collection, now)
    last = min(last_final_day(collection, now), now.astimezone(UTC).date() - timedelta(days=1))
    parts = final_days(collection, start_day, last, now, known_bounds, kept_rows)
    live_from = max(start_day, last + timedelta(days=1))
    live = completeness.window_segment(collection, midnight(live_from), now, now, known_bounds)
    return cadence.join([*(parts[day] for day in sorted(parts)), live])


def worst(days=7, limit=10, now=None):
    """Collections with a cadence, most missing granules first over the last `days` UTC days
    (today so far included), then most late ones; one that expected nothing in those days (its
    declared extent ended before them) and has nothing late says nothing and is left out."""
    if not 1 <= days <= MAX_DAYS:
        raise DomainError(f"between 1 and {MAX_DAYS} days", "days")
    now = now or timezone.now()
    first = now.astimezone(UTC).date() - timedelta(days=days - 1)
    rows = []
    collections = list(Collection.objects.filter(cadence_seconds__isnull=False))
    kept_rows = {c.pk: [] for c in collections}
    if kept():
        for row in CompletenessDay.objects.filter(collection__in=collections, day__gte=first):
            kept_rows[row.collection_id].append(row)
    for collection in collections:
        found = window(collection, first, now, kept_rows[collection.pk] if kept() else None)
        if found.expected == 0 and not found.late:
            continue
        rows.append({
            "collection": collection.key, "title": collection.title,
            "expected": found.expected, "received": found.received,
            "missing": found.expected - found.received,
            "percent_received": round(100.0 * found.received / found.expected, 1)
            if found.expected else None,
            "gaps": found.gaps, "late_count": found.late,
        })
    rows.sort(key=lambda r: (-r["missing"], -(r["late_count"] or 0), r["collection"]))
    return {"days": days, "since": midnight(first), "collections": rows[:limit]}


def rebuild():
    """Forget every kept day (after a load that bypassed the trigger, or to recount after a
    change of the counting itself): the next polls count and keep them again."""
    CompletenessDay.objects.all().delete()


def stale_sample(n=20, now=None):
    """Reconciliation's look at derived state: up to `n` kept days, drawn at random, counted
    again from the granule rows; (row, counted figures) of each that no longer equals its
    count. A row under another key than its collection's (never read) is not judged, nor one
    whose collection has a writer in flight (it takes the writers' lock, as keeping does)."""
    if not kept():
        return []
    now = now or timezone.now()
    found = []
    for pk in CompletenessDay.objects.order_by("?").values_list("pk", flat=True)[:n]:
        with transaction.atomic():
            row = CompletenessDay.objects.select_related("collection").filter(pk=pk).first()
            if row is None or not _locked(row.collection_id):
                continue
            known_bounds = completeness.bounds(row.collection, now)
            key = _key(row.collection, known_bounds[0])
            if (any(getattr(row, k) != v for k, v in key.items())
                    or row.day > last_final_day(row.collection, now)):
                continue
            counted = _figures(_compute_days(row.collection, [row.day], now,
                                             known_bounds)[row.day])
            if counted != {k: getattr(row, k) for k in _FIGURES}:
                found.append((row, counted))
    return found


def _locked(collection_id):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [LOCK_CLASS, collection_id])
        return cursor.fetchone()[0]


def forget(collection_id, day):
    """Forget one kept day: the next poll that needs it counts it again. Returns how many rows
    were deleted (0: already forgotten)."""
    return CompletenessDay.objects.filter(collection_id=collection_id, day=day).delete()[0]
