"""What the demo has seeded, so seeding again fills gaps and never doubles anything."""
from django.db import models


class HistoryDay(models.Model):
    """A UTC day the demo filled with synthetic transfers, up to `until` (the seeding time on
    the day it ran): a later seed adds only the part of a day after `until`."""

    day = models.DateField(unique=True)
    until = models.DateTimeField()

    class Meta:
        ordering = ["day"]

    def __str__(self):
        return f"{self.day} up to {self.until:%H:%M}"
