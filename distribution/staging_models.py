"""Bulk stage requests of the WLCG Tape REST API: files a grid client asks to have on disk."""
import uuid

from django.conf import settings
from django.db import models

from backend.accounts.ownership import Ownership


class StageRequest(models.Model):
    """One POST /stage: its files ride the same recalls as orders, at this request's priority.

    The id is a random UUID (the spec's ids are opaque strings): a client cannot guess
    another's, and ownership still answers another's id as a missing one.
    """

    class Priority(models.IntegerChoices):
        # the archive's recall priorities (ArchiveRequest.Priority): what an operator may set
        HIGH = 0, "High (as an operator's recall)"
        NORMAL = 1, "Normal (as an order)"
        LOW = 2, "Low (behind migrations)"

    ownership = Ownership("user")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="stage_requests")
    priority = models.PositiveSmallIntegerField(choices=Priority.choices,
                                                default=Priority.NORMAL)
    file_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    # every file ends COMPLETED or FAILED by then (stated with the first ETA; a file still
    # live at its bound fails with that reason: staging_progress.enforce_bound)
    bound_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["completed_at"], name="stage_open")]

    def __str__(self):
        return f"stage {self.pk}"


class StageFile(models.Model):
    """One file of a stage request, by the path the client named, with the spec's state."""

    class State(models.TextChoices):
        SUBMITTED = "SUBMITTED", "Submitted"
        STARTED = "STARTED", "Started"
        COMPLETED = "COMPLETED", "Completed"
        CANCELLED = "CANCELLED", "Cancelled"
        FAILED = "FAILED", "Failed"

    LIVE = (State.SUBMITTED, State.STARTED)

    request = models.ForeignKey(StageRequest, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=1024)
    file = models.ForeignKey("catalog.File", on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.SUBMITTED)
    error = models.TextField(blank=True)
    recall_request_id = models.BigIntegerField(null=True, blank=True)
    disk_lifetime_s = models.PositiveIntegerField()
    on_disk = models.BooleanField(default=False)
    released = models.BooleanField(default=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    kept_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]
        # (request, state): whether a request has files left is asked after every recall; on
        # the request's foreign key alone that read 10,000 rows each time (bench stage)
        indexes = [models.Index(fields=["file", "state"], name="stage_file_state"),
                   models.Index(fields=["request", "state"], name="stage_request_state")]
        constraints = [models.UniqueConstraint(fields=["request", "path"],
                                               name="stage_file_path_unique")]

    def __str__(self):
        return f"{self.path} ({self.state})"
