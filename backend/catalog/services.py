"""Catalog queries: who sees what, and the granule search every interface shares."""
import functools
from dataclasses import dataclass
from datetime import UTC

from django.db.models import (
    Case,
    Count,
    F,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from backend.dbtriggers import kept
from backend.errors import DomainError, NotFound

from . import bulk, patterns, shapes
from .models import Collection, File, Granule, GranuleStateCount
from .shape_search import (  # noqa: F401 - the shape search, asked of the catalog's services
    EXACT_COUNT_LIMIT,
    FOOTPRINT_FIELDS,
    KNOWN_PAGE_LIMIT,
    MAX_CHUNK,
    MIN_CHUNK,
    ShapeFiltered,
    bbox_q,
    exact_matches,
    exact_subset,
    meets,
    search_rows,
    shape_q,
)
from .storage import storage
from .visibility import (  # noqa: F401 - who sees what, asked of the catalog's services
    FACET_FIELDS,
    visible_collection_facets,
    visible_collection_id,
    visible_collection_ids,
    visible_collections,
    visible_granules,
    visible_longest_granule,
)


def collections_with_counts(user):
    """Visible collections with their archived granules counted: on PostgreSQL read from the
    trigger-kept counts (a row per collection, not a join over every granule, which made the
    portal's collection list cost seconds at 100,000 granules under load: issue #22, mixed)."""
    collections = visible_collections(user)
    if kept():
        archived = GranuleStateCount.objects.filter(
            collection=OuterRef("pk"), state=Granule.State.ARCHIVED).values(
            "collection").annotate(n=Sum("count")).values("n")
        return collections.annotate(granule_count=Coalesce(Subquery(archived), 0))
    return collections.annotate(
        granule_count=Count("granules", filter=Q(granules__state=Granule.State.ARCHIVED)),
    )


def refuse_if_retired_id(user, pk):
    """A granule `user` cannot see because it was withdrawn or deleted: a 410 with the reason
    and the time (to a caller who may see its collection; nothing for anyone else, who gets
    the plain 404)."""
    from .retired import RETIRED, refuse_if_retired

    granule = Granule.objects.select_related("collection").filter(
        pk=pk, state__in=RETIRED, collection__in=visible_collections(user)).first()
    if granule is not None:
        refuse_if_retired(granule)


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


def granule_facets(queryset, known=None):
    """Counts of the matching granules per collection, level, platform and instrument.

    Every facet is a field of the collection: one GROUP BY collection over the filtered
    queryset (the search page's costliest count was four, one per facet), rolled up by
    facets_of.
    """
    return facets_of(dict(queryset.order_by().values_list("collection").annotate(
        n=Count("pk")).values_list("collection", "n")), known)


def facets_of(per_collection, known=None):
    """The facets of {collection id: granules}: blank values left out, each facet sorted by
    count (most first), then value. `known` ({id: fields}, visible_collection_facets) holds
    the collections' fields when the request has read them already."""
    totals = {name: {} for name in FACETS}
    if known is not None and all(pk in known for pk in per_collection):
        rows = [known[pk] for pk in per_collection]
    else:
        rows = Collection.objects.filter(pk__in=per_collection).values(*FACET_FIELDS)
    for row in rows:
        for name, facet_fields in FACETS.items():
            key = tuple(row[f.removeprefix("collection__")] for f in facet_fields)
            if key[0] != "":
                totals[name][key] = totals[name].get(key, 0) + per_collection[row["id"]]
    return {name: [{"value": ".".join(key), "count": n}
                   for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
            for name, counts in totals.items()}


def collection_text_q(word, prefix=""):
    """Collections whose name, title, description, platform or instrument hold `word`
    (`prefix` leads to the collection from another model, e.g. "collection__")."""
    q = Q()
    for field in ("short_name", "title", "description", "platform", "instrument"):
        q |= Q(**{f"{prefix}{field}__icontains": word})
    return q


def granule_id_q(text):
    """Granules whose id matches `text`, case-insensitively: exactly, or as a pattern with
    `*` (any run) and `?` (one character); `%` and `_` are literal. A pattern with a literal
    prefix is an index range on PostgreSQL (the UPPER(granule_id) index); a leading wildcard
    reads the granules the other filters leave."""
    return Q(granule_id__ilike=patterns.like_pattern(text))


def granule_text_q(text):
    """The free text of a granule search: each word names the granule's id (exactly or as a
    pattern) or is found in its collection's text; every word must hold. The collection side
    is an id list, so each side can use its own index."""
    q = Q()
    for word in text.split():
        either = granule_id_q(word)
        if not patterns.has_wildcards(word):
            either |= Q(collection__in=Collection.objects.filter(collection_text_q(word)))
        q &= either
    return q


@dataclass
class Timeline:
    bucket: str
    total: int
    buckets: list       # [{"start": datetime, "count": int}], every bucket, empty ones too


def granule_timeline(queryset, bucket="auto"):
    """How many of `queryset`'s granules start in each hour, day, month or year (`auto`: the
    size timeline.auto_bucket picks for their span), from the first bucket to the last: one
    GROUP BY on the truncated start, in UTC. A bucket too fine for the span is a 400."""
    from django.db.models import Max, Min
    from django.db.models.functions import Trunc

    from . import timeline

    base = queryset.order_by()
    # FILTER keeps PostgreSQL from a MIN/MAX by the time index testing each row against the
    # conditions (planagg skips it): 40 s for a search's 1,500 ids at 1 M granules
    known = Q(temporal_start__isnull=False)
    span = base.aggregate(first=Min("temporal_start", filter=known),
                          last=Max("temporal_start", filter=known))
    if span["first"] is None:
        return Timeline("day" if bucket == "auto" else bucket, 0, [])
    first, last = span["first"].astimezone(UTC), span["last"].astimezone(UTC)
    if bucket == "auto":
        bucket = timeline.auto_bucket(first, last)
    try:
        starts = timeline.bucket_starts(first, last, bucket)
    except timeline.TimelineError as exc:
        raise DomainError(str(exc), "bucket") from exc
    rows = (base.annotate(bucket_start=Trunc("temporal_start", bucket, tzinfo=UTC))
            .values("bucket_start").annotate(n=Count("pk")).values_list("bucket_start", "n"))
    counts = {start.astimezone(UTC): n for start, n in rows}
    return Timeline(bucket, sum(counts.values()),
                    [{"start": start, "count": counts.get(start, 0)} for start in starts])




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
    if footprint is None:
        return (*bbox.as_list(), _box_text(*bbox.as_list()))
    return (*bbox.as_list(), shapes.to_text(footprint))


@functools.lru_cache(maxsize=4096)
def _box_text(west, south, east, north):
    """The stored footprint of a box: granules of a tiled product share a few boxes, and
    building the shape costs more than the rest of registering the granule."""
    return shapes.to_text(shapes.from_box(west, south, east, north))


def register_granules(specs, state=Granule.State.REGISTERED):
    """register_granule for many at once (dicts of its arguments): two INSERTs in one
    transaction, however many granules and files. Returns the granules in order. `state`:
    ARCHIVING when the caller's transaction also hands them to the archive (one write each)."""
    from django.db import transaction

    granules = []
    for spec in specs:
        *box, footprint = footprint_columns(spec.get("bbox"), spec.get("footprint"))
        related = {"collection": spec["collection"]}
        if spec.get("replaces") is not None:
            related["replaces"] = spec["replaces"]
        granules.append(bulk.new(
            Granule, related, granule_id=spec["granule_id"], version=spec.get("version", 1),
            temporal_start=spec["start"], temporal_end=spec["end"], west=box[0], south=box[1],
            east=box[2], north=box[3], footprint=footprint, state=state,
            attributes=spec.get("attributes") or {},
            total_size=sum(int(f["size"]) for f in spec.get("files", ()))))
    with transaction.atomic():
        bulk.insert(granules, need_ids=True)
        bulk.insert([
            bulk.new(File, {"granule": granule}, name=f["name"],
                     role=f.get("role", File.Role.DATA), size=int(f["size"]),
                     checksum_type=f["checksum_type"], checksum=f["checksum"])
            for granule, spec in zip(granules, specs, strict=True)
            for f in spec.get("files", ())
        ], need_ids=True)
    return granules


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


def collection_page_extent(collection):
    """(spatial, temporal) extent of a collection's page, each a dict with its `source`: what
    its provider declared where it did, else what its archived granules cover."""
    declared = collection.declared_bbox
    start = collection.extent_start
    archived = None
    if declared is None or start is None:
        archived = collection_extents([collection]).get(collection.pk)
    if declared is not None:
        spatial = {"bbox": declared, "source": "declared"}
    elif archived is not None:
        spatial = {"bbox": archived.bbox(), "source": "granules"}
    else:
        spatial = {"bbox": None, "source": "none"}
    if start is not None:
        temporal = {"start": start, "end": collection.extent_end, "source": "declared"}
    elif archived is not None:
        temporal = {"start": archived.start, "end": archived.end, "source": "granules"}
    else:
        temporal = {"start": None, "end": None, "source": "none"}
    return spatial, temporal


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
