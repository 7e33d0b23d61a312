"""Completeness of collections that declare a cadence: the day's expected, received and missing
granules with the gaps, the late ones, and the collections doing worst lately. The arithmetic is
catalog.cadence's; this module reads the rows it needs."""
from datetime import UTC, datetime, time, timedelta

from django.db import connection
from django.db.models import Min
from django.utils import timezone

from backend.errors import DomainError

from . import cadence
from .models import Collection, Granule
from .spans import with_longest_granule

COUNTED = [Granule.State.REGISTERED, Granule.State.ARCHIVING, Granule.State.ARCHIVED,
           Granule.State.SUPERSEDED]
MAX_LATE_LISTED = 500
MAX_DAYS = 31


def _earliest_start(collection, start):
    """The earliest temporal_start a granule reaching `start` (less a cadence) can have: no
    granule of the collection outlasts its longest (one probe of the (collection, length)
    index), so a window reads its own granules, not every earlier one's index entry."""
    every = timedelta(seconds=collection.cadence_seconds or 0)
    longest = with_longest_granule(Collection.objects.filter(pk=collection.pk)).values_list(
        "longest", flat=True).first()
    return start - every - (longest or timedelta(0))


def _granules(collection, start, end):
    every = timedelta(seconds=collection.cadence_seconds or 0)
    return Granule.objects.filter(
        collection=collection, state__in=COUNTED,
        temporal_start__gte=_earliest_start(collection, start),
        temporal_start__lt=end + every, temporal_end__gte=start - every)


def bounds(collection, now):
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
    since, until = bounds(collection, now)
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


# The slots a week of granules fill and how many came late (the row with no slot), found by
# PostgreSQL in one pass over the window's granules rather than by reading them all into
# Python: the filled slots are cadence.filled's (each granule's own midpoint slot, and every
# slot whose midpoint its coverage holds, in float seconds as there), at most a few thousand
# numbers per collection. A granule a second or more shorter than the cadence holds at most
# one slot midpoint, and that slot is the one its own midpoint lies in (both are within half
# its length of each other); one up to a cadence long holds at most one slot midpoint, listed
# apart only when it is not that slot; only longer ones are spread over slots.
_SLOTS_SQL = """
WITH g AS MATERIALIZED (
    -- date_part is float8 already; extract gives numeric (PostgreSQL 14+), whose arithmetic
    -- was a third of this query at a week of 5-minute granules
    SELECT date_part('epoch', temporal_start) AS s,
           date_part('epoch', temporal_end) AS e, temporal_end, archived_at
    FROM catalog_granule
    WHERE collection_id = %(collection)s AND state = ANY(%(states)s)
      AND temporal_start >= %(earliest)s AND temporal_start < %(last_start)s
      AND temporal_end >= %(first_end)s),
k AS (
    SELECT floor((s + e) / 2 / %(every)s) AS k FROM g
    UNION
    SELECT a FROM (SELECT ceil((s - %(every)s / 2.0) / %(every)s) AS a,
                          ceil((e - %(every)s / 2.0) / %(every)s) AS b,
                          floor((s + e) / 2 / %(every)s) AS own
                   FROM g WHERE e - s > %(every)s - 1 AND e - s <= %(every)s) one
    WHERE a < b AND a <> own
    UNION
    SELECT generate_series(greatest(ceil((s - %(every)s / 2.0) / %(every)s), %(lo)s)::bigint,
                           least(ceil((e - %(every)s / 2.0) / %(every)s), %(hi)s)::bigint - 1)
    FROM g WHERE e - s > %(every)s)
SELECT k::bigint, NULL FROM k WHERE k >= %(lo)s AND k < %(hi)s
UNION ALL
SELECT NULL, count(*) FROM g
WHERE temporal_end >= %(start)s AND temporal_end < %(end)s
  AND coalesce(archived_at, %(now)s) - temporal_end > %(latency)s * interval '1 second'
"""


def window_segment(collection, start, end, now, known_bounds=None):
    """The cadence.Segment of the slots starting in [start, end) (with its late count, None
    without a latency target): the work done by PostgreSQL (see _SLOTS_SQL); elsewhere from
    window_report's rows. `known_bounds`: bounds(collection, now), when the caller has them."""
    since, until = known_bounds or bounds(collection, now)
    if since is None:
        since = until
    every = collection.cadence_seconds
    lo, hi = cadence.expected_slots(every, start, end, since=since, until=until)
    if connection.vendor != "postgresql":
        rows = list(_granules(collection, start, end).values_list(
            "temporal_start", "temporal_end", "archived_at"))
        got = set()
        for s, e, _ in rows:
            got |= cadence.filled(every, s.timestamp(), e.timestamp(), lo, hi)
        late = None
        if collection.latency_target_seconds is not None:
            late = len(cadence.late([(None, e, a) for _, e, a in rows if start <= e < end],
                                    collection.latency_target_seconds, now))
        return cadence.segment_of_slots(every, lo, hi, got, late)
    params = {"collection": collection.pk, "states": [str(s) for s in COUNTED],
              "start": start, "end": end, "every": every, "lo": lo, "hi": hi, "now": now,
              "latency": collection.latency_target_seconds,
              "earliest": _earliest_start(collection, start),
              "last_start": end + timedelta(seconds=every),
              "first_end": start - timedelta(seconds=every)}
    with connection.cursor() as cursor:
        cursor.execute(_SLOTS_SQL, params)
        rows = cursor.fetchall()
    got = {k for k, _ in rows if k is not None}
    late = None
    if collection.latency_target_seconds is not None:
        late = next(n for k, n in rows if k is None)
    return cadence.segment_of_slots(every, lo, hi, got, late)


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
