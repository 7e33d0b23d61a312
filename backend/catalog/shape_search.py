"""The shape search: the indexed box prefilter of a shape, the exact test of its candidates'
footprints (shapely, no PostGIS here), and the page and subset of a search that applies it."""
from django.db.models import BooleanField, Case, F, Q, TextField, Value, When

from backend.errors import DomainError

from . import shapes
from .geo import BBox
from .models import Granule


def bbox_q(box: BBox):
    """Granules whose footprint intersects `box`, antimeridian crossings on either side."""
    lat = Q(south__lte=box.north, north__gte=box.south)
    plain, crossing = Q(west__lte=F("east")), Q(west__gt=F("east"))
    lon = Q()
    for lo, hi in box.longitude_spans():
        lon |= plain & Q(west__lte=hi, east__gte=lo)
        lon |= crossing & (Q(west__lte=hi) | Q(east__gte=lo))
    return lat & lon


def shape_q(shape):
    """The indexed prefilter of a shape: granules whose box meets one of its boxes. The exact
    test (exact_matches) runs on what it selects."""
    q = Q(pk__in=[])
    for box in shape.boxes:
        q |= bbox_q(box)
    return q


FOOTPRINT_FIELDS = ("footprint", "west", "south", "east", "north")


def exact_matches(shape, pks):
    """Those of `pks` (in their order) whose footprint really meets `shape`: a candidate the
    box prefilter let through is read and tested with shapely (no PostGIS here), except, for
    a bbox search, one whose box lies inside the search's (its footprint, within its box,
    meets it): most of a search's candidates, whose footprint text is then not even read.
    Read MAX_CHUNK candidates a query."""
    pks = list(pks)
    return [pk for i in range(0, len(pks), MAX_CHUNK)
            for pk in _exact_chunk(shape, pks[i:i + MAX_CHUNK])]


def _exact_chunk(shape, pks):
    if not pks:
        return []
    inside = _inside_q(shape)
    footprint = F("footprint") if inside is None else Case(
        When(inside, then=Value(None)), default=F("footprint"), output_field=TextField())
    rows = Granule.objects.filter(pk__in=pks).order_by().annotate(
        inside=Value(False) if inside is None else Case(
            When(inside, then=Value(True)), default=Value(False), output_field=BooleanField()),
        shown=footprint).values_list("pk", "inside", "shown", *FOOTPRINT_FIELDS[1:])
    rows = {pk: rest for pk, *rest in rows}
    ordered = [pk for pk in pks if pk in rows]
    test = [pk for pk in ordered if not rows[pk][0]]
    hits = dict(zip(test, shape.intersects_many(shapes.load_footprints(
        [rows[pk][1:] for pk in test])), strict=True))
    return [pk for pk in ordered if rows[pk][0] or hits[pk]]


def _inside_q(shape):
    """Granules whose (non-crossing) box lies inside one of a box shape's longitude spans:
    None for any other shape, or a box without area (a line or a point)."""
    if not shape.is_box:
        return None
    [box] = shape.boxes
    if box.south >= box.north:
        return None
    q = Q()
    for lo, hi in box.longitude_spans():
        if lo < hi:
            q |= Q(west__gte=lo, east__lte=hi, south__gte=box.south, north__lte=box.north)
    return (q & Q(west__lte=F("east"))) if q else None


def meets(shape, granules):
    """For each granule object (footprint and box loaded), whether it really meets `shape`."""
    return shape.intersects_many(shapes.load_footprints(
        [[getattr(g, name) for name in FOOTPRINT_FIELDS] for g in granules]))


# The exact test reads candidates in chunks that grow from a page (at least MIN_CHUNK rows)
# up to MAX_CHUNK rows.
MIN_CHUNK, MAX_CHUNK = 64, 5000
# Up to this many candidates, a shape search's facets are counted exactly.
EXACT_COUNT_LIMIT = 10000
# A page of a shape search whose passed ids are known, up to this many, is one query.
KNOWN_PAGE_LIMIT = 2000


