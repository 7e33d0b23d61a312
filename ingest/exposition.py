"""Ingest's Prometheus figures: requests and granules by state, and how long the oldest
unfinished granule has waited (registered from IngestConfig.ready)."""
from django.db.models import Min
from django.utils import timezone

from backend.metrics.exposition import gauge, states

from .models import IngestGranule, IngestRequest

UNFINISHED = [s for s in IngestGranule.State.values
              if s not in (IngestGranule.State.ARCHIVED, IngestGranule.State.FAILED)]


def collect():
    yield gauge("granary_ingest_requests", "Ingest requests by state", ["state"],
                states(IngestRequest))
    yield gauge("granary_ingest_granules", "Granules in ingest, by state", ["state"],
                states(IngestGranule))
    oldest = (IngestGranule.objects.filter(state__in=UNFINISHED)
              .aggregate(t=Min("updated_at"))["t"])
    yield gauge("granary_ingest_oldest_unfinished_age_seconds",
                "Seconds since the longest-waiting unfinished granule last moved", [],
                [] if oldest is None else [((), (timezone.now() - oldest).total_seconds())])
