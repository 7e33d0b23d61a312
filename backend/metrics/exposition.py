"""Prometheus metrics at /metrics, read from the database when scraped.

The database is the source of truth and the web runs as several processes, so nothing is
counted in process memory: each app registers a collector that reads its own tables (metrics
imports no app; the apps call `register` from their AppConfig.ready)."""
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import choose_encoder

from .models import QueueHeartbeat, TransferRecord, TransferRollup

registry = CollectorRegistry(auto_describe=False)
_registered = set()


class _Collector:
    def __init__(self, collect):
        self.collect = collect


def register(name, collect):
    """Add `collect()` (yielding metric families) under `name`; a second call is a no-op, as
    ready() may run more than once in tests."""
    if name not in _registered:
        _registered.add(name)
        registry.register(_Collector(collect))


def gauge(name, doc, labels, rows):
    """A gauge family from (label values, value) rows."""
    family = GaugeMetricFamily(name, doc, labels=labels)
    for values, value in rows:
        family.add_metric([str(v) for v in values], value)
    return family


def counter(name, doc, labels, rows):
    family = CounterMetricFamily(name, doc, labels=labels)
    for values, value in rows:
        family.add_metric([str(v) for v in values], value)
    return family


def states(model, field="state"):
    """(state,), count rows for every state of model.State, zero where none: a series that
    disappears reads as 'no data' in Prometheus, not as zero."""
    from django.db.models import Count

    counts = dict.fromkeys(model.State.values, 0)
    for row in model.objects.values(field).annotate(n=Count("pk")):
        counts[row[field]] = row["n"]
    return (((state,), n) for state, n in counts.items())


def collect_transfers():
    from django.db.models import Sum
    from django.utils import timezone

    totals = {d: (0, 0) for d in TransferRecord.Direction.values}
    for row in (TransferRollup.objects.filter(period=TransferRollup.Period.DAY)
                .values("direction").annotate(b=Sum("bytes"), n=Sum("transfers"))):
        totals[row["direction"]] = (row["b"] or 0, row["n"] or 0)
    yield counter("granary_transferred_bytes", "Bytes moved, by direction", ["direction"],
                  (((d,), b) for d, (b, _) in totals.items()))
    yield counter("granary_transfers", "Transfers finished, by direction", ["direction"],
                  (((d,), n) for d, (_, n) in totals.items()))
    now = timezone.now()
    yield gauge("granary_worker_queue_last_seen_seconds",
                "Seconds since a worker last answered a heartbeat on this queue", ["queue"],
                (((b.queue,), (now - b.seen_at).total_seconds())
                 for b in QueueHeartbeat.objects.all()))


register("metrics", collect_transfers)


def scrape(accept=""):
    """(body, content type): OpenMetrics when `accept` asks for it, else Prometheus' text
    format 0.0.4 (prometheus-client's own negotiation)."""
    encoder, content_type = choose_encoder(accept)
    return encoder(registry), content_type
