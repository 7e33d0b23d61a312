"""The facets of a shape search, counted from the candidates the exact test passes: one read
of the candidates (id and collection id, both integers) and the counts made here, not a second
query over an IN list of up to EXACT_COUNT_LIMIT ids. (The timeline keeps its GROUP BY over
the ids passed: reading each candidate's start time costs more in Python, where psycopg
parses every timestamp, than the database spends on the list.)"""
from collections import Counter

from . import services


def _passed(queryset, shape, field):
    """{pk: field value} of the candidates meeting `shape`, or None past EXACT_COUNT_LIMIT."""
    rows = list(queryset.order_by().values_list("pk", field)[: services.EXACT_COUNT_LIMIT + 1])
    if len(rows) > services.EXACT_COUNT_LIMIT:
        return None
    value = dict(rows)
    pks = [pk for pk, _ in rows]
    passed = []
    for i in range(0, len(pks), services.MAX_CHUNK):
        passed += services.exact_matches(shape, pks[i:i + services.MAX_CHUNK])
    return {pk: value[pk] for pk in passed}


def shape_facets(queryset, shape):
    """(granule_facets of the granules of `queryset` that meet `shape`, whether exact): over
    EXACT_COUNT_LIMIT candidates the counts are the box's (an upper bound)."""
    passed = _passed(queryset, shape, "collection")
    if passed is None:
        return services.granule_facets(queryset), False
    return services.facets_of(Counter(passed.values())), True
