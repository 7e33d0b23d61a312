"""Lanes: each endpoint's deliveries are sent by one worker at a time (the one holding its
lane), oldest event first, for a bounded time before the lane is handed back, so one endpoint
never holds up another's.

A failed send opens the endpoint's circuit (`retry_at`, doubling backoff): nobody takes its lane
before then, so a dead endpoint costs one attempt per backoff, and its waiting deliveries keep
their order behind the failed one; once it is out of tries they all become dead letters. Sends
of GRANARY_EVENTS_SLOW_S or more (a hold's mean) mark the endpoint slow: at most
GRANARY_EVENTS_SLOW_LANES slow lanes are held at once, so slow endpoints share a bounded part of
the workers and the others keep the rest. A worker killed mid-send loses nothing: the lane's
lease runs out and the next worker sends again (at least once; the event id lets the receiver
drop the copy)."""
import threading
import time
from collections import namedtuple

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, Func, OuterRef, Q, Subquery
from django.db.models.lookups import LessThan
from django.utils import timezone

from backend import leases, nudges

from .. import channels
from ..models import Delivery, Endpoint, Event

BATCH = 100
SLOW_LANES_LOCK = 33034   # advisory lock (class, 0): slow lanes are taken one at a time
EVENTS_KEPT = 2000


def lane_seconds():
    return settings.GRANARY_EVENTS_SLICE_S + settings.GRANARY_EVENTS_TIMEOUT_S + 5


def backoff(attempts):
    return min(settings.GRANARY_EVENTS_RETRY_BASE_S * 2 ** (attempts - 1), 3600)


def closed(now, prefix=""):
    """Endpoints whose circuit lets a send through at `now`."""
    return Q(**{f"{prefix}retry_at__isnull": True}) | Q(**{f"{prefix}retry_at__lte": now})


def take(endpoint_id, now, slow=True):
    """Lease the lane (enabled, circuit closed); a slow endpoint's only when `slow` and while
    fewer than SLOW_LANES slow lanes are held. True when taken."""
    rows = Endpoint.objects.filter(closed(now), pk=endpoint_id, enabled=True)
    if leases.take(rows.filter(slow=False), lane_seconds(), now, field="lane_until"):
        return True
    return slow and _take_slow(rows.filter(slow=True), now)


def _take_slow(rows, now):
    """Count the held slow lanes and take this one in the same statement, so no taker acts on
    a count another has made stale. Under PostgreSQL's read committed that count cannot see a
    take not yet committed: slow takers queue on one advisory lock, held to their commit, so
    each one's statement sees the lanes of those before it. SQLite runs one writer at a time,
    the statement alone suffices."""
    held = (Endpoint.objects.filter(slow=True, lane_until__gte=now).order_by()
            .annotate(n=Func("pk", function="COUNT")).values("n"))
    below = LessThan(Subquery(held), settings.GRANARY_EVENTS_SLOW_LANES)
    with transaction.atomic():
        leases.one_at_a_time(SLOW_LANES_LOCK)
        return bool(leases.take(rows.filter(below), lane_seconds(), now, field="lane_until"))


def deliver(endpoint_ids):
    """Send each endpoint's due deliveries, a lane at a time, within one slice of time in all;
    how many were delivered. `endpoint_ids`: one id, or several lanes woken together (one
    message for lanes that are not slow, not a message each: Celery's cost per task was more
    than the sends). Lanes left over when the slice ends, with more due, or turned slow (a slow
    lane keeps a message of its own, so it never holds up the others) are woken again."""
    ids = [endpoint_ids] if isinstance(endpoint_ids, int) else list(endpoint_ids)
    group = len(ids) > 1
    stop = time.monotonic() + settings.GRANARY_EVENTS_SLICE_S
    done, again = 0, []
    for n, endpoint_id in enumerate(ids):
        if time.monotonic() >= stop:
            again += ids[n:]
            break
        if not take(endpoint_id, timezone.now(), slow=not group):
            if group:   # turned slow: woken again alone (held or failing: wake passes it by)
                again.append(endpoint_id)
            continue
        lane = _Lane(Endpoint.objects.select_related("user").get(pk=endpoint_id), stop)
        try:
            lane.run()
        finally:
            lane.release()
        done += lane.done
        if lane.retry_at is None:   # more may have come meanwhile
            again.append(endpoint_id)
    if again:
        wake(again)
    return done


