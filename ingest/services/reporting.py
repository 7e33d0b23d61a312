"""Reporting: who sees which requests and PDRs, and how many granules are in each state."""
from django.db.models import Count

from backend.accounts.ownership import owned

from ..models import IngestGranule, IngestRequest, Pdr
from .states import G


def state_counts(request):
    counts = {s: 0 for s in G.values}
    for row in (IngestGranule.objects.filter(request=request).values("state")
                .annotate(n=Count("pk"))):
        counts[row["state"]] = row["n"]
    return counts


def requests_visible_to(user):
    return owned(IngestRequest.objects.select_related("provider"), user)


def pdrs_visible_to(user):
    return owned(Pdr.objects.select_related("provider", "request"), user)
