"""Lanes that should move and do not, found for reconciliation (the archive registers these
with its checks: events cannot import the archive).

- Stuck: an enabled endpoint with a delivery due for STUCK_S or more, its circuit closed as
  long (retry_at unset or STUCK_S past), its lane free and nothing delivered in that time. The
  sweeper wakes such a lane every few seconds, so one left this long is being refused (a slow
  mark keeping it out of a full slow share) or was never woken. Its repair clears the circuit
  and the slow mark and wakes the lane: the next hold measures the endpoint again.
- Stale slow: an endpoint marked slow, its lane free, that has sent nothing for SLOW_STALE_S
  (no delivery, no attempt). The mark was measured on sends long past yet keeps the endpoint
  to the slow share when work comes; its repair clears the mark.

A repair judges its endpoint again first and changes nothing it no longer finds (the lane
moved, or a worker took it meanwhile)."""
from datetime import timedelta

from django.db.models import Exists, Min, OuterRef, Q
from django.utils import timezone

from backend import leases, nudges

from ..models import Delivery, Endpoint

STUCK_S = 300          # sixty sweeps (events-sweep runs every five seconds)
SLOW_STALE_S = 86400   # a slow mark measured a day ago says little of the endpoint now


def _sent_since(since):
    """Endpoints that sent something since `since`: a delivery made, or an attempt on one due
    since (it was tried at or after its due time), or a failure that set retry_at later."""
    tried = Delivery.objects.filter(endpoint=OuterRef("pk"), attempts__gt=0).filter(
        Q(delivered_at__gte=since) | Q(due_at__gte=since))
    return Exists(tried) | Q(retry_at__gt=since)


def stuck(now=None, among=None):
    """The stuck endpoints (of `among`, else all), each with `waiting_since`: the due time of
    its oldest delivery due."""
    now = now or timezone.now()
    since = now - timedelta(seconds=STUCK_S)
    late = Delivery.objects.filter(endpoint=OuterRef("pk"), state=Delivery.State.PENDING,
                                   due_at__lte=since)
    rows = Endpoint.objects.filter(leases.free(now, "lane_until"), Exists(late), enabled=True)
    if among is not None:
        rows = rows.filter(pk__in=among)
    rows = rows.exclude(_sent_since(since)).annotate(waiting_since=Min(
        "deliveries__due_at", filter=Q(deliveries__state=Delivery.State.PENDING)))
    return list(rows.order_by("pk"))


def stale_slow(now=None, among=None):
    """Endpoints (of `among`, else all) marked slow that have sent nothing for SLOW_STALE_S."""
    now = now or timezone.now()
    rows = Endpoint.objects.filter(leases.free(now, "lane_until"), slow=True).exclude(
        _sent_since(now - timedelta(seconds=SLOW_STALE_S)))
    if among is not None:
        rows = rows.filter(pk__in=among)
    return list(rows.order_by("pk"))


def unstick(endpoint_id):
    """Clear a stuck endpoint's circuit and slow mark and wake its lane; False when it is not
    stuck any more."""
    now = timezone.now()
    if not stuck(now, among=[endpoint_id]):
        return False
    cleared = Endpoint.objects.filter(leases.free(now, "lane_until"), pk=endpoint_id).update(
        retry_at=None, slow=False)
    if cleared:
        nudges.send("backend.events.deliver", endpoint_id)
    return bool(cleared)


def forget_slow(endpoint_id):
    """Clear a stale slow mark; False when it is not stale any more."""
    now = timezone.now()
    if not stale_slow(now, among=[endpoint_id]):
        return False
    return bool(Endpoint.objects.filter(leases.free(now, "lane_until"), pk=endpoint_id,
                                        slow=True).update(slow=False))
