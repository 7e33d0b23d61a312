"""A search page in one request: the list's `include=facets,timeline` answers the facets and
the timeline with the page of results, computed once from what the three separate requests
(the list, /granules/facets/, /granules/timeline/) each computed on their own.

The answers are those of the separate endpoints: the facets count what the search's other
filters select (its collection, processing_level, platform and instrument left out, as the
search page asks for them, so every value is offered with the number it would give), the
timeline counts what the list selects. What is shared: a shape search's exact footprint test
runs once, over the facets' candidates, a superset of the list's; the timeline counts the ids
it passed, and the page keeps those ids without testing its candidates again. Each request
also pays its own authentication, session and filter parsing once instead of three times.
/granules/facets/ counts with the same SearchSummary, so there is one way to count.

A shape's facets are counted here from the candidates the exact test passes (id and collection
id, both integers), not by a second query over an IN list of up to EXACT_COUNT_LIMIT ids; the
timeline keeps its GROUP BY over the ids passed: reading each candidate's start time costs more
in Python, where psycopg parses every timestamp, than the database spends on the list.
"""
from collections import Counter

from backend.errors import DomainError

from . import services, shape_search
from .models import Granule

INCLUDES = ("facets", "timeline")
# The list's filters that select collections: the facets leave them out.
COLLECTION_FILTERS = ("collection", "processing_level", "platform", "instrument")


def parse_include(raw):
    """The parts asked for by `include` (a comma-separated list of INCLUDES): a 400 for any
    other word; an empty tuple without the parameter."""
    if raw is None:
        return ()
    words = [w.strip() for w in str(raw).split(",")]
    unknown = [w for w in words if w not in INCLUDES]
    if unknown or not words:
        raise DomainError(f"include takes {' and/or '.join(INCLUDES)}, comma-separated, not "
                          f"{str(raw)[:60]!r}.", "include")
    return tuple(name for name in INCLUDES if name in words)


def facet_data(data):
    """The filters the facets count with: the search's, its collection filters left out."""
    facets = data.copy()
    for name in COLLECTION_FILTERS:
        facets.pop(name, None)
    return facets


def _tested(rows, shape):
    """{pk: collection id} of `rows` [(pk, collection id)] whose footprint meets `shape`."""
    collection = dict(rows)
    return {pk: collection[pk]
            for pk in shape_search.exact_matches(shape, [pk for pk, _ in rows])}


def _candidates(queryset, with_collection=False):
    """The ids (with their collection ids) of `queryset`, or None past EXACT_COUNT_LIMIT."""
    fields = ("pk", "collection") if with_collection else ("pk",)
    rows = list(queryset.order_by().values_list(*fields)[: shape_search.EXACT_COUNT_LIMIT + 1])
    return None if len(rows) > shape_search.EXACT_COUNT_LIMIT else rows


class SearchSummary:
    """The facets and the timeline of one search, from `matching` (the list's filters, box
    prefilter only), `facet_base` (the same without the collection filters; `same` when no
    collection filter was given, so both select the same granules) and `shape` (None: no
    footprint test); `collections`, the caller's collections' facet fields when the request
    has read them (services.visible_collection_facets), spares the facets a statement."""

    def __init__(self, matching, facet_base, shape, *, same, collections=None):
        self.matching, self.facet_base, self.shape, self.same = matching, facet_base, shape, same
        self.collections = collections
        self._facet_passed = self._matching_passed = None
        self._facet_rows = self._matching_pks = False      # False: not read yet

    def facets(self):
        """granule_facets of the facet filters (with counts_exact for a shape search)."""
        if self.shape is None:
            return services.granule_facets(self.facet_base, self.collections)
        rows = self._facet_candidates()
        if rows is None:
            return {**services.granule_facets(self.facet_base, self.collections),
                    "counts_exact": False}
        self._facet_passed = _tested(rows, self.shape)
        return {**services.facets_of(Counter(self._facet_passed.values()), self.collections),
                "counts_exact": True}

    def timeline(self, bucket):
        """(the Timeline of the matching granules, whether exact: None without a shape)."""
        if self.shape is None:
            return services.granule_timeline(self.matching, bucket), None
        passed = self.matching_passed()
        if passed is None:
            return services.granule_timeline(self.matching, bucket), False
        return services.granule_timeline(Granule.objects.filter(pk__in=passed), bucket), True

    def matching_passed(self):
        """The ids of the matching granules that meet the shape, or None when there are more
        candidates than are tested (or no shape)."""
        if self.shape is None:
            return None
        if self._matching_passed is None:
            pks = self._matching_candidates()
            if pks is None:
                return None
            if self._facet_passed is not None:      # a superset, already tested
                self._matching_passed = {pk for pk in pks if pk in self._facet_passed}
            else:
                self._matching_passed = set(_tested([(pk, None) for pk in pks], self.shape))
        return self._matching_passed

    def known_passed(self):
        """matching_passed when what was computed already gives it (the timeline's, or the
        facets' when both select the same granules), else None: the page then tests its own
        candidates, a few dozen, rather than every one."""
        if self._matching_passed is None and self.same and self._facet_passed is not None:
            return self.matching_passed()
        return self._matching_passed

    def _facet_candidates(self):
        if self._facet_rows is False:
            self._facet_rows = _candidates(self.facet_base, with_collection=True)
        return self._facet_rows

    def _matching_candidates(self):
        if self._matching_pks is False:
            if self.same and self._facet_rows is not False:
                rows = self._facet_rows
            else:
                rows = _candidates(self.matching)
            self._matching_pks = None if rows is None else [row[0] for row in rows]
        return self._matching_pks
