"""Providers: the organisations that deliver products, and who may deliver what."""
from django.conf import settings
from django.db import models


class Provider(models.Model):
    """A data provider (a processing facility or science team) with its own staging area."""

    name = models.SlugField(max_length=64, unique=True, help_text="Short id, e.g. MODAPS")
    title = models.CharField(max_length=200, blank=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="providers", blank=True)
    collections = models.ManyToManyField(
        "catalog.Collection", related_name="providers", blank=True,
        help_text="Collections this provider may deliver",
    )
    contact_email = models.EmailField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def may_deliver(self, collection):
        return self.collections.filter(pk=collection.pk).exists()
