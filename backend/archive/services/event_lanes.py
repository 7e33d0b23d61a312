"""Reconciliation's look at the events' lanes (backend.events.services.lane_checks says what
is judged and why): a stuck lane, its repair clearing the circuit and the slow mark and waking
it; a stale slow mark, its repair clearing the mark. Registered with the archive's promises
when the archive app is ready (events, below the archive, cannot register)."""
from backend.events import services as events
from backend.events.services.lane_checks import SLOW_STALE_S, STUCK_S

from .. import invariants

EVENT_LANE_STUCK = "event_lane_stuck"
EVENT_SLOW_STALE = "event_slow_stale"


def _named(endpoint):
    return f"{endpoint.kind} endpoint {endpoint.pk} ({endpoint.name or endpoint.url})"


def check():
    stuck = events.stuck()
    found = [invariants.Violation(
        EVENT_LANE_STUCK,
        f"{_named(e)} has had deliveries due since {e.waiting_since:%Y-%m-%d %H:%M:%S} UTC, "
        f"its circuit closed and its lane free, and has sent nothing for "
        f"{STUCK_S} s", extra={"endpoint": e.pk})
        for e in stuck]
    found += [invariants.Violation(
        EVENT_SLOW_STALE,
        f"{_named(e)} is marked slow and has sent nothing for "
        f"{SLOW_STALE_S} s", extra={"endpoint": e.pk})
        for e in events.stale_slow() if e.pk not in {s.pk for s in stuck}]
    return found


def unstick(discrepancy):
    if events.unstick(discrepancy.extra.get("endpoint")):
        return "circuit and slow mark cleared, lane woken"
    return "not stuck any more"


def forget_slow(discrepancy):
    if events.forget_slow(discrepancy.extra.get("endpoint")):
        return "slow mark cleared: its next sends measure it again"
    return "not stale any more"


def register():
    invariants.register("events.lanes", check, repairs={
        EVENT_LANE_STUCK: ("clear the circuit and the slow mark, wake the lane", unstick),
        EVENT_SLOW_STALE: ("clear the slow mark", forget_slow),
    })
