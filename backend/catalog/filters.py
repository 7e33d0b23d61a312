"""Query-string filters for collections and granules. Bad input is a 400 that says why.

A granule search by shape (bbox or intersects) filters here by the indexed boxes only; the
view wraps what is left in shape_search.ShapeFiltered, which tests each candidate's footprint
exactly while it pages (see catalog.shapes: there is no PostGIS).
"""
import json
from datetime import UTC

import django_filters
from django.core.exceptions import ValidationError
from django.utils.dateparse import parse_date, parse_datetime

from backend.filtering import FilterSet, StrictFilterSet

from . import shapes
from .geo import BBoxError, parse_bbox
from .models import Collection, Granule
from .services import (
    RESIDENCIES,
    collection_text_q,
    exact_subset,
    filter_residency,
    granule_id_q,
    granule_text_q,
    shape_q,
    temporal_q,
)

ATTRIBUTE_PREFIX = "attr."
ATTRIBUTE_OPS = {"eq": "", "ne": "", "lt": "__lt", "lte": "__lte", "gt": "__gt", "gte": "__gte"}
# Parameters of the list that page or sort it without selecting granules.
PAGING_PARAMS = ("cursor", "limit", "ordering")


def parse_instant(text, *, end=False):
    """An ISO 8601 date or date-time. A bare date means its whole day, UTC: the start of it,
    or with `end` its last microsecond, so a range From = To of one date holds that day. A
    date-time stays exact (a missing zone is UTC)."""
    from datetime import datetime, time

    text = str(text).strip()
    try:
        # parse_date first: parse_datetime reads a bare date as its midnight, and an end
        # date then lost the whole of its day
        day = parse_date(text)
        value = None if day is not None else parse_datetime(
            text.replace("z", "Z").replace("t", "T"))
    except ValueError as exc:     # well-formed but impossible, e.g. month 13
        raise ValidationError(f"'{text}' is not a valid date: {exc}") from exc
    if day is not None:
        value = datetime.combine(day, time.max if end else time.min)
    elif value is None:
        raise ValidationError(f"'{text}' is not an ISO 8601 date or date-time")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def search_shape(data, memo=None):
    """The Shape a granule search's `bbox` or `intersects` asks for (None: neither); with
    `memo` (the request) parsed once per request and kept there (a search page asked for it
    four times: the view, and the filters of its list and its facets)."""
    key = (data.get("bbox"), data.get("intersects"))
    if memo is None or not all(part is None or isinstance(part, str) for part in key):
        return _search_shape(*key)
    kept = getattr(memo, "_search_shapes", None)
    if kept is None:
        kept = memo._search_shapes = {}
    if key not in kept:
        kept[key] = _search_shape(*key)
    return kept[key]


def _search_shape(bbox, intersects):
    if bbox and intersects:
        raise ValidationError({"intersects": "use either bbox or intersects, not both"})
    try:
        if bbox:
            box = parse_bbox(bbox)
            return shapes.from_box(*box.as_list())
        if intersects:
            return shapes.parse_json_text(intersects)
    except BBoxError as exc:
        raise ValidationError({"bbox": str(exc)}) from exc
    except shapes.ShapeError as exc:
        raise ValidationError({"intersects": str(exc)}) from exc
    return None


def search_data(params, body):
    """A granule search's filters from a POST body (a JSON object of the query parameters,
    with `intersects` as a GeoJSON object, `collection` and `bbox` also as arrays), laid over
    the query string (which keeps cursor, limit and ordering)."""
    if not isinstance(body, dict):
        raise ValidationError("the search body must be a JSON object of filters")
    data = params.copy()
    for key, value in body.items():
        if key in PAGING_PARAMS:
            raise ValidationError({key: "cursor, limit and ordering go in the query string, "
                                   "where the next and previous links keep them"})
        if value is None:
            continue
        if value == "":
            raise ValidationError({str(key): "is empty: give a value, or leave it out"})
        if key == "intersects" and isinstance(value, dict):
            value = json.dumps(value)
        elif key in ("collection", "bbox") and isinstance(value, list) and all(
                isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
            value = ",".join(str(v) for v in value)
        elif isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, str | int | float):
            value = str(value)
        else:
            raise ValidationError({str(key): "must be a string or a number"})
        data[str(key)] = value
    return data


def _number_or_text(text):
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


class CollectionFilter(StrictFilterSet):
    q = django_filters.CharFilter(method="filter_text", label="Free text (name, title, ...)")
    processing_level = django_filters.CharFilter()
    platform = django_filters.CharFilter(lookup_expr="iexact")
    instrument = django_filters.CharFilter(lookup_expr="iexact")
    access = django_filters.ChoiceFilter(choices=Collection.Access.choices)

    class Meta:
        model = Collection
        fields = ["processing_level", "platform", "instrument", "access"]

    def filter_text(self, queryset, name, value):
        for word in value.split():
            queryset = queryset.filter(collection_text_q(word))
        return queryset


