"""Catalog queries: who sees what, and the granule search every interface shares."""
from dataclasses import dataclass

from django.db.models import (
    Case,
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    Subquery,
    Value,
    When,
)

from backend.accounts import roles
from backend.errors import NotFound

from . import bulk, shapes
from .geo import BBox
from .models import Collection, File, Granule
from .storage import storage


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


def collections_with_counts(user):
    return visible_collections(user).annotate(
        granule_count=Count("granules", filter=Q(granules__state=Granule.State.ARCHIVED)),
    )


def visible_granules(user):
    """Granules of visible collections; only operators see granules that are not archived."""
    qs = Granule.objects.select_related("collection")
    if roles.is_operator(user):
        return qs
    return qs.filter(
        collection__in=visible_collections(user), state=Granule.State.ARCHIVED,
    )


def collection_by_key(key):
    """The collection 'SHORT.VERSION', or a refusal that names the key."""
    try:
        return Collection.objects.get_by_key(key)
    except Collection.DoesNotExist as exc:
        raise NotFound(str(exc)) from exc


def archived_granules(user):
    """What the public search interfaces (STAC) show: archived granules only, even to operators."""
    return visible_granules(user).filter(state=Granule.State.ARCHIVED)


def in_cache_q():
    """Granules whose every file is in the disk cache (the archive tier answers)."""
    return storage().in_cache_q()


RESIDENCIES = ("cache", "tape")


def with_residency(queryset):
    """Annotate `residency`: "cache" when every file is in the cache, "tape" otherwise."""
    return queryset.annotate(
        residency=Case(When(in_cache_q(), then=Value("cache")), default=Value("tape")),
    )


def filter_residency(queryset, residency):
    if residency == "cache":
        return queryset.filter(in_cache_q())
    return queryset.exclude(in_cache_q())


FACETS = {
    "collection": ("collection__short_name", "collection__version"),
    "processing_level": ("collection__processing_level",),
    "platform": ("collection__platform",),
    "instrument": ("collection__instrument",),
}


def granule_facets(queryset):
    """Counts of the matching granules per collection, level, platform and instrument.

    One GROUP BY per facet over the filtered queryset; blank values are left out.
    """
    base = queryset.order_by()
    facets = {}
    for name, fields in FACETS.items():
        rows = (
            base.exclude(**{fields[0]: ""}).values(*fields)
            .annotate(count=Count("pk")).order_by("-count", *fields)
        )
        facets[name] = [
            {"value": ".".join(row[f] for f in fields), "count": row["count"]} for row in rows
        ]
    return facets


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
    box prefilter let through is read and tested with shapely (no PostGIS here)."""
    pks = list(pks)
    if not pks:
        return []
    rows = dict(((pk, rest) for pk, *rest in Granule.objects.filter(pk__in=pks).order_by()
                 .values_list("pk", *FOOTPRINT_FIELDS)))
    ordered = [pk for pk in pks if pk in rows]
    hits = shape.intersects_many(shapes.load_footprints([rows[pk] for pk in ordered]))
    return [pk for pk, hit in zip(ordered, hits, strict=True) if hit]


def meets(shape, granules):
    """For each granule object (footprint and box loaded), whether it really meets `shape`."""
    return shape.intersects_many(shapes.load_footprints(
        [[getattr(g, name) for name in FOOTPRINT_FIELDS] for g in granules]))


# The exact test reads candidates in chunks that grow from a page up to this many rows.
MAX_CHUNK = 5000
# Up to this many candidates, a shape search's facets are counted exactly.
EXACT_COUNT_LIMIT = 10000


class ShapeFiltered:
    """A granule queryset whose rows must also meet `shape` exactly, sliced as DRF's cursor
    paging slices a queryset: candidates (already narrowed by the box prefilter) are read in
    order, chunk by chunk, until the slice is full, so a page is whole and its cursor exact
    however many candidates the shape drops."""

    def __init__(self, queryset, shape):
        self.queryset, self.shape, self.model = queryset, shape, queryset.model

    def order_by(self, *fields):
        return ShapeFiltered(self.queryset.order_by(*fields), self.shape)

    def filter(self, *args, **kwargs):
        return ShapeFiltered(self.queryset.filter(*args, **kwargs), self.shape)

    def __getitem__(self, item):
        if not isinstance(item, slice) or item.step is not None:
            raise TypeError("ShapeFiltered takes a plain slice")
        start, stop = item.start or 0, item.stop
        wanted = None if stop is None else stop
        passed, chunk, candidates = [], [], self.queryset.values_list("pk", flat=True)
        size = max(64, (wanted or 0) + 1)
        for pk in candidates.iterator(chunk_size=min(size, MAX_CHUNK)):
            chunk.append(pk)
            if len(chunk) >= size:
                passed += exact_matches(self.shape, chunk)
                chunk, size = [], min(size * 2, MAX_CHUNK)
                if wanted is not None and len(passed) >= wanted:
                    break
        else:
            passed += exact_matches(self.shape, chunk)
        keep = passed[start:stop]
        rows = {g.pk: g for g in self.queryset.filter(pk__in=keep)}
        return [rows[pk] for pk in keep if pk in rows]


def shape_facets(queryset, shape):
    """granule_facets of the granules of `queryset` that meet `shape`, and whether the counts
    are exact: they are up to EXACT_COUNT_LIMIT candidates; beyond that they count the
    candidates of the box prefilter (an upper bound) rather than test them all."""
    candidates = queryset.order_by().values_list("pk", flat=True)
    pks = list(candidates[: EXACT_COUNT_LIMIT + 1])
    if len(pks) > EXACT_COUNT_LIMIT:
        return granule_facets(queryset), False
    passed = []
    for i in range(0, len(pks), MAX_CHUNK):
        passed += exact_matches(shape, pks[i:i + MAX_CHUNK])
    return granule_facets(queryset.filter(pk__in=passed)), True


def temporal_q(start=None, end=None):
    """Granules whose [start, end] overlaps the query interval (either end open)."""
    q = Q()
    if start is not None:
        q &= Q(temporal_end__gte=start)
    if end is not None:
        q &= Q(temporal_start__lte=end)
    return q


def register_granule(collection, granule_id, *, start, end, bbox=None, footprint=None,
                     attributes=None, files=(), version=1, replaces=None):
    """Create a granule in REGISTERED state with its files (dicts: name, role, size,
    checksum_type, checksum). Validation of the bytes happens before this, in ingest.
    `footprint` (a shapes.Shape) is its real outline; without one the box is the footprint."""
    return register_granules([{
        "collection": collection, "granule_id": granule_id, "start": start, "end": end,
        "bbox": bbox, "footprint": footprint, "attributes": attributes, "files": files,
        "version": version, "replaces": replaces}])[0]


def footprint_columns(bbox, footprint):
    """(west, south, east, north, footprint text) to store for a box (a geo.BBox) and/or a
    footprint Shape: the shape's own box when it has one, so the box always bounds it."""
    if footprint is not None:
        bbox = footprint.bbox()
    if bbox is None:
        return None, None, None, None, None
    shape = footprint or shapes.from_box(*bbox.as_list())
    return (*bbox.as_list(), shapes.to_text(shape))


