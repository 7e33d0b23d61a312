"""One page of a STAC item search, shaped for the catalog's indexes (see stac_page)."""
import math
from dataclasses import dataclass

from django.db import connection
from django.db.models import (
    ExpressionWrapper,
    F,
    FloatField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Floor

from .models import File, Granule
from .services import (
    MAX_CHUNK,
    keyset_q,
    meets,
    shape_q,
    temporal_q,
    visible_collections,
)
from .spans import with_longest_granule


def named_q(keys):
    """Collections named by key (SHORT.VERSION); unknown keys name none."""
    named = Q(pk__in=[])
    for key in keys:
        short_name, _, version = key.partition(".")
        named |= Q(short_name=short_name, version=version)
    return named


def with_tallest_granule(collections):
    """`collections` annotated with `tallest`, the greatest north - south of one of their
    granules: a probe per collection of the (collection, north - south) index (PostgreSQL)."""
    height = ExpressionWrapper(F("north") - F("south"), output_field=FloatField())
    tallest = (Granule.objects.filter(collection=OuterRef("pk"), south__isnull=False)
               .annotate(height=height).order_by("-height").values("height")[:1])
    return collections.annotate(tallest=Subquery(tallest))


# The banded index (migration 0009_search_scale, PostgreSQL) files each archived granule under
# the latitude band of its south edge: floor(south / BAND_DEGREES).
BAND_DEGREES = 10
# A shape search is read band by band when it needs at most this many (band, collection) runs.
MAX_BANDS = 40


def band_of():
    return Floor(F("south") / Value(float(BAND_DEGREES)))


def bands(shape, tallest):
    """The bands a granule at most `tallest` degrees high must start in to meet `shape`: its
    south edge lies between the shape's south less `tallest` and the shape's north."""
    south = min(box.south for box in shape.boxes) - tallest
    north = max(box.north for box in shape.boxes)
    low, high = max(-90, south), min(90, north)
    return range(math.floor(low / BAND_DEGREES), math.floor(high / BAND_DEGREES) + 1)


# Up to this many named collections are searched one by one and their pages merged.
MERGE_COLLECTIONS = 20
FILE_FIELDS = ("id", "name", "role", "size", "checksum_type", "checksum")


@dataclass
class StacPage:
    granules: list      # with .collection set
    files: dict         # granule id -> [rows with FILE_FIELDS as attributes], by name
    more: bool          # whether a next page follows


def stac_page(user, search, after):
    """One page of a STAC search: the archived granules it selects, in its order after the
    sort key `after` (None: from the start), their files, and whether more follow. Nothing
    is counted.

    Shaped for the (collection, temporal_start, id) covering index: each collection is one
    range of it; a window's start bounds temporal_start (no granule outlasts its collection's
    longest), or a sparse search would walk back to the first granule; named collections are
    read apart and merged rather than sorted whole, their page keys from the index alone in one
    UNION ALL where the database can. A shape search tests the footprints of its boxes'
    candidates exactly (meets), reading on in growing chunks until the page is full, so paging
    stays exact; on PostgreSQL in time order it reads the banded index: a run per collection
    and latitude band its granules may start in, merged, so a small box walks a few bands.
    """
    collections = visible_collections(user)
    if search.collections:
        collections = collections.filter(named_q(search.collections))
    order = search.order()
    banded = (connection.vendor == "postgresql" and search.shape is not None
              and [name for name, _, _ in order] == ["temporal_start", "pk"])
    if banded:
        collections = with_tallest_granule(collections)
    found = {c.pk: c for c in with_longest_granule(collections) if c.longest is not None}
    if not found:
        return StacPage([], {}, False)
    ordering = [f"-{name}" if descending else name for name, _, descending in order]
    granules = _stac_candidates(search).order_by(*ordering)
    fields = [name for name, _, _ in order]

    def of(ids, since, band=None):
        return _selected(granules, search, order, [found[pk] for pk in ids], since, band)

    ids = sorted(found)
    directions = {descending for _, _, descending in order}
    runs, merge = _runs(search, order, found, banded)

    def keys(since, count):
        """The sort keys (pk last) of the next `count` candidates after `since`."""
        if merge:
            parts = [(of([pk], since, None if bands_ == [None] else ANY_BAND)
                      .values_list(*fields)[:count], bands_) for pk, bands_ in runs.items()]
            if connection.features.supports_slicing_ordering_in_compound:
                rows = _union_rows(parts)
            else:
                rows = (row for part, _ in parts for row in part)
            return sorted(rows, reverse=next(iter(directions)))[:count]
        return list(of(ids, since).values_list(*fields)[:count])

    wanted = search.limit + 1
    if search.shape is not None:
        rows = _exact_rows(search.shape, keys, after, wanted)
    else:
        page = (of(ids, after).values("pk")[:wanted] if not merge  # a subquery of the rows'
                else [key[-1] for key in keys(after, wanted)])
        rows = list(Granule.objects.filter(pk__in=page).order_by(*ordering))
    for granule in rows:
        granule.collection = found[granule.collection_id]
    rows, more = rows[: search.limit], len(rows) > search.limit
    return StacPage(rows, _files_of(rows), more)


def _selected(granules, search, order, collections, since, band=None):
    """The candidates of `collections` after the sort key `since`, in `band` if given; a
    window's start bounds temporal_start by the collections' longest granule."""
    selected = granules.filter(collection_id__in=[c.pk for c in collections])
    if band is not None:
        selected = selected.alias(band=band_of()).filter(band=band)
    if since is not None:
        selected = selected.filter(keyset_q(order, since))
    if search.start is not None:
        selected = selected.filter(
            temporal_start__gte=search.start - max(c.longest for c in collections))
    return selected


def _runs(search, order, found, banded):
    """Each collection's bands (None: not banded) and whether their runs are read apart and
    merged: named collections of one sort direction on datetime or int keys, or a banded search
    of at most MAX_BANDS runs."""
    ids = sorted(found)
    directions = {descending for _, _, descending in order}
    merge = bool(search.collections and 1 < len(ids) <= MERGE_COLLECTIONS
                 and len(directions) == 1
                 and all(kind in ("datetime", "int") for _, kind, _ in order))
    runs = {pk: [None] for pk in ids}
    if banded and len(ids) <= MERGE_COLLECTIONS:
        by_band = {pk: list(bands(search.shape, found[pk].tallest)) for pk in ids
                   if found[pk].tallest is not None}
        if sum(len(b) for b in by_band.values()) <= MAX_BANDS:
            runs, merge = by_band, True
    return runs, merge


# Stands for the band in a run's query, compiled once and sent once per band (_union_rows).
ANY_BAND = -1e9


def _union_rows(parts):
    """The rows of every (queryset, bands) part in one UNION ALL statement: each queryset is
    compiled once and repeated per band, ANY_BAND in its parameters replaced by the band (a
    run per band would cost an ORM clone and compilation each)."""
    pieces, args = [], []
    for queryset, bands_ in parts:
        sql, params = queryset.query.sql_with_params()
        slots = [i for i, value in enumerate(params) if value == ANY_BAND]
        if len(slots) != (0 if bands_ == [None] else 1):
            raise AssertionError(f"{len(slots)} band parameters in {sql}")
        for band in bands_:
            pieces.append(f"({sql})")
            args += [float(band) if i in slots else value for i, value in enumerate(params)]
    if not pieces:
        return []
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(pieces), args)
        return cursor.fetchall()


