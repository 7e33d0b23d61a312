"""Reconciliation runs and the discrepancies they find (models; backend.archive.models exports
them)."""
from django.conf import settings
from django.db import models


class Reconciliation(models.Model):
    """One comparison of catalog, cache, volumes (read back) and copies: what it read and found."""

    class Scope(models.TextChoices):
        SAMPLE = "sample", "A random sample of copies and cached files"
        FULL = "full", "Every volume, copy and cached file"

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.SAMPLE)
    sample = models.PositiveIntegerField(null=True, blank=True)
    repair = models.BooleanField(default=False, help_text="Repair what it finds once done")
    state = models.CharField(max_length=8, choices=State.choices, default=State.QUEUED)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    volumes_read = models.PositiveIntegerField(default=0)
    copies_read = models.PositiveIntegerField(default=0)
    cache_files_read = models.PositiveIntegerField(default=0)
    discrepancy_count = models.PositiveIntegerField(default=0)
    notes = models.JSONField(
        default=list, blank=True,
        help_text="What it saw that breaks no promise (bytes past a volume's end of data): "
                  "told, never counted as discrepancies")
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-pk"]

    def __str__(self):
        return f"reconciliation #{self.pk} ({self.scope}, {self.state})"


class Discrepancy(models.Model):
    """One broken promise a reconciliation found, the objects at fault and its safe repair."""

    run = models.ForeignKey(Reconciliation, on_delete=models.CASCADE,
                            related_name="discrepancies")
    kind = models.CharField(max_length=40)
    file = models.ForeignKey("catalog.File", null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="+", db_index=False)
    copy = models.ForeignKey("archive.FileCopy", null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="+", db_index=False)
    volume = models.ForeignKey("archive.Volume", null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+", db_index=False)
    request = models.ForeignKey("archive.ArchiveRequest", null=True, blank=True,
                                on_delete=models.SET_NULL, related_name="+", db_index=False)
    detail = models.TextField()
    extra = models.JSONField(default=dict, blank=True)
    repair = models.CharField(max_length=200, blank=True,
                              help_text="What a repair does; blank: reported only")
    repaired_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=200, blank=True, help_text="What the repair did")

    class Meta:
        ordering = ["run", "pk"]
        verbose_name_plural = "discrepancies"

    def __str__(self):
        return f"{self.kind} (run {self.run_id})"
