"""Recording measurements."""
from django.utils import timezone

from .models import QueueHeartbeat, TransferRecord


def record_heartbeat(queue, worker, sent_at):
    """Note that `worker` served `queue`; idempotent per queue (last beat wins)."""
    beat, _ = QueueHeartbeat.objects.update_or_create(
        queue=queue, defaults={"worker": worker, "sent_at": sent_at, "seen_at": timezone.now()},
    )
    return beat


def queue_health(stale_after_s=300):
    now = timezone.now()
    return [
        {
            "queue": b.queue, "worker": b.worker, "seen_at": b.seen_at,
            "latency_s": round(b.latency_s, 3),
            "alive": (now - b.seen_at).total_seconds() < stale_after_s,
        }
        for b in QueueHeartbeat.objects.all()
    ]


def record_transfer(direction, nbytes, started_at, ended_at, collection=None):
    return TransferRecord.objects.create(
        direction=direction, bytes=nbytes, started_at=started_at, ended_at=ended_at,
        collection=collection,
    )