def register_granules(specs):
    """register_granule for many at once (dicts of its arguments): two INSERTs in one
    transaction, however many granules and files. Returns the granules in order."""
    from django.db import transaction

    granules = []
    for spec in specs:
        *box, footprint = footprint_columns(spec.get("bbox"), spec.get("footprint"))
        granules.append(Granule(
            collection=spec["collection"], granule_id=spec["granule_id"],
            version=spec.get("version", 1), replaces=spec.get("replaces"),
            temporal_start=spec["start"], temporal_end=spec["end"], west=box[0], south=box[1],
            east=box[2], north=box[3], footprint=footprint,
            attributes=spec.get("attributes") or {},
            total_size=sum(int(f["size"]) for f in spec.get("files", ()))))
    with transaction.atomic():
        bulk.insert(granules, need_ids=True)
        bulk.insert([
            File(granule=granule, name=f["name"], role=f.get("role", File.Role.DATA),
                 size=int(f["size"]), checksum_type=f["checksum_type"], checksum=f["checksum"])
            for granule, spec in zip(granules, specs, strict=True)
            for f in spec.get("files", ())
        ], need_ids=True)
    return granules


def named_q(keys):
    """Collections named by key (SHORT.VERSION); unknown keys name none."""
    named = Q(pk__in=[])
    for key in keys:
        short_name, _, version = key.partition(".")
        named |= Q(short_name=short_name, version=version)
    return named


