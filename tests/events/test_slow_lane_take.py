"""Slow endpoints hold at most GRANARY_EVENTS_SLOW_LANES lanes at once, however many workers
try to take one together.

Regression (review, session 36): a taker counted the held slow lanes, then took one; two
takers at once both passed the count and the slow share grew past its bound. The count and
the take are now one statement, and on PostgreSQL slow takers queue on one lock held to their
commit, so a take not yet committed still counts for the next taker."""
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from backend.events.models import Endpoint
from backend.events.services import lanes
from tests.factories import UserFactory

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql",
                                   reason="concurrent takers need connections of their own")


def _endpoints(n, slow=True, **fields):
    user = UserFactory()
    return [Endpoint.objects.create(user=user, kind="email", name=f"e{i}", slow=slow, **fields)
            for i in range(n)]


def _held(now):
    return set(Endpoint.objects.filter(lane_until__gte=now).values_list("pk", flat=True))


@pytest.mark.django_db
def test_slow_lanes_are_taken_up_to_the_bound_and_free_again_when_a_lease_runs_out(settings):
    settings.GRANARY_EVENTS_SLOW_LANES = 2
    a, b, c = _endpoints(3)
    fast = _endpoints(2, slow=False)
    assert lanes.take(a.pk, T0) and lanes.take(b.pk, T0)
    assert not lanes.take(c.pk, T0)
    assert not lanes.take(a.pk, T0)                       # a held lane is not taken twice
    assert all(lanes.take(e.pk, T0) for e in fast)        # the others never wait for a place
    assert _held(T0) == {a.pk, b.pk, *(e.pk for e in fast)}
    # a's lease runs out (its worker died): its place is free, c takes it
    later = T0 + timedelta(seconds=lanes.lane_seconds() + 1)
    Endpoint.objects.filter(pk=b.pk).update(lane_until=later + timedelta(hours=1))
    assert lanes.take(c.pk, later)
    assert not lanes.take(a.pk, later)
    assert _held(later) == {b.pk, c.pk}


@pytest.mark.django_db
def test_a_slow_endpoint_disabled_or_with_its_circuit_open_takes_no_place(settings):
    settings.GRANARY_EVENTS_SLOW_LANES = 1
    off, = _endpoints(1, enabled=False)
    waiting, = _endpoints(1, retry_at=T0 + timedelta(seconds=1))
    ready, = _endpoints(1, retry_at=T0)
    assert not lanes.take(off.pk, T0) and not lanes.take(waiting.pk, T0)
    assert lanes.take(ready.pk, T0)
    assert _held(T0) == {ready.pk}


def _race(targets, start, linger=None):
    """Each target's lane taken on a thread with its own connection once `start(pk)` returns,
    in a transaction that `linger(pk)` keeps open after the take; what each take returned
    (None: it raised) once all are done."""
    taken = dict.fromkeys(targets)

    def run(pk):
        try:
            start(pk)
            with transaction.atomic():
                taken[pk] = lanes.take(pk, T0)
                if linger:
                    linger(pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(pk,)) for pk in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return taken


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_takers_never_hold_more_slow_lanes_than_the_bound(settings):
    settings.GRANARY_EVENTS_SLOW_LANES = 2
    for _ in range(5):
        Endpoint.objects.all().delete()
        slow = [e.pk for e in _endpoints(8)]
        together = threading.Barrier(len(slow))
        taken = _race(slow, lambda pk, gate=together: gate.wait(timeout=10))
        assert None not in taken.values()
        assert sum(taken.values()) == 2
        assert _held(T0) == {pk for pk, won in taken.items() if won}


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_take_not_yet_committed_counts_for_the_next_taker(settings):
    """The first taker's transaction stays open a while after its take; the second, started
    meanwhile, waits for it and then counts its lane (without the lock it saw none held)."""
    settings.GRANARY_EVENTS_SLOW_LANES = 1
    first, second = (e.pk for e in _endpoints(2))
    first_took = threading.Event()

    def start(pk):
        if pk == second:
            assert first_took.wait(timeout=10)

    def linger(pk):
        if pk == first:
            first_took.set()
            time.sleep(0.5)

    assert _race([first, second], start, linger) == {first: True, second: False}
    assert _held(T0) == {first}