class _Lane:
    """One hold of an endpoint's lane: what it sent, how slowly, whether a send failed."""

    def __init__(self, endpoint, stop):
        self.endpoint, self.done, self.tried, self.busy = endpoint, 0, 0, 0.0
        self.retry_at, self.stop = None, stop
        self.renewed = time.monotonic()

    def run(self):
        """Batches until none is due; a short batch was all that was due (what comes after
        it is found by deliver's look as the lane is handed back)."""
        while time.monotonic() < self.stop:
            batch = _batch(self.endpoint)
            if not batch or not self.send(batch) or len(batch) < BATCH:
                return

    def send(self, batch):
        """Send in order; what was delivered is recorded in one write at the end (a kill
        before it only sends them again). False once a send failed."""
        sent = []
        try:
            for delivery in batch:
                if time.monotonic() >= self.stop:
                    break
                self.renew()
                started = time.monotonic()
                try:
                    status = channels.send(self.endpoint, delivery.event)
                except channels.Undelivered as failure:
                    self.took(started)
                    self.retry_at = _failed(delivery, failure)
                    return False
                self.took(started)
                sent.append(_delivered(delivery, status))
        finally:
            _record(sent)
            self.done += len(sent)
        return True

    def took(self, started):
        self.tried += 1
        self.busy += time.monotonic() - started

    def renew(self):
        if time.monotonic() - self.renewed > lane_seconds() / 3:
            Endpoint.objects.filter(pk=self.endpoint.pk).update(
                lane_until=leases.until(lane_seconds()))
            self.renewed = time.monotonic()

    def release(self):
        """Hand the lane back: the circuit opened (a failure) or closed (a success), the
        endpoint slow or not by its sends' mean time (one send held up by a loaded host
        does not make it slow)."""
        fields = {"lane_until": None}
        if self.tried:
            fields["retry_at"] = self.retry_at
            fields["slow"] = self.busy / self.tried >= settings.GRANARY_EVENTS_SLOW_S
        Endpoint.objects.filter(pk=self.endpoint.pk).update(**fields)


def _due(endpoint):
    return (Delivery.objects.filter(endpoint=endpoint, state=Delivery.State.PENDING,
                                    due_at__lte=timezone.now()).order_by("event_id"))


# a due delivery as the lane needs it: no model instance per row
_Due = namedtuple("_Due", "pk endpoint_id attempts event")


class _Events:
    """The events lately sent, by uid (SQLite reuses an id after a rollback, never a uid):
    an event read and rendered once per process for all its endpoints, not once per lane.
    Events never change once written."""

    def __init__(self, kept):
        self.kept, self.lock, self.by_uid = kept, threading.Lock(), {}

    def get(self, uids):
        """event id -> Event, for {event id: uid}: those not kept read in one query."""
        with self.lock:
            found = {pk: self.by_uid[uid] for pk, uid in uids.items() if uid in self.by_uid}
        missing = [pk for pk in uids if pk not in found]
        if missing:
            read = Event.objects.in_bulk(missing)
            found.update(read)
            with self.lock:
                self.by_uid.update((event.uid, event) for event in read.values())
                while len(self.by_uid) > self.kept:
                    self.by_uid.pop(next(iter(self.by_uid)))   # the oldest kept goes
        return found


_events = _Events(EVENTS_KEPT)


def _batch(endpoint):
    """The endpoint's next due deliveries, oldest event first (one whose event was purged
    between the two reads is gone with it)."""
    rows = list(_due(endpoint).values_list("pk", "attempts", "event_id", "event__uid")[:BATCH])
    events = _events.get({event_id: uid for _, _, event_id, uid in rows})
    return [_Due(pk, endpoint.pk, attempts, events[event_id])
            for pk, attempts, event_id, _ in rows if event_id in events]


