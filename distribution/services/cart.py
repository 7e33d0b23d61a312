"""The cart: granules a user sets aside to order together."""
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Sum

from backend.accounts.ownership import owned
from backend.catalog.models import Granule
from backend.catalog.retired import RETIRED, retirement
from backend.errors import DomainError

from ..models import CartItem
from .access import orderable_granules
from .limits import limits


def _items(user):
    return owned(CartItem.objects.select_related("granule__collection"), user)


def cart(user):
    """The granules of the cart that can be ordered (archived)."""
    return _items(user).filter(granule__state=Granule.State.ARCHIVED)


@dataclass
class Contents:
    """What the cart shows, from one read of it: `items`, the granules that can be ordered
    (archived), and `withdrawn`, [(item, Retirement)] for those withdrawn or deleted since
    they were put in the cart: they stay there, so the cart can say which and when, until the
    user removes them (a withdrawn granule restored comes back to the cart by itself)."""

    items: list
    withdrawn: list


def contents(user):
    """The cart's Contents in one statement (its orderable and its withdrawn granules were
    two reads of the same rows), each part in the cart's order."""
    rows = list(_items(user).filter(granule__state__in=[Granule.State.ARCHIVED, *RETIRED]))
    return Contents(
        items=[item for item in rows if item.granule.state == Granule.State.ARCHIVED],
        withdrawn=[(item, retirement(item.granule)) for item in rows
                   if item.granule.state in RETIRED])


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
    return contents(user)


def remove_from_cart(user, granule_ids=None):
    items = owned(CartItem.objects, user)
    if granule_ids is not None:
        items = items.filter(granule_id__in=granule_ids)
    items.delete()
    return contents(user)


@dataclass
class AddedMatching:
    matched: int        # granules the search found
    added: int          # of them, not in the cart before


def add_matching_to_cart(user, granules):
    """Put every granule of a search (`granules`: a filtered queryset of what `user` sees) in
    the cart, or none: refused with the count and the limit when the cart would hold more
    granules, or more bytes, than one order may (counted in the database: nothing is read
    row by row until it is known to fit)."""
    matching = granules.filter(state=Granule.State.ARCHIVED).order_by()
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        in_cart = owned(CartItem.objects, user)
        new = matching.exclude(pk__in=in_cart.values("granule_id"))
        matched, adding, have = matching.count(), new.count(), in_cart.count()
        limit = limits()
        if have + adding > limit.granules:
            raise DomainError(
                f"{matched} granules match this search; with the {have} in your cart that makes "
                f"{have + adding}, over the limit of {limit.granules} granules an order may hold "
                "(GRANARY_ORDER_MAX_GRANULES). Narrow the search.", "limit_granules")
        nbytes = ((in_cart.aggregate(n=Sum("granule__total_size"))["n"] or 0)
                  + (new.aggregate(n=Sum("total_size"))["n"] or 0))
        if nbytes > limit.bytes:
            raise DomainError(
                f"{matched} granules match this search; with your cart that makes "
                f"{nbytes / 1e9:.1f} GB, over the limit of {limit.bytes / 1e9:g} GB an order may "
                "hold (GRANARY_ORDER_MAX_GB). Narrow the search.", "limit_bytes")
        CartItem.objects.bulk_create(
            [CartItem(user=user, granule_id=pk) for pk in new.values_list("pk", flat=True)],
            ignore_conflicts=True)
    return AddedMatching(matched, adding)
