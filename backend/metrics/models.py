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
    # not indexed: the dashboards read the roll-ups, never raw records by collection
    collection = models.ForeignKey(
        "catalog.Collection", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="transfers", db_index=False,
    )
    bytes = models.BigIntegerField()
    # moves recorded together (an ingest chunk's granules, a recall commit's files) are one
    # record per collection that counts them (services.per_collection); roll-ups count each
    transfers = models.PositiveIntegerField(
        default=1, db_default=1, help_text="Transfers the record stands for (granules, files)")
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

    queue = models.CharField(max_length=60, unique=True)  # archive.<silo> too (silo: 40)
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


class TransferRollup(models.Model):
    """Bytes and transfers per period (minute, hour, day), direction and collection, kept up to
    date as records arrive so dashboards never scan raw records. Times are UTC."""

    class Period(models.TextChoices):
        MINUTE = "minute", "Minute"
        HOUR = "hour", "Hour"
        DAY = "day", "Day"

    period = models.CharField(max_length=6, choices=Period.choices)
    start = models.DateTimeField()
    direction = models.CharField(max_length=12, choices=TransferRecord.Direction.choices)
    collection = models.CharField(max_length=120, blank=True, help_text="Collection key or ''")
    bytes = models.BigIntegerField(default=0)
    transfers = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["period", "start", "direction", "collection"],
                                    name="rollup_unique"),
        ]
        indexes = [models.Index(fields=["period", "direction", "start"], name="rollup_lookup")]

    def __str__(self):
        return f"{self.period} {self.start:%Y-%m-%d %H:%M} {self.direction} {self.bytes} B"


class DailyTarget(models.Model):
    """The daily volume operators aim for, per direction (seed 004: 1 TB in, 2 TB out)."""

    direction = models.CharField(max_length=12, choices=TransferRecord.Direction.choices,
                                 unique=True)
    terabytes = models.FloatField()
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.direction}: {self.terabytes} TB/day"

    @property
    def bytes(self):
        return int(self.terabytes * 1e12)