class GranuleFilter(FilterSet):
    collection = django_filters.CharFilter(
        method="filter_collection", label="Collection key(s) SHORT.VERSION, comma-separated",
    )
    start = django_filters.CharFilter(method="filter_noop", label="Overlaps from (ISO 8601)")
    end = django_filters.CharFilter(method="filter_noop", label="Overlaps until (ISO 8601)")
    bbox = django_filters.CharFilter(
        method="filter_shape", label="west,south,east,north (west > east crosses 180°)")
    intersects = django_filters.CharFilter(
        method="filter_shape",
        label="GeoJSON geometry (Point, LineString, Polygon, Multi*) in JSON, at most "
              f"{shapes.MAX_VERTICES} vertices; a ring from lon 170 to -170 crosses 180°",
    )
    q = django_filters.CharFilter(
        method="filter_text", label="Free text: each word a granule id (wildcards * and ?) or "
        "a word of its collection's name, title, description, platform or instrument",
    )
    granule_id = django_filters.CharFilter(
        method="filter_granule_id", label="Granule id, case-insensitive; * and ? are wildcards",
    )
    state = django_filters.ChoiceFilter(choices=Granule.State.choices)
    processing_level = django_filters.CharFilter(field_name="collection__processing_level")
    platform = django_filters.CharFilter(field_name="collection__platform", lookup_expr="iexact")
    instrument = django_filters.CharFilter(
        field_name="collection__instrument", lookup_expr="iexact",
    )
    residency = django_filters.ChoiceFilter(
        choices=[(r, r) for r in RESIDENCIES], method="filter_residency",
        label="cache: every file is in the disk cache; tape: some file needs a recall",
    )

    class Meta:
        model = Granule
        fields = ["granule_id", "state"]

    def filter_noop(self, queryset, name, value):
        return queryset

    def filter_residency(self, queryset, name, value):
        return filter_residency(queryset, value)

    def filter_text(self, queryset, name, value):
        return queryset.filter(granule_text_q(value))

    def filter_granule_id(self, queryset, name, value):
        return queryset.filter(granule_id_q(value.strip()))

    def filter_collection(self, queryset, name, value):
        ids = []
        for key in (k.strip() for k in value.split(",") if k.strip()):
            try:
                ids.append(self.collection_id(key))
            except Collection.DoesNotExist as exc:
                raise ValidationError({"collection": str(exc)}) from exc
        self._named = ids
        return queryset.filter(collection__in=ids)

    def collection_id(self, key):
        """The id of a collection the caller sees, by its key (a 404-free lookup: one it may
        not see is as unknown as one that does not exist)."""
        from .services import visible_collection_id

        if not self.request:
            return Collection.objects.get_by_key(key).pk
        return visible_collection_id(self.request.user, self.request, key)

    def filter_shape(self, queryset, name, value):
        shape = search_shape(self.data, self.request)
        return queryset if shape is None else queryset.filter(shape_q(shape))

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        queryset = self._filter_temporal(queryset)
        return self._filter_attributes(queryset)

    def _filter_temporal(self, queryset):
        raw_start, raw_end = self.data.get("start"), self.data.get("end")
        errors = {}
        start = end = None
        for key, raw in (("start", raw_start), ("end", raw_end)):
            if raw:
                try:
                    value = parse_instant(raw, end=key == "end")
                except ValidationError as exc:
                    errors[key] = exc.messages
                    continue
                if key == "start":
                    start = value
                else:
                    end = value
        if errors:
            raise ValidationError(errors)
        if start and end and start > end:
            raise ValidationError({"end": f"{raw_end} is before start {raw_start}"})
        queryset = queryset.filter(temporal_q(start, end))
        longest = None if start is None else self._longest_granule()
        if longest is not None:
            # no granule outlasts its collection's longest: the start index is read from the
            # window on, not from the first granule of the collection's history
            queryset = queryset.filter(temporal_start__gte=start - longest)
        return queryset

    def _longest_granule(self):
        """The longest granule of the collections searched (those named, else those the caller
        sees), the spans read once per request."""
        from .services import visible_longest_granule
        from .spans import collection_spans, longest_of

        ids = getattr(self, "_named", None)
        if self.request is None:
            return longest_of(collection_spans(ids))
        return visible_longest_granule(self.request.user, self.request, ids)

    def _filter_attributes(self, queryset):
        for param, raw in self.data.items():
            if not param.startswith(ATTRIBUTE_PREFIX):
                continue
            name, _, op = param[len(ATTRIBUTE_PREFIX):].partition(".")
            op = op or "eq"
            if not name.replace("_", "").isalnum() or op not in ATTRIBUTE_OPS:
                raise ValidationError({
                    param: "use attr.NAME=value or attr.NAME.OP=value with OP one of "
                    + ", ".join(ATTRIBUTE_OPS)
                })
            value = _number_or_text(raw)
            if op in ("lt", "lte", "gt", "gte") and isinstance(value, str):
                raise ValidationError({param: f"'{raw}' is not a number"})
            lookup = {f"attributes__{name}{ATTRIBUTE_OPS[op]}": value}
            queryset = queryset.exclude(**lookup) if op == "ne" else queryset.filter(**lookup)
        return queryset


def filter_granules(request, params):
    """The granules the caller sees that the list's filters `params` ({name: text}) select,
    for an action on a whole search; a shape (bbox, intersects) is tested exactly on each
    candidate. A name the list does not know is refused, not ignored: a misspelt filter must
    not widen what the action takes."""
    from django.http import QueryDict

    from .services import visible_granules

    unknown = sorted(name for name in params if name not in GranuleFilter.base_filters
                     and name not in PAGING_PARAMS and not name.startswith(ATTRIBUTE_PREFIX))
    if unknown:
        raise ValidationError({"filters": f"unknown filter {', '.join(unknown)}: use the "
                               "granule list's query parameters"})
    data = QueryDict(mutable=True)
    data.update({k: v for k, v in params.items() if k not in PAGING_PARAMS})
    filterset = GranuleFilter(data=data, queryset=visible_granules(request.user), request=request)
    if not filterset.is_valid():
        raise ValidationError(filterset.errors)
    shape = search_shape(data)
    return filterset.qs if shape is None else exact_subset(filterset.qs, shape, strict=True)[0]
