"""Granules per collection and state, read from the counts the PostgreSQL trigger of migration
0010_dashboard_scale keeps (GranuleStateCount); elsewhere counted from the granules."""
from django.db.models import Count, Sum

from backend.dbtriggers import compact as compact_deltas
from backend.dbtriggers import kept, refill

from .models import Granule, GranuleStateCount


def by_state(collection_ids=None):
    """{state: granules} over the collections given (all when None); every state present."""
    counts = dict.fromkeys(Granule.State.values, 0)
    if kept():
        rows = GranuleStateCount.objects.all()
        if collection_ids is not None:
            rows = rows.filter(collection__in=collection_ids)
        rows = rows.values("state").annotate(n=Sum("count")).order_by()
    else:
        rows = Granule.objects.all()
        if collection_ids is not None:
            rows = rows.filter(collection__in=collection_ids)
        rows = rows.values("state").annotate(n=Count("pk")).order_by()
    counts.update({row["state"]: row["n"] for row in rows})
    return counts


def rebuild():
    """Count every collection's granules again (after a load that bypassed the trigger, such as
    COPY with triggers off); PostgreSQL only, where the counts are kept."""
    refill(GranuleStateCount._meta.db_table, Granule._meta.db_table,
           "collection_id, state, count",
           f"SELECT collection_id, state, count(*) FROM {Granule._meta.db_table} "
           "GROUP BY collection_id, state")


def compact():
    """Fold the count rows the statement triggers added into one per collection and state."""
    compact_deltas(GranuleStateCount._meta.db_table, ["collection_id", "state"], ["count"])