def _delivered(delivery, status):
    """(id, attempts, status, when, latency ms) of a delivery just made."""
    now = timezone.now()
    return (delivery.pk, delivery.attempts + 1, status, now,
            (now - delivery.event.time).total_seconds() * 1000)


def _record(sent):
    """Write the delivered rows in one statement. On PostgreSQL an UPDATE from a VALUES list:
    bulk_update's CASE WHEN per row and field cost more CPU than the sends themselves."""
    if not sent:
        return
    if connection.vendor != "postgresql":
        Delivery.objects.bulk_update(
            [Delivery(pk=pk, state=Delivery.State.DELIVERED, attempts=attempts,
                      last_status=status, last_error="", delivered_at=at, latency_ms=ms)
             for pk, attempts, status, at, ms in sent],
            ["state", "attempts", "last_status", "last_error", "delivered_at", "latency_ms"])
        return
    values = ", ".join(["(%s::bigint, %s::integer, %s::integer, %s::timestamptz, "
                        "%s::double precision)"] * len(sent))
    params = [x for row in sent for x in row]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Delivery._meta.db_table} AS d SET state = %s, attempts = v.attempts, "
            "last_status = v.status, last_error = '', delivered_at = v.at, latency_ms = v.ms "
            f"FROM (VALUES {values}) AS v (id, attempts, status, at, ms) WHERE d.id = v.id",
            [Delivery.State.DELIVERED, *params])


def _failed(delivery, failure):
    """Record the failed attempt; when the circuit may let the next one through (None: out
    of tries, the endpoint's waiting deliveries are dead letters and it starts afresh)."""
    now = timezone.now()
    attempts = delivery.attempts + 1
    fields = {"attempts": attempts, "last_status": failure.status,
              "last_error": str(failure)[:500]}
    waiting = Delivery.objects.filter(endpoint_id=delivery.endpoint_id,
                                      state=Delivery.State.PENDING).exclude(pk=delivery.pk)
    if attempts >= settings.GRANARY_EVENTS_MAX_TRIES:
        Delivery.objects.filter(pk=delivery.pk).update(state=Delivery.State.DEAD, **fields)
        waiting.filter(created_at__lte=now).update(
            state=Delivery.State.DEAD, last_error=f"not sent: the endpoint failed "
            f"{attempts} times in a row ({str(failure)[:300]})")
        return None
    due = leases.until(backoff(attempts), now)
    Delivery.objects.filter(pk=delivery.pk).update(due_at=due, **fields)
    waiting.filter(due_at__lt=due).update(due_at=due)
    return due


def due_lanes(now=None, among=None):
    """Enabled endpoints (of `among`, else all) with a delivery due, a free lane and a closed
    circuit: one index probe per endpoint, not a scan of the deliveries."""
    return [pk for pk, _ in _due_lanes(now, among)]


def _due_lanes(now=None, among=None):
    """(id, slow) of the lanes due_lanes names."""
    now = now or timezone.now()
    rows = Endpoint.objects.filter(closed(now), leases.free(now, "lane_until"), enabled=True)
    if among is not None:
        rows = rows.filter(pk__in=among)
    due = Delivery.objects.filter(endpoint=OuterRef("pk"), state=Delivery.State.PENDING,
                                  due_at__lte=now)
    return list(rows.filter(Exists(due)).order_by("pk").values_list("pk", "slow"))


def wake(lanes=None):
    """Wake the lanes (of `lanes`, else all) that have work and nobody holds: a lane held
    now is handed back with a look for more (deliver), so it needs no nudge. Lanes that are
    not slow go GRANARY_EVENTS_LANES_PER_TASK to a message; a slow one alone."""
    woken = _due_lanes(among=lanes)
    fast = [pk for pk, slow in woken if not slow]
    per = max(1, settings.GRANARY_EVENTS_LANES_PER_TASK)
    for start in range(0, len(fast), per):
        nudges.send("backend.events.deliver", fast[start:start + per])
    for pk, slow in woken:
        if slow:
            nudges.send("backend.events.deliver", pk)
    return [pk for pk, _ in woken]


def wake_due():
    """The sweeper's half: wake every lane with something due that nobody holds."""
    return wake()
