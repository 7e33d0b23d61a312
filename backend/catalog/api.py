"""Read API of the catalog: collections and granules with filters and cursor paging."""
from django.http import Http404
from django_filters import utils as filter_utils
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.errors import DomainError
from backend.ids import ID_REGEX

from . import search_summary, services, shape_files
from .filters import CollectionFilter, GranuleFilter, search_data, search_shape
from .models import Collection
from .pagination import (
    DEFAULT_GRANULE_SORT,
    GRANULE_SORTS,
    GranuleKeysetPagination,
    GranuleSearchPagination,
)
from .retired import RETIRED_STATES
from .serializers import (
    CollectionDetailSerializer,
    CollectionSerializer,
    GranuleDetailSerializer,
    GranuleSearchSerializer,
    GranuleSerializer,
    ShapeReadingSerializer,
    ShapeUploadSerializer,
    TimelineSearchSerializer,
    TimelineSerializer,
)
from .storage import storage
from .timeline import BUCKETS, MAX_BUCKETS


class CollectionViewSet(viewsets.ReadOnlyModelViewSet):
    """Collections (ESDTs) visible to the caller; look one up by key, e.g. MOD021KM.061."""

    serializer_class = CollectionSerializer
    filterset_class = CollectionFilter
    ordering_fields = ["short_name", "created_at"]
    ordering = ["short_name"]
    lookup_value_regex = "[^/]+"
    lookup_url_kwarg = "key"

    def get_queryset(self):
        return services.collections_with_counts(self.request.user)

    def get_serializer_class(self):
        return CollectionDetailSerializer if self.action == "retrieve" else CollectionSerializer

    def get_object(self):
        try:
            return self.get_queryset().get_by_key(self.kwargs["key"])
        except Collection.DoesNotExist as exc:
            raise NotFound(str(exc)) from exc


class _FacetValue(serializers.Serializer):
    value = serializers.CharField()
    count = serializers.IntegerField()

    class Meta:
        ref_name = "FacetValue"


class SearchFilterBackend(DjangoFilterBackend):
    """The granule filters, read from the query string, or from the JSON body of a POST
    search (a polygon does not fit in a URL)."""

    def get_filterset_kwargs(self, request, queryset, view):
        kwargs = super().get_filterset_kwargs(request, queryset, view)
        kwargs["data"] = view.filter_data()
        return kwargs


_ATTRIBUTES = OpenApiParameter(
    "attr.NAME[.OP]", OpenApiTypes.STR,
    description="Attribute condition, OP one of eq, ne, lt, lte, gt, gte "
    "(e.g. attr.cloud_cover.lt=20, attr.day_night=Day)",
)
_PAGING = [
    OpenApiParameter("cursor", OpenApiTypes.STR,
                     description="The page's position, from a next or previous link"),
    OpenApiParameter("limit", OpenApiTypes.INT, description=(
        f"Granules per page, {GranuleKeysetPagination.min_page_size} to "
        f"{GranuleKeysetPagination.max_page_size} (default {GranuleKeysetPagination.page_size})")),
    OpenApiParameter("ordering", OpenApiTypes.STR, description=(
        "Sort fields, comma-separated, - for descending: " + ", ".join(GRANULE_SORTS)
        + f" (created_at: ingest time; default {DEFAULT_GRANULE_SORT})")),
]
_BUCKET = OpenApiParameter(
    "bucket", str, enum=["auto", *BUCKETS], default="auto",
    description="Bucket size; auto picks hour, day, month or year by the span of the granules "
                f"found. At most {MAX_BUCKETS} buckets.")
_INCLUDE = OpenApiParameter(
    "include", OpenApiTypes.STR, description=(
        "facets, timeline or both, comma-separated: the page also answers `facets` (as "
        "/granules/facets/ with the same filters less collection, processing_level, platform "
        "and instrument) and `timeline` (as /granules/timeline/ with the same filters and "
        "`bucket`), computed together: the search page's three requests in one"))
_FACETS = inline_serializer("GranuleFacets", {
    **{name: _FacetValue(many=True) for name in services.FACETS},
    "counts_exact": serializers.BooleanField(
        required=False,
        help_text="false when a shape search had too many candidates to test each: the "
        "counts are then of the granules whose box meets the shape (an upper bound)"),
})


