"""The facets and timeline of a shape search, counted from the candidates the exact test
passes: one read of the candidates (id with collection, or with start) and the counts made
here, not a second and third query over an IN list of up to EXACT_COUNT_LIMIT ids."""
from collections import Counter
from datetime import UTC

from backend.errors import DomainError

from . import services, timeline


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


def shape_timeline(queryset, shape, bucket="auto"):
    """(granule_timeline of the granules of `queryset` that meet `shape`, whether exact)."""
    passed = _passed(queryset, shape, "temporal_start")
    if passed is None:
        return services.granule_timeline(queryset, bucket), False
    starts = [s.astimezone(UTC) for s in passed.values()]
    if not starts:
        return services.Timeline("day" if bucket == "auto" else bucket, 0, []), True
    first, last = min(starts), max(starts)
    if bucket == "auto":
        bucket = timeline.auto_bucket(first, last)
    try:
        buckets = timeline.bucket_starts(first, last, bucket)
    except timeline.TimelineError as exc:
        raise DomainError(str(exc), "bucket") from exc
    counts = Counter(timeline.floor(s, bucket) for s in starts)
    return services.Timeline(bucket, len(starts),
                             [{"start": b, "count": counts.get(b, 0)} for b in buckets]), True
