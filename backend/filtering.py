"""The API's filter sets and filter backend.

FilterSet: django-filter's, less its per-request copying. django-filter deep-copies every
declared filter and builds a new form class, with a new form field per filter, for each
request: about a millisecond of a search page's twenty (issue #33). Here a filter set's filters
are shallow copies, each bound to its own filter set (a `method` filter finds its own request),
and the form class is built once per filter set class; each form still copies the class's
fields, and its forms share them: Django's forms deep-copy their class's fields (and each
field its widget, choices and validators) per form, 6 % of a search page's CPU here, for
fields that no filter set here changes or renders per request; a model choice field, whose
queryset keeps its results, is still copied per form. Valid while a filter set's filters are
those its class declares: none here changes them per request.

StrictFilterSet: a filter named with no value (`?delivery=`) is refused, where django-filter
reads it as left out and lists everything."""
import copy

import django_filters
from django.forms import ModelChoiceField
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
            form.base_fields = _SharedFields(form.base_fields)
            cls._form_class = form
        return form


class _SharedFields(dict):
    """A form class's fields, handed to each of its forms as they are (see the module's
    docstring): a form's deep copy of them copies only the model choice fields."""

    def __deepcopy__(self, memo):
        return {name: copy.deepcopy(field, memo) if isinstance(field, ModelChoiceField)
                else field for name, field in self.items()}


class StrictFilterSet(FilterSet):
    def is_valid(self):
        valid = super().is_valid()
        empty = [name for name in self.filters if name in self.data and self.data[name] == ""]
        for name in empty:
            self.form.add_error(name if name in self.form.fields else None, EMPTY)
        return valid and not empty


class StrictFilterBackend(DjangoFilterBackend):
    filterset_base = StrictFilterSet