@extend_schema_view(
    list=extend_schema(parameters=[_ATTRIBUTES, _INCLUDE, _BUCKET]),
    retrieve=extend_schema(responses={
        200: GranuleDetailSerializer,
        404: OpenApiResponse(description="No such granule, or one the caller may not see"),
        410: OpenApiResponse(response=inline_serializer("GranuleGone", {
            "detail": serializers.CharField(help_text="What happened, why and when"),
            "state": serializers.ChoiceField(choices=RETIRED_STATES),
            "retired_at": serializers.DateTimeField(help_text="When it was withdrawn or "
                                                    "deleted"),
        }), description="Withdrawn or deleted: the reason and the time"),
    }),
)
class GranuleViewSet(viewsets.ReadOnlyModelViewSet):
    """Granules of the collections visible to the caller."""

    serializer_class = GranuleSerializer
    lookup_value_regex = ID_REGEX
    filterset_class = GranuleFilter
    # sorting is the paginator's: it pages by the sort values (GranuleKeysetPagination),
    # and a shape's exact test runs inside its slices (shape_search.ShapeFiltered)
    filter_backends = [SearchFilterBackend]
    pagination_class = GranuleSearchPagination

    def filter_data(self):
        """The filters of this request: the query string, with a POST body's laid over it."""
        if not hasattr(self, "_filter_data"):
            params = self.request.query_params
            self._filter_data = (search_data(params, self.request.data)
                                 if self.request.method == "POST" else params)
        return self._filter_data

    def search_shape(self):
        return search_shape(self.filter_data(), self.request)

    def filter_queryset(self, queryset):
        """Filtered by the indexed boxes; for a page of a search with a shape, each candidate's
        footprint is then tested exactly while it pages (shape_search.ShapeFiltered), unless the
        request's summary already knows which meet it. One granule by its id is not searched:
        the list's filters (a filterset built for nothing) were 15 % of a granule page."""
        if self.action == "retrieve":
            return queryset
        matching, passed = getattr(self, "_matching", None), getattr(self, "_passed", None)

        def filtered():
            if matching is not None:    # filtered already for the summary: only annotated
                return services.with_residency(matching).prefetch_related("files")
            return super(GranuleViewSet, self).filter_queryset(queryset)

        def visible():
            return services.with_residency(self._visible_granules()).prefetch_related("files")

        if self.action not in ("list", "search"):
            return filtered()
        return services.search_rows(filtered, self.search_shape(), passed,
                                    None if passed is None else visible)

    def list(self, request, *args, **kwargs):
        """A page of the search; with `include`, its facets and timeline too (one request for
        the search page: search_summary)."""
        include = search_summary.parse_include(self.filter_data().get("include"))
        bucket = self._bucket()  # refused when wrong even without the timeline: the schema's enum
        if not include:
            return super().list(request, *args, **kwargs)
        summary, extra = self._summary(), {}
        if "facets" in include:
            extra["facets"] = summary.facets()
        if "timeline" in include:
            timeline, exact = summary.timeline(bucket)
            data = TimelineSerializer(timeline).data
            extra["timeline"] = data if exact is None else {**data, "counts_exact": exact}
        self._passed, self._matching = summary.known_passed(), summary.matching
        response = super().list(request, *args, **kwargs)
        response.data.update(extra)
        return response

    def _summary(self):
        data = self.filter_data()
        granules = self._visible_granules()
        matching = self._filtered(granules, data)
        same = not any(data.get(name) for name in search_summary.COLLECTION_FILTERS)
        facet_base = matching if same else self._filtered(
            granules, search_summary.facet_data(data))
        return search_summary.SearchSummary(matching, facet_base, self.search_shape(),
                                            same=same, collections=self._collection_facets())

    def _collection_facets(self):
        """The facet fields of the caller's collections, read with their ids (None for an
        operator: the facets then read those they count)."""
        return services.visible_collection_facets(self.request.user, self.request)

    def _filtered(self, queryset, data):
        """`queryset` under the list's filters `data`, as the filter backend applies them."""
        filterset = GranuleFilter(data=data, queryset=queryset, request=self.request)
        if not filterset.is_valid():
            raise filter_utils.translate_validation(filterset.errors)
        return filterset.qs

    def _visible_granules(self):
        """The granules the caller sees, by the ids of its collections kept on the request: a
        search names them in each of its statements. One granule's page is one statement,
        which the visibility subquery costs less than a read of its own (as does the schema's
        generation, without a request to keep the ids on nor tables to read them from)."""
        if getattr(self, "swagger_fake_view", False) or self.action == "retrieve":
            return services.visible_granules(self.request.user)
        return services.visible_granules(self.request.user, self.request)

    def get_queryset(self):
        granules = self._visible_granules()
        if self.action in ("facets", "facets_post", "timeline", "timeline_post"):
            return granules
        if getattr(self, "_matching", None) is not None:   # filter_queryset annotates that
            return granules
        if self.action == "retrieve":   # its files' storage loaded by get_object
            return granules
        return services.with_residency(granules).prefetch_related("files")

    def get_serializer_class(self):
        return GranuleDetailSerializer if self.action == "retrieve" else GranuleSerializer

    def get_object(self):
        """The granule, or for one withdrawn or deleted a 410 that says so and when."""
        try:
            granule = super().get_object()
        except Http404:
            services.refuse_if_retired_id(self.request.user, self.kwargs["pk"])
            raise NotFound(f"There is no granule {self.kwargs['pk']}.") from None
        # its files, their cache entries and copies: its residency is from them (granule_rows)
        return storage().load_detail(granule) if self.action == "retrieve" else granule

    @extend_schema(
        summary="Search granules with the list's filters in a JSON body",
        description="The body holds the list's filters (intersects as a GeoJSON object); the "
        "query string keeps cursor, limit and ordering. A next or previous link is POSTed "
        "again with the same body.",
        request=GranuleSearchSerializer, parameters=_PAGING,
        responses={200: GranuleSerializer(many=True),
                   400: OpenApiResponse(description="A filter that cannot be used, and why")},
    )
    @action(detail=False, methods=["post"])
    def search(self, request):
        return self.list(request)

    @extend_schema(
        summary="Facet counts of the granules matching the same filters as the list",
        responses=OpenApiResponse(response=_FACETS),
        parameters=[_ATTRIBUTES],
    )
    @action(detail=False, pagination_class=None)
    def facets(self, request):
        return self._facets()

    @extend_schema(
        summary="Facet counts of a POST search (its filters in a JSON body)",
        request=GranuleSearchSerializer, responses=OpenApiResponse(response=_FACETS),
    )
    @facets.mapping.post
    def facets_post(self, request):
        return self._facets()

    def _facets(self):
        """Counted as the list's include=facets counts (search_summary), its filters all kept."""
        granules = self.filter_queryset(self.get_queryset())
        return Response(search_summary.SearchSummary(
            granules, granules, self.search_shape(), same=True,
            collections=self._collection_facets()).facets())

    @extend_schema(
        summary="How many granules matching the same filters as the list start in each "
                "hour, day, month or year",
        parameters=[_BUCKET, _ATTRIBUTES],
        responses={200: TimelineSerializer,
                   400: OpenApiResponse(description="A filter or bucket that cannot be used, "
                                        "and why")},
    )
    @action(detail=False, pagination_class=None)
    def timeline(self, request):
        return self._timeline()

    @extend_schema(
        summary="Timeline of a POST search (its filters, and bucket, in a JSON body)",
        request=TimelineSearchSerializer,
        responses={200: TimelineSerializer,
                   400: OpenApiResponse(description="A filter or bucket that cannot be used, "
                                        "and why")},
    )
    @timeline.mapping.post
    def timeline_post(self, request):
        return self._timeline()

    def _bucket(self):
        bucket = self.filter_data().get("bucket", "auto")
        if bucket not in ("auto", *BUCKETS):
            raise DomainError(f"bucket must be one of auto, {', '.join(BUCKETS)}, not "
                              f"{bucket!r}.", "bucket")
        return bucket

    def _timeline(self):
        bucket = self._bucket()
        granules = self.filter_queryset(self.get_queryset())
        shape, exact = self.search_shape(), None
        if shape is not None:
            granules, exact = services.exact_subset(granules, shape)
        timeline = TimelineSerializer(services.granule_timeline(granules, bucket)).data
        return Response(timeline if exact is None else {**timeline, "counts_exact": exact})


