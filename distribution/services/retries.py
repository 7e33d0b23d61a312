"""Sending failed distribution work round again, for an operator: order items asked of the
archive anew, subscription deliveries made anew. Each answers what it retried and, for the rest,
why not, so a bulk retry over many orders never hides what it could not do."""
from django.db import transaction
from django.utils import timezone

from backend.nudges import send_on_commit

from ..models import Order, OrderItem, SubscriptionDelivery
from .orders import queue_refresh

# Orders whose life is over: their items are not asked for again (the user can order anew).
_CLOSED = (Order.State.CANCELLED, Order.State.EXPIRED)


def retry_items(item_ids):
    """Failed order items (by id) waiting again, asked of the archive once this commits, their
    order's push attempts counted afresh. Returns (how many, [(item id, why not)])."""
    items = OrderItem.objects.filter(pk__in=list(item_ids), state=OrderItem.State.FAILED)
    by_order = {}
    for pk, order_id in items.values_list("pk", "order_id"):
        by_order.setdefault(order_id, []).append(pk)
    retried, skipped = 0, []
    for order_id, pks in sorted(by_order.items()):
        with transaction.atomic():
            order = Order.objects.select_for_update().get(pk=order_id)
            if order.state in _CLOSED:
                skipped += [(pk, f"order {order_id} is {order.state}") for pk in pks]
                continue
            count = OrderItem.objects.filter(pk__in=pks, state=OrderItem.State.FAILED).update(
                state=OrderItem.State.WAITING, error="", recall_request_id=None, eta_s=None,
                in_cache=False, ready_at=None, expires_at=None,
                # a transform tried again from a fresh count, as its operator asked
                transform_attempts=0, transform_started_at=None)
            if count:
                # settled again by the refresh: staging until the archive answers the items
                Order.objects.filter(pk=order_id).update(
                    state=Order.State.STAGING, push_attempts=0, error="",
                    updated_at=timezone.now())
                queue_refresh(order_id)
            retried += count
    return retried, skipped


def retry_deliveries(delivery_ids):
    """Failed subscription deliveries, and pending ones tried many times, made again from a
    fresh count once this commits. Returns (how many, [(delivery id, why not)])."""
    rows = SubscriptionDelivery.objects.filter(
        pk__in=list(delivery_ids),
        state__in=[SubscriptionDelivery.State.FAILED, SubscriptionDelivery.State.PENDING])
    pks = list(rows.values_list("pk", flat=True))
    count = SubscriptionDelivery.objects.filter(pk__in=pks).exclude(
        state=SubscriptionDelivery.State.DELIVERED).update(
        state=SubscriptionDelivery.State.PENDING, attempts=0, detail="")
    for pk in pks:
        send_on_commit("distribution.deliver_subscription", pk)
    return count, []
