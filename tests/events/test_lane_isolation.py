"""A dead or slow endpoint never takes what the others need (bench events' goal, checked by
counts and order, never by the clock): a failed send opens the endpoint's circuit, so its
lane is not taken (nor its events sent out of order) before the backoff is over; slow
endpoints hold at most GRANARY_EVENTS_SLOW_LANES lanes at once while the others deliver
everything; fan-out wakes only lanes nobody holds, and a holder handing its lane back finds
what came meanwhile."""
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from backend import nudges
from backend.events import services as events
from backend.events.models import Delivery, Endpoint
from tests.events.receiver import Receiver, free_ports
from tests.factories import CollectionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def woken(monkeypatch, django_capture_on_commit_callbacks):
    """The lanes nudged (no broker): endpoint ids in the order they were woken."""
    got = []

    def send(task, *args, queue=None):
        if task == "backend.events.deliver":   # one lane, or several woken together
            got.extend(args[0] if isinstance(args[0], list) else [args[0]])
        return True
    monkeypatch.setattr(nudges, "send", send)
    _capture[0] = django_capture_on_commit_callbacks
    return got


_capture = [None]


def _emit(collection, n, first=0):
    """n events fanned out, their commit callbacks run (the lanes woken)."""
    with _capture[0](execute=True):
        rows = events.emit_many([events.event(
            "granule.archived", f"granules/{i}", {"granule": i}, collection=collection)
            for i in range(first, first + n)])
        events.fan_out([r.pk for r in rows])
    return rows


def _states(endpoint):
    return list(Delivery.objects.filter(endpoint=endpoint).order_by("event_id").values_list(
        "state", "attempts"))


def test_a_failed_send_opens_the_circuit_and_the_lane_waits_in_order(settings, woken):
    settings.GRANARY_EVENTS_ALLOWED_NETS = ["127.0.0.1/32"]
    settings.GRANARY_EVENTS_MAX_TRIES = 5
    (dead_port,) = free_ports(1)
    operator, collection = UserFactory(role="operator"), CollectionFactory()
    dead = events.create(operator, "webhook", f"http://127.0.0.1:{dead_port}/x", "dead",
                         [{"type": "granule.archived"}])
    _emit(collection, 3)
    assert events.deliver(dead.pk) == 0
    dead.refresh_from_db()
    assert dead.retry_at is not None and dead.lane_until is None
    assert _states(dead) == [("pending", 1), ("pending", 0), ("pending", 0)]
    # new events while the circuit is open: the lane is neither woken nor taken, nothing is
    # sent ahead of the first (still waiting its turn)
    woken.clear()
    _emit(collection, 2, first=3)
    Delivery.objects.filter(endpoint=dead).update(due_at=timezone.now())
    assert woken == [] and events.due_lanes() == []
    assert events.deliver(dead.pk) == 0
    assert _states(dead) == [("pending", 1)] + [("pending", 0)] * 4
    # its backoff over, the oldest is tried again first
    Endpoint.objects.filter(pk=dead.pk).update(retry_at=timezone.now() - timedelta(seconds=1))
    assert events.due_lanes() == [dead.pk]
    events.deliver(dead.pk)
    assert _states(dead) == [("pending", 2)] + [("pending", 0)] * 4


def test_slow_lanes_take_a_bounded_share_and_the_others_deliver_everything(settings, woken):
    settings.GRANARY_EVENTS_SLOW_LANES = 1
    operator, collection = UserFactory(role="operator"), CollectionFactory()
    slow_a, slow_b, healthy = (events.create(operator, "email", name=n,
                                             rules=[{"type": "granule.archived"}])
                               for n in ("slow a", "slow b", "healthy"))
    Endpoint.objects.filter(pk__in=[slow_a.pk, slow_b.pk]).update(slow=True)
    _emit(collection, 4)
    # slow a holds the one slow place (its send still going on)
    Endpoint.objects.filter(pk=slow_a.pk).update(
        lane_until=timezone.now() + timedelta(hours=1))
    assert events.deliver(slow_b.pk) == 0           # refused: the slow share is full
    assert events.deliver(healthy.pk) == 4          # never waits for a place
    assert _states(slow_b) == [("pending", 0)] * 4
    assert _states(healthy) == [("delivered", 1)] * 4
    Endpoint.objects.filter(pk=slow_a.pk).update(lane_until=None)
    assert events.deliver(slow_b.pk) == 4


def test_an_endpoint_is_slow_by_its_slowest_send_and_fast_again_after(settings, woken):
    operator, collection = UserFactory(role="operator"), CollectionFactory()
    mailbox = events.create(operator, "email", rules=[{"type": "granule.archived"}])
    _emit(collection, 2)
    settings.GRANARY_EVENTS_SLOW_S = 0.0             # any send is slow
    assert events.deliver(mailbox.pk) == 2
    assert Endpoint.objects.get(pk=mailbox.pk).slow is True
    _emit(collection, 1, first=2)
    settings.GRANARY_EVENTS_SLOW_S = 1e9             # no send is
    assert events.deliver(mailbox.pk) == 1
    assert Endpoint.objects.get(pk=mailbox.pk).slow is False


def test_fan_out_wakes_free_lanes_only_and_a_holder_finds_what_came_meanwhile(woken):
    operator, collection = UserFactory(role="operator"), CollectionFactory()
    held, free = (events.create(operator, "email", name=n, rules=[{"type": "granule.*"}])
                  for n in ("held", "free"))
    Endpoint.objects.filter(pk=held.pk).update(lane_until=timezone.now() + timedelta(hours=1))
    with transaction.atomic():
        rows = events.emit_many([events.granule_event("granule.archived", g)
                                 for g in [_granule(collection, i) for i in range(2)]])
    with _capture[0](execute=True):
        events.fan_out([r.pk for r in rows])
        assert woken == []                            # not before the commit
    assert woken == [free.pk]
    # the holder hands its lane back: it looks again, and wakes its own lane for the rest
    Endpoint.objects.filter(pk=held.pk).update(lane_until=None)
    woken.clear()
    assert events.deliver(held.pk) == 2 and woken == []
    assert _states(held) == [("delivered", 1)] * 2


def test_delivered_rows_keep_their_status_time_and_latency(settings, woken):
    settings.GRANARY_EVENTS_ALLOWED_NETS = ["127.0.0.1/32"]
    (port,) = free_ports(1)
    operator, collection = UserFactory(role="operator"), CollectionFactory()
    hook = events.create(operator, "webhook", f"http://127.0.0.1:{port}/h", "hook",
                         [{"type": "granule.archived"}])
    rows = _emit(collection, 3)
    with Receiver(port, hook.secret) as receiver:
        assert events.deliver(hook.pk) == 3
    assert set(receiver.ids) == {str(r.uid) for r in rows} and not receiver.bad
    for d in Delivery.objects.filter(endpoint=hook).select_related("event"):
        assert (d.state, d.attempts, d.last_status, d.last_error) == ("delivered", 1, 204, "")
        assert d.delivered_at >= d.event.time
        assert d.latency_ms == pytest.approx(
            (d.delivered_at - d.event.time).total_seconds() * 1000, abs=1e-3)


def _granule(collection, i):
    from types import SimpleNamespace

    return SimpleNamespace(pk=i, granule_id=f"G{i}", version=1, collection=collection)
