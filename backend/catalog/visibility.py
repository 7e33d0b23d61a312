"""Who sees what in the catalog: public collections for everyone, restricted ones for their
approved users and their providers' members, everything for operators; granules only once
archived, but for operators."""
from django.db.models import Q

from backend.accounts import roles
from backend.fixed_reads import FixedRead

from .models import Collection, Granule
from .spans import collection_spans, longest_of


def visible_collections(user):
    """Public collections for everyone; restricted ones for approved users and operators."""
    qs = Collection.objects.all()
    if roles.is_operator(user):
        return qs
    if not user.is_authenticated:
        return _anonymous_sees(qs)
    return _signed_in_sees(qs, user.pk)


def _anonymous_sees(collections):
    return collections.filter(access=Collection.Access.PUBLIC)


def _signed_in_sees(collections, user_id):
    return collections.filter(
        Q(access=Collection.Access.PUBLIC) | Q(approved_users=user_id)
        | Q(providers__members=user_id)).distinct()


def visible_granules(user, memo=None):
    """Granules of visible collections; only operators see granules that are not archived.
    With `memo` (the request), by the ids of those collections, read once per request
    (visible_collection_ids), not by a subquery in every statement; the queryset is built once
    per request too (a search page's list, facets and timeline each asked for it)."""
    kept = getattr(memo, "_visible_granules", None)
    if kept is not None and kept[0] is user:     # built once a request: querysets don't change
        return kept[1]
    qs = Granule.objects.select_related("collection")
    if not roles.is_operator(user):
        visible = (visible_collections(user) if memo is None
                   else visible_collection_ids(user, memo))
        qs = qs.filter(collection__in=visible, state=Granule.State.ARCHIVED)
    if memo is not None:
        memo._visible_granules = (user, qs)
    return qs


def visible_collection_ids(user, memo):
    """The ids of the collections `user` sees (visible_collections), read once and kept on
    `memo` (a request, which lives no longer than the answer may): each of a search page's
    statements compiled the visibility subquery with its four joins again, about a tenth of
    its CPU. None for an operator, who sees every collection."""
    keys = _visible_keys(user, memo)
    return None if keys is None else list(keys.values())


def visible_collection_id(user, memo, key):
    """The id of the collection `key` (SHORT.VERSION) among those `user` sees, from what
    visible_collection_ids keeps on `memo` (a search names its collections by key: looked up
    once more per request otherwise); Collection.DoesNotExist, as get_by_key says it, when it
    is not one of them."""
    keys = _visible_keys(user, memo)
    if keys is None:
        return Collection.objects.get_by_key(key).pk
    try:
        return keys[Collection.objects.split_key(key)]
    except KeyError:
        raise Collection.objects.unknown(key) from None


def visible_longest_granule(user, memo, ids=None):
    """The longest time span of a granule of the collections `ids` (all those `user` sees:
    None), so a search's window bounds the start index: the spans of the caller's collections
    are read once per request and kept on `memo` (spans.collection_spans)."""
    kept = getattr(memo, "_collection_spans", None)
    if kept is None or kept[0] is not user:
        kept = (user, collection_spans(visible_collection_ids(user, memo)))
        memo._collection_spans = kept
    return longest_of(kept[1], ids)


# What a search's facets show of a collection (services.facets_of), read with the keys.
FACET_FIELDS = ("id", "short_name", "version", "processing_level", "platform", "instrument")

# visible_collections' read of FACET_FIELDS, compiled once per connection (backend.fixed_reads):
# by an anonymous caller and by a signed-in one (not an operator, who sees every collection)
_ANONYMOUS_SEES = FixedRead(lambda: _anonymous_sees(
    Collection.objects.all()).order_by().values_list(*FACET_FIELDS), [])
_SIGNED_IN_SEES = FixedRead(lambda user_id: _signed_in_sees(
    Collection.objects.all(), user_id).order_by().values_list(*FACET_FIELDS), [int])


def visible_collection_facets(user, memo):
    """{id: {field: value} of FACET_FIELDS} of the collections `user` sees, from the read
    visible_collection_ids keeps on `memo` (a search's facets named them by a statement of
    their own); None for an operator."""
    return _visible(user, memo)[1]


def _visible_keys(user, memo):
    """{(short name, version): id} of the collections `user` sees, kept on `memo`; None for
    an operator."""
    return _visible(user, memo)[0]


def _visible(user, memo):
    """(_visible_keys, visible_collection_facets) of `user`, read once and kept on `memo`;
    (None, None) for an operator."""
    if roles.is_operator(user):
        return None, None
    kept = getattr(memo, "_visible_collections", None)
    if kept is None or kept[0] is not user:
        rows = (_SIGNED_IN_SEES.rows(user.pk) if user.is_authenticated
                else _ANONYMOUS_SEES.rows())
        facets = {row[0]: dict(zip(FACET_FIELDS, row, strict=True)) for row in rows}
        keys = {(row["short_name"], row["version"]): pk for pk, row in facets.items()}
        kept = (user, (keys, facets))
        memo._visible_collections = kept
    return kept[1]
