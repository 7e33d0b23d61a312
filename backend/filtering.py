"""The API's filter sets and filter backend.

FilterSet: django-filter's, less its per-request copying. django-filter deep-copies every
declared filter and builds a new form class, with a new form field per filter, for each
request: about a millisecond of a search page's twenty (issue #33). Here a filter set's filters
are shallow copies, each bound to its own filter set (a `method` filter finds its own request),
and the form class is built once per filter set class; each form still copies the class's
fields, as Django's forms do. Valid while a filter set's filters are those its class declares:
none here changes them per request.

StrictFilterSet: a filter named with no value (`?delivery=`) is refused, where django-filter
reads it as left out and lists everything."""
import copy

import django_filters
from django.http import QueryDict
from django_filters.rest_framework import DjangoFilterBackend

EMPTY = "give a value, or leave the parameter out"


class FilterSet(django_filters.FilterSet):
    def __init__(self, data=None, queryset=None, *, request=None, prefix=None):
        """django-filter's BaseFilterSet.__init__, with the filters copied as above."""
        if queryset is None:
            queryset = self._meta.model._default_manager.all()
        self.is_bound = data is not None
        self.data = data or QueryDict()
        self.queryset, self.request, self.form_prefix = queryset, request, prefix
        self.filters = {}
        for name, declared in self.base_filters.items():
            filter_ = copy.copy(declared)
            if filter_.method is not None:
                filter_.method = filter_.method     # its own FilterMethod, bound to the copy
            filter_.model, filter_.parent = queryset.model, self
            self.filters[name] = filter_

    def get_form_class(self):
        cls = type(self)
        form = cls.__dict__.get("_form_class")
        if form is None:
            form = super().get_form_class()
            cls._form_class = form
        return form


class StrictFilterSet(FilterSet):
    def is_valid(self):
        valid = super().is_valid()
        empty = [name for name in self.filters if name in self.data and self.data[name] == ""]
        for name in empty:
            self.form.add_error(name if name in self.form.fields else None, EMPTY)
        return valid and not empty


class StrictFilterBackend(DjangoFilterBackend):
    filterset_base = StrictFilterSet
