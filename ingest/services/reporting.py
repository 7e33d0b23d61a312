"""Reporting: who sees which requests and PDRs, and how many granules are in each state."""
from django.db import connection

from backend.accounts.ownership import owned

from ..models import IngestGranule, IngestRequest, Pdr
from .states import FINAL, G


def state_counts(request):
    """{granule state: how many of the request's granules are in it}. The final states come
    from the request's counters, which outcome moves in the transaction that moves the rows
    (under the request's lock); only the open granules are counted. A provider polls this
    while the request runs: counting every granule cost each poll a read of the whole request.
    One statement reads both, so they are of one moment."""
    granules, requests = IngestGranule._meta.db_table, IngestRequest._meta.db_table
    open_states = [s for s in G.values if s not in FINAL]
    marks = ", ".join(["%s"] * len(open_states))
    sql = (f"SELECT state, COUNT(*) FROM {granules} WHERE request_id = %s AND state IN ({marks})"
           f" GROUP BY state UNION ALL SELECT %s, archived_count FROM {requests} WHERE id = %s"
           f" UNION ALL SELECT %s, failed_count FROM {requests} WHERE id = %s")
    counts = {s: 0 for s in G.values}
    with connection.cursor() as cursor:
        cursor.execute(sql, [request.pk, *open_states, G.ARCHIVED, request.pk, G.FAILED,
                             request.pk])
        for state, n in cursor.fetchall():
            counts[state] = n
    return counts


def requests_visible_to(user):
    return owned(IngestRequest.objects.select_related("provider"), user)


def pdrs_visible_to(user):
    return owned(Pdr.objects.select_related("provider", "request"), user)
