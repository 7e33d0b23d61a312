"""Lanes: each endpoint's deliveries are sent by one worker at a time (the one holding its
lane), oldest event first, for a bounded time before the lane is handed back, so one endpoint
never holds up another's. A failed send backs off (doubling) and the endpoint's other waiting
deliveries wait behind it; once it is out of tries they all become dead letters. A worker
killed mid-send loses nothing: the lane's lease runs out and the next worker sends again
(at least once; the event id lets the receiver drop the copy)."""
import time

from django.conf import settings
from django.db.models import Min
from django.utils import timezone

from backend import leases, nudges

from .. import channels
from ..models import Delivery, Endpoint

BATCH = 100


def lane_seconds():
    return settings.GRANARY_EVENTS_SLICE_S + settings.GRANARY_EVENTS_TIMEOUT_S + 5


def backoff(attempts):
    return min(settings.GRANARY_EVENTS_RETRY_BASE_S * 2 ** (attempts - 1), 3600)


def _take(endpoint_id):
    return leases.take(Endpoint.objects.filter(pk=endpoint_id, enabled=True), lane_seconds(),
                       field="lane_until")


def deliver(endpoint_id):
    """Send the endpoint's due deliveries for one slice of time; how many were delivered."""
    if not _take(endpoint_id):
        return 0
    endpoint = Endpoint.objects.select_related("user").get(pk=endpoint_id)
    done, stop = 0, time.monotonic() + settings.GRANARY_EVENTS_SLICE_S
    try:
        while time.monotonic() < stop:
            batch = list(_due(endpoint)[:BATCH])
            if not batch:
                break
            sent, failed = _send_batch(endpoint, batch, stop)
            done += sent
            if failed:
                break
    finally:
        Endpoint.objects.filter(pk=endpoint_id).update(lane_until=None)
    if _due(endpoint).exists():
        nudges.send("backend.events.deliver", endpoint_id)
    return done


def _due(endpoint):
    return (Delivery.objects.filter(endpoint=endpoint, state=Delivery.State.PENDING,
                                    due_at__lte=timezone.now())
            .select_related("event").order_by("event_id"))


def _send_batch(endpoint, batch, stop):
    """Send in order; the lane's lease is renewed as a third of it passes, and what was
    delivered is recorded in one write at the end (a kill before it only sends them again)."""
    sent, failed, renewed = [], False, time.monotonic()
    try:
        for delivery in batch:
            now = time.monotonic()
            if now >= stop:
                break
            if now - renewed > lane_seconds() / 3:
                Endpoint.objects.filter(pk=endpoint.pk).update(
                    lane_until=leases.until(lane_seconds()))
                renewed = now
            try:
                status = channels.send(endpoint, delivery.event)
            except channels.Undelivered as failure:
                _failed(delivery, failure)
                failed = True
                break
            sent.append(_delivered(delivery, status))
    finally:
        Delivery.objects.bulk_update(sent, ["state", "attempts", "last_status", "last_error",
                                            "delivered_at", "latency_ms"])
    return len(sent), failed


def _delivered(delivery, status):
    now = timezone.now()
    delivery.state, delivery.attempts = Delivery.State.DELIVERED, delivery.attempts + 1
    delivery.last_status, delivery.last_error, delivery.delivered_at = status, "", now
    delivery.latency_ms = (now - delivery.event.time).total_seconds() * 1000
    return delivery


def _failed(delivery, failure):
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
        return
    due = leases.until(backoff(attempts), now)
    Delivery.objects.filter(pk=delivery.pk).update(due_at=due, **fields)
    waiting.filter(due_at__lt=due).update(due_at=due)


def wake_due():
    """The sweeper's half: wake every lane with something due that nobody holds."""
    now = timezone.now()
    lanes = (Delivery.objects.filter(state=Delivery.State.PENDING, due_at__lte=now,
                                     endpoint__enabled=True)
             .filter(leases.free(now, "endpoint__lane_until"))
             .values("endpoint_id").annotate(first=Min("due_at")))
    woken = [row["endpoint_id"] for row in lanes]
    for endpoint_id in woken:
        nudges.send("backend.events.deliver", endpoint_id)
    return woken
