"""Limits: how many granules and bytes one order (and the cart) holds, how many orders a user
keeps open at once."""
from dataclasses import dataclass

from django.conf import settings

from backend.errors import DomainError

from ..models import Order


@dataclass(frozen=True)
class Limits:
    granules: int
    bytes: int
    open_orders: int


def limits():
    return Limits(
        granules=settings.GRANARY_ORDER_MAX_GRANULES,
        bytes=int(settings.GRANARY_ORDER_MAX_GB * 10**9),
        open_orders=settings.GRANARY_ORDER_MAX_OPEN,
    )


def check_size(granules, what):
    """The bytes of `granules`, or a 400 when `what` (an order) holds too many or too much."""
    limit = limits()
    if len(granules) > limit.granules:
        raise DomainError(
            f"{what} has {len(granules)} granules; the limit is {limit.granules} granules "
            "(GRANARY_ORDER_MAX_GRANULES). Split it into several orders.", "limit_granules")
    nbytes = sum(g.total_size for g in granules)
    if nbytes > limit.bytes:
        raise DomainError(
            f"{what} holds {nbytes / 1e9:.1f} GB; the limit is {limit.bytes / 1e9:g} GB "
            "(GRANARY_ORDER_MAX_GB). Split it into several orders.", "limit_bytes")
    return nbytes


def open_orders(user):
    return Order.objects.filter(user=user, subscription__isnull=True, state__in=Order.OPEN)


def order_limits(user):
    """The limits as a user sees them before ordering, with their open orders counted."""
    limit = limits()
    return {"granules": limit.granules, "bytes": limit.bytes, "open_orders": limit.open_orders,
            "open_orders_used": open_orders(user).count()}