def _stac_candidates(search):
    """Archived granules a search's ids, shape (its boxes only) and window select."""
    granules = Granule.objects.filter(state=Granule.State.ARCHIVED)
    if search.ids:
        granules = granules.filter(granule_id__in=search.ids)
    if search.shape is not None:
        granules = granules.filter(shape_q(search.shape))
    return granules.filter(temporal_q(search.start, search.end))


def _files_of(granules):
    """{granule id: its files as rows with FILE_FIELDS}, by name, in one query."""
    files = {}
    for row in (File.objects.filter(granule__in=[g.pk for g in granules])
                .order_by("granule_id", "name").values_list("granule_id", *FILE_FIELDS,
                                                            named=True)):
        files.setdefault(row.granule_id, []).append(row)
    return files


def _exact_rows(shape, keys, after, wanted):
    """The first `wanted` candidates after `after` whose footprint meets `shape`, as rows: the
    exact test drops candidates, so read on, in growing chunks, until the page is full. Each
    chunk's rows are read whole once and tested (meets); those that pass are the page's.
    `keys(since, count)` gives the sort keys (pk last) of the next candidates."""
    page, since, count = [], after, wanted
    while len(page) < wanted:
        chunk = keys(since, count)
        found = Granule.objects.in_bulk([key[-1] for key in chunk])
        candidates = [found[key[-1]] for key in chunk if key[-1] in found]
        page += [g for g, hit in zip(candidates, meets(shape, candidates), strict=True) if hit]
        if len(chunk) < count:
            break
        since, count = list(chunk[-1]), min(count * 2, MAX_CHUNK)
    return page[:wanted]
