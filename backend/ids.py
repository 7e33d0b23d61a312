"""Ids in URLs and request bodies, bounded to what the database holds.

Every table's key is a 64-bit integer: a larger number (2**70) in a path or a body made SQLite
raise OverflowError and PostgreSQL "out of range" (a 500). Paths take at most 18 digits (a
larger id cannot exist: no route, a 404) and bodies at most MAX_ID (a 400).
"""
from django.urls import register_converter
from django.urls.converters import get_converters
from rest_framework import serializers

MAX_ID = 2**63 - 1
ID_REGEX = "[0-9]{1,18}"


class IdConverter:
    """`<id:pk>` in a URL pattern: a number the database may hold as a key."""

    regex = ID_REGEX

    def to_python(self, value):
        return int(value)

    def to_url(self, value):
        return str(value)


def IdField(**kwargs):  # noqa: N802 - used like a field class
    """An integer field for an id in a request body."""
    return serializers.IntegerField(min_value=1, max_value=MAX_ID, **kwargs)


if "id" not in get_converters():  # the URL modules that use <id:...> import this module
    register_converter(IdConverter, "id")
