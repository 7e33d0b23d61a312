"""Lanes that are not slow are woken several to a message and sent in turn by one task (Celery's
cost per task was more than the sends: bench events, Session 38); a slow lane keeps a message
of its own, so it never holds up the others; a group's task stays within one slice and wakes
again whatever it could not finish."""
from datetime import timedelta

import pytest
from django.utils import timezone

from backend import nudges
from backend.events import services as events
from backend.events.models import Delivery, Endpoint
from tests.factories import CollectionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def messages(monkeypatch):
    """The deliver messages sent (no broker), each as its argument: an id or a list of ids."""
    got = []

    def send(task, *args, queue=None):
        if task == "backend.events.deliver":
            got.append(args[0])
        return True
    monkeypatch.setattr(nudges, "send", send)
    return got


def _mailboxes(n, name):
    operator = UserFactory(role="operator")
    return [events.create(operator, "email", name=f"{name} {i}",
                          rules=[{"type": "granule.archived"}]) for i in range(n)]


def _emit(collection, n):
    rows = events.emit_many([events.event("granule.archived", f"granules/{i}", {"granule": i},
                                          collection=collection) for i in range(n)])
    events.fan_out([r.pk for r in rows])


def _pending(endpoints):
    return Delivery.objects.filter(endpoint__in=endpoints, state=Delivery.State.PENDING).count()


def test_fast_lanes_go_several_to_a_message_and_a_slow_one_alone(settings, messages):
    settings.GRANARY_EVENTS_LANES_PER_TASK = 8
    fast, slow = _mailboxes(20, "fast"), _mailboxes(2, "slow")
    Endpoint.objects.filter(pk__in=[e.pk for e in slow]).update(slow=True)
    _emit(CollectionFactory(), 3)
    messages.clear()
    woken = events.wake_due()
    groups = [m for m in messages if isinstance(m, list)]
    alone = [m for m in messages if not isinstance(m, list)]
    # 20 fast lanes in ceil(20 / 8) = 3 messages, each lane in exactly one; the slow alone
    assert sorted(len(g) for g in groups) == [4, 8, 8]
    assert sorted(pk for g in groups for pk in g) == sorted(e.pk for e in fast)
    assert sorted(alone) == sorted(e.pk for e in slow)
    assert sorted(woken) == sorted(e.pk for e in fast + slow)
    # one task sends every lane of its message
    for group in groups:
        assert events.deliver(group) == 3 * len(group)
    assert _pending(fast) == 0 and _pending(slow) == 6


def test_a_lane_turned_slow_is_left_to_a_message_of_its_own(settings, messages):
    a, b, c = _mailboxes(3, "lane")
    _emit(CollectionFactory(), 2)
    Endpoint.objects.filter(pk=b.pk).update(slow=True)   # slow since it was woken
    messages.clear()
    assert events.deliver([a.pk, b.pk, c.pk]) == 4        # a and c, not b
    assert _pending([a, c]) == 0 and _pending([b]) == 2
    assert messages == [b.pk]                             # woken again, alone


def test_a_group_stops_at_its_slice_and_wakes_the_rest(settings, messages):
    settings.GRANARY_EVENTS_SLICE_S = 0.0                 # the slice is over at once
    settings.GRANARY_EVENTS_LANES_PER_TASK = 8
    lanes = _mailboxes(3, "lane")
    _emit(CollectionFactory(), 2)
    messages.clear()
    assert events.deliver([e.pk for e in lanes]) == 0
    assert _pending(lanes) == 6
    assert messages == [[e.pk for e in lanes]]            # nothing lost: all woken again
    assert Endpoint.objects.filter(pk__in=[e.pk for e in lanes],
                                   lane_until__isnull=False).count() == 0


def test_lanes_held_elsewhere_or_with_an_open_circuit_are_not_woken_again(settings, messages):
    held, failing, free = _mailboxes(3, "lane")
    _emit(CollectionFactory(), 2)
    now = timezone.now()
    Endpoint.objects.filter(pk=held.pk).update(lane_until=now + timedelta(hours=1))
    Endpoint.objects.filter(pk=failing.pk).update(retry_at=now + timedelta(hours=1))
    messages.clear()
    assert events.deliver([held.pk, failing.pk, free.pk]) == 2
    assert _pending([held, failing]) == 4 and _pending([free]) == 0
    assert messages == []     # the holder finds its own as it hands back; the circuit, beat
