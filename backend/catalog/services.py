"""Catalog queries: who sees what, and the granule search every interface shares."""
from django.db.models import Count, F, Q

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
    from django.db import transaction

    from .models import File

    box = bbox.as_list() if bbox is not None else [None] * 4
    with transaction.atomic():
        granule = Granule.objects.create(
            collection=collection, granule_id=granule_id, version=version, replaces=replaces,
            temporal_start=start, temporal_end=end, west=box[0], south=box[1], east=box[2],
            north=box[3], attributes=attributes or {},
            total_size=sum(int(f["size"]) for f in files),
        )
        File.objects.bulk_create([
            File(granule=granule, name=f["name"], role=f.get("role", File.Role.DATA),
                 size=int(f["size"]), checksum_type=f["checksum_type"], checksum=f["checksum"])
            for f in files
        ])
    return granule
