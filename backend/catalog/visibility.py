"""Who sees what in the catalog: public collections for everyone, restricted ones for their
approved users and their providers' members, everything for operators; granules only once
archived, but for operators."""
from django.db.models import Q

from backend.accounts import roles

from .models import Collection, Granule


def visible_collections(user):
    """Public collections for everyone; restricted ones for approved users and operators."""
    qs = Collection.objects.all()
    if roles.is_operator(user):
        return qs
    if not user.is_authenticated:
        return qs.filter(access=Collection.Access.PUBLIC)
    return qs.filter(
        Q(access=Collection.Access.PUBLIC) | Q(approved_users=user) | Q(providers__members=user)
    ).distinct()


def visible_granules(user, memo=None):
    """Granules of visible collections; only operators see granules that are not archived.
    With `memo` (the request), by the ids of those collections, read once per request
    (visible_collection_ids), not by a subquery in every statement."""
    qs = Granule.objects.select_related("collection")
    if roles.is_operator(user):
        return qs
    visible = (visible_collections(user) if memo is None
               else visible_collection_ids(user, memo))
    return qs.filter(collection__in=visible, state=Granule.State.ARCHIVED)


def visible_collection_ids(user, memo):
    """The ids of the collections `user` sees (visible_collections), read once and kept on
    `memo` (a request, which lives no longer than the answer may): each of a search page's
    statements compiled the visibility subquery with its four joins again, about a tenth of
    its CPU. None for an operator, who sees every collection."""
    if roles.is_operator(user):
        return None
    kept = getattr(memo, "_visible_collection_ids", None)
    if kept is None or kept[0] is not user:
        kept = (user, list(visible_collections(user).order_by().values_list("pk", flat=True)))
        memo._visible_collection_ids = kept
    return kept[1]


def request_collections(user, memo):
    """The collections `user` sees, as a queryset over the ids kept on `memo` (see
    visible_collection_ids)."""
    ids = visible_collection_ids(user, memo)
    return Collection.objects.all() if ids is None else Collection.objects.filter(pk__in=ids)
