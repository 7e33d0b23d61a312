"""Catalog queries: who sees what, and the granule search every interface shares."""
from django.db.models import Case, Count, Exists, F, OuterRef, Q, Value, When

from backend.accounts import roles

from .geo import BBox
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


def archived_granules(user):
    """What the public search interfaces (STAC) show: archived granules only, even to operators."""
    return visible_granules(user).filter(state=Granule.State.ARCHIVED)


def in_cache_q():
    """Granules whose every file is in the RAID cache (an entry that is not still staging).

    Written as "no file is missing from the cache" so it stays one correlated subquery
    the database can answer from the file and cache-entry indexes.
    """
    from backend.archive.models import CacheEntry

    from .models import File

    missing = File.objects.filter(granule=OuterRef("pk")).filter(
        Q(cache_entry__isnull=True) | Q(cache_entry__state=CacheEntry.State.STAGING)
    )
    return ~Exists(missing)


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


def temporal_q(start=None, end=None):
    """Granules whose [start, end] overlaps the query interval (either end open)."""
    q = Q()
    if start is not None:
        q &= Q(temporal_end__gte=start)
    if end is not None:
        q &= Q(temporal_start__lte=end)
    return q


def register_granule(collection, granule_id, *, start, end, bbox=None, attributes=None,
                     files=(), version=1, replaces=None):
    """Create a granule in REGISTERED state with its files (dicts: name, role, size,
    checksum_type, checksum). Validation of the bytes happens before this, in ingest."""
    return register_granules([{
        "collection": collection, "granule_id": granule_id, "start": start, "end": end,
        "bbox": bbox, "attributes": attributes, "files": files, "version": version,
        "replaces": replaces}])[0]


def register_granules(specs):
    """register_granule for many at once (dicts of its arguments): two INSERTs in one
    transaction, however many granules and files. Returns the granules in order."""
    from django.db import transaction

    from .models import File

    granules = []
    for spec in specs:
        bbox = spec.get("bbox")
        box = bbox.as_list() if bbox is not None else [None] * 4
        granules.append(Granule(
            collection=spec["collection"], granule_id=spec["granule_id"],
            version=spec.get("version", 1), replaces=spec.get("replaces"),
            temporal_start=spec["start"], temporal_end=spec["end"], west=box[0], south=box[1],
            east=box[2], north=box[3], attributes=spec.get("attributes") or {},
            total_size=sum(int(f["size"]) for f in spec.get("files", ()))))
    with transaction.atomic():
        Granule.objects.bulk_create(granules, batch_size=1000)
        File.objects.bulk_create([
            File(granule=granule, name=f["name"], role=f.get("role", File.Role.DATA),
                 size=int(f["size"]), checksum_type=f["checksum_type"], checksum=f["checksum"])
            for granule, spec in zip(granules, specs, strict=True)
            for f in spec.get("files", ())
        ], batch_size=1000)
    return granules


def collection_key_q(keys):
    """Granules of the collections named by key (SHORT.VERSION); unknown keys match nothing.
    A collection_id IN (subquery) lets the (collection, temporal_start) index drive the scan."""
    named = Q(pk__in=[])
    for key in keys:
        short_name, _, version = key.partition(".")
        named |= Q(short_name=short_name, version=version)
    return Q(collection__in=Collection.objects.filter(named))


def stac_granules(user, search):
    """The archived granules a STAC search selects, before ordering and paging."""
    granules = archived_granules(user)
    if search.collections:
        granules = granules.filter(collection_key_q(search.collections))
    if search.ids:
        granules = granules.filter(granule_id__in=search.ids)
    if search.bbox is not None:
        granules = granules.filter(bbox_q(search.bbox))
    if search.start is not None or search.end is not None:
        granules = granules.filter(temporal_q(search.start, search.end))
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


def keyset_page(granules, order, after, limit):
    """One page in `order` after the key `after` (None: from the start) and whether more
    follow: limit + 1 rows are read, nothing is counted."""
    ordering = [f"-{name}" if descending else name for name, _, descending in order]
    granules = granules.order_by(*ordering)
    if after is not None:
        granules = granules.filter(keyset_q(order, after))
    rows = list(granules.prefetch_related("files")[: limit + 1])
    return rows[:limit], len(rows) > limit


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
