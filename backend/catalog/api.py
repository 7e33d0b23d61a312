"""Read API of the catalog: collections and granules with filters and cursor paging."""
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
from rest_framework.response import Response

from backend.errors import DomainError
from backend.ids import ID_REGEX

from . import services
from .filters import CollectionFilter, GranuleFilter
from .models import Collection
from .pagination import GranuleKeysetPagination
from .serializers import (
    CollectionDetailSerializer,
    CollectionSerializer,
    GranuleDetailSerializer,
    GranuleSerializer,
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


@extend_schema_view(
    list=extend_schema(parameters=[
        OpenApiParameter(
            "attr.NAME[.OP]", OpenApiTypes.STR,
            description="Attribute condition, OP one of eq, ne, lt, lte, gt, gte "
            "(e.g. attr.cloud_cover.lt=20, attr.day_night=Day)",
        ),
    ])
)
class GranuleViewSet(viewsets.ReadOnlyModelViewSet):
    """Granules of the collections visible to the caller."""

    serializer_class = GranuleSerializer
    lookup_value_regex = ID_REGEX
    filterset_class = GranuleFilter
    # sorting is the paginator's: it pages by the sort values (GranuleKeysetPagination)
    filter_backends = [DjangoFilterBackend]
    pagination_class = GranuleKeysetPagination

    def get_queryset(self):
        granules = services.visible_granules(self.request.user)
        if self.action in ("facets", "timeline"):
            return granules
        if self.action == "retrieve":
            return services.with_residency(granules).prefetch_related(
                *storage().detail_prefetch)
        return services.with_residency(granules).prefetch_related("files")

    def get_serializer_class(self):
        return GranuleDetailSerializer if self.action == "retrieve" else GranuleSerializer

    @extend_schema(
        summary="Facet counts of the granules matching the same filters as the list",
        responses=OpenApiResponse(response=inline_serializer("GranuleFacets", {
            name: _FacetValue(many=True) for name in services.FACETS
        })),
    )
    @action(detail=False, pagination_class=None)
    def facets(self, request):
        granules = self.filter_queryset(self.get_queryset())
        return Response(services.granule_facets(granules))

    @extend_schema(
        summary="How many granules matching the same filters as the list start in each "
                "hour, day, month or year",
        parameters=[OpenApiParameter(
            "bucket", str, enum=["auto", *BUCKETS], default="auto",
            description="Bucket size; auto picks hour, day, month or year by the span of "
                        f"the granules found. At most {MAX_BUCKETS} buckets.")],
        responses=TimelineSerializer,
    )
    @action(detail=False, pagination_class=None)
    def timeline(self, request):
        bucket = request.query_params.get("bucket") or "auto"
        if bucket not in ("auto", *BUCKETS):
            raise DomainError(f"bucket must be one of auto, {', '.join(BUCKETS)}, not "
                              f"{bucket!r}.", "bucket")
        granules = self.filter_queryset(self.get_queryset())
        return Response(TimelineSerializer(services.granule_timeline(granules, bucket)).data)
