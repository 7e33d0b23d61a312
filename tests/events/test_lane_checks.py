"""Reconciliation judges the events' lanes: an endpoint with work due long ago, its circuit
closed, its lane free and nothing sent meanwhile is stuck (its repair clears the circuit and
the slow mark and wakes it); a slow mark on an endpoint that has sent nothing for a day is
stale (its repair clears it). Lanes moving, failing, held or just woken are not judged."""
from datetime import timedelta

import pytest
from django.utils import timezone

from backend import nudges
from backend.archive import invariants
from backend.archive.services import event_lanes, reconcile
from backend.events import services as events
from backend.events.models import Delivery, Endpoint, Event
from backend.events.services import lane_checks
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
KINDS = (event_lanes.EVENT_LANE_STUCK, event_lanes.EVENT_SLOW_STALE)
STUCK, STALE = lane_checks.STUCK_S, lane_checks.SLOW_STALE_S


@pytest.fixture
def woken(monkeypatch):
    got = []

    def send(task, *args, queue=None):
        got.append((task, *args))
        return True
    monkeypatch.setattr(nudges, "send", send)
    return got


def ago(now, seconds):
    return now - timedelta(seconds=seconds)


def endpoint(name, pending=None, delivered=None, now=None, **fields):
    """An email endpoint; a delivery due `pending` seconds before `now`, one delivered
    `delivered` seconds before, when given."""
    now = now or timezone.now()
    row = Endpoint.objects.create(user=UserFactory(), kind="email", name=name, **fields)
    for state, seconds in ((Delivery.State.PENDING, pending),
                           (Delivery.State.DELIVERED, delivered)):
        if seconds is not None:
            event = Event.objects.create(type="granule.archived", source="/granary",
                                         time=ago(now, seconds), fanned_at=now)
            sent = state == Delivery.State.DELIVERED
            Delivery.objects.create(event=event, endpoint=row, state=state, attempts=int(sent),
                                    due_at=ago(now, seconds),
                                    delivered_at=ago(now, seconds) if sent else None)
    return row


def found():
    return sorted((v.kind, v.extra["endpoint"]) for v in invariants.check_records()
                  if v.kind in KINDS)


def test_only_a_lane_left_with_due_work_and_nothing_sent_is_stuck():
    now = timezone.now()
    long_ago = STUCK + 60
    stuck = endpoint("stuck", pending=long_ago, now=now, retry_at=ago(now, long_ago - 30))
    sent_long_ago = endpoint("sent long ago", pending=long_ago, now=now, delivered=STALE * 2)
    not_judged = [
        endpoint("failing", pending=long_ago, now=now, retry_at=now + timedelta(minutes=5)),
        endpoint("circuit closed lately", pending=long_ago, now=now,
                 retry_at=ago(now, STUCK - 60)),
        endpoint("held", pending=long_ago, now=now, lane_until=now + timedelta(minutes=1)),
        endpoint("backlogged, moving", pending=long_ago, now=now, delivered=30),
        endpoint("due lately", pending=STUCK - 60, now=now),
        endpoint("disabled", pending=long_ago, now=now, enabled=False),
        endpoint("idle", now=now),
    ]
    got = events.stuck(now)
    assert [e.pk for e in got] == [stuck.pk, sent_long_ago.pk]
    assert got[0].waiting_since == ago(now, long_ago)
    assert not {e.pk for e in got} & {e.pk for e in not_judged}


def test_a_stuck_lane_is_reported_once_and_its_repair_wakes_it(woken):
    stuck = endpoint("stuck", pending=STUCK + 60, delivered=STALE * 2, slow=True,
                     retry_at=ago(timezone.now(), STUCK + 30))
    stale = endpoint("slow, idle", delivered=STALE + 60, slow=True)
    endpoint("slow, lately", delivered=STALE - 60, slow=True)
    endpoint("slow, failed lately", slow=True, retry_at=ago(timezone.now(), STALE - 60))
    endpoint("slow, held", slow=True, lane_until=timezone.now() + timedelta(minutes=1))
    dead = endpoint("slow, out of tries lately", slow=True)
    Delivery.objects.create(event=Event.objects.create(type="test", source="/granary",
                                                       time=timezone.now()),
                            endpoint=dead, state=Delivery.State.DEAD, attempts=8,
                            due_at=ago(timezone.now(), 60))
    assert found() == [(event_lanes.EVENT_LANE_STUCK, stuck.pk),
                       (event_lanes.EVENT_SLOW_STALE, stale.pk)]

    run = reconcile.reconcile(repair=True)
    done = {d.kind: d for d in run.discrepancies.filter(kind__in=KINDS)}
    assert set(done) == set(KINDS)
    assert done[event_lanes.EVENT_LANE_STUCK].repair == \
        "clear the circuit and the slow mark, wake the lane"
    assert done[event_lanes.EVENT_LANE_STUCK].outcome == \
        "circuit and slow mark cleared, lane woken"
    assert done[event_lanes.EVENT_SLOW_STALE].outcome.startswith("slow mark cleared")
    assert woken == [("backend.events.deliver", stuck.pk)]
    assert Endpoint.objects.filter(retry_at__isnull=True, slow=False).filter(
        pk__in=[stuck.pk, stale.pk]).count() == 2
    assert Endpoint.objects.filter(slow=True).count() == 4
    # nothing was sent yet, so the woken lane is still judged stuck until it moves
    Delivery.objects.filter(endpoint=stuck, state=Delivery.State.PENDING).update(
        state=Delivery.State.DELIVERED, attempts=1, delivered_at=timezone.now())
    assert found() == []


def test_a_repair_changes_nothing_once_the_lane_moved_or_was_taken(woken):
    moved = endpoint("moved", pending=STUCK + 60, retry_at=ago(timezone.now(), STUCK + 30))
    taken = endpoint("taken", pending=STUCK + 60, slow=True)
    stale = endpoint("stale", slow=True)
    run = reconcile.reconcile(repair=False)
    assert run.discrepancies.filter(kind__in=KINDS).count() == 3
    Delivery.objects.filter(endpoint=moved).update(state=Delivery.State.DELIVERED, attempts=1,
                                                   delivered_at=timezone.now())
    Endpoint.objects.filter(pk__in=[taken.pk, stale.pk]).update(
        lane_until=timezone.now() + timedelta(minutes=1))
    reconcile.repair(run)
    outcomes = sorted(run.discrepancies.filter(kind__in=KINDS).values_list("outcome", flat=True))
    assert outcomes == ["not stale any more", "not stuck any more", "not stuck any more"]
    assert woken == []
    assert Endpoint.objects.get(pk=moved.pk).retry_at is not None
    assert list(Endpoint.objects.filter(slow=True).order_by("pk").values_list(
        "pk", flat=True)) == [taken.pk, stale.pk]
