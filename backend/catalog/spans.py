"""How long a collection's granules last: no granule outlasts the longest of its collection, so
a window's start bounds the start of the granules that overlap it, and the (collection, start)
index is read from there on rather than from the first granule of the record."""
from django.db import connection
from django.db.models import DurationField, ExpressionWrapper, F, OuterRef, Subquery

from .models import Collection, Granule


def with_longest_granule(collections):
    """`collections` annotated with `longest`, the longest time span of one of their granules
    (None when they have none): a probe per collection of the (collection, temporal_end -
    temporal_start) index."""
    length = ExpressionWrapper(F("temporal_end") - F("temporal_start"),
                               output_field=DurationField())
    longest = (Granule.objects.filter(collection=OuterRef("pk")).annotate(length=length)
               .order_by("-length").values("length")[:1])
    return collections.order_by().annotate(longest=Subquery(longest))


# One probe of the (collection, length) index per collection, written out: the ORM's subquery
# cost a search page a millisecond of Python to compile, the probes themselves microseconds.
_SPANS = """
SELECT c.id, (SELECT g.temporal_end - g.temporal_start FROM catalog_granule g
              WHERE g.collection_id = c.id
              ORDER BY g.temporal_end - g.temporal_start DESC LIMIT 1)
FROM {collections}"""


def collection_spans(ids=None):
    """{collection id: the time span of its longest granule, None without granules} for the
    collections `ids` (every one: None)."""
    if connection.vendor != "postgresql":
        collections = (Collection.objects.all() if ids is None
                       else Collection.objects.filter(pk__in=ids))
        return dict(with_longest_granule(collections).values_list("pk", "longest"))
    with connection.cursor() as cursor:
        if ids is None:
            cursor.execute(_SPANS.format(collections="catalog_collection c"))
        else:
            cursor.execute(_SPANS.format(collections="unnest(%s::bigint[]) AS c(id)"),
                           [list(ids)])
        return dict(cursor.fetchall())


def longest_of(spans, ids=None):
    """The longest of `spans` ({id: span}) for the collections `ids` (all: None), or None when
    they hold no granule."""
    chosen = spans.values() if ids is None else (spans.get(pk) for pk in ids)
    return max((span for span in chosen if span is not None), default=None)
