"""The operator's weights for the fair share of drives between kinds of recall."""
from django.db import models


class RecallShare(models.Model):
    """An operator's weight for one kind of recall (ArchiveRequest.Share): when kinds compete
    for drives, each gets reads in proportion to its weight (the scheduler's fair share). A kind
    with no row weighs 1; with no rows at all, shares play no part."""

    kind = models.CharField(max_length=12, primary_key=True, blank=True)
    weight = models.PositiveSmallIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind"]

    def __str__(self):
        return f"{self.kind or 'other'}: {self.weight}"
