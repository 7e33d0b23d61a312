"""Ingest requests and their granules, and the PDRs that ask for them.

The database is the truth: a granule's state says how far it got, a lease says a worker holds
it, and the request's counters say how much is done. Broker messages only wake workers.
"""
from django.conf import settings
from django.db import models

from backend.accounts.ownership import Ownership


class IngestRequest(models.Model):
    """What a provider asked to ingest in one go: a bulk request, a PDR, a drop or a CLI run."""

    ownership = Ownership("provider", by_provider=True)

    class Way(models.TextChoices):
        BULK = "bulk", "Bulk API"
        PDR = "pdr", "PDR"
        DROP = "drop", "Drop directory"
        CLI = "cli", "Command line"

    class State(models.TextChoices):
        RECEIVED = "received", "Received"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed: every granule archived"
        FAILED = "failed", "Finished with failed granules"

    provider = models.ForeignKey(
        "accounts.Provider", on_delete=models.PROTECT, related_name="ingest_requests")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="ingest_requests")
    way = models.CharField(max_length=8, choices=Way.choices)
    label = models.CharField(max_length=255, blank=True, help_text="PDR name, folder, ...")
    state = models.CharField(max_length=10, choices=State.choices, default=State.RECEIVED)
    idempotency_key = models.CharField(max_length=255, null=True, blank=True)
    body_hash = models.CharField(max_length=64, null=True, blank=True,
                                 help_text="SHA-256 of the canonical request body")
    granule_count = models.PositiveIntegerField(default=0)
    archived_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0)
    bytes_total = models.BigIntegerField(default=0)
    bytes_done = models.BigIntegerField(
        default=0, help_text="Bytes of the granules in a final state (archived or failed)")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "idempotency_key"],
                                    name="ingest_request_idempotency_key"),
            models.UniqueConstraint(fields=["provider", "body_hash"],
                                    name="ingest_request_body_hash"),
        ]
        indexes = [models.Index(fields=["state", "updated_at"], name="ingest_req_state")]

    def __str__(self):
        return f"ingest request {self.pk} ({self.way}, {self.provider_id})"

    @property
    def percent_done(self):
        return percent_done(self.bytes_done, self.bytes_total, self.state)

    @property
    def finished(self):
        return self.state in (self.State.COMPLETED, self.State.FAILED)


def percent_done(bytes_done, bytes_total, state):
    """% of a request's bytes in a final state; a request of no bytes is done once finished."""
    if not bytes_total:
        finished = state in (IngestRequest.State.COMPLETED, IngestRequest.State.FAILED)
        return 100.0 if finished else 0.0
    return round(100.0 * bytes_done / bytes_total, 2)


class IngestGranule(models.Model):
    """One granule of a request, from received to archived or failed (with the reason)."""

    class State(models.TextChoices):
        RECEIVED = "received", "Received"
        STAGED = "staged", "Staged: every file is in the staging area"
        VALIDATED = "validated", "Validated: sizes and checksums match"
        ARCHIVING = "archiving", "Archiving"
        ARCHIVED = "archived", "Archived"
        FAILED = "failed", "Failed"

    # indexed by (request, position) and (request, state), which serve every lookup by request
    request = models.ForeignKey(IngestRequest, on_delete=models.CASCADE, related_name="granules",
                                db_index=False)
    position = models.PositiveIntegerField(help_text="Index in the request, from 0")
    collection_key = models.CharField(max_length=120)
    granule_id = models.CharField(max_length=255)
    state = models.CharField(max_length=10, choices=State.choices, default=State.RECEIVED)
    disposition = models.CharField(max_length=60, blank=True,
                                   help_text="Why it failed, in the ECS PAN vocabulary")
    reason = models.TextField(blank=True, help_text="Why it failed, in a sentence")
    bytes_total = models.BigIntegerField(default=0)
    bytes_done = models.BigIntegerField(default=0, help_text="Bytes validated so far")
    spec = models.JSONField(help_text="What the provider declared: files, times, box, ...")
    catalog_granule = models.ForeignKey(
        "catalog.Granule", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="ingest_granules", help_text="Set once registered in the catalog")
    admitted = models.BooleanField(
        default=False, help_text="The archive tier took the files (False: waits for cache room)")
    attempts = models.PositiveIntegerField(default=0)
    lease_owner = models.CharField(max_length=40, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    staging_removed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    archived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["request", "position"]
        constraints = [
            models.UniqueConstraint(fields=["request", "position"], name="ingest_granule_position"),
        ]
        indexes = [
            models.Index(fields=["request", "state"], name="ingest_gran_req_state"),
            models.Index(fields=["state", "updated_at"], name="ingest_gran_state"),
            # Partial: only granules a worker holds right now are looked up by their lease.
            models.Index(fields=["lease_owner"], name="ingest_gran_lease",
                         condition=~models.Q(lease_owner="")),
        ]

    def __str__(self):
        return f"{self.collection_key}:{self.granule_id} ({self.state})"

    @property
    def final(self):
        return self.state in (self.State.ARCHIVED, self.State.FAILED)


class Pdr(models.Model):
    """A Product Delivery Record and its answer: a PDRD when refused, a PAN when done."""

    ownership = Ownership("provider", by_provider=True)

    class State(models.TextChoices):
        REJECTED = "rejected", "Rejected (PDRD sent)"
        ACCEPTED = "accepted", "Accepted (granules moving)"
        ANSWERED = "answered", "Done (PAN sent)"

    provider = models.ForeignKey("accounts.Provider", on_delete=models.PROTECT,
                                 related_name="pdrs")
    request = models.OneToOneField(IngestRequest, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="pdr")
    name = models.CharField(max_length=255)
    path = models.CharField(max_length=1024, blank=True,
                            help_text="Where it was found in the staging area ('' via the API)")
    text = models.TextField()
    text_hash = models.CharField(max_length=64)
    state = models.CharField(max_length=10, choices=State.choices)
    disposition = models.CharField(max_length=60, blank=True)
    detail = models.TextField(blank=True, help_text="What is wrong, in a sentence")
    pdrd = models.TextField(blank=True)
    pan = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "name", "text_hash"],
                                    name="pdr_once_per_text"),
        ]

    def __str__(self):
        return f"{self.name} ({self.state})"