def with_longest_granule(collections):
    """`collections` annotated with `longest`, the longest time span of one of their granules
    (None when they have none): a probe per collection of the (collection, temporal_end -
    temporal_start) index."""
    length = ExpressionWrapper(F("temporal_end") - F("temporal_start"),
                               output_field=DurationField())
    longest = (Granule.objects.filter(collection=OuterRef("pk")).annotate(length=length)
               .order_by("-length").values("length")[:1])
    return collections.order_by().annotate(longest=Subquery(longest))


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

    Shaped for the (collection, temporal_start, id) covering index: the collections are
    resolved to ids first, so each is one range of it; a window's start also bounds
    temporal_start (no granule of a collection outlasts its longest one), or a search
    with fewer matches than a page would walk back to the first granule; several named
    collections are read one by one and merged, newest first, rather than sorted whole;
    and the page's keys come from the index alone before its rows are read. Collections
    and files come as a few rows, not an object per granule. A search with a shape takes
    the candidates its boxes select and tests their footprints exactly (exact_matches),
    reading on in growing chunks until the page is full, so paging stays exact.
    """
    collections = visible_collections(user)
    if search.collections:
        collections = collections.filter(named_q(search.collections))
    found = {c.pk: c for c in with_longest_granule(collections) if c.longest is not None}
    if not found:
        return StacPage([], {}, False)
    order = search.order()
    ordering = [f"-{name}" if descending else name for name, _, descending in order]
    granules = _stac_candidates(search).order_by(*ordering)
    fields = [name for name, _, _ in order]

    def of(ids, since):
        selected = granules.filter(collection_id__in=ids)
        if since is not None:
            selected = selected.filter(keyset_q(order, since))
        if search.start is not None:
            selected = selected.filter(temporal_start__gte=search.start - max(
                found[pk].longest for pk in ids))
        return selected

    ids = sorted(found)
    directions = {descending for _, _, descending in order}
    merge = (search.collections and 1 < len(ids) <= MERGE_COLLECTIONS and len(directions) == 1
             and all(kind in ("datetime", "int") for _, kind, _ in order))

    def keys(since, count):
        """The sort keys (pk last) of the next `count` candidates after `since`."""
        if merge:
            rows = (row for pk in ids for row in of([pk], since).values_list(*fields)[:count])
            return sorted(rows, reverse=next(iter(directions)))[:count]
        return list(of(ids, since).values_list(*fields)[:count])

    wanted = search.limit + 1
    if search.shape is None and not merge:
        page = of(ids, after).values("pk")[:wanted]    # a subquery of the page's rows query
    elif search.shape is None:
        page = [key[-1] for key in keys(after, wanted)]
    else:
        page = _exact_page(search.shape, keys, after, wanted)
    rows = list(Granule.objects.filter(pk__in=page).order_by(*ordering))
    for granule in rows:
        granule.collection = found[granule.collection_id]
    rows, more = rows[: search.limit], len(rows) > search.limit
    return StacPage(rows, _files_of(rows), more)


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


def _exact_page(shape, keys, after, wanted):
    """The pks of the first `wanted` candidates after `after` whose footprint meets `shape`:
    the exact test drops candidates, so read on, in growing chunks, until the page is full.
    `keys(since, count)` gives the sort keys (pk last) of the next candidates."""
    page, since, count = [], after, wanted
    while len(page) < wanted:
        chunk = keys(since, count)
        page += exact_matches(shape, [key[-1] for key in chunk])
        if len(chunk) < count:
            break
        since, count = list(chunk[-1]), min(count * 2, MAX_CHUNK)
    return page[:wanted]


def keyset_q(order, after):
    """Rows strictly after `after` in `order` [(field, kind, descending)].

    The first key also gets a plain range condition, so the database can walk an index on
    it instead of testing the OR chain on every row: page 1,000 costs what page 1 does.
    """
    first_field, _, first_desc = order[0]
    q, equal = Q(), Q()
    for (name, _, descending), value in zip(order, after, strict=True):
        q |= equal & Q(**{f"{name}__{'lt' if descending else 'gt'}": value})
        equal &= Q(**{name: value})
    return q & Q(**{f"{first_field}__{'lte' if first_desc else 'gte'}": after[0]})


def sort_values(granule, order):
    """The values of `granule` for each sort key (fields may follow relations: a__b)."""
    values = []
    for name, _, _ in order:
        value = granule
        for part in name.split("__"):
            value = getattr(value, part)
        values.append(value)
    return values


def collection_extents(collections):
    """{collection id: stac.Extent} from the archived granules, in one GROUP BY."""
    from django.db.models import Max, Min

    from .stac import Extent

    plain = Q(west__lte=F("east"))
    rows = (
        Granule.objects.filter(collection__in=collections, state=Granule.State.ARCHIVED)
        .order_by().values("collection")
        .annotate(
            min_west=Min("west", filter=plain), max_east=Max("east", filter=plain),
            min_south=Min("south"), max_north=Max("north"),
            crossing=Count("pk", filter=Q(west__gt=F("east"))),
            first=Min("temporal_start"), last=Max("temporal_end"),
        )
    )
    return {
        row["collection"]: Extent(
            west=row["min_west"], south=row["min_south"], east=row["max_east"],
            north=row["max_north"], crosses_antimeridian=row["crossing"] > 0,
            start=row["first"], end=row["last"],
        )
        for row in rows
    }