def search_rows(queryset, shape, passed=None, visible=None):
    """What a page of a search reads: `queryset()` (its filters applied), each candidate's
    footprint tested against `shape` while it pages (ShapeFiltered); or, when every granule
    meeting the search is known (`passed`, up to KNOWN_PAGE_LIMIT: the summary's exact test),
    those ids among `visible()` (the caller's granules, annotated as the page wants them), the
    search's filters not compiled and evaluated once more. Both are callables, so only the
    one read is built (each annotation compiles the residency's subquery)."""
    if passed is not None and visible is not None and len(passed) <= KNOWN_PAGE_LIMIT:
        return visible().filter(pk__in=passed)
    rows = queryset()
    return rows if shape is None else ShapeFiltered(rows, shape, passed)


class ShapeFiltered:
    """A granule queryset whose rows must also meet `shape` exactly, sliced as DRF's cursor
    paging slices a queryset: candidates (already narrowed by the box prefilter) are read in
    order, chunk by chunk, until the slice is full, so a page is whole and its cursor exact
    however many candidates the shape drops."""

    def __init__(self, queryset, shape, passed=None):
        # passed: the ids known to meet the shape, all of them (search_summary), or None
        self.queryset, self.shape, self.model = queryset, shape, queryset.model
        self.passed = passed

    def order_by(self, *fields):
        return ShapeFiltered(self.queryset.order_by(*fields), self.shape, self.passed)

    def filter(self, *args, **kwargs):
        return ShapeFiltered(self.queryset.filter(*args, **kwargs), self.shape, self.passed)

    def _read_on(self, candidates, first, size, wanted, found):
        """The candidates after the first chunk that meet the shape, read through a cursor in
        chunks that grow to MAX_CHUNK, until `wanted` are found in all; a candidate the first
        chunk had (rows that moved between the two reads) is not taken twice."""
        seen, passed, chunk = set(first), [], []
        for pk in candidates[len(first):].iterator(chunk_size=size):
            if pk in seen:
                continue
            chunk.append(pk)
            if len(chunk) >= size:
                passed += self._meeting(chunk)
                chunk, size = [], min(size * 2, MAX_CHUNK)
                if wanted is not None and found + len(passed) >= wanted:
                    return passed
        return passed + self._meeting(chunk)

    def _meeting(self, pks):
        if self.passed is None:
            return exact_matches(self.shape, pks)
        return [pk for pk in pks if pk in self.passed]

    def __getitem__(self, item):
        if not isinstance(item, slice) or item.step is not None:
            raise TypeError("ShapeFiltered takes a plain slice")
        start, stop = item.start or 0, item.stop
        wanted = None if stop is None else stop
        candidates = self.queryset.values_list("pk", flat=True)
        size = max(MIN_CHUNK, (wanted or 0) + 1)
        # The first chunk is a plain LIMIT query, and fills most pages: a server-side cursor
        # outside a transaction is DECLARE ... WITH HOLD, which makes PostgreSQL compute and
        # keep every candidate of the search before the first row is fetched (bench mixed).
        first = list(candidates[:size])
        passed = self._meeting(first)
        if len(first) == size and (wanted is None or len(passed) < wanted):
            passed += self._read_on(candidates, first, min(size * 2, MAX_CHUNK), wanted,
                                    len(passed))
        keep = passed[start:stop]
        rows = {g.pk: g for g in self.queryset.filter(pk__in=keep)}
        return [rows[pk] for pk in keep if pk in rows]


def exact_subset(queryset, shape, *, strict=False):
    """(the granules of `queryset` that meet `shape`, True): each candidate of the box
    prefilter tested, up to EXACT_COUNT_LIMIT of them. Beyond that, (`queryset`, False): the
    candidates, an upper bound for counts; with `strict` (an action on the granules found,
    which must not take one too many) a 400 that asks for a narrower search."""
    candidates = queryset.order_by().values_list("pk", flat=True)
    pks = list(candidates[: EXACT_COUNT_LIMIT + 1])
    if len(pks) > EXACT_COUNT_LIMIT:
        if strict:
            raise DomainError(
                f"the shape's box meets over {EXACT_COUNT_LIMIT:,} granules, too many to test "
                "each footprint: narrow the search (collections, dates) or the shape",
                "intersects")
        return queryset, False
    return queryset.filter(pk__in=exact_matches(shape, pks)), True