class ShapeUpload(APIView):
    """Read an uploaded GeoJSON, KML or zipped shapefile into one shape to search with."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="shapes_read", summary="The search shape of an uploaded file",
        description="The union of the file's features, split at the antimeridian and "
        "simplified (with a note) to the search's vertex limit. Nothing is kept.",
        request={"multipart/form-data": ShapeUploadSerializer},
        responses={
            200: ShapeReadingSerializer,
            400: OpenApiResponse(description="No usable shape: malformed, unsafe zip, "
                                 "missing .shx or .dbf, not WGS 84 ... and why"),
            413: OpenApiResponse(description="Larger than 5 MiB, or unpacks to over 50 MiB"),
        },
    )
    def post(self, request):
        limit = shape_files.MAX_UPLOAD_BYTES
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > limit + (64 << 10):   # room for the form
            raise shape_files.UploadTooLarge(f"the file is larger than {limit >> 20} MiB")
        upload = request.FILES.get("file")
        if upload is None:
            raise shape_files.UploadError("upload the file as the form field 'file'")
        if upload.size > limit:
            raise shape_files.UploadTooLarge(f"the file is larger than {limit >> 20} MiB")
        reading = shape_files.read_upload(upload.name, upload.read(limit + 1))
        return Response(ShapeReadingSerializer(reading).data)
