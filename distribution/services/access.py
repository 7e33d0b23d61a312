"""Who may order what: a user's orders, and the granules they may order."""
from backend.accounts.ownership import get_owned, owned
from backend.catalog.models import Granule
from backend.catalog.services import visible_collections
from backend.errors import DomainError, Forbidden, listed

from ..models import Order


def orders_of(user):
    """Operators see every order; everyone else only their own."""
    return owned(Order.objects.select_related("user", "destination"), user)


def get_order(user, order_id):
    return get_owned(Order.objects.select_related("user", "destination"), user, order_id,
                     "order")


def orderable_granules(user, granule_ids):
    """The granules `user` may order, or a 400 (unknown, not archived) or 403 (restricted)."""
    try:
        ids = sorted({int(g) for g in granule_ids})
    except (TypeError, ValueError) as exc:
        raise DomainError("Granules are given by their numeric ids.", "granules") from exc
    if not ids:
        raise DomainError("Name at least one granule.", "granules")
    found = {g.pk: g for g in Granule.objects.select_related("collection").filter(pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise DomainError(f"There is no granule {listed(missing)}.", "granules")
    visible = set(visible_collections(user).filter(
        pk__in={g.collection_id for g in found.values()}).values_list("pk", flat=True))
    hidden = sorted({g.collection.key for g in found.values() if g.collection_id not in visible})
    if hidden:
        raise Forbidden(f"Collection {listed(hidden)} is restricted and you are not "
                        "approved to order it.")
    unarchived = [g for g in found.values() if g.state != Granule.State.ARCHIVED]
    if unarchived:
        raise DomainError(
            f"Granule {unarchived[0]} is {unarchived[0].state}, not archived: it cannot be "
            "ordered yet.", "granules")
    return [found[i] for i in ids]
