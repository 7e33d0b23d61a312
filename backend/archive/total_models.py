"""Totals kept by the database's statement triggers, so boards sum a few rows."""
from django.db import models

from .models import CacheEntry


class QueueTotal(models.Model):
    """Queued and running archive requests per kind, state and volume group (0: none), with
    their bytes, kept as deltas by statement triggers on the requests (PostgreSQL; migration
    0011_totals_as_deltas; see backend.dbtriggers), so the queues board sums a few rows, not
    every pending request. On SQLite nothing keeps it."""

    kind = models.CharField(max_length=8)
    state = models.CharField(max_length=10)
    group_id = models.BigIntegerField(default=0)
    requests = models.BigIntegerField(default=0)
    bytes_total = models.BigIntegerField(default=0)

    class Meta:
        # rows are deltas (several per key until compacted): readers sum them
        indexes = [models.Index(fields=["kind", "state", "group_id"], name="queue_total_key")]

    def __str__(self):
        return f"{self.kind}/{self.state}/{self.group_id}: {self.requests}"


class CacheStateTotal(models.Model):
    """Bytes and entries of the cache in each state, kept as deltas by statement triggers on
    the cache entries (PostgreSQL; migration 0011_totals_as_deltas; see backend.dbtriggers),
    so the archive board's cache gauge sums a few rows, not every cached file. On SQLite
    nothing keeps it and cache_usage sums the entries."""

    # rows are deltas (several per state until compacted): readers sum them
    state = models.CharField(max_length=8, choices=CacheEntry.State.choices, db_index=True)
    bytes = models.BigIntegerField(default=0)
    entries = models.BigIntegerField(default=0)

    def __str__(self):
        return f"{self.state}: {self.bytes} B in {self.entries}"
