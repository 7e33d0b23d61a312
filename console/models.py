"""The console's own records (bulk jobs); everything else it reads from the apps below it."""
from django.conf import settings
from django.db import models


class BulkJob(models.Model):
    """One operator action over many granules: what, over which selection, by whom and why.

    The items are the truth of its progress (each holds its outcome); the job keeps what was
    asked and its totals when it was made."""

    class Kind(models.TextChoices):
        REINGEST = "reingest", "Reingest (send failed ingest round again)"
        WITHDRAW = "withdraw", "Withdraw from distribution"
        DELETE = "delete", "Delete"
        RECALL = "recall", "Recall to the cache"
        VERIFY = "verify", "Re-verify every copy"
        MOVE = "move", "Move copies to another volume group"

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed (no item succeeded)"
        CANCELLED = "cancelled", "Cancelled"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    query = models.JSONField(null=True, blank=True, help_text="The granule filter, when by query")
    ids_given = models.PositiveIntegerField(default=0, help_text="Lines of an id list, if any")
    target_group = models.ForeignKey("archive.VolumeGroup", null=True, blank=True,
                                     on_delete=models.PROTECT, related_name="+")
    # a move to the object store: the bucket its copies go to (target_group empty then)
    target_bucket = models.ForeignKey("archive.Bucket", null=True, blank=True,
                                      on_delete=models.PROTECT, related_name="+")
    reason = models.TextField()
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                     on_delete=models.SET_NULL, related_name="+")
    requested_by_name = models.CharField(max_length=150, blank=True)
    granules_total = models.PositiveIntegerField(default=0)
    bytes_total = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["state"], name="bulkjob_state")]

    def __str__(self):
        return f"bulk {self.kind} #{self.pk} ({self.state})"

    @property
    def target(self):
        """Where a move writes: its volume group or bucket."""
        return self.target_group or self.target_bucket

    @property
    def active(self):
        return self.state in (self.State.QUEUED, self.State.RUNNING)


class BulkItem(models.Model):
    """One granule of a job: pending until a worker acts on it, waiting while archive work it
    queued (a recall, an audit, a migration) is under way, then final with a reason."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        WAITING = "waiting", "Waiting for the archive"
        DONE = "done", "Done"
        SKIPPED = "skipped", "Nothing to do"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINAL = (State.DONE, State.SKIPPED, State.FAILED, State.CANCELLED)

    job = models.ForeignKey(BulkJob, on_delete=models.CASCADE, related_name="items")
    granule = models.ForeignKey("catalog.Granule", null=True, on_delete=models.SET_NULL,
                                related_name="+", db_index=False)
    label = models.CharField(max_length=400, help_text="COLLECTION.VERSION:GRANULE_ID vN")
    bytes = models.BigIntegerField(default=0)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    outcome = models.TextField(blank=True)
    requests = models.JSONField(default=list, blank=True,
                                help_text="Archive requests the item waits for")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["job", "state", "id"], name="bulkitem_job_state")]
        constraints = [models.UniqueConstraint(fields=["job", "granule"],
                                               name="bulkitem_one_per_granule")]

    def __str__(self):
        return f"{self.label} ({self.state})"
