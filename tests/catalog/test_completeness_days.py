"""Kept days of completeness (catalog.completeness_days) equal a count from the granule rows
(completeness.window_report, cadence's arithmetic in Python over every granule of the
window), before and after granules of a past day arrive late, are deleted, move, or the
collection's cadence changes; and nothing is kept while a writer of the collection is in
flight."""
import random
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.archive import invariants
from backend.archive.services import kept_days, reconcile
from backend.catalog import cadence, completeness, completeness_days
from backend.catalog.models import CompletenessDay, Granule
from tests.factories import CollectionFactory, GranuleFactory

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "postgresql",
                                 reason="days are kept on PostgreSQL only (its trigger)")]
NOW = datetime(2026, 3, 14, 17, 23, 41, 250000, tzinfo=UTC)
STATES = [Granule.State.ARCHIVED] * 6 + [Granule.State.ARCHIVING, Granule.State.FAILED,
                                          Granule.State.SUPERSEDED]
DAYS = 7


def brute_force(collection, now=NOW):
    """(expected, received, gaps, late) of the worst window, counted from every granule."""
    start = datetime.combine(now.date() - timedelta(days=DAYS - 1), datetime.min.time(),
                             tzinfo=UTC)
    found, late, _ = completeness.window_report(collection, start, now, now)
    return (found.expected, found.received, len(found.gaps),
            None if late is None else len(late))


def kept_window(collection, now=NOW):
    part = completeness_days.window(collection, now.date() - timedelta(days=DAYS - 1), now)
    return part.expected, part.received, part.gaps, part.late


def granules(collection, rng, n, every, latency):
    first = NOW - timedelta(days=DAYS + 1)
    for _ in range(n):
        begin = first + timedelta(seconds=rng.uniform(0, (DAYS + 1.2) * 86400))
        if rng.random() < 0.3:  # on a slot boundary, where a day's seam could split a count
            begin = cadence.EPOCH + timedelta(
                seconds=round((begin - cadence.EPOCH).total_seconds() / every) * every)
        length = rng.choice([0, every * rng.uniform(0.1, 0.99), every, every * rng.uniform(1, 5)])
        end = begin + timedelta(seconds=length)
        archived = None if rng.random() < 0.1 else end + timedelta(
            seconds=rng.uniform(0, 3 * (latency or 3600)))
        GranuleFactory(collection=collection, temporal_start=begin, temporal_end=end,
                       state=rng.choice(STATES), archived_at=archived)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(every=st.sampled_from([600, 3600, 5940, 86400, 2 * 86400]),
       latency=st.sampled_from([None, 1800, 4 * 3600, 30 * 3600]),
       seed=st.integers(0, 10**6), n=st.integers(0, 120))
def test_kept_days_equal_a_count_from_the_granules(every, latency, seed, n):
    rng = random.Random(seed)
    collection = CollectionFactory(cadence_seconds=every, latency_target_seconds=latency)
    granules(collection, rng, n, every, latency)
    expected = brute_force(collection)
    assert kept_window(collection) == expected       # counted, and the final days kept
    kept = CompletenessDay.objects.filter(collection=collection).count()
    assert kept == (completeness_days.last_final_day(collection, NOW)
                    - (NOW.date() - timedelta(days=DAYS - 1))).days + 1
    assert kept_window(collection) == expected       # read back from the kept days


def hourly_collection():
    collection = CollectionFactory(cadence_seconds=3600, latency_target_seconds=3600,
                                   extent_start=NOW - timedelta(days=30))
    granules(collection, random.Random(7), 100, 3600, 3600)
    assert kept_window(collection) == brute_force(collection)
    return collection


def past_day(days_ago):
    return datetime.combine(NOW.date() - timedelta(days=days_ago), datetime.min.time(),
                            tzinfo=UTC)


def test_a_late_granule_for_a_past_day_is_counted_on_the_next_poll():
    collection = hourly_collection()
    before = kept_window(collection)
    at = past_day(3) + timedelta(hours=5)
    GranuleFactory(collection=collection, temporal_start=at, temporal_end=at + timedelta(hours=1),
                   state=Granule.State.ARCHIVED, archived_at=NOW)
    assert not CompletenessDay.objects.filter(collection=collection, day=at.date()).exists()
    assert kept_window(collection) == brute_force(collection) != before


