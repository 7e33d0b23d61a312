"""Upkeep the beat runs: orders and links expired (with a warning a day ahead), and a sweep
that re-does what a lost message left undone."""
import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..models import Delivery, Order, OrderItem, SubscriptionDelivery
from .deliveries import deliver
from .notify import order_event
from .orders import refresh_order, release_cache
from .push import push_order
from .transforms import remove_outputs

log = logging.getLogger(__name__)


def expire():
    """Beat: expire ready items and orders past their time, and warn a day before."""
    now = timezone.now()
    items = list(OrderItem.objects.filter(state=OrderItem.State.READY, expires_at__lte=now))
    OrderItem.objects.filter(pk__in=[i.pk for i in items]).update(state=OrderItem.State.EXPIRED)
    # an order staged in parts whose ready part was left undownloaded is abandoned: the rest
    # is not recalled (its next parts would otherwise follow one retention after another)
    abandoned = Order.objects.filter(subscription__isnull=True, state=Order.State.STAGING,
                                     pk__in={i.order_id for i in items})
    waiting = OrderItem.objects.filter(order__in=abandoned, state=OrderItem.State.WAITING)
    items += list(waiting)
    waiting.update(state=OrderItem.State.EXPIRED)
    abandoned.update(state=Order.State.EXPIRED, updated_at=now)
    release_cache(items)
    remove_outputs(items)
    live = Order.objects.filter(subscription__isnull=True,
                                state__in=[Order.State.READY, Order.State.PARTIALLY_READY])
    expired = live.filter(expires_at__lte=now).update(state=Order.State.EXPIRED, updated_at=now)
    warn_by = now + timedelta(hours=settings.GRANARY_ORDER_EXPIRY_WARNING_H)
    for order in live.filter(expiry_warned=False, expires_at__gt=now, expires_at__lte=warn_by):
        with transaction.atomic():
            order_event(order, "order.expiring", expires_at=order.expires_at.isoformat())
            Order.objects.filter(pk=order.pk).update(expiry_warned=True)
    return {"items": len(items), "orders": expired}


def sweep():
    """Beat: re-check staging orders, re-kick pushes and pending subscription deliveries."""
    for order_id in Order.objects.filter(
            state__in=[Order.State.SUBMITTED, Order.State.STAGING]).values_list("pk", flat=True):
        try:
            refresh_order(order_id)
        except Exception:
            log.exception("refreshing order %s", order_id)
    pushes = (OrderItem.objects.filter(order__delivery=Delivery.PUSH, state=OrderItem.State.READY,
                                       pushed_at__isnull=True,
                                       order__push_attempts__lt=settings.GRANARY_PUSH_MAX_ATTEMPTS)
              .values_list("order_id", flat=True).distinct())
    for order_id in pushes:
        try:
            push_order(order_id)
        except Exception:
            log.exception("pushing order %s", order_id)
    for delivery_id in SubscriptionDelivery.objects.filter(
            state=SubscriptionDelivery.State.PENDING).values_list("pk", flat=True):
        try:
            deliver(delivery_id)
        except Exception:
            log.exception("subscription delivery %s", delivery_id)
