"""Measurements: every transfer, and proof that each worker queue is being served."""
from django.db import models


class TransferRecord(models.Model):
    """Bytes moved by one transfer; dashboards roll these up per minute, hour and day."""

    class Direction(models.TextChoices):
        INGEST = "ingest", "Ingest"
        MIGRATE = "migrate", "Migrate (cache to tape)"
        RECALL = "recall", "Recall (tape to cache)"
        DISTRIBUTION = "distribution", "Distribution"

    direction = models.CharField(max_length=12, choices=Direction.choices)
    collection = models.ForeignKey(
        "catalog.Collection", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="transfers",
    )
    bytes = models.BigIntegerField()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["direction", "ended_at"], name="transfer_dir_end")]
        constraints = [
            models.CheckConstraint(condition=models.Q(bytes__gte=0), name="transfer_bytes_nonneg"),
            models.CheckConstraint(
                condition=models.Q(ended_at__gte=models.F("started_at")), name="transfer_ordered",
            ),
        ]

    def __str__(self):
        return f"{self.direction} {self.bytes} B at {self.ended_at:%Y-%m-%d %H:%M:%S}"


class QueueHeartbeat(models.Model):
    """The last time a worker answered on a queue: a queue with no recent beat has no worker."""

    queue = models.CharField(max_length=40, unique=True)
    worker = models.CharField(max_length=200)
    sent_at = models.DateTimeField()
    seen_at = models.DateTimeField()

    class Meta:
        ordering = ["queue"]

    def __str__(self):
        return f"{self.queue} served by {self.worker}"

    @property
    def latency_s(self):
        return (self.seen_at - self.sent_at).total_seconds()
