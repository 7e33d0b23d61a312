"""The API's filter backend: a filter named with no value (`?delivery=`) is refused, where
django-filter reads it as left out and lists everything."""
import django_filters
from django_filters.rest_framework import DjangoFilterBackend

EMPTY = "give a value, or leave the parameter out"


class StrictFilterSet(django_filters.FilterSet):
    def is_valid(self):
        valid = super().is_valid()
        empty = [name for name in self.filters if name in self.data and self.data[name] == ""]
        for name in empty:
            self.form.add_error(name if name in self.form.fields else None, EMPTY)
        return valid and not empty


class StrictFilterBackend(DjangoFilterBackend):
    filterset_base = StrictFilterSet
