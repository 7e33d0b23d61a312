"""The cart: granules a user sets aside to order together."""
from django.contrib.auth import get_user_model
from django.db import transaction

from backend.accounts.ownership import owned
from backend.errors import DomainError

from ..models import CartItem
from .access import orderable_granules
from .limits import limits


def cart(user):
    return owned(CartItem.objects.select_related("granule__collection"), user)


def add_to_cart(user, granule_ids):
    granules = orderable_granules(user, granule_ids)
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        have = set(owned(CartItem.objects, user).values_list("granule_id", flat=True))
        new = [g for g in granules if g.pk not in have]
        limit = limits().granules
        if len(have) + len(new) > limit:
            raise DomainError(
                f"The cart would hold {len(have) + len(new)} granules; the limit is {limit} "
                "granules (GRANARY_ORDER_MAX_GRANULES).", "limit_granules")
        CartItem.objects.bulk_create([CartItem(user=user, granule=g) for g in new],
                                     ignore_conflicts=True)
    return cart(user)


def remove_from_cart(user, granule_ids=None):
    items = owned(CartItem.objects, user)
    if granule_ids is not None:
        items = items.filter(granule_id__in=granule_ids)
    items.delete()
    return cart(user)
