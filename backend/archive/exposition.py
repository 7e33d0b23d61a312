"""The archive tier's Prometheus figures: requests, queues, drives, cache, the object store's
buckets and the last reconciliation (registered with backend.metrics.exposition from
ArchiveConfig.ready)."""
from django.db.models import Count

from backend.metrics.exposition import gauge

from . import object_board, operations
from .models import ArchiveRequest, Discrepancy, Drive, Reconciliation
from .services.cache import cache_usage


def collect():
    counts = dict.fromkeys(((k, s) for k in ArchiveRequest.Kind.values
                            for s in ArchiveRequest.State.values), 0)
    for row in ArchiveRequest.objects.values("kind", "state").annotate(n=Count("id")):
        counts[(row["kind"], row["state"])] = row["n"]
    yield gauge("granary_archive_requests", "Archive requests by kind and state",
                ["kind", "state"], counts.items())

    queue = operations.queue_summary()
    labels = ["kind", "volume_group"]
    yield gauge("granary_archive_queue_depth", "Requests queued, by kind and volume group",
                labels, (((r["kind"], r["volume_group"] or ""), r["queued"]) for r in queue))
    yield gauge("granary_archive_queue_bytes", "Bytes queued, by kind and volume group",
                labels, (((r["kind"], r["volume_group"] or ""), r["queued_bytes"])
                         for r in queue))
    yield gauge("granary_archive_queue_oldest_age_seconds",
                "Age of the oldest pending request, by kind and volume group", labels,
                (((r["kind"], r["volume_group"] or ""), r["oldest_age_s"]) for r in queue))

    drives = dict.fromkeys(((silo, s) for silo in
                            Drive.objects.values_list("silo__name", flat=True).distinct()
                            for s in Drive.State.values), 0)
    for row in Drive.objects.values("silo__name", "state").annotate(n=Count("id")):
        drives[(row["silo__name"], row["state"])] = row["n"]
    yield gauge("granary_drives", "Tape drives by silo and state", ["silo", "state"],
                drives.items())

    yield from object_board.collect()

    usage = cache_usage()
    yield gauge("granary_cache_capacity_bytes", "Disk cache capacity", [], [((), usage.capacity)])
    yield gauge("granary_cache_bytes", "Disk cache bytes by entry state", ["state"],
                ((("dirty",), usage.dirty), (("clean",), usage.clean),
                 (("pinned",), usage.pinned), (("staging",), usage.staging)))

    last = (Reconciliation.objects.filter(state=Reconciliation.State.DONE)
            .order_by("-finished_at", "-pk").first())
    kinds = ({} if last is None else
             {row["kind"]: row["n"] for row in Discrepancy.objects.filter(run=last)
              .values("kind").annotate(n=Count("id"))})
    yield gauge("granary_reconciliation_discrepancies",
                "Discrepancies the last finished reconciliation found, by kind", ["kind"],
                (((k,), n) for k, n in sorted(kinds.items())))
    yield gauge("granary_reconciliation_last_finished_timestamp_seconds",
                "When the last reconciliation finished (Unix time)", [],
                [] if last is None else [((), last.finished_at.timestamp())])
