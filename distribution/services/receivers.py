"""Receivers of the archive's signals: what distribution does when a file is recalled or
granules are archived. They never raise into the storage manager."""
import logging
from datetime import timedelta

from django.utils import timezone

from backend.nudges import send_on_commit

from ..models import Order, OrderItem, SubscriptionDelivery
from . import staging_progress
from .orders import NEEDS_CACHE, keep_in_cache, queue_refresh, release_cache, retention, settle
from .transforms import remove_outputs

log = logging.getLogger(__name__)


# How long a recalled file is held for the orders waiting for it until their refresh keeps it
# for as long as each item lives. Shorter than any item's keep: held for a whole retention from
# the mover's clock, a notice racing the refresh kept the file a moment past the item's expiry,
# so the download never released it (a squeezed cache stayed full for a week: the chaos run).
RECALL_HOLD = timedelta(hours=1)


def on_files_recalled(sender, file_ids, **kwargs):
    """Receiver of archive.signals.files_recalled (once per batch the mover commits): the files
    are held for the orders that asked for them at once, in the mover, before its next recall
    may purge (their refresh, which makes the items ready and keeps them, runs later in a
    worker); those orders are refreshed now rather than at the next sweep, and the stage files
    waiting for them complete. A few statements per batch, whatever its size. Never raises
    into the storage manager."""
    try:
        needed = set(OrderItem.objects.filter(NEEDS_CACHE, file_id__in=file_ids,
                                              state=OrderItem.State.WAITING)
                     .values_list("file_id", flat=True))
        if needed:
            keep_in_cache(sorted(needed), timezone.now() + min(RECALL_HOLD, retention()))
        for order_id in (OrderItem.objects.filter(
                file_id__in=file_ids,
                order__state__in=[Order.State.SUBMITTED, Order.State.STAGING])
                .values_list("order_id", flat=True).distinct().order_by("order_id")):
            queue_refresh(order_id)
    except Exception:
        log.exception("queueing the refresh of orders waiting for %d recalled files",
                      len(file_ids))
    try:
        staging_progress.on_files_recalled(file_ids)
    except Exception:
        log.exception("completing the stage requests waiting for %d recalled files",
                      len(file_ids))


def on_granules_archived(sender, granules, **kwargs):
    """Receiver of archive.signals.granules_archived: hand the matching of a batch archived
    together to a worker as one message (a message per granule cost the storage manager more
    than the writes). It never raises into the storage manager; the sweep of pending
    deliveries covers a lost message."""
    try:
        send_on_commit("distribution.match_granules", [g.pk for g in granules])
    except Exception:
        log.exception("queueing subscription matching for %d granules", len(granules))


def on_granule_retired(sender, granule, action, reason, **kwargs):
    """Receiver of archive.signals.granule_retired, inside the operator's transaction (so it
    raises: the withdrawal or deletion and what it drops land together): the granule's live
    order items fail with the reason and their orders settle, its pending subscription
    deliveries fail. It stays in carts, which say it was withdrawn and when (cart service)."""
    why = f"{granule} was {granule.state} by an operator: {reason}"
    now = timezone.now()
    items = list(OrderItem.objects.filter(
        granule=granule, state__in=[OrderItem.State.WAITING, OrderItem.State.READY])
        .exclude(order__state__in=Order.FINAL))
    OrderItem.objects.filter(pk__in=[i.pk for i in items]).update(
        state=OrderItem.State.FAILED, error=why, eta_s=None)
    release_cache(items)
    remove_outputs(items)
    for order in Order.objects.select_for_update().filter(
            pk__in={i.order_id for i in items}).order_by("pk"):
        settle(order, now)
    SubscriptionDelivery.objects.filter(
        granule=granule, state=SubscriptionDelivery.State.PENDING).update(
        state=SubscriptionDelivery.State.FAILED, detail=why)
