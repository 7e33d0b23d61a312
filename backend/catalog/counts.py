"""Granules per collection and state, read from the counts the PostgreSQL trigger of migration
0009_dashboard_scale keeps (GranuleStateCount); elsewhere counted from the granules."""
from django.db import connection, transaction
from django.db.models import Count, Sum

from .models import Granule, GranuleStateCount


def kept():
    """Whether a trigger keeps GranuleStateCount (PostgreSQL) or nothing does (SQLite)."""
    return connection.vendor == "postgresql"


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
    if not kept():
        return
    table = GranuleStateCount._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {Granule._meta.db_table} IN SHARE MODE")
        cursor.execute(f"DELETE FROM {table}")
        cursor.execute(f"INSERT INTO {table} (collection_id, state, count) SELECT "
                       "collection_id, state, count(*) FROM catalog_granule "
                       "GROUP BY collection_id, state")