def test_a_deleted_or_moved_granule_of_a_past_day_is_counted_again():
    collection = hourly_collection()
    victim = Granule.objects.filter(collection=collection, state=Granule.State.ARCHIVED,
                                    temporal_start__gte=past_day(4),
                                    temporal_end__lt=past_day(3)).first()
    old_day = victim.temporal_start.date()
    Granule.objects.filter(pk=victim.pk).update(
        temporal_start=past_day(2), temporal_end=past_day(2) + timedelta(minutes=30))
    assert not CompletenessDay.objects.filter(
        collection=collection, day__in=[old_day, past_day(2).date()]).exists()
    assert kept_window(collection) == brute_force(collection)
    Granule.objects.filter(collection=collection, temporal_start__gte=past_day(5),
                           temporal_start__lt=past_day(4)).delete()
    assert kept_window(collection) == brute_force(collection)


def test_a_new_cadence_or_an_earlier_first_granule_is_not_read_from_old_days():
    collection = CollectionFactory(cadence_seconds=3600, latency_target_seconds=None)
    granules(collection, random.Random(3), 80, 3600, None)
    assert kept_window(collection) == brute_force(collection)
    collection.cadence_seconds = 1800
    collection.save()
    assert kept_window(collection) == brute_force(collection)
    # the first granule moves the collection's start ("since") back: days before it expect
    GranuleFactory(collection=collection, temporal_start=NOW - timedelta(days=20),
                   temporal_end=NOW - timedelta(days=20) + timedelta(minutes=30),
                   state=Granule.State.ARCHIVED)
    assert kept_window(collection) == brute_force(collection)


def test_nothing_is_kept_while_a_writer_of_the_collection_is_in_flight():
    collection = CollectionFactory(cadence_seconds=3600, latency_target_seconds=None)
    granules(collection, random.Random(5), 40, 3600, None)
    db = connection.settings_dict
    with psycopg.connect(host=db["HOST"] or "localhost", port=db["PORT"] or 5432,
                         user=db["USER"], password=db["PASSWORD"] or None,
                         dbname=db["NAME"], autocommit=True) as writer:
        writer.execute("SELECT pg_advisory_lock_shared(%s, %s)",
                       [completeness_days.LOCK_CLASS, collection.pk])
        assert kept_window(collection) == brute_force(collection)
        assert not CompletenessDay.objects.filter(collection=collection).exists()
        # released here, not by closing the connection: its backend may still hold the lock
        # for a moment after the client has gone
        writer.execute("SELECT pg_advisory_unlock_shared(%s, %s)",
                       [completeness_days.LOCK_CLASS, collection.pk])
    assert kept_window(collection) == brute_force(collection)
    assert CompletenessDay.objects.filter(collection=collection).exists()


def test_rebuild_forgets_every_kept_day():
    collection = hourly_collection()
    assert CompletenessDay.objects.filter(collection=collection).exists()
    completeness_days.rebuild()
    assert not CompletenessDay.objects.exists()
    assert kept_window(collection) == brute_force(collection)


def stale():
    return sorted((v.extra["collection"], v.extra["day"]) for v in invariants.check_records()
                  if v.kind == kept_days.COMPLETENESS_DAY_STALE)


def test_a_corrupt_kept_day_is_found_by_reconciliation_and_forgotten_by_its_repair():
    collection = hourly_collection()
    day = past_day(3).date()
    truth = completeness.window_report(collection, completeness_days.midnight(day),
                                       completeness_days.midnight(day + timedelta(days=1)),
                                       NOW)[0]
    row = CompletenessDay.objects.get(collection=collection, day=day)
    assert (row.expected, row.received) == (truth.expected, truth.received)
    assert stale() == []
    CompletenessDay.objects.filter(pk=row.pk).update(received=row.received + 3, gaps=0)
    # another collection's day under an old cadence is never read, so never judged
    other = hourly_collection()
    CompletenessDay.objects.filter(collection=other).update(cadence_seconds=60, received=0)
    assert stale() == [(collection.pk, day.isoformat())]

    run = reconcile.reconcile(repair=True)
    [found] = run.discrepancies.filter(kind=kept_days.COMPLETENESS_DAY_STALE)
    assert found.repair == "forget the kept day" and found.extra["counted"]["received"] == \
        truth.received
    assert found.repaired_at and found.outcome.startswith("forgotten")
    assert not CompletenessDay.objects.filter(collection=collection, day=day).exists()
    assert kept_window(collection) == brute_force(collection)
    assert CompletenessDay.objects.get(collection=collection, day=day).received == truth.received
    assert stale() == []
